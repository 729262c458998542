// A graph program in a user's own workspace: fit y = 2x - 1 and check it.
#include <cmath>
#include <cstdio>

#include "sluice.h"

int main() {
  using namespace sluice;
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), 0.0f);
  ops::VariableAndInit b = ops::VariableWithInit(s.WithOpName("b"), 0.0f);
  Output y = ops::Add(s, ops::Mul(s, x, w.var), b.var);
  Output target = ops::Sub(s, ops::Mul(s, x, 2.0f), 1.0f);
  Output loss = ops::Mean(s, ops::Square(s, ops::Sub(s, y, target)), {0});
  GradientDescentOptimizer sgd(0.2);
  absl::StatusOr<Node*> train = sgd.Minimize(s, loss, {w.var, b.var});
  Node* init = ops::GlobalVariablesInitializer(s);
  if (!train.ok() || !s.ok()) {
    std::fprintf(stderr, "consumer: build failed: %s\n", std::string(s.status().message()).c_str());
    return 1;
  }
  auto session = NewSession(BuiltinSessionConfig(), *s.graph());
  if (!session.ok()) return 1;
  Tensor xs = Tensor::FromVector<float>({-1, -0.5f, 0, 0.5f, 1});
  if (!(*session)->Run({}, {}, {init}).ok()) return 1;
  for (int i = 0; i < 200; ++i) {
    if (!(*session)->Run({{x, xs}}, {}, {*train}).ok()) return 1;
  }
  auto out = (*session)->Run({{x, xs}}, {w.var, b.var});
  if (!out.ok()) return 1;
  float wv = (*out)[0].scalar<float>(), bv = (*out)[1].scalar<float>();
  std::printf("w=%.3f b=%.3f\n", wv, bv);
  bool ok = std::fabs(wv - 2) < 1e-2 && std::fabs(bv + 1) < 1e-2;
  std::printf(ok ? "consumer: ok\n" : "consumer: wrong result\n");
  return ok ? 0 : 1;
}
