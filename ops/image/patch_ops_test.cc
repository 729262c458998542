// ExtractImagePatches on hand-worked images (VALID with strides, SAME with
// its zero taps, two channels), its gradient by central differences over
// strides, rates and both paddings, and its errors. The conformance suite
// compares it and its gradient with TensorFlow's.
#include "ops/image/patch_ops.h"

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

Tensor Iota(const TensorShape& shape) {
  std::vector<float> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  return Tensor::FromVector<float>(v, shape);
}

TEST(PatchOpsTest, ValidAndSameWindows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Iota(TensorShape({1, 3, 4, 1})));
  ExpectTensor<float>(
      Eval(s, {}, ops::ExtractImagePatches(s, x, {1, 2, 2, 1}, {1, 1, 2, 1}, {1, 1, 1, 1}, "VALID")),
      TensorShape({1, 2, 2, 4}), {1, 2, 5, 6, 3, 4, 7, 8, 5, 6, 9, 10, 7, 8, 11, 12});
  Output small = ops::Const(s, Iota(TensorShape({1, 2, 2, 1})));
  ExpectTensor<float>(
      Eval(s, {}, ops::ExtractImagePatches(s, small, {1, 2, 2, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME")),
      TensorShape({1, 2, 2, 4}), {1, 2, 3, 4, 2, 0, 4, 0, 3, 4, 0, 0, 4, 0, 0, 0});
  // Two channels, rate 2: taps two pixels apart, channels kept together.
  Output two = ops::Const(s, Iota(TensorShape({1, 3, 3, 2})));
  ExpectTensor<float>(
      Eval(s, {}, ops::ExtractImagePatches(s, two, {1, 2, 2, 1}, {1, 1, 1, 1}, {1, 2, 2, 1}, "VALID")),
      TensorShape({1, 1, 1, 8}), {1, 2, 5, 6, 13, 14, 17, 18});
}

TEST(PatchOpsTest, GradientMatchesCentralDifferences) {
  struct Case {
    std::vector<int64_t> k, st, r;
    const char* padding;
  };
  for (const Case& c : std::vector<Case>{{{1, 2, 2, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID"},
                                         {{1, 3, 2, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, "SAME"},
                                         {{1, 2, 3, 1}, {1, 3, 2, 1}, {1, 2, 1, 1}, "VALID"}}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(s, DT_DOUBLE, TensorShape({2, 5, 6, 2}));
    std::vector<double> v(2 * 5 * 6 * 2);
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1 * static_cast<double>((i * 7) % 13) - 0.4;
    Output y = ops::ExtractImagePatches(s, x, c.k, c.st, c.r, c.padding);
    EXPECT_LT(GradError(s, {{x, Tensor::FromVector<double>(v, TensorShape({2, 5, 6, 2}))}}, y),
              1e-8)
        << c.padding;
  }
}

TEST(PatchOpsTest, BadAttrsAndInputs) {
  // Each in a scope of its own: a shape function's error stays in its scope.
  auto message = [](std::vector<int64_t> k, const char* padding, const Tensor& v) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(s, DT_FLOAT);
    Output y = ops::ExtractImagePatches(s, x, k, {1, 1, 1, 1}, {1, 1, 1, 1}, padding);
    return std::string(TryEval(s, {{x, v}}, y).status().message());
  };
  const Tensor img = Iota(TensorShape({1, 3, 3, 1}));
  EXPECT_THAT(message({2, 2, 2, 1}, "VALID", img),
              HasSubstr("ksizes must be 4 values [1, rows, cols, 1], got [2, 2, 2, 1]"));
  EXPECT_THAT(message({1, 0, 2, 1}, "VALID", img), HasSubstr("ksizes must be positive"));
  EXPECT_FALSE(message({1, 4, 4, 1}, "VALID", img).empty());  // window past the image
  EXPECT_THAT(message({1, 2, 2, 1}, "VALID", Iota(TensorShape({3, 3}))),
              HasSubstr("images must be 4-D"));
  EXPECT_FALSE(message({1, 2, 2, 1}, "FULL", img).empty());
}

}  // namespace
}  // namespace sluice
