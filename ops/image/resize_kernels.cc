// CPU kernels of ResizeNearestNeighbor(Grad) and ResizeBicubic(Grad)
// (resize_ops.h), with TensorFlow's sampling (resize_nearest_neighbor_op.cc,
// resize_bicubic_op.cc): the same source pixels, and for bicubic the same
// table of cubic weights, summed in the same order in float.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/image/internal/resize_util.h"
#include "ops/image/resize_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::CheckImages4D;
using internal::ResizeScale;
using internal::WithRealType;

// The source row (or column) of output index i for nearest neighbour.
std::vector<int64_t> NearestSources(int64_t out, int64_t in, float scale, bool align, bool half) {
  std::vector<int64_t> src(out);
  for (int64_t i = 0; i < out; ++i) {
    const float x = half ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
    int64_t j = std::min<int64_t>(
        align ? static_cast<int64_t>(std::roundf(x)) : static_cast<int64_t>(std::floor(x)),
        in - 1);
    if (half) j = std::max<int64_t>(j, 0);
    src[i] = j;
  }
  return src;
}

class ResizeKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(align_, ctx.GetAttr<bool>("align_corners"));
    ASSIGN_OR_RETURN(half_, ctx.GetAttr<bool>("half_pixel_centers"));
    return internal::CheckResizeAttrs(align_, half_);
  }

 protected:
  bool align_ = false, half_ = false;
};

// Image dimensions [b, h, w, c] of a 4-D tensor.
struct Dims {
  int64_t b, h, w, c;
  explicit Dims(const Tensor& t)
      : b(t.dim_size(0)), h(t.dim_size(1)), w(t.dim_size(2)), c(t.dim_size(3)) {}
};

absl::Status NonEmpty(const Dims& d, const char* what) {
  if (d.h <= 0 || d.w <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be of non-zero size, got height ", d.h, " and width ", d.w));
  }
  return absl::OkStatus();
}

class ResizeNearestNeighborOp : public ResizeKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    RETURN_IF_ERROR(CheckImages4D(images, "input"));
    ASSIGN_OR_RETURN(auto hw, internal::ResizeSizeInput(ctx->input(1), "size"));
    const Dims in(images);
    RETURN_IF_ERROR(NonEmpty(in, "input image"));
    const int64_t oh = hw.first, ow = hw.second;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({in.b, oh, ow, in.c})));
    const std::vector<int64_t> ys =
        NearestSources(oh, in.h, ResizeScale(in.h, oh, align_), align_, half_);
    const std::vector<int64_t> xs =
        NearestSources(ow, in.w, ResizeScale(in.w, ow, align_), align_, half_);
    // Whole pixels are copied, for any element type.
    const size_t pixel = static_cast<size_t>(in.c) * DataTypeSize(images.dtype());
    const char* src = static_cast<const char*>(images.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t b = 0; b < in.b; ++b) {
      for (int64_t y = 0; y < oh; ++y) {
        const char* row = src + ((b * in.h + ys[y]) * in.w) * pixel;
        for (int64_t x = 0; x < ow; ++x) {
          std::memcpy(dst, row + xs[x] * pixel, pixel);
          dst += pixel;
        }
      }
    }
    return absl::OkStatus();
  }
};

class ResizeNearestNeighborGradOp : public ResizeKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    RETURN_IF_ERROR(CheckImages4D(grads, "input"));
    ASSIGN_OR_RETURN(auto hw, internal::ResizeSizeInput(ctx->input(1), "size"));
    const Dims g(grads);
    const int64_t oh = hw.first, ow = hw.second;  // the original image's
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({g.b, oh, ow, g.c})));
    const std::vector<int64_t> ys =
        NearestSources(g.h, oh, ResizeScale(oh, g.h, align_), align_, half_);
    const std::vector<int64_t> xs =
        NearestSources(g.w, ow, ResizeScale(ow, g.w, align_), align_, half_);
    return WithRealType(grads.dtype(), [&](auto t) {
      using T = decltype(t);
      T* o = out->data<T>();
      std::fill_n(o, out->NumElements(), T(0));
      const T* in = grads.data<T>();
      for (int64_t b = 0; b < g.b; ++b) {
        for (int64_t y = 0; y < g.h; ++y) {
          for (int64_t x = 0; x < g.w; ++x) {
            T* dst = o + ((b * oh + ys[y]) * ow + xs[x]) * g.c;
            for (int64_t c = 0; c < g.c; ++c) dst[c] += *in++;
          }
        }
      }
      return absl::OkStatus();
    });
  }
};

// TensorFlow's table of cubic convolution weights (Keys, with a = -0.5 or
// -0.75) at 1024 steps of the fractional offset: entry 2i is the weight of
// a neighbour at distance i/1024, entry 2i + 1 at distance 1 + i/1024.
constexpr int64_t kTableSize = 1 << 10;

std::vector<float> CoefficientTable(double a) {
  std::vector<float> table((kTableSize + 1) * 2);
  for (int64_t i = 0; i <= kTableSize; ++i) {
    float x = static_cast<float>(i * 1.0 / kTableSize);
    table[i * 2] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
    x += 1.0;
    table[i * 2 + 1] = static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
  }
  return table;
}

const std::vector<float>& Table(bool keys) {
  static const std::vector<float>* const kKeys = new std::vector<float>(CoefficientTable(-0.5f));
  static const std::vector<float>* const kLegacy =
      new std::vector<float>(CoefficientTable(-0.75f));
  return keys ? *kKeys : *kLegacy;
}

// The four source indices of output index i and their weights.
struct Taps {
  int64_t index[4];
  float weight[4];
};

std::vector<Taps> CubicTaps(int64_t out, int64_t in, float scale, bool half) {
  const std::vector<float>& table = Table(half);
  std::vector<Taps> taps(out);
  for (int64_t i = 0; i < out; ++i) {
    const float loc = half ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                           : static_cast<float>(i) * scale;
    const int64_t base = static_cast<int64_t>(std::floor(loc));
    const float delta = loc - static_cast<float>(base);
    const int64_t offset = lrintf(delta * kTableSize);
    const float w[4] = {table[offset * 2 + 1], table[offset * 2],
                        table[(kTableSize - offset) * 2], table[(kTableSize - offset) * 2 + 1]};
    Taps& t = taps[i];
    float sum = 0;
    for (int k = 0; k < 4; ++k) {
      const int64_t want = base - 1 + k;
      t.index[k] = std::min(in - 1, std::max<int64_t>(0, want));
      // Half-pixel (Keys): taps outside the image weigh nothing and the
      // rest are renormalized; legacy: the border pixel repeats.
      t.weight[k] = half && t.index[k] != want ? 0.0f : w[k];
      sum += t.weight[k];
    }
    if (half && std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inv = 1.0f / sum;
      for (float& wk : t.weight) wk *= inv;
    }
  }
  return taps;
}

class ResizeBicubicOp : public ResizeKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    RETURN_IF_ERROR(CheckImages4D(images, "input"));
    ASSIGN_OR_RETURN(auto hw, internal::ResizeSizeInput(ctx->input(1), "size"));
    const Dims in(images);
    RETURN_IF_ERROR(NonEmpty(in, "input image"));
    const int64_t oh = hw.first, ow = hw.second;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({in.b, oh, ow, in.c})));
    const std::vector<Taps> ys = CubicTaps(oh, in.h, ResizeScale(in.h, oh, align_), half_);
    const std::vector<Taps> xs = CubicTaps(ow, in.w, ResizeScale(in.w, ow, align_), half_);
    return WithRealType(images.dtype(), [&](auto t) {
      using T = decltype(t);
      const T* src = images.data<T>();
      float* o = out->data<float>();
      const int64_t row = in.w * in.c;
      for (int64_t b = 0; b < in.b; ++b) {
        const T* img = src + b * in.h * row;
        for (int64_t y = 0; y < oh; ++y) {
          const Taps& ty = ys[y];
          const T* r[4] = {img + ty.index[0] * row, img + ty.index[1] * row,
                           img + ty.index[2] * row, img + ty.index[3] * row};
          for (int64_t x = 0; x < ow; ++x) {
            const Taps& tx = xs[x];
            for (int64_t c = 0; c < in.c; ++c) {
              // Down the four columns first, then across, as TensorFlow.
              float col[4];
              for (int k = 0; k < 4; ++k) {
                const int64_t p = tx.index[k] * in.c + c;
                col[k] = static_cast<float>(r[0][p]) * ty.weight[0] +
                         static_cast<float>(r[1][p]) * ty.weight[1] +
                         static_cast<float>(r[2][p]) * ty.weight[2] +
                         static_cast<float>(r[3][p]) * ty.weight[3];
              }
              *o++ = col[0] * tx.weight[0] + col[1] * tx.weight[1] + col[2] * tx.weight[2] +
                     col[3] * tx.weight[3];
            }
          }
        }
      }
      return absl::OkStatus();
    });
  }
};

class ResizeBicubicGradOp : public ResizeKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    const Tensor& original = ctx->input(1);
    RETURN_IF_ERROR(CheckImages4D(grads, "input_grad"));
    RETURN_IF_ERROR(CheckImages4D(original, "original_image"));
    const Dims g(grads), o(original);
    if (g.b != o.b || g.c != o.c) {
      return absl::InvalidArgumentError(absl::StrCat(
          "grads ", grads.shape().DebugString(), " and original_image ",
          original.shape().DebugString(), " differ in batch or depth"));
    }
    RETURN_IF_ERROR(NonEmpty(o, "original image"));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, original.shape()));
    const std::vector<Taps> ys = CubicTaps(g.h, o.h, ResizeScale(o.h, g.h, align_), half_);
    const std::vector<Taps> xs = CubicTaps(g.w, o.w, ResizeScale(o.w, g.w, align_), half_);
    auto run = [&](auto zero) {
      using T = decltype(zero);
      T* dst = out->data<T>();
      std::fill_n(dst, out->NumElements(), T(0));
      const float* in = grads.data<float>();
      for (int64_t b = 0; b < g.b; ++b) {
        T* img = dst + b * o.h * o.w * o.c;
        for (int64_t y = 0; y < g.h; ++y) {
          const Taps& ty = ys[y];
          for (int64_t x = 0; x < g.w; ++x) {
            const Taps& tx = xs[x];
            for (int64_t c = 0; c < g.c; ++c) {
              const float d = *in++;
              for (int i = 0; i < 4; ++i) {
                for (int j = 0; j < 4; ++j) {
                  img[(ty.index[i] * o.w + tx.index[j]) * o.c + c] +=
                      static_cast<T>(d * ty.weight[i] * tx.weight[j]);
                }
              }
            }
          }
        }
      }
    };
    if (original.dtype() == DT_DOUBLE) {
      run(double{});
    } else {
      run(float{});
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterResizeKernels(KernelRegistry* k) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  const std::vector<DataType> real = {DT_UINT8, DT_INT8,  DT_UINT16, DT_INT16, DT_INT32,
                                      DT_INT64, DT_FLOAT, DT_DOUBLE};
  std::vector<DataType> any_real = real;
  any_real.insert(any_real.end(), {DT_HALF, DT_BFLOAT16});
  k->Register<ResizeNearestNeighborOp>(cpu("ResizeNearestNeighbor").TypeConstraint("T", any_real));
  k->Register<ResizeNearestNeighborGradOp>(cpu("ResizeNearestNeighborGrad")
                                               .TypeConstraint("T", {DT_UINT8, DT_INT8, DT_INT32,
                                                                     DT_FLOAT, DT_DOUBLE}));
  k->Register<ResizeBicubicOp>(cpu("ResizeBicubic").TypeConstraint("T", real));
  k->Register<ResizeBicubicGradOp>(
      KernelDef("ResizeBicubicGrad", kDeviceTypeCpu).TypeConstraint("T", {DT_FLOAT, DT_DOUBLE}));
}

}  // namespace sluice
