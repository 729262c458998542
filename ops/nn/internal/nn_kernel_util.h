// Helpers shared by the nn ops' CPU kernel files (nn_kernels.cc,
// conv_kernels.cc): vector-extension loops (Vec<T>, Map1, Map2), a
// ParallelRange that splits large work over the device's pool,
// float/double registration, and the registration function of
// conv_kernels.cc.
//
//   internal::ParallelRange(ctx, n, /*cost_per_item=*/1, [=](int64_t b, int64_t e) {
//     internal::Map1(in + b, out + b, e - b, [](auto v) { return v * 2; });
//   });
//
// Thread-safety: ParallelRange returns after every block has run; the loops
// are pure. Header-only apart from RegisterConvKernels; internal to ops/.
#ifndef SLUICE_OPS_NN_INTERNAL_NN_KERNEL_UTIL_H_
#define SLUICE_OPS_NN_INTERNAL_NN_KERNEL_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace internal {

// ---------------------------------------------------------------------------
// Vector helpers.

#if defined(__AVX__)
inline constexpr int kVectorBytes = 32;
#else
inline constexpr int kVectorBytes = 16;
#endif

template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(kVectorBytes)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(kVectorBytes)));
};
template <typename T>
using Vec = typename VecOf<T>::type;
template <typename T>
inline constexpr int64_t kLanes = kVectorBytes / sizeof(T);

template <typename T>
inline Vec<T> Load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
template <typename T>
inline void Store(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof(v));
}
template <typename T>
inline Vec<T> Splat(T x) {
  return Vec<T>{} + x;
}

// out[i] = f(a[i]); f is a generic lambda, called on vectors and on scalars.
// out may equal a.
template <typename T, typename F>
inline void Map1(const T* a, T* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes<T> <= n; i += kLanes<T>) Store(out + i, f(Load(a + i)));
  for (; i < n; ++i) out[i] = f(a[i]);
}

// out[i] = f(a[i], b[i]); out may equal a or b.
template <typename T, typename F>
inline void Map2(const T* a, const T* b, T* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes<T> <= n; i += kLanes<T>) Store(out + i, f(Load(a + i), Load(b + i)));
  for (; i < n; ++i) out[i] = f(a[i], b[i]);
}

// Runs fn(begin, end) over [0, n), split across the device's threads when the
// work (n * cost_per_item, roughly in element operations) is large enough to
// pay for it. ThreadPool::ParallelFor lets the caller run unclaimed blocks,
// so this is safe from a pool thread.
template <typename Fn>
void ParallelRange(OpKernelContext* ctx, int64_t n, int64_t cost_per_item, const Fn& fn) {
  constexpr int64_t kMinBlockCost = 1 << 17;
  ThreadPool* pool = ctx->thread_pool();
  const int64_t cost = std::max<int64_t>(1, cost_per_item);
  if (pool == nullptr || n * cost < 2 * kMinBlockCost) {
    if (n > 0) fn(0, n);
    return;
  }
  pool->ParallelFor(n, (kMinBlockCost + cost - 1) / cost, fn);
}

// t's shape as text, for error messages.
inline std::string ShapeStr(const Tensor& t) { return t.shape().DebugString(); }

// Registers K<float> and K<double> as the CPU kernels of `op` (attr T).
template <template <typename> class K>
void RegisterFloatKernels(KernelRegistry* kernels, const char* op) {
  kernels->Register<K<float>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  kernels->Register<K<double>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
}

// Registers the kernels of conv_kernels.cc: Conv2D, Conv2DBackpropInput,
// Conv2DBackpropFilter, MaxPool, MaxPoolGrad.
void RegisterConvKernels(KernelRegistry* kernels);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_NN_KERNEL_UTIL_H_
