// The attrs of a _FusedMatMul node as its kernels (CPU and GPU) read them
// (the transposes and which of the two supported epilogues it asks for),
// and the check of its inputs.
//
//   ASSIGN_OR_RETURN(internal::FusedMatMulKernelAttrs a,
//                    internal::ReadFusedMatMulAttrs(ctx, "GPU"));
//   ASSIGN_OR_RETURN(internal::MatMulDims d, internal::CheckFusedMatMulInputs(*ctx, a, "cuBLAS"));
//
// Errors: Unimplemented naming the fused_ops list and the device when it is
// neither [BiasAdd] nor [BiasAdd, Relu]; InvalidArgument when num_args is
// not 1; InvalidArgument naming the shapes for inputs that do not fit.
// Thread-safety: pure. Internal to ops/.
#ifndef SLUICE_OPS_NN_INTERNAL_FUSED_MATMUL_ATTRS_H_
#define SLUICE_OPS_NN_INTERNAL_FUSED_MATMUL_ATTRS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ops/math/internal/math_kernel_checks.h"
#include "runtime/kernel.h"

namespace sluice {
namespace internal {

struct FusedMatMulKernelAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
  bool relu = false;  // fused_ops [BiasAdd, Relu]; else [BiasAdd]
};

absl::StatusOr<FusedMatMulKernelAttrs> ReadFusedMatMulAttrs(const OpKernelConstruction& ctx,
                                                            absl::string_view device);

// Inputs a, b and bias of ctx: the product's dimensions, the bias a vector
// of its n columns. `library` names the GEMM in errors.
absl::StatusOr<MatMulDims> CheckFusedMatMulInputs(const OpKernelContext& ctx,
                                                  const FusedMatMulKernelAttrs& attrs,
                                                  absl::string_view library);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_FUSED_MATMUL_ATTRS_H_
