// Fits y = w*x + b to noisy points from y = 3x + 2 by gradient descent.
//
//   bazel run //examples:linear_regression -- --steps=200
//
// Ends with "final: loss=<x> w=<w> b=<b>".
#include <cstdio>
#include <random>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 200, "training steps");
ABSL_FLAG(double, learning_rate, 0.1, "learning rate");
ABSL_FLAG(int, log_every, 20, "print progress every N steps");

namespace sluice {
namespace {

absl::Status Main() {
  constexpr int kPoints = 256;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::normal_distribution<float> noise(0, 0.1f);
  Tensor xs(DT_FLOAT, TensorShape({kPoints, 1})), ys(DT_FLOAT, TensorShape({kPoints, 1}));
  for (int i = 0; i < kPoints; ++i) {
    xs.flat<float>()[i] = u(rng);
    ys.flat<float>()[i] = 3 * xs.flat<float>()[i] + 2 + noise(rng);
  }

  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({-1, 1})});
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, {.shape = TensorShape({-1, 1})});
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), Input({0.0f}));
  ops::VariableAndInit b = ops::VariableWithInit(s.WithOpName("b"), Input({0.0f}));
  Output pred = ops::Add(s.WithOpName("pred"), ops::Mul(s, x, w.var), b.var);
  Output loss = ops::Mean(s.WithOpName("loss"), ops::Square(s, ops::Sub(s, pred, y)), {0, 1});
  GlobalStep step = CreateGlobalStep(s);
  GradientDescentOptimizer sgd(absl::GetFlag(FLAGS_learning_rate));
  ASSIGN_OR_RETURN(Node * train, sgd.Minimize(s.WithOpName("train"), loss, {w.var, b.var}, &step.ref));
  Node* init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  RETURN_IF_ERROR(s.status());

  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(BuiltinSessionConfig(), *s.graph()));
  RETURN_IF_ERROR(session->Run({}, {}, {init}).status());
  std::vector<Tensor> out;
  for (int i = 1; i <= absl::GetFlag(FLAGS_steps); ++i) {
    ASSIGN_OR_RETURN(out, session->Run({{x, xs}, {y, ys}}, {loss}, {train}));
    if (i % absl::GetFlag(FLAGS_log_every) == 0) {
      std::printf("step %d: loss=%.5f\n", i, out[0].scalar<float>());
    }
  }
  ASSIGN_OR_RETURN(out, session->Run({{x, xs}, {y, ys}}, {loss, w.var, b.var}));
  std::printf("final: loss=%.5f w=%.4f b=%.4f\n", out[0].scalar<float>(),
              out[1].flat<float>()[0], out[2].flat<float>()[0]);
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "linear_regression: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
