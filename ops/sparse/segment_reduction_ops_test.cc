// The segment reductions against values worked by hand (as TensorFlow's
// documentation defines them: empty segments, dropped negative ids, ids of
// rank 2), their gradients by central differences (ties and zeros
// included), and their errors. The conformance suite checks them through a
// graph TensorFlow wrote.
#include "ops/sparse/segment_reduction_ops.h"

#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/gradients.h"
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

class SegmentReductionOpsTest : public ::testing::Test {
 protected:
  Output Ints(const std::vector<int32_t>& v) { return ops::Const(s_, Tensor::FromVector(v)); }
  // [[1, 2], [3, -4], [5, 6], [0, 8]]
  Output Data() {
    return ops::Const(s_, Tensor::FromVector<float>({1, 2, 3, -4, 5, 6, 0, 8}, TensorShape({4, 2})));
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(SegmentReductionOpsTest, SortedSegmentsWithAnEmptyOne) {
  // Rows 0, 1 into segment 0; segment 1 empty; rows 2, 3 into segment 2.
  Output ids = Ints({0, 0, 2, 2});
  ExpectTensor<float>(Eval(s_, {}, ops::SegmentMax(s_, Data(), ids)), TensorShape({3, 2}),
                      {3, 2, 0, 0, 5, 8});
  ExpectTensor<float>(Eval(s_, {}, ops::SegmentMin(s_, Data(), ids)), TensorShape({3, 2}),
                      {1, -4, 0, 0, 0, 6});
  ExpectTensor<float>(Eval(s_, {}, ops::SegmentMean(s_, Data(), ids)), TensorShape({3, 2}),
                      {2, -1, 0, 0, 2.5, 7});
  ExpectTensor<float>(Eval(s_, {}, ops::SegmentProd(s_, Data(), ids)), TensorShape({3, 2}),
                      {3, -8, 1, 1, 0, 48});
  // Integers: Mean divides as integers.
  Output ints = ops::Const(s_, Tensor::FromVector<int32_t>({7, 2, -3}));
  ExpectTensor<int32_t>(Eval(s_, {}, ops::SegmentMean(s_, ints, Ints({0, 0, 1}))),
                        TensorShape({2}), {4, -3});
}

TEST_F(SegmentReductionOpsTest, UnsortedSegmentsDropNegativeIds) {
  Output ids = Ints({2, -1, 0, 2});
  const float lowest = std::numeric_limits<float>::lowest();
  const float highest = std::numeric_limits<float>::max();
  ExpectTensor<float>(Eval(s_, {}, ops::UnsortedSegmentMax(s_, Data(), ids, ops::Const(s_, 4))),
                      TensorShape({4, 2}), {5, 6, lowest, lowest, 1, 8, lowest, lowest});
  ExpectTensor<float>(Eval(s_, {}, ops::UnsortedSegmentMin(s_, Data(), ids, ops::Const(s_, 3))),
                      TensorShape({3, 2}), {5, 6, highest, highest, 0, 2});
  ExpectTensor<float>(
      Eval(s_, {}, ops::UnsortedSegmentProd(s_, Data(), ids, ops::Const(s_, int64_t{3}))),
      TensorShape({3, 2}), {5, 6, 1, 1, 0, 16});
  // ids of rank 2 over data [2, 2, 2]: each element of ids picks a row of 2.
  Output data3 = ops::Const(s_, Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8},
                                                           TensorShape({2, 2, 2})));
  Output ids2 = ops::Const(s_, Tensor::FromVector<int32_t>({1, 0, 1, 1}, TensorShape({2, 2})));
  ExpectTensor<int64_t>(Eval(s_, {}, ops::UnsortedSegmentMax(s_, data3, ids2, ops::Const(s_, 2))),
                        TensorShape({2, 2}), {3, 4, 7, 8});
  ExpectTensor<int64_t>(
      Eval(s_, {}, ops::UnsortedSegmentProd(s_, data3, ids2, ops::Const(s_, 2))),
      TensorShape({2, 2}), {3, 4, 1 * 5 * 7, 2 * 6 * 8});
}

TEST_F(SegmentReductionOpsTest, GradientsByFiniteDifferences) {
  // Distinct values for Max/Min (finite differences cannot cross a tie);
  // Prod with one zero in a segment and two zeros in another.
  const std::vector<double> distinct = {1.5, -2, 3, 0.5, 2.25, -1, 4, -3.5, 0.75, 2.5, -0.25, 1.25};
  const std::vector<double> zeros = {1.5, 0, 3, 0.5, 0, -1, 0, -3.5, 0.75, 2.5, -0.25, 1.25};
  struct Case {
    const char* name;
    bool sorted;
    const std::vector<double>* values;
  } cases[] = {{"SegmentMax", true, &distinct},       {"SegmentMin", true, &distinct},
               {"SegmentMean", true, &distinct},      {"SegmentProd", true, &distinct},
               {"SegmentProd", true, &zeros},         {"UnsortedSegmentMax", false, &distinct},
               {"UnsortedSegmentMin", false, &distinct}, {"UnsortedSegmentProd", false, &distinct},
               {"UnsortedSegmentProd", false, &zeros}};
  for (const Case& c : cases) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(s, DT_DOUBLE, TensorShape({6, 2}));
    Output y;
    if (c.sorted) {
      y = s.Op(c.name).Input(x).Input(ops::Const(s, std::vector<int32_t>{0, 0, 0, 2, 2, 3}))
              .Finalize1();
    } else {
      y = s.Op(c.name)
              .Input(x)
              .Input(ops::Const(s, std::vector<int64_t>{2, 0, -1, 2, 0, 2}))
              .Input(ops::Const(s, 4))
              .Finalize1();
    }
    EXPECT_LT(GradError(s, {{x, Tensor::FromVector<double>(*c.values, TensorShape({6, 2}))}}, y),
              1e-6)
        << c.name << (c.values == &zeros ? " with zeros" : "");
  }
}

TEST_F(SegmentReductionOpsTest, TiesShareTheGradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT, TensorShape({3}));
  Output y = ops::SegmentMax(s, x, ops::Const(s, std::vector<int32_t>{0, 0, 0}));
  absl::StatusOr<std::vector<Output>> dx = AddGradients(s, {y}, {x});
  ASSERT_TRUE(dx.ok()) << dx.status();
  ExpectTensor<float>(Eval(s, {{x, Tensor::FromVector<float>({2, 5, 5})}}, (*dx)[0]),
                      TensorShape({3}), {0, 0.5f, 0.5f});
}

TEST_F(SegmentReductionOpsTest, BadSegmentIdsAreTensorFlowsErrors) {
  const struct {
    Output y;
    const char* needle;
  } cases[] = {
      {ops::SegmentMax(s_, Data(), Ints({1, 0, 2, 2})), "segment ids are not increasing"},
      {ops::SegmentMean(s_, Data(), Ints({-1, 0, 0, 0})), "Segment id -1 out of range"},
      {ops::SegmentProd(s_, Data(), Ints({0, 0})), "same size as dimension 0"},
      {ops::UnsortedSegmentMax(s_, Data(), Ints({0, 1, 5, 0}), ops::Const(s_, 3)),
       "segment_ids[2] = 5 is out of range [0, 3)"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<Tensor> r = TryEval(s_, {}, c.y);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.needle;
    EXPECT_THAT(r.status().message(), HasSubstr(c.needle));
  }
  // Caught when the graph is built: ids that do not prefix data, a negative
  // num_segments.
  Scope p = Scope::NewRootScope(BuiltinOps());
  ops::UnsortedSegmentMin(p, ops::Const(p, Tensor(DT_FLOAT, TensorShape({4, 2}))),
                          ops::Const(p, std::vector<int32_t>{0, 1, 2}), ops::Const(p, 3));
  EXPECT_THAT(p.status().message(), HasSubstr("must be a prefix of data shape"));
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::UnsortedSegmentProd(s, ops::Const(s, std::vector<float>{1}), ops::Const(s, std::vector<int32_t>{0}),
                           ops::Const(s, -2));
  EXPECT_THAT(s.status().message(), HasSubstr("num_segments must be non-negative"));
}

}  // namespace
}  // namespace sluice
