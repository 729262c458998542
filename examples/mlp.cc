// Trains an MLP classifier on a synthetic dataset and prints its progress.
//
//   bazel run //examples:mlp -- --steps=600 --save_graph=/tmp/mlp.pb
//
// Ends with "final: loss=<x> accuracy=<y>" (over the whole training set).
// With --save_graph, writes the trained graph for inference (variables frozen
// to constants; input "x", outputs "prediction" and "probabilities"), and
// with --save_sample=DIR a batch of inputs and the predictions for it.
#include <chrono>
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "examples/mlp_model.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 600, "training steps");
ABSL_FLAG(int, batch, 128, "examples per step");
ABSL_FLAG(std::string, hidden, "256,256", "hidden layer sizes, comma separated");
ABSL_FLAG(double, learning_rate, 0.05, "learning rate");
ABSL_FLAG(std::string, optimizer, "momentum", "sgd, momentum or adam");
ABSL_FLAG(int, log_every, 50, "print progress every N steps");
ABSL_FLAG(int, examples, 8192, "size of the synthetic training set");
ABSL_FLAG(std::string, save_graph, "", "write the trained, frozen graph here (.pb or .pbtxt)");
ABSL_FLAG(std::string, save_sample, "", "write x.npy and prediction.npy for 16 examples here");
ABSL_FLAG(std::string, trace, "", "write a Chrome trace of the last training step here");

namespace sluice {
namespace {

std::string InWorkingDir(const std::string& path) {
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || wd == nullptr) return path;
  return absl::StrCat(wd, "/", path);
}

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
  const int steps = absl::GetFlag(FLAGS_steps), batch = absl::GetFlag(FLAGS_batch);
  if (steps < 0 || batch <= 0) return absl::InvalidArgumentError("--steps >= 0 and --batch > 0");

  ASSIGN_OR_RETURN(MlpModel m, BuildMlp(config));
  // An output for inference graphs saved with --save_graph (fetched by name).
  ops::Softmax(m.scope.WithOpName("probabilities"), m.logits);
  RETURN_IF_ERROR(m.scope.status());
  Dataset data = MakeSyntheticDataset({.examples = absl::GetFlag(FLAGS_examples)});
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                   NewSession(BuiltinSessionConfig(), *m.scope.graph()));
  RETURN_IF_ERROR(session->Run({}, {}, {m.init}).status());

  std::printf("training MLP %s on %lld synthetic examples, batch %d, %s lr=%g\n",
              absl::GetFlag(FLAGS_hidden).c_str(),
              static_cast<long long>(data.x.dim_size(0)), batch, config.optimizer.c_str(),
              config.learning_rate);
  auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  int last_step = 0;
  for (int step = 1; step <= steps; ++step) {
    Dataset b = Batch(data, static_cast<int64_t>(step - 1) * batch, batch);
    RunOptions run_options;
    RunMetadata metadata;
    run_options.trace = step == steps && !absl::GetFlag(FLAGS_trace).empty();
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     session->Run({{m.x, b.x}, {m.labels, b.y}}, {m.loss}, {m.train},
                                  run_options, &metadata));
    if (run_options.trace) {
      FILE* f = std::fopen(InWorkingDir(absl::GetFlag(FLAGS_trace)).c_str(), "w");
      if (f == nullptr) return absl::NotFoundError("cannot write --trace file");
      std::fputs(ToChromeTraceJson(metadata.step_stats).c_str(), f);
      std::fclose(f);
    }
    if (step % absl::GetFlag(FLAGS_log_every) == 0 || step == steps) {
      auto now = std::chrono::steady_clock::now();
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

  if (!absl::GetFlag(FLAGS_save_graph).empty()) {
    ASSIGN_OR_RETURN(GraphDef def, m.scope.ToGraphDef());
    ASSIGN_OR_RETURN(GraphDef frozen,
                     FreezeGraph(session.get(), *BuiltinOps(), def,
                                 {"prediction", "probabilities"}));
    std::string path = InWorkingDir(absl::GetFlag(FLAGS_save_graph));
    bool text = absl::EndsWith(path, ".pbtxt");
    RETURN_IF_ERROR(WriteGraphDefFile(frozen, path, text ? GraphFileFormat::kText
                                                         : GraphFileFormat::kBinary));
    std::printf("saved the frozen graph to %s (input x, outputs prediction, probabilities)\n",
                path.c_str());
  }
  if (!absl::GetFlag(FLAGS_save_sample).empty()) {
    std::string dir = InWorkingDir(absl::GetFlag(FLAGS_save_sample));
    Dataset sample = Batch(data, 0, 16);
    ASSIGN_OR_RETURN(std::vector<Tensor> pred, session->Run({{m.x, sample.x}}, {m.prediction}));
    RETURN_IF_ERROR(WriteNpyFile(sample.x, dir + "/x.npy"));
    RETURN_IF_ERROR(WriteNpyFile(pred[0], dir + "/prediction.npy"));
    std::printf("saved x.npy and prediction.npy to %s\n", dir.c_str());
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
    std::fprintf(stderr, "mlp: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
