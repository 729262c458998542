// Helpers shared by the math ops' CPU kernel files (math_kernels.cc,
// reduction_kernels.cc, matmul_kernels.cc): splitting large loops over the
// device's thread pool, the CPU KernelDef of a typed kernel, and the
// registration functions of the reduction and MatMul files.
//
//   internal::MaybeParallelFor(ctx, n, /*unit_elements=*/1, [&](int64_t b, int64_t e) {
//     for (int64_t i = b; i < e; ++i) out[i] = in[i] * 2;
//   });
//   kernels->Register<MyOp<float>>(internal::Cpu<float>("MyOp"));
//
// Include it after the files' #pragma GCC optimize line, so that its inline
// functions are compiled alike in every including file. Thread-safety:
// MaybeParallelFor returns when fn has covered the whole range. Internal to
// ops/.
#ifndef SLUICE_OPS_MATH_INTERNAL_MATH_KERNEL_UTIL_H_
#define SLUICE_OPS_MATH_INTERNAL_MATH_KERNEL_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <functional>

#include "graph/types.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace internal {

// Work below this many elements runs inline.
inline constexpr int64_t kParallelMinElements = int64_t{1} << 16;

// Runs fn over [0, units) — on the device's pool when units * unit_elements
// is large, else inline.
inline void MaybeParallelFor(OpKernelContext* ctx, int64_t units, int64_t unit_elements,
                             const std::function<void(int64_t, int64_t)>& fn) {
  ThreadPool* pool = ctx->device() ? ctx->thread_pool() : nullptr;
  if (pool == nullptr || pool->num_threads() < 2 || units < 2 ||
      units * unit_elements < kParallelMinElements) {
    fn(0, units);
    return;
  }
  const int64_t min_block = std::max<int64_t>(1, kParallelMinElements / 2 / unit_elements);
  pool->ParallelFor(units, min_block, fn);
}

// The CPU KernelDef of `op` with attr T = T.
template <typename T>
KernelDef Cpu(const char* op) {
  return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DataTypeToEnum<T>::value);
}

// Registers the kernels of reduction_kernels.cc: Sum, Mean, Prod, Max, Min,
// ArgMax, ArgMin.
void RegisterReductionKernels(KernelRegistry* k);

// Registers the kernels of matmul_kernels.cc: MatMul.
void RegisterMatMulKernels(KernelRegistry* k);

// Registers the kernels of sequence_kernels.cc: Range, LinSpace.
void RegisterSequenceKernels(KernelRegistry* k);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_INTERNAL_MATH_KERNEL_UTIL_H_
