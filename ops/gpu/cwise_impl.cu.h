// Device code shared by the element-wise .cu files (cwise_*.cu): storage and
// compute types, grid sizing, type dispatch, vector packs, broadcast offsets.
// For nvcc only: g++-compiled code includes cwise.cu.h instead.
//
//   return DispatchFloat(type, body);  // body(Tag<float>{}), body(Tag<__half>{}), ...
//
// Every kernel uses grid-stride loops over kThreads-thread blocks, writes each
// output element from the thread that read its operands (so an output may be
// a forwarded input), and is launched only for a non-empty range.
#ifndef SLUICE_OPS_GPU_CWISE_IMPL_CU_H_
#define SLUICE_OPS_GPU_CWISE_IMPL_CU_H_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>

#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/device_math.cu.h"
#include "ops/gpu/float16.cu.h"

namespace sluice::gpu::cwise_impl {

inline constexpr int kThreads = 256;
// Grid cap: this many blocks per multiprocessor (8 blocks of 256 threads fill
// one SM; four waves of them keep the memory pipes busy).
inline constexpr int kBlocksPerSm = 32;

// The grid cap of the current device (cached per ordinal).
inline int MaxBlocks() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cached[kMaxDevices] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();  // not this launch's error: forget it
    return 1024;
  }
  if (device < 0 || device >= kMaxDevices) return 1024;
  int blocks = cached[device].load(std::memory_order_relaxed);
  if (blocks == 0) {
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        sms <= 0) {
      (void)cudaGetLastError();
      sms = 32;
    }
    blocks = sms * kBlocksPerSm;
    cached[device].store(blocks, std::memory_order_relaxed);
  }
  return blocks;
}

// Blocks for `work` grid-stride items (work > 0).
inline int BlocksFor(int64_t work) {
  const int64_t need = (work + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(need, MaxBlocks())));
}

// Enqueues kernel<<<BlocksFor(work), kThreads>>>(args...) on `stream`.
template <typename... Params, typename... Args>
cudaError_t Launch(void (*kernel)(Params...), int64_t work, cudaStream_t stream, Args... args) {
  kernel<<<BlocksFor(work), kThreads, 0, stream>>>(args...);
  return cudaGetLastError();
}

template <typename I>
__device__ __forceinline__ I FirstIndex() {
  return static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
}
template <typename I>
__device__ __forceinline__ I GridStride() {
  return static_cast<I>(blockDim.x) * static_cast<I>(gridDim.x);
}

// ---------------------------------------------------------------------------
// Types. Num<T>::C is the type arithmetic on T is done in (float16.cu.h).

// TypeOf<T>::value: the CwiseType of the element type T.
template <typename T>
struct TypeOf;
#define SLUICE_CWISE_TYPE_OF_(T, kType)                  \
  template <>                                            \
  struct TypeOf<T> {                                     \
    static constexpr CwiseType value = CwiseType::kType; \
  };
SLUICE_CWISE_TYPE_OF_(float, kFloat)
SLUICE_CWISE_TYPE_OF_(__half, kHalf)
SLUICE_CWISE_TYPE_OF_(__nv_bfloat16, kBFloat16)
SLUICE_CWISE_TYPE_OF_(double, kDouble)
SLUICE_CWISE_TYPE_OF_(int32_t, kInt32)
SLUICE_CWISE_TYPE_OF_(int64_t, kInt64)
SLUICE_CWISE_TYPE_OF_(bool, kBool)
#undef SLUICE_CWISE_TYPE_OF_

template <typename T>
struct Tag {
  using type = T;
};

// body(Tag<T>{}) for the T among Ts whose CwiseType is `type`;
// cudaErrorNotSupported when none is.
template <typename... Ts, typename Body>
cudaError_t DispatchAmong(CwiseType type, Body&& body) {
  cudaError_t result = cudaErrorNotSupported;
  (void)((type == TypeOf<Ts>::value ? (result = body(Tag<Ts>{}), true) : false) || ...);
  return result;
}

template <typename Body>
cudaError_t DispatchFloat(CwiseType type, Body&& body) {
  return DispatchAmong<float, __half, __nv_bfloat16, double>(type, body);
}
template <typename Body>
cudaError_t DispatchFloatInt64(CwiseType type, Body&& body) {
  return DispatchAmong<float, __half, __nv_bfloat16, double, int64_t>(type, body);
}

// A run of kVec elements for one 16-byte (or narrower) vector access.
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Pack {
  T v[kVec];
};

template <typename T>
inline constexpr int kVecOf = sizeof(T) <= 16 ? static_cast<int>(16 / sizeof(T)) : 1;

inline bool AlignedTo(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// Math on float and double (device_math.cu.h).
using device_math::Acos;
using device_math::Acosh;
using device_math::Asin;
using device_math::Asinh;
using device_math::Atan;
using device_math::Atan2;
using device_math::Atanh;
using device_math::Ceil;
using device_math::Cos;
using device_math::Cosh;
using device_math::Erf;
using device_math::Erfc;
using device_math::Exp;
using device_math::Expm1;
using device_math::Floor;
using device_math::Fmod;
using device_math::Log;
using device_math::Log1p;
using device_math::Pow;
using device_math::Rint;
using device_math::Sin;
using device_math::Sinh;
using device_math::Sqrt;
using device_math::Tan;
using device_math::Tanh;

// ---------------------------------------------------------------------------
// Broadcast layouts on the device.

// A CwiseLayout with index type I (uint32_t when the output has fewer than
// 2^31 elements, else int64_t: operands are never larger than the output).
template <int NOps, typename I>
struct DeviceLayout {
  int rank;
  I dims[kMaxCwiseDims];
  I strides[kMaxCwiseDims][NOps];
};

template <int NOps, typename I>
DeviceLayout<NOps, I> ToDevice(const CwiseLayout<NOps>& layout) {
  DeviceLayout<NOps, I> d{};
  d.rank = layout.rank;
  for (int k = 0; k < kMaxCwiseDims; ++k) {
    d.dims[k] = static_cast<I>(k < layout.rank ? layout.dims[k] : 1);
    for (int j = 0; j < NOps; ++j) {
      d.strides[k][j] = static_cast<I>(k < layout.rank ? layout.strides[k][j] : 0);
    }
  }
  return d;
}

inline bool FitsUint32Loop(int64_t n) { return n <= std::numeric_limits<int32_t>::max(); }

// Operand offsets of output element i (the outermost dimension needs no
// division). The loop is unrolled with constant indices so that the layout
// stays in parameter space (a dynamic index would copy it to local memory).
template <int NOps, typename I>
__device__ __forceinline__ void OffsetsOf(const DeviceLayout<NOps, I>& l, I i, I (&off)[NOps]) {
#pragma unroll
  for (int j = 0; j < NOps; ++j) off[j] = 0;
#pragma unroll
  for (int k = kMaxCwiseDims - 1; k > 0; --k) {
    if (k < l.rank) {
      const I d = l.dims[k];
      const I q = i / d;
      const I idx = i - q * d;
      i = q;
#pragma unroll
      for (int j = 0; j < NOps; ++j) off[j] += idx * l.strides[k][j];
    }
  }
#pragma unroll
  for (int j = 0; j < NOps; ++j) off[j] += i * l.strides[0][j];
}

}  // namespace sluice::gpu::cwise_impl

#endif  // SLUICE_OPS_GPU_CWISE_IMPL_CU_H_
