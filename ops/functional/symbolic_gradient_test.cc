// SymbolicGradient, lowered by the session: the gradient of a library
// function against central differences of the function itself, of an op
// named as f, of a tensor passed twice (one gradient per argument), zeros
// for an argument no result reads, and wrong arities as errors naming the
// node.
#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "graph/function_builder.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/functional/functional_ops.h"
#include "ops/functional/symbolic_gradient.h"
#include "ops/math/math_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

absl::StatusOr<std::vector<Tensor>> RunGraph(const Scope& s, const std::vector<Output>& fetch) {
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(BuiltinSessionConfig(), *s.graph()));
  return sess->Run({}, fetch, {});
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

// f(x, w) = (tanh(x @ w), sum(x * x)): two results, both arguments used.
absl::StatusOr<NameAttrList> DefineF(const Scope& s) {
  return DefineFunction(
      s, "f", {DT_FLOAT, DT_FLOAT},
      [](Scope& b, std::vector<Output> a) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{ops::Tanh(b, ops::MatMul(b, a[0], a[1])),
                                   ops::Sum(b, ops::Mul(b, a[0], a[0]),
                                           ops::Const(b, Tensor::FromVector<int32_t>({0, 1})))};
      });
}

const std::vector<float> kX = {0.1f, -0.4f, 0.3f, 0.7f, 0.2f, -0.5f};  // [2, 3]
const std::vector<float> kW = {0.3f, -0.2f, 0.5f, 0.1f, -0.6f, 0.4f};  // [3, 2]
const std::vector<float> kDy1 = {1.0f, -2.0f, 0.5f, 1.5f};             // [2, 2]
constexpr float kDy2 = 0.75f;

// L(x, w) = sum(dy1 * tanh(x @ w)) + dy2 * sum(x * x), computed directly.
double Loss(const std::vector<float>& x, const std::vector<float>& w) {
  double l = 0;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      double z = 0;
      for (int k = 0; k < 3; ++k) z += double{x[i * 3 + k]} * w[k * 2 + j];
      l += kDy1[i * 2 + j] * std::tanh(z);
    }
  }
  for (float v : x) l += kDy2 * double{v} * v;
  return l;
}

TEST(SymbolicGradientTest, GradientOfALibraryFunctionMatchesCentralDifferences) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<NameAttrList> f = DefineF(s);
  ASSERT_TRUE(f.ok()) << f.status();
  Output x = ops::Const(s, Tensor::FromVector<float>(kX, TensorShape({2, 3})));
  Output w = ops::Const(s, Tensor::FromVector<float>(kW, TensorShape({3, 2})));
  Output dy1 = ops::Const(s, Tensor::FromVector<float>(kDy1, TensorShape({2, 2})));
  Output dy2 = ops::Const(s, kDy2);
  std::vector<Output> g =
      ops::SymbolicGradient(s.WithOpName("grad"), {x, w, dy1, dy2}, *f, {DT_FLOAT, DT_FLOAT});
  ASSERT_EQ(g.size(), 2u);
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(s, g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 3}));
  EXPECT_EQ((*out)[1].shape(), TensorShape({3, 2}));
  const std::vector<float> gx = Floats((*out)[0]), gw = Floats((*out)[1]);
  constexpr double kH = 1e-3;
  for (int i = 0; i < 6; ++i) {
    std::vector<float> up = kX, down = kX;
    up[i] += kH;
    down[i] -= kH;
    EXPECT_NEAR(gx[i], (Loss(up, kW) - Loss(down, kW)) / (2 * kH), 2e-3) << "x " << i;
    up = kW;
    down = kW;
    up[i] += kH;
    down[i] -= kH;
    EXPECT_NEAR(gw[i], (Loss(kX, up) - Loss(kX, down)) / (2 * kH), 2e-3) << "w " << i;
  }
}

TEST(SymbolicGradientTest, FNamesAnOp) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  NameAttrList matmul;
  matmul.set_name("MatMul");
  (*matmul.mutable_attr())["T"].set_type(DT_FLOAT);
  Output a = ops::Const(s, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})));
  Output b = ops::Const(s, Tensor::FromVector<float>({5, 6, 7, 8}, TensorShape({2, 2})));
  Output dy = ops::Const(s, Tensor::FromVector<float>({1, 0, 0, 1}, TensorShape({2, 2})));
  std::vector<Output> g = ops::SymbolicGradient(s, {a, b, dy}, matmul, {DT_FLOAT, DT_FLOAT});
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(s, g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{5, 7, 6, 8}));  // dy @ b^T
  EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{1, 3, 2, 4}));  // a^T @ dy
}

TEST(SymbolicGradientTest, EachArgumentGetsItsOwnGradientAndUnusedOnesZeros) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // g(p, q, r) = p * q: r is never read.
  absl::StatusOr<NameAttrList> f = DefineFunction(
      s, "product", {DT_FLOAT, DT_FLOAT, DT_FLOAT},
      [](Scope& b, std::vector<Output> a) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{ops::Mul(b, a[0], a[1])};
      });
  ASSERT_TRUE(f.ok()) << f.status();
  Output x = ops::Const(s, Tensor::FromVector<float>({2, 3}));
  Output dy = ops::Const(s, Tensor::FromVector<float>({1, 10}));
  std::vector<Output> g =
      ops::SymbolicGradient(s, {x, x, x, dy}, *f, {DT_FLOAT, DT_FLOAT, DT_FLOAT});
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(s, g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{2, 30}));  // dy * q, not summed with dq
  EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{2, 30}));
  EXPECT_EQ(Floats((*out)[2]), (std::vector<float>{0, 0}));
}

TEST(SymbolicGradientTest, WrongAritiesNameTheNode) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<NameAttrList> f = DefineF(s);
  ASSERT_TRUE(f.ok()) << f.status();
  Output x = ops::Const(s, Tensor::FromVector<float>(kX, TensorShape({2, 3})));
  Output w = ops::Const(s, Tensor::FromVector<float>(kW, TensorShape({3, 2})));
  Output dy1 = ops::Const(s, Tensor::FromVector<float>(kDy1, TensorShape({2, 2})));
  // One gradient for f's two results.
  std::vector<Output> g =
      ops::SymbolicGradient(s.WithOpName("short"), {x, w, dy1}, *f, {DT_FLOAT, DT_FLOAT});
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(s, g);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "short")) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "which are 2")) << out.status();
}

}  // namespace
}  // namespace sluice
