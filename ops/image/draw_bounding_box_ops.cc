// Definitions, wrapper and CPU kernels of DrawBoundingBoxes and V2
// (ops/image/draw_bounding_box_ops.h).
#include "ops/image/draw_bounding_box_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// TensorFlow's ten colors (RGBA); for one channel every color's first is 1.
std::vector<std::vector<float>> DefaultColors(int64_t depth) {
  std::vector<std::vector<float>> table = {
      {1, 1, 0, 1},   {0, 0, 1, 1},   {1, 0, 0, 1},     {0, 1, 0, 1},   {0.5, 0, 0.5, 1},
      {0.5, 0.5, 0, 1}, {0.5, 0, 0, 1}, {0, 0, 0.5, 1}, {0, 1, 1, 1},   {1, 0, 1, 1}};
  if (depth == 1) {
    for (auto& c : table) c[0] = 1;
  }
  return table;
}

template <typename T>
T FromFloat(float v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half::FromFloat(v);
  } else {
    return v;
  }
}

template <typename T>
class DrawBoundingBoxesOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    const Tensor& boxes = ctx->input(1);
    if (images.dims() != 4) return absl::InvalidArgumentError("The rank of the images should be 4");
    if (boxes.dims() != 3) return absl::InvalidArgumentError("The rank of the boxes tensor should be 3");
    if (images.dim_size(0) != boxes.dim_size(0)) {
      return absl::InvalidArgumentError("The batch sizes should be the same");
    }
    const int64_t batch = images.dim_size(0), h = images.dim_size(1), w = images.dim_size(2),
                  depth = images.dim_size(3);
    if (depth != 1 && depth != 3 && depth != 4) {
      return absl::InvalidArgumentError("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)");
    }
    if (boxes.dim_size(2) != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("The size of the third dimension of the box must be 4. Received: ", boxes.dim_size(2)));
    }
    std::vector<std::vector<float>> colors;
    if (ctx->num_inputs() == 3) {
      const Tensor& c = ctx->input(2);
      if (c.dims() != 2) return absl::InvalidArgumentError(absl::StrCat("colors must be a 2-D matrix", c.shape().DebugString()));
      if (c.dim_size(1) < depth) {
        return absl::InvalidArgumentError(absl::StrCat(
            "colors must have equal or more channels than the image provided: ", c.shape().DebugString()));
      }
      for (int64_t i = 0; i < c.dim_size(0); ++i) {
        const float* row = c.data<float>() + i * c.dim_size(1);
        colors.emplace_back(row, row + depth);
      }
    }
    if (colors.empty()) colors = DefaultColors(depth);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, images.shape()));
    const T* in = images.data<T>();
    T* canvas = out->data<T>();
    std::copy(in, in + images.NumElements(), canvas);
    auto paint = [&](int64_t b, int64_t y, int64_t x, const std::vector<float>& color) {
      T* px = canvas + ((b * h + y) * w + x) * depth;
      for (int64_t c = 0; c < depth; ++c) px[c] = FromFloat<T>(color[c]);
    };
    const int64_t n = boxes.dim_size(1);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < n; ++i) {
        const float* box = boxes.data<float>() + (b * n + i) * 4;
        const std::vector<float>& color = colors[i % colors.size()];
        const float corners[4] = {box[0] * (h - 1), box[1] * (w - 1), box[2] * (h - 1), box[3] * (w - 1)};
        // Beyond int64 (or NaN) no conversion is defined: such a box is off the image.
        bool finite = true;
        for (float v : corners) finite = finite && std::fabs(v) < 9e18f;
        if (!finite) continue;
        const int64_t top = static_cast<int64_t>(corners[0]), left = static_cast<int64_t>(corners[1]),
                      bottom = static_cast<int64_t>(corners[2]), right = static_cast<int64_t>(corners[3]);
        if (top > bottom || left > right) continue;                   // inverted
        if (top >= h || bottom < 0 || left >= w || right < 0) continue;  // outside
        const int64_t top_c = std::max<int64_t>(top, 0), bottom_c = std::min<int64_t>(bottom, h - 1);
        const int64_t left_c = std::max<int64_t>(left, 0), right_c = std::min<int64_t>(right, w - 1);
        for (int64_t x = left_c; x <= right_c; ++x) {
          if (top >= 0) paint(b, top, x, color);
          if (bottom < h) paint(b, bottom, x, color);
        }
        for (int64_t y = top_c; y <= bottom_c; ++y) {
          if (left >= 0) paint(b, y, left, color);
          if (right < w) paint(b, y, right, color);
        }
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

absl::Status RegisterDrawBoundingBoxOps(OpRegistry* ops) {
  for (bool v2 : {false, true}) {
    OpDefBuilder b(v2 ? "DrawBoundingBoxesV2" : "DrawBoundingBoxes");
    b.Input("images: T").Input("boxes: float");
    if (v2) b.Input("colors: float");
    b.Output("output: T").Attr("T: {float, half} = DT_FLOAT").SetShapeFn([](InferenceContext* c) {
      RETURN_IF_ERROR(c->WithRank(0, 4));
      c->set_output(0, c->input(0));
      return absl::OkStatus();
    });
    RETURN_IF_ERROR(ops->Register(std::move(b)));
    RETURN_IF_ERROR(ops->SetNoGradient(v2 ? "DrawBoundingBoxesV2" : "DrawBoundingBoxes"));
  }
  return absl::OkStatus();
}

void RegisterDrawBoundingBoxKernels(KernelRegistry* k) {
  for (const char* op : {"DrawBoundingBoxes", "DrawBoundingBoxesV2"}) {
    k->Register<DrawBoundingBoxesOp<float>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
    k->Register<DrawBoundingBoxesOp<Half>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_HALF));
  }
}

namespace ops {

Output DrawBoundingBoxesV2(const Scope& s, Input images, Input boxes, Input colors, std::source_location loc) {
  return s.Op("DrawBoundingBoxesV2", loc).Input(images).Input(boxes).Input(colors).Finalize1();
}

}  // namespace ops
}  // namespace sluice
