// The kernels of a session's stateful nodes, shared by all its executors
// (TensorFlow's OpSegment): each run signature compiles its own partitions,
// but a stateful node keeps one kernel across them, so a seeded random op,
// a candidate sampler or a Print's first_n continues where the last step
// left it whichever fetches the step asked for, as in TensorFlow.
//
//   StatefulKernels shared;                 // one per session
//   StepPartitionsOptions o;  o.stateful_kernels = &shared;
//   // ExecutorLayout asks it for every node's kernel:
//   ASSIGN_OR_RETURN(std::shared_ptr<OpKernel> k,
//                    shared.GetOrCreate(node, *device, [&] { return registry.CreateKernel(...); }));
//
// Shared: nodes whose op is stateful, named and of an op without a leading
// '_' (not the runtime's transfer and argument nodes), not control flow,
// with no function-valued attr (their kernels hold the executor's function
// runtime). A kernel is reused for a node of the same name on the same
// device only when its op, attrs and number of inputs are the same; a node
// that changed is given a new kernel, which replaces the old in the cache.
// Others are created anew each time.
//
// Thread-safe. Kernels are shared_ptr: a cached one lives as long as the
// cache or any executor using it.
#ifndef SLUICE_RUNTIME_STATEFUL_KERNELS_H_
#define SLUICE_RUNTIME_STATEFUL_KERNELS_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "graph/graph.h"
#include "runtime/device.h"
#include "runtime/kernel.h"

namespace sluice {

class StatefulKernels {
 public:
  using MakeKernel = absl::FunctionRef<absl::StatusOr<std::unique_ptr<OpKernel>>()>;

  // Whether `node`'s kernel is shared at all (see above).
  static bool Shares(const Node& node);

  // `node`'s kernel on `device`: the cached one when it matches, else
  // make()'s (cached when Shares(node)).
  absl::StatusOr<std::shared_ptr<OpKernel>> GetOrCreate(const Node& node, const Device& device,
                                                        MakeKernel make);

  int size() const;

 private:
  struct Entry {
    std::string fingerprint;  // op, attrs and input count
    std::shared_ptr<OpKernel> kernel;
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> kernels_ ABSL_GUARDED_BY(mu_);  // device|node
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STATEFUL_KERNELS_H_
