// The arithmetic the GPU MatMul uses for float32 operands: exact float32, or
// the tensor-core shortcuts TF32 and bfloat16 (cuBLAS compute types
// CUBLAS_COMPUTE_32F, _32F_FAST_TF32, _32F_FAST_16BF; inputs and outputs stay
// float32, only the products lose bits).
//
//   SetGpuMatMulPrecision(GpuMatMulPrecision::kTF32);   // every float MatMul from now on
//   // or per node, in the graph: attr _gpu_precision: "tf32" on a MatMul node
//   ASSIGN_OR_RETURN(GpuMatMulPrecision p, ParseGpuMatMulPrecision("bf16"));
//
// The process-wide setting starts from the environment variable
// SLUICE_GPU_MATMUL (fp32 | tf32 | bf16; unset or anything else: fp32, the
// latter with a warning on stderr) and is read by each MatMul when it runs,
// so a change applies to kernels already built. A MatMul node's string attr
// `_gpu_precision` (same spellings) overrides it for that node; an invalid
// value fails the kernel's construction with InvalidArgument naming the node.
// half and bfloat16 MatMuls ignore both (they always accumulate in float32).
//
// Thread-safe: the setting is an atomic. Plain C++ (no CUDA), so it builds
// and is tested without a GPU.
#ifndef SLUICE_OPS_GPU_MATMUL_PRECISION_H_
#define SLUICE_OPS_GPU_MATMUL_PRECISION_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {

enum class GpuMatMulPrecision { kFloat32, kTF32, kBF16 };

// The name of the node attr that overrides the process-wide precision.
inline constexpr char kGpuPrecisionAttr[] = "_gpu_precision";

void SetGpuMatMulPrecision(GpuMatMulPrecision precision);
GpuMatMulPrecision GetGpuMatMulPrecision();

// "fp32" | "tf32" | "bf16" -> the precision; InvalidArgument listing the
// accepted spellings otherwise.
absl::StatusOr<GpuMatMulPrecision> ParseGpuMatMulPrecision(absl::string_view name);
// The inverse: "fp32", "tf32" or "bf16".
absl::string_view GpuMatMulPrecisionName(GpuMatMulPrecision precision);

}  // namespace sluice

#endif  // SLUICE_OPS_GPU_MATMUL_PRECISION_H_
