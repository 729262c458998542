// The dtypes of the GPU array kernels (see array_kernel_util.h).
#include "ops/gpu/internal/array_kernel_util.h"

#include <vector>

namespace sluice {
namespace internal {

const std::vector<DataType>& GpuArrayTypes() {
  static const auto* types =
      new std::vector<DataType>{DT_FLOAT, DT_DOUBLE, DT_HALF,   DT_BFLOAT16, DT_INT64,
                                DT_INT16, DT_INT8,   DT_UINT16, DT_UINT8,    DT_BOOL};
  return *types;
}

}  // namespace internal
}  // namespace sluice
