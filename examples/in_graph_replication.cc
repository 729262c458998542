// Trains the MLP of mlp_model.h with in-graph replication: one tower per
// virtual CPU device (CPU:1..CPU:K), each computing the gradients of its
// slice of the batch; the averaged gradients update the variables on CPU:0.
//
//   bazel run //examples:in_graph_replication -- --towers=2 --steps=600
//
// --batch is the global batch of a step (a multiple of --towers). Prints
// progress lines like examples/mlp, the median step time, and ends with
// "final: loss=<x> accuracy=<y>" over the whole training set (computed by the
// original, unreplicated forward graph).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "examples/mlp_model.h"
#include "sluice.h"

ABSL_FLAG(int, towers, 2, "replicas of the model, one per virtual CPU device");
ABSL_FLAG(int, steps, 600, "training steps");
ABSL_FLAG(int, batch, 128, "examples per step, split evenly between the towers");
ABSL_FLAG(std::string, hidden, "256,256", "hidden layer sizes, comma separated");
ABSL_FLAG(double, learning_rate, 0.05, "learning rate");
ABSL_FLAG(std::string, optimizer, "momentum", "sgd, momentum or adam");
ABSL_FLAG(int, log_every, 50, "print progress every N steps");
ABSL_FLAG(int, examples, 8192, "size of the synthetic training set");

namespace sluice {
namespace {

absl::Status Main() {
  MlpConfig config;
  config.layers = {784};
  for (absl::string_view h : absl::StrSplit(absl::GetFlag(FLAGS_hidden), ',', absl::SkipEmpty())) {
    int64_t n;
    if (!absl::SimpleAtoi(h, &n) || n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("--hidden: bad layer size '", h, "'"));
    }
    config.layers.push_back(n);
  }
  config.layers.push_back(10);
  config.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  config.optimizer = absl::GetFlag(FLAGS_optimizer);
  const int towers = absl::GetFlag(FLAGS_towers), steps = absl::GetFlag(FLAGS_steps),
            batch = absl::GetFlag(FLAGS_batch);
  if (towers <= 0) return absl::InvalidArgumentError("--towers must be > 0");
  if (steps < 0 || batch <= 0) return absl::InvalidArgumentError("--steps >= 0 and --batch > 0");
  if (batch % towers != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch (", batch, ") must be a multiple of --towers (", towers, ")"));
  }

  // The single-tower forward graph, then K towers of it and one update.
  ASSIGN_OR_RETURN(MlpModel m, BuildMlpForward(config));
  const Scope& s = m.scope;
  ReplicationOptions replication;
  for (int k = 1; k <= towers; ++k) replication.devices.push_back(absl::StrCat("/device:CPU:", k));
  replication.batch_inputs = {m.x, m.labels};
  replication.loss = m.loss;
  replication.variables = m.weights;
  ASSIGN_OR_RETURN(ReplicatedGraph r, ReplicateTraining(s, replication));
  GlobalStep step_counter = CreateGlobalStep(s);
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> opt, NewMlpOptimizer(config));
  ASSIGN_OR_RETURN(Node* train, opt->ApplyGradients(s.WithOpName("train"), r.grads_and_vars,
                                                    &step_counter.ref));
  Node* init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  RETURN_IF_ERROR(s.status());

  SessionOptions options = BuiltinSessionOptions();
  options.num_virtual_cpus = towers;
  Dataset data = MakeSyntheticDataset({.examples = absl::GetFlag(FLAGS_examples)});
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options, *s.graph()));
  RETURN_IF_ERROR(session->Run({}, {}, {init}).status());

  std::printf("training MLP %s on %lld synthetic examples, batch %d over %d towers, %s lr=%g\n",
              absl::GetFlag(FLAGS_hidden).c_str(), static_cast<long long>(data.x.dim_size(0)),
              batch, towers, config.optimizer.c_str(), config.learning_rate);
  auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  int last_step = 0;
  std::vector<double> step_ms;
  for (int step = 1; step <= steps; ++step) {
    Dataset b = Batch(data, static_cast<int64_t>(step - 1) * batch, batch);
    auto start = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     session->Run({{m.x, b.x}, {m.labels, b.y}}, {r.loss}, {train}));
    auto now = std::chrono::steady_clock::now();
    step_ms.push_back(std::chrono::duration<double, std::milli>(now - start).count());
    if (step % absl::GetFlag(FLAGS_log_every) == 0 || step == steps) {
      double secs = std::chrono::duration<double>(now - last).count();
      std::printf("step %d: loss=%.4f (%.1f steps/s)\n", step, out[0].scalar<float>(),
                  (step - last_step) / secs);
      std::fflush(stdout);
      last = now;
      last_step = step;
    }
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> final_out,
                   session->Run({{m.x, data.x}, {m.labels, data.y}}, {m.loss, m.accuracy}));
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("trained %d steps in %.1f s\n", steps, total);
  if (!step_ms.empty()) {
    std::nth_element(step_ms.begin(), step_ms.begin() + step_ms.size() / 2, step_ms.end());
    std::printf("median step: %.2f ms with %d towers\n", step_ms[step_ms.size() / 2], towers);
  }
  std::printf("final: loss=%.4f accuracy=%.4f\n", final_out[0].scalar<float>(),
              final_out[1].scalar<float>());
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "in_graph_replication: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
