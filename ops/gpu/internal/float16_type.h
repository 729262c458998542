// The host side's view of the GPU's 16-bit float types: whether a kernel's
// element type T is half or bfloat16, and which of nn.cu.h's 16-bit
// launchers serves it.
//
//   if constexpr (internal::kSixteen<T>) {
//     return LaunchStatus(ctx, gpu::LaunchRelu16(internal::kFloat16Type<T>, x, y, n, stream));
//   }
//
// Thread-safety: constants. Internal to ops/gpu/.
#ifndef SLUICE_OPS_GPU_INTERNAL_FLOAT16_TYPE_H_
#define SLUICE_OPS_GPU_INTERNAL_FLOAT16_TYPE_H_

#include <type_traits>

#include "graph/types.h"
#include "ops/gpu/nn.cu.h"

namespace sluice {
namespace internal {

template <typename T>
inline constexpr bool kSixteen = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
inline constexpr gpu::Float16Type kFloat16Type =
    std::is_same_v<T, Half> ? gpu::Float16Type::kHalf : gpu::Float16Type::kBFloat16;

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_INTERNAL_FLOAT16_TYPE_H_
