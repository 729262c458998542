// EditDistance against TensorFlow 2.21's values (normalized and not,
// differing shapes, strings) and its errors.
#include "ops/sparse/edit_distance_ops.h"

#include <limits>
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
using testing_util::TryEval;

Output Indices(const Scope& s, const std::vector<int64_t>& v) {
  return ops::Const(s, Tensor::FromVector<int64_t>(v, TensorShape({static_cast<int64_t>(v.size() / 3), 3})));
}
Output Shape(const Scope& s, const std::vector<int64_t>& v) { return ops::Const(s, Tensor::FromVector<int64_t>(v)); }

// Hypothesis [0,0]: 1 2 3, [1,0]: 4, [1,1]: 5 6; truth [0,0]: 1 3,
// [1,0]: 4 4 4, [1,1]: 6.
ops::SparseInput Hypothesis(const Scope& s, Output values, std::vector<int64_t> shape = {2, 2, 3}) {
  return {Indices(s, {0, 0, 0, 0, 0, 1, 0, 0, 2, 1, 0, 0, 1, 1, 0, 1, 1, 1}), values, Shape(s, shape)};
}
ops::SparseInput Truth(const Scope& s, Output values, std::vector<int64_t> shape = {2, 2, 3}) {
  return {Indices(s, {0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 2, 1, 1, 0}), values, Shape(s, shape)};
}

TEST(EditDistanceOpsTest, DistancesAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output hv = ops::Const(s, Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6}));
  Output tv = ops::Const(s, Tensor::FromVector<int64_t>({1, 3, 4, 4, 4, 6}));
  ExpectTensor<float>(Eval(s, {}, ops::EditDistance(s, Hypothesis(s, hv), Truth(s, tv))), TensorShape({2, 2}),
                      {0.5f, 0, 0.6666667f, 1});
  ExpectTensor<float>(Eval(s, {}, ops::EditDistance(s, Hypothesis(s, hv), Truth(s, tv), false)),
                      TensorShape({2, 2}), {1, 0, 2, 1});
  // The output spans both shapes; cells with no sequence are 0.
  ExpectTensor<float>(
      Eval(s, {}, ops::EditDistance(s, Hypothesis(s, hv, {2, 3, 3}), Truth(s, tv, {3, 2, 4}))),
      TensorShape({3, 3}), {0.5f, 0, 0, 0.6666667f, 1, 0, 0, 0, 0});
  // Strings; a hypothesis with no truth is inf when normalized.
  Output hs = ops::Const(s, Tensor::FromVector<std::string>({"a", "bc", "d", "e", "f", "g"}));
  Output ts = ops::Const(s, Tensor::FromVector<std::string>({"a", "d", "e", "e", "x", "g"}));
  ExpectTensor<float>(Eval(s, {}, ops::EditDistance(s, Hypothesis(s, hs), Truth(s, ts))), TensorShape({2, 2}),
                      {0.5f, 0, 0.6666667f, 1});
  ops::SparseInput lone{Indices(s, {0, 1, 0}), ops::Const(s, Tensor::FromVector<int64_t>({7})), Shape(s, {2, 2, 3})};
  ExpectTensor<float>(Eval(s, {}, ops::EditDistance(s, Hypothesis(s, hv), lone)), TensorShape({2, 2}),
                      {std::numeric_limits<float>::infinity(), 1, std::numeric_limits<float>::infinity(),
                       std::numeric_limits<float>::infinity()});
}

TEST(EditDistanceOpsTest, Errors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output hv = ops::Const(s, Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6}));
  Output tv = ops::Const(s, Tensor::FromVector<int64_t>({1, 3, 4, 4, 4, 6}));
  absl::StatusOr<Tensor> r = TryEval(s, {}, ops::EditDistance(s, Hypothesis(s, hv, {2, 2}), Truth(s, tv)));
  EXPECT_THAT(r.status().message(), HasSubstr("Expected hypothesis_shape.NumElements == #cols(hypothesis_indices)"));
  ops::SparseInput reversed{Indices(s, {1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 2, 0, 0, 1, 0, 0, 0}), hv, Shape(s, {2, 2, 3})};
  r = TryEval(s, {}, ops::EditDistance(s, reversed, Truth(s, tv)));
  EXPECT_THAT(r.status().message(), HasSubstr("not in row-major order"));
  ops::SparseInput outside{Indices(s, {0, 0, 0, 0, 0, 1, 0, 0, 2, 1, 0, 0, 1, 1, 0, 1, 2, 1}), hv, Shape(s, {2, 2, 3})};
  r = TryEval(s, {}, ops::EditDistance(s, outside, Truth(s, tv)));
  EXPECT_THAT(r.status().message(), HasSubstr("outside the shape"));
}

}  // namespace
}  // namespace sluice
