// The order ArgMax and ArgMin's GPU threads combine their candidates in
// (ops/gpu/argmax.cu), as TensorFlow's scan decides: it starts from index 0
// and the type's lowest (kMin: highest) value and moves only to a strictly
// larger (smaller) one. As a strict total order on (value, index) pairs, so
// that threads may combine in any order:
//  - values that cannot beat that start (NaN, and for ArgMax anything
//    <= lowest, e.g. -inf) all count as "out";
//  - a value in beats an out one, a larger (smaller) value beats another,
//    then the smaller index wins.
// A row of outs so gives its smallest index, 0, as TensorFlow does.
//
//   A v = WorstValue<kMin, A>();  int64_t i = kNoIndex;   // a thread's start
//   if (Better<kMin>(x[k], k, v, i)) { v = x[k]; i = k; }
//
// __host__ __device__: argmax_order_on_host_test.cc checks the order on the
// host against the CPU kernels. nvcc only.
#ifndef SLUICE_OPS_GPU_ARGMAX_ORDER_CU_H_
#define SLUICE_OPS_GPU_ARGMAX_ORDER_CU_H_

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

namespace sluice::gpu::argmax_order {

template <bool kMin, typename A>
__host__ __device__ __forceinline__ bool Out(A v) {
  return kMin ? !(v < std::numeric_limits<A>::max()) : !(v > std::numeric_limits<A>::lowest());
}

// True when (bv, bi) comes before (av, ai).
template <bool kMin, typename A>
__host__ __device__ __forceinline__ bool Better(A bv, int64_t bi, A av, int64_t ai) {
  const bool b_out = Out<kMin>(bv), a_out = Out<kMin>(av);
  if (b_out != a_out) return a_out;
  if (!b_out && bv != av) return kMin ? bv < av : bv > av;
  return bi < ai;
}

// Where each thread starts: the scan's start value, "out", with an index
// every real one beats.
template <bool kMin, typename A>
__host__ __device__ __forceinline__ A WorstValue() {
  return kMin ? std::numeric_limits<A>::max() : std::numeric_limits<A>::lowest();
}
constexpr int64_t kNoIndex = std::numeric_limits<int64_t>::max();

}  // namespace sluice::gpu::argmax_order

#endif  // SLUICE_OPS_GPU_ARGMAX_ORDER_CU_H_
