// StringFormat and the tensor formatter against the text TensorFlow 2.21
// writes for the same tensors (tf.strings.format / tf.print, and
// tf.compat.v1.Print's layout), and the op's errors.
#include "ops/strings/string_format_ops.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/strings/internal/tensor_format.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::TryEval;

Tensor Range(int64_t n, const TensorShape& shape) {
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(i);
  return Tensor::FromVector<int32_t>(v, shape);
}

TEST(TensorFormatTest, MatchesTensorFlowsPrint) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FormatTensor(Tensor::Scalar<float>(1.5f), 3), "1.5");
  EXPECT_EQ(FormatTensor(Tensor::FromVector<float>({1.5f, 2.0f, 1e-8f, 123456789.0f, nan, inf},
                                                   TensorShape({6})),
                         -1),
            "[1.5 2 1e-08 123456792 nan inf]");
  EXPECT_EQ(FormatTensor(Tensor::Scalar<bool>(true), 3), "1");
  EXPECT_EQ(FormatTensor(Tensor::FromVector<std::string>({"a", "b\"c"}, TensorShape({2})), 3),
            "[\"a\" \"b\\\"c\"]");
  EXPECT_EQ(FormatTensor(Tensor::Scalar<std::string>("xy"), 3), "\"xy\"");
  EXPECT_EQ(FormatTensor(Range(24, TensorShape({2, 3, 4})), 3),
            "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  "
            "[20 21 22 23]]]");
  EXPECT_EQ(FormatTensor(Range(10, TensorShape({10})), 3), "[0 1 2 ... 7 8 9]");
  EXPECT_EQ(FormatTensor(Range(60, TensorShape({3, 20})), 3),
            "[[0 1 2 ... 17 18 19]\n [20 21 22 ... 37 38 39]\n [40 41 42 ... 57 58 59]]");
  EXPECT_EQ(FormatTensor(Tensor::FromVector<double>({1.0 / 3}, TensorShape({1})), 3),
            "[0.33333333333333331]");
  EXPECT_EQ(FormatTensor(Tensor::FromVector<Half>({Half::FromFloat(0.1f)}, TensorShape({1})), 3),
            "[0.0999755859]");
  EXPECT_EQ(FormatTensor(Tensor::FromVector<int8_t>({-7}, TensorShape({1})), 3), "[-7]");
  EXPECT_EQ(FormatTensor(Tensor::FromVector<uint8_t>({200}, TensorShape({1})), 3), "[200]");
  EXPECT_EQ(FormatTensor(Tensor(DT_FLOAT, TensorShape({0, 3})), 3), "[]");
  EXPECT_EQ(FormatTensor(Tensor(DT_FLOAT, TensorShape({2, 0})), 3), "[\n ...]");
  EXPECT_EQ(FormatTensor(Range(10, TensorShape({10})), 0), "[ ...]");
  EXPECT_EQ(FormatTensor(Range(10, TensorShape({10})), 1), "[0 ... 9]");
  EXPECT_EQ(FormatTensor(Range(100, TensorShape({10, 10})), 2),
            "[[0 1 ... 8 9]\n [10 11 ... 18 19]\n ...\n [80 81 ... 88 89]\n [90 91 ... 98 99]]");
}

TEST(TensorFormatTest, LegacyLayoutMatchesTensorFlowsV1Print) {
  EXPECT_EQ(FormatTensorLegacy(Range(24, TensorShape({2, 3, 4})), 5), "[[0 1 2 3][4...]]...");
  EXPECT_EQ(FormatTensorLegacy(Tensor::FromVector<float>({1.5f, 2.0f}, TensorShape({2})), 5),
            "1.5 2");
  EXPECT_EQ(FormatTensorLegacy(Tensor::FromVector<std::string>({"a\nb", "c"}, TensorShape({2})), 5),
            "a\\nb c");
  EXPECT_EQ(FormatTensorLegacy(Range(6, TensorShape({2, 3})), 3), "[0 1 2]...");
  EXPECT_EQ(FormatTensorLegacy(Range(6, TensorShape({3, 2})), -1), "[0 1][2 3][4 5]");
  EXPECT_EQ(FormatTensorLegacy(Tensor(DT_FLOAT, TensorShape({0})), 3), "");
}

TEST(StringFormatOpTest, FillsTheTemplate) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output line = ops::StringFormat(
      s, {ops::Const(s, 7), ops::Const(s, Range(10, TensorShape({10})))},
      {.template_ = "step {}: {} done", .placeholder = "{}", .summarize = 2});
  EXPECT_EQ(Eval(s, {}, line).scalar<std::string>(), "step 7: [0 1 ... 8 9] done");
  Output plain = ops::StringFormat(s, {ops::Const(s, 2.5f)});
  EXPECT_EQ(Eval(s, {}, plain).scalar<std::string>(), "2.5");
  Output none = ops::StringFormat(s, {}, {.template_ = "no values"});
  EXPECT_EQ(Eval(s, {}, none).scalar<std::string>(), "no values");
}

TEST(StringFormatOpTest, PlaceholdersMustMatchTheInputs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output two = ops::StringFormat(s, {ops::Const(s, 1)}, {.template_ = "%s and %s"});
  EXPECT_THAT(std::string(TryEval(s, {}, two).status().message()),
              HasSubstr("num placeholders in template and num inputs must match: 2 vs. 1"));
  Scope s2 = Scope::NewRootScope(BuiltinOps());
  Output empty = ops::StringFormat(s2, {ops::Const(s2, 1)}, {.placeholder = ""});
  EXPECT_THAT(std::string(TryEval(s2, {}, empty).status().message()),
              HasSubstr("placeholder must not be empty"));
}

}  // namespace
}  // namespace sluice
