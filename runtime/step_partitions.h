// StepPartitions: the executors of one compiled run signature, one per
// device, and how a step runs them. The local session and the worker both
// build and run their partitions here (the master fans out over tasks with
// the same StepBarrier).
//
//   std::vector<PartitionGraph> graphs = ...;  // from CompileSignature
//   ASSIGN_OR_RETURN(std::unique_ptr<StepPartitions> parts,
//                    StepPartitions::Build(std::move(graphs), kernels));
//   Executor::Args args;  args.step_id = 7;  args.call_frame = &frame;
//   RETURN_IF_ERROR(parts->Run(args));
//
// A step starts every partition on its device's thread pool (the last in
// the calling thread). The first failure aborts the step's rendezvous (so
// that partitions waiting for its tensors stop) and resets the collective
// groups the partitions use (so that members waiting in them stop, and meet
// again at the next step); `done` then gets the root cause: the status the
// rendezvous was aborted with when set (a partition's own failure, or an
// abort from outside, such as the master's), else the first failure.
//
// Step capture (runtime/step_replay.h), for the local session and a
// cluster worker alike: with StepPartitionsOptions::capture_steps, a
// signature of one partition whose device can record (a GPU) is recorded
// once its feed shapes repeat and replayed from then on (RunStep). Every
// step passes the options' StepGate shared; a step that records passes it
// alone, so no other step queues work on the device meanwhile.
//
// Thread-safe: concurrent steps may run the same StepPartitions (each with
// its own Args). Ownership: devices and the kernel registry are borrowed
// and must outlive it; a step's rendezvous, call frame and collective
// executor must outlive the step (until `done`).
#ifndef SLUICE_RUNTIME_STEP_PARTITIONS_H_
#define SLUICE_RUNTIME_STEP_PARTITIONS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/proto/graph.pb.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/kernel_registry.h"
#include "runtime/stateful_kernels.h"
#include "runtime/step_gate.h"
#include "runtime/step_replay.h"

namespace sluice {

// One device's partition: a graph to import (a partition GraphDef, whose
// _Send/_Recv ops are allowed), or one already imported and placed.
struct PartitionGraph {
  Device* device = nullptr;
  tensorflow::GraphDef def;
  std::unique_ptr<Graph> graph;  // when set, `def` is only kept for reports
};

struct StepPartitionsOptions {
  // Record and replay a one-partition step whose device can capture.
  // Needs `gate`.
  bool capture_steps = false;
  // Shared by every StepPartitions of one session or worker, borrowed (it
  // must outlive them); null: steps pass no gate.
  StepGate* gate = nullptr;
  // The session's stateful kernels, shared by all its signatures
  // (runtime/stateful_kernels.h); borrowed, it must outlive the partitions.
  // Null: each signature's stateful nodes start afresh.
  StatefulKernels* stateful_kernels = nullptr;
};

class StepPartitions {
 public:
  struct Part {
    Device* device = nullptr;
    // Runs the partition's library functions on its device for its kernels
    // (runtime/device_function_runtime.h); outlives the executor.
    std::shared_ptr<FunctionRuntime> function_runtime;
    std::unique_ptr<Executor> executor;
    tensorflow::GraphDef def;  // what it runs (RunMetadata::partition_graphs)
  };

  // Imports each partition (with `ops`, the registry of the whole graph),
  // pins its nodes to its device, makes a FunctionRuntime over its library
  // on its device and creates its executor with it. Errors name the
  // partition's device (and the node, for a kernel that cannot be built).
  static absl::StatusOr<std::unique_ptr<StepPartitions>> Build(
      std::vector<PartitionGraph> graphs, const OpRegistry* ops, const KernelRegistry& kernels,
      const StepPartitionsOptions& options = {});

  // Runs one step (see above); `done` is called once. When args.rendezvous
  // is null and there is more than one partition, the step gets an
  // in-process rendezvous of its own.
  void RunAsync(Executor::Args args, std::function<void(absl::Status)> done) const;
  // RunAsync, waiting for it.
  absl::Status Run(const Executor::Args& args) const;
  // Whether steps may be recorded and replayed (see above).
  bool replayable() const { return replay_ != nullptr; }
  // Run, for a replayable signature through its recording: the step runs
  // through the executor, records (when it may pass the gate alone) or
  // replays; *replayed says whether it was a replay. A traced step
  // (args.stats) runs through the executor.
  absl::Status RunStep(const Executor::Args& args, bool* replayed) const;

  const std::vector<Part>& parts() const { return parts_; }
  // The group_key of every collective op of the partitions, sorted.
  const std::vector<int64_t>& collective_groups() const { return collective_groups_; }

 private:
  StepPartitions() = default;
  // After the first failure: aborts the step's rendezvous and resets the
  // partitions' collective groups.
  void StopStep(const Executor::Args& args, const absl::Status& cause) const;
  // The step's error: the rendezvous's abort status when set, else `failure`.
  static absl::Status RootCause(const Executor::Args& args, absl::Status failure);

  // Run without passing the gate.
  absl::Status RunUngated(const Executor::Args& args) const;

  std::vector<Part> parts_;
  std::vector<int64_t> collective_groups_;
  StepGate* gate_ = nullptr;
  std::unique_ptr<StepReplay> replay_;  // for a replayable signature
};

// The group_key of every collective op in `graph` (nodes with group_key and
// instance_key attrs, ops/collective/collective_ops.h), sorted and unique.
std::vector<int64_t> CollectiveGroupsOf(const Graph& graph);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STEP_PARTITIONS_H_
