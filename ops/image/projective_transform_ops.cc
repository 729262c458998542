// Definitions, wrappers, CPU kernels and gradients of
// ImageProjectiveTransformV2 and V3 (ops/image/projective_transform_ops.h).
#include "ops/image/projective_transform_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/linalg_ops.h"
#include "ops/math/math_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

enum class FillMode { kReflect, kWrap, kConstant, kNearest };

absl::StatusOr<FillMode> ParseFillMode(const std::string& s) {
  if (s == "REFLECT") return FillMode::kReflect;
  if (s == "WRAP") return FillMode::kWrap;
  if (s == "CONSTANT") return FillMode::kConstant;
  if (s == "NEAREST") return FillMode::kNearest;
  return absl::InvalidArgumentError(absl::StrCat("Invalid fill mode ", s));
}

float Clamp(float v, int64_t len) { return std::min(std::max(v, 0.0f), static_cast<float>(len - 1)); }

// An input coordinate folded into [0, len - 1] as scipy.ndimage folds it
// (CONSTANT leaves it, to be filled).
float MapCoordinate(FillMode mode, float v, int64_t len) {
  switch (mode) {
    case FillMode::kReflect:
      // [abcd] -> [dcba|abcd|dcba].
      if (v < 0) {
        if (len <= 1) return 0;
        const int64_t period = 2 * len;
        if (v < period) v = period * static_cast<int64_t>(-v / period) + v;
        v = v < -len ? v + period : -v - 1;
      } else if (v > len - 1) {
        if (len <= 1) return 0;
        const int64_t period = 2 * len;
        v -= period * static_cast<int64_t>(v / period);
        if (v >= len) v = period - v - 1;
      }
      return Clamp(v, len);
    case FillMode::kWrap:
      // [abcd] -> [abcd|abcd|abcd].
      if (v < 0) {
        if (len <= 1) return 0;
        v += len * (static_cast<int64_t>(-v / (len - 1)) + 1);
      } else if (v > len - 1) {
        if (len <= 1) return 0;
        v -= len * static_cast<int64_t>(v / (len - 1));
      }
      return Clamp(v, len);
    case FillMode::kNearest:
      return Clamp(v, len);
    case FillMode::kConstant:
      break;
  }
  return v;
}

template <typename T>
float ToFloat(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return v.ToFloat();
  } else {
    return static_cast<float>(v);
  }
}
template <typename T>
T FromFloat(float v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T::FromFloat(v);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
class ProjectiveTransformOp : public OpKernel {
 public:
  explicit ProjectiveTransformOp(bool has_fill_value) : has_fill_value_(has_fill_value) {}

  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(std::string interpolation, ctx.GetAttr<std::string>("interpolation"));
    if (interpolation != "NEAREST" && interpolation != "BILINEAR") {
      return absl::InvalidArgumentError(absl::StrCat("Invalid interpolation ", interpolation));
    }
    bilinear_ = interpolation == "BILINEAR";
    ASSIGN_OR_RETURN(std::string mode, ctx.GetAttr<std::string>("fill_mode"));
    ASSIGN_OR_RETURN(mode_, ParseFillMode(mode));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    const Tensor& transforms = ctx->input(1);
    const Tensor& out_shape = ctx->input(2);
    if (images.dims() != 4) return absl::InvalidArgumentError("Input images must have rank 4");
    const int64_t batch = images.dim_size(0), h = images.dim_size(1), w = images.dim_size(2),
                  channels = images.dim_size(3);
    if (transforms.dims() != 2 || (transforms.dim_size(0) != batch && transforms.dim_size(0) != 1) ||
        transforms.dim_size(1) != 8) {
      return absl::InvalidArgumentError("Input transform should be num_images x 8 or 1 x 8");
    }
    if (out_shape.dims() != 1) return absl::InvalidArgumentError("output shape must be 1-dimensional");
    if (out_shape.NumElements() != 2) return absl::InvalidArgumentError("output shape must have two elements");
    const int64_t out_h = out_shape.data<int32_t>()[0], out_w = out_shape.data<int32_t>()[1];
    if (out_h < 0 || out_w < 0) return absl::InvalidArgumentError("output dimensions must be non-negative");
    float fill = 0;
    if (has_fill_value_) {
      if (ctx->input(3).NumElements() != 1) return absl::InvalidArgumentError("fill_value must be a scalar");
      fill = ctx->input(3).data<float>()[0];
    }
    const T fill_value = FromFloat<T>(fill);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({batch, out_h, out_w, channels})));
    const T* in = images.data<T>();
    T* o = out->data<T>();
    auto read = [&](int64_t b, int64_t y, int64_t x, int64_t c) {
      return (0 <= y && y < h && 0 <= x && x < w) ? in[((b * h + y) * w + x) * channels + c] : fill_value;
    };
    for (int64_t b = 0; b < batch; ++b) {
      const float* m = transforms.data<float>() + (transforms.dim_size(0) == 1 ? 0 : 8 * b);
      for (int64_t oy = 0; oy < out_h; ++oy) {
        for (int64_t ox = 0; ox < out_w; ++ox) {
          T* pixel = o + ((b * out_h + oy) * out_w + ox) * channels;
          const float fx = static_cast<float>(ox), fy = static_cast<float>(oy);
          const float k = m[6] * fx + m[7] * fy + 1.f;
          // Points off the image read fill_value pixel by pixel (CONSTANT;
          // the other modes fold them in); k == 0 is filled whole.
          std::optional<float> x, y;
          if (k != 0) {
            x = MapCoordinate(mode_, (m[0] * fx + m[1] * fy + m[2]) / k, w);
            y = MapCoordinate(mode_, (m[3] * fx + m[4] * fy + m[5]) / k, h);
          }
          // Points off the image by a whole pixel or more read only
          // fill_value (and NaN or huge coordinates must not reach the
          // integer casts below).
          if (!x || !(*x > -1 && *x < w && *y > -1 && *y < h)) {
            std::fill(pixel, pixel + channels, fill_value);
            continue;
          }
          for (int64_t c = 0; c < channels; ++c) {
            if (!bilinear_) {
              pixel[c] = read(b, static_cast<int64_t>(std::round(*y)), static_cast<int64_t>(std::round(*x)), c);
              continue;
            }
            const float y0 = std::floor(*y), x0 = std::floor(*x), y1 = y0 + 1, x1 = x0 + 1;
            const auto at = [&](float yy, float xx) {
              return ToFloat(read(b, static_cast<int64_t>(yy), static_cast<int64_t>(xx), c));
            };
            const float top = (x1 - *x) * at(y0, x0) + (*x - x0) * at(y0, x1);
            const float bottom = (x1 - *x) * at(y1, x0) + (*x - x0) * at(y1, x1);
            pixel[c] = FromFloat<T>((y1 - *y) * top + (*y - y0) * bottom);
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  const bool has_fill_value_;
  bool bilinear_ = false;
  FillMode mode_ = FillMode::kConstant;
};

absl::Status TransformShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  const TensorShape& in = c->input(0);
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> size, c->InputAsInts(2));
  const int64_t unknown = TensorShape::kUnknownDim;
  const bool known = size.has_value() && size->size() == 2;
  c->set_output(0, TensorShape({in.unknown_rank() ? unknown : in.dim(0), known ? (*size)[0] : unknown,
                                known ? (*size)[1] : unknown, in.unknown_rank() ? unknown : in.dim(3)}));
  return absl::OkStatus();
}

// The gradient w.r.t. images: the incoming gradient transformed by the
// inverse transforms (each 3 x 3 matrix [t0..t7, 1] inverted and scaled
// so its last entry is 1), onto the images' size, fill 0.
absl::StatusOr<std::vector<Output>> TransformGrad(const Scope& s, const Node& node,
                                                  absl::Span<const Output> g, bool v3) {
  const Output images = internal::InputOf(node, 0);
  const Output flat = ops::Reshape(s, internal::InputOf(node, 1), ops::Const(s, Tensor::FromVector<int32_t>({-1, 8})));
  const Output ones = ops::Fill(
      s, ops::ConcatV2(s, {ops::Slice(s, ops::Shape(s, flat), {0}, {1}), ops::Const(s, Tensor::FromVector<int32_t>({1}))},
                       ops::Const(s, 0)),
      ops::Const(s, 1.0f));
  const Output matrices = ops::Reshape(s, ops::ConcatV2(s, {flat, ones}, ops::Const(s, 1)),
                                       ops::Const(s, Tensor::FromVector<int32_t>({-1, 3, 3})));
  const Output inverse = ops::Reshape(s, ops::MatrixInverse(s, matrices),
                                      ops::Const(s, Tensor::FromVector<int32_t>({-1, 9})));
  const Output scaled = ops::Div(s, inverse, ops::Slice(s, inverse, {0, 8}, {-1, 1}));
  const Output inverse_flat = ops::Slice(s, scaled, {0, 0}, {-1, 8});
  const Output size = ops::Slice(s, ops::Shape(s, images), {1}, {2});
  OpBuilder b = s.Op(v3 ? "ImageProjectiveTransformV3" : "ImageProjectiveTransformV2")
                    .Input(g[0])
                    .Input(inverse_flat)
                    .Input(size);
  if (v3) b.Input(ops::Const(s, 0.0f));
  for (const char* attr : {"interpolation", "fill_mode"}) b.SetAttr(attr, node.attrs().at(attr));
  Output gi = b.Finalize1();
  RETURN_IF_ERROR(s.status());
  std::vector<Output> out(v3 ? 4 : 3);
  out[0] = gi;
  return out;
}

}  // namespace

absl::Status RegisterProjectiveTransformOps(OpRegistry* ops) {
  for (bool v3 : {false, true}) {
    OpDefBuilder b(v3 ? "ImageProjectiveTransformV3" : "ImageProjectiveTransformV2");
    b.Input("images: dtype").Input("transforms: float").Input("output_shape: int32");
    if (v3) b.Input("fill_value: float");
    b.Output("transformed_images: dtype")
        .Attr("dtype: {uint8, int32, int64, half, bfloat16, float, double}")
        .Attr("interpolation: string")
        .Attr("fill_mode: string = 'CONSTANT'")
        .SetShapeFn(TransformShape);
    RETURN_IF_ERROR(ops->Register(std::move(b)));
    RETURN_IF_ERROR(ops->SetGradient(
        v3 ? "ImageProjectiveTransformV3" : "ImageProjectiveTransformV2",
        [v3](const Scope& s, const Node& n, absl::Span<const Output> g) { return TransformGrad(s, n, g, v3); }));
  }
  return absl::OkStatus();
}

void RegisterProjectiveTransformKernels(KernelRegistry* k) {
  auto both = [k]<typename T>() {
    constexpr DataType kType = DataTypeToEnum<T>::value;
    k->Register(KernelDef("ImageProjectiveTransformV2", kDeviceTypeCpu).TypeConstraint("dtype", kType).HostMemory("output_shape"),
                [] { return std::make_unique<ProjectiveTransformOp<T>>(false); });
    k->Register(KernelDef("ImageProjectiveTransformV3", kDeviceTypeCpu).TypeConstraint("dtype", kType).HostMemory("output_shape"),
                [] { return std::make_unique<ProjectiveTransformOp<T>>(true); });
  };
  both.template operator()<uint8_t>();
  both.template operator()<int32_t>();
  both.template operator()<int64_t>();
  both.template operator()<Half>();
  both.template operator()<BFloat16>();
  both.template operator()<float>();
  both.template operator()<double>();
}

namespace ops {

Output ImageProjectiveTransformV3(const Scope& s, Input images, Input transforms, Input output_shape,
                                  Input fill_value, const std::string& interpolation,
                                  const std::string& fill_mode, std::source_location loc) {
  return s.Op("ImageProjectiveTransformV3", loc)
      .Input(images)
      .Input(transforms)
      .Input(output_shape)
      .Input(fill_value)
      .Attr("interpolation", interpolation)
      .Attr("fill_mode", fill_mode)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
