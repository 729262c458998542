#include "ops/image/internal/image_codec.h"

#include <algorithm>
#include <array>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sluice {
namespace image_codec {
namespace {

constexpr int64_t kMaxPixels = int64_t{1} << 29;

std::string Leading(absl::string_view data) {
  std::string s;
  for (size_t i = 0; i < data.size() && i < 4; ++i) {
    absl::StrAppend(&s, i ? " " : "", absl::StrFormat("0x%02x", static_cast<uint8_t>(data[i])));
  }
  return s.empty() ? "nothing (empty)" : s;
}

// ---- JPEG ----

struct JpegError {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr cinfo) {
  JpegError* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void JpegQuiet(j_common_ptr, int) {}  // warnings: corrupt data shows in the result

// A source over the caller's bytes; past their end it hands libjpeg a fake
// end-of-image marker and notes that the data was truncated.
struct JpegSource {
  jpeg_source_mgr pub;
  const uint8_t* data;
  size_t size;
  bool truncated = false;
};

const JOCTET kFakeEoi[2] = {0xFF, JPEG_EOI};

void SrcInit(j_decompress_ptr) {}
boolean SrcFill(j_decompress_ptr cinfo) {
  JpegSource* src = reinterpret_cast<JpegSource*>(cinfo->src);
  src->truncated = true;
  src->pub.next_input_byte = kFakeEoi;
  src->pub.bytes_in_buffer = 2;
  return TRUE;
}
void SrcSkip(j_decompress_ptr cinfo, long n) {
  JpegSource* src = reinterpret_cast<JpegSource*>(cinfo->src);
  if (n <= 0) return;
  if (static_cast<size_t>(n) > src->pub.bytes_in_buffer) {
    SrcFill(cinfo);
    return;
  }
  src->pub.next_input_byte += n;
  src->pub.bytes_in_buffer -= n;
}
void SrcTerm(j_decompress_ptr) {}

// Error handler and in-memory source for decompressing `data`.
void PrepareDecompress(absl::string_view data, jpeg_decompress_struct* cinfo, JpegError* err,
                       JpegSource* src) {
  std::memset(cinfo, 0, sizeof(*cinfo));
  cinfo->err = jpeg_std_error(&err->pub);
  err->pub.error_exit = JpegErrorExit;
  err->pub.emit_message = JpegQuiet;
  err->message[0] = '\0';
  src->pub.init_source = SrcInit;
  src->pub.fill_input_buffer = SrcFill;
  src->pub.skip_input_data = SrcSkip;
  src->pub.resync_to_restart = jpeg_resync_to_restart;
  src->pub.term_source = SrcTerm;
  src->pub.next_input_byte = reinterpret_cast<const JOCTET*>(data.data());
  src->pub.bytes_in_buffer = data.size();
  src->data = reinterpret_cast<const uint8_t*>(data.data());
  src->size = data.size();
}

// The part of DecodeJpeg between setjmp and the end: no objects with
// destructors live here except `out` and `scratch`, which the caller owns.
bool DecodeJpegRaw(jpeg_decompress_struct* cinfo, JpegError* err, JpegSource* src,
                   const JpegOptions& o, DecodedImage* out, std::vector<JSAMPLE>* scratch,
                   std::string* error, int64_t* lines_read) {
  if (setjmp(err->jump)) {
    *error = err->message;
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  jpeg_create_decompress(cinfo);
  cinfo->src = &src->pub;
  jpeg_read_header(cinfo, TRUE);
  if (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK) {
    *error = "CMYK JPEG images are not supported";
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  const int channels = o.channels == 0 ? cinfo->num_components : o.channels;
  if (channels != 1 && channels != 3) {
    *error = absl::StrCat("a JPEG of ", cinfo->num_components, " components");
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  cinfo->out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  cinfo->do_fancy_upsampling = o.fancy_upscaling ? TRUE : FALSE;
  cinfo->scale_num = 1;
  cinfo->scale_denom = o.ratio;
  cinfo->dct_method = o.integer_accurate ? JDCT_ISLOW : JDCT_IFAST;
  jpeg_calc_output_dimensions(cinfo);
  if (static_cast<int64_t>(cinfo->output_width) * cinfo->output_height > kMaxPixels) {
    *error = absl::StrCat("image of ", cinfo->output_width, "x", cinfo->output_height,
                          " pixels is too large");
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  jpeg_start_decompress(cinfo);
  JDIMENSION skipped = 0;  // rows above a crop window
  size_t shift = 0;        // bytes left of the crop window in a decoded row
  out->height = cinfo->output_height;
  out->width = cinfo->output_width;
  if (o.crop) {
    const int64_t w = cinfo->output_width, h = cinfo->output_height;
    if (o.crop_width <= 0 || o.crop_height <= 0 || o.crop_x < 0 || o.crop_y < 0 ||
        o.crop_x + o.crop_width > w || o.crop_y + o.crop_height > h) {
      *error = absl::StrCat("crop window [y=", o.crop_y, ", x=", o.crop_x, ", h=", o.crop_height,
                            ", w=", o.crop_width, "] is not inside the ", h, "x", w, " image");
      jpeg_destroy_decompress(cinfo);
      return false;
    }
    // As TensorFlow does: libjpeg-turbo decodes whole iMCU columns (the
    // window's left edge moves left to one) and skips the rows above, so
    // only the window's blocks are decoded.
    JDIMENSION x = static_cast<JDIMENSION>(o.crop_x);
    JDIMENSION cols = static_cast<JDIMENSION>(o.crop_width);
    jpeg_crop_scanline(cinfo, &x, &cols);
    shift = static_cast<size_t>(o.crop_x - x) * channels;
    skipped = jpeg_skip_scanlines(cinfo, static_cast<JDIMENSION>(o.crop_y));
    out->height = o.crop_height;
    out->width = o.crop_width;
  }
  out->channels = channels;
  const size_t stride = static_cast<size_t>(out->width) * channels;
  out->pixels.assign(stride * out->height, 0);
  // A crop reads each row whole (cinfo->output_width, from the aligned left
  // edge) into `row_buffer` and keeps the window's part.
  std::vector<JSAMPLE>& row_buffer = *scratch;
  row_buffer.assign(o.crop ? static_cast<size_t>(cinfo->output_width) * channels : 0, 0);
  const JDIMENSION end = skipped + static_cast<JDIMENSION>(out->height);
  while (cinfo->output_scanline < end) {
    const size_t r = cinfo->output_scanline - skipped;
    JSAMPROW row = o.crop ? row_buffer.data() : out->pixels.data() + stride * r;
    if (jpeg_read_scanlines(cinfo, &row, 1) != 1) break;
    if (o.crop) std::memcpy(out->pixels.data() + stride * r, row_buffer.data() + shift, stride);
    if (!src->truncated) *lines_read = cinfo->output_scanline - skipped;
  }
  if (!src->truncated) *lines_read = cinfo->output_scanline - skipped;
  if (o.crop && cinfo->output_scanline == end && end < cinfo->output_height) {
    jpeg_skip_scanlines(cinfo, cinfo->output_height - end);  // libjpeg wants every row passed
  }
  if (cinfo->output_scanline == cinfo->output_height) jpeg_finish_decompress(cinfo);
  jpeg_destroy_decompress(cinfo);
  return true;
}

// The header's dimensions and components as a decode with default options
// would output them.
bool JpegShapeRaw(jpeg_decompress_struct* cinfo, JpegError* err, JpegSource* src,
                  int64_t shape[3], std::string* error) {
  if (setjmp(err->jump)) {
    *error = err->message;
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  jpeg_create_decompress(cinfo);
  cinfo->src = &src->pub;
  jpeg_read_header(cinfo, TRUE);
  // What jpeg_start_decompress would set (TensorFlow calls it), without
  // allocating the decoder.
  jpeg_calc_output_dimensions(cinfo);
  shape[0] = cinfo->output_height;
  shape[1] = cinfo->output_width;
  shape[2] = cinfo->output_components;
  jpeg_destroy_decompress(cinfo);
  return true;
}

// jpeg_mem_dest's buffer (malloc'd by libjpeg) is returned through
// `buffer` even on failure, for the caller to free.
bool EncodeJpegRaw(jpeg_compress_struct* cinfo, JpegError* err, const uint8_t* pixels,
                   int64_t height, int64_t width, int channels, const JpegEncodeOptions& o,
                   const std::string& xmp_packet, unsigned char** buffer, unsigned long* size,
                   std::string* error) {
  if (setjmp(err->jump)) {
    *error = err->message;
    jpeg_destroy_compress(cinfo);
    return false;
  }
  jpeg_create_compress(cinfo);
  jpeg_mem_dest(cinfo, buffer, size);
  cinfo->image_width = static_cast<JDIMENSION>(width);
  cinfo->image_height = static_cast<JDIMENSION>(height);
  cinfo->input_components = channels;
  cinfo->in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(cinfo);
  if (o.optimize_size) cinfo->optimize_coding = TRUE;
  cinfo->density_unit = static_cast<UINT8>(o.density_unit);
  cinfo->X_density = static_cast<UINT16>(o.x_density);
  cinfo->Y_density = static_cast<UINT16>(o.y_density);
  jpeg_set_quality(cinfo, o.quality, TRUE);
  if (o.progressive) jpeg_simple_progression(cinfo);
  if (!o.chroma_downsampling) {
    for (int i = 0; i < cinfo->num_components; ++i) {
      cinfo->comp_info[i].h_samp_factor = 1;
      cinfo->comp_info[i].v_samp_factor = 1;
    }
  }
  jpeg_start_compress(cinfo, TRUE);
  if (!xmp_packet.empty()) {
    jpeg_write_marker(cinfo, JPEG_APP0 + 1, reinterpret_cast<const JOCTET*>(xmp_packet.data()),
                      static_cast<unsigned int>(xmp_packet.size()));
  }
  const size_t stride = static_cast<size_t>(width) * channels;
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels + stride * cinfo->next_scanline);
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  jpeg_destroy_compress(cinfo);
  return true;
}

// ---- PNG ----

struct PngReadState {
  const uint8_t* data;
  size_t left;
  char message[256];
};

void PngError(png_structp png, png_const_charp msg) {
  auto* st = static_cast<PngReadState*>(png_get_error_ptr(png));
  if (st != nullptr) std::snprintf(st->message, sizeof(st->message), "%s", msg);
  png_longjmp(png, 1);
}
void PngWarning(png_structp, png_const_charp) {}

void PngRead(png_structp png, png_bytep out, png_size_t n) {
  auto* st = static_cast<PngReadState*>(png_get_io_ptr(png));
  if (n > st->left) png_error(png, "PNG data is truncated");
  std::memcpy(out, st->data, n);
  st->data += n;
  st->left -= n;
}

bool DecodePngRaw(PngReadState* st, int want_channels, int bits, DecodedImage* out,
                  std::string* error) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, st, PngError, PngWarning);
  if (png == nullptr) {
    *error = "png_create_read_struct failed";
    return false;
  }
  // Made before setjmp: a local changed after it is indeterminate after
  // longjmp. png_create_info_struct returns null rather than jumping.
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    *error = "png_create_info_struct failed";
    png_destroy_read_struct(&png, nullptr, nullptr);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    *error = st->message;
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, st, PngRead);
  png_read_info(png, info);
  png_uint_32 width, height;
  int bit_depth, color_type;
  png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, nullptr, nullptr, nullptr);
  if (static_cast<int64_t>(width) * height > kMaxPixels) {
    png_error(png, "image too large");
  }
  const bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  int channels = want_channels;
  if (channels == 0) {
    channels = color_type == PNG_COLOR_TYPE_PALETTE ? (has_trns ? 4 : 3)
                                                    : png_get_channels(png, info);
  }
  const bool has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0;
  if (channels % 2 == 0) {
    if (!has_alpha) {
      if (has_trns) {
        png_set_tRNS_to_alpha(png);
      } else {
        png_set_add_alpha(png, (1 << bit_depth) - 1, PNG_FILLER_AFTER);
      }
    }
  } else if (has_alpha || has_trns) {
    png_set_strip_alpha(png);
  }
  if (bit_depth > 8 && bits == 8) png_set_strip_16(png);
  png_set_packing(png);
  const int passes = png_set_interlace_handling(png);
  if (bits == 16) png_set_swap(png);  // hosts are little-endian
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  const bool is_gray = (color_type & PNG_COLOR_MASK_COLOR) == 0;
  if (is_gray && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (channels < 3) {
    if (!is_gray) png_set_rgb_to_gray(png, 1, 0.299, 0.587);
  } else if (is_gray) {
    png_set_gray_to_rgb(png);
  }
  png_read_update_info(png, info);
  const bool synthesize16 = bit_depth <= 8 && bits == 16;
  const size_t row_bytes = png_get_rowbytes(png, info);
  const size_t out_row = static_cast<size_t>(width) * channels * (bits / 8);
  if (row_bytes != (synthesize16 ? out_row / 2 : out_row)) png_error(png, "unexpected row size");
  out->height = height;
  out->width = width;
  out->channels = channels;
  out->bits = bits;
  out->pixels.assign(out_row * height, 0);
  for (int p = 0; p < passes; ++p) {
    for (png_uint_32 y = 0; y < height; ++y) {
      png_read_row(png, out->pixels.data() + y * out_row, nullptr);
    }
  }
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  if (synthesize16) {  // 8-bit samples to 16: v * 257, from the back of each row
    for (png_uint_32 y = 0; y < height; ++y) {
      uint8_t* row = out->pixels.data() + y * out_row;
      uint16_t* row16 = reinterpret_cast<uint16_t*>(row);
      for (size_t k = out_row / 2; k-- > 0;) row16[k] = static_cast<uint16_t>(row[k] * 257);
    }
  }
  return true;
}

void PngWrite(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<char*>(data), n);
}
void PngFlush(png_structp) {}

bool EncodePngRaw(const uint8_t* data, int64_t height, int64_t width, int channels, int bits,
                  int compression, std::string* out, char* message) {
  PngReadState st{};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &st, PngError, PngWarning);
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);  // before setjmp, as in DecodePngRaw
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    std::snprintf(message, 256, "%s", st.message);
    png_destroy_write_struct(&png, &info);
    return false;
  }
  const int color = channels == 1   ? PNG_COLOR_TYPE_GRAY
                    : channels == 2 ? PNG_COLOR_TYPE_GRAY_ALPHA
                    : channels == 3 ? PNG_COLOR_TYPE_RGB
                                    : PNG_COLOR_TYPE_RGB_ALPHA;
  png_set_write_fn(png, out, PngWrite, PngFlush);
  png_set_compression_level(png, compression < 0 ? Z_DEFAULT_COMPRESSION : compression);
  png_set_compression_mem_level(png, MAX_MEM_LEVEL);
  png_set_IHDR(png, info, width, height, bits, color, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (bits == 16) png_set_swap(png);
  const size_t row_bytes = static_cast<size_t>(width) * channels * bits / 8;
  for (int64_t y = 0; y < height; ++y) {
    png_write_row(png, const_cast<uint8_t*>(data) + y * row_bytes);
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

Format Classify(absl::string_view d) {
  auto starts = [&](absl::string_view p) { return d.substr(0, p.size()) == p; };
  if (starts("\xff\xd8\xff")) return Format::kJpeg;
  if (starts("\x89PNG\r\n\x1a\n")) return Format::kPng;
  if (starts("GIF8")) return Format::kGif;
  if (starts("BM")) return Format::kBmp;
  return Format::kUnknown;
}

absl::StatusOr<DecodedImage> DecodeJpeg(absl::string_view data, const JpegOptions& o) {
  if (o.channels != 0 && o.channels != 1 && o.channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("channels must be 0, 1, or 3 for a JPEG, got ", o.channels));
  }
  if (o.ratio != 1 && o.ratio != 2 && o.ratio != 4 && o.ratio != 8) {
    return absl::InvalidArgumentError(absl::StrCat("ratio must be 1, 2, 4, or 8, got ", o.ratio));
  }
  if (Classify(data) != Format::kJpeg) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a JPEG file: starts with ", Leading(data)));
  }
  jpeg_decompress_struct cinfo;
  JpegError err;
  JpegSource src;
  PrepareDecompress(data, &cinfo, &err, &src);
  DecodedImage out;
  std::string error;
  int64_t lines = 0;
  std::vector<JSAMPLE> scratch;
  if (!DecodeJpegRaw(&cinfo, &err, &src, o, &out, &scratch, &error, &lines)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid JPEG data (", data.size(), " bytes): ", error));
  }
  if (src.truncated) {
    if (!o.try_recover_truncated) {
      return absl::InvalidArgumentError(absl::StrCat(
          "JPEG data is truncated (", data.size(), " bytes; ", lines, " of ", out.height,
          " rows whole); set try_recover_truncated to keep the rows decoded"));
    }
    if (lines < o.acceptable_fraction * out.height) {
      return absl::InvalidArgumentError(
          absl::StrCat("Truncated JPEG: only ", lines, " of ", out.height,
                       " rows decoded, below acceptable_fraction ", o.acceptable_fraction));
    }
    const size_t stride = static_cast<size_t>(out.width) * out.channels;
    std::fill(out.pixels.begin() + lines * stride, out.pixels.end(), 0);
  }
  return out;
}

absl::StatusOr<std::array<int64_t, 3>> JpegShape(absl::string_view data) {
  if (Classify(data) != Format::kJpeg) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a JPEG file: starts with ", Leading(data)));
  }
  jpeg_decompress_struct cinfo;
  JpegError err;
  JpegSource src;
  PrepareDecompress(data, &cinfo, &err, &src);
  std::array<int64_t, 3> shape{};
  std::string error;
  if (!JpegShapeRaw(&cinfo, &err, &src, shape.data(), &error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid JPEG data (", data.size(), " bytes): ", error));
  }
  return shape;
}

absl::StatusOr<std::string> EncodeJpeg(const uint8_t* pixels, int64_t height, int64_t width,
                                       int channels, const JpegEncodeOptions& o) {
  if (height <= 0 || width <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot encode an empty image (", height, "x", width, ") as JPEG"));
  }
  if (height * width >= kMaxPixels) {
    return absl::InvalidArgumentError(
        absl::StrCat("image of ", width, "x", height, " pixels is too large"));
  }
  if (channels != 1 && channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("a JPEG holds 1 or 3 channels, got ", channels));
  }
  if (o.quality < 0 || o.quality > 100) {
    return absl::InvalidArgumentError(absl::StrCat("quality must be in [0,100], got ", o.quality));
  }
  // XMP goes in an APP1 marker after Adobe's namespace and its NUL.
  std::string xmp;
  if (!o.xmp_metadata.empty()) {
    xmp = absl::StrCat("http://ns.adobe.com/xap/1.0/", std::string(1, '\0'), o.xmp_metadata);
  }
  jpeg_compress_struct cinfo;
  std::memset(&cinfo, 0, sizeof(cinfo));
  JpegError err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = JpegErrorExit;
  err.pub.emit_message = JpegQuiet;
  err.message[0] = '\0';
  unsigned char* buffer = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): jpeg_mem_dest's type
  std::string error;
  const bool ok =
      EncodeJpegRaw(&cinfo, &err, pixels, height, width, channels, o, xmp, &buffer, &size, &error);
  std::string out;
  if (ok) out.assign(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  if (!ok) return absl::InvalidArgumentError(absl::StrCat("JPEG encoding failed: ", error));
  return out;
}

absl::StatusOr<DecodedImage> DecodePng(absl::string_view data, int channels, int bits) {
  if (channels < 0 || channels > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("channels must be 0, 1, 2, 3, or 4 for a PNG, got ", channels));
  }
  if (Classify(data) != Format::kPng) {
    return absl::InvalidArgumentError(absl::StrCat("not a PNG file: starts with ", Leading(data)));
  }
  PngReadState st{reinterpret_cast<const uint8_t*>(data.data()), data.size(), {0}};
  DecodedImage out;
  std::string error;
  if (!DecodePngRaw(&st, channels, bits, &out, &error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid PNG data (", data.size(), " bytes): ", error));
  }
  return out;
}

absl::StatusOr<std::string> EncodePng(const void* data, int64_t height, int64_t width,
                                      int channels, int bits, int compression) {
  if (channels < 1 || channels > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("image must have 1, 2, 3, or 4 channels, got ", channels));
  }
  if (compression < -1 || compression > 9) {
    return absl::InvalidArgumentError(
        absl::StrCat("compression should be in [-1,9], got ", compression));
  }
  if (height <= 0 || width <= 0 || height >= (int64_t{1} << 31) || width >= (int64_t{1} << 31)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PNG encoding needs a positive height and width below 2^31, got ", height,
                     "x", width));
  }
  std::string out;
  char message[256] = {0};
  if (!EncodePngRaw(static_cast<const uint8_t*>(data), height, width, channels, bits,
                    compression, &out, message)) {
    return absl::InternalError(absl::StrCat("PNG encoding failed: ", message));
  }
  return out;
}

absl::StatusOr<DecodedImage> DecodeBmp(absl::string_view data, int channels) {
  if (channels != 0 && channels != 3 && channels != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("`channels` must be 0, 3 or 4 for BMP, but got ", channels));
  }
  if (data.size() < 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("Incomplete bmp content, requires at least 32 bytes to find the header "
                     "size, width, height, and bpp, got ",
                     data.size(), " bytes"));
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const auto le32 = [bytes](size_t at) {
    return static_cast<int32_t>(uint32_t{bytes[at]} | uint32_t{bytes[at + 1]} << 8 |
                                uint32_t{bytes[at + 2]} << 16 | uint32_t{bytes[at + 3]} << 24);
  };
  const int64_t header_size = le32(10);
  const int64_t width = le32(18);
  const int64_t height = le32(22);
  const int bpp = static_cast<int16_t>(uint16_t{bytes[28]} | uint16_t{bytes[29]} << 8);
  const int stored = bpp / 8;
  if (stored != 1 && stored != 3 && stored != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Number of channels inherent in the image must be 1, 3 or 4, was ", stored));
  }
  if (width <= 0) return absl::InvalidArgumentError("Width must be positive");
  if (height == 0) return absl::InvalidArgumentError("Height must be nonzero");
  if (header_size < 0) return absl::InvalidArgumentError("header size must be nonnegative");
  const int64_t rows = height < 0 ? -height : height;
  if (width * rows >= std::numeric_limits<int32_t>::max() / 8) {
    return absl::InvalidArgumentError("Total possible pixel bytes must be less than 2^30");
  }
  // Rows are padded to a multiple of 4 bytes.
  const int64_t row_size = (stored * width + 3) / 4 * 4;
  const int64_t size_diff = static_cast<int64_t>(data.size()) - header_size - row_size * rows;
  if (size_diff != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input size should match (header_size + row_size * abs_height) but they differ by ",
        size_diff));
  }
  DecodedImage img;
  img.height = rows;
  img.width = width;
  img.channels = channels != 0 ? channels : stored;
  img.pixels.resize(static_cast<size_t>(rows * width * img.channels));
  const bool top_down = height < 0;
  const uint8_t* px = bytes + header_size;
  for (int64_t i = 0; i < rows; ++i) {
    const uint8_t* row = px + (top_down ? i : rows - 1 - i) * row_size;
    for (int64_t j = 0; j < width; ++j) {
      const uint8_t* in = row + j * stored;
      uint8_t* out = &img.pixels[static_cast<size_t>((i * width + j) * img.channels)];
      if (stored == 1) {
        for (int64_t c = 0; c < std::min<int64_t>(img.channels, 3); ++c) out[c] = in[0];
      } else {  // BGR(A) -> RGB(A)
        out[0] = in[2];
        if (img.channels > 1) {
          out[1] = in[1];
          out[2] = in[0];
        }
      }
      if (img.channels == 4) out[3] = stored == 4 ? in[3] : 255;
    }
  }
  return img;
}

}  // namespace image_codec
}  // namespace sluice
