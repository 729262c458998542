// SparseSegment{Sum,Mean,SqrtN} and their gradient ops against values
// TensorFlow 2.21 computed for the same inputs, gradients also by finite
// differences, and TensorFlow's errors.
#include "ops/sparse/sparse_segment_ops.h"

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

class SparseSegmentOpsTest : public ::testing::Test {
 protected:
  Output Data() {
    return ops::Const(s_, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({4, 2})));
  }
  Output Ints(const std::vector<int32_t>& v) { return ops::Const(s_, v); }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(SparseSegmentOpsTest, ReductionsAreTensorFlows) {
  // Rows 0 and 2 into segment 0, row 1 twice into segment 2; segment 1 empty.
  const std::vector<int32_t> idx = {0, 2, 1, 1}, seg = {0, 0, 2, 2};
  ExpectTensor<float>(Eval(s_, {}, ops::SparseSegmentSum(s_, Data(), Ints(idx), Ints(seg))),
                      TensorShape({3, 2}), {6, 8, 0, 0, 6, 8});
  ExpectTensor<float>(Eval(s_, {}, ops::SparseSegmentMean(s_, Data(), Ints(idx), Ints(seg))),
                      TensorShape({3, 2}), {3, 4, 0, 0, 3, 4});
  ExpectTensor<float>(Eval(s_, {}, ops::SparseSegmentSqrtN(s_, Data(), Ints(idx), Ints(seg))),
                      TensorShape({3, 2}),
                      {4.2426405f, 5.656854f, 0, 0, 4.2426405f, 5.656854f}, 1e-5);
  ExpectTensor<float>(
      Eval(s_, {}, ops::SparseSegmentReductionWithNumSegments(s_, "Mean", Data(), Ints({0, 2, 1}),
                                                              Ints({0, 0, 2}), ops::Const(s_, 4))),
      TensorShape({4, 2}), {3, 4, 0, 0, 3, 4, 0, 0});
  // int64 indices and segment ids, int32 data (Sum only).
  ExpectTensor<int32_t>(
      Eval(s_, {}, ops::SparseSegmentSum(
                       s_, ops::Const(s_, Tensor::FromVector<int32_t>({1, 2, 3}, TensorShape({3, 1}))),
                       ops::Const(s_, std::vector<int64_t>{2, 2, 0}),
                       ops::Const(s_, std::vector<int64_t>{0, 1, 1}))),
      TensorShape({2, 1}), {3, 4});
  // Nothing selected: no rows.
  ExpectTensor<float>(
      Eval(s_, {}, ops::SparseSegmentSum(s_, Data(), ops::Const(s_, std::vector<int32_t>{}),
                                         ops::Const(s_, std::vector<int32_t>{}))),
      TensorShape({0, 2}), {});
}

TEST_F(SparseSegmentOpsTest, GradOpsAreTensorFlows) {
  Output g = ops::Const(s_, Tensor::FromVector<float>({1, 1, 2, 2, 3, 3}, TensorShape({3, 2})));
  ExpectTensor<float>(
      Eval(s_, {}, ops::SparseSegmentReductionGrad(s_, "Mean", g, Ints({0, 2, 1, 1}),
                                                   Ints({0, 0, 2, 2}), ops::Const(s_, 4))),
      TensorShape({4, 2}), {0.5, 0.5, 3, 3, 0.5, 0.5, 0, 0});
  std::vector<Output> v2 = s_.Op("SparseSegmentSumGradV2")
                               .Input(g)
                               .Input(Ints({3, 2, 3, 1}))
                               .Input(Ints({0, 0, 2, 2}))
                               .Input(ops::Const(s_, 4))
                               .FinalizeAll();
  ASSERT_EQ(v2.size(), 2u);
  ExpectTensor<float>(Eval(s_, {}, v2[0]), TensorShape({3, 2}), {3, 3, 1, 1, 4, 4});
  ExpectTensor<int32_t>(Eval(s_, {}, v2[1]), TensorShape({3}), {1, 2, 3});
}

TEST_F(SparseSegmentOpsTest, GradientsByFiniteDifferences) {
  for (const std::string kind : {"Sum", "Mean", "SqrtN"}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(s, DT_DOUBLE, TensorShape({4, 3}));
    Output y = ops::SparseSegmentReduction(s, kind, x, ops::Const(s, std::vector<int32_t>{0, 2, 1, 1, 3}),
                                           ops::Const(s, std::vector<int32_t>{0, 0, 2, 2, 2}));
    std::vector<double> v(12);
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.3 * static_cast<double>(i) - 1.1;
    EXPECT_LT(GradError(s, {{x, Tensor::FromVector<double>(v, TensorShape({4, 3}))}}, y), 1e-6)
        << kind;
    Scope s2 = Scope::NewRootScope(BuiltinOps());
    Output x2 = Placeholder(s2, DT_DOUBLE, TensorShape({4, 3}));
    Output y2 = ops::SparseSegmentReductionWithNumSegments(
        s2, kind, x2, ops::Const(s2, std::vector<int32_t>{3, 3, 0}),
        ops::Const(s2, std::vector<int32_t>{1, 1, 4}), ops::Const(s2, 6));
    EXPECT_LT(GradError(s2, {{x2, Tensor::FromVector<double>(v, TensorShape({4, 3}))}}, y2), 1e-6)
        << kind << "WithNumSegments";
  }
}

TEST_F(SparseSegmentOpsTest, SegmentSumIsTensorFlows) {
  Output data = ops::Const(s_, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})));
  ExpectTensor<float>(Eval(s_, {}, ops::SegmentSum(s_, data, Ints({0, 0, 2}))), TensorShape({3, 2}),
                      {4, 6, 0, 0, 5, 6});
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE, TensorShape({4, 2}));
  Output y = ops::SegmentSum(s, x, ops::Const(s, std::vector<int64_t>{0, 1, 1, 3}));
  EXPECT_LT(GradError(s, {{x, Tensor::FromVector<double>({1, -2, 3, 0.5, 2, 2, -1, 4},
                                                         TensorShape({4, 2}))}},
                      y),
            1e-6);
  const struct {
    std::vector<int32_t> seg;
    const char* needle;
  } cases[] = {
      {{1, 0, 2}, "segment ids are not increasing"},
      {{-1, 0, 2}, "Segment id -1 out of range [0, 3), possibly because 'segment_ids' input is not sorted."},
      {{0, 0}, "segment_ids should be the same size as dimension 0 of input."},
  };
  for (const auto& c : cases) {
    Scope e = Scope::NewRootScope(BuiltinOps());
    absl::StatusOr<Tensor> r = TryEval(
        e, {}, ops::SegmentSum(e, ops::Const(e, Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}))),
                               ops::Const(e, c.seg)));
    ASSERT_FALSE(r.ok()) << c.needle;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.needle));
  }
}

TEST_F(SparseSegmentOpsTest, BadInputsGiveTensorFlowsErrors) {
  const struct {
    std::vector<int32_t> idx, seg;
    int num_segments;  // -1: without
    const char* needle;
  } cases[] = {
      {{0, 2}, {1, 0}, -1, "segment ids are not increasing"},
      {{0, 9}, {0, 1}, -1, "Bad: indices[1] == 9 out of range [0, 4)"},
      {{0, 1}, {0, -1}, -1, "segment ids must be >= 0"},
      {{0, 1, 2}, {0, 1}, -1, "segment_ids and indices should have same size."},
      {{0, 1}, {0, 5}, 3, "segment ids must be < num_segments"},
  };
  for (const auto& c : cases) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output data = ops::Const(s, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({4, 2})));
    Output y = c.num_segments < 0
                   ? ops::SparseSegmentSum(s, data, ops::Const(s, c.idx), ops::Const(s, c.seg))
                   : ops::SparseSegmentReductionWithNumSegments(
                         s, "Sum", data, ops::Const(s, c.idx), ops::Const(s, c.seg),
                         ops::Const(s, c.num_segments));
    absl::StatusOr<Tensor> r = TryEval(s, {}, y);
    ASSERT_FALSE(r.ok()) << c.needle;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.needle));
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output g = ops::Const(s, Tensor::FromVector<float>({1, 1, 2, 2}, TensorShape({2, 2})));
  absl::StatusOr<Tensor> r = TryEval(
      s, {}, ops::SparseSegmentReductionGrad(s, "Sum", g, ops::Const(s, std::vector<int32_t>{0, 9}),
                                             ops::Const(s, std::vector<int32_t>{0, 0}),
                                             ops::Const(s, 4)));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Index 9 out of range [0, 4)."));
}

}  // namespace
}  // namespace sluice
