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

}  // namespace internal
}  // namespace sluice
