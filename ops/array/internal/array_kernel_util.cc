// The dtypes of the byte-moving array kernels (see array_kernel_util.h).
#include "ops/array/internal/array_kernel_util.h"

#include <vector>

namespace sluice {
namespace internal {

const std::vector<DataType>& AllTypes() {
  static const auto* types =
      new std::vector<DataType>{DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT8,   DT_INT8,
                                DT_INT16, DT_UINT16, DT_BOOL,  DT_HALF,  DT_BFLOAT16};
  return *types;
}

}  // namespace internal
}  // namespace sluice
