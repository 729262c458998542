#include "ops/nn/internal/fused_matmul_attrs.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace sluice {
namespace internal {

absl::StatusOr<FusedMatMulKernelAttrs> ReadFusedMatMulAttrs(const OpKernelConstruction& ctx,
                                                            absl::string_view device) {
  FusedMatMulKernelAttrs a;
  ASSIGN_OR_RETURN(a.transpose_a, ctx.GetAttr<bool>("transpose_a"));
  ASSIGN_OR_RETURN(a.transpose_b, ctx.GetAttr<bool>("transpose_b"));
  ASSIGN_OR_RETURN(int64_t num_args, ctx.GetAttr<int64_t>("num_args"));
  ASSIGN_OR_RETURN(std::vector<std::string> fused,
                   ctx.GetAttr<std::vector<std::string>>("fused_ops"));
  const bool bias = fused == std::vector<std::string>{"BiasAdd"};
  a.relu = fused == std::vector<std::string>{"BiasAdd", "Relu"};
  if (!bias && !a.relu) {
    return absl::UnimplementedError(absl::StrCat(
        "_FusedMatMul: fused_ops [", absl::StrJoin(fused, ", "), "] is not supported on the ",
        device, " (supported: [BiasAdd], [BiasAdd, Relu])"));
  }
  if (num_args != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "_FusedMatMul: BiasAdd takes one argument (the bias), got num_args = ", num_args));
  }
  return a;
}

absl::StatusOr<MatMulDims> CheckFusedMatMulInputs(const OpKernelContext& ctx,
                                                  const FusedMatMulKernelAttrs& attrs,
                                                  absl::string_view library) {
  const Tensor& bias = ctx.input(2);
  ASSIGN_OR_RETURN(MatMulDims d, CheckMatMulShapes(ctx.input(0), ctx.input(1), attrs.transpose_a,
                                                   attrs.transpose_b, library));
  if (bias.dims() != 1 || bias.dim_size(0) != d.n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "_FusedMatMul: the bias must be a vector of the product's ", d.n, " columns, got shape ",
        bias.shape().DebugString()));
  }
  return d;
}

}  // namespace internal
}  // namespace sluice
