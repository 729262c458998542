// Session: runs a graph — feeds in, fetches out, targets run for effect —
// with variables that persist across runs.
//
//   SessionConfig config = BuiltinSessionConfig();      // builtin_session.h
//   ASSIGN_OR_RETURN(std::unique_ptr<Session> sess,
//                    NewSession(config, graph_def));     // session/direct_session.h
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
#include "graph/scope.h"
#include "runtime/step_stats.h"
#include "runtime/tensor.h"

namespace sluice {

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
  // SessionConfig::capture_steps, runtime/step_replay.h).
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
