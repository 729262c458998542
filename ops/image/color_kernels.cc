// CPU kernels of the color ops (color_ops.h): TensorFlow's arithmetic, per
// pixel, in the order its kernels compute it.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/image/color_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

absl::Status CheckChannels(const Tensor& images, int min_rank) {
  if (images.dims() < min_rank) {
    return absl::InvalidArgumentError(absl::StrCat("input must be at least ", min_rank,
                                                   "-D, got shape",
                                                   images.shape().DebugString()));
  }
  const int64_t channels = images.dim_size(images.dims() - 1);
  if (channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must have 3 channels but instead has ", channels, " channels."));
  }
  return absl::OkStatus();
}

// Calls fn(in, out) for each pixel's 3 channels.
template <typename T, typename Fn>
absl::Status ForEachPixel(OpKernelContext* ctx, int min_rank, Fn&& fn) {
  const Tensor& images = ctx->input(0);
  RETURN_IF_ERROR(CheckChannels(images, min_rank));
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, images.shape()));
  const T* p = images.data<T>();
  T* q = out->data<T>();
  for (int64_t i = 0; i < images.NumElements() / 3; ++i) fn(p + 3 * i, q + 3 * i);
  return absl::OkStatus();
}

absl::StatusOr<float> ScalarInput(OpKernelContext* ctx, int i, const char* what) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be scalar: ", t.shape().DebugString()));
  }
  return t.flat<float>()[0];
}

template <typename T>
class RGBToHSVOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    return ForEachPixel<T>(ctx, 1, [](const T* rgb, T* hsv) {
      const T r = rgb[0], g = rgb[1], b = rgb[2];
      const T v = std::max(r, std::max(g, b));
      const T range = v - std::min(r, std::min(g, b));
      const T s = v > T(0) ? range / v : T(0);
      const T norm = T(1) / range * (T(1) / T(6));
      T h = r == v ? norm * (g - b)
                   : (g == v ? norm * (b - r) + T(2) / T(6) : norm * (r - g) + T(4) / T(6));
      if (!(range > T(0))) h = T(0);
      if (h < T(0)) h += T(1);
      hsv[0] = h;
      hsv[1] = s;
      hsv[2] = v;
    });
  }
};

template <typename T>
class HSVToRGBOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    return ForEachPixel<T>(ctx, 1, [](const T* hsv, T* rgb) {
      const T h = hsv[0], s = hsv[1], v = hsv[2];
      const T dh = h * T(6);
      auto clamp01 = [](T x) { return std::min(std::max(x, T(0)), T(1)); };
      const T dr = clamp01(std::abs(dh - T(3)) - T(1));
      const T dg = clamp01(-std::abs(dh - T(2)) + T(2));
      const T db = clamp01(-std::abs(dh - T(4)) + T(2));
      const T one_s = -s + T(1);
      rgb[0] = (one_s + s * dr) * v;
      rgb[1] = (one_s + s * dg) * v;
      rgb[2] = (one_s + s * db) * v;
    });
  }
};

// AdjustHue: hue in [0, 6) and the value range (min, max), as TensorFlow's
// CPU kernel; the middle channel is interpolated back.
void RgbToHueRange(float r, float g, float b, float* h, float* lo, float* hi) {
  float mid;
  int category;
  if (r < g) {
    if (b < r) {
      *hi = g, mid = r, *lo = b, category = 1;
    } else if (b > g) {
      *hi = b, mid = g, *lo = r, category = 3;
    } else {
      *hi = g, mid = b, *lo = r, category = 2;
    }
  } else {
    if (b < g) {
      *hi = r, mid = g, *lo = b, category = 0;
    } else if (b > r) {
      *hi = b, mid = r, *lo = g, category = 4;
    } else {
      *hi = r, mid = b, *lo = g, category = 5;
    }
  }
  if (*hi == *lo) {
    *h = 0;
    return;
  }
  const float ratio = (mid - *lo) / (*hi - *lo);
  *h = category + ((category & 1) == 0 ? ratio : 1 - ratio);
}

void HueRangeToRgb(float h, float lo, float hi, float* rgb) {
  const int category = static_cast<int>(h);
  float ratio = h - category;
  if ((category & 1) != 0) ratio = 1 - ratio;
  const float mid = lo + ratio * (hi - lo);
  static constexpr int kOrder[6][3] = {{2, 1, 0}, {1, 2, 0}, {0, 2, 1},
                                       {0, 1, 2}, {1, 0, 2}, {2, 0, 1}};  // 0 lo, 1 mid, 2 hi
  const float levels[3] = {lo, mid, hi};
  const int* order = kOrder[category >= 0 && category < 6 ? category : 5];
  for (int c = 0; c < 3; ++c) rgb[c] = levels[order[c]];
}

class AdjustHueOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(float delta, ScalarInput(ctx, 1, "delta"));
    return ForEachPixel<float>(ctx, 3, [delta](const float* p, float* q) {
      float h, lo, hi;
      RgbToHueRange(p[0], p[1], p[2], &h, &lo, &hi);
      h += delta * 6;
      while (h < 0) h += 6;
      while (h >= 6) h -= 6;
      HueRangeToRgb(h, lo, hi, q);
    });
  }
};

// AdjustSaturation: through HSV with TensorFlow's CPU kernel's formulas.
void RgbToHsv(float r, float g, float b, float* h, float* s, float* v) {
  const float vv = std::max(r, std::max(g, b));
  const float range = vv - std::min(r, std::min(g, b));
  *s = vv > 0 ? range / vv : 0;
  const float norm = 1.0f / (6.0f * range);
  float hh = r == vv ? norm * (g - b)
                     : (g == vv ? norm * (b - r) + 2.0 / 6.0 : norm * (r - g) + 4.0 / 6.0);
  if (range <= 0.0) hh = 0;
  if (hh < 0.0) hh += 1;
  *h = hh;
  *v = vv;
}

void HsvToRgb(float h, float s, float v, float* rgb) {
  const float c = s * v;
  const float m = v - c;
  const float dh = h * 6;
  const int category = static_cast<int>(dh);
  float fmodu = dh;
  while (fmodu <= 0) fmodu += 2.0f;
  while (fmodu >= 2.0f) fmodu -= 2.0f;
  const float x = c * (1 - std::abs(fmodu - 1));
  float r = 0, g = 0, b = 0;
  switch (category) {
    case 0: r = c, g = x; break;
    case 1: r = x, g = c; break;
    case 2: g = c, b = x; break;
    case 3: g = x, b = c; break;
    case 4: r = x, b = c; break;
    case 5: r = c, b = x; break;
    default: break;
  }
  rgb[0] = r + m;
  rgb[1] = g + m;
  rgb[2] = b + m;
}

class AdjustSaturationOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(float scale, ScalarInput(ctx, 1, "scale"));
    return ForEachPixel<float>(ctx, 3, [scale](const float* p, float* q) {
      float h, s, v;
      RgbToHsv(p[0], p[1], p[2], &h, &s, &v);
      s = std::min(1.0f, std::max(0.0f, s * scale));
      HsvToRgb(h, s, v, q);
    });
  }
};

}  // namespace

void RegisterColorKernels(KernelRegistry* k) {
  auto cpu = [](const char* op, DataType t) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", t);
  };
  k->Register<RGBToHSVOp<float>>(cpu("RGBToHSV", DT_FLOAT));
  k->Register<RGBToHSVOp<double>>(cpu("RGBToHSV", DT_DOUBLE));
  k->Register<HSVToRGBOp<float>>(cpu("HSVToRGB", DT_FLOAT));
  k->Register<HSVToRGBOp<double>>(cpu("HSVToRGB", DT_DOUBLE));
  k->Register<AdjustHueOp>(cpu("AdjustHue", DT_FLOAT));
  k->Register<AdjustSaturationOp>(cpu("AdjustSaturation", DT_FLOAT));
}

}  // namespace sluice
