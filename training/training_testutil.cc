#include "training/training_testutil.h"

#include "builtin_session.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/training/optimizers.h"
#include "ops/state/state_ops.h"
#include "ops/io/summary_ops.h"
#include "session/direct_session.h"

namespace sluice {

TinyModel::TinyModel(SaverOptions saver_options) : scope(Scope::NewRootScope(BuiltinOps())) {
  const Scope& s = scope;
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), 0.0f);
  Output target = ops::PlaceholderWithDefault(s.WithOpName("target"), 3.0f, TensorShape({}));
  Output loss = ops::Square(s.WithOpName("loss"), ops::Sub(s, w.var, target));
  GlobalStep step = CreateGlobalStep(s);
  GradientDescentOptimizer gd(0.1, "train");
  absl::StatusOr<Node*> train = gd.Minimize(s, loss, {w.var}, &step.ref);
  if (!train.ok()) return;  // the session creation reports the scope's error
  ops::GlobalVariablesInitializer(s.WithOpName("init"));
  ops::IsVariableInitialized(s.WithOpName("w_ready"), w.var);
  ops::IsVariableInitialized(s.WithOpName("global_step_ready"), step.ref);
  ops::MergeSummary(s.WithOpName("summaries"), {ops::ScalarSummary(s, "loss", loss)});
  if (!s.ok()) return;
  absl::StatusOr<std::unique_ptr<Saver>> built = Saver::Build(s, {}, std::move(saver_options));
  if (built.ok()) saver = *std::move(built);
}

absl::StatusOr<std::unique_ptr<Session>> TinyModel::NewLocalSession() const {
  if (!scope.ok()) return scope.status();
  SessionConfig options = BuiltinSessionConfig();
  options.devices.cpu_threads = 2;
  options.inter_op_parallelism = 1;  // deterministic order: tests compare steps
  return NewSession(options, *scope.graph());
}

absl::StatusOr<std::vector<Tensor>> ForwardingSession::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
    const RunOptions& options, RunMetadata* metadata) {
  if (failures_ != nullptr && failures_->Take()) {
    return absl::UnavailableError("injected failure: task /job:ps/task:0 is unreachable");
  }
  return target_->Run(feeds, fetches, targets, options, metadata);
}

absl::StatusOr<std::unique_ptr<Session>> ForwardTo(std::shared_ptr<Session> target,
                                                   std::shared_ptr<FailureBudget> failures) {
  return std::unique_ptr<Session>(
      std::make_unique<ForwardingSession>(std::move(target), std::move(failures)));
}

}  // namespace sluice
