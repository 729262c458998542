#include "ops/io/internal/summary_values.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/audio/internal/wav.h"
#include "ops/image/internal/image_codec.h"
#include "ops/io/histogram.h"

namespace sluice {
namespace summary {
namespace {

using ::tensorflow::Summary;

double AsDouble(Half v) { return v.ToFloat(); }
double AsDouble(BFloat16 v) { return v.ToFloat(); }
template <typename T>
double AsDouble(T v) {
  return static_cast<double>(v);
}

// Every element of `t` as a double, for the element types summaries take.
absl::StatusOr<std::vector<double>> Doubles(const Tensor& t, int64_t limit) {
  const int64_t n = std::min(t.NumElements(), limit);
  std::vector<double> out(static_cast<size_t>(n));
  auto fill = [&](auto* data) {
    for (int64_t i = 0; i < n; ++i) out[i] = AsDouble(data[i]);
  };
  switch (t.dtype()) {
    case DT_BOOL: fill(t.data<bool>()); break;
    case DT_INT8: fill(t.data<int8_t>()); break;
    case DT_INT16: fill(t.data<int16_t>()); break;
    case DT_INT32: fill(t.data<int32_t>()); break;
    case DT_INT64: fill(t.data<int64_t>()); break;
    case DT_UINT8: fill(t.data<uint8_t>()); break;
    case DT_UINT16: fill(t.data<uint16_t>()); break;
    case DT_HALF: fill(t.data<Half>()); break;
    case DT_BFLOAT16: fill(t.data<BFloat16>()); break;
    case DT_FLOAT: fill(t.data<float>()); break;
    case DT_DOUBLE: fill(t.data<double>()); break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("summaries of ", DataTypeName(t.dtype()), " tensors"));
  }
  return out;
}

std::string IndexedTag(absl::string_view tag, absl::string_view kind, int64_t max, int64_t i) {
  return max > 1 ? absl::StrCat(tag, "/", kind, "/", i) : absl::StrCat(tag, "/", kind);
}

// One image's pixels (hw rows of depth values) scaled into bytes, in the
// image's own precision as TensorFlow computes it: C is double for double
// images, float otherwise, and `in_half` rounds each step to binary16 (half
// images are computed in Eigen::half).
template <typename C>
void NormalizeImage(const C* values, int64_t hw, int64_t depth, const uint8_t* bad_color,
                    bool in_half, uint8_t* out) {
  auto round = [in_half](C x) -> C { return in_half ? Half::FromFloat(x).ToFloat() : x; };
  auto finite_pixel = [&](int64_t i) {
    for (int64_t c = 0; c < depth; ++c) {
      if (!std::isfinite(values[i * depth + c])) return false;
    }
    return true;
  };
  // The range, in float, over the pixels whose channels are all finite.
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (int64_t i = 0; i < hw; ++i) {
    if (!finite_pixel(i)) continue;
    for (int64_t c = 0; c < depth; ++c) {
      lo = std::min(lo, static_cast<float>(values[i * depth + c]));
      hi = std::max(hi, static_cast<float>(values[i * depth + c]));
    }
  }
  constexpr float kZeroThreshold = 1e-6f;
  C scale, offset;
  if (lo < 0) {
    const float extent = std::max(std::abs(lo), std::abs(hi));
    scale = round(extent < kZeroThreshold ? 0.0f : 127.0f / extent);
    offset = 128.0f;
  } else {
    scale = round(hi < kZeroThreshold ? 0.0f : 255.0f / hi);
    offset = 0.0f;
  }
  for (int64_t i = 0; i < hw; ++i) {
    const bool finite = finite_pixel(i);
    for (int64_t c = 0; c < depth; ++c) {
      out[i * depth + c] =
          finite ? static_cast<uint8_t>(round(round(values[i * depth + c] * scale) + offset))
                 : bad_color[c];
    }
  }
}

}  // namespace

absl::Status AddScalar(const Tensor& t, absl::string_view tag, Summary* s) {
  if (t.NumElements() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("scalar summary '", tag, "' of an empty tensor ", t.shape().DebugString()));
  }
  ASSIGN_OR_RETURN(std::vector<double> v, Doubles(t, 1));
  Summary::Value* value = s->add_value();
  value->set_tag(std::string(tag));
  value->set_simple_value(static_cast<float>(v[0]));
  return absl::OkStatus();
}

absl::Status AddHistogram(const Tensor& t, absl::string_view tag, Summary* s) {
  ASSIGN_OR_RETURN(std::vector<double> values, Doubles(t, t.NumElements()));
  Histogram histogram;
  for (double v : values) {
    if (std::isnan(v)) {
      return absl::InvalidArgumentError(absl::StrCat("Nan in summary histogram for: ", tag));
    }
    if (std::isinf(v)) {
      return absl::InvalidArgumentError(absl::StrCat("Infinity in summary histogram for: ", tag));
    }
    histogram.Add(v);
  }
  Summary::Value* value = s->add_value();
  value->set_tag(std::string(tag));
  histogram.EncodeToProto(value->mutable_histo());
  return absl::OkStatus();
}

absl::Status AddImages(const Tensor& t, absl::string_view tag, int64_t max_images,
                       const Tensor& bad_color, Summary* s) {
  const int64_t depth = t.dims() == 4 ? t.dim_size(3) : 0;
  if (depth != 1 && depth != 3 && depth != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Tensor must be 4-D with last dim 1, 3, or 4, not ", t.shape().DebugString()));
  }
  const int64_t batch = t.dim_size(0), h = t.dim_size(1), w = t.dim_size(2);
  if (h >= (int64_t{1} << 31) || w >= (int64_t{1} << 31) || h * w >= (int64_t{1} << 29)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor too large for summary ", t.shape().DebugString()));
  }
  const int64_t hw = h * w;
  const bool scaled = t.dtype() != DT_UINT8;
  if (scaled && t.dtype() != DT_HALF && t.dtype() != DT_FLOAT && t.dtype() != DT_DOUBLE) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image summaries take uint8, half, float or double images, got ", DataTypeName(t.dtype())));
  }
  if (scaled && (bad_color.dims() != 1 || bad_color.dim_size(0) < depth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected depth <= bad_color.size, got depth = ", depth,
                     ", bad_color shape = ", bad_color.shape().DebugString()));
  }
  std::vector<uint8_t> pixels(scaled ? static_cast<size_t>(hw * depth) : 0);
  std::vector<float> as_float;
  const int64_t n = std::min(max_images, batch);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* image = nullptr;
    const int64_t start = i * hw * depth;
    if (!scaled) {
      image = t.data<uint8_t>() + start;
    } else if (t.dtype() == DT_DOUBLE) {
      NormalizeImage(t.data<double>() + start, hw, depth, bad_color.data<uint8_t>(), false,
                     pixels.data());
      image = pixels.data();
    } else {
      const bool half = t.dtype() == DT_HALF;
      const float* values = half ? nullptr : t.data<float>() + start;
      if (half) {
        as_float.resize(static_cast<size_t>(hw * depth));
        for (int64_t j = 0; j < hw * depth; ++j) as_float[j] = t.data<Half>()[start + j].ToFloat();
        values = as_float.data();
      }
      NormalizeImage(values, hw, depth, bad_color.data<uint8_t>(), half, pixels.data());
      image = pixels.data();
    }
    ASSIGN_OR_RETURN(std::string png, image_codec::EncodePng(image, h, w, static_cast<int>(depth),
                                                             /*bits=*/8, /*compression=*/-1));
    Summary::Value* value = s->add_value();
    value->set_tag(IndexedTag(tag, "image", max_images, i));
    Summary::Image* out = value->mutable_image();
    out->set_height(static_cast<int32_t>(h));
    out->set_width(static_cast<int32_t>(w));
    out->set_colorspace(static_cast<int32_t>(depth));
    out->set_encoded_image_string(std::move(png));
  }
  return absl::OkStatus();
}

absl::Status AddAudio(const Tensor& t, absl::string_view tag, int64_t max_outputs,
                      float sample_rate, Summary* s) {
  if (!(sample_rate > 0.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("sample_rate must be > 0, got ", sample_rate));
  }
  if (t.dims() != 2 && t.dims() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor must be 3-D or 2-D, got: ", t.shape().DebugString()));
  }
  if (t.dtype() != DT_FLOAT) {
    return absl::InvalidArgumentError(
        absl::StrCat("audio summaries take float audio, got ", DataTypeName(t.dtype())));
  }
  const int64_t batch = t.dim_size(0), frames = t.dim_size(1);
  const int64_t channels = t.dims() == 2 ? 1 : t.dim_size(2);
  const long rate = std::max(1L, std::lrint(sample_rate));
  const int64_t n = std::min(max_outputs, batch);
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(std::string wav,
                     wav::EncodeS16(t.data<float>() + i * frames * channels,
                                    static_cast<uint64_t>(rate), static_cast<uint64_t>(channels),
                                    static_cast<uint64_t>(frames)));
    Summary::Value* value = s->add_value();
    value->set_tag(IndexedTag(tag, "audio", max_outputs, i));
    Summary::Audio* out = value->mutable_audio();
    out->set_sample_rate(sample_rate);
    out->set_num_channels(channels);
    out->set_length_frames(frames);
    out->set_content_type("audio/wav");
    out->set_encoded_audio_string(std::move(wav));
  }
  return absl::OkStatus();
}

absl::Status AddTensor(const Tensor& t, absl::string_view tag,
                       absl::string_view serialized_metadata, Summary* s) {
  Summary::Value* value = s->add_value();
  value->set_tag(std::string(tag));
  t.ToProto(value->mutable_tensor());
  if (!serialized_metadata.empty() &&
      !value->mutable_metadata()->ParseFromArray(serialized_metadata.data(),
                                                 static_cast<int>(serialized_metadata.size()))) {
    return absl::InvalidArgumentError(absl::StrCat("the metadata of summary '", tag,
                                                   "' is not a serialized SummaryMetadata (",
                                                   serialized_metadata.size(), " bytes)"));
  }
  return absl::OkStatus();
}

}  // namespace summary
}  // namespace sluice
