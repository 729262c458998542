// BroadcastTo, EnsureShape, MatrixBandPart and Roll: values from
// TensorFlow's documentation and tests (broadcast_to_ops_test.py,
// matrix_band_part_op_test.py, manip_ops_test.py), gradients against
// central differences, and bad inputs, each a clear error.
#include "ops/array/broadcast_ops.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "builtin_session.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/gradient_checker.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

absl::StatusOr<Tensor> Eval(const Scope& s, const Output& y) { return EvalWithFeeds(s, {}, {}, y); }

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

TEST(BroadcastOpsTest, BroadcastToRepeatsAlongOnesAndNewDims) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output row = ops::Const(s, std::vector<float>{1, 2, 3});
  absl::StatusOr<Tensor> b = Eval(s, ops::BroadcastTo(s, row, {2, 3}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->shape(), TensorShape({2, 3}));
  EXPECT_EQ(Values<float>(*b), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  Output col = ops::Const(s, std::vector<int32_t>{7, 8}, TensorShape({2, 1}));
  absl::StatusOr<Tensor> c = Eval(s, ops::BroadcastTo(s, col, {2, 2, 3}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Values<int32_t>(*c), (std::vector<int32_t>{7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8}));
  absl::StatusOr<Tensor> flags = Eval(s, ops::BroadcastTo(s, ops::Const(s, true), {3}));
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(Values<bool>(*flags), (std::vector<bool>{true, true, true}));
  // The shape is known when the target is a constant.
  EXPECT_EQ(ops::BroadcastTo(s, row, {4, 3}).shape(), TensorShape({4, 3}));
}

TEST(BroadcastOpsTest, MatrixBandPartKeepsTheBand) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Iota(16), TensorShape({4, 4}));
  // The lower triangle (a causal mask), a tridiagonal band, the upper part.
  absl::StatusOr<Tensor> lower = Eval(s, ops::MatrixBandPart(s, x, -1, 0));
  absl::StatusOr<Tensor> tri = Eval(s, ops::MatrixBandPart(s, x, 1, 1));
  absl::StatusOr<Tensor> upper = Eval(s, ops::MatrixBandPart(s, x, int64_t{0}, int64_t{-1}));
  ASSERT_TRUE(lower.ok() && tri.ok() && upper.ok());
  EXPECT_EQ(Values<float>(*lower),
            (std::vector<float>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0, 13, 14, 15, 16}));
  EXPECT_EQ(Values<float>(*tri),
            (std::vector<float>{1, 2, 0, 0, 5, 6, 7, 0, 0, 10, 11, 12, 0, 0, 15, 16}));
  EXPECT_EQ(Values<float>(*upper),
            (std::vector<float>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12, 0, 0, 0, 16}));
  // A batch of non-square matrices.
  Output batch = ops::Const(s, Iota(12), TensorShape({2, 2, 3}));
  absl::StatusOr<Tensor> b = Eval(s, ops::MatrixBandPart(s, batch, 0, 1));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(Values<float>(*b), (std::vector<float>{1, 2, 0, 0, 5, 6, 7, 8, 0, 0, 11, 12}));
}

TEST(BroadcastOpsTest, RollWrapsAlongEachAxis) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = ops::Const(s, std::vector<int32_t>{0, 1, 2, 3, 4});
  absl::StatusOr<Tensor> r = Eval(s, ops::Roll(s, v, 2, 0));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>(*r), (std::vector<int32_t>{3, 4, 0, 1, 2}));
  Output m = ops::Const(s, std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({2, 5}));
  // TensorFlow's examples: shifts on both axes; an axis named twice adds.
  absl::StatusOr<Tensor> both = Eval(s, ops::Roll(s, m, {1, -2}, {0, 1}));
  absl::StatusOr<Tensor> twice = Eval(s, ops::Roll(s, m, {2, -3}, {1, 1}));
  ASSERT_TRUE(both.ok() && twice.ok());
  EXPECT_EQ(Values<int32_t>(*both), (std::vector<int32_t>{7, 8, 9, 5, 6, 2, 3, 4, 0, 1}));
  EXPECT_EQ(Values<int32_t>(*twice), (std::vector<int32_t>{1, 2, 3, 4, 0, 6, 7, 8, 9, 5}));
  absl::StatusOr<Tensor> neg_axis = Eval(s, ops::Roll(s, m, int64_t{6}, int64_t{-1}));
  ASSERT_TRUE(neg_axis.ok()) << neg_axis.status();
  EXPECT_EQ(Values<int32_t>(*neg_axis), (std::vector<int32_t>{4, 0, 1, 2, 3, 9, 5, 6, 7, 8}));
}

TEST(BroadcastOpsTest, EnsureShapePassesCompatibleShapes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s, DT_FLOAT);
  Output ok = ops::EnsureShape(s, x, TensorShape({-1, 3}));
  EXPECT_EQ(ok.shape(), TensorShape({-1, 3}));
  const Tensor v = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  absl::StatusOr<Tensor> y = EvalWithFeeds(s, {x}, {v}, ok);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values<float>(*y), Values<float>(v));
  absl::Status bad = EvalWithFeeds(s, {x}, {Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))},
                                   ok).status();
  EXPECT_TRUE(absl::StrContains(bad.message(), "[1,2] is not compatible with the expected shape"))
      << bad;
}

TEST(BroadcastOpsTest, GradientsMatchFiniteDifferences) {
  struct Case {
    const char* name;
    std::function<Output(const Scope&, Output)> fn;
    TensorShape shape;
  };
  const std::vector<Case> cases = {
      {"BroadcastTo", [](const Scope& s, Output x) { return ops::BroadcastTo(s, x, {2, 3, 4}); },
       TensorShape({3, 1})},
      {"BroadcastTo new dims", [](const Scope& s, Output x) { return ops::BroadcastTo(s, x, {2, 3}); },
       TensorShape({3})},
      {"MatrixBandPart", [](const Scope& s, Output x) { return ops::MatrixBandPart(s, x, 1, 0); },
       TensorShape({2, 3, 3})},
      {"Roll", [](const Scope& s, Output x) { return ops::Roll(s, x, {1, -1}, {0, 1}); },
       TensorShape({3, 4})},
      {"EnsureShape",
       [](const Scope& s, Output x) { return ops::EnsureShape(s, x, TensorShape({-1, 2})); },
       TensorShape({3, 2})},
  };
  for (const Case& c : cases) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = ops::Placeholder(s, DT_DOUBLE, {.shape = c.shape});
    std::vector<double> v(c.shape.num_elements());
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.3 * i - 1.0;
    absl::StatusOr<double> err =
        MaxGradientError(s, {x}, {Tensor::FromVector<double>(v, c.shape)}, c.fn(s, x));
    ASSERT_TRUE(err.ok()) << c.name << ": " << err.status();
    EXPECT_LT(*err, 1e-8) << c.name;
  }
}

TEST(BroadcastOpsTest, BadInputsAreClearErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s, DT_FLOAT);
  Output to = ops::Placeholder(s, DT_INT32);
  const Tensor two = Tensor::FromVector<float>({1, 2}, TensorShape({2}));
  absl::Status st = EvalWithFeeds(s, {x, to}, {two, Tensor::FromVector<int32_t>({3})},
                                  ops::BroadcastTo(s, x, to)).status();
  EXPECT_TRUE(absl::StrContains(st.message(), "shape [2] does not broadcast to [3]")) << st;
  st = EvalWithFeeds(s, {x, to}, {two, Tensor::Scalar<int32_t>(2)}, ops::BroadcastTo(s, x, to))
           .status();
  EXPECT_TRUE(absl::StrContains(st.message(), "shape must be a vector")) << st;
  st = EvalWithFeeds(s, {x}, {two}, ops::MatrixBandPart(s, x, -1, 0)).status();
  EXPECT_TRUE(absl::StrContains(st.message(), "at least 2-D")) << st;
  Output m = ops::Const(s, Iota(4), TensorShape({2, 2}));
  st = Eval(s, ops::MatrixBandPart(s, m, 3, 0)).status();
  EXPECT_TRUE(absl::StrContains(st.message(), "num_lower (3)")) << st;
  st = Eval(s, ops::Roll(s, m, {1, 1}, {0})).status();
  EXPECT_TRUE(absl::StrContains(st.message(), "one length")) << st;
  st = Eval(s, ops::Roll(s, m, 1, 2)).status();
  EXPECT_TRUE(absl::StrContains(st.message(), "axis 2 is out of range")) << st;
  // Known at graph construction.
  Scope g = Scope::NewRootScope(BuiltinOps());
  ops::BroadcastTo(g, ops::Const(g, std::vector<float>{1, 2}), {2, 3});
  EXPECT_TRUE(absl::StrContains(g.status().message(), "does not broadcast to")) << g.status();
  Scope e = Scope::NewRootScope(BuiltinOps());
  ops::EnsureShape(e, ops::Const(e, std::vector<float>{1, 2}), TensorShape({3}));
  EXPECT_TRUE(absl::StrContains(e.status().message(), "not compatible")) << e.status();
}

}  // namespace
}  // namespace sluice
