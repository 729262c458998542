// The JPEG, PNG and BMP decoders (ops/image/internal/image_codec.h:
// libjpeg-turbo and libpng behind setjmp, BMP by hand) on arbitrary bytes: no crash, no leak; what a
// decoder returns has the size its dimensions say.
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "fuzz/fuzz_target.h"
#include "ops/image/internal/image_codec.h"

namespace ic = sluice::image_codec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto check = [](const absl::StatusOr<ic::DecodedImage>& img) {
    if (img.ok() && static_cast<int64_t>(img->pixels.size()) !=
                        img->height * img->width * img->channels * (img->bits / 8)) {
      std::abort();
    }
  };
  ic::JpegOptions o;
  check(ic::DecodeJpeg(bytes, o));
  o.try_recover_truncated = true;
  o.acceptable_fraction = 0.5f;
  o.ratio = 2;
  o.channels = 1;
  check(ic::DecodeJpeg(bytes, o));
  check(ic::DecodePng(bytes, 0, 8));
  check(ic::DecodePng(bytes, 3, 16));
  check(ic::DecodeBmp(bytes, 0));
  check(ic::DecodeBmp(bytes, 4));
  return 0;
}
