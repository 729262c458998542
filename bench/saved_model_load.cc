// Loading a SavedModel and running its signature once, against building a
// session on the same graph with the weights frozen in (a plain GraphDef)
// and running it once: what serving a SavedModel costs over a graph file.
// The model: a 784-512-512-10 MLP (1.3 M weights, 5 MB), a batch of 64.
//
//   bazel run //bench:saved_model_load -- --reps=15
//
// Prints medians:
//   saved_model_load_and_run: X ms     (LoadSavedModel + RunSignature)
//   graphdef_session_and_run: Y ms     (NewSession on the frozen GraphDef + Run)
//   saved_model_load_vs_graphdef: X/Y
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "bench/bench_util.h"
#include "builtin_session.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/state/state_ops.h"
#include "session/direct_session.h"
#include "training/checkpoint/saved_model.h"

ABSL_FLAG(int, reps, 15, "loads per figure (the median is printed)");
ABSL_FLAG(std::string, dir, "/tmp/sluice/saved_model_bench", "where the model is written");

namespace sluice {
namespace {

Tensor Random(const TensorShape& shape, std::mt19937* rng) {
  std::normal_distribution<float> n(0.0f, 0.05f);
  Tensor t(DT_FLOAT, shape);
  for (float& v : t.flat<float>()) v = n(*rng);
  return t;
}

// The MLP over `x`; weights as variables (`frozen` empty) or as Consts of
// `frozen`'s values.
Output Mlp(const Scope& s, Output x, const std::vector<Tensor>& values, bool as_variables,
           std::vector<Node*>* init) {
  Output h = x;
  for (size_t i = 0; i < values.size(); i += 2) {
    const std::string layer = absl::StrCat("layer", i / 2);
    Output w, b;
    if (as_variables) {
      ops::VariableAndInit vw =
          ops::VariableWithInit(s.WithOpName(layer + "/kernel"), ops::Const(s, values[i]));
      ops::VariableAndInit vb =
          ops::VariableWithInit(s.WithOpName(layer + "/bias"), ops::Const(s, values[i + 1]));
      init->push_back(vw.initializer);
      init->push_back(vb.initializer);
      w = vw.var;
      b = vb.var;
    } else {
      w = ops::Const(s.WithOpName(layer + "/kernel"), values[i]);
      b = ops::Const(s.WithOpName(layer + "/bias"), values[i + 1]);
    }
    h = ops::Add(s, ops::MatMul(s, h, w), b);
    if (i + 2 < values.size()) h = ops::Relu(s, h);
  }
  return ops::Softmax(s.WithOpName("probabilities"), h);
}

absl::Status Run() {
  std::mt19937 rng(1);
  const std::vector<int64_t> sizes = {784, 512, 512, 10};
  std::vector<Tensor> values;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    values.push_back(Random(TensorShape({sizes[i], sizes[i + 1]}), &rng));
    values.push_back(Random(TensorShape({sizes[i + 1]}), &rng));
  }
  const Tensor batch = Random(TensorShape({64, 784}), &rng);

  // The SavedModel.
  const std::string dir = absl::GetFlag(FLAGS_dir);
  std::filesystem::remove_all(dir);
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    std::vector<Node*> init;
    Output probs = Mlp(s, x, values, /*as_variables=*/true, &init);
    ASSIGN_OR_RETURN(std::unique_ptr<Saver> saver, Saver::Build(s, {}));
    RETURN_IF_ERROR(s.status());
    ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(BuiltinSessionConfig(), *s.graph()));
    RETURN_IF_ERROR(sess->Run({}, {}, init).status());
    SaveModelOptions opts;
    opts.signatures[kDefaultServingSignature] =
        PredictSignature({{"x", x}}, {{"probabilities", probs}});
    RETURN_IF_ERROR(SaveModel(sess.get(), *s.graph(), *saver, dir + "/1", opts));
  }
  // The same model frozen into one GraphDef.
  GraphDef frozen;
  std::string fetch;
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    Output probs = Mlp(s, x, values, /*as_variables=*/false, nullptr);
    RETURN_IF_ERROR(s.status());
    ASSIGN_OR_RETURN(frozen, s.ToGraphDef());
    fetch = probs.name();
  }

  const int reps = absl::GetFlag(FLAGS_reps);
  absl::Status status;
  std::vector<double> sm = bench::TimeRepeated(reps, [&] {
    absl::StatusOr<SavedModelBundle> model =
        LoadSavedModel(BuiltinSessionConfig(), dir + "/1", {kSavedModelServeTag});
    if (!model.ok()) {
      status = model.status();
      return;
    }
    absl::StatusOr<std::map<std::string, Tensor>> out =
        RunSignature(*model, kDefaultServingSignature, {{"x", batch}});
    if (!out.ok()) status = out.status();
  });
  RETURN_IF_ERROR(status);
  std::vector<double> gd = bench::TimeRepeated(reps, [&] {
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), frozen);
    if (!sess.ok()) {
      status = sess.status();
      return;
    }
    absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({{"x", batch}}, {fetch}, {});
    if (!out.ok()) status = out.status();
  });
  RETURN_IF_ERROR(status);
  const double a = bench::Median(sm), b = bench::Median(gd);
  std::printf("saved_model_load_and_run: %.2f ms\n", a);
  std::printf("graphdef_session_and_run: %.2f ms\n", b);
  std::printf("saved_model_load_vs_graphdef: %.2f x\n", a / b);
  std::filesystem::remove_all(dir);
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "saved_model_load", sluice::Run);
}
