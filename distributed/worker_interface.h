// WorkerInterface: what a master (and a peer's rendezvous) asks of one task:
// the same calls whether the task is this process (distributed/worker.h) or
// another one reached over Thrift (distributed/remote_worker.h).
//
//   WorkerInterface* w = ...;   // from a WorkerCache
//   ASSIGN_OR_RETURN(std::string handle, w->RegisterGraph("s1", partitions));
//   RunGraphArgs args;  args.graph_handle = handle;  args.step_id = 42;
//   args.feeds[0] = x;  args.retval_indices = {0};
//   std::map<int, Tensor> out;
//   RETURN_IF_ERROR(w->RunGraph(args, &out));
//
// Errors name the task. Implementations are thread-safe.
#ifndef SLUICE_DISTRIBUTED_WORKER_INTERFACE_H_
#define SLUICE_DISTRIBUTED_WORKER_INTERFACE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/proto/graph.pb.h"
#include "runtime/tensor.h"

namespace sluice {

struct DeviceInfo {
  std::string name;         // full name
  std::string device_type;  // "CPU", "GPU"
  int64_t memory_limit = 0;
};

struct WorkerInfo {
  std::string task;  // "/job:ps/replica:0/task:0"
  std::vector<DeviceInfo> devices;
  int64_t incarnation = 0;  // new each time the task's process starts
};

struct RunGraphArgs {
  std::string graph_handle;
  int64_t step_id = 0;
  std::map<int, Tensor> feeds;     // _Arg index -> value
  std::vector<int> retval_indices;  // the _Retval indices this task produces
  int64_t timeout_ms = 0;           // 0: the worker's default
};

class WorkerInterface {
 public:
  virtual ~WorkerInterface() = default;

  virtual absl::StatusOr<WorkerInfo> GetStatus() = 0;
  // `partitions`: full device name -> that device's partition. Returns a
  // handle for RunGraph.
  virtual absl::StatusOr<std::string> RegisterGraph(
      const std::string& session_handle,
      const std::map<std::string, tensorflow::GraphDef>& partitions) = 0;
  virtual absl::Status DeregisterGraph(const std::string& graph_handle) = 0;
  // Runs every partition of the graph for one step; fills `retvals`.
  virtual absl::Status RunGraph(const RunGraphArgs& args, std::map<int, Tensor>* retvals) = 0;
  // The tensor a partition of this task sent under `key` in step `step_id`;
  // waits for it up to `timeout_ms`.
  virtual absl::StatusOr<Tensor> RecvTensor(int64_t step_id, const std::string& key,
                                            int64_t timeout_ms) = 0;
  // Fails the step's pending and later transfers with `reason`.
  virtual absl::Status AbortStep(int64_t step_id, const absl::Status& reason) = 0;
  // Forgets the step's transfers.
  virtual absl::Status CleanupStep(int64_t step_id) = 0;
  // Delivers a collective message (runtime/collective) for member
  // `to_device` of this task under `key` into the task's collective mailbox;
  // returns once delivered, never waiting for a receiver. InvalidArgument
  // when `to_device` is not a device of the task, FailedPrecondition when
  // the key already holds a value, Unavailable / DeadlineExceeded naming the
  // task when it cannot be reached within `timeout_ms`.
  virtual absl::Status CollectivePush(const std::string& to_device, const std::string& key,
                                      const Tensor& value, int64_t timeout_ms) = 0;

  // GetStatus answered within `timeout_ms` (liveness probes); the default
  // (in-process workers answer at once) is GetStatus.
  virtual absl::StatusOr<WorkerInfo> GetStatusWithin(int64_t timeout_ms) { return GetStatus(); }
  // "host:port" where the task is reached; "" when it is in this process.
  virtual std::string address() const { return ""; }
};

// Finds the interface of any task of the cluster.
class WorkerCache {
 public:
  virtual ~WorkerCache() = default;
  // NotFound naming the task when it is not in the cluster. The pointer
  // lives as long as the cache.
  virtual absl::StatusOr<WorkerInterface*> GetWorker(const std::string& task) = 0;
  // Every task of the cluster, "/job:J/replica:0/task:T", in cluster order.
  virtual std::vector<std::string> ListTasks() const = 0;
};

// "/job:ps/replica:0/task:0" of "/job:ps/replica:0/task:0/device:CPU:0".
std::string TaskOfDevice(const std::string& device_name);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_WORKER_INTERFACE_H_
