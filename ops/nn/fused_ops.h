// Fused ops that the step engine's rewrite pass (placement/fuse_ops.h) puts
// in place of common chains, and that TensorFlow graph files may hold:
//
//   _FusedMatMul(a, b, args; transpose_a, transpose_b, fused_ops, num_args)
//       TensorFlow's grappler op: MatMul followed by `fused_ops`, here
//       ["BiasAdd"] (args = {bias}) or ["BiasAdd", "Relu"]. Attrs epsilon
//       and leakyrelu_alpha are accepted as TensorFlow writes them.
//   _MatMulApplyGradientDescent(var, alpha, a, b; transpose_a, transpose_b,
//                               use_locking)
//       Sluice's own: var -= alpha * MatMul(a, b), as one GEMM accumulating
//       into the variable (alpha' = -alpha, beta = 1); outputs var (a ref)
//       like ApplyGradientDescent.
//   _MatMulBiasAddGrad(a, b; transpose_a, transpose_b) -> (product, bias_grad)
//       Sluice's own: product = MatMul(a, b) and bias_grad = the column sums
//       of op(b) (BiasAddGrad of op(b)): a dense layer's weight and bias
//       gradients from one read of dy (a = x, transpose_a, b = dy), which a
//       GPU computes in the GEMM's epilogue (ops/gpu/fused_matmul_kernels.cc).
//
//   Output y = ops::FusedMatMul(s, x, w, {bias}, {.fused_ops = {"BiasAdd", "Relu"}});
//   Output w1 = ops::MatMulApplyGradientDescent(s, w, 0.1f, h, dy, {.transpose_a = true});
//   std::vector<Output> dw_db = ops::MatMulBiasAddGrad(s, x, dy, {.transpose_a = true});
//
// CPU kernels for float (ops/nn/fused_kernels.cc), GPU kernels for float,
// bfloat16 and half (ops/gpu/fused_matmul_kernels.cc; a NaN product through
// the GPU's fused ReLU may come out 0); an unsupported fused_ops
// list fails with Unimplemented naming it. _FusedMatMul has no gradient
// (the pass runs after gradients are built; AddGradients through one fails
// with Unimplemented), _MatMulApplyGradientDescent and _MatMulBiasAddGrad
// none by nature.
// Thread-safety: as Scope; the kernels are stateless (the update locks its
// variable like the Apply* ops).
#ifndef SLUICE_OPS_NN_FUSED_OPS_H_
#define SLUICE_OPS_NN_FUSED_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterFusedOps(OpRegistry* ops);
void RegisterFusedKernels(KernelRegistry* kernels);

namespace ops {

struct FusedMatMulAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
  std::vector<std::string> fused_ops;
};
// `args`: one tensor per argument the fused ops take (the bias for BiasAdd).
Output FusedMatMul(const Scope& scope, Input a, Input b, absl::Span<const Output> args,
                   const FusedMatMulAttrs& attrs,
                   std::source_location loc = std::source_location::current());

struct MatMulApplyGradientDescentAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
  bool use_locking = false;
};
Output MatMulApplyGradientDescent(const Scope& scope, Input var, Input alpha, Input a, Input b,
                                  const MatMulApplyGradientDescentAttrs& attrs = {},
                                  std::source_location loc = std::source_location::current());

struct MatMulBiasAddGradAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
};
// {product, bias_grad}.
std::vector<Output> MatMulBiasAddGrad(const Scope& scope, Input a, Input b,
                                      const MatMulBiasAddGradAttrs& attrs = {},
                                      std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_FUSED_OPS_H_
