// CPU kernels of ResizeBilinear(Grad), CropAndResize(GradImage, GradBoxes)
// and AdjustContrastv2 (ops/image/image_ops.h). Arithmetic is in float, as
// TensorFlow's CPU kernels do it, so results match them to rounding.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/image/image_ops.h"
#include "ops/image/internal/resize_util.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::CheckImages4D;
using internal::WithRealType;

// Where output index i samples the input: the two neighbours and the weight
// of the upper one.
struct Interp {
  int64_t lower, upper;
  float lerp;
};

std::vector<Interp> Weights(int64_t out, int64_t in, float scale, bool half_pixel) {
  std::vector<Interp> w(out);
  for (int64_t i = 0; i < out; ++i) {
    const float x = half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                               : static_cast<float>(i) * scale;
    const float fl = std::floor(x);
    w[i].lower = std::max<int64_t>(static_cast<int64_t>(fl), 0);
    w[i].upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(x)), in - 1);
    w[i].lerp = x - fl;
  }
  return w;
}

struct ResizeGeometry {
  int64_t batch, in_h, in_w, out_h, out_w, depth;
  std::vector<Interp> ys, xs;
};

absl::StatusOr<ResizeGeometry> Geometry(const Tensor& image, int64_t out_h, int64_t out_w,
                                        bool align, bool half) {
  RETURN_IF_ERROR(internal::CheckResizeAttrs(align, half));
  ResizeGeometry g{image.dim_size(0), image.dim_size(1), image.dim_size(2), out_h, out_w,
                   image.dim_size(3), {}, {}};
  if (g.in_h <= 0 || g.in_w <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input image must be of non-zero size, got shape ", image.shape().DebugString()));
  }
  g.ys = Weights(out_h, g.in_h, internal::ResizeScale(g.in_h, out_h, align), half);
  g.xs = Weights(out_w, g.in_w, internal::ResizeScale(g.in_w, out_w, align), half);
  return g;
}

class ResizeBilinearOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(align_, ctx.GetAttr<bool>("align_corners"));
    ASSIGN_OR_RETURN(half_, ctx.GetAttr<bool>("half_pixel_centers"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    RETURN_IF_ERROR(CheckImages4D(images, "input"));
    ASSIGN_OR_RETURN(auto hw, internal::ResizeSizeInput(ctx->input(1), "size"));
    ASSIGN_OR_RETURN(ResizeGeometry g, Geometry(images, hw.first, hw.second, align_, half_));
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->allocate_output(0, TensorShape({g.batch, g.out_h, g.out_w, g.depth})));
    return WithRealType(images.dtype(), [&](auto t) {
      using T = decltype(t);
      const T* in = images.data<T>();
      float* o = out->data<float>();
      const int64_t row = g.in_w * g.depth;
      for (int64_t b = 0; b < g.batch; ++b) {
        const T* img = in + b * g.in_h * row;
        for (int64_t y = 0; y < g.out_h; ++y) {
          const T* top = img + g.ys[y].lower * row;
          const T* bottom = img + g.ys[y].upper * row;
          const float yl = g.ys[y].lerp;
          for (int64_t x = 0; x < g.out_w; ++x) {
            const int64_t l = g.xs[x].lower * g.depth, r = g.xs[x].upper * g.depth;
            const float xl = g.xs[x].lerp;
            for (int64_t c = 0; c < g.depth; ++c) {
              const float tl = static_cast<float>(top[l + c]), tr = static_cast<float>(top[r + c]);
              const float bl = static_cast<float>(bottom[l + c]);
              const float br = static_cast<float>(bottom[r + c]);
              const float tv = tl + (tr - tl) * xl;
              const float bv = bl + (br - bl) * xl;
              *o++ = tv + (bv - tv) * yl;
            }
          }
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  bool align_ = false, half_ = false;
};

class ResizeBilinearGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(align_, ctx.GetAttr<bool>("align_corners"));
    ASSIGN_OR_RETURN(half_, ctx.GetAttr<bool>("half_pixel_centers"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    const Tensor& original = ctx->input(1);
    RETURN_IF_ERROR(CheckImages4D(grads, "input_grad"));
    RETURN_IF_ERROR(CheckImages4D(original, "original_image"));
    if (grads.dim_size(0) != original.dim_size(0) || grads.dim_size(3) != original.dim_size(3)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "grads ", grads.shape().DebugString(), " and original_image ",
          original.shape().DebugString(), " differ in batch or depth"));
    }
    ASSIGN_OR_RETURN(ResizeGeometry g,
                     Geometry(original, grads.dim_size(1), grads.dim_size(2), align_, half_));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, original.shape()));
    return WithRealType(original.dtype(), [&](auto t) -> absl::Status {
      using T = decltype(t);
      if constexpr (!std::is_floating_point_v<T>) {
        return absl::InvalidArgumentError("ResizeBilinearGrad needs a floating original_image");
      } else {
        T* o = out->data<T>();
        std::fill_n(o, out->NumElements(), T(0));
        const float* gr = grads.data<float>();
        const int64_t row = g.in_w * g.depth;
        for (int64_t b = 0; b < g.batch; ++b) {
          T* img = o + b * g.in_h * row;
          for (int64_t y = 0; y < g.out_h; ++y) {
            T* top = img + g.ys[y].lower * row;
            T* bottom = img + g.ys[y].upper * row;
            const float yl = g.ys[y].lerp;
            for (int64_t x = 0; x < g.out_w; ++x) {
              const int64_t l = g.xs[x].lower * g.depth, r = g.xs[x].upper * g.depth;
              const float xl = g.xs[x].lerp;
              for (int64_t c = 0; c < g.depth; ++c) {
                const float d = *gr++;
                const float dt = (1 - yl) * d, db = yl * d;
                top[l + c] += static_cast<T>(dt * (1 - xl));
                top[r + c] += static_cast<T>(dt * xl);
                bottom[l + c] += static_cast<T>(db * (1 - xl));
                bottom[r + c] += static_cast<T>(db * xl);
              }
            }
          }
        }
        return absl::OkStatus();
      }
    });
  }

 private:
  bool align_ = false, half_ = false;
};

// The boxes, box_ind and crop geometry of CropAndResize and its gradients.
struct Crops {
  int64_t num_boxes, crop_h, crop_w;
  const float* boxes;
  const int32_t* box_ind;
};

absl::StatusOr<Crops> CheckCrops(const Tensor& boxes, const Tensor& box_ind, int64_t batch,
                                 int64_t crop_h, int64_t crop_w) {
  if (boxes.dims() != 2 || boxes.dim_size(1) != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("boxes must be 2-D [num_boxes, 4], got ", boxes.shape().DebugString()));
  }
  if (box_ind.dims() != 1 || box_ind.dim_size(0) != boxes.dim_size(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("box_index has incompatible shape ", box_ind.shape().DebugString(),
                     " for boxes ", boxes.shape().DebugString()));
  }
  Crops c{boxes.dim_size(0), crop_h, crop_w, boxes.data<float>(), box_ind.data<int32_t>()};
  for (int64_t b = 0; b < c.num_boxes; ++b) {
    if (c.box_ind[b] < 0 || c.box_ind[b] >= batch) {
      return absl::InvalidArgumentError(absl::StrCat("box_index has values outside [0, ", batch,
                                                     "): box ", b, " has ", c.box_ind[b]));
    }
  }
  return c;
}

// Input coordinate of crop row/column i of a box edge pair (a, b) over an
// image side of n pixels.
inline float CropCoord(float a, float b, int64_t i, int64_t crop, int64_t n) {
  return crop > 1 ? a * (n - 1) + i * ((b - a) * (n - 1) / (crop - 1)) : 0.5f * (a + b) * (n - 1);
}

class CropAndResizeOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(std::string method, ctx.GetAttr<std::string>("method"));
    nearest_ = method == "nearest";
    ASSIGN_OR_RETURN(extrapolation_, ctx.GetAttr<float>("extrapolation_value"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& image = ctx->input(0);
    RETURN_IF_ERROR(CheckImages4D(image, "input image"));
    ASSIGN_OR_RETURN(auto hw, internal::ResizeSizeInput(ctx->input(3), "crop_size"));
    const int64_t batch = image.dim_size(0), H = image.dim_size(1), W = image.dim_size(2),
                  D = image.dim_size(3);
    if (H <= 0 || W <= 0) {
      return absl::InvalidArgumentError("image dimensions must be positive");
    }
    ASSIGN_OR_RETURN(Crops c, CheckCrops(ctx->input(1), ctx->input(2), batch, hw.first, hw.second));
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->allocate_output(0, TensorShape({c.num_boxes, c.crop_h, c.crop_w, D})));
    return WithRealType(image.dtype(), [&](auto t) {
      using T = decltype(t);
      const T* in = image.data<T>();
      float* o = out->data<float>();
      for (int64_t b = 0; b < c.num_boxes; ++b) {
        const float* box = c.boxes + 4 * b;
        const T* img = in + c.box_ind[b] * H * W * D;
        for (int64_t y = 0; y < c.crop_h; ++y) {
          const float in_y = CropCoord(box[0], box[2], y, c.crop_h, H);
          float* orow = o + ((b * c.crop_h + y) * c.crop_w) * D;
          if (in_y < 0 || in_y > H - 1) {
            std::fill_n(orow, c.crop_w * D, extrapolation_);
            continue;
          }
          for (int64_t x = 0; x < c.crop_w; ++x) {
            const float in_x = CropCoord(box[1], box[3], x, c.crop_w, W);
            float* op = orow + x * D;
            if (in_x < 0 || in_x > W - 1) {
              std::fill_n(op, D, extrapolation_);
              continue;
            }
            if (nearest_) {
              const int64_t cy = static_cast<int64_t>(std::round(in_y));
              const int64_t cx = static_cast<int64_t>(std::round(in_x));
              for (int64_t d = 0; d < D; ++d) op[d] = static_cast<float>(img[(cy * W + cx) * D + d]);
              continue;
            }
            const int64_t ty = static_cast<int64_t>(std::floor(in_y));
            const int64_t by = static_cast<int64_t>(std::ceil(in_y));
            const int64_t lx = static_cast<int64_t>(std::floor(in_x));
            const int64_t rx = static_cast<int64_t>(std::ceil(in_x));
            const float yl = in_y - ty, xl = in_x - lx;
            for (int64_t d = 0; d < D; ++d) {
              const float tl = static_cast<float>(img[(ty * W + lx) * D + d]);
              const float tr = static_cast<float>(img[(ty * W + rx) * D + d]);
              const float bl = static_cast<float>(img[(by * W + lx) * D + d]);
              const float br = static_cast<float>(img[(by * W + rx) * D + d]);
              const float top = tl + (tr - tl) * xl;
              const float bottom = bl + (br - bl) * xl;
              op[d] = top + (bottom - top) * yl;
            }
          }
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  bool nearest_ = false;
  float extrapolation_ = 0;
};

class CropAndResizeGradImageOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(std::string method, ctx.GetAttr<std::string>("method"));
    nearest_ = method == "nearest";
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    RETURN_IF_ERROR(CheckImages4D(grads, "grads"));
    const Tensor& size = ctx->input(3);
    if (size.dims() != 1 || size.NumElements() != 4 || size.dtype() != DT_INT32) {
      return absl::InvalidArgumentError(
          absl::StrCat("image_size must be a 1-D int32 tensor of 4 elements, got ",
                       size.DebugString(0)));
    }
    const int32_t* s = size.data<int32_t>();
    const int64_t batch = s[0], H = s[1], W = s[2], D = s[3];
    if (batch <= 0 || H <= 0 || W <= 0 || D != grads.dim_size(3)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "image_size ", size.DebugString(), " must be positive with depth ", grads.dim_size(3)));
    }
    ASSIGN_OR_RETURN(Crops c, CheckCrops(ctx->input(1), ctx->input(2), batch, grads.dim_size(1),
                                         grads.dim_size(2)));
    if (grads.dim_size(0) != c.num_boxes) {
      return absl::InvalidArgumentError("boxes and grads have incompatible shapes");
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({batch, H, W, D})));
    return WithRealType(out->dtype(), [&](auto t) -> absl::Status {
      using T = decltype(t);
      if constexpr (!std::is_floating_point_v<T>) {
        return absl::InvalidArgumentError("CropAndResizeGradImage needs a floating T");
      } else {
        T* o = out->data<T>();
        std::fill_n(o, out->NumElements(), T(0));
        const float* g = grads.data<float>();
        for (int64_t b = 0; b < c.num_boxes; ++b) {
          const float* box = c.boxes + 4 * b;
          T* img = o + c.box_ind[b] * H * W * D;
          for (int64_t y = 0; y < c.crop_h; ++y) {
            const float in_y = CropCoord(box[0], box[2], y, c.crop_h, H);
            if (in_y < 0 || in_y > H - 1) continue;
            const int64_t ty = static_cast<int64_t>(std::floor(in_y));
            const int64_t by = static_cast<int64_t>(std::ceil(in_y));
            const float yl = in_y - ty;
            for (int64_t x = 0; x < c.crop_w; ++x) {
              const float in_x = CropCoord(box[1], box[3], x, c.crop_w, W);
              if (in_x < 0 || in_x > W - 1) continue;
              const float* gp = g + ((b * c.crop_h + y) * c.crop_w + x) * D;
              if (nearest_) {
                const int64_t cy = static_cast<int64_t>(std::round(in_y));
                const int64_t cx = static_cast<int64_t>(std::round(in_x));
                for (int64_t d = 0; d < D; ++d) img[(cy * W + cx) * D + d] += static_cast<T>(gp[d]);
                continue;
              }
              const int64_t lx = static_cast<int64_t>(std::floor(in_x));
              const int64_t rx = static_cast<int64_t>(std::ceil(in_x));
              const float xl = in_x - lx;
              for (int64_t d = 0; d < D; ++d) {
                const float dtop = (1 - yl) * gp[d], dbottom = yl * gp[d];
                img[(ty * W + lx) * D + d] += static_cast<T>(dtop * (1 - xl));
                img[(ty * W + rx) * D + d] += static_cast<T>(dtop * xl);
                img[(by * W + lx) * D + d] += static_cast<T>(dbottom * (1 - xl));
                img[(by * W + rx) * D + d] += static_cast<T>(dbottom * xl);
              }
            }
          }
        }
        return absl::OkStatus();
      }
    });
  }

 private:
  bool nearest_ = false;
};

class CropAndResizeGradBoxesOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    const Tensor& image = ctx->input(1);
    RETURN_IF_ERROR(CheckImages4D(grads, "grads"));
    RETURN_IF_ERROR(CheckImages4D(image, "input image"));
    const int64_t batch = image.dim_size(0), H = image.dim_size(1), W = image.dim_size(2),
                  D = image.dim_size(3);
    if (H <= 0 || W <= 0 || D != grads.dim_size(3)) {
      return absl::InvalidArgumentError("image and grads have incompatible shapes");
    }
    ASSIGN_OR_RETURN(Crops c, CheckCrops(ctx->input(2), ctx->input(3), batch, grads.dim_size(1),
                                         grads.dim_size(2)));
    if (grads.dim_size(0) != c.num_boxes) {
      return absl::InvalidArgumentError("boxes and grads have incompatible shapes");
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({c.num_boxes, 4})));
    float* o = out->data<float>();
    std::fill_n(o, out->NumElements(), 0.0f);
    return WithRealType(image.dtype(), [&](auto t) {
      using T = decltype(t);
      const T* in = image.data<T>();
      const float* g = grads.data<float>();
      const float hr = c.crop_h > 1 ? static_cast<float>(H - 1) / (c.crop_h - 1) : 0;
      const float wr = c.crop_w > 1 ? static_cast<float>(W - 1) / (c.crop_w - 1) : 0;
      for (int64_t b = 0; b < c.num_boxes; ++b) {
        const float* box = c.boxes + 4 * b;
        const T* img = in + c.box_ind[b] * H * W * D;
        float* ob = o + 4 * b;
        for (int64_t y = 0; y < c.crop_h; ++y) {
          const float in_y = CropCoord(box[0], box[2], y, c.crop_h, H);
          if (in_y < 0 || in_y > H - 1) continue;
          const int64_t ty = static_cast<int64_t>(std::floor(in_y));
          const int64_t by = static_cast<int64_t>(std::ceil(in_y));
          const float yl = in_y - ty;
          for (int64_t x = 0; x < c.crop_w; ++x) {
            const float in_x = CropCoord(box[1], box[3], x, c.crop_w, W);
            if (in_x < 0 || in_x > W - 1) continue;
            const int64_t lx = static_cast<int64_t>(std::floor(in_x));
            const int64_t rx = static_cast<int64_t>(std::ceil(in_x));
            const float xl = in_x - lx;
            const float* gp = g + ((b * c.crop_h + y) * c.crop_w + x) * D;
            for (int64_t d = 0; d < D; ++d) {
              const float tl = static_cast<float>(img[(ty * W + lx) * D + d]);
              const float tr = static_cast<float>(img[(ty * W + rx) * D + d]);
              const float bl = static_cast<float>(img[(by * W + lx) * D + d]);
              const float br = static_cast<float>(img[(by * W + rx) * D + d]);
              const float gy = (1 - xl) * (bl - tl) + xl * (br - tr);
              const float gx = (1 - yl) * (tr - tl) + yl * (br - bl);
              const float top = gp[d];
              if (c.crop_h > 1) {
                ob[0] += top * gy * ((H - 1) - y * hr);
                ob[2] += top * gy * (y * hr);
              } else {
                ob[0] += top * gy * 0.5f * (H - 1);
                ob[2] += top * gy * 0.5f * (H - 1);
              }
              if (c.crop_w > 1) {
                ob[1] += top * gx * ((W - 1) - x * wr);
                ob[3] += top * gx * (x * wr);
              } else {
                ob[1] += top * gx * 0.5f * (W - 1);
                ob[3] += top * gx * 0.5f * (W - 1);
              }
            }
          }
        }
      }
      return absl::OkStatus();
    });
  }
};

class AdjustContrastv2Op : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    const Tensor& factor = ctx->input(1);
    if (images.dims() < 3) {
      return absl::InvalidArgumentError(absl::StrCat("input must be at least 3-D, got shape ",
                                                     images.shape().DebugString()));
    }
    if (factor.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("contrast_factor must be scalar: ",
                                                     factor.shape().DebugString()));
    }
    const float f = factor.scalar<float>();
    const int64_t D = images.dim_size(images.dims() - 1);
    const int64_t HW = images.dim_size(images.dims() - 2) * images.dim_size(images.dims() - 3);
    const int64_t n = HW * D == 0 ? 0 : images.NumElements() / (HW * D);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, images.shape()));
    const float* in = images.data<float>();
    float* o = out->data<float>();
    std::vector<float> mean(D);
    for (int64_t b = 0; b < n; ++b) {
      const float* img = in + b * HW * D;
      std::fill(mean.begin(), mean.end(), 0.0f);
      for (int64_t p = 0; p < HW; ++p) {
        for (int64_t d = 0; d < D; ++d) mean[d] += img[p * D + d];
      }
      for (float& m : mean) m /= static_cast<float>(HW);
      float* op = o + b * HW * D;
      for (int64_t p = 0; p < HW; ++p) {
        for (int64_t d = 0; d < D; ++d) op[p * D + d] = (img[p * D + d] - mean[d]) * f + mean[d];
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterImageKernels(KernelRegistry* k) {
  const std::vector<DataType> real = {DT_UINT8, DT_INT8,  DT_UINT16, DT_INT16,
                                      DT_INT32, DT_INT64, DT_FLOAT,  DT_DOUBLE};
  k->Register<ResizeBilinearOp>(KernelDef("ResizeBilinear", kDeviceTypeCpu).TypeConstraint("T", real));
  k->Register<ResizeBilinearGradOp>(
      KernelDef("ResizeBilinearGrad", kDeviceTypeCpu).TypeConstraint("T", {DT_FLOAT, DT_DOUBLE}));
  k->Register<CropAndResizeOp>(KernelDef("CropAndResize", kDeviceTypeCpu).TypeConstraint("T", real));
  k->Register<CropAndResizeGradImageOp>(
      KernelDef("CropAndResizeGradImage", kDeviceTypeCpu).TypeConstraint("T", {DT_FLOAT, DT_DOUBLE}));
  k->Register<CropAndResizeGradBoxesOp>(
      KernelDef("CropAndResizeGradBoxes", kDeviceTypeCpu).TypeConstraint("T", real));
  k->Register<AdjustContrastv2Op>(
      KernelDef("AdjustContrastv2", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
}

}  // namespace sluice
