// What DecodeAndCropJpeg saves an ImageNet-style input step: a 1024x768
// JPEG (quality 95, 4:2:0) decoded whole and then cropped, against only
// its crop decoded (libjpeg-turbo skipping the rows above and the blocks
// beside it), for a typical distorted-box crop (about 30% of the image)
// and a 224x224 one; and EncodeJpeg's time. Medians of 30 runs; prints
// `name: value unit`.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "bench/bench_util.h"
#include "ops/image/internal/image_codec.h"

namespace sluice {
namespace {

absl::Status Run() {
  constexpr int64_t kH = 768, kW = 1024;
  std::vector<uint8_t> pixels(kH * kW * 3);
  uint32_t noise = 12345;
  for (int64_t y = 0; y < kH; ++y) {
    for (int64_t x = 0; x < kW; ++x) {
      noise = noise * 1664525u + 1013904223u;
      const int n = static_cast<int>(noise >> 28) - 8;
      uint8_t* p = &pixels[(y * kW + x) * 3];
      p[0] = static_cast<uint8_t>(std::min(255, std::max(0, static_cast<int>(x / 4) + n)));
      p[1] = static_cast<uint8_t>(std::min(255, std::max(0, static_cast<int>(y / 3) + n)));
      p[2] = static_cast<uint8_t>(std::min(255, std::max(0, static_cast<int>((x + y) / 7) + n)));
    }
  }
  std::string jpeg;
  std::vector<double> encode = bench::TimeRepeated(30, [&] {
    absl::StatusOr<std::string> e =
        image_codec::EncodeJpeg(pixels.data(), kH, kW, 3, image_codec::JpegEncodeOptions{});
    if (e.ok()) jpeg = *std::move(e);
  });
  if (jpeg.empty()) return absl::InternalError("encoding failed");
  std::printf("jpeg_encode_1024x768_q95: %.2f ms\n", bench::Median(encode));
  std::printf("jpeg_bytes: %zu bytes\n", jpeg.size());

  struct Crop {
    const char* name;
    int64_t y, x, h, w;
  };
  for (const Crop& c : {Crop{"box_30pct", 201, 333, 420, 560}, Crop{"crop_224", 400, 611, 224, 224}}) {
    image_codec::JpegOptions whole;
    std::vector<uint8_t> window(c.h * c.w * 3);
    std::vector<double> full = bench::TimeRepeated(30, [&] {
      absl::StatusOr<image_codec::DecodedImage> img = image_codec::DecodeJpeg(jpeg, whole);
      if (!img.ok()) return;
      for (int64_t r = 0; r < c.h; ++r) {
        std::memcpy(&window[r * c.w * 3], &img->pixels[((c.y + r) * kW + c.x) * 3], c.w * 3);
      }
    });
    image_codec::JpegOptions crop;
    crop.crop = true;
    crop.crop_y = c.y;
    crop.crop_x = c.x;
    crop.crop_height = c.h;
    crop.crop_width = c.w;
    std::vector<double> cropped = bench::TimeRepeated(30, [&] {
      absl::StatusOr<image_codec::DecodedImage> img = image_codec::DecodeJpeg(jpeg, crop);
      if (!img.ok()) std::abort();
    });
    const double f = bench::Median(full), k = bench::Median(cropped);
    std::printf("jpeg_decode_then_crop_%s: %.2f ms\n", c.name, f);
    std::printf("jpeg_decode_and_crop_%s: %.2f ms\n", c.name, k);
    std::printf("jpeg_decode_and_crop_%s_speedup: %.2f x\n", c.name, f / k);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "jpeg_crop", sluice::Run);
}
