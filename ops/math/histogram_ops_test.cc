// HistogramFixedWidth against tf.histogram_fixed_width's values (values
// outside the range in the end bins) and TensorFlow's errors.
#include "ops/math/histogram_ops.h"

#include <cmath>
#include <limits>
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
using testing_util::Placeholder;
using testing_util::TryEval;

TEST(HistogramOpsTest, CountsAsTensorFlow) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output h = ops::HistogramFixedWidth(
      s, ops::Const(s, Tensor::FromVector<float>({-1, 0, 1.5f, 2, 5, 4.99f})),
      ops::Const(s, Tensor::FromVector<float>({0, 5})), ops::Const(s, 5));
  EXPECT_EQ(h.shape(), TensorShape({5}));
  ExpectTensor<int32_t>(Eval(s, {}, h), TensorShape({5}), {2, 1, 1, 0, 2});
  ExpectTensor<int64_t>(
      Eval(s, {},
           ops::HistogramFixedWidth(s, ops::Const(s, Tensor::FromVector<int32_t>({1, 7, 3, 12})),
                                    ops::Const(s, Tensor::FromVector<int32_t>({0, 10})),
                                    ops::Const(s, 3), DT_INT64)),
      TensorShape({3}), {2, 0, 2});
}

TEST(HistogramOpsTest, BadRangesBinsAndNaNs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = Placeholder(s, DT_FLOAT);
  Output range = Placeholder(s, DT_FLOAT);
  Output nbins = Placeholder(s, DT_INT32);
  Output h = ops::HistogramFixedWidth(s, v, range, nbins);
  const struct {
    std::vector<float> values, range;
    int32_t nbins;
    const char* needle;
  } cases[] = {
      {{1}, {0, 5}, 0, "nbins should be a positive number, but got '0'"},
      {{1}, {5, 5}, 2, "value_range should satisfy value_range[0] < value_range[1]"},
      {{std::nanf("")}, {0, 5}, 2, "must not contain NaN"},
      {{1}, {0, 5, 1}, 2, "vector of 2 elements"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<Tensor> r = TryEval(s,
                                       {{v, Tensor::FromVector<float>(c.values)},
                                        {range, Tensor::FromVector<float>(c.range)},
                                        {nbins, Tensor::Scalar<int32_t>(c.nbins)}},
                                       h);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.needle;
    EXPECT_THAT(r.status().message(), HasSubstr(c.needle));
  }
}

}  // namespace
}  // namespace sluice
