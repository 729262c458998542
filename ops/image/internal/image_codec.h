// JPEG and PNG in memory, through Debian's libjpeg-turbo and libpng (and BMP), with
// the transforms TensorFlow's decoders apply (its core/lib/jpeg/jpeg_mem.cc
// and core/lib/png/png_io.cc): the image kernels (image_codec_kernels.cc)
// and the image fuzz seeds use these.
//
//   JpegOptions o;  o.channels = 3;  o.ratio = 2;
//   ASSIGN_OR_RETURN(DecodedImage img, DecodeJpeg(bytes, o));
//   // img.pixels: height * width * channels bytes, row-major HWC
//   ASSIGN_OR_RETURN(std::string png, EncodePng(data, h, w, c, /*bits=*/8, -1));
//   ASSIGN_OR_RETURN(std::string jpg, EncodeJpeg(data, h, w, c, JpegEncodeOptions{}));
//
// Errors: InvalidArgument naming what is wrong with the data ("not a JPEG
// file: starts with 0x89 0x50", the library's message for corrupt data,
// "JPEG data is truncated ..."); no input crashes or aborts (the
// libraries' errors are caught with longjmp back to the call). Images over
// 2^29 pixels are refused. Thread-safe: no shared state. Ownership: a
// DecodedImage owns its pixels; inputs are only borrowed for the call.
#ifndef SLUICE_OPS_IMAGE_INTERNAL_IMAGE_CODEC_H_
#define SLUICE_OPS_IMAGE_INTERNAL_IMAGE_CODEC_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace image_codec {

struct DecodedImage {
  int64_t height = 0, width = 0, channels = 0;
  int bits = 8;                 // 8: one byte per sample; 16: two (host order)
  std::vector<uint8_t> pixels;  // height * width * channels * bits / 8 bytes
};

enum class Format { kUnknown, kJpeg, kPng, kGif, kBmp };
// By the leading bytes, as TensorFlow's DecodeImage tells them apart.
Format Classify(absl::string_view data);

struct JpegOptions {
  int channels = 0;  // 0: as stored (1 or 3); 1: grayscale; 3: RGB
  int ratio = 1;     // 1, 2, 4 or 8: downscale while decoding
  bool fancy_upscaling = true;
  bool try_recover_truncated = false;
  float acceptable_fraction = 1.0f;
  bool integer_accurate = false;  // dct_method INTEGER_ACCURATE; else INTEGER_FAST
  // Decode only this window of the (scaled) image, as TensorFlow's
  // DecodeAndCropJpeg does; it must lie inside the image.
  bool crop = false;
  int64_t crop_y = 0, crop_x = 0, crop_height = 0, crop_width = 0;
};
absl::StatusOr<DecodedImage> DecodeJpeg(absl::string_view data, const JpegOptions& options);

// {height, width, components} from the header alone (components: 1, 3, or
// 4 for CMYK), as a default decode would output them.
absl::StatusOr<std::array<int64_t, 3>> JpegShape(absl::string_view data);

// TensorFlow's jpeg::CompressFlags that EncodeJpeg exposes.
struct JpegEncodeOptions {
  int quality = 95;  // 0..100
  bool progressive = false;
  bool optimize_size = false;
  bool chroma_downsampling = true;  // 4:2:0; false: 4:4:4
  int density_unit = 1;             // 1: dots per inch, 2: per cm
  int x_density = 300, y_density = 300;
  std::string xmp_metadata;  // written in an APP1 marker when not empty
};
// `pixels`: height * width * channels bytes (channels 1 or 3), row-major.
absl::StatusOr<std::string> EncodeJpeg(const uint8_t* pixels, int64_t height, int64_t width,
                                       int channels, const JpegEncodeOptions& options);

// channels: 0 (as stored), 1, 2, 3 or 4; bits: 8 or 16 (of the output).
absl::StatusOr<DecodedImage> DecodePng(absl::string_view data, int channels, int bits);

// Uncompressed BMP as TensorFlow reads it: 8-bit gray, 24-bit BGR or 32-bit
// BGRA pixels (rows padded to 4 bytes, bottom-up unless the height is
// negative) from the pixel offset in the header; channels 0 (as stored), 3
// or 4 (gray repeated, opaque alpha added or alpha dropped). Why not a
// library: Debian has none for BMP short of a whole imaging stack, and
// TensorFlow's checks (the file size must match the rows exactly) are part
// of the format it accepts.
absl::StatusOr<DecodedImage> DecodeBmp(absl::string_view data, int channels);

// `data`: height * width * channels samples of `bits` (8 or 16, host order).
// compression: -1 (zlib's default) or 0..9.
absl::StatusOr<std::string> EncodePng(const void* data, int64_t height, int64_t width,
                                      int channels, int bits, int compression);

}  // namespace image_codec
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_INTERNAL_IMAGE_CODEC_H_
