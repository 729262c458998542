// FunctionRuntime: runs the functions of a graph's library (FunctionDefs,
// TensorFlow's function.proto) as values on one device, for kernels that
// call a function many times per step: a dataset's map, filter and
// flat_map functions, and a call a graph keeps as a node.
//
//   FunctionRuntime* fr = ctx.function_runtime();   // at kernel Init
//   ASSIGN_OR_RETURN(FunctionRuntime::Handle h, fr->Instantiate(func_attr));
//   std::vector<Tensor> rets;
//   RETURN_IF_ERROR(fr->Run(h, {x}, &rets));          // on the calling thread
//
// Instantiate expands the function for its attrs (type parameters) once
// per distinct name and attrs; errors name the function and the node inside
// it. A holder that outlives the kernel (a dataset kept by an iterator)
// keeps the runtime alive with shared_from_this().
//
// Thread-safe: Instantiate and Run may be called concurrently.
#ifndef SLUICE_RUNTIME_FUNCTION_RUNTIME_H_
#define SLUICE_RUNTIME_FUNCTION_RUNTIME_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/proto/attr_value.pb.h"
#include "graph/types.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

namespace sluice {

class FunctionRuntime : public std::enable_shared_from_this<FunctionRuntime> {
 public:
  using Handle = int64_t;
  using DoneCallback = std::function<void(absl::Status)>;

  virtual ~FunctionRuntime() = default;

  // NotFound naming the function when the library has none of that name;
  // InvalidArgument naming the function and node when its body is bad.
  virtual absl::StatusOr<Handle> Instantiate(const ::tensorflow::NameAttrList& func) = 0;

  // The instantiated signature: one dtype per argument and per result.
  virtual const std::vector<DataType>& arg_types(Handle handle) const = 0;
  virtual const std::vector<DataType>& ret_types(Handle handle) const = 0;

  // Runs the function on `args` (checked against arg_types) to completion,
  // every node on the calling thread; `rets` is resized to the results.
  // Errors name the function and the node that failed.
  virtual absl::Status Run(Handle handle, std::vector<Tensor> args,
                           std::vector<Tensor>* rets) = 0;
  // The same without blocking: nodes run on the device's pool; `done` is
  // called once, after `rets` is filled.
  virtual void RunAsync(Handle handle, std::vector<Tensor> args, std::vector<Tensor>* rets,
                        DoneCallback done) = 0;

  virtual Device* device() const = 0;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_FUNCTION_RUNTIME_H_
