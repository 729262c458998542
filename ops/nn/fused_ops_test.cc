// The fused ops' kernels on known values. Expected values are worked by
// hand from TensorFlow's definition of _FusedMatMul (the product, then each
// fused op in order: tensorflow/core/kernels/matmul_op_fused.cc and its
// test, matmul_op_test.cc's FusedMatMul cases, compare against MatMul ->
// BiasAdd -> Relu) and of ApplyGradientDescent (var -= alpha * delta).
#include "ops/nn/fused_ops.h"

#include <memory>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "graph/graph_def_io.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/builtins.h"
#include "ops/state/state_ops.h"
#include "ops/testutil/math_test_util.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Make;
using testing_util::Placeholder;
using testing_util::TryEval;

// a [2,2] · b [2,3] = [[1, 1, -4], [3, 1, -8]]; + bias = [[1.5, -3, -3],
// [3.5, -3, -7]].
Tensor A() { return Make<float>({1, 2, 3, 4}, TensorShape({2, 2})); }
Tensor B() { return Make<float>({1, -1, 0, 0, 1, -2}, TensorShape({2, 3})); }
Tensor Bias() { return Make<float>({0.5f, -4, 1}, TensorShape({3})); }

TEST(FusedMatMulTest, BiasAdd) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_FLOAT), b = Placeholder(s, DT_FLOAT), c = Placeholder(s, DT_FLOAT);
  Output y = ops::FusedMatMul(s, a, b, {c}, {.fused_ops = {"BiasAdd"}});
  ExpectTensor<float>(Eval(s, {{a, A()}, {b, B()}, {c, Bias()}}, y), TensorShape({2, 3}),
                      {1.5f, -3, -3, 3.5f, -3, -7});
}

TEST(FusedMatMulTest, BiasAddRelu) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_FLOAT), b = Placeholder(s, DT_FLOAT), c = Placeholder(s, DT_FLOAT);
  Output y = ops::FusedMatMul(s, a, b, {c}, {.fused_ops = {"BiasAdd", "Relu"}});
  ExpectTensor<float>(Eval(s, {{a, A()}, {b, B()}, {c, Bias()}}, y), TensorShape({2, 3}),
                      {1.5f, 0, 0, 3.5f, 0, 0});
}

TEST(FusedMatMulTest, TransposedOperands) {
  // aᵀ stored [[1, 3], [2, 4]], bᵀ stored [3, 2]: the same product as above.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output y = ops::FusedMatMul(s, ops::Const(s, Make<float>({1, 3, 2, 4}, TensorShape({2, 2}))),
                              ops::Const(s, Make<float>({1, 0, -1, 1, 0, -2}, TensorShape({3, 2}))),
                              {ops::Const(s, Bias())},
                              {.transpose_a = true, .transpose_b = true, .fused_ops = {"BiasAdd"}});
  ExpectTensor<float>(Eval(s, {}, y), TensorShape({2, 3}), {1.5f, -3, -3, 3.5f, -3, -7});
}

TEST(FusedMatMulTest, StaticShapeIsInferred) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output y = ops::FusedMatMul(s, ops::Const(s, A()), ops::Const(s, B()), {ops::Const(s, Bias())},
                              {.fused_ops = {"BiasAdd"}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(y.shape(), TensorShape({2, 3}));
}

TEST(FusedMatMulTest, EmptyInnerDimensionGivesTheBias) {
  // k = 0: the product is an empty sum, so the result is relu(bias) per row.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_FLOAT), b = Placeholder(s, DT_FLOAT), c = Placeholder(s, DT_FLOAT);
  Output y = ops::FusedMatMul(s, a, b, {c}, {.fused_ops = {"BiasAdd", "Relu"}});
  ExpectTensor<float>(Eval(s,
                           {{a, Tensor(DT_FLOAT, TensorShape({2, 0}))},
                            {b, Tensor(DT_FLOAT, TensorShape({0, 3}))},
                            {c, Bias()}},
                           y),
                      TensorShape({2, 3}), {0.5f, 0, 1, 0.5f, 0, 1});
}

TEST(FusedMatMulTest, EmptyRows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_FLOAT), b = Placeholder(s, DT_FLOAT), c = Placeholder(s, DT_FLOAT);
  Output y = ops::FusedMatMul(s, a, b, {c}, {.fused_ops = {"BiasAdd"}});
  Tensor out = Eval(s, {{a, Tensor(DT_FLOAT, TensorShape({0, 2}))}, {b, B()}, {c, Bias()}}, y);
  EXPECT_EQ(out.shape(), TensorShape({0, 3}));
}

TEST(FusedMatMulTest, BiasOfTheWrongSizeFails) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_FLOAT), b = Placeholder(s, DT_FLOAT), c = Placeholder(s, DT_FLOAT);
  Output y = ops::FusedMatMul(s, a, b, {c}, {.fused_ops = {"BiasAdd"}});
  absl::StatusOr<Tensor> r =
      TryEval(s, {{a, A()}, {b, B()}, {c, Make<float>({1, 2}, TensorShape({2}))}}, y);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("bias must be a vector of the product's 3 columns"));
}

TEST(FusedMatMulTest, BiasOfTheWrongStaticSizeFailsAtBuild) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::FusedMatMul(s, ops::Const(s, A()), ops::Const(s, B()),
                   {ops::Const(s, Make<float>({1, 2}, TensorShape({2})))},
                   {.fused_ops = {"BiasAdd"}});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("the bias has 2 elements, the product 3 columns"));
}

TEST(FusedMatMulTest, InnerDimensionsMustAgree) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_FLOAT), b = Placeholder(s, DT_FLOAT), c = Placeholder(s, DT_FLOAT);
  Output y = ops::FusedMatMul(s, a, b, {c}, {.fused_ops = {"BiasAdd"}});
  absl::StatusOr<Tensor> r = TryEval(s, {{a, B()}, {b, B()}, {c, Bias()}}, y);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("Matrix size-incompatible"));
}

TEST(FusedMatMulTest, UnsupportedFusedOpsFailByName) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output y = ops::FusedMatMul(s, ops::Const(s, A()), ops::Const(s, B()), {ops::Const(s, Bias())},
                              {.fused_ops = {"BiasAdd", "Elu"}});
  absl::StatusOr<Tensor> r = TryEval(s, {}, y);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("fused_ops [BiasAdd, Elu] is not supported"));
}

TEST(FusedMatMulTest, HasNoGradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Const(s, A());
  Output y = ops::FusedMatMul(s, a, ops::Const(s, B()), {ops::Const(s, Bias())},
                              {.fused_ops = {"BiasAdd"}});
  absl::StatusOr<std::vector<Output>> g = AddGradients(s, {y}, {a});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
}

// A graph file as TensorFlow's grappler writes it (attrs epsilon and
// leakyrelu_alpha included) runs unchanged.
constexpr char kTensorFlowGraph[] = R"pb(
node { name: "a" op: "Const"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT
    tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: 1 float_val: 2 float_val: 3
    float_val: 4 } } } }
node { name: "b" op: "Const"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT
    tensor_shape { dim { size: 2 } dim { size: 3 } } float_val: 1 float_val: -1 float_val: 0
    float_val: 0 float_val: 1 float_val: -2 } } } }
node { name: "bias" op: "Const"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT
    tensor_shape { dim { size: 3 } } float_val: 0.5 float_val: -4 float_val: 1 } } } }
node { name: "dense/Relu" op: "_FusedMatMul" input: "a" input: "b" input: "bias"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "num_args" value { i: 1 } }
  attr { key: "fused_ops" value { list { s: "BiasAdd" s: "Relu" } } }
  attr { key: "epsilon" value { f: 0 } }
  attr { key: "leakyrelu_alpha" value { f: 0.2 } }
  attr { key: "transpose_a" value { b: false } }
  attr { key: "transpose_b" value { b: false } } }
)pb";

TEST(FusedMatMulTest, RunsFromATensorFlowGraphFile) {
  absl::StatusOr<GraphDef> def = ParseGraphDef(kTensorFlowGraph);
  ASSERT_TRUE(def.ok()) << def.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *def);
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {"dense/Relu:0"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<float>((*out)[0], TensorShape({2, 3}), {1.5f, 0, 0, 3.5f, 0, 0});
}

// w [2,2] -= 0.5 · hᵀ [2,3] · dy [3,2], hᵀ·dy = [[0, 2], [2, 4]].
struct ApplyGraph {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"),
                                                 ops::Const(s, Make<float>({1, 2, 3, 4},
                                                                           TensorShape({2, 2}))));
  Output h = ops::Const(s, Make<float>({1, 0, 0, 1, 1, 1}, TensorShape({3, 2})));
  Output dy = ops::Const(s, Make<float>({1, 2, 3, 4, -1, 0}, TensorShape({3, 2})));
};

TEST(MatMulApplyGradientDescentTest, UpdatesTheVariable) {
  ApplyGraph g;
  Output out = ops::MatMulApplyGradientDescent(g.s, g.w.var, 0.5f, g.h, g.dy, {.transpose_a = true});
  ASSERT_TRUE(g.s.ok()) << g.s.status();
  EXPECT_EQ(out.dtype(), DT_FLOAT_REF);
  EXPECT_EQ(out.shape(), TensorShape({2, 2}));
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *g.s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {g.w.initializer}).ok());
  absl::StatusOr<std::vector<Tensor>> first = (*sess)->Run({}, {out}, {});
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectTensor<float>((*first)[0], TensorShape({2, 2}), {1, 1, 2, 2});
  // A second step continues from the updated value.
  ASSERT_TRUE((*sess)->Run({}, {}, {out.node}).ok());
  absl::StatusOr<std::vector<Tensor>> w = (*sess)->Run({}, {g.w.var}, {});
  ASSERT_TRUE(w.ok()) << w.status();
  ExpectTensor<float>((*w)[0], TensorShape({2, 2}), {1, 0, 1, 0});
}

TEST(MatMulApplyGradientDescentTest, ProductOfAnotherShapeFails) {
  ApplyGraph g;
  Output a = Placeholder(g.s, DT_FLOAT);
  Output out = ops::MatMulApplyGradientDescent(g.s, g.w.var, 0.5f, a, g.dy);
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *g.s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {g.w.initializer}).ok());
  absl::StatusOr<std::vector<Tensor>> r =
      (*sess)->Run({{a, Make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({3, 3}))}}, {out}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("var w has shape [2,2] but the product"));
}

TEST(MatMulApplyGradientDescentTest, StaticShapeMismatchFailsAtBuild) {
  ApplyGraph g;
  ops::MatMulApplyGradientDescent(g.s, g.w.var, 0.5f, g.h, g.dy);  // [3,2]·[3,2]: k differs
  ASSERT_FALSE(g.s.ok());
  EXPECT_THAT(g.s.status().message(), HasSubstr("inner dimensions differ"));
}

TEST(MatMulApplyGradientDescentTest, AlphaMustBeAScalar) {
  ApplyGraph g;
  ops::MatMulApplyGradientDescent(g.s, g.w.var, {0.5f, 0.5f}, g.h, g.dy, {.transpose_a = true});
  ASSERT_FALSE(g.s.ok());
  EXPECT_THAT(g.s.status().message(), HasSubstr("alpha must be a scalar"));
}

TEST(MatMulApplyGradientDescentTest, UninitializedVariableFails) {
  ApplyGraph g;
  Output out = ops::MatMulApplyGradientDescent(g.s, g.w.var, 0.5f, g.h, g.dy, {.transpose_a = true});
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *g.s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> r = (*sess)->Run({}, {out}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
}

// h [3,2], dy [3,2]: hᵀ·dy = [[0, 2], [2, 4]]; dy's column sums [3, 6].
Tensor H() { return Make<float>({1, 0, 0, 1, 1, 1}, TensorShape({3, 2})); }
Tensor Dy() { return Make<float>({1, 2, 3, 4, -1, 0}, TensorShape({3, 2})); }

TEST(MatMulBiasAddGradTest, WeightAndBiasGradientsOfADenseLayer) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> out =
      ops::MatMulBiasAddGrad(s, ops::Const(s, H()), ops::Const(s, Dy()), {.transpose_a = true});
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(out[1].shape(), TensorShape({2}));
  ExpectTensor<float>(Eval(s, {}, out[0]), TensorShape({2, 2}), {0, 2, 2, 4});
  ExpectTensor<float>(Eval(s, {}, out[1]), TensorShape({2}), {3, 6});
}

TEST(MatMulBiasAddGradTest, TransposedBIsSummedAlongItsRows) {
  // b = dyᵀ stored [2,3] with transpose_b: op(b) is dy again.
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> out = ops::MatMulBiasAddGrad(
      s, ops::Const(s, H()), ops::Const(s, Make<float>({1, 3, -1, 2, 4, 0}, TensorShape({2, 3}))),
      {.transpose_a = true, .transpose_b = true});
  ExpectTensor<float>(Eval(s, {}, out[0]), TensorShape({2, 2}), {0, 2, 2, 4});
  ExpectTensor<float>(Eval(s, {}, out[1]), TensorShape({2}), {3, 6});
}

TEST(MatMulBiasAddGradTest, EqualsMatMulAndBiasAddGrad) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Tensor x = testing_util::Doubles(TensorShape({17, 9}), 1);
  Tensor dy = testing_util::Doubles(TensorShape({17, 5}), 2);
  Output xf = ops::Cast(s, ops::Const(s, x), DT_FLOAT);
  Output dyf = ops::Cast(s, ops::Const(s, dy), DT_FLOAT);
  std::vector<Output> fused = ops::MatMulBiasAddGrad(s, xf, dyf, {.transpose_a = true});
  Output dw = ops::MatMul(s, xf, dyf, {.transpose_a = true});
  Output db = ops::BiasAddGrad(s, dyf);
  ASSERT_TRUE(s.ok()) << s.status();
  const Tensor want_dw = Eval(s, {}, dw), got_dw = Eval(s, {}, fused[0]);
  const Tensor want_db = Eval(s, {}, db), got_db = Eval(s, {}, fused[1]);
  ASSERT_EQ(got_dw.shape(), TensorShape({9, 5}));
  ASSERT_EQ(got_db.shape(), TensorShape({5}));
  for (int64_t i = 0; i < 45; ++i) EXPECT_NEAR(got_dw.data<float>()[i], want_dw.data<float>()[i], 1e-5);
  for (int64_t i = 0; i < 5; ++i) EXPECT_NEAR(got_db.data<float>()[i], want_db.data<float>()[i], 1e-5);
}

TEST(MatMulBiasAddGradTest, EmptyContractionGivesZeros) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_FLOAT), b = Placeholder(s, DT_FLOAT);
  std::vector<Output> out = ops::MatMulBiasAddGrad(s, a, b, {.transpose_a = true});
  const testing_util::Feeds feeds = {{a, Tensor(DT_FLOAT, TensorShape({0, 2}))},
                       {b, Tensor(DT_FLOAT, TensorShape({0, 3}))}};
  ExpectTensor<float>(Eval(s, feeds, out[0]), TensorShape({2, 3}), {0, 0, 0, 0, 0, 0});
  ExpectTensor<float>(Eval(s, feeds, out[1]), TensorShape({3}), {0, 0, 0});
}

TEST(MatMulBiasAddGradTest, InnerDimensionsMustAgree) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_FLOAT), b = Placeholder(s, DT_FLOAT);
  std::vector<Output> out = ops::MatMulBiasAddGrad(s, a, b, {.transpose_a = true});
  absl::StatusOr<Tensor> r = TryEval(
      s, {{a, H()}, {b, Make<float>({1, 2, 3, 4}, TensorShape({2, 2}))}}, out[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  // Known statically: refused when built.
  ops::MatMulBiasAddGrad(s, ops::Const(s, H()), ops::Const(s, H()));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("_MatMulBiasAddGrad: inner dimensions differ"));
}

}  // namespace
}  // namespace sluice
