// Session: runs a graph — feeds in, fetches out, targets run for effect —
// with variables that persist across runs.
//
//   SessionOptions opts = BuiltinSessionOptions();        // builtin_session.h
//   ASSIGN_OR_RETURN(std::unique_ptr<Session> sess,
//                    NewSession(opts, graph_def));       // runtime/direct_session.h
//   RETURN_IF_ERROR(sess->Run({}, {}, {"init"}).status());
//   ASSIGN_OR_RETURN(std::vector<Tensor> out,
//                    sess->Run({{"x:0", batch}}, {"loss:0"}, {"train"}));
//
// Only the nodes the fetches and targets need run; a fed tensor cuts its
// producer out. Each distinct (feeds, fetches, targets) signature is pruned,
// placed (placement/placer.h) over the session's devices, partitioned per
// device (placement/partition.h) and turned into one executor per device
// once, then cached. The partitions of a step run concurrently and exchange
// tensors through an in-process rendezvous (no copies); the first error in
// any partition cancels the others and is the step's error.
//
// Errors: InvalidArgument for a fetch/feed/target naming no node or output,
// a feed whose dtype or shape the Placeholder rejects; kernel errors name the
// node. Thread-safe: Run may be called concurrently.
#ifndef SLUICE_RUNTIME_SESSION_H_
#define SLUICE_RUNTIME_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/backend.h"
#include "runtime/kernel_registry.h"
#include "runtime/step_stats.h"
#include "runtime/tensor.h"

namespace sluice {

struct SessionOptions {
  const OpRegistry* ops = nullptr;          // required
  const KernelRegistry* kernels = nullptr;  // required
  // CPU:0's pool, which is also its kernels' share of the cores (GEMMs
  // included, ops/internal/blas.h); 0: hardware threads, or hardware threads
  // / (N + 1) with N virtual CPUs.
  int num_threads = 0;
  int64_t cpu_memory_limit = 0;             // bytes; 0: none
  // How many nodes of a step may run at once (TensorFlow's
  // inter_op_parallelism_threads). 1 runs each step's nodes one after the
  // other in the calling thread: best when the heavy kernels (OpenBLAS GEMMs)
  // already use every core, as on small machines. 0: up to the CPU pool size.
  int inter_op_parallelism = 0;
  // When a node asks for a device that does not exist, place it on a
  // similar device (another of its type, else the default) instead of failing.
  bool allow_soft_placement = false;
  // Virtual CPU devices CPU:1..CPU:N beside CPU:0, each with its own thread
  // pool, allocator and memory limit: model-parallel graphs run (and are
  // tested) on them without GPUs. See runtime/local_devices.h.
  int num_virtual_cpus = 0;
  int virtual_cpu_threads = 0;           // per device; 0: hardware threads / (N + 1)
  int64_t virtual_cpu_memory_limit = 0;  // bytes per device; 0: none
  // GPUs (when built with CUDA and visible): how many (-1: all), a memory
  // limit per GPU (0: gpu_memory_fraction of its free memory), and poisoning
  // of fresh GPU memory for tests (runtime/local_devices.h). Every session
  // of the process shares each GPU's allocator: the first session's limit
  // holds for all (runtime/gpu/gpu_context.h).
  int max_gpus = -1;
  int64_t gpu_memory_limit = 0;
  double gpu_memory_fraction = 0.9;
  bool gpu_poison_allocations = false;
  // The backends whose devices the session runs on, and whose all-reduce
  // its collectives use (runtime/backend.h; BuiltinBackends() for Sluice's
  // own). Null: this process's CPU devices only. Borrowed. The kernels
  // registry must hold kernels for them (BackendRegistry::RegisterKernels).
  const BackendRegistry* backends = nullptr;
  // Where nodes that ask for no device go ("" : CPU:0).
  std::string default_device;
  // Place the nodes that ask for no device with the automatic model-parallel
  // placer (placement/auto_placer.h) over the session's devices, each with
  // its memory limit, instead of on the default device. Explicit requests
  // stay. A graph that fits no combination fails with ResourceExhausted.
  bool auto_place = false;
  // Rewrite each compiled signature's graph where a pattern of
  // placement/fuse_ops.h allows (fused MatMul with bias and ReLU, summed
  // products as one product, the weight-gradient MatMul into its update),
  // like TensorFlow's grappler remapper. False runs the graph as written,
  // e.g. to compare fused against unfused.
  bool fuse_ops = true;
  // A signature whose step runs on one device that can record it (a GPU:
  // CUDA graphs) is recorded once its feed shapes repeat and replayed from
  // then on, with one launch per step (runtime/step_replay.h says which
  // steps qualify and when it falls back to the executor).
  bool capture_steps = true;
};

struct RunOptions {
  // Collect per-node step statistics of every partition into RunMetadata.
  bool trace = false;
  // Return the graph each device ran (with its _Send/_Recv nodes).
  bool output_partition_graphs = false;
  // Stop the step with DeadlineExceeded after this long (0: no limit), e.g.
  // a while loop that never ends (runtime/step_deadline.h). In a cluster
  // session it replaces the master's step deadline: every task stops its
  // partitions when it passes.
  int64_t timeout_in_ms = 0;
};

struct RunMetadata {
  StepStats step_stats;
  std::vector<GraphDef> partition_graphs;  // one per device, in device order
  // The step replayed a recording of an earlier one (a CUDA graph;
  // SessionOptions::capture_steps, runtime/step_replay.h).
  bool step_replayed = false;
};

class Session {
 public:
  virtual ~Session() = default;

  // Adds the nodes of `def` to the session's graph.
  virtual absl::Status Extend(const GraphDef& def) = 0;

  // Names are "node:index" or "node" (output 0) for feeds and fetches, node
  // names for targets. Returns one tensor per fetch, in order.
  virtual absl::StatusOr<std::vector<Tensor>> Run(
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
      const RunOptions& options = {}, RunMetadata* metadata = nullptr) = 0;

  // Convenience over graph-building handles.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<Output, Tensor>>& feeds,
                                          const std::vector<Output>& fetches,
                                          const std::vector<Node*>& targets = {},
                                          const RunOptions& options = {},
                                          RunMetadata* metadata = nullptr);

  // The devices the session runs on (full names).
  virtual std::vector<std::string> ListDevices() const = 0;
  // Allocator statistics of each device, in ListDevices order.
  virtual std::vector<AllocatorStats> DeviceMemoryStats() const = 0;

  virtual absl::Status Close() = 0;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_SESSION_H_
