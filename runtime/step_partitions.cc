#include "runtime/step_partitions.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "graph/graph_def_io.h"
#include "base/status_macros.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/device_function_runtime.h"
#include "runtime/rendezvous.h"
#include "runtime/step_barrier.h"

namespace sluice {

std::vector<int64_t> CollectiveGroupsOf(const Graph& graph) {
  std::set<int64_t> groups;
  for (const Node* n : graph.nodes()) {
    if (!n->attrs().count("group_key") || !n->attrs().count("instance_key")) continue;
    if (absl::StatusOr<int64_t> g = n->GetAttr<int64_t>("group_key"); g.ok()) groups.insert(*g);
  }
  return std::vector<int64_t>(groups.begin(), groups.end());
}

absl::StatusOr<std::unique_ptr<StepPartitions>> StepPartitions::Build(
    std::vector<PartitionGraph> graphs, const OpRegistry* ops, const KernelRegistry& kernels,
    const StepPartitionsOptions& options) {
  if (options.capture_steps && options.gate == nullptr) {
    return absl::InvalidArgumentError("StepPartitions: capture_steps needs a StepGate");
  }
  std::unique_ptr<StepPartitions> out(new StepPartitions);
  out->gate_ = options.gate;
  std::set<int64_t> groups;
  for (PartitionGraph& g : graphs) {
    if (g.device == nullptr) return absl::InvalidArgumentError("a partition has no device");
    const std::string context = absl::StrCat("partition for ", g.device->name());
    std::unique_ptr<Graph> graph = std::move(g.graph);
    if (graph == nullptr) {
      graph = std::make_unique<Graph>(ops);
      ImportOptions import;
      import.allow_internal_ops = true;
      RETURN_IF_ERROR(AddContext(ImportGraphDef(g.def, graph.get(), import), context));
    }
    for (Node* n : graph->nodes()) n->set_assigned_device(g.device->name());
    for (int64_t group : CollectiveGroupsOf(*graph)) groups.insert(group);
    Part part;
    part.device = g.device;
    part.def = std::move(g.def);
    FunctionRuntimeOptions fr;
    fr.device = g.device;
    fr.ops = ops;
    fr.kernels = &kernels;
    fr.library = graph->library();
    fr.versions = graph->versions();
    absl::StatusOr<std::shared_ptr<FunctionRuntime>> function_runtime =
        NewFunctionRuntime(std::move(fr));
    if (!function_runtime.ok()) return AddContext(function_runtime.status(), context);
    part.function_runtime = *std::move(function_runtime);
    absl::StatusOr<std::unique_ptr<Executor>> executor =
        Executor::Create(std::move(graph), g.device, kernels, part.function_runtime.get(),
                         options.stateful_kernels);
    if (!executor.ok()) return AddContext(executor.status(), context);
    part.executor = *std::move(executor);
    out->parts_.push_back(std::move(part));
  }
  out->collective_groups_.assign(groups.begin(), groups.end());
  if (options.capture_steps && out->parts_.size() == 1) {
    const Part& p = out->parts_[0];
    out->replay_ = StepReplay::Create(p.device, p.executor.get());
  }
  return out;
}

void StepPartitions::StopStep(const Executor::Args& args, const absl::Status& cause) const {
  // The failed executor aborted the rendezvous already; an abort from
  // outside may have come first and is kept.
  if (args.rendezvous != nullptr) args.rendezvous->StartAbort(cause);
  if (args.collective_executor == nullptr) return;
  for (int64_t group : collective_groups_) {
    args.collective_executor->ResetGroup(
        group, absl::AbortedError(absl::StrCat("collective group ", group,
                                               " reset: the step failed: ", cause.message())));
  }
}

absl::Status StepPartitions::RootCause(const Executor::Args& args, absl::Status failure) {
  if (failure.ok() || args.rendezvous == nullptr) return failure;
  absl::Status cause = args.rendezvous->abort_status();
  return cause.ok() ? failure : cause;
}

void StepPartitions::RunAsync(Executor::Args args, std::function<void(absl::Status)> done) const {
  if (gate_ != nullptr) {
    gate_->EnterShared();
    done = [gate = gate_, done = std::move(done)](absl::Status s) {
      gate->ExitShared();
      done(std::move(s));
    };
  }
  // A step of several partitions needs a rendezvous for their transfers;
  // one made here lives until `done`.
  std::shared_ptr<LocalRendezvous> own;
  if (args.rendezvous == nullptr && parts_.size() > 1) {
    own = std::make_shared<LocalRendezvous>();
    args.rendezvous = own.get();
  }
  StepBarrier* barrier = StepBarrier::Create(
      static_cast<int>(parts_.size()),
      [this, args](int, const absl::Status& s) { StopStep(args, s); },
      [own, args, done = std::move(done)](absl::Status s) { done(RootCause(args, s)); });
  if (barrier == nullptr) return;  // no partitions: done already ran
  // Each partition starts on its own device's pool; the last one here.
  const int last = static_cast<int>(parts_.size()) - 1;
  for (int i = 0; i < last; ++i) {
    const Part* p = &parts_[i];
    p->device->thread_pool()->Schedule(
        [p, args, report = barrier->Get(i)] { p->executor->RunAsync(args, report); });
  }
  parts_[last].executor->RunAsync(args, barrier->Get(last));
}

absl::Status StepPartitions::Run(const Executor::Args& args) const {
  if (parts_.size() == 1 && gate_ != nullptr) {
    gate_->EnterShared();
    absl::Status s = RunUngated(args);
    gate_->ExitShared();
    return s;
  }
  return RunUngated(args);
}

absl::Status StepPartitions::RunStep(const Executor::Args& args, bool* replayed) const {
  *replayed = false;
  if (replay_ == nullptr) return Run(args);
  absl::Status s;
  // A step that would record passes the gate alone, but only if no step is
  // inside (one may be waiting for another, and recording can wait).
  if (args.stats == nullptr && replay_->NeedsExclusiveDevice(*args.call_frame) &&
      gate_->TryEnterAlone()) {
    s = replay_->Run(args, /*may_record=*/true, replayed);
    gate_->ExitAlone();
  } else {
    gate_->EnterShared();
    s = replay_->Run(args, /*may_record=*/false, replayed);
    gate_->ExitShared();
  }
  if (!s.ok()) StopStep(args, s);
  return RootCause(args, s);
}

absl::Status StepPartitions::RunUngated(const Executor::Args& args) const {
  if (parts_.size() == 1) {
    // The common local step, without the barrier and the hand-off
    // (executor_empty_run pays ~0.4 us for them); the same outcome.
    absl::Status s = parts_[0].executor->Run(args);
    if (!s.ok()) StopStep(args, s);
    return RootCause(args, s);
  }
  absl::Notification finished;
  absl::Status status;
  RunAsync(args, [&](absl::Status s) {
    status = std::move(s);
    finished.Notify();
  });
  finished.WaitForNotification();
  return status;
}

}  // namespace sluice
