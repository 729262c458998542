// ImageProjectiveTransformV2 and V3 against TensorFlow 2.21's outputs for
// the same images and transforms (a rotation with a shift, and a
// projective transform), every interpolation and fill mode, uint8, and the
// gradient w.r.t. images.
#include "ops/image/projective_transform_ops.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::TryEval;

// np.arange(80).reshape(2, 4, 5, 2).
Tensor Images() {
  std::vector<float> v(80);
  for (int i = 0; i < 80; ++i) v[i] = static_cast<float>(i);
  return Tensor::FromVector<float>(v, TensorShape({2, 4, 5, 2}));
}

// Rotation by 0.5 rad shifted by (1.5, -0.7); a projective transform.
Tensor Transforms() {
  const float c = 0.87758255f, s = 0.47942555f;
  return Tensor::FromVector<float>({c, -s, 1.5f, s, c, -0.7f, 0, 0, 1.2f, 0.1f, -0.4f, 0.05f, 0.9f, 0.3f, 0.02f, -0.03f},
                                   TensorShape({2, 8}));
}

void Check(const Scope& s, const std::string& interpolation, const std::string& mode,
           const std::vector<float>& want) {
  Output out = ops::ImageProjectiveTransformV3(s, ops::Const(s, Images()), ops::Const(s, Transforms()),
                                               ops::Const(s, Tensor::FromVector<int32_t>({3, 6})),
                                               ops::Const(s, -1.0f), interpolation, mode);
  SCOPED_TRACE(interpolation + " " + mode);
  ExpectTensor<float>(Eval(s, {}, out), TensorShape({2, 3, 6, 2}), want, 1e-4);
}

TEST(ProjectiveTransformOpsTest, EveryModeIsTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Check(s, "NEAREST", "CONSTANT", {-1.0f, -1.0f, 4.0f, 5.0f, 6.0f, 7.0f, 18.0f, 19.0f, -1.0f, -1.0f, -1.0f, -1.0f, 2.0f, 3.0f, 14.0f, 15.0f, 16.0f, 17.0f, 28.0f, 29.0f, -1.0f, -1.0f, -1.0f, -1.0f, 12.0f, 13.0f, 22.0f, 23.0f, 24.0f, 25.0f, 26.0f, 27.0f, 38.0f, 39.0f, -1.0f, -1.0f, 40.0f, 41.0f, 42.0f, 43.0f, 44.0f, 45.0f, 46.0f, 47.0f, 48.0f, 49.0f, -1.0f, -1.0f, 50.0f, 51.0f, 52.0f, 53.0f, 54.0f, 55.0f, 56.0f, 57.0f, 58.0f, 59.0f, -1.0f, -1.0f, 60.0f, 61.0f, 62.0f, 63.0f, 64.0f, 65.0f, 66.0f, 67.0f, -1.0f, -1.0f, -1.0f, -1.0f});
  Check(s, "NEAREST", "REFLECT", {4.0f, 5.0f, 4.0f, 5.0f, 6.0f, 7.0f, 18.0f, 19.0f, 18.0f, 19.0f, 26.0f, 27.0f, 2.0f, 3.0f, 14.0f, 15.0f, 16.0f, 17.0f, 28.0f, 29.0f, 28.0f, 29.0f, 38.0f, 39.0f, 12.0f, 13.0f, 22.0f, 23.0f, 24.0f, 25.0f, 26.0f, 27.0f, 38.0f, 39.0f, 38.0f, 39.0f, 40.0f, 41.0f, 42.0f, 43.0f, 44.0f, 45.0f, 46.0f, 47.0f, 48.0f, 49.0f, 58.0f, 59.0f, 50.0f, 51.0f, 52.0f, 53.0f, 54.0f, 55.0f, 56.0f, 57.0f, 58.0f, 59.0f, 58.0f, 59.0f, 60.0f, 61.0f, 62.0f, 63.0f, 64.0f, 65.0f, 66.0f, 67.0f, 68.0f, 69.0f, 66.0f, 67.0f});
  Check(s, "NEAREST", "WRAP", {34.0f, 35.0f, 34.0f, 35.0f, 6.0f, 7.0f, 10.0f, 11.0f, 10.0f, 11.0f, 22.0f, 23.0f, 2.0f, 3.0f, 14.0f, 15.0f, 16.0f, 17.0f, 28.0f, 29.0f, 20.0f, 21.0f, 30.0f, 31.0f, 12.0f, 13.0f, 22.0f, 23.0f, 24.0f, 25.0f, 26.0f, 27.0f, 30.0f, 31.0f, 0.0f, 1.0f, 48.0f, 49.0f, 42.0f, 43.0f, 44.0f, 45.0f, 46.0f, 47.0f, 40.0f, 41.0f, 50.0f, 51.0f, 58.0f, 59.0f, 52.0f, 53.0f, 54.0f, 55.0f, 56.0f, 57.0f, 50.0f, 51.0f, 50.0f, 51.0f, 68.0f, 69.0f, 62.0f, 63.0f, 64.0f, 65.0f, 66.0f, 67.0f, 60.0f, 61.0f, 62.0f, 63.0f});
  Check(s, "NEAREST", "NEAREST", {4.0f, 5.0f, 4.0f, 5.0f, 6.0f, 7.0f, 18.0f, 19.0f, 18.0f, 19.0f, 28.0f, 29.0f, 2.0f, 3.0f, 14.0f, 15.0f, 16.0f, 17.0f, 28.0f, 29.0f, 28.0f, 29.0f, 38.0f, 39.0f, 12.0f, 13.0f, 22.0f, 23.0f, 24.0f, 25.0f, 26.0f, 27.0f, 38.0f, 39.0f, 38.0f, 39.0f, 40.0f, 41.0f, 42.0f, 43.0f, 44.0f, 45.0f, 46.0f, 47.0f, 48.0f, 49.0f, 58.0f, 59.0f, 50.0f, 51.0f, 52.0f, 53.0f, 54.0f, 55.0f, 56.0f, 57.0f, 58.0f, 59.0f, 58.0f, 59.0f, 60.0f, 61.0f, 62.0f, 63.0f, 64.0f, 65.0f, 66.0f, 67.0f, 68.0f, 69.0f, 68.0f, 69.0f});
  Check(s, "BILINEAR", "CONSTANT", {0.20000004768371582f, 0.5000000596046448f, 3.485722780227661f, 4.265148639678955f, 9.098840713500977f, 10.098840713500977f, 13.207992553710938f, 14.075244903564453f, -1.0f, -1.0f, -1.0f, -1.0f, 3.816974639892578f, 4.816974639892578f, 10.366394996643066f, 11.366394996643066f, 16.915815353393555f, 17.915815353393555f, 23.465238571166992f, 24.46523666381836f, 13.050737380981445f, 13.519832611083984f, -1.0f, -1.0f, 11.63394832611084f, 12.63394832611084f, 18.183368682861328f, 19.183368682861328f, 24.732789993286133f, 25.732789993286133f, 31.282211303710938f, 32.28221130371094f, 35.734947204589844f, 36.68346405029297f, 0.5152795910835266f, 0.5541329383850098f, 25.400001525878906f, 26.0f, 45.000003814697266f, 46.0f, 47.69230651855469f, 48.69230651855469f, 50.28302001953125f, 51.283016204833984f, 48.65707778930664f, 49.5830078125f, -1.0f, -1.0f, 35.864601135253906f, 36.555320739746094f, 54.44444274902344f, 55.44444274902344f, 57.02970504760742f, 58.02970504760742f, 59.514564514160156f, 60.514564514160156f, 43.52378845214844f, 44.238075256347656f, -1.0f, -1.0f, 48.863739013671875f, 49.65097427368164f, 64.47916412353516f, 65.47916412353516f, 66.93877410888672f, 67.93877410888672f, 69.30000305175781f, 70.30000305175781f, 34.07305908203125f, 34.563255310058594f, -1.0f, -1.0f});
  Check(s, "BILINEAR", "REFLECT", {3.0f, 4.0f, 4.755165100097656f, 5.755165100097656f, 9.098840713500977f, 10.098840713500977f, 15.382766723632812f, 16.382766723632812f, 20.156360626220703f, 21.156360626220703f, 23.195449829101562f, 24.195449829101562f, 3.816974639892578f, 4.816974639892578f, 10.366394996643066f, 11.366394996643066f, 16.915815353393555f, 17.915815353393555f, 23.465238571166992f, 24.46523666381836f, 28.95284652709961f, 29.95284652709961f, 32.93012619018555f, 33.93012619018555f, 11.63394832611084f, 12.63394832611084f, 18.183368682861328f, 19.183368682861328f, 24.732789993286133f, 25.732789993286133f, 31.282211303710938f, 32.28221130371094f, 37.72867202758789f, 38.72867202758789f, 38.0f, 39.0f, 43.0f, 44.0f, 45.000003814697266f, 46.0f, 47.69230651855469f, 48.69230651855469f, 50.28302001953125f, 51.283016204833984f, 52.6296272277832f, 53.6296272277832f, 52.81818389892578f, 53.81818389892578f, 52.371131896972656f, 53.371131896972656f, 54.44444274902344f, 55.44444274902344f, 57.02970504760742f, 58.02970504760742f, 59.514564514160156f, 60.514564514160156f, 61.333335876464844f, 62.333335876464844f, 60.89720153808594f, 61.89720153808594f, 62.340423583984375f, 63.340423583984375f, 64.47916412353516f, 65.47916412353516f, 66.93877410888672f, 67.93877410888672f, 69.30000305175781f, 70.30000305175781f, 70.54901885986328f, 71.54901885986328f, 69.44230651855469f, 70.44230651855469f});
  Check(s, "BILINEAR", "WRAP", {33.0f, 34.0f, 34.755165100097656f, 35.755165100097656f, 9.098840713500977f, 10.098840713500977f, 7.3827667236328125f, 8.382766723632812f, 12.197681427001953f, 13.197681427001953f, 18.747100830078125f, 19.747100830078125f, 3.816974639892578f, 4.816974639892578f, 10.366394996643066f, 11.366394996643066f, 16.915815353393555f, 17.915815353393555f, 23.465238571166992f, 24.46523666381836f, 20.952848434448242f, 21.95284652709961f, 26.564075469970703f, 27.564075469970703f, 11.63394832611084f, 12.63394832611084f, 18.183368682861328f, 19.183368682861328f, 24.732789993286133f, 25.732789993286133f, 31.282211303710938f, 32.28221130371094f, 29.72867202758789f, 30.72867202758789f, 0.0f, 1.0f, 51.0f, 52.0f, 45.000003814697266f, 46.0f, 47.69230651855469f, 48.69230651855469f, 50.28302001953125f, 51.283016204833984f, 44.6296272277832f, 45.62963104248047f, 45.18181610107422f, 46.18181610107422f, 60.371131896972656f, 61.371131896972656f, 54.44444274902344f, 55.44444274902344f, 57.02970504760742f, 58.02970504760742f, 59.514564514160156f, 60.514564514160156f, 53.333335876464844f, 54.333335876464844f, 54.20561218261719f, 55.20561218261719f, 70.34042358398438f, 71.34042358398438f, 64.47916412353516f, 65.47916412353516f, 66.93877410888672f, 67.93877410888672f, 69.30000305175781f, 70.30000305175781f, 62.54901885986328f, 63.54901885986328f, 63.75f, 64.75f});
  Check(s, "BILINEAR", "NEAREST", {3.0f, 4.0f, 4.755165100097656f, 5.755165100097656f, 9.098840713500977f, 10.098840713500977f, 15.382766723632812f, 16.382766723632812f, 20.177021026611328f, 21.177021026611328f, 24.971277236938477f, 25.971275329589844f, 3.816974639892578f, 4.816974639892578f, 10.366394996643066f, 11.366394996643066f, 16.915815353393555f, 17.915815353393555f, 23.465238571166992f, 24.46523666381836f, 28.95284652709961f, 29.95284652709961f, 33.747100830078125f, 34.747100830078125f, 11.63394832611084f, 12.63394832611084f, 18.183368682861328f, 19.183368682861328f, 24.732789993286133f, 25.732789993286133f, 31.282211303710938f, 32.28221130371094f, 37.72867202758789f, 38.72867202758789f, 38.0f, 39.0f, 43.0f, 44.0f, 45.000003814697266f, 46.0f, 47.69230651855469f, 48.69230651855469f, 50.28302001953125f, 51.283016204833984f, 52.6296272277832f, 53.6296272277832f, 53.0f, 54.0f, 52.371131896972656f, 53.371131896972656f, 54.44444274902344f, 55.44444274902344f, 57.02970504760742f, 58.02970504760742f, 59.514564514160156f, 60.514564514160156f, 61.333335876464844f, 62.333335876464844f, 61.55139923095703f, 62.55140686035156f, 62.340423583984375f, 63.340423583984375f, 64.47916412353516f, 65.47916412353516f, 66.93877410888672f, 67.93877410888672f, 69.30000305175781f, 70.30000305175781f, 70.54901885986328f, 71.54901885986328f, 70.59616088867188f, 71.59615325927734f});
}

TEST(ProjectiveTransformOpsTest, Uint8V2IsTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output out = s.Op("ImageProjectiveTransformV2")
                   .Input(ops::Cast(s, ops::Const(s, Images()), DT_UINT8))
                   .Input(ops::Slice(s, ops::Const(s, Transforms()), {0, 0}, {1, 8}))
                   .Input(ops::Const(s, Tensor::FromVector<int32_t>({4, 5})))
                   .Attr("interpolation", std::string("BILINEAR"))
                   .Attr("fill_mode", std::string("REFLECT"))
                   .Finalize1();
  ExpectTensor<uint8_t>(Eval(s, {}, out), TensorShape({2, 4, 5, 2}), {3, 4, 4, 5, 9, 10, 15, 16, 20, 21, 3, 4, 10, 11, 16, 17, 23, 24, 28, 29, 11, 12, 18, 19, 24, 25, 31, 32, 37, 38, 19, 20, 26, 27, 32, 33, 35, 36, 37, 38, 43, 44, 44, 45, 49, 50, 55, 56, 60, 61, 43, 44, 50, 51, 56, 57, 63, 64, 68, 69, 51, 52, 58, 59, 64, 65, 71, 72, 77, 78, 59, 60, 66, 67, 72, 73, 75, 76, 77, 78});
}

TEST(ProjectiveTransformOpsTest, GradientIsTensorFlows) {
  // d/d images of sum(out^2), BILINEAR, WRAP, in double.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Cast(s, ops::Const(s, Images()), DT_DOUBLE);
  Output out = ops::ImageProjectiveTransformV3(s, x, ops::Const(s, Transforms()),
                                               ops::Const(s, Tensor::FromVector<int32_t>({4, 5})),
                                               ops::Const(s, 0.0f), "BILINEAR", "WRAP");
  absl::StatusOr<std::vector<Output>> g =
      AddGradients(s, {ops::Sum(s, ops::Square(s, out), ops::Const(s, Tensor::FromVector<int32_t>({0, 1, 2, 3})))}, {x});
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectTensor<double>(Eval(s, {}, (*g)[0]), TensorShape({2, 4, 5, 2}), {47.75822448730469, 49.75822448730469, 39.349552154541016, 41.349544525146484, 49.63618469238281, 51.63618469238281, 60.54076385498047, 62.54075622558594, 36.33326721191406, 38.3332633972168, 49.92536544799805, 51.92536544799805, 24.0, 26.0, 27.999998092651367, 30.0, 31.506389617919922, 33.50638961791992, 24.24823760986328, 26.24823760986328, 24.395362854003906, 26.395362854003906, 44.0, 46.0, 48.000003814697266, 50.0, 52.0, 53.999996185302734, 47.30841064453125, 49.30840301513672, 67.6059799194336, 69.6059799194336, 52.316314697265625, 54.316314697265625, 17.46778106689453, 19.46778106689453, 35.26028823852539, 37.26028823852539, 57.356658935546875, 59.35665512084961, 91.91177368164062, 93.91177368164062, 85.87383270263672, 87.87382507324219, 90.30760192871094, 92.30760192871094, 93.47457885742188, 95.47457885742188, 96.0, 98.0, 112.71656799316406, 114.71656799316406, 104.10474395751953, 106.10475158691406, 108.1152572631836, 110.1152572631836, 112.10914611816406, 114.10913848876953, 102.5616226196289, 104.56161499023438, 133.88784790039062, 135.88783264160156, 124.23988342285156, 126.23989868164062, 128.09852600097656, 130.0985107421875, 132.09207153320312, 134.09207153320312, 125.62203979492188, 127.62203979492188, 106.93061828613281, 108.93061828613281, 97.70753479003906, 99.70753479003906, 99.45173645019531, 101.45173645019531, 103.09373474121094, 105.09373474121094, 99.48050689697266, 101.48049926757812}, 1e-3);
}

TEST(ProjectiveTransformOpsTest, NonFiniteTransformsFill) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* mode : {"CONSTANT", "NEAREST"}) {
    Output out = ops::ImageProjectiveTransformV3(
        s, ops::Const(s, Images()),
        ops::Const(s, Tensor::FromVector<float>({nan, 0, 1e30f, 0, 1, 0, 0, 0}, TensorShape({1, 8}))),
        ops::Const(s, Tensor::FromVector<int32_t>({2, 2})), ops::Const(s, -1.0f), "NEAREST", mode);
    Tensor t = Eval(s, {}, out);
    for (float v : t.flat<float>()) EXPECT_TRUE(v == -1 || std::isnan(v)) << v;
  }
}

TEST(ProjectiveTransformOpsTest, Errors) {
  // Fed through placeholders, so the kernel sees them.
  auto run = [](Tensor images, Tensor transforms, std::vector<int32_t> size, std::string interpolation,
                std::string mode) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output im = testing_util::Placeholder(s, DT_FLOAT);
    Output tr = testing_util::Placeholder(s, DT_FLOAT);
    Output sz = testing_util::Placeholder(s, DT_INT32);
    return TryEval(s, {{im, images}, {tr, transforms}, {sz, Tensor::FromVector<int32_t>(size)}},
                   ops::ImageProjectiveTransformV3(s, im, tr, sz, ops::Const(s, 0.0f), interpolation, mode))
        .status();
  };
  EXPECT_THAT(run(Tensor::FromVector<float>({1, 2}), Transforms(), {2, 2}, "NEAREST", "CONSTANT").message(),
              HasSubstr("Input images must have rank 4"));
  EXPECT_THAT(run(Images(), Tensor::FromVector<float>({1, 0, 0, 0, 1, 0, 0}, TensorShape({1, 7})), {2, 2},
                  "NEAREST", "CONSTANT").message(),
              HasSubstr("Input transform should be num_images x 8 or 1 x 8"));
  EXPECT_THAT(run(Images(), Transforms(), {2}, "NEAREST", "CONSTANT").message(),
              HasSubstr("output shape must have two elements"));
  EXPECT_THAT(run(Images(), Transforms(), {2, -1}, "NEAREST", "CONSTANT").message(),
              HasSubstr("output dimensions must be non-negative"));
  EXPECT_THAT(run(Images(), Transforms(), {2, 2}, "CUBIC", "CONSTANT").message(),
              HasSubstr("Invalid interpolation CUBIC"));
  EXPECT_THAT(run(Images(), Transforms(), {2, 2}, "NEAREST", "MIRROR").message(),
              HasSubstr("Invalid fill mode MIRROR"));
}

}  // namespace
}  // namespace sluice
