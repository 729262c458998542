// FuseOps: the step engine's graph-rewrite pass. It replaces chains a graph
// engine can see as a whole (an eager one cannot) with one fused node each:
//
//   MatMul -> BiasAdd [-> Relu]          => _FusedMatMul (fused_ops
//                                           ["BiasAdd"] or ["BiasAdd", "Relu"])
//   AddN(MatMul(a_i, b_i), i = 1..N)     => MatMul(ConcatV2(a_i), ConcatV2(b_i))
//                                           (one GEMM over the stacked
//                                           contraction; CPU devices, where
//                                           stacking moves fewer bytes than
//                                           the N products: a pipeline's
//                                           per-micro-batch weight gradients)
//   MatMul -> ApplyGradientDescent.delta => _MatMulApplyGradientDescent
//                                           (the weight-gradient GEMM writes
//                                           straight into the variable)
//   MatMul(a, dy) + BiasAddGrad(dy)      => _MatMulBiasAddGrad(a, dy) (a
//                                           dense layer's weight and bias
//                                           gradients in one GEMM, the bias's
//                                           in its epilogue; devices other
//                                           than the CPU: a GPU's cuBLASLt)
//
//   FuseOptions o;  o.kernels = &kernels;  o.keep = {"train"};
//   ASSIGN_OR_RETURN(FuseStats s, FuseOps(placed_graph, o));
//
// CompileSignature (session/compile_signature.h) runs it on every pruned
// and placed signature graph, before Partition, unless
// SignatureCompileOptions::fuse_ops is false (SessionConfig::fuse_ops).
// Running after placement is what lets it never fuse across devices and
// only fuse where the fused kernel exists on the chosen device; running
// before partitioning means every device's executor — local or a cluster
// worker's — gets the fused graph from one place.
//
// On a GPU a dense layer's step is then three GEMMs (its forward with the
// bias and ReLU in the epilogue, the input gradient, the weight gradient
// with the bias gradient in the epilogue) and no separate bias or ReLU
// kernels forward.
//
// A chain is fused only when all of it is float (or, for _FusedMatMul and
// _MatMulBiasAddGrad, all bfloat16 or all half where the device type has
// that kernel: a GPU's mixed-precision step), on one assigned device
// whose type has the fused kernel, the inner nodes (the MatMul, and the
// BiasAdd before a Relu) have exactly one consumer, no control edges out
// and are not named in `keep`; a fetched tensor's producer has a second
// consumer (its _Retval), so a fetched intermediate is never fused away.
// A MatMul's `_gpu_precision` attr goes to its fused node.
// The fused node takes the name, requested and assigned device of the
// chain's last node (the MatMul's, for the bias gradient), so fetches,
// targets and control edges that name it still find it; control edges into
// the inner nodes move to it.
// The results equal the unfused graph's up to float rounding (the update
// rounds once where ApplyGradientDescent rounds twice).
//
// Errors: Internal when rebuilding a chain fails (a broken graph).
// Thread-compatible: mutates `graph`; borrows the registry.
#ifndef SLUICE_PLACEMENT_FUSE_OPS_H_
#define SLUICE_PLACEMENT_FUSE_OPS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "runtime/kernel_registry.h"

namespace sluice {

struct FuseOptions {
  const KernelRegistry* kernels = nullptr;  // required: which devices have the fused kernels
  std::vector<std::string> keep;            // node names never fused away (targets)
};

// How many chains of each kind were fused.
struct FuseStats {
  int matmul_bias = 0;
  int matmul_bias_relu = 0;
  int matmul_sum = 0;
  int matmul_apply_gradient_descent = 0;
  int matmul_bias_grad = 0;
  int total() const {
    return matmul_bias + matmul_bias_relu + matmul_sum + matmul_apply_gradient_descent +
           matmul_bias_grad;
  }
};

absl::StatusOr<FuseStats> FuseOps(Graph* graph, const FuseOptions& options);

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_FUSE_OPS_H_
