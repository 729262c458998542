// ReduceKernels (internal to the collective executor): the element loops of
// sums and means for one dtype, picked once per collective, over raw pointers.
//
//   ASSIGN_OR_RETURN(const ReduceKernels* k, ReduceKernelsFor(DT_FLOAT));
//   k->add(dst, src, n);                    // dst[i] += src[i]
//
// Thread-safe (stateless). Pointers are borrowed for the call; regions of one
// call must not overlap unless they are the same.
#ifndef SLUICE_RUNTIME_COLLECTIVE_REDUCE_KERNELS_H_
#define SLUICE_RUNTIME_COLLECTIVE_REDUCE_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "graph/types.h"

namespace sluice {
namespace internal {

struct ReduceKernels {
  DataType dtype;
  // dst[i] += src[i]
  void (*add)(void* dst, const void* src, int64_t n);
  // dst[i] = a[i] + b[i]
  void (*sum)(void* dst, const void* a, const void* b, int64_t n);
  // dst[i] /= divisor (integers: integer division)
  void (*divide)(void* dst, int64_t n, int64_t divisor);
  // t[i] = (t[i] + in[i]) / divisor, out[i] = t[i]; divisor 1: no division.
  void (*finish)(void* t, const void* in, void* out, int64_t n, int64_t divisor);
};

// The kernels for `dtype` (float, double, int32, int64); Unimplemented naming
// the dtype for the others.
absl::StatusOr<const ReduceKernels*> ReduceKernelsFor(DataType dtype);

// memcpy for data the caller will not read again soon (a ring's all-gather
// pieces landing in the result): non-temporal stores where the CPU has
// them, so the destination is not read into the cache first.
void CopyToResult(void* dst, const void* src, size_t bytes);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_COLLECTIVE_REDUCE_KERNELS_H_
