// NewFunctionRuntime: the FunctionRuntime (runtime/function_runtime.h) of one
// device, over one graph's library. Whoever builds a partition's executor
// makes one (StepPartitions::Build, for every partition of a local session
// and of a worker) and hands it to Executor::Create, which gives it to every
// kernel.
//
//   FunctionRuntimeOptions o;
//   o.device = device;  o.ops = &ops;  o.kernels = &kernels;
//   o.library = graph.library();
//   ASSIGN_OR_RETURN(std::shared_ptr<FunctionRuntime> fr, NewFunctionRuntime(std::move(o)));
//   ASSIGN_OR_RETURN(auto h, fr->Instantiate(f));           // f: a NameAttrList
//   RETURN_IF_ERROR(fr->Run(h, {x}, &rets));
//
// Instantiate expands the function (graph/function_instantiate.h), inlines
// the calls inside it (graph/function_inline.h), puts every node on the
// device and builds an Executor for it, once per distinct name and attrs
// (a cache keyed by the name and the attrs' deterministic bytes). Run runs
// that executor with `run_inline` on the calling thread; RunAsync on the
// device's pool. Each run has a step id of its own (from 2^62 up), so a
// function's per-step resources (TensorArrays) never mix with its caller's.
//
// Errors: NotFound for a function the library lacks; instantiation errors
// name the function and the node; InvalidArgument for a bad handle, or args
// of the wrong count or types; a failed run names the function.
//
// Thread-safe. Ownership: the device and both registries are borrowed and
// must outlive the runtime, which a kernel or a dataset may keep alive
// (shared_from_this) past the executor that handed it out.
#ifndef SLUICE_RUNTIME_DEVICE_FUNCTION_RUNTIME_H_
#define SLUICE_RUNTIME_DEVICE_FUNCTION_RUNTIME_H_

#include <memory>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/proto/versions.pb.h"
#include "runtime/device.h"
#include "runtime/function_runtime.h"
#include "runtime/kernel_registry.h"

namespace sluice {

struct FunctionRuntimeOptions {
  Device* device = nullptr;
  const OpRegistry* ops = nullptr;
  const KernelRegistry* kernels = nullptr;
  FunctionDefLibrary library;
  ::tensorflow::VersionDef versions;
};

// InvalidArgument when the device or a registry is missing or the library
// is bad (naming the function).
absl::StatusOr<std::shared_ptr<FunctionRuntime>> NewFunctionRuntime(
    FunctionRuntimeOptions options);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_DEVICE_FUNCTION_RUNTIME_H_
