// CUDA launchers of GatherNd and ScatterNd (nd_index.cu). The indices stay
// in device memory: an index row out of range gives a slice of zeros
// (GatherNd) or is skipped (ScatterNd), as TensorFlow's GPU kernels do
// (the CPU kernels fail on it). ScatterNd sums repeated rows atomically:
// the order of the additions, so float sums, may differ from run to run.
// Plain C++; launches only enqueue on `stream` and return cudaGetLastError().
#ifndef SLUICE_OPS_GPU_ND_INDEX_CU_H_
#define SLUICE_OPS_GPU_ND_INDEX_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ops/gpu/nd_index.h"

namespace sluice::gpu {

// out[i * slice + k] = params[slice_of(row i) * slice + k], elements of
// elem_bytes (1, 2, 4 or 8) bytes.
template <typename Index>
cudaError_t LaunchGatherNd(const void* params, const Index* indices, void* out, int elem_bytes,
                           const NdIndexGeometry& g, cudaStream_t stream);

enum class ScatterNdType : int { kFloat, kDouble, kHalf, kBFloat16, kInt64 };

// out (zeroed here, out_elements long) += updates[i * slice + k] at
// slice_of(row i) * slice + k.
template <typename Index>
cudaError_t LaunchScatterNd(ScatterNdType type, const Index* indices, const void* updates,
                            void* out, int64_t out_elements, const NdIndexGeometry& g,
                            cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_ND_INDEX_CU_H_
