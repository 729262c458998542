// ResizeBilinear, CropAndResize and AdjustContrastv2 against TensorFlow
// 2.21's outputs and gradients for the same inputs (testdata/, from
// testdata/make_fixtures.py), gradients also by finite differences, and the
// ops' errors.
#include "ops/image/image_ops.h"

#include <string>

#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/npy.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::GradError;
using testing_util::TryEval;

constexpr char kDir[] = "ops/image/testdata/";

Tensor Npy(const std::string& name) {
  absl::StatusOr<Tensor> t = ReadNpyFile(kDir + name + ".npy");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

void ExpectNear(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape()) << got.shape().DebugString() << " vs "
                                       << want.shape().DebugString();
  ASSERT_EQ(got.dtype(), DT_FLOAT);
  ASSERT_EQ(want.dtype(), DT_FLOAT);
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], tol) << "at " << i;
  }
}

Tensor ToDouble(const Tensor& f) {
  Tensor d(DT_DOUBLE, f.shape());
  for (int64_t i = 0; i < f.NumElements(); ++i) d.data<double>()[i] = f.data<float>()[i];
  return d;
}

class ImageOpsTest : public ::testing::Test {
 protected:
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(ImageOpsTest, ResizeBilinearMatchesTensorFlow) {
  Tensor x = Npy("resize_in");
  Tensor w = Npy("resize_w");
  Output xp = ops::Placeholder(s_, DT_FLOAT);
  const struct {
    const char* name;
    ops::ResizeAttrs attrs;
  } cases[] = {{"plain", {}}, {"align", {.align_corners = true}}, {"half", {.half_pixel_centers = true}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Output y = ops::ResizeBilinear(s_, xp, ops::Const(s_, {3, 7}), c.attrs);
    ASSERT_TRUE(s_.ok()) << s_.status();
    EXPECT_EQ(y.node->output_shape(0), TensorShape({-1, 3, 7, -1}));
    ExpectNear(Eval(s_, {{xp, x}}, y), Npy(std::string("resize_") + c.name), 1e-6);
    Output loss = ops::Sum(s_, ops::Mul(s_, y, ops::Const(s_, w)), ops::Const(s_, {0, 1, 2, 3}));
    absl::StatusOr<std::vector<Output>> dx = AddGradients(s_, {loss}, {xp});
    ASSERT_TRUE(dx.ok()) << dx.status();
    ExpectNear(Eval(s_, {{xp, x}}, (*dx)[0]), Npy(std::string("resize_grad_") + c.name), 1e-5);
  }
  Output u8 = ops::Placeholder(s_, DT_UINT8);
  ExpectNear(Eval(s_, {{u8, Npy("resize_uint8_in")}},
                  ops::ResizeBilinear(s_, u8, ops::Const(s_, {6, 3}), {.half_pixel_centers = true})),
             Npy("resize_uint8_half"), 1e-4);
}

TEST_F(ImageOpsTest, ResizeBilinearGradientByFiniteDifferences) {
  for (bool half : {false, true}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = ops::Placeholder(s, DT_DOUBLE);
    Output y = ops::ResizeBilinear(s, x, ops::Const(s, {5, 3}), {.half_pixel_centers = half});
    EXPECT_LT(GradError(s, {{x, ToDouble(Npy("resize_in"))}}, y), 2e-3);
  }
}

TEST_F(ImageOpsTest, CropAndResizeMatchesTensorFlow) {
  Tensor image = Npy("crop_image"), boxes = Npy("crop_boxes"), w = Npy("crop_w");
  Output ip = ops::Placeholder(s_, DT_FLOAT);
  Output bp = ops::Placeholder(s_, DT_FLOAT);
  Output box_ind = ops::Const(s_, Npy("crop_box_ind"));
  for (const char* method : {"bilinear", "nearest"}) {
    SCOPED_TRACE(method);
    Output y = ops::CropAndResize(s_, ip, bp, box_ind, ops::Const(s_, {3, 4}),
                                  {.method = method, .extrapolation_value = 0.5f});
    ASSERT_TRUE(s_.ok()) << s_.status();
    ExpectNear(Eval(s_, {{ip, image}, {bp, boxes}}, y), Npy(std::string("crop_") + method), 1e-6);
    if (std::string(method) != "bilinear") continue;
    Output loss = ops::Sum(s_, ops::Mul(s_, y, ops::Const(s_, w)), ops::Const(s_, {0, 1, 2, 3}));
    absl::StatusOr<std::vector<Output>> d = AddGradients(s_, {loss}, {ip, bp});
    ASSERT_TRUE(d.ok()) << d.status();
    ExpectNear(Eval(s_, {{ip, image}, {bp, boxes}}, (*d)[0]), Npy("crop_grad_image"), 1e-5);
    ExpectNear(Eval(s_, {{ip, image}, {bp, boxes}}, (*d)[1]), Npy("crop_grad_boxes"), 1e-4);
  }
}

TEST_F(ImageOpsTest, CropAndResizeGradientsByFiniteDifferences) {
  Tensor image = ToDouble(Npy("crop_image"));
  Tensor boxes = Tensor::FromVector<float>({0.13f, 0.23f, 0.81f, 0.87f, 0.27f, 0.31f, 0.62f, 0.57f},
                                           TensorShape({2, 4}));
  Output ip = ops::Placeholder(s_, DT_DOUBLE);
  Output y = ops::CropAndResize(s_, ip, ops::Const(s_, boxes), ops::Const(s_, std::vector<int32_t>{0, 1}),
                                ops::Const(s_, {3, 4}));
  EXPECT_LT(GradError(s_, {{ip, image}}, y), 2e-3);
  // W.r.t. the boxes (float only: the op takes float boxes), away from pixel
  // edges where the bilinear map has kinks.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output img = ops::Const(s, Npy("crop_image"));
  Output bp = ops::Placeholder(s, DT_FLOAT);
  Output crops = ops::CropAndResize(s, img, bp, ops::Const(s, std::vector<int32_t>{0, 1}),
                                    ops::Const(s, {3, 4}));
  absl::StatusOr<double> err = MaxGradientError(s, {bp}, {boxes}, crops, 1e-3);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 2e-2);
}

TEST_F(ImageOpsTest, AdjustContrastMatchesTensorFlow) {
  Output x = ops::Placeholder(s_, DT_FLOAT);
  ExpectNear(Eval(s_, {{x, Npy("contrast_in")}}, ops::AdjustContrastv2(s_, x, ops::Const(s_, 1.7f))),
             Npy("contrast_out"), 1e-5);
  absl::StatusOr<Tensor> r = TryEval(s_, {{x, Tensor(DT_FLOAT, TensorShape({3, 3}))}},
                                     ops::AdjustContrastv2(s_, x, ops::Const(s_, 1.7f)));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("at least 3-D"));
  // As in TensorFlow, it has no gradient.
  Output y = ops::AdjustContrastv2(s_, x, ops::Const(s_, 2.0f));
  absl::StatusOr<std::vector<Output>> d = AddGradients(s_, {y}, {x});
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("no gradient is defined for op 'AdjustContrastv2'"));
}

TEST_F(ImageOpsTest, Errors) {
  Output x = ops::Placeholder(s_, DT_FLOAT);
  Output size = ops::Placeholder(s_, DT_INT32);
  Output y = ops::ResizeBilinear(s_, x, size);
  Tensor img(DT_FLOAT, TensorShape({1, 2, 2, 1}));
  absl::StatusOr<Tensor> r = TryEval(s_, {{x, img}, {size, Tensor::FromVector<int32_t>({0, 3})}}, y);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("must be positive"));
  r = TryEval(s_, {{x, img}, {size, Tensor::FromVector<int32_t>({3})}}, y);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("2 elements"));
  r = TryEval(s_, {{x, Tensor(DT_FLOAT, TensorShape({2, 2, 1}))},
                   {size, Tensor::FromVector<int32_t>({3, 3})}},
              y);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("must be 4-dimensional"));
  Output aligned = ops::ResizeBilinear(s_, x, ops::Const(s_, {3, 3}),
                                       {.align_corners = true, .half_pixel_centers = true});
  r = TryEval(s_, {{x, img}}, aligned);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("align_corners must be False"));

  Output ind = ops::Placeholder(s_, DT_INT32);
  Output crops = ops::CropAndResize(s_, x, ops::Const(s_, Tensor(DT_FLOAT, TensorShape({1, 4}))),
                                    ind, ops::Const(s_, {2, 2}));
  r = TryEval(s_, {{x, img}, {ind, Tensor::FromVector<int32_t>({1})}}, crops);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("box_index has values outside [0, 1)"));
  r = TryEval(s_, {{x, img}, {ind, Tensor::FromVector<int32_t>({0, 0})}}, crops);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("box_index has incompatible shape"));
}

}  // namespace
}  // namespace sluice
