// The color ops on colors worked by hand (primaries, greys, black), round
// trips, the adjustments, RGBToHSV's gradient by central differences, and
// the shape errors. The conformance suite compares them with TensorFlow's
// values on random images.
#include "ops/image/color_ops.h"

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

Output Pixels(const Scope& s, const std::vector<float>& v) {
  const int64_t n = static_cast<int64_t>(v.size()) / 3;
  return ops::Const(s, Tensor::FromVector<float>(v, TensorShape({1, n, 3})));
}

TEST(ColorOpsTest, RgbToHsvAndBack) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output rgb = Pixels(s, {1, 0, 0, 0, 1, 0, 0.5f, 0.5f, 0.5f, 0, 0, 0, 0.2f, 0.4f, 0.8f});
  Output hsv = ops::RGBToHSV(s, rgb);
  ExpectTensor<float>(Eval(s, {}, hsv), TensorShape({1, 5, 3}),
                      {0, 1, 1, 1.0f / 3, 1, 1, 0, 0, 0.5f, 0, 0, 0, 0.6111111f, 0.75f, 0.8f},
                      1e-6);
  ExpectTensor<float>(Eval(s, {}, ops::HSVToRGB(s, hsv)), TensorShape({1, 5, 3}),
                      {1, 0, 0, 0, 1, 0, 0.5f, 0.5f, 0.5f, 0, 0, 0, 0.2f, 0.4f, 0.8f}, 1e-6);
}

TEST(ColorOpsTest, HueAndSaturationAdjustments) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output rgb = Pixels(s, {1, 0, 0, 0.2f, 0.4f, 0.8f, 0.5f, 0.5f, 0.5f});
  // Half a turn: red to cyan; a grey stays grey.
  ExpectTensor<float>(Eval(s, {}, ops::AdjustHue(s, rgb, ops::Const(s, 0.5f))),
                      TensorShape({1, 3, 3}), {0, 1, 1, 0.8f, 0.6f, 0.2f, 0.5f, 0.5f, 0.5f}, 1e-6);
  // A full turn back to itself, negative deltas wrap.
  ExpectTensor<float>(Eval(s, {}, ops::AdjustHue(s, rgb, ops::Const(s, -1.0f))),
                      TensorShape({1, 3, 3}), {1, 0, 0, 0.2f, 0.4f, 0.8f, 0.5f, 0.5f, 0.5f}, 1e-6);
  ExpectTensor<float>(Eval(s, {}, ops::AdjustSaturation(s, rgb, ops::Const(s, 0.0f))),
                      TensorShape({1, 3, 3}), {1, 1, 1, 0.8f, 0.8f, 0.8f, 0.5f, 0.5f, 0.5f}, 1e-6);
  // Saturation 0.75 * 2 clamps to 1: min goes to 0, the middle scales.
  ExpectTensor<float>(Eval(s, {}, ops::AdjustSaturation(s, rgb, ops::Const(s, 2.0f))),
                      TensorShape({1, 3, 3}), {1, 0, 0, 0, 0.26666668f, 0.8f, 0.5f, 0.5f, 0.5f},
                      1e-6);
}

TEST(ColorOpsTest, RgbToHsvGradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE, TensorShape({4, 3}));
  // Each channel the largest and the smallest somewhere; no ties.
  EXPECT_LT(GradError(s,
                      {{x, Tensor::FromVector<double>(
                               {0.9, 0.3, 0.1, 0.2, 0.7, 0.4, 0.35, 0.15, 0.85, 0.5, 0.6, 0.25},
                               TensorShape({4, 3}))}},
                      ops::RGBToHSV(s, x)),
            1e-6);
}

TEST(ColorOpsTest, ShapeAndScalarErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT);
  const Tensor four = Tensor(DT_FLOAT, TensorShape({1, 2, 4}));
  const Tensor flat = Tensor(DT_FLOAT, TensorShape({2, 3}));
  EXPECT_THAT(TryEval(s, {{x, four}}, ops::RGBToHSV(s, x)).status().message(),
              HasSubstr("must have 3 channels"));
  EXPECT_THAT(TryEval(s, {{x, flat}}, ops::AdjustHue(s, x, ops::Const(s, 0.1f))).status().message(),
              HasSubstr("at least 3-D"));
  EXPECT_THAT(TryEval(s, {{x, Tensor(DT_FLOAT, TensorShape({1, 1, 3}))}},
                      ops::AdjustSaturation(s, x, ops::Const(s, Tensor::FromVector<float>({1, 2}))))
                  .status()
                  .message(),
              HasSubstr("scale must be scalar"));
}

}  // namespace
}  // namespace sluice
