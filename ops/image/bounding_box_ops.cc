// SampleDistortedBoundingBox, V2 and the stateless form: op definitions,
// CPU kernels and wrappers (ops/image/bounding_box_ops.h). The crop search
// follows TensorFlow's sample_distorted_bounding_box_op.cc step for step
// (its float and double roundings included), since seeded graphs must crop
// where TensorFlow's do.
#include "ops/image/bounding_box_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"
#include "ops/gpu/stateless_philox.h"
#include "ops/random/internal/philox_stream.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// Pixel rectangle [min, max) on both axes.
struct Rect {
  int min_x = 0, min_y = 0, max_x = 0, max_y = 0;

  float Area() const { return static_cast<float>((max_x - min_x) * (max_y - min_y)); }
  Rect Intersect(const Rect& r) const {
    Rect o{std::max(min_x, r.min_x), std::max(min_y, r.min_y), std::min(max_x, r.max_x),
           std::min(max_y, r.max_y)};
    if (o.min_x > o.max_x || o.min_y > o.max_y) return Rect{};
    return o;
  }
};

// Whether `crop` (of at least a pixel) covers `min_covered` of some box
// with at least a pixel.
bool CoversABox(const Rect& crop, float min_covered, const std::vector<Rect>& boxes) {
  constexpr float kMinArea = 1.0f;
  if (crop.Area() < kMinArea) return false;
  for (const Rect& box : boxes) {
    const float area = box.Area();
    if (area < kMinArea) continue;
    if (crop.Intersect(box).Area() / area >= min_covered) return true;
  }
  return false;
}

// One crop of `aspect` (width / height) with an area between the given
// fractions of the image, its height uniform between the least and most
// allowed and its corner uniform; false when the constraints cannot be met.
bool DrawCrop(int width, int height, float min_fraction, float max_fraction, float aspect,
              PhiloxStream* rng, Rect* crop) {
  if (max_fraction <= 0.0f || aspect <= 0.0f || width <= 0 || height <= 0 ||
      min_fraction > max_fraction) {
    return false;
  }
  const float min_area = min_fraction * width * height;
  const float max_area = max_fraction * width * height;
  int h = static_cast<int>(lrintf(std::sqrt(min_area / aspect)));
  int max_h = static_cast<int>(lrintf(std::sqrt(max_area / aspect)));
  if (lrintf(max_h * aspect) > width) {
    // The tallest crop whose rounded width fits, in double as TensorFlow
    // computes it, and one less if rounding still spills over.
    constexpr float kEps = 0.0000001f;
    max_h = static_cast<int>((width + 0.5 - kEps) / aspect);
    if (lrintf(max_h * aspect) > width) max_h -= 1;
  }
  max_h = std::min(max_h, height);
  h = std::min(h, max_h);
  if (h < max_h) h += static_cast<int>(rng->Uniform(static_cast<uint32_t>(max_h - h + 1)));
  int w = static_cast<int>(lrintf(h * aspect));
  // Rounding may leave the area just outside the range: one row more, then
  // one less, before giving up.
  float area = static_cast<float>(w * h);
  if (area < min_area) {
    h += 1;
    w = static_cast<int>(lrintf(h * aspect));
    area = static_cast<float>(w * h);
  }
  if (area > max_area) {
    h -= 1;
    w = static_cast<int>(lrintf(h * aspect));
    area = static_cast<float>(w * h);
  }
  if (area < min_area || area > max_area || w > width || h > height || w <= 0 || h <= 0) {
    return false;
  }
  const int y = h < height ? static_cast<int>(rng->Uniform(static_cast<uint32_t>(height - h))) : 0;
  const int x = w < width ? static_cast<int>(rng->Uniform(static_cast<uint32_t>(width - w))) : 0;
  *crop = Rect{x, y, x + w, y + h};
  return true;
}

template <typename T>
class SampleBoxBase : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(use_image_, ctx.GetAttr<bool>("use_image_if_no_bounding_boxes"));
    ASSIGN_OR_RETURN(aspect_, ctx.GetAttr<std::vector<float>>("aspect_ratio_range"));
    if (aspect_.size() != 2) {
      return absl::InvalidArgumentError("Aspect ratio range field must specify 2 dimensions");
    }
    if (!(aspect_[0] > 0 && aspect_[1] > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Aspect ratio range must be non-negative: [", aspect_[0], ", ", aspect_[1], "]"));
    }
    ASSIGN_OR_RETURN(area_, ctx.GetAttr<std::vector<float>>("area_range"));
    if (area_.size() != 2) {
      return absl::InvalidArgumentError("Area range field must specify 2 dimensions");
    }
    if (!(area_[0] > 0 && area_[1] > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Area range must be non-negative: [", area_[0], ", ", area_[1], "]"));
    }
    if (!(area_[0] <= 1 && area_[1] <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Area range must be less then or equal to 1.0: [", area_[0], ", ", area_[1], "]"));
    }
    ASSIGN_OR_RETURN(int64_t attempts, ctx.GetAttr<int64_t>("max_attempts"));
    if (attempts <= 0 || attempts > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Max attempts must be positive: ", attempts));
    }
    max_attempts_ = static_cast<int>(attempts);
    return absl::OkStatus();
  }

 protected:
  // min_covered: the attr's value for the first op, else the input's.
  absl::Status Sample(OpKernelContext* ctx, float min_covered, const stateless::KeyCounter& kc) {
    const Tensor& size = ctx->input(0);
    if (size.dims() != 1 || size.dim_size(0) != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "image_size must be 1-dimensional with 3 elements, got shape ",
          size.shape().DebugString()));
    }
    // Negative sizes become huge as uint64 and fail the bound, as in
    // TensorFlow.
    const uint64_t h_raw = static_cast<uint64_t>(size.data<T>()[0]);
    const uint64_t w_raw = static_cast<uint64_t>(size.data<T>()[1]);
    constexpr uint64_t kMax = std::numeric_limits<int32_t>::max();
    if (h_raw >= kMax) return absl::InvalidArgumentError("image height cannot be >= int32 max");
    if (w_raw >= kMax) return absl::InvalidArgumentError("image width cannot be >= int32 max");
    const int height = static_cast<int>(h_raw), width = static_cast<int>(w_raw);

    const Tensor& boxes = ctx->input(1);
    if (boxes.dims() != 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("input boxes must be 3-dimensional [batch, num_boxes, coords]: ",
                       boxes.shape().DebugString()));
    }
    if (boxes.dim_size(2) != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bounding boxes must have shape [4] or [*, 4], got ", boxes.shape().DebugString()));
    }
    if (!(min_covered >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Min object covered must be non-negative: ", min_covered));
    }
    std::vector<Rect> rects;
    const float* b = boxes.data<float>();
    for (int64_t i = 0; i < boxes.NumElements() / 4; ++i, b += 4) {
      for (int j = 0; j < 4; ++j) {
        if (!(b[j] >= 0.0f && b[j] <= 1.0f)) {
          return absl::InvalidArgumentError(
              absl::StrCat("All bounding box coordinates must be in [0.0, 1.0]: ", b[j]));
        }
      }
      rects.push_back(Rect{static_cast<int>(b[1] * width), static_cast<int>(b[0] * height),
                           static_cast<int>(b[3] * width), static_cast<int>(b[2] * height)});
    }
    const Rect image{0, 0, width, height};
    if (rects.empty()) {
      if (!use_image_) {
        return absl::InvalidArgumentError(
            "No bounding boxes provided as input. One must enable "
            "use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes.");
      }
      rects.push_back(image);
    }

    PhiloxStream rng(kc);
    Rect crop;
    bool found = false;
    for (int i = 0; i < max_attempts_ && !found; ++i) {
      const float aspect = rng.RandFloat() * (aspect_[1] - aspect_[0]) + aspect_[0];
      found = DrawCrop(width, height, area_[0], area_[1], aspect, &rng, &crop) &&
              CoversABox(crop, min_covered, rects);
    }
    if (!found) crop = image;

    ASSIGN_OR_RETURN(Tensor * begin, ctx->allocate_output(0, TensorShape({3})));
    ASSIGN_OR_RETURN(Tensor * extent, ctx->allocate_output(1, TensorShape({3})));
    ASSIGN_OR_RETURN(Tensor * bbox, ctx->allocate_output(2, TensorShape({1, 1, 4})));
    T* bg = begin->data<T>();
    T* sz = extent->data<T>();
    bg[0] = static_cast<T>(crop.min_y);
    bg[1] = static_cast<T>(crop.min_x);
    bg[2] = 0;
    sz[0] = static_cast<T>(crop.max_y - crop.min_y);
    sz[1] = static_cast<T>(crop.max_x - crop.min_x);
    sz[2] = static_cast<T>(-1);
    float* o = bbox->data<float>();
    o[0] = static_cast<float>(crop.min_y) / static_cast<float>(height);
    o[1] = static_cast<float>(crop.min_x) / static_cast<float>(width);
    o[2] = static_cast<float>(crop.max_y) / static_cast<float>(height);
    o[3] = static_cast<float>(crop.max_x) / static_cast<float>(width);
    return absl::OkStatus();
  }

  int max_attempts() const { return max_attempts_; }

 private:
  bool use_image_ = false;
  std::vector<float> aspect_, area_;
  int max_attempts_ = 100;
};

absl::StatusOr<float> MinCoveredInput(const Tensor& t) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("min_object_covered must be 0-D, got shape ", t.shape().DebugString()));
  }
  return t.scalar<float>();
}

// SampleDistortedBoundingBox (2 inputs) and V2 (3): TensorFlow's generator
// of seed and seed2, 4 x max_attempts words reserved per run.
template <typename T>
class StatefulSampleBoxOp : public SampleBoxBase<T> {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(SampleBoxBase<T>::Init(ctx));
    RETURN_IF_ERROR(generator_.Init(ctx));
    if (ctx.node().num_inputs() == 2) {
      ASSIGN_OR_RETURN(min_covered_, ctx.GetAttr<float>("min_object_covered"));
      if (!(min_covered_ >= 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Min object covered must be non-negative: ", min_covered_));
      }
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    float min_covered = min_covered_;
    if (ctx->num_inputs() >= 3) {
      ASSIGN_OR_RETURN(min_covered, MinCoveredInput(ctx->input(2)));
    }
    return this->Sample(ctx, min_covered,
                        generator_.ReserveSamples32(4 * static_cast<uint64_t>(this->max_attempts())));
  }

 private:
  SeededPhilox generator_;
  float min_covered_ = 0.1f;
};

template <typename T>
class StatelessSampleBoxOp : public SampleBoxBase<T> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(float min_covered, MinCoveredInput(ctx->input(2)));
    const Tensor& seed = ctx->input(3);
    if (seed.dims() != 1 || seed.dim_size(0) != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("seed must have shape [2], not ", seed.shape().DebugString()));
    }
    const int64_t s0 = seed.dtype() == DT_INT32 ? seed.data<int32_t>()[0] : seed.data<int64_t>()[0];
    const int64_t s1 = seed.dtype() == DT_INT32 ? seed.data<int32_t>()[1] : seed.data<int64_t>()[1];
    return this->Sample(ctx, min_covered,
                        stateless::FromSeed(static_cast<uint64_t>(s0), static_cast<uint64_t>(s1)));
  }
};

absl::Status SampleBoxShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 1));
  RETURN_IF_ERROR(c->WithRank(1, 3));
  const TensorShape& size = c->input(0);
  const TensorShape& boxes = c->input(1);
  if (!size.unknown_rank() && size.dim(0) != TensorShape::kUnknownDim && size.dim(0) != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("image_size must have 3 elements, got shape ", size.DebugString()));
  }
  if (!boxes.unknown_rank() && boxes.dim(2) != TensorShape::kUnknownDim && boxes.dim(2) != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("bounding boxes must end in 4 coordinates, got shape ", boxes.DebugString()));
  }
  if (c->num_inputs() >= 3) RETURN_IF_ERROR(c->WithRank(2, 0));
  c->set_output(0, TensorShape({3}));
  c->set_output(1, TensorShape({3}));
  c->set_output(2, TensorShape({1, 1, 4}));
  return absl::OkStatus();
}

constexpr char kSizeTypes[] = "T: {uint8, int8, int16, int32, int64}";

OpDefBuilder CommonAttrs(OpDefBuilder b) {
  constexpr float kAspect[] = {0.75f, 1.33f};
  constexpr float kArea[] = {0.05f, 1.0f};
  return b.Output("begin: T")
      .Output("size: T")
      .Output("bboxes: float")
      .Attr(kSizeTypes)
      .Attr("aspect_ratio_range: list(float)")
      .SetAttrDefault("aspect_ratio_range", MakeAttr(absl::MakeConstSpan(kAspect)))
      .Attr("area_range: list(float)")
      .SetAttrDefault("area_range", MakeAttr(absl::MakeConstSpan(kArea)))
      .Attr("max_attempts: int = 100")
      .Attr("use_image_if_no_bounding_boxes: bool = false")
      .SetShapeFn(SampleBoxShape);
}

template <template <typename> class Op>
void RegisterAllTypes(KernelRegistry* k, const char* name) {
  auto def = [name](DataType t) { return KernelDef(name, kDeviceTypeCpu).TypeConstraint("T", t); };
  k->Register<Op<uint8_t>>(def(DT_UINT8));
  k->Register<Op<int8_t>>(def(DT_INT8));
  k->Register<Op<int16_t>>(def(DT_INT16));
  k->Register<Op<int32_t>>(def(DT_INT32));
  k->Register<Op<int64_t>>(def(DT_INT64));
}

}  // namespace

absl::Status RegisterBoundingBoxOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(CommonAttrs(OpDefBuilder("SampleDistortedBoundingBox")
                                                .Input("image_size: T")
                                                .Input("bounding_boxes: float")
                                                .Attr("seed: int = 0")
                                                .Attr("seed2: int = 0")
                                                .Attr("min_object_covered: float = 0.1"))
                                    .SetIsStateful()));
  RETURN_IF_ERROR(ops->Register(CommonAttrs(OpDefBuilder("SampleDistortedBoundingBoxV2")
                                                .Input("image_size: T")
                                                .Input("bounding_boxes: float")
                                                .Input("min_object_covered: float")
                                                .Attr("seed: int = 0")
                                                .Attr("seed2: int = 0"))
                                    .SetIsStateful()));
  RETURN_IF_ERROR(ops->Register(CommonAttrs(OpDefBuilder("StatelessSampleDistortedBoundingBox")
                                                .Input("image_size: T")
                                                .Input("bounding_boxes: float")
                                                .Input("min_object_covered: float")
                                                .Input("seed: Tseed")
                                                .Attr("Tseed: {int32, int64}"))));
  for (const char* op : {"SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2",
                         "StatelessSampleDistortedBoundingBox"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

void RegisterBoundingBoxKernels(KernelRegistry* k) {
  RegisterAllTypes<StatefulSampleBoxOp>(k, "SampleDistortedBoundingBox");
  RegisterAllTypes<StatefulSampleBoxOp>(k, "SampleDistortedBoundingBoxV2");
  RegisterAllTypes<StatelessSampleBoxOp>(k, "StatelessSampleDistortedBoundingBox");
}

namespace ops {
namespace {

DistortedBoundingBox Outputs(const std::vector<Output>& outs) {
  if (outs.size() != 3) return DistortedBoundingBox{};
  return DistortedBoundingBox{outs[0], outs[1], outs[2]};
}

}  // namespace

DistortedBoundingBox SampleDistortedBoundingBoxV2(const Scope& s, Input image_size,
                                                  Input bounding_boxes, Input min_object_covered,
                                                  const SampleDistortedBoundingBoxAttrs& a,
                                                  std::source_location loc) {
  return Outputs(s.Op("SampleDistortedBoundingBoxV2", loc)
                     .Input(image_size)
                     .Input(bounding_boxes)
                     .Input(min_object_covered)
                     .Attr("seed", a.seed)
                     .Attr("seed2", a.seed2)
                     .Attr("aspect_ratio_range", a.aspect_ratio_range)
                     .Attr("area_range", a.area_range)
                     .Attr("max_attempts", a.max_attempts)
                     .Attr("use_image_if_no_bounding_boxes", a.use_image_if_no_bounding_boxes)
                     .FinalizeAll());
}

DistortedBoundingBox StatelessSampleDistortedBoundingBox(
    const Scope& s, Input image_size, Input bounding_boxes, Input min_object_covered, Input seed,
    const SampleDistortedBoundingBoxAttrs& a, std::source_location loc) {
  return Outputs(s.Op("StatelessSampleDistortedBoundingBox", loc)
                     .Input(image_size)
                     .Input(bounding_boxes)
                     .Input(min_object_covered)
                     .Input(seed)
                     .Attr("aspect_ratio_range", a.aspect_ratio_range)
                     .Attr("area_range", a.area_range)
                     .Attr("max_attempts", a.max_attempts)
                     .Attr("use_image_if_no_bounding_boxes", a.use_image_if_no_bounding_boxes)
                     .FinalizeAll());
}

}  // namespace ops
}  // namespace sluice
