// Helpers shared by the array ops' CPU kernel files (array_kernels.cc,
// slice_kernels.cc): the dtypes the byte-moving kernels accept,
// element-size dispatch, kernel factories, and the registration function of
// slice_kernels.cc. Index tensors: ops/internal/index_tensors.h; checks and output shapes
// shared with the GPU kernels: array_kernel_checks.h.
//
//   internal::DispatchBySize(esize, [&](auto tag) {
//     using U = typename decltype(tag)::type;  // uint8_t .. uint64_t
//   });
//
// Thread-safety: pure functions. Internal to ops/.
#ifndef SLUICE_OPS_ARRAY_INTERNAL_ARRAY_KERNEL_UTIL_H_
#define SLUICE_OPS_ARRAY_INTERNAL_ARRAY_KERNEL_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "graph/types.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace internal {

// Every fixed-size dtype: the byte-moving kernels serve all of them.
const std::vector<DataType>& AllTypes();

// Calls f(std::type_identity<U>{}) with an unsigned integer type U of the
// element size, so element copies compile to plain loads and stores.
template <typename F>
void DispatchBySize(size_t element_size, F&& f) {
  switch (element_size) {
    case 1:
      f(std::type_identity<uint8_t>{});
      break;
    case 2:
      f(std::type_identity<uint16_t>{});
      break;
    case 4:
      f(std::type_identity<uint32_t>{});
      break;
    default:
      f(std::type_identity<uint64_t>{});
      break;
  }
}

// A factory of default-constructed K kernels.
template <typename K>
KernelFactory Make() {
  return [] { return std::make_unique<K>(); };
}

// Registers the kernels of slice_kernels.cc: Slice, StridedSlice,
// StridedSliceGrad, GatherV2, Gather, UnsortedSegmentSum, Tile, Transpose.
void RegisterSliceKernels(KernelRegistry* kernels);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_INTERNAL_ARRAY_KERNEL_UTIL_H_
