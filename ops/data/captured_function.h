// CapturedFunction: a dataset's user function (MapDataset's `f`,
// FilterDataset's `predicate`, ...) with the tensors it captured
// (`other_arguments`), run through the device's FunctionRuntime once per
// element (TensorFlow's CapturedFunction).
//
//   // at kernel Init:
//   ASSIGN_OR_RETURN(func_, FunctionSpec::Instantiate(ctx, "f"));
//   // at Compute:
//   auto fn = std::make_shared<CapturedFunction>(func_, captured_tensors);
//   // per element, on any thread:
//   RETURN_IF_ERROR(fn->Run(std::move(element), &result));
//
// Errors: FailedPrecondition naming the node and the function when the
// executor gave the kernel no function runtime; the runtime's errors
// (naming the function and its node) otherwise, prefixed with the dataset
// node's name.
// Thread-safe: Run may be called concurrently. Ownership: shares the
// FunctionRuntime (it outlives the kernel while iterators hold datasets).
#ifndef SLUICE_OPS_DATA_CAPTURED_FUNCTION_H_
#define SLUICE_OPS_DATA_CAPTURED_FUNCTION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/proto/attr_value.pb.h"
#include "runtime/function_runtime.h"
#include "runtime/kernel.h"

namespace sluice {

// An instantiated function attr of one node.
struct FunctionSpec {
  std::shared_ptr<FunctionRuntime> runtime;
  FunctionRuntime::Handle handle = 0;
  std::string function;  // its name
  std::string node;       // the dataset node, for errors

  // Instantiates the node's func attr `attr` on the kernel's runtime.
  static absl::StatusOr<FunctionSpec> Instantiate(const OpKernelConstruction& ctx,
                                                  absl::string_view attr);
};

class CapturedFunction {
 public:
  CapturedFunction(FunctionSpec spec, std::vector<Tensor> captured)
      : spec_(std::move(spec)), captured_(std::move(captured)) {}

  // Runs f(args..., captured...) on the calling thread.
  absl::Status Run(std::vector<Tensor> args, std::vector<Tensor>* rets) const;
  const FunctionSpec& spec() const { return spec_; }
  const std::vector<Tensor>& captured() const { return captured_; }

 private:
  const FunctionSpec spec_;
  const std::vector<Tensor> captured_;
};

// Tensors `n` inputs from `first` (a kernel's other_arguments).
std::vector<Tensor> InputRange(OpKernelContext* ctx, int first, int n);

}  // namespace sluice

#endif  // SLUICE_OPS_DATA_CAPTURED_FUNCTION_H_
