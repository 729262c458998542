// The sparse tensor ops against values TensorFlow 2.21 computed for the same
// inputs, their gradients by finite differences, and TensorFlow's errors.
#include "ops/sparse/sparse_tensor_ops.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::GradError;
using testing_util::Placeholder;
using testing_util::TryEval;

Tensor I64(const std::vector<int64_t>& v, TensorShape shape) {
  return Tensor::FromVector<int64_t>(v, shape);
}

class SparseTensorOpsTest : public ::testing::Test {
 protected:
  Output C(const Tensor& t) { return ops::Const(s_, t); }
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(SparseTensorOpsTest, SparseReshape) {
  ops::SparseReshapeOutputs r = ops::SparseReshape(
      s_, C(I64({0, 0, 1, 2}, TensorShape({2, 2}))), C(I64({2, 3}, TensorShape({2}))),
      C(I64({3, -1}, TensorShape({2}))));
  ExpectTensor<int64_t>(Eval(s_, {}, r.output_indices), TensorShape({2, 2}), {0, 0, 2, 1});
  ExpectTensor<int64_t>(Eval(s_, {}, r.output_shape), TensorShape({2}), {3, 2});
  const struct {
    std::vector<int64_t> shape;
    const char* needle;
  } bad[] = {
      {{4, -1}, "Input to reshape is a SparseTensor with 6 dense values, but the requested shape "
                "requires a multiple of 4. input_shape=[2,3] output_shape=[4,1]"},
      {{-1, -1}, "only one output dimension may be -1, not both 0 and 1"},
      {{4, 2}, "Input to reshape is a tensor with 6 dense values, but the requested shape has 8"},
      {{int64_t{1} << 40, int64_t{1} << 40}, "more than 2^63 elements"},
  };
  for (const auto& b : bad) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    absl::StatusOr<Tensor> t = TryEval(
        s, {},
        ops::SparseReshape(s, ops::Const(s, I64({0, 0, 1, 2}, TensorShape({2, 2}))),
                           ops::Const(s, I64({2, 3}, TensorShape({2}))),
                           ops::Const(s, I64(b.shape, TensorShape({2}))))
            .output_indices);
    ASSERT_FALSE(t.ok()) << b.needle;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(b.needle));
  }
}

TEST_F(SparseTensorOpsTest, SparseFillEmptyRowsAndItsGradient) {
  ops::SparseFillEmptyRowsOutputs f = ops::SparseFillEmptyRows(
      s_, C(I64({0, 1, 2, 0, 2, 2}, TensorShape({3, 2}))), ops::Const(s_, {1.0f, 2.0f, 3.0f}),
      C(I64({4, 3}, TensorShape({2}))), ops::Const(s_, 9.0f));
  ExpectTensor<int64_t>(Eval(s_, {}, f.output_indices), TensorShape({5, 2}),
                        {0, 1, 1, 0, 2, 0, 2, 2, 3, 0});
  ExpectTensor<float>(Eval(s_, {}, f.output_values), TensorShape({5}), {1, 9, 2, 3, 9});
  ExpectTensor<bool>(Eval(s_, {}, f.empty_row_indicator), TensorShape({4}),
                     {false, true, false, true});
  ExpectTensor<int64_t>(Eval(s_, {}, f.reverse_index_map), TensorShape({3}), {0, 2, 3});
  std::vector<Output> g = s_.Op("SparseFillEmptyRowsGrad")
                              .Input(C(I64({0, 2, 3}, TensorShape({3}))))
                              .Input(ops::Const(s_, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f}))
                              .FinalizeAll();
  ExpectTensor<float>(Eval(s_, {}, g[0]), TensorShape({3}), {1, 3, 4});
  ExpectTensor<float>(Eval(s_, {}, g[1]), TensorShape({}), {7});

  Scope s = Scope::NewRootScope(BuiltinOps());
  Output values = Placeholder(s, DT_DOUBLE, TensorShape({3}));
  Output fill = Placeholder(s, DT_DOUBLE, TensorShape({}));
  Output y = ops::SparseFillEmptyRows(s, ops::Const(s, I64({0, 1, 2, 0, 2, 2}, TensorShape({3, 2}))),
                                      values, ops::Const(s, I64({4, 3}, TensorShape({2}))), fill)
                 .output_values;
  EXPECT_LT(GradError(s,
                      {{values, Tensor::FromVector<double>({0.5, -1.5, 2.0})},
                       {fill, Tensor::Scalar<double>(0.25)}},
                      y),
            1e-6);

  Scope e = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<Tensor> bad = TryEval(
      e, {},
      ops::SparseFillEmptyRows(e, ops::Const(e, I64({5, 0}, TensorShape({1, 2}))),
                               ops::Const(e, {1.0f}), ops::Const(e, I64({4, 3}, TensorShape({2}))),
                               ops::Const(e, 0.0f))
          .output_values);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("indices(0, 0) is invalid: 5 >= 4"));
}

TEST_F(SparseTensorOpsTest, SparseToDenseAndItsGradient) {
  ExpectTensor<float>(
      Eval(s_, {}, ops::SparseToDense(s_, ops::Const(s_, Tensor::FromVector<int32_t>({0, 1, 2, 0}, TensorShape({2, 2}))),
                                      ops::Const(s_, {3, 3}), ops::Const(s_, {5.0f, 6.0f}),
                                      ops::Const(s_, -1.0f))),
      TensorShape({3, 3}), {-1, 5, -1, -1, -1, -1, 6, -1, -1});
  // 1-D indices, one value for all.
  ExpectTensor<float>(Eval(s_, {}, ops::SparseToDense(s_, ops::Const(s_, {1, 2}), ops::Const(s_, {4}),
                                                      ops::Const(s_, 7.0f), ops::Const(s_, 0.0f))),
                      TensorShape({4}), {0, 7, 7, 0});
  const struct {
    std::vector<int32_t> idx;
    bool validate;
    const char* needle;
  } bad[] = {
      {{2, 0, 0, 1}, true, "indices[1] = [0,1] is out of order. Many sparse ops require sorted indices."},
      {{0, 1, 0, 1}, true, "indices[1] = [0,1] is repeated"},
      {{0, 5, 1, 1}, false, "indices[0] = [0,5] is out of bounds: need 0 <= index < [3,3]"},
  };
  for (const auto& b : bad) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    absl::StatusOr<Tensor> t = TryEval(
        s, {},
        ops::SparseToDense(s, ops::Const(s, Tensor::FromVector<int32_t>(b.idx, TensorShape({2, 2}))),
                           ops::Const(s, {3, 3}), ops::Const(s, {5.0f, 6.0f}), ops::Const(s, -1.0f),
                           b.validate));
    ASSERT_FALSE(t.ok()) << b.needle;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(b.needle));
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output values = Placeholder(s, DT_DOUBLE, TensorShape({2}));
  Output fill = Placeholder(s, DT_DOUBLE, TensorShape({}));
  Output y = ops::SparseToDense(s, ops::Const(s, Tensor::FromVector<int32_t>({0, 1, 2, 0}, TensorShape({2, 2}))),
                                ops::Const(s, {3, 3}), values, fill);
  EXPECT_LT(GradError(s, {{values, Tensor::FromVector<double>({0.5, -1.5})},
                          {fill, Tensor::Scalar<double>(0.25)}},
                      y),
            1e-6);
}

TEST_F(SparseTensorOpsTest, SparseTensorDenseMatMulAndItsGradients) {
  Output idx = C(I64({0, 1, 1, 0}, TensorShape({2, 2})));
  Output shape = C(I64({2, 2}, TensorShape({2})));
  Output b = ops::Const(s_, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})));
  ExpectTensor<float>(
      Eval(s_, {}, ops::SparseTensorDenseMatMul(s_, idx, ops::Const(s_, {2.0f, 3.0f}), shape, b)),
      TensorShape({2, 2}), {6, 8, 3, 6});
  ExpectTensor<float>(
      Eval(s_, {}, ops::SparseTensorDenseMatMul(s_, idx, ops::Const(s_, {2.0f, 3.0f}), shape, b,
                                                {.adjoint_a = true, .adjoint_b = true})),
      TensorShape({2, 2}), {6, 12, 2, 6});
  absl::StatusOr<Tensor> bad = TryEval(
      s_, {}, ops::SparseTensorDenseMatMul(s_, C(I64({0, 5}, TensorShape({1, 2}))),
                                           ops::Const(s_, {2.0f}), shape, b));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("k (5) from index[0,1] out of bounds (>=2)"));

  // A is 2x3; B is 3x3 (read transposed with adjoint_b).
  for (bool adj_b : {false, true}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output values = Placeholder(s, DT_DOUBLE, TensorShape({3}));
    Output dense = Placeholder(s, DT_DOUBLE, TensorShape({3, 3}));
    Output y = ops::SparseTensorDenseMatMul(
        s, ops::Const(s, I64({0, 1, 1, 0, 1, 2}, TensorShape({3, 2}))), values,
        ops::Const(s, I64({2, 3}, TensorShape({2}))), dense, {.adjoint_b = adj_b});
    std::vector<double> bv(9);
    for (int i = 0; i < 9; ++i) bv[i] = 0.5 * i - 2.0;
    EXPECT_LT(GradError(s, {{values, Tensor::FromVector<double>({1.5, -0.5, 2.0})},
                            {dense, Tensor::FromVector<double>(bv, TensorShape({3, 3}))}},
                        y),
              1e-6)
        << "adjoint_b " << adj_b;
  }
  // adjoint_a with entries inside a 3x2 matrix.
  for (bool adj_b : {false, true}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output values = Placeholder(s, DT_DOUBLE, TensorShape({3}));
    Output dense = Placeholder(s, DT_DOUBLE, TensorShape({3, 3}));
    Output y = ops::SparseTensorDenseMatMul(
        s, ops::Const(s, I64({0, 1, 1, 0, 2, 1}, TensorShape({3, 2}))), values,
        ops::Const(s, I64({3, 2}, TensorShape({2}))), dense, {.adjoint_a = true, .adjoint_b = adj_b});
    std::vector<double> bv(9);
    for (int i = 0; i < 9; ++i) bv[i] = 0.25 * i - 1.0;
    // A^T is 2x3; B (or B^T) is 3x3.
    EXPECT_LT(GradError(s, {{values, Tensor::FromVector<double>({1.5, -0.5, 2.0})},
                            {dense, Tensor::FromVector<double>(bv, TensorShape({3, 3}))}},
                        y),
              1e-6)
        << "adjoint_a, adjoint_b " << adj_b;
  }
}

TEST_F(SparseTensorOpsTest, SparseReorderAndItsGradient) {
  ops::SparseReorderOutputs r = ops::SparseReorder(
      s_, C(I64({1, 0, 0, 2, 0, 1}, TensorShape({3, 2}))), ops::Const(s_, {1.0f, 2.0f, 3.0f}),
      C(I64({2, 3}, TensorShape({2}))));
  ExpectTensor<int64_t>(Eval(s_, {}, r.output_indices), TensorShape({3, 2}), {0, 1, 0, 2, 1, 0});
  ExpectTensor<float>(Eval(s_, {}, r.output_values), TensorShape({3}), {3, 2, 1});
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output values = Placeholder(s, DT_DOUBLE, TensorShape({3}));
  Output y = ops::SparseReorder(s, ops::Const(s, I64({1, 0, 0, 2, 0, 1}, TensorShape({3, 2}))), values,
                                ops::Const(s, I64({2, 3}, TensorShape({2}))))
                 .output_values;
  EXPECT_LT(GradError(s, {{values, Tensor::FromVector<double>({0.5, -1.5, 2.0})}}, y), 1e-6);
}

TEST_F(SparseTensorOpsTest, SparseAddConcatSliceAndDenseAdd) {
  Output a_idx = C(I64({0, 1, 1, 0}, TensorShape({2, 2})));
  Output b_idx = C(I64({0, 1, 1, 1}, TensorShape({2, 2})));
  Output shape = C(I64({2, 2}, TensorShape({2})));
  ops::SparseTensorOutputs sum = ops::SparseAdd(s_, a_idx, ops::Const(s_, {1.0f, 2.0f}), shape, b_idx,
                                                ops::Const(s_, {3.0f, -2.0f}), shape, ops::Const(s_, 0.0f));
  ExpectTensor<int64_t>(Eval(s_, {}, sum.indices), TensorShape({3, 2}), {0, 1, 1, 0, 1, 1});
  ExpectTensor<float>(Eval(s_, {}, sum.values), TensorShape({3}), {4, 2, -2});
  // A pair that cancels below thresh goes; singletons stay whatever their size.
  ops::SparseTensorOutputs small = ops::SparseAdd(
      s_, a_idx, ops::Const(s_, {0.1f, 2.0f}), shape, C(I64({0, 1, 1, 1}, TensorShape({2, 2}))),
      ops::Const(s_, {-0.1f, -0.2f}), shape, ops::Const(s_, 0.5f));
  ExpectTensor<int64_t>(Eval(s_, {}, small.indices), TensorShape({2, 2}), {1, 0, 1, 1});
  std::vector<Output> g = s_.Op("SparseAddGrad")
                              .Input(ops::Const(s_, {1.0f, 2.0f, 3.0f}))
                              .Input(a_idx)
                              .Input(b_idx)
                              .Input(C(I64({0, 1, 1, 0, 1, 1}, TensorShape({3, 2}))))
                              .FinalizeAll();
  ExpectTensor<float>(Eval(s_, {}, g[0]), TensorShape({2}), {1, 2});
  ExpectTensor<float>(Eval(s_, {}, g[1]), TensorShape({2}), {1, 3});

  ops::SparseTensorOutputs cat = ops::SparseConcat(
      s_, {C(I64({1, 0, 0, 2}, TensorShape({2, 2}))), C(I64({0, 0}, TensorShape({1, 2})))},
      {ops::Const(s_, {1.0f, 2.0f}), ops::Const(s_, {3.0f})},
      {C(I64({2, 3}, TensorShape({2}))), C(I64({2, 2}, TensorShape({2})))}, 1);
  ExpectTensor<int64_t>(Eval(s_, {}, cat.indices), TensorShape({3, 2}), {0, 2, 0, 3, 1, 0});
  ExpectTensor<float>(Eval(s_, {}, cat.values), TensorShape({3}), {2, 3, 1});
  ExpectTensor<int64_t>(Eval(s_, {}, cat.shape), TensorShape({2}), {2, 5});
  Scope bad = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<Tensor> mismatch = TryEval(
      bad, {},
      ops::SparseConcat(bad, {ops::Const(bad, I64({0, 0}, TensorShape({1, 2}))), ops::Const(bad, I64({0, 0}, TensorShape({1, 2})))},
                        {ops::Const(bad, {1.0f}), ops::Const(bad, {3.0f})},
                        {ops::Const(bad, I64({2, 3}, TensorShape({2}))), ops::Const(bad, I64({3, 2}, TensorShape({2})))}, 1)
          .values);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(std::string(mismatch.status().message()),
              HasSubstr("Input shapes must match: expected 2 for dimension 0 but got 3 at position 1"));

  ops::SparseTensorOutputs slice = ops::SparseSlice(
      s_, C(I64({0, 1, 1, 2, 2, 0}, TensorShape({3, 2}))), ops::Const(s_, {1.0f, 2.0f, 3.0f}),
      C(I64({3, 3}, TensorShape({2}))), C(I64({1, 1}, TensorShape({2}))), C(I64({5, 5}, TensorShape({2}))));
  ExpectTensor<int64_t>(Eval(s_, {}, slice.indices), TensorShape({1, 2}), {0, 1});
  ExpectTensor<float>(Eval(s_, {}, slice.values), TensorShape({1}), {2});
  ExpectTensor<int64_t>(Eval(s_, {}, slice.shape), TensorShape({2}), {2, 2});
  Output slice_grad = s_.Op("SparseSliceGrad")
                          .Input(ops::Const(s_, {5.0f}))
                          .Input(C(I64({0, 1, 1, 2, 2, 0}, TensorShape({3, 2}))))
                          .Input(C(I64({1, 1}, TensorShape({2}))))
                          .Input(C(I64({0, 1}, TensorShape({1, 2}))))
                          .Finalize1();
  ExpectTensor<float>(Eval(s_, {}, slice_grad), TensorShape({3}), {0, 5, 0});

  ExpectTensor<float>(
      Eval(s_, {}, ops::SparseTensorDenseAdd(s_, C(I64({0, 1}, TensorShape({1, 2}))), ops::Const(s_, {5.0f}),
                                             C(I64({2, 2}, TensorShape({2}))),
                                             ops::Const(s_, Tensor::FromVector<float>({1, 1, 1, 1}, TensorShape({2, 2}))))),
      TensorShape({2, 2}), {1, 6, 1, 1});
}

TEST_F(SparseTensorOpsTest, GradientsOfAddSliceAndDenseAdd) {
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output a = Placeholder(s, DT_DOUBLE, TensorShape({2}));
    Output b = Placeholder(s, DT_DOUBLE, TensorShape({2}));
    Output shape = ops::Const(s, I64({2, 2}, TensorShape({2})));
    Output y = ops::SparseAdd(s, ops::Const(s, I64({0, 1, 1, 0}, TensorShape({2, 2}))), a, shape,
                              ops::Const(s, I64({0, 1, 1, 1}, TensorShape({2, 2}))), b, shape,
                              ops::Const(s, 0.0))
                   .values;
    EXPECT_LT(GradError(s, {{a, Tensor::FromVector<double>({1.5, -0.5})},
                            {b, Tensor::FromVector<double>({0.25, 2.0})}},
                        y),
              1e-6);
  }
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output v = Placeholder(s, DT_DOUBLE, TensorShape({3}));
    Output y = ops::SparseSlice(s, ops::Const(s, I64({0, 1, 1, 2, 2, 0}, TensorShape({3, 2}))), v,
                                ops::Const(s, I64({3, 3}, TensorShape({2}))),
                                ops::Const(s, I64({1, 0}, TensorShape({2}))),
                                ops::Const(s, I64({2, 3}, TensorShape({2}))))
                   .values;
    EXPECT_LT(GradError(s, {{v, Tensor::FromVector<double>({1.5, -0.5, 2.0})}}, y), 1e-6);
  }
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output v = Placeholder(s, DT_DOUBLE, TensorShape({2}));
    Output d = Placeholder(s, DT_DOUBLE, TensorShape({2, 2}));
    Output y = ops::SparseTensorDenseAdd(s, ops::Const(s, I64({0, 1, 1, 1}, TensorShape({2, 2}))), v,
                                         ops::Const(s, I64({2, 2}, TensorShape({2}))), d);
    EXPECT_LT(GradError(s, {{v, Tensor::FromVector<double>({1.5, -0.5})},
                            {d, Tensor::FromVector<double>({1, 2, 3, 4}, TensorShape({2, 2}))}},
                        y),
              1e-6);
  }
}

}  // namespace
}  // namespace sluice
