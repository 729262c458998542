#include "ops/nn/internal/window_checks.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace internal {

absl::StatusOr<WindowAttrs> ReadKernelWindowAttrs(const OpKernelConstruction& ctx, bool pool,
                                                  absl::string_view device) {
  auto attrs = pool ? ReadPoolAttrs(ctx.node().attrs()) : ReadConvAttrs(ctx.node().attrs());
  if (!attrs.ok()) return attrs.status();
  if (attrs->nchw) {
    return absl::UnimplementedError(
        absl::StrCat(ctx.node().op(), " on ", device, " supports only data_format NHWC"));
  }
  return attrs;
}

absl::Status CheckRank4(absl::string_view op, absl::string_view what, const Tensor& t) {
  if (t.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, " must be 4-D, got shape ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorShape> ReadSizes(absl::string_view op, const Tensor& t) {
  if (t.dims() != 1 || t.NumElements() != 4 || t.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": sizes must be an int32 vector of 4 elements, got ", t.DebugString()));
  }
  TensorShape s;
  for (int32_t d : t.flat<int32_t>()) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat(op, ": negative size ", d));
    s.AddDim(d);
  }
  return s;
}

absl::StatusOr<Conv2DGeometry> ConvGeometry(absl::string_view op, const WindowAttrs& attrs,
                                            const TensorShape& input, const TensorShape& filter) {
  if (input.dim(3) != filter.dim(2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": input depth ", input.dim(3), " must equal the filter's in_depth ", filter.dim(2),
        " (input shape ", input.DebugString(), ", filter shape ", filter.DebugString(), ")"));
  }
  auto g =
      ComputeConv2DGeometry(attrs, input, filter.dim(0), filter.dim(1), filter.dim(3));
  if (!g.ok()) {
    return absl::Status(
        g.status().code(),
        absl::StrCat(op, ": ", g.status().message(), " (input shape ", input.DebugString(),
                     ", filter shape ", filter.DebugString(), ")"));
  }
  return g;
}

absl::Status CheckOutBackprop(absl::string_view op, const Conv2DGeometry& g,
                              const Tensor& out_backprop) {
  const TensorShape expected({g.batch, g.out_rows, g.out_cols, g.out_depth});
  if (out_backprop.shape() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": out_backprop has shape ", out_backprop.shape().DebugString(),
                     " but the forward output would have shape ", expected.DebugString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Conv2DGeometry> PoolGeometryOfShape(absl::string_view op, const WindowAttrs& attrs,
                                                   const TensorShape& input) {
  auto g = ComputeConv2DGeometry(attrs, input, attrs.ksize[1], attrs.ksize[2],
                                           input.dim(3));
  if (!g.ok()) {
    return absl::Status(g.status().code(), absl::StrCat(op, ": ", g.status().message(),
                                                        " (input shape ", input.DebugString(), ")"));
  }
  return g;
}

absl::StatusOr<Conv2DGeometry> PoolGeometry(absl::string_view op, const WindowAttrs& attrs,
                                            const Tensor& input) {
  RETURN_IF_ERROR(CheckRank4(op, "input", input));
  return PoolGeometryOfShape(op, attrs, input.shape());
}

absl::StatusOr<Conv2DGeometry> CheckConv2DInputs(const WindowAttrs& attrs, const Tensor& input,
                                                 const Tensor& filter) {
  RETURN_IF_ERROR(CheckRank4("Conv2D", "input", input));
  RETURN_IF_ERROR(CheckRank4("Conv2D", "filter", filter));
  return ConvGeometry("Conv2D", attrs, input.shape(), filter.shape());
}

absl::StatusOr<ConvBackpropGeometry> CheckConv2DBackpropInputInputs(const WindowAttrs& attrs,
                                                                    const Tensor& input_sizes,
                                                                    const Tensor& filter,
                                                                    const Tensor& out_backprop) {
  constexpr char kOp[] = "Conv2DBackpropInput";
  ConvBackpropGeometry r;
  ASSIGN_OR_RETURN(r.shape, ReadSizes(kOp, input_sizes));
  RETURN_IF_ERROR(CheckRank4(kOp, "filter", filter));
  RETURN_IF_ERROR(CheckRank4(kOp, "out_backprop", out_backprop));
  ASSIGN_OR_RETURN(r.geometry, ConvGeometry(kOp, attrs, r.shape, filter.shape()));
  RETURN_IF_ERROR(CheckOutBackprop(kOp, r.geometry, out_backprop));
  return r;
}

absl::StatusOr<ConvBackpropGeometry> CheckConv2DBackpropFilterInputs(const WindowAttrs& attrs,
                                                                     const Tensor& input,
                                                                     const Tensor& filter_sizes,
                                                                     const Tensor& out_backprop) {
  constexpr char kOp[] = "Conv2DBackpropFilter";
  ConvBackpropGeometry r;
  ASSIGN_OR_RETURN(r.shape, ReadSizes(kOp, filter_sizes));
  RETURN_IF_ERROR(CheckRank4(kOp, "input", input));
  RETURN_IF_ERROR(CheckRank4(kOp, "out_backprop", out_backprop));
  ASSIGN_OR_RETURN(r.geometry, ConvGeometry(kOp, attrs, input.shape(), r.shape));
  RETURN_IF_ERROR(CheckOutBackprop(kOp, r.geometry, out_backprop));
  return r;
}

absl::StatusOr<Conv2DGeometry> CheckMaxPoolGradInputs(const WindowAttrs& attrs,
                                                      const Tensor& input,
                                                      const Tensor& orig_output,
                                                      const Tensor& grad) {
  constexpr char kOp[] = "MaxPoolGrad";
  ASSIGN_OR_RETURN(Conv2DGeometry g, PoolGeometry(kOp, attrs, input));
  const TensorShape out_shape({g.batch, g.out_rows, g.out_cols, g.in_depth});
  if (orig_output.shape() != out_shape || grad.shape() != out_shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        kOp, ": orig_output and grad must have the pooled shape ", out_shape.DebugString(),
        ", got ", orig_output.shape().DebugString(), " and ", grad.shape().DebugString()));
  }
  return g;
}

absl::StatusOr<ConvBackpropGeometry> CheckAvgPoolGradInputs(const WindowAttrs& attrs,
                                                            const Tensor& orig_input_shape,
                                                            const Tensor& grad) {
  constexpr char kOp[] = "AvgPoolGrad";
  ASSIGN_OR_RETURN(TensorShape in_shape, ReadSizes(kOp, orig_input_shape));
  ASSIGN_OR_RETURN(Conv2DGeometry g, PoolGeometryOfShape(kOp, attrs, in_shape));
  const TensorShape out_shape({g.batch, g.out_rows, g.out_cols, g.in_depth});
  if (grad.shape() != out_shape) {
    return absl::InvalidArgumentError(absl::StrCat(kOp, ": grad must have the pooled shape ",
                                                   out_shape.DebugString(), ", got ",
                                                   grad.shape().DebugString()));
  }
  return ConvBackpropGeometry{in_shape, g};
}

}  // namespace internal
}  // namespace sluice
