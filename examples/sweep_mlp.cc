// The MLP of examples/mlp.cc as a trial of a hyperparameter sweep: reads its
// hyperparameters from flags, reports held-out loss and accuracy with
// SweepReport every --report_every steps.
//
//   bazel build //examples:sweep_mlp
//   bazel run //tools:sweep -- --space=examples/sweep_mlp_space.json
//       --trials=16 --parallel=2 -- bazel-bin/examples/sweep_mlp
//
// Alone it is a plain training run: bazel run //examples:sweep_mlp -- --hidden=128
// Trains on the first 3/4 of a synthetic dataset and evaluates on the rest.
// Honors SLUICE_NUM_THREADS (set by the sweep for CPU trials).
//
// Files: with a --logdir (by default, under a sweep, train/ in the trial's
// directory; none when run alone) it writes TensorBoard scalars (the
// reported metrics) and a checkpoint every --checkpoint_steps steps and at
// the end, and starts from the newest checkpoint there if there is one: a
// trial the sweep runs again after --resume goes on from its last
// checkpoint, and a finished one only evaluates. SIGTERM (how the sweep
// stops a trial early) ends training between two steps, never halfway
// through writing a checkpoint; the exit status is then 143.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "examples/mlp_model.h"
#include "sluice.h"
#include "training/checkpoint/saver.h"
#include "training/summary/summary_writer.h"

ABSL_FLAG(int, steps, 400, "training steps");
ABSL_FLAG(int, batch, 64, "examples per step");
ABSL_FLAG(std::string, hidden, "128", "hidden layer sizes, comma separated");
ABSL_FLAG(double, learning_rate, 0.01, "learning rate");
ABSL_FLAG(std::string, optimizer, "sgd", "sgd, momentum or adam");
ABSL_FLAG(int, report_every, 25, "SweepReport every N steps");
ABSL_FLAG(int, examples, 4096, "size of the synthetic dataset (3/4 train, 1/4 held out)");
ABSL_FLAG(std::string, logdir, "auto",
          "checkpoints and TensorBoard events; auto: train/ in the trial's directory under a "
          "sweep, none otherwise; \"\": none");
ABSL_FLAG(int, checkpoint_steps, 100, "save a checkpoint every N steps (and at the end)");

namespace sluice {
namespace {

volatile std::sig_atomic_t terminated = 0;

void OnTerminate(int) { terminated = 1; }

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

SessionConfig OptionsFromEnv() {
  SessionConfig options = BuiltinSessionConfig();
  if (const char* n = std::getenv("SLUICE_NUM_THREADS")) {
    int threads;
    if (absl::SimpleAtoi(n, &threads) && threads > 0) {
      options.devices.cpu_threads = threads;
      options.inter_op_parallelism = 1;  // the GEMMs use the trial's cores
    }
  }
  return options;
}

std::string Logdir() {
  const std::string flag = absl::GetFlag(FLAGS_logdir);
  if (flag != "auto") return flag;
  return SweepTrialDir().empty() ? "" : SweepTrialDir() + "/train";
}

// Where a run writes its files: the saver, the event file and the step of
// the checkpoint it started from (0: a fresh start).
struct RunFiles {
  std::string logdir;  // "": nothing is written
  std::unique_ptr<Saver> saver;
  std::unique_ptr<SummaryWriter> events;
  int64_t restored_step = 0;
};

// `saver` is null when there is no logdir.
absl::StatusOr<RunFiles> OpenRunFiles(std::unique_ptr<Saver> saver, const MlpModel& m,
                                      Session* session) {
  RunFiles files;
  if (saver == nullptr) return files;
  files.logdir = Logdir();
  files.saver = std::move(saver);
  SummaryWriterOptions events;
  events.filename_suffix = absl::StrCat(getpid());  // a rerun in the same second gets its own
  ASSIGN_OR_RETURN(files.events, SummaryWriter::Create(files.logdir, events));
  absl::StatusOr<std::string> restored = files.saver->RestoreNewest(session, files.logdir);
  if (absl::IsNotFound(restored.status())) return files;
  RETURN_IF_ERROR(restored.status());
  ASSIGN_OR_RETURN(std::vector<Tensor> step, session->Run({}, {m.global_step}));
  files.restored_step = step[0].scalar<int64_t>();
  std::printf("sweep_mlp: restored %s (step %lld)\n", restored->c_str(),
              static_cast<long long>(files.restored_step));
  return files;
}

// Held-out loss and accuracy, reported to the sweep and to TensorBoard.
absl::StatusOr<std::vector<Tensor>> Evaluate(const MlpModel& m, Session* session,
                                             const Dataset& held_out, int64_t step,
                                             std::map<std::string, double> metrics,
                                             RunFiles& files) {
  ASSIGN_OR_RETURN(std::vector<Tensor> eval, session->Run({{m.x, held_out.x},
                                                           {m.labels, held_out.y}},
                                                          {m.loss, m.accuracy}));
  metrics["loss"] = eval[0].scalar<float>();
  metrics["accuracy"] = eval[1].scalar<float>();
  SweepReport(step, metrics);
  if (files.events != nullptr) {
    for (const auto& [tag, value] : metrics) {
      RETURN_IF_ERROR(files.events->AddScalar(tag, value, step));
    }
    RETURN_IF_ERROR(files.events->Flush());
  }
  return eval;
}

absl::Status Main() {
  ASSIGN_OR_RETURN(MlpConfig config, ConfigFromFlags());
  const int steps = absl::GetFlag(FLAGS_steps), batch = absl::GetFlag(FLAGS_batch);
  const int every = absl::GetFlag(FLAGS_report_every);
  const int checkpoint_every = absl::GetFlag(FLAGS_checkpoint_steps);
  const int64_t examples = absl::GetFlag(FLAGS_examples);
  if (steps < 1 || batch < 1 || every < 1 || checkpoint_every < 1 || examples < 8) {
    return absl::InvalidArgumentError(
        "--steps, --batch, --report_every, --checkpoint_steps >= 1, --examples >= 8");
  }
  ASSIGN_OR_RETURN(MlpModel m, BuildMlp(config));
  Dataset data = MakeSyntheticDataset({.examples = examples});
  const int64_t train_n = examples * 3 / 4;
  Dataset train = Batch(data, 0, train_n);
  Dataset held_out = Batch(data, train_n, examples - train_n);
  // The saver's nodes join the graph before the session copies it.
  std::unique_ptr<Saver> saver;
  if (!Logdir().empty()) {
    ASSIGN_OR_RETURN(saver, Saver::Build(m.scope, {}));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                   NewSession(OptionsFromEnv(), *m.scope.graph()));
  RETURN_IF_ERROR(session->Run({}, {}, {m.init}).status());
  ASSIGN_OR_RETURN(RunFiles files, OpenRunFiles(std::move(saver), m, session.get()));

  std::vector<Tensor> eval;
  if (files.restored_step >= steps) {  // finished before: only evaluate
    ASSIGN_OR_RETURN(eval, Evaluate(m, session.get(), held_out, files.restored_step, {}, files));
  }
  std::signal(SIGTERM, OnTerminate);
  for (int64_t step = files.restored_step + 1; step <= steps && !terminated; ++step) {
    Dataset b = Batch(train, (step - 1) * batch % train_n, batch);
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     session->Run({{m.x, b.x}, {m.labels, b.y}}, {m.loss}, {m.train}));
    if (step % every == 0 || step == steps) {
      ASSIGN_OR_RETURN(eval, Evaluate(m, session.get(), held_out, step,
                                      {{"train_loss", out[0].scalar<float>()}}, files));
    }
    if (files.saver != nullptr && (step % checkpoint_every == 0 || step == steps)) {
      RETURN_IF_ERROR(files.saver->Save(session.get(), files.logdir, step).status());
    }
  }
  if (files.events != nullptr) RETURN_IF_ERROR(files.events->Close());
  if (terminated) return absl::OkStatus();
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
  if (sluice::terminated) {
    std::printf("sweep_mlp: stopped by SIGTERM\n");
    return 128 + SIGTERM;
  }
  return 0;
}
