// Image decoders and encoders with TensorFlow's names, inputs and attrs
// (its core/ops/image_ops.cc): DecodeJpeg, DecodeAndCropJpeg,
// ExtractJpegShape, EncodeJpeg, EncodeJpegVariableQuality, DecodePng,
// EncodePng and DecodeImage, on Debian's libjpeg-turbo and libpng
// (ops/image/internal/image_codec.h). CPU kernels in
// image_codec_kernels.cc; no gradients.
//
//   Output img = ops::DecodeJpeg(s, contents, {.channels = 3});   // uint8 [h, w, 3]
//   Output png = ops::EncodePng(s, img);                          // string scalar
//   Output any = ops::DecodeImage(s, contents, {.channels = 3, .dtype = DT_FLOAT});
//
// Semantics are TensorFlow's: JPEG decodes with INTEGER_FAST unless
// dct_method is INTEGER_ACCURATE, ratio 1/2/4/8 downscales while decoding;
// PNG channels 0 keep what the file has (a palette gives RGB or RGBA),
// 16-bit files read as uint8 keep the high byte, 8-bit files read as
// uint16 are scaled by 257, RGB to gray uses 0.299/0.587/0.114;
// DecodeAndCropJpeg decodes only the window's iMCU columns and skips the
// rows above it (libjpeg-turbo's jpeg_crop_scanline / jpeg_skip_scanlines,
// as TensorFlow does), so its pixels are TensorFlow's: with fancy
// upscaling, chroma near the window's sides can differ from a cropped full
// decode by a few levels (exactly equal without it); EncodeJpeg takes TensorFlow's
// settings (quality, 4:2:0 unless chroma_downsampling is false, JFIF
// density, progressive, optimized Huffman tables, an XMP APP1 marker);
// DecodeImage picks the decoder by the leading bytes (uint16 output of a
// JPEG scales by 257; float output divides by the type's maximum). BMP
// decodes too (DecodeBmp, and DecodeImage by its "BM" bytes: gray, BGR,
// BGRA as TensorFlow reads them); GIF is Unimplemented. Errors
// (InvalidArgument) say what is wrong with the bytes ("not a JPEG file: starts with 0x89 0x50 0x4e 0x47", a truncated
// JPEG without try_recover_truncated, libpng's message for a bad CRC, a
// crop window not inside the image, an image to encode with other than 1 or
// 3 channels or a quality outside [0, 100]...);
// no input crashes. Thread-safety: as Scope; kernels are stateless.
// Ownership: nodes belong to the scope's graph.
#ifndef SLUICE_OPS_IMAGE_IMAGE_CODEC_OPS_H_
#define SLUICE_OPS_IMAGE_IMAGE_CODEC_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterImageCodecOps(OpRegistry* ops);
void RegisterImageCodecKernels(KernelRegistry* kernels);

namespace ops {

struct DecodeJpegAttrs {
  int64_t channels = 0;
  int64_t ratio = 1;
  bool fancy_upscaling = true;
  bool try_recover_truncated = false;
  float acceptable_fraction = 1.0f;
  std::string dct_method;  // "", "INTEGER_FAST" or "INTEGER_ACCURATE"
};
Output DecodeJpeg(const Scope& scope, Input contents, const DecodeJpegAttrs& attrs = {},
                  std::source_location loc = std::source_location::current());

struct DecodePngAttrs {
  int64_t channels = 0;
  DataType dtype = DT_UINT8;  // or DT_UINT16
};
Output DecodePng(const Scope& scope, Input contents, const DecodePngAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());

struct EncodePngAttrs {
  int64_t compression = -1;
};
Output EncodePng(const Scope& scope, Input image, const EncodePngAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());

struct DecodeImageAttrs {
  int64_t channels = 0;
  DataType dtype = DT_UINT8;  // DT_UINT8, DT_UINT16 or DT_FLOAT
  bool expand_animations = true;
};
Output DecodeImage(const Scope& scope, Input contents, const DecodeImageAttrs& attrs = {},
                   std::source_location loc = std::source_location::current());

// crop_window: int32 [y, x, height, width] of the (scaled) image.
Output DecodeAndCropJpeg(const Scope& scope, Input contents, Input crop_window,
                         const DecodeJpegAttrs& attrs = {},
                         std::source_location loc = std::source_location::current());

// int32 or int64 [height, width, channels] from the header.
Output ExtractJpegShape(const Scope& scope, Input contents, DataType output_type = DT_INT32,
                        std::source_location loc = std::source_location::current());

struct EncodeJpegAttrs {
  std::string format;  // "", "grayscale" or "rgb"
  int64_t quality = 95;
  bool progressive = false;
  bool optimize_size = false;
  bool chroma_downsampling = true;
  std::string density_unit = "in";  // or "cm"
  int64_t x_density = 300;
  int64_t y_density = 300;
  std::string xmp_metadata;
};
Output EncodeJpeg(const Scope& scope, Input image, const EncodeJpegAttrs& attrs = {},
                  std::source_location loc = std::source_location::current());
Output EncodeJpegVariableQuality(const Scope& scope, Input images, Input quality,
                                 std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_IMAGE_CODEC_OPS_H_
