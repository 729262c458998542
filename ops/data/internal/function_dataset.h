// FunctionDatasetOpKernel: the shell of a dataset kernel with a function attr
// and captured `other_arguments` (Map, Filter, FlatMap, Interleave and their
// parallel forms): it instantiates the function at Init and gathers the
// captured tensors (input 1 on, `Targuments` long) at Compute.
//
//   class MapOp : public FunctionDatasetOpKernel {
//     MapOp() : FunctionDatasetOpKernel("f") {}
//     ... MakeDataset(ctx, input) { ... Captured(ctx) ... }
//   };
//
// Thread-safe as every kernel.
#ifndef SLUICE_OPS_DATA_INTERNAL_FUNCTION_DATASET_H_
#define SLUICE_OPS_DATA_INTERNAL_FUNCTION_DATASET_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "ops/data/captured_function.h"
#include "ops/data/dataset_kernel.h"

namespace sluice {
namespace data {

class FunctionDatasetOpKernel : public UnaryDatasetOpKernel {
 protected:
  explicit FunctionDatasetOpKernel(std::string func_attr) : func_attr_(std::move(func_attr)) {}

  virtual absl::Status InitFunctionDataset(const OpKernelConstruction& ctx) {
    return absl::OkStatus();
  }
  // The function with this run's captured inputs.
  std::shared_ptr<const CapturedFunction> Captured(OpKernelContext* ctx) const {
    return std::make_shared<CapturedFunction>(spec_, InputRange(ctx, 1, num_captured_));
  }
  // The first input after the captured ones.
  int first_input_after_captured() const { return 1 + num_captured_; }

 private:
  absl::Status InitDataset(const OpKernelConstruction& ctx) final {
    ASSIGN_OR_RETURN(std::vector<DataType> targs, ctx.GetAttr<std::vector<DataType>>("Targuments"));
    num_captured_ = static_cast<int>(targs.size());
    ASSIGN_OR_RETURN(spec_, FunctionSpec::Instantiate(ctx, func_attr_));
    return InitFunctionDataset(ctx);
  }

  const std::string func_attr_;
  FunctionSpec spec_;
  int num_captured_ = 0;
};

}  // namespace data
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_INTERNAL_FUNCTION_DATASET_H_
