// Definition, wrapper and CPU kernel of ResizeArea
// (ops/image/resize_area_ops.h).
#include "ops/image/resize_area_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/image/internal/resize_util.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// The input cells [start, end) an output cell [i * scale, (i + 1) *
// scale) covers, and the parts of the first and last inside it.
struct Span {
  int64_t start, end;
  float start_part, last_part;
};

// The covered part of input cell v.
float Part(int64_t v, float lo, float hi, float scale) {
  if (v < lo) return v + 1 > hi ? scale : v + 1 - lo;
  return v + 1 > hi ? hi - v : 1.0f;
}

std::vector<Span> Spans(int64_t out, float scale) {
  std::vector<Span> spans(out);
  for (int64_t i = 0; i < out; ++i) {
    const float lo = i * scale, hi = (i + 1) * scale;
    Span& s = spans[i];
    s.start = static_cast<int64_t>(std::floor(lo));
    s.end = static_cast<int64_t>(std::ceil(hi));
    s.start_part = Part(s.start, lo, hi, scale);
    s.last_part = Part(s.end - 1, lo, hi, scale);
  }
  return spans;
}

int64_t Clamp(int64_t v, int64_t n) { return std::min(n - 1, std::max<int64_t>(0, v)); }

template <typename T>
absl::Status ResizeAreaLoop(const Tensor& images, int64_t oh, int64_t ow, bool align, Tensor* out) {
  const int64_t batch = images.dim_size(0), h = images.dim_size(1), w = images.dim_size(2),
                channels = images.dim_size(3);
  const float hs = internal::ResizeScale(h, oh, align), ws = internal::ResizeScale(w, ow, align);
  const std::vector<Span> xs = Spans(ow, ws);
  const float norm = 1.0f / (hs * ws);
  const T* in = images.data<T>();
  float* o = out->data<float>();
  std::vector<float> y_parts;
  std::vector<int64_t> y_rows;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t y = 0; y < oh; ++y) {
      const float lo = y * hs, hi = (y + 1) * hs;
      y_parts.clear();
      y_rows.clear();
      for (int64_t i = static_cast<int64_t>(std::floor(lo)); i < static_cast<int64_t>(std::ceil(hi)); ++i) {
        y_parts.push_back(Part(i, lo, hi, hs));
        y_rows.push_back(Clamp(i, h));
      }
      for (int64_t x = 0; x < ow; ++x, o += channels) {
        const Span& sx = xs[x];
        for (int64_t c = 0; c < channels; ++c) {
          float sum = 0;
          for (size_t r = 0; r < y_rows.size(); ++r) {
            const T* row = in + ((b * h + y_rows[r]) * w) * channels + c;
            float row_sum = static_cast<float>(row[Clamp(sx.start, w) * channels]) * sx.start_part;
            if (sx.start + 1 != sx.end) {
              for (int64_t v = sx.start + 1; v < sx.end - 1; ++v) {
                row_sum += static_cast<float>(row[Clamp(v, w) * channels]);
              }
              row_sum += static_cast<float>(row[Clamp(sx.end - 1, w) * channels]) * sx.last_part;
            }
            sum += row_sum * y_parts[r];
          }
          o[c] = sum * norm;
        }
      }
    }
  }
  return absl::OkStatus();
}

class ResizeAreaOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(align_, ctx.GetAttr<bool>("align_corners"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    RETURN_IF_ERROR(internal::CheckImages4D(images, "input"));
    ASSIGN_OR_RETURN(auto hw, internal::ResizeSizeInput(ctx->input(1), "size"));
    if (images.dim_size(1) <= 0 || images.dim_size(2) <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("input must be of non-zero size, got height ",
                                                     images.dim_size(1), " and width ", images.dim_size(2)));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({images.dim_size(0), hw.first, hw.second,
                                                                        images.dim_size(3)})));
    if (out->NumElements() == 0) return absl::OkStatus();
    return internal::WithRealType(images.dtype(), [&](auto tag) {
      return ResizeAreaLoop<decltype(tag)>(images, hw.first, hw.second, align_, out);
    });
  }

 private:
  bool align_ = false;
};

}  // namespace

absl::Status RegisterResizeAreaOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ResizeArea")
                                    .Input("images: T")
                                    .Input("size: int32")
                                    .Output("resized_images: float")
                                    .Attr(absl::StrCat("T: ", internal::kImageRealTypes))
                                    .Attr("align_corners: bool = false")
                                    .SetShapeFn([](InferenceContext* c) {
                                      return internal::ResizedShape(c, 0, 1, 0);
                                    })));
  return ops->SetNoGradient("ResizeArea");
}

void RegisterResizeAreaKernels(KernelRegistry* k) {
  k->Register<ResizeAreaOp>(KernelDef("ResizeArea", kDeviceTypeCpu)
                                .TypeConstraint("T", {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32,
                                                      DT_INT64, DT_FLOAT, DT_DOUBLE})
                                .HostMemory("size"));
}

namespace ops {

Output ResizeArea(const Scope& s, Input images, Input size, bool align_corners, std::source_location loc) {
  return s.Op("ResizeArea", loc).Input(images).Input(size).Attr("align_corners", align_corners).Finalize1();
}

}  // namespace ops
}  // namespace sluice
