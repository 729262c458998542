// The MLP of examples/mlp.cc as a trial of a hyperparameter sweep: reads its
// hyperparameters from flags, reports held-out loss and accuracy with
// SweepReport every --report_every steps.
//
//   bazel build //examples:sweep_mlp
//   bazel run //tools:sweep -- --space=examples/sweep_mlp_space.json \
//       --trials=16 --parallel=2 -- bazel-bin/examples/sweep_mlp
//
// Alone it is a plain training run: bazel run //examples:sweep_mlp -- --hidden=128
// Trains on the first 3/4 of a synthetic dataset and evaluates on the rest.
// Honors SLUICE_NUM_THREADS (set by the sweep for CPU trials).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "examples/mlp_model.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 400, "training steps");
ABSL_FLAG(int, batch, 64, "examples per step");
ABSL_FLAG(std::string, hidden, "128", "hidden layer sizes, comma separated");
ABSL_FLAG(double, learning_rate, 0.01, "learning rate");
ABSL_FLAG(std::string, optimizer, "sgd", "sgd, momentum or adam");
ABSL_FLAG(int, report_every, 25, "SweepReport every N steps");
ABSL_FLAG(int, examples, 4096, "size of the synthetic dataset (3/4 train, 1/4 held out)");

namespace sluice {
namespace {

absl::StatusOr<MlpConfig> ConfigFromFlags() {
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
  if (!(config.learning_rate > 0)) return absl::InvalidArgumentError("--learning_rate > 0");
  return config;
}

SessionOptions OptionsFromEnv() {
  SessionOptions options = BuiltinSessionOptions();
  if (const char* n = std::getenv("SLUICE_NUM_THREADS")) {
    int threads;
    if (absl::SimpleAtoi(n, &threads) && threads > 0) {
      options.num_threads = threads;
      options.inter_op_parallelism = 1;  // the GEMMs use the trial's cores
    }
  }
  return options;
}

absl::Status Main() {
  ASSIGN_OR_RETURN(MlpConfig config, ConfigFromFlags());
  const int steps = absl::GetFlag(FLAGS_steps), batch = absl::GetFlag(FLAGS_batch);
  const int every = absl::GetFlag(FLAGS_report_every);
  const int64_t examples = absl::GetFlag(FLAGS_examples);
  if (steps < 1 || batch < 1 || every < 1 || examples < 8) {
    return absl::InvalidArgumentError("--steps, --batch, --report_every >= 1, --examples >= 8");
  }
  ASSIGN_OR_RETURN(MlpModel m, BuildMlp(config));
  Dataset data = MakeSyntheticDataset({.examples = examples});
  const int64_t train_n = examples * 3 / 4;
  Dataset train = Batch(data, 0, train_n);
  Dataset held_out = Batch(data, train_n, examples - train_n);
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                   NewSession(OptionsFromEnv(), *m.scope.graph()));
  RETURN_IF_ERROR(session->Run({}, {}, {m.init}).status());

  std::vector<Tensor> eval;
  for (int step = 1; step <= steps; ++step) {
    Dataset b = Batch(train, static_cast<int64_t>(step - 1) * batch % train_n, batch);
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     session->Run({{m.x, b.x}, {m.labels, b.y}}, {m.loss}, {m.train}));
    if (step % every == 0 || step == steps) {
      ASSIGN_OR_RETURN(eval, session->Run({{m.x, held_out.x}, {m.labels, held_out.y}},
                                          {m.loss, m.accuracy}));
      SweepReport(step, {{"loss", eval[0].scalar<float>()},
                         {"accuracy", eval[1].scalar<float>()},
                         {"train_loss", out[0].scalar<float>()}});
    }
  }
  std::printf("final: loss=%.4f accuracy=%.4f (held out)\n", eval[0].scalar<float>(),
              eval[1].scalar<float>());
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "sweep_mlp: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
