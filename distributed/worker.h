// Worker: one cluster task's devices and the graph partitions registered on
// them. It runs a step's partitions when the master says so, keeps each
// step's transfers in a rendezvous that also fetches tensors sent by other
// tasks (distributed/remote_rendezvous.h), and answers peers' RecvTensor
// calls from it.
//
//   WorkerOptions opts;
//   opts.task = "/job:ps/replica:0/task:0";
//   opts.session = BuiltinSessionConfig();     // builtin_session.h
//   opts.peers = &cache;                       // the cluster's other tasks
//   ASSIGN_OR_RETURN(std::unique_ptr<Worker> w, Worker::Create(opts));
//   // then: served by distributed/server.h, or called in-process
//
// Variables live in the devices' containers for the worker's lifetime, so
// every session and every client that places a variable of the same name on
// this task shares it (between-graph replication relies on this).
//
// A step's rendezvous exists from the first RunGraph or RecvTensor naming it
// until CleanupStep (or, if the master never says, a few minutes later).
// CleanupStep aborts what still waits in the step's rendezvous. A failed
// (aborted) step is then over for good (the master never reuses step ids):
// a RecvTensor arriving later (a peer's fetch that was in flight when the
// step failed elsewhere) or a late RunGraph fails at once with Aborted. A
// RunGraph this task refuses (unknown handle, bad feeds) aborts the step
// here too, so peers fetching from it do not wait for their deadline.
// The first error of a step's partition aborts that step's rendezvous; a
// RecvTensor from a dead or unreachable peer fails the step with an error
// naming that task, within the RPC deadline.
//
// RunGraph on an unknown handle is Aborted ("... is not registered (task
// restarted?)"): the master re-registers the graph and retries. A RunGraph
// that outlives its timeout aborts the step on this task with
// DeadlineExceeded naming the task and step.
//
// Collectives: the worker owns a CollectiveMailbox, a CollectiveExecutor
// over it (through an RpcCollectiveTransport when `peers` is set) and hands
// the executor to every partition it runs; peers' CollectivePush calls
// deliver into the mailbox.
//
// Thread-safe. `peers` is borrowed and must outlive the worker. Destroy the
// worker only once nobody calls it any more (stop the server first): the
// destructor aborts running steps and waits for their executors and fetches.
#ifndef SLUICE_DISTRIBUTED_WORKER_H_
#define SLUICE_DISTRIBUTED_WORKER_H_

#include <memory>
#include <string>

#include "distributed/collective/rpc_transport.h"
#include "distributed/rpc/tensor_sink.h"
#include "distributed/rpc/tensor_source.h"
#include "distributed/worker_interface.h"
#include "graph/op_registry.h"
#include "runtime/backend.h"
#include "runtime/kernel_registry.h"
#include "runtime/local_devices.h"
#include "session/session_config.h"

namespace sluice {

class CollectiveExecutor;  // runtime/collective/collective_executor.h

struct WorkerOptions {
  std::string task;  // "/job:J/replica:0/task:T"; device names start with it
  // The task's registries (ops and kernels required; backends: whose
  // devices the task has and whose all-reduce its collectives use, null:
  // CPU devices only), its devices (CPU:0, virtual CPUs, the backends';
  // devices.name_prefix is replaced by `task`) and how its partitions run
  // (inter_op_parallelism). The placement group is the master's business.
  SessionConfig session;
  WorkerCache* peers = nullptr;  // required when graphs receive from other tasks
  int64_t default_timeout_ms = 60000;  // per step when RunGraph gives none
  // The longest a RunGraph or RecvTensor waits, whatever the caller asks: a
  // peer cannot hold a thread (and shutdown) for longer.
  int64_t max_timeout_ms = 30 * 60 * 1000;
  // A registered graph no RunGraph used for this long is dropped (its
  // client is gone). A master that comes back finds its handle Aborted and
  // registers the graph again, as after a task restart.
  absl::Duration graph_idle_ttl = absl::Hours(1);
  // Collectives with members on other tasks (used when `peers` is set).
  RpcCollectiveTransport::Options collective_transport;
  // The most bytes of variables one registered graph may declare on this
  // task (distributed/variable_budget.h); RegisterGraph refuses more with
  // ResourceExhausted. <= 0: no budget.
  int64_t variable_memory_budget_bytes = 0;
};

class Worker : public WorkerInterface, public TensorSource, public TensorSink {
 public:
  static absl::StatusOr<std::unique_ptr<Worker>> Create(const WorkerOptions& options);
  ~Worker() override;

  // WorkerInterface.
  absl::StatusOr<WorkerInfo> GetStatus() override;
  absl::StatusOr<std::string> RegisterGraph(
      const std::string& session_handle,
      const std::map<std::string, tensorflow::GraphDef>& partitions) override;
  absl::Status DeregisterGraph(const std::string& graph_handle) override;
  absl::Status RunGraph(const RunGraphArgs& args, std::map<int, Tensor>* retvals) override;
  absl::StatusOr<Tensor> RecvTensor(int64_t step_id, const std::string& key,
                                    int64_t timeout_ms) override;
  absl::Status AbortStep(int64_t step_id, const absl::Status& reason) override;
  absl::Status CleanupStep(int64_t step_id) override;
  // Into this task's collective mailbox (the tensor's buffer is shared, not
  // copied).
  absl::Status CollectivePush(const std::string& to_device, const std::string& key,
                              const Tensor& value, int64_t timeout_ms) override;

  // TensorSink (the zero-copy CollectivePush path of the Thrift server):
  // pushed tensors are received into a buffer pool of the worker.
  Allocator* PushAllocator() override;
  // The memory a local member's receive registered for the key (the ring's
  // result: all-gather pieces land where they belong).
  Tensor LandingFor(const std::string& to_device, const std::string& key) override;
  // A value from `sender` (the TLS identity of the pushing task) is
  // received only by a member that expects it from that task.
  absl::Status AcceptCollectivePush(const std::string& to_device, const std::string& key,
                                    Tensor value, int64_t timeout_ms,
                                    const std::string& sender) override;

  // TensorSource (the zero-copy RecvTensor path of the Thrift server).
  absl::StatusOr<Tensor> WaitForTensor(int64_t step_id, const std::string& key,
                                       int64_t timeout_ms) override {
    return RecvTensor(step_id, key, timeout_ms);
  }

  const std::string& task() const;
  // This process's devices (for a session that runs on them directly).
  std::vector<Device*> devices() const;
  // Runs the collective ops of every partition this worker runs: members on
  // this task meet in its mailbox, members on other tasks are reached with
  // CollectivePush (distributed/collective/rpc_transport.h).
  CollectiveExecutor* collective_executor() const;

 private:
  class Impl;
  explicit Worker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_WORKER_H_
