// ResizeNearestNeighbor and ResizeBicubic (and their gradient ops):
// TensorFlow 2.21's values for the same image under each sampling mode,
// whole-pixel copies of any dtype, gradients against central differences,
// and bad inputs.
#include "ops/image/resize_ops.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "builtin_session.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/gradient_checker.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

absl::StatusOr<Tensor> Eval(const Scope& s, const Output& y) { return EvalWithFeeds(s, {}, {}, y); }

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    v.push_back(t.dtype() == DT_FLOAT ? t.data<float>()[i] : t.data<double>()[i]);
  }
  return v;
}

// A [1, 3, 4, 2] image: (0..23)^1.3 / 7.
Tensor Image() {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(std::pow(i, 1.3) / 7);
  return Tensor::FromVector<float>(v, TensorShape({1, 3, 4, 2}));
}

Output Size(const Scope& s, int32_t h, int32_t w) { return ops::Const(s, std::vector<int32_t>{h, w}); }

TEST(ResizeOpsTest, ValuesAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output img = ops::Const(s, Image());
  Tensor g(DT_FLOAT, TensorShape({1, 5, 3, 2}));
  for (int i = 0; i < 30; ++i) g.data<float>()[i] = static_cast<float>(i) / 10;
  Output grads = ops::Const(s, g);
  const ops::ResizeAttrs align = {.align_corners = true}, half = {.half_pixel_centers = true};
  const std::vector<std::pair<Output, std::vector<double>>> cases = {
      {ops::ResizeNearestNeighbor(s, img, Size(s, 5, 3)),
       {0.0, 0.1428571492433548, 0.3517555296421051, 0.5958810448646545, 0.8661237359046936,
       1.1576117277145386, 0.0, 0.1428571492433548, 0.3517555296421051, 0.5958810448646545,
       0.8661237359046936, 1.1576117277145386, 2.1326467990875244, 2.4855194091796875,
       2.850374221801758, 3.2263567447662354, 3.6127469539642334, 4.008927822113037,
       2.1326467990875244, 2.4855194091796875, 2.850374221801758, 3.2263567447662354,
       3.6127469539642334, 4.008927822113037, 5.251191139221191, 5.681793689727783,
       6.120067119598389, 6.565708160400391, 7.018445014953613, 7.478026390075684}},
      {ops::ResizeNearestNeighbor(s, img, Size(s, 5, 3), align),
       {0.0, 0.1428571492433548, 0.8661237359046936, 1.1576117277145386, 1.467231035232544,
       1.7927896976470947, 2.1326467990875244, 2.4855194091796875, 3.6127469539642334,
       4.008927822113037, 4.414366245269775, 4.828591823577881, 2.1326467990875244,
       2.4855194091796875, 3.6127469539642334, 4.008927822113037, 4.414366245269775,
       4.828591823577881, 5.251191139221191, 5.681793689727783, 7.018445014953613,
       7.478026390075684, 7.9442219734191895, 8.416821479797363, 5.251191139221191,
       5.681793689727783, 7.018445014953613, 7.478026390075684, 7.9442219734191895,
       8.416821479797363}},
      {ops::ResizeNearestNeighbor(s, img, Size(s, 5, 3), half),
       {0.0, 0.1428571492433548, 0.8661237359046936, 1.1576117277145386, 1.467231035232544,
       1.7927896976470947, 0.0, 0.1428571492433548, 0.8661237359046936, 1.1576117277145386,
       1.467231035232544, 1.7927896976470947, 2.1326467990875244, 2.4855194091796875,
       3.6127469539642334, 4.008927822113037, 4.414366245269775, 4.828591823577881,
       5.251191139221191, 5.681793689727783, 7.018445014953613, 7.478026390075684,
       7.9442219734191895, 8.416821479797363, 5.251191139221191, 5.681793689727783,
       7.018445014953613, 7.478026390075684, 7.9442219734191895, 8.416821479797363}},
      {ops::ResizeBicubic(s, img, Size(s, 5, 3)),
       {0.0, 0.1428571492433548, 0.5192428827285767, 0.7876241207122803, 1.3067398071289062,
       1.6242117881774902, 0.9675621390342712, 1.2304655313491821, 1.75437593460083,
       2.0861639976501465, 2.701261520385742, 3.0686845779418945, 2.8869476318359375,
       3.2736868858337402, 3.9610812664031982, 4.367895126342773, 5.099295139312744,
       5.528324127197266, 4.752995014190674, 5.174951553344727, 5.925034046173096,
       6.366966724395752, 7.156217098236084, 7.617210388183594, 5.587884426116943,
       6.026878356933594, 6.806456565856934, 7.26467227935791, 8.080636978149414,
       8.556350708007812}},
      {ops::ResizeBicubic(s, img, Size(s, 5, 7), half),
       {-0.1867446005344391, -0.06823872774839401, -0.08201391994953156, 0.07549764215946198,
       0.1332074999809265, 0.3610191345214844, 0.39449912309646606, 0.6578662991523743,
       0.7003464698791504, 0.9870363473892212, 1.0864180326461792, 1.3965011835098267,
       1.2910648584365845, 1.6127216815948486, 0.5716517567634583, 0.7789045572280884,
       0.7295754551887512, 0.9636778235435486, 1.043025255203247, 1.3258168697357178,
       1.3683252334594727, 1.6775315999984741, 1.7263725996017456, 2.0542492866516113,
       2.165393352508545, 2.5122628211975098, 2.3967530727386475, 2.7531051635742188,
       2.0757908821105957, 2.426832675933838, 2.3205206394195557, 2.6796090602874756,
       2.7945797443389893, 3.1688992977142334, 3.2263171672821045, 3.612715721130371,
       3.6723296642303467, 4.069944858551025, 4.201126575469971, 4.610668182373047,
       4.477867603302002, 4.893522262573242, 4.185657024383545, 4.597238540649414,
       4.470270156860352, 4.8867645263671875, 5.019770622253418, 5.44575309753418,
       5.510962963104248, 5.945530891418457, 6.012187957763672, 6.4552903175354,
       6.600161552429199, 7.052552700042725, 6.9072723388671875, 7.364460468292236,
       5.41698694229126, 5.8523173332214355, 5.7181572914123535, 6.158478260040283,
       6.299389839172363, 6.749228000640869, 6.81790828704834, 7.275656700134277,
       7.345760822296143, 7.811115264892578, 7.962791442871094, 8.436492919921875,
       8.284893989562988, 8.76290512084961}},
      {ops::ResizeBicubic(s, img, Size(s, 2, 2), align),
       {0.0, 0.1428571492433548, 1.467231035232544, 1.7927896976470947, 5.251191139221191,
       5.681793689727783, 7.9442219734191895, 8.416821479797363}},
      {ops::ResizeNearestNeighborGrad(s, grads, Size(s, 3, 4), half),
       {0.6000000238418579, 0.800000011920929, 0.0, 0.0, 1.0, 1.2000000476837158,
       1.399999976158142, 1.600000023841858, 1.2000000476837158, 1.2999999523162842, 0.0, 0.0,
       1.399999976158142, 1.5, 1.600000023841858, 1.7000000476837158, 4.199999809265137,
       4.400000095367432, 0.0, 0.0, 4.599999904632568, 4.800000190734863, 5.0, 5.199999809265137}},
      {ops::ResizeBicubicGrad(s, grads, img, half),
       {0.2331010103225708, 0.3713969886302948, 0.3903384804725647, 0.5039660930633545,
       0.48171478509902954, 0.5953425168991089, 0.8282722234725952, 0.9665681719779968,
       1.60102117061615, 1.736148715019226, 1.5097042322158813, 1.620728850364685,
       1.5989872217178345, 1.7100119590759277, 2.1825575828552246, 2.317685604095459,
       3.044015407562256, 3.1823110580444336, 2.699862480163574, 2.813490152359009,
       2.79123854637146, 2.9048664569854736, 3.639186382293701, 3.777482509613037}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    absl::StatusOr<Tensor> got = Eval(s, cases[i].first);
    ASSERT_TRUE(got.ok()) << i << ": " << got.status();
    const std::vector<double> v = Values(*got);
    ASSERT_EQ(v.size(), cases[i].second.size()) << i;
    for (size_t j = 0; j < v.size(); ++j) {
      EXPECT_NEAR(v[j], cases[i].second[j], 2e-6 * (1 + std::fabs(cases[i].second[j])))
          << "case " << i << " [" << j << "]";
    }
  }
  // Nearest neighbour copies whole pixels of any dtype.
  std::vector<uint8_t> bytes(12);
  for (int i = 0; i < 12; ++i) bytes[i] = static_cast<uint8_t>(i);
  absl::StatusOr<Tensor> u8 = Eval(
      s, ops::ResizeNearestNeighbor(s, ops::Const(s, Tensor::FromVector<uint8_t>(bytes, TensorShape({1, 2, 3, 2}))),
                                    Size(s, 3, 2)));
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_EQ(u8->dtype(), DT_UINT8);
  EXPECT_EQ(std::vector<uint8_t>(u8->data<uint8_t>(), u8->data<uint8_t>() + 12),
            (std::vector<uint8_t>{0, 1, 2, 3, 0, 1, 2, 3, 6, 7, 8, 9}));
}

// Both resizes are linear in the image: their gradients are the gradient
// ops, checked by central differences (bicubic's float output with a wide
// step).
TEST(ResizeOpsTest, GradientsMatchCentralDifferences) {
  for (bool half : {false, true}) {
    for (bool align : {false, true}) {
      if (half && align) continue;
      SCOPED_TRACE(std::string(half ? "half" : "") + (align ? "align" : ""));
      Scope s = Scope::NewRootScope(BuiltinOps());
      Output x = ops::Placeholder(s, DT_DOUBLE, {.shape = TensorShape({2, 3, 4, 2})});
      Tensor at(DT_DOUBLE, TensorShape({2, 3, 4, 2}));
      for (int i = 0; i < 48; ++i) at.data<double>()[i] = std::sin(i * 0.7);
      const ops::ResizeAttrs a = {.align_corners = align, .half_pixel_centers = half};
      for (auto [h, w] : std::vector<std::pair<int, int>>{{5, 7}, {2, 3}}) {
        Output nn = ops::ResizeNearestNeighbor(s, x, Size(s, h, w), a);
        absl::StatusOr<double> err = MaxGradientError(s, {x}, {at}, ops::Square(s, nn));
        ASSERT_TRUE(err.ok()) << err.status();
        EXPECT_LT(*err, 1e-6) << "nearest " << h << "x" << w;
        Output bc = ops::ResizeBicubic(s, x, Size(s, h, w), a);
        err = MaxGradientError(s, {x}, {at}, ops::Mul(s, bc, 3.0f), 1e-2);
        ASSERT_TRUE(err.ok()) << err.status();
        EXPECT_LT(*err, 2e-4) << "bicubic " << h << "x" << w;
      }
    }
  }
}

TEST(ResizeOpsTest, BadInputsAreClearErrors) {
  auto error = [](const std::function<Output(const Scope&)>& build) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output out = build(s);
    if (!s.ok()) return s.status();
    return Eval(s, out).status();
  };
  absl::Status st = error([](const Scope& s) {
    return ops::ResizeBicubic(s, ops::Const(s, std::vector<float>{1, 2, 3}), Size(s, 2, 2));
  });
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(absl::StrContains(st.message(), "rank")) << st;
  st = error([](const Scope& s) {
    return ops::ResizeNearestNeighbor(
        s, ops::Const(s, Image()),
        ops::PlaceholderWithDefault(s, Size(s, 0, 2), TensorShape::Unknown()));
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "must be positive")) << st;
  st = error([](const Scope& s) {
    return ops::ResizeBicubic(s, ops::Const(s, Image()), Size(s, 2, 2),
                              {.align_corners = true, .half_pixel_centers = true});
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "align_corners must be False")) << st;
}

}  // namespace
}  // namespace sluice
