// CPU kernels of the image decoders and encoders (ops/image/image_codec_ops.h)
// over ops/image/internal/image_codec.h.
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/image/image_codec_ops.h"
#include "ops/image/internal/image_codec.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using image_codec::DecodedImage;
using image_codec::Format;

absl::StatusOr<const std::string*> Contents(OpKernelContext* ctx) {
  const Tensor& t = ctx->input(0);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("contents must be scalar, got shape ", t.shape().DebugString()));
  }
  return &t.scalar<std::string>();
}

absl::StatusOr<image_codec::JpegOptions> JpegOptionsOf(const OpKernelConstruction& ctx,
                                                        bool decode_jpeg) {
  image_codec::JpegOptions o;
  ASSIGN_OR_RETURN(int64_t channels, ctx.GetAttr<int64_t>("channels"));
  o.channels = static_cast<int>(channels);
  if (!decode_jpeg) return o;
  ASSIGN_OR_RETURN(int64_t ratio, ctx.GetAttr<int64_t>("ratio"));
  o.ratio = static_cast<int>(ratio);
  if (o.ratio != 1 && o.ratio != 2 && o.ratio != 4 && o.ratio != 8) {
    return absl::InvalidArgumentError(absl::StrCat("ratio must be 1, 2, 4, or 8, got ", ratio));
  }
  if (channels != 0 && channels != 1 && channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("channels must be 0, 1, or 3, got ", channels));
  }
  ASSIGN_OR_RETURN(o.fancy_upscaling, ctx.GetAttr<bool>("fancy_upscaling"));
  ASSIGN_OR_RETURN(o.try_recover_truncated, ctx.GetAttr<bool>("try_recover_truncated"));
  ASSIGN_OR_RETURN(o.acceptable_fraction, ctx.GetAttr<float>("acceptable_fraction"));
  ASSIGN_OR_RETURN(std::string dct, ctx.GetAttr<std::string>("dct_method"));
  if (!dct.empty() && dct != "INTEGER_FAST" && dct != "INTEGER_ACCURATE") {
    return absl::InvalidArgumentError(
        "dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}");
  }
  o.integer_accurate = dct == "INTEGER_ACCURATE";
  return o;
}

// Writes a decoded image (8 or 16 bits) as `dtype`, scaling like
// TensorFlow's convert_image_dtype.
absl::Status Emit(OpKernelContext* ctx, const DecodedImage& img, DataType dtype) {
  ASSIGN_OR_RETURN(Tensor * out,
                   ctx->allocate_output(0, TensorShape({img.height, img.width, img.channels})));
  const int64_t n = img.height * img.width * img.channels;
  const uint8_t* p8 = img.pixels.data();
  const uint16_t* p16 = reinterpret_cast<const uint16_t*>(img.pixels.data());
  switch (dtype) {
    case DT_UINT8:
      if (img.bits == 8) {
        std::memcpy(out->raw_data(), p8, n);
      } else {
        for (int64_t i = 0; i < n; ++i) out->data<uint8_t>()[i] = p16[i] >> 8;
      }
      break;
    case DT_UINT16:
      if (img.bits == 16) {
        std::memcpy(out->raw_data(), p16, n * 2);
      } else {
        for (int64_t i = 0; i < n; ++i) out->data<uint16_t>()[i] = p8[i] * 257;
      }
      break;
    default:
      for (int64_t i = 0; i < n; ++i) {
        out->data<float>()[i] = img.bits == 8 ? p8[i] * (1.0f / 255) : p16[i] * (1.0f / 65535);
      }
  }
  return absl::OkStatus();
}

// DecodeJpeg, and DecodeAndCropJpeg (`crop`), whose crop_window is
// [y, x, height, width] of the (scaled) image.
class DecodeJpegOp : public OpKernel {
 public:
  explicit DecodeJpegOp(bool crop) : crop_(crop) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(options_, JpegOptionsOf(ctx, true));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* data, Contents(ctx));
    image_codec::JpegOptions o = options_;
    if (crop_) {
      const Tensor& window = ctx->input(1);
      if (window.dims() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("crop_window must be 1-D, got shape ", window.shape().DebugString()));
      }
      if (window.dim_size(0) != 4) {
        return absl::InvalidArgumentError(absl::StrCat(
            "crop_window must have four elements [y, x, height, width], got shape ",
            window.shape().DebugString()));
      }
      const int32_t* w = window.data<int32_t>();
      o.crop = true;
      o.crop_y = w[0];
      o.crop_x = w[1];
      o.crop_height = w[2];
      o.crop_width = w[3];
    }
    ASSIGN_OR_RETURN(DecodedImage img, image_codec::DecodeJpeg(*data, o));
    return Emit(ctx, img, DT_UINT8);
  }

 private:
  const bool crop_;
  image_codec::JpegOptions options_;
};

class ExtractJpegShapeOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("output_type"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* data, Contents(ctx));
    ASSIGN_OR_RETURN(auto shape, image_codec::JpegShape(*data));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({3})));
    for (int i = 0; i < 3; ++i) {
      if (dtype_ == DT_INT32) {
        out->data<int32_t>()[i] = static_cast<int32_t>(shape[i]);
      } else {
        out->data<int64_t>()[i] = shape[i];
      }
    }
    return absl::OkStatus();
  }

 private:
  DataType dtype_ = DT_INT32;
};

// The channels `format` asks for ("" takes the image's: 1 or 3).
absl::StatusOr<int> EncodeChannels(const Tensor& image, const std::string& format) {
  if (image.dims() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("image must be 3-dimensional, got shape ", image.shape().DebugString()));
  }
  const int64_t channels = image.dim_size(2);
  const int64_t want = format == "grayscale" ? 1 : format == "rgb" ? 3 : channels;
  if (want != channels || (channels != 1 && channels != 3)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image must have ", format.empty() ? "1 or 3" : absl::StrCat(want),
        " channels", format.empty() ? "" : absl::StrCat(" for format '", format, "'"), ", got ",
        image.shape().DebugString()));
  }
  return static_cast<int>(channels);
}

absl::Status EmitJpeg(OpKernelContext* ctx, const Tensor& image, int channels,
                      const image_codec::JpegEncodeOptions& o) {
  ASSIGN_OR_RETURN(std::string jpeg,
                   image_codec::EncodeJpeg(image.data<uint8_t>(), image.dim_size(0),
                                           image.dim_size(1), channels, o));
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
  out->scalar<std::string>() = std::move(jpeg);
  return absl::OkStatus();
}

class EncodeJpegOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(format_, ctx.GetAttr<std::string>("format"));
    ASSIGN_OR_RETURN(int64_t quality, ctx.GetAttr<int64_t>("quality"));
    if (quality < 0 || quality > 100) {
      return absl::InvalidArgumentError(absl::StrCat("quality must be in [0,100], got ", quality));
    }
    options_.quality = static_cast<int>(quality);
    ASSIGN_OR_RETURN(options_.progressive, ctx.GetAttr<bool>("progressive"));
    ASSIGN_OR_RETURN(options_.optimize_size, ctx.GetAttr<bool>("optimize_size"));
    ASSIGN_OR_RETURN(options_.chroma_downsampling, ctx.GetAttr<bool>("chroma_downsampling"));
    ASSIGN_OR_RETURN(std::string unit, ctx.GetAttr<std::string>("density_unit"));
    if (unit != "in" && unit != "cm") {
      return absl::InvalidArgumentError(
          absl::StrCat("density_unit must be 'in' or 'cm', got '", unit, "'"));
    }
    options_.density_unit = unit == "in" ? 1 : 2;
    ASSIGN_OR_RETURN(int64_t x, ctx.GetAttr<int64_t>("x_density"));
    ASSIGN_OR_RETURN(int64_t y, ctx.GetAttr<int64_t>("y_density"));
    if (x < 0 || x > 65535 || y < 0 || y > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("x_density and y_density must be in [0, 65535], got ", x, " and ", y));
    }
    options_.x_density = static_cast<int>(x);
    options_.y_density = static_cast<int>(y);
    ASSIGN_OR_RETURN(options_.xmp_metadata, ctx.GetAttr<std::string>("xmp_metadata"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& image = ctx->input(0);
    ASSIGN_OR_RETURN(int channels, EncodeChannels(image, format_));
    return EmitJpeg(ctx, image, channels, options_);
  }

 private:
  std::string format_;
  image_codec::JpegEncodeOptions options_;
};

// EncodeJpegVariableQuality: the quality a scalar input, the rest defaults.
class EncodeJpegVariableQualityOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& image = ctx->input(0);
    const Tensor& quality = ctx->input(1);
    if (quality.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("quality must be a scalar, got shape ", quality.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(int channels, EncodeChannels(image, ""));
    image_codec::JpegEncodeOptions o;
    o.quality = quality.scalar<int32_t>();
    return EmitJpeg(ctx, image, channels, o);
  }
};

class DecodePngOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(channels_, ctx.GetAttr<int64_t>("channels"));
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    if (channels_ < 0 || channels_ > 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("channels must be 0, 1, 2, 3, or 4, got ", channels_));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* data, Contents(ctx));
    ASSIGN_OR_RETURN(DecodedImage img, image_codec::DecodePng(*data, static_cast<int>(channels_),
                                                              dtype_ == DT_UINT8 ? 8 : 16));
    return Emit(ctx, img, dtype_);
  }

 private:
  int64_t channels_ = 0;
  DataType dtype_ = DT_UINT8;
};

class DecodeBmpOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(channels_, ctx.GetAttr<int64_t>("channels"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* data, Contents(ctx));
    if (image_codec::Classify(*data) != Format::kBmp) {
      return absl::InvalidArgumentError(
          "DecodeBmp: not a BMP file (use decode_png, decode_jpeg or decode_image)");
    }
    ASSIGN_OR_RETURN(DecodedImage img, image_codec::DecodeBmp(*data, static_cast<int>(channels_)));
    return Emit(ctx, img, DT_UINT8);
  }

 private:
  int64_t channels_ = 0;
};

class EncodePngOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(compression_, ctx.GetAttr<int64_t>("compression"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& image = ctx->input(0);
    const int rank = image.dims();
    if (rank < 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "image must be at least 3-dimensional, got shape ", image.shape().DebugString()));
    }
    // Leading dimensions are a batch: one PNG per [h, w, c] image.
    std::vector<int64_t> batch;
    for (int i = 0; i + 3 < rank; ++i) batch.push_back(image.dim_size(i));
    const int64_t h = image.dim_size(rank - 3), w = image.dim_size(rank - 2);
    const int64_t c = image.dim_size(rank - 1);
    const int bits = image.dtype() == DT_UINT8 ? 8 : 16;
    const size_t image_bytes = static_cast<size_t>(h * w * c * bits / 8);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(batch)));
    const char* data = static_cast<const char*>(image.raw_data());
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      ASSIGN_OR_RETURN(out->data<std::string>()[i],
                       image_codec::EncodePng(data + i * image_bytes, h, w, static_cast<int>(c),
                                              bits, static_cast<int>(compression_)));
    }
    return absl::OkStatus();
  }

 private:
  int64_t compression_ = -1;
};

class DecodeImageOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(jpeg_, JpegOptionsOf(ctx, false));
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    if (jpeg_.channels < 0 || jpeg_.channels > 4 || jpeg_.channels == 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("channels must be 0, 1, 3 or 4, got ", jpeg_.channels));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* data, Contents(ctx));
    switch (image_codec::Classify(*data)) {
      case Format::kJpeg: {
        if (jpeg_.channels == 4) {
          return absl::InvalidArgumentError("JPEG does not support 4 channels");
        }
        ASSIGN_OR_RETURN(DecodedImage img, image_codec::DecodeJpeg(*data, jpeg_));
        return Emit(ctx, img, dtype_);
      }
      case Format::kPng: {
        ASSIGN_OR_RETURN(DecodedImage img,
                         image_codec::DecodePng(*data, jpeg_.channels, dtype_ == DT_UINT8 ? 8 : 16));
        return Emit(ctx, img, dtype_);
      }
      case Format::kGif:
        return absl::UnimplementedError("DecodeImage: GIF images are not supported (JPEG, PNG are)");
      case Format::kBmp: {
        ASSIGN_OR_RETURN(DecodedImage img, image_codec::DecodeBmp(*data, jpeg_.channels));
        return Emit(ctx, img, dtype_);
      }
      case Format::kUnknown:
        break;
    }
    return absl::InvalidArgumentError(
        "Unknown image file format. One of JPEG, PNG, GIF, BMP required.");
  }

 private:
  image_codec::JpegOptions jpeg_;
  DataType dtype_ = DT_UINT8;
};

}  // namespace

void RegisterImageCodecKernels(KernelRegistry* k) {
  k->Register(KernelDef("DecodeJpeg", kDeviceTypeCpu),
              [] { return std::make_unique<DecodeJpegOp>(/*crop=*/false); });
  k->Register<DecodePngOp>(KernelDef("DecodePng", kDeviceTypeCpu));
  k->Register<EncodePngOp>(KernelDef("EncodePng", kDeviceTypeCpu));
  k->Register<DecodeBmpOp>(KernelDef("DecodeBmp", kDeviceTypeCpu));
  k->Register<DecodeImageOp>(KernelDef("DecodeImage", kDeviceTypeCpu));
  k->Register(KernelDef("DecodeAndCropJpeg", kDeviceTypeCpu),
              [] { return std::make_unique<DecodeJpegOp>(/*crop=*/true); });
  k->Register<ExtractJpegShapeOp>(KernelDef("ExtractJpegShape", kDeviceTypeCpu));
  k->Register<EncodeJpegOp>(KernelDef("EncodeJpeg", kDeviceTypeCpu));
  k->Register<EncodeJpegVariableQualityOp>(KernelDef("EncodeJpegVariableQuality", kDeviceTypeCpu));
}

}  // namespace sluice
