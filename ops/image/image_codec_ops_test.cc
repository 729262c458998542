// The image decoders and encoder against TensorFlow 2.21 (testdata/, from
// testdata/make_fixtures.py): the pixels its DecodeJpeg (default, gray,
// ratio 2, no fancy upscaling), DecodePng (RGB, RGBA, 16 bits, gray to
// RGB) and DecodeImage (float) return for files it encoded; EncodePng round
// trips; truncated, corrupt and unknown data give errors.
#include "ops/image/image_codec_ops.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/npy.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::TryEval;

constexpr char kDir[] = "ops/image/testdata/";

std::string FileBytes(const std::string& name) {
  std::ifstream f(kDir + name, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

Tensor Npy(const std::string& name) {
  absl::StatusOr<Tensor> t = ReadNpyFile(kDir + name + ".npy");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

// Exact equality (max_diff 0) unless a tolerance is given.
template <typename T>
void ExpectClose(const Tensor& got, const Tensor& want, double max_diff = 0) {
  ASSERT_EQ(got.dtype(), want.dtype()) << DataTypeName(got.dtype());
  ASSERT_EQ(got.shape(), want.shape()) << got.shape().DebugString() << " vs "
                                       << want.shape().DebugString();
  double worst = 0;
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(got.data<T>()[i]) -
                                     static_cast<double>(want.data<T>()[i])));
  }
  EXPECT_LE(worst, max_diff);
}

class ImageCodecTest : public ::testing::Test {
 protected:
  Tensor Run(const Output& y, const std::string& contents) {
    return Eval(s_, {{x_, Tensor::Scalar<std::string>(contents)}}, y);
  }
  absl::Status RunStatus(const Output& y, const std::string& contents) {
    return TryEval(s_, {{x_, Tensor::Scalar<std::string>(contents)}}, y).status();
  }
  Scope s_ = Scope::NewRootScope(BuiltinOps());
  Output x_ = ops::Placeholder(s_, DT_STRING);
};

TEST_F(ImageCodecTest, DecodeJpegMatchesTensorFlow) {
  const std::string jpg = FileBytes("rgb.jpg");
  ExpectClose<uint8_t>(Run(ops::DecodeJpeg(s_, x_), jpg), Npy("rgb_jpg_decoded"));
  ExpectClose<uint8_t>(Run(ops::DecodeJpeg(s_, x_, {.channels = 1}), jpg), Npy("rgb_jpg_gray"));
  ExpectClose<uint8_t>(Run(ops::DecodeJpeg(s_, x_, {.ratio = 2}), jpg), Npy("rgb_jpg_ratio2"));
  ExpectClose<uint8_t>(Run(ops::DecodeJpeg(s_, x_, {.fancy_upscaling = false}), jpg),
                       Npy("rgb_jpg_nofancy"));
  ExpectClose<float>(Run(ops::DecodeImage(s_, x_, {.dtype = DT_FLOAT}), jpg), Npy("rgb_jpg_float"),
                     1e-7);
  Tensor accurate = Run(ops::DecodeJpeg(s_, x_, {.dct_method = "INTEGER_ACCURATE"}), jpg);
  EXPECT_EQ(accurate.shape(), TensorShape({24, 32, 3}));
}

TEST_F(ImageCodecTest, DecodePngMatchesTensorFlow) {
  const std::string png = FileBytes("rgb.png");
  ExpectClose<uint8_t>(Run(ops::DecodePng(s_, x_), png), Npy("rgb_png_decoded"));
  ExpectClose<uint8_t>(Run(ops::DecodePng(s_, x_, {.channels = 4}), png), Npy("rgb_png_rgba"));
  ExpectClose<uint8_t>(Run(ops::DecodeImage(s_, x_), png), Npy("rgb_png_decoded"));
  const std::string png16 = FileBytes("rgba16.png");
  ExpectClose<uint16_t>(Run(ops::DecodePng(s_, x_, {.dtype = DT_UINT16}), png16),
                        Npy("rgba16_png_decoded"));
  ExpectClose<uint8_t>(Run(ops::DecodePng(s_, x_), png16), Npy("rgba16_png_as8"));
  ExpectClose<uint8_t>(Run(ops::DecodePng(s_, x_, {.channels = 3}), FileBytes("gray.png")),
                       Npy("gray_png_rgb"));
}

TEST_F(ImageCodecTest, EncodePngRoundTrips) {
  Tensor rgb = Npy("rgb_jpg_decoded");
  Output img = ops::Placeholder(s_, DT_UINT8);
  Output decoded = ops::DecodePng(s_, ops::EncodePng(s_, img, {.compression = 9}));
  ExpectClose<uint8_t>(Eval(s_, {{img, rgb}}, decoded), rgb);
  Tensor rgba16 = Npy("rgba16_png_decoded");
  Output img16 = ops::Placeholder(s_, DT_UINT16);
  Output decoded16 = ops::DecodePng(s_, ops::EncodePng(s_, img16), {.dtype = DT_UINT16});
  ExpectClose<uint16_t>(Eval(s_, {{img16, rgba16}}, decoded16), rgba16);
  // Bad shapes and attrs.
  absl::StatusOr<Tensor> r =
      TryEval(s_, {{img, Tensor(DT_UINT8, TensorShape({2, 2, 5}))}}, ops::EncodePng(s_, img));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("1, 2, 3, or 4 channels"));
  r = TryEval(s_, {{img, Tensor(DT_UINT8, TensorShape({0, 2, 3}))}}, ops::EncodePng(s_, img));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  r = TryEval(s_, {{img, rgb}}, ops::EncodePng(s_, img, {.compression = 12}));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("compression should be in [-1,9]"));
}

TEST_F(ImageCodecTest, BadDataIsAnError) {
  const std::string jpg = FileBytes("rgb.jpg");
  const std::string png = FileBytes("rgb.png");
  // Truncated JPEG: an error, or the rows decoded when recovery is asked for.
  // The scan data starts after the SOS marker; cut into it.
  const size_t sos = jpg.find("\xff\xda");
  ASSERT_NE(sos, std::string::npos);
  const std::string most = jpg.substr(0, jpg.size() - 40);
  const std::string little = jpg.substr(0, sos + 30);
  absl::Status st = RunStatus(ops::DecodeJpeg(s_, x_), most);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("truncated"));
  Tensor recovered = Run(ops::DecodeJpeg(s_, x_, {.try_recover_truncated = true,
                                                  .acceptable_fraction = 0}),
                         most);
  EXPECT_EQ(recovered.shape(), TensorShape({24, 32, 3}));
  st = RunStatus(ops::DecodeJpeg(s_, x_, {.try_recover_truncated = true}), little);
  EXPECT_THAT(std::string(st.message()), HasSubstr("acceptable_fraction"));
  // A JPEG cut inside its header, and garbage after the SOI marker.
  st = RunStatus(ops::DecodeJpeg(s_, x_), jpg.substr(0, 20));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  st = RunStatus(ops::DecodeJpeg(s_, x_), std::string("\xff\xd8\xff\x00garbage", 11));
  EXPECT_THAT(std::string(st.message()), HasSubstr("Invalid JPEG data"));
  // PNG with a damaged chunk (its CRC no longer matches), and a PNG to DecodeJpeg.
  std::string bad_png = png;
  bad_png[bad_png.size() / 2] ^= 0x55;
  st = RunStatus(ops::DecodePng(s_, x_), bad_png);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("Invalid PNG data"));
  st = RunStatus(ops::DecodePng(s_, x_), png.substr(0, 40));
  EXPECT_THAT(std::string(st.message()), HasSubstr("Invalid PNG data"));
  st = RunStatus(ops::DecodeJpeg(s_, x_), png);
  EXPECT_THAT(std::string(st.message()), HasSubstr("not a JPEG file: starts with 0x89 0x50 0x4e 0x47"));
  // DecodeImage: unknown bytes, GIF and BMP.
  st = RunStatus(ops::DecodeImage(s_, x_), "hello");
  EXPECT_THAT(std::string(st.message()), HasSubstr("Unknown image file format"));
  st = RunStatus(ops::DecodeImage(s_, x_), "GIF89a....");
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented);
  st = RunStatus(ops::DecodeImage(s_, x_), "BM......");
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented);
  // Attrs.
  st = RunStatus(ops::DecodeJpeg(s_, x_, {.ratio = 3}), jpg);
  EXPECT_THAT(std::string(st.message()), HasSubstr("ratio must be 1, 2, 4, or 8"));
  st = RunStatus(ops::DecodeJpeg(s_, x_, {.dct_method = "FAST"}), jpg);
  EXPECT_THAT(std::string(st.message()), HasSubstr("dct_method must be one of"));
}

}  // namespace
}  // namespace sluice
