// The image decoders and encoder against TensorFlow 2.21 (testdata/, from
// testdata/make_fixtures.py): the pixels its DecodeJpeg (default, gray,
// ratio 2, no fancy upscaling), DecodePng (RGB, RGBA, 16 bits, gray to
// RGB) and DecodeImage (float) return for files it encoded; EncodePng round
// trips; truncated, corrupt and unknown data give errors.
#include "ops/image/image_codec_ops.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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
using testing_util::ExpectTensor;
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
  r = TryEval(s_, {{img, Tensor(DT_UINT8, TensorShape({4, 3}))}}, ops::EncodePng(s_, img));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("at least 3-dimensional"));
}

TEST_F(ImageCodecTest, EncodePngTakesABatchOfAnyRank) {
  // [2, 3] images of 1x2 gray pixels: one PNG each, in order.
  std::vector<uint8_t> pixels(12);
  for (int i = 0; i < 12; ++i) pixels[i] = static_cast<uint8_t>(20 * i);
  Output batch = ops::Const(s_, Tensor::FromVector<uint8_t>(pixels, TensorShape({2, 3, 1, 2, 1})));
  Output pngs = ops::EncodePng(s_, batch);
  EXPECT_EQ(pngs.shape(), TensorShape({2, 3}));
  Output flat = ops::Reshape(s_, pngs, {-1});
  Output last = ops::DecodePng(
      s_, ops::Reshape(s_, ops::Slice(s_, flat, {5}, {1}), ops::Const<int32_t>(s_, {}, {0})));
  EXPECT_EQ(Eval(s_, {}, pngs).shape(), TensorShape({2, 3}));
  Tensor decoded = Eval(s_, {}, last);
  EXPECT_EQ(decoded.shape(), TensorShape({1, 2, 1}));
  EXPECT_EQ(decoded.data<uint8_t>()[0], 200);
  EXPECT_EQ(decoded.data<uint8_t>()[1], 220);
  EXPECT_EQ(Eval(s_, {}, ops::EncodePng(s_, ops::Const(s_, Tensor(DT_UINT8, TensorShape({0, 2, 2, 3})))))
                .shape(),
            TensorShape({0}));
}

// A BMP file: a 54-byte header (pixels at offset 54), then `pixels` as
// stored (rows padded to 4 bytes by the caller).
std::string Bmp(int32_t width, int32_t height, int16_t bpp, const std::string& pixels) {
  std::string h(54, '\0');
  auto put32 = [&h](int at, int32_t v) {
    for (int i = 0; i < 4; ++i) h[at + i] = static_cast<char>((static_cast<uint32_t>(v) >> (8 * i)) & 0xff);
  };
  h[0] = 'B';
  h[1] = 'M';
  put32(2, static_cast<int32_t>(54 + pixels.size()));
  put32(10, 54);
  put32(14, 40);
  put32(18, width);
  put32(22, height);
  h[26] = 1;
  h[28] = static_cast<char>(bpp);
  return h + pixels;
}

TEST_F(ImageCodecTest, DecodeBmpReadsGrayBgrAndBgra) {
  Output bmp = s_.Op("DecodeBmp", std::source_location::current()).Input(x_).Finalize1();
  Output rgba = s_.Op("DecodeBmp", std::source_location::current())
                    .Input(x_)
                    .Attr("channels", int64_t{4})
                    .Finalize1();
  // 2x2 BGR, bottom-up: the first stored row is the image's last; each row
  // of 6 bytes padded to 8.
  const std::string bgr = Bmp(2, 2, 24, std::string("\x01\x02\x03\x04\x05\x06\0\0"
                                                    "\x07\x08\x09\x0a\x0b\x0c\0\0", 16));
  Tensor t = Run(bmp, bgr);
  EXPECT_EQ(t.shape(), TensorShape({2, 2, 3}));
  const std::vector<uint8_t> want = {9, 8, 7, 12, 11, 10, 3, 2, 1, 6, 5, 4};
  EXPECT_EQ(std::vector<uint8_t>(t.data<uint8_t>(), t.data<uint8_t>() + 12), want);
  Tensor a = Run(rgba, bgr);
  EXPECT_EQ(a.shape(), TensorShape({2, 2, 4}));
  EXPECT_EQ(a.data<uint8_t>()[3], 255);
  // 1x2 BGRA top-down (negative height); 1x3 gray repeated into RGB.
  Tensor top = Run(bmp, Bmp(1, -2, 32, std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8)));
  EXPECT_EQ(top.shape(), TensorShape({2, 1, 4}));
  EXPECT_EQ(std::vector<uint8_t>(top.data<uint8_t>(), top.data<uint8_t>() + 8),
            (std::vector<uint8_t>{3, 2, 1, 4, 7, 6, 5, 8}));
  Output rgb = ops::DecodeImage(s_, x_, {.channels = 3});
  Tensor gray = Run(rgb, Bmp(3, 1, 8, std::string("\x0a\x14\x1e\0", 4)));
  EXPECT_EQ(std::vector<uint8_t>(gray.data<uint8_t>(), gray.data<uint8_t>() + 9),
            (std::vector<uint8_t>{10, 10, 10, 20, 20, 20, 30, 30, 30}));
  // Refusals.
  EXPECT_THAT(std::string(RunStatus(bmp, bgr + "x").message()), HasSubstr("differ by 1"));
  EXPECT_THAT(std::string(RunStatus(bmp, Bmp(2, 2, 16, std::string(8, '\0'))).message()),
              HasSubstr("must be 1, 3 or 4, was 2"));
  EXPECT_THAT(std::string(RunStatus(bmp, FileBytes("rgb.png")).message()), HasSubstr("not a BMP"));
  EXPECT_THAT(std::string(RunStatus(bmp, "BM").message()), HasSubstr("at least 32 bytes"));
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
  // DecodeImage: unknown bytes, GIF, and a BMP too short for its header.
  st = RunStatus(ops::DecodeImage(s_, x_), "hello");
  EXPECT_THAT(std::string(st.message()), HasSubstr("Unknown image file format"));
  st = RunStatus(ops::DecodeImage(s_, x_), "GIF89a....");
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented);
  st = RunStatus(ops::DecodeImage(s_, x_), "BM......");
  EXPECT_THAT(std::string(st.message()), HasSubstr("Incomplete bmp content"));
  // Attrs.
  st = RunStatus(ops::DecodeJpeg(s_, x_, {.ratio = 3}), jpg);
  EXPECT_THAT(std::string(st.message()), HasSubstr("ratio must be 1, 2, 4, or 8"));
  st = RunStatus(ops::DecodeJpeg(s_, x_, {.dct_method = "FAST"}), jpg);
  EXPECT_THAT(std::string(st.message()), HasSubstr("dct_method must be one of"));
}

// A smooth 96x128 RGB picture with some edges, as a JPEG this library wrote.
Tensor Picture(int64_t h = 96, int64_t w = 128) {
  Tensor t(DT_UINT8, TensorShape({h, w, 3}));
  uint8_t* p = t.data<uint8_t>();
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      p[(y * w + x) * 3 + 0] = static_cast<uint8_t>(2 * x);
      p[(y * w + x) * 3 + 1] = static_cast<uint8_t>(2 * y + ((x / 10 + y / 10) % 2) * 60);
      p[(y * w + x) * 3 + 2] = static_cast<uint8_t>(x + y);
    }
  }
  return t;
}

double MeanAbsDiff(const Tensor& a, const Tensor& b) {
  double sum = 0;
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    sum += std::abs(static_cast<int>(a.data<uint8_t>()[i]) - static_cast<int>(b.data<uint8_t>()[i]));
  }
  return sum / a.NumElements();
}

// Rows [y, y+h) and columns [x, x+w) of an HWC image.
Tensor Window(const Tensor& img, int64_t y, int64_t x, int64_t h, int64_t w) {
  const int64_t c = img.dim_size(2), width = img.dim_size(1);
  Tensor out(DT_UINT8, TensorShape({h, w, c}));
  for (int64_t r = 0; r < h; ++r) {
    std::memcpy(out.data<uint8_t>() + r * w * c, img.data<uint8_t>() + ((y + r) * width + x) * c,
                w * c);
  }
  return out;
}

TEST_F(ImageCodecTest, EncodeJpegRoundTripsCloselyWithItsSettings) {
  Tensor pic = Picture();
  Output img = ops::Placeholder(s_, DT_UINT8);
  Tensor q95 = Eval(s_, {{img, pic}}, ops::EncodeJpeg(s_, img));
  Tensor q30 = Eval(s_, {{img, pic}}, ops::EncodeJpeg(s_, img, {.quality = 30}));
  Tensor opt = Eval(s_, {{img, pic}}, ops::EncodeJpeg(s_, img, {.optimize_size = true}));
  Tensor prog = Eval(s_, {{img, pic}}, ops::EncodeJpeg(s_, img, {.progressive = true}));
  Tensor full = Eval(s_, {{img, pic}}, ops::EncodeJpeg(s_, img, {.chroma_downsampling = false}));
  const std::string& b95 = q95.scalar<std::string>();
  EXPECT_LT(q30.scalar<std::string>().size(), b95.size());
  EXPECT_LT(opt.scalar<std::string>().size(), b95.size());  // same pixels, better tables
  EXPECT_GT(full.scalar<std::string>().size(), b95.size());  // 4:4:4 keeps more chroma
  // JFIF APP0 at 300 dpi: units 1, densities 0x012c.
  EXPECT_EQ(b95.substr(0, 4), std::string("\xff\xd8\xff\xe0", 4));
  EXPECT_EQ(b95.substr(13, 5), std::string("\x01\x01\x2c\x01\x2c", 5));
  const double err95 = MeanAbsDiff(Run(ops::DecodeJpeg(s_, x_), b95), pic);
  const double err30 = MeanAbsDiff(Run(ops::DecodeJpeg(s_, x_), q30.scalar<std::string>()), pic);
  EXPECT_LT(err95, 6.0);
  EXPECT_LT(err95, err30);
  EXPECT_EQ(MeanAbsDiff(Run(ops::DecodeJpeg(s_, x_), opt.scalar<std::string>()),
                        Run(ops::DecodeJpeg(s_, x_), b95)),
            0.0);
  EXPECT_LT(MeanAbsDiff(Run(ops::DecodeJpeg(s_, x_), prog.scalar<std::string>()), pic), 6.0);
  // A variable quality is the same encoder.
  Tensor vq = Eval(s_, {{img, pic}}, ops::EncodeJpegVariableQuality(s_, img, ops::Const(s_, 30)));
  EXPECT_EQ(vq.scalar<std::string>(), q30.scalar<std::string>());
  // Grayscale, cm densities, XMP metadata in an APP1 marker.
  Tensor gray(DT_UINT8, TensorShape({8, 8, 1}));
  for (int i = 0; i < 64; ++i) gray.data<uint8_t>()[i] = static_cast<uint8_t>(100 + i / 8 + i % 8);
  Tensor g = Eval(s_, {{img, gray}},
                  ops::EncodeJpeg(s_, img,
                                  {.format = "grayscale", .density_unit = "cm", .x_density = 72,
                                   .y_density = 96, .xmp_metadata = "<x:xmpmeta/>"}));
  const std::string& gb = g.scalar<std::string>();
  EXPECT_EQ(gb.substr(13, 5), std::string("\x02\x00\x48\x00\x60", 5));
  EXPECT_NE(gb.find(std::string("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>", 41)),
            std::string::npos);
  Tensor back = Run(ops::DecodeJpeg(s_, x_), gb);
  EXPECT_EQ(back.shape(), TensorShape({8, 8, 1}));
  EXPECT_LT(MeanAbsDiff(back, gray), 3.0);
  Tensor shape = Run(ops::ExtractJpegShape(s_, x_, DT_INT64), b95);
  ExpectTensor<int64_t>(shape, TensorShape({3}), {96, 128, 3});
  ExpectTensor<int32_t>(Run(ops::ExtractJpegShape(s_, x_), gb), TensorShape({3}), {8, 8, 1});
}

TEST_F(ImageCodecTest, EncodeJpegRefusesBadImagesAndAttrs) {
  Output img = ops::Placeholder(s_, DT_UINT8);
  auto message = [&](const Tensor& t, const ops::EncodeJpegAttrs& a) {
    return std::string(TryEval(s_, {{img, t}}, ops::EncodeJpeg(s_, img, a)).status().message());
  };
  EXPECT_THAT(message(Tensor(DT_UINT8, TensorShape({4, 4, 2})), {}),
              HasSubstr("must have 1 or 3 channels"));
  EXPECT_THAT(message(Tensor(DT_UINT8, TensorShape({4, 4, 3})), {.format = "grayscale"}),
              HasSubstr("must have 1 channels for format 'grayscale'"));
  EXPECT_THAT(message(Tensor(DT_UINT8, TensorShape({4, 4})), {}), HasSubstr("3-dimensional"));
  EXPECT_THAT(message(Tensor(DT_UINT8, TensorShape({0, 4, 3})), {}), HasSubstr("empty image"));
  EXPECT_THAT(message(Picture(8, 8), {.quality = 101}), HasSubstr("quality must be in [0,100]"));
  absl::StatusOr<Tensor> r = TryEval(
      s_, {{img, Picture(8, 8)}}, ops::EncodeJpegVariableQuality(s_, img, ops::Const(s_, -1)));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("quality must be in [0,100]"));
  EXPECT_THAT(std::string(RunStatus(ops::ExtractJpegShape(s_, x_), "hello").message()),
              HasSubstr("not a JPEG file"));
}

TEST_F(ImageCodecTest, DecodeAndCropJpegDecodesTheWindow) {
  Tensor pic = Picture();
  Output img = ops::Placeholder(s_, DT_UINT8);
  const std::string jpg =
      Eval(s_, {{img, pic}}, ops::EncodeJpeg(s_, img)).scalar<std::string>();
  Output window = ops::Placeholder(s_, DT_INT32);
  auto crop = [&](std::vector<int32_t> w, const ops::DecodeJpegAttrs& a = {}) {
    return Eval(s_,
                {{x_, Tensor::Scalar<std::string>(jpg)},
                 {window, Tensor::FromVector<int32_t>(w, TensorShape({4}))}},
                ops::DecodeAndCropJpeg(s_, x_, window, a));
  };
  const Tensor whole = Run(ops::DecodeJpeg(s_, x_), jpg);
  const Tensor whole_plain = Run(ops::DecodeJpeg(s_, x_, {.fancy_upscaling = false}), jpg);
  // The whole image is the full decode. Without fancy upscaling any window
  // is the full decode's window exactly; with it, chroma is interpolated
  // only within the decoded iMCU columns (as in TensorFlow, which decodes
  // the same way), so pixels near a window's side edges may move a few
  // levels.
  ExpectClose<uint8_t>(crop({0, 0, 96, 128}), whole);
  ExpectClose<uint8_t>(crop({5, 21, 33, 70}, {.fancy_upscaling = false}),
                       Window(whole_plain, 5, 21, 33, 70));
  ExpectClose<uint8_t>(crop({17, 32, 40, 50}, {.fancy_upscaling = false}),
                       Window(whole_plain, 17, 32, 40, 50));
  for (std::vector<int32_t> w : std::vector<std::vector<int32_t>>{{17, 32, 40, 50},
                                                                  {5, 21, 33, 70}}) {
    const Tensor got = crop(w);
    const Tensor want = Window(whole, w[0], w[1], w[2], w[3]);
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_LT(MeanAbsDiff(got, want), 0.5);
    ExpectClose<uint8_t>(got, want, /*max_diff=*/8);
  }
  // Scaled: the window is in the half-size image's pixels.
  const Tensor half = Run(ops::DecodeJpeg(s_, x_, {.ratio = 2}), jpg);
  SCOPED_TRACE(536);
  ExpectClose<uint8_t>(crop({8, 16, 20, 30}, {.ratio = 2}), Window(half, 8, 16, 20, 30));
  // Gray output.
  EXPECT_EQ(crop({0, 0, 10, 10}, {.channels = 1}).shape(), TensorShape({10, 10, 1}));
  // Windows outside the image and malformed windows.
  for (std::vector<int32_t> w : std::vector<std::vector<int32_t>>{
           {0, 0, 97, 10}, {0, 120, 10, 9}, {-1, 0, 5, 5}, {0, 0, 0, 5}}) {
    absl::StatusOr<Tensor> r =
        TryEval(s_,
                {{x_, Tensor::Scalar<std::string>(jpg)},
                 {window, Tensor::FromVector<int32_t>(w, TensorShape({4}))}},
                ops::DecodeAndCropJpeg(s_, x_, window));
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("is not inside the 96x128 image"))
        << w[0] << " " << w[1] << " " << w[2] << " " << w[3];
  }
  absl::StatusOr<Tensor> r =
      TryEval(s_,
              {{x_, Tensor::Scalar<std::string>(jpg)},
               {window, Tensor::FromVector<int32_t>({0, 0, 5}, TensorShape({3}))}},
              ops::DecodeAndCropJpeg(s_, x_, window));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("four elements"));
}

}  // namespace
}  // namespace sluice
