// The dtypes of the GPU array kernels (see array_kernel_util.h).
#include "ops/gpu/internal/array_kernel_util.h"

#include <algorithm>
#include <vector>

namespace sluice {
namespace internal {

const std::vector<DataType>& GpuArrayTypes() {
  static const auto* types =
      new std::vector<DataType>{DT_FLOAT, DT_DOUBLE, DT_HALF,   DT_BFLOAT16, DT_INT64,
                                DT_INT16, DT_INT8,   DT_UINT16, DT_UINT8,    DT_BOOL};
  return *types;
}

namespace {

// Whether every type constraint of `def` is exactly {dtype}.
bool OnlyType(const KernelDef& def, DataType dtype) {
  if (def.constraints().empty()) return false;
  for (const auto& [attr, types] : def.constraints()) {
    if (types.size() != 1 || types[0] != dtype) return false;
  }
  return true;
}

// Whether every type constraint of `def` includes `dtype`.
bool ServesType(const KernelDef& def, DataType dtype) {
  if (def.constraints().empty()) return false;
  for (const auto& [attr, types] : def.constraints()) {
    if (std::find(types.begin(), types.end(), dtype) == types.end()) return false;
  }
  return true;
}

}  // namespace

bool OnlyInt32(const KernelDef& def) { return OnlyType(def, DT_INT32); }

bool OnlyString(const KernelDef& def) { return OnlyType(def, DT_STRING); }

bool ServesInt32(const KernelDef& def) { return ServesType(def, DT_INT32); }

bool ServesResource(const KernelDef& def) { return ServesType(def, DT_RESOURCE); }

bool AnyKernel(const KernelDef&) { return true; }

}  // namespace internal
}  // namespace sluice
