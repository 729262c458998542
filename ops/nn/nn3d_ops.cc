// The 3-D window ops: definitions, shape functions and wrappers (kernels:
// conv3d_kernels.cc and pool3d_kernels.cc).
#include "ops/nn/nn3d_ops.h"

#include <array>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/nn/internal/window3d.h"

namespace sluice {
namespace {

using internal::Window3D;
using internal::Window3DAttrs;

int64_t Dim(const TensorShape& s, int i) { return s.unknown_rank() ? -1 : s.dim(i); }

absl::Status WithOp(InferenceContext* c, const absl::Status& s) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(c->node().op(), ": ", s.message()));
}

// [batch, out planes, rows, cols, depth].
absl::Status SetWindowOutput(InferenceContext* c, bool pool, std::array<int64_t, 3> window,
                             int64_t depth) {
  absl::StatusOr<Window3DAttrs> a = internal::ReadWindow3DAttrs(c->node(), pool);
  RETURN_IF_ERROR(WithOp(c, a.status()));
  const TensorShape& in = c->input(0);
  absl::StatusOr<Window3D> w = internal::ComputeWindow3D(*a, in, window);
  RETURN_IF_ERROR(WithOp(c, w.status()));
  c->set_output(0, TensorShape({Dim(in, 0), w->out[0], w->out[1], w->out[2], depth}));
  return absl::OkStatus();
}

absl::Status Conv3DShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 5));
  RETURN_IF_ERROR(c->WithRank(1, 5));
  const TensorShape& in = c->input(0);
  const TensorShape& f = c->input(1);
  if (Dim(in, 4) >= 0 && Dim(f, 3) >= 0 && Dim(in, 4) != Dim(f, 3)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Conv3D: input depth ", Dim(in, 4), " must equal the filter's in_depth ", Dim(f, 3),
        " (input ", in.DebugString(), ", filter ", f.DebugString(), ")"));
  }
  return SetWindowOutput(c, false, {Dim(f, 0), Dim(f, 1), Dim(f, 2)}, Dim(f, 4));
}

absl::Status PoolShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 5));
  absl::StatusOr<std::vector<int64_t>> k = c->GetAttr<std::vector<int64_t>>("ksize");
  RETURN_IF_ERROR(k.status());
  if (k->size() != 5) return WithOp(c, absl::InvalidArgumentError("ksize must have 5 values"));
  return SetWindowOutput(c, true, {(*k)[1], (*k)[2], (*k)[3]}, Dim(c->input(0), 4));
}

// The output shape is the [5] sizes fed into input `i`.
absl::Status SizesShape(InferenceContext* c, int i, bool pool) {
  RETURN_IF_ERROR(WithOp(c, internal::ReadWindow3DAttrs(c->node(), pool).status()));
  return internal::ShapeFromSizesInput(c, i, 5);
}

absl::Status BackpropInputShape(InferenceContext* c) { return SizesShape(c, 0, false); }
absl::Status BackpropFilterShape(InferenceContext* c) { return SizesShape(c, 1, false); }
absl::Status AvgPoolGradShape(InferenceContext* c) { return SizesShape(c, 0, true); }
absl::Status MaxPoolGradShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(c->WithRank(i, 5));
  RETURN_IF_ERROR(WithOp(c, internal::ReadWindow3DAttrs(c->node(), true).status()));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

constexpr char kFormat[] = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'";

OpDefBuilder ConvBuilder(const char* name) {
  OpDefBuilder b(name);
  b.Attr("T: {half, bfloat16, float, double}")
      .Attr("strides: list(int) >= 5")
      .Attr("padding: {'SAME', 'VALID'}")
      .Attr(kFormat)
      .Attr("dilations: list(int) = [1, 1, 1, 1, 1]");
  return b;
}

OpDefBuilder PoolBuilder(const char* name) {
  OpDefBuilder b(name);
  b.Attr("ksize: list(int) >= 5")
      .Attr("strides: list(int) >= 5")
      .Attr("padding: {'SAME', 'VALID'}")
      .Attr(kFormat);
  return b;
}

}  // namespace

absl::Status RegisterNn3dOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(ConvBuilder("Conv3D")
                                    .Input("input: T")
                                    .Input("filter: T")
                                    .Output("output: T")
                                    .SetShapeFn(Conv3DShape)));
  RETURN_IF_ERROR(ops->Register(ConvBuilder("Conv3DBackpropInputV2")
                                    .Input("input_sizes: Tshape")
                                    .Input("filter: T")
                                    .Input("out_backprop: T")
                                    .Output("output: T")
                                    .Attr("Tshape: {int32, int64} = DT_INT32")
                                    .SetShapeFn(BackpropInputShape)));
  RETURN_IF_ERROR(ops->Register(ConvBuilder("Conv3DBackpropFilterV2")
                                    .Input("input: T")
                                    .Input("filter_sizes: int32")
                                    .Input("out_backprop: T")
                                    .Output("output: T")
                                    .SetShapeFn(BackpropFilterShape)));
  for (const char* name : {"MaxPool3D", "AvgPool3D"}) {
    RETURN_IF_ERROR(ops->Register(PoolBuilder(name)
                                      .Input("input: T")
                                      .Output("output: T")
                                      .Attr("T: {half, bfloat16, float}")
                                      .SetShapeFn(PoolShape)));
  }
  RETURN_IF_ERROR(ops->Register(PoolBuilder("MaxPool3DGrad")
                                    .Input("orig_input: TInput")
                                    .Input("orig_output: TInput")
                                    .Input("grad: T")
                                    .Output("output: T")
                                    .Attr("T: {half, bfloat16, float} = DT_FLOAT")
                                    .Attr("TInput: {half, bfloat16, float} = DT_FLOAT")
                                    .SetShapeFn(MaxPoolGradShape)));
  RETURN_IF_ERROR(ops->Register(PoolBuilder("AvgPool3DGrad")
                                    .Input("orig_input_shape: int32")
                                    .Input("grad: T")
                                    .Output("output: T")
                                    .Attr("T: {half, bfloat16, float}")
                                    .SetShapeFn(AvgPoolGradShape)));
  return absl::OkStatus();
}

void RegisterNn3dKernels(KernelRegistry* kernels) {
  internal::RegisterConv3DKernels(kernels);
  internal::RegisterPool3DKernels(kernels);
}

namespace ops {
namespace {

Output Conv(const Scope& s, const char* op, Input a, Input b, std::optional<Input> c,
            const std::vector<int64_t>& strides, absl::string_view padding,
            const Conv3DAttrs& attrs, std::source_location loc) {
  OpBuilder o = s.Op(op, loc);
  o.Input(a).Input(b);
  if (c.has_value()) o.Input(*c);
  return o.Attr("strides", strides)
      .Attr("padding", padding)
      .Attr("data_format", attrs.data_format)
      .Attr("dilations", attrs.dilations)
      .Finalize1();
}

Output Pool(const Scope& s, const char* op, std::vector<Input> inputs,
            const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
            absl::string_view padding, const Pool3DAttrs& attrs, std::source_location loc) {
  OpBuilder o = s.Op(op, loc);
  for (const Input& in : inputs) o.Input(in);
  return o.Attr("ksize", ksize)
      .Attr("strides", strides)
      .Attr("padding", padding)
      .Attr("data_format", attrs.data_format)
      .Finalize1();
}

}  // namespace

Output Conv3D(const Scope& s, Input input, Input filter, const std::vector<int64_t>& strides,
              absl::string_view padding, const Conv3DAttrs& attrs, std::source_location loc) {
  return Conv(s, "Conv3D", input, filter, std::nullopt, strides, padding, attrs, loc);
}
Output Conv3DBackpropInputV2(const Scope& s, Input input_sizes, Input filter, Input out_backprop,
                             const std::vector<int64_t>& strides, absl::string_view padding,
                             const Conv3DAttrs& attrs, std::source_location loc) {
  return Conv(s, "Conv3DBackpropInputV2", input_sizes, filter, out_backprop, strides, padding,
              attrs, loc);
}
Output Conv3DBackpropFilterV2(const Scope& s, Input input, Input filter_sizes, Input out_backprop,
                              const std::vector<int64_t>& strides, absl::string_view padding,
                              const Conv3DAttrs& attrs, std::source_location loc) {
  return Conv(s, "Conv3DBackpropFilterV2", input, filter_sizes, out_backprop, strides, padding,
              attrs, loc);
}
Output MaxPool3D(const Scope& s, Input input, const std::vector<int64_t>& ksize,
                 const std::vector<int64_t>& strides, absl::string_view padding,
                 const Pool3DAttrs& attrs, std::source_location loc) {
  return Pool(s, "MaxPool3D", {input}, ksize, strides, padding, attrs, loc);
}
Output AvgPool3D(const Scope& s, Input input, const std::vector<int64_t>& ksize,
                 const std::vector<int64_t>& strides, absl::string_view padding,
                 const Pool3DAttrs& attrs, std::source_location loc) {
  return Pool(s, "AvgPool3D", {input}, ksize, strides, padding, attrs, loc);
}
Output MaxPool3DGrad(const Scope& s, Input orig_input, Input orig_output, Input grad,
                     const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                     absl::string_view padding, const Pool3DAttrs& attrs,
                     std::source_location loc) {
  return Pool(s, "MaxPool3DGrad", {orig_input, orig_output, grad}, ksize, strides, padding, attrs,
              loc);
}
Output AvgPool3DGrad(const Scope& s, Input orig_input_shape, Input grad,
                     const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                     absl::string_view padding, const Pool3DAttrs& attrs,
                     std::source_location loc) {
  return Pool(s, "AvgPool3DGrad", {orig_input_shape, grad}, ksize, strides, padding, attrs, loc);
}

}  // namespace ops
}  // namespace sluice
