// CUDA launchers of the GPU reductions (Sum, Mean, Prod, Max, Min) and of
// ArgMax and ArgMin; the CUDA code is in reduction.cu and argmax.cu. Plain C++: g++-compiled callers
// include this header, nvcc compiles the definitions.
//
//   gpu::ReduceProblem p;                 // x [8, 1000] -> y [8] by Sum
//   p.op = gpu::ReduceOp::kSum;
//   p.type = gpu::ReduceType::kFloat;
//   p.outer = 8; p.reduced = 1000; p.inner = 1;
//   const int64_t bytes = gpu::ReduceScratchBytes(p, sm_count);
//   ... scratch = device buffer of `bytes` (nullptr when 0) ...
//   cudaError_t e = gpu::LaunchReduce(p, x, y, scratch, sm_count, stream);
//
// Every function only enqueues work on `stream` and returns the launch's
// error (cudaGetLastError()); nothing synchronizes. Pointers are device
// memory that the caller keeps alive until the work is done (on one stream:
// until later work is enqueued). Thread-safe.
//
// Semantics (those of the CPU kernels, ops/math/reduction_kernels.cc): sums and
// products accumulate in float for float/half/bfloat16, in double for
// double, in int64 for int64; Mean divides the sum by the count (integer
// division for int64; a float mean of nothing is 0/0 = NaN, an int64 one
// 0); Max/Min of nothing are -inf/+inf (lowest/max for int64). Max and Min
// give NaN when any input is NaN (TensorFlow's reduce_max and reduce_min).
#ifndef SLUICE_OPS_GPU_REDUCTION_CU_H_
#define SLUICE_OPS_GPU_REDUCTION_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice {
namespace gpu {

enum class ReduceOp { kSum, kMean, kProd, kMax, kMin };
// Element types: float, double, int64, half (__half), bfloat16 (__nv_bfloat16).
enum class ReduceType { kFloat, kDouble, kInt64, kHalf, kBFloat16 };

inline constexpr int kMaxReduceGroups = 16;

// What to reduce. With num_groups == 0 the input is [outer, reduced, inner]
// and the output [outer, inner]; reduced == 0 means every output element
// reduces nothing. With num_groups > 0 the input's dimensions are
// groups[0..num_groups) (alternating kept and reduced runs, groups[0]
// reduced when first_reduced; each > 1) and the output is the kept groups
// in order.
struct ReduceProblem {
  ReduceOp op = ReduceOp::kSum;
  ReduceType type = ReduceType::kFloat;
  int64_t outer = 1, reduced = 1, inner = 1;
  int num_groups = 0;
  int64_t groups[kMaxReduceGroups] = {};
  bool first_reduced = false;
};

// Bytes of device scratch LaunchReduce needs for `p` (partial results of a
// reduction split across blocks); 0 when none. sm_count: the GPU's
// multiprocessors (0: a default).
int64_t ReduceScratchBytes(const ReduceProblem& p, int sm_count);

// y = reduction of x as `p` says. `scratch` holds ReduceScratchBytes(p,
// sm_count) bytes (256-byte aligned) and the same sm_count is passed.
// cudaErrorInvalidValue for a malformed problem (too many groups, scratch
// missing).
cudaError_t LaunchReduce(const ReduceProblem& p, const void* x, void* y, void* scratch,
                         int sm_count, cudaStream_t stream);

// ArgMax of x [outer, n, inner] along n (n >= 1) into y [outer, inner] of
// int64 (int64_output) or int32. The first index of the largest value, as
// TensorFlow's scan from (0, lowest) finds it: NaNs lose to any number, and
// a row where nothing exceeds lowest (NaNs, -inf) gives 0. Any ReduceType.
cudaError_t LaunchArgMax(ReduceType type, bool int64_output, const void* x, int64_t outer,
                         int64_t n, int64_t inner, void* y, int sm_count, cudaStream_t stream);
// The same for the first index of the smallest value (the scan from
// (0, highest)).
cudaError_t LaunchArgMin(ReduceType type, bool int64_output, const void* x, int64_t outer,
                         int64_t n, int64_t inner, void* y, int sm_count, cudaStream_t stream);

}  // namespace gpu
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_REDUCTION_CU_H_
