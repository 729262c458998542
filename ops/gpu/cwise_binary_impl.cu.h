// The binary element-wise kernels shared by cwise_binary.cu (arithmetic)
// and cwise_compare.cu (comparisons): flat (with vector packs and scalar
// operands), 2-D and general broadcasting paths. For nvcc only.
//
//   return BinaryT<float, float>(layout, x, y, out, stream, AddF{});
//
// Each output element is written by the thread that read its operands, so
// the output may be a forwarded input.
#ifndef SLUICE_OPS_GPU_CWISE_BINARY_IMPL_CU_H_
#define SLUICE_OPS_GPU_CWISE_BINARY_IMPL_CU_H_

#include <cstdint>
#include <type_traits>

#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/cwise_impl.cu.h"
#include "ops/gpu/vector_loop.h"

namespace sluice::gpu::cwise_impl {

// F: a functor with `C operator()(C, C)` (bool for the comparisons) on the
// compute type C of T; Out: T or bool.
template <typename T, typename Out, typename F>
__device__ __forceinline__ Out ApplyBinary(const F& f, typename Num<T>::C a, typename Num<T>::C b) {
  if constexpr (std::is_same_v<Out, bool>) {
    return f(a, b);
  } else {
    return Num<Out>::Down(f(a, b));
  }
}

// kMode 0: x[i], y[i]; 1: x[i], y[0]; 2: x[0], y[i]. Whole packs of kVec
// go by Pack<.., kVec> (pointers aligned for it), the rest singly.
template <typename T, typename Out, typename F, int kVec, int kMode>
__global__ void __launch_bounds__(kThreads)
    BinaryFlatKernel(const T* x, const T* y, Out* out, int64_t n, F f) {
  using N = Num<T>;
  using C = typename N::C;
  C x0{}, y0{};
  if constexpr (kMode == 2) x0 = N::Up(x[0]);
  if constexpr (kMode == 1) y0 = N::Up(y[0]);
  ForEachVectorized<kVec>(
      n, FirstIndex<int64_t>(), GridStride<int64_t>(),
      [&](int64_t p) {
        if constexpr (kVec > 1) {
          using PT = Pack<T, kVec>;
          using PO = Pack<Out, kVec>;
          PT a{}, b{};
          if constexpr (kMode != 2) a = reinterpret_cast<const PT*>(x)[p];
          if constexpr (kMode != 1) b = reinterpret_cast<const PT*>(y)[p];
          PO o;
#pragma unroll
          for (int k = 0; k < kVec; ++k) {
            C xa = x0, yb = y0;
            if constexpr (kMode != 2) xa = N::Up(a.v[k]);
            if constexpr (kMode != 1) yb = N::Up(b.v[k]);
            o.v[k] = ApplyBinary<T, Out>(f, xa, yb);
          }
          reinterpret_cast<PO*>(out)[p] = o;
        }
      },
      [&](int64_t i) {
        C xa = x0, yb = y0;
        if constexpr (kMode != 2) xa = N::Up(x[i]);
        if constexpr (kMode != 1) yb = N::Up(y[i]);
        out[i] = ApplyBinary<T, Out>(f, xa, yb);
      });
}

// Two merged dimensions (rows x cols), each operand with its own strides.
template <typename T, typename Out, typename F, typename I>
__global__ void __launch_bounds__(kThreads)
    Binary2DKernel(const T* x, const T* y, Out* out, I n, I cols, I xs0, I xs1, I ys0, I ys1, F f) {
  using N = Num<T>;
  for (I i = FirstIndex<I>(); i < n; i += GridStride<I>()) {
    const I r = i / cols;
    const I c = i - r * cols;
    out[i] = ApplyBinary<T, Out>(f, N::Up(x[r * xs0 + c * xs1]), N::Up(y[r * ys0 + c * ys1]));
  }
}

template <typename T, typename Out, typename F, typename I>
__global__ void __launch_bounds__(kThreads)
    BinaryGeneralKernel(const T* x, const T* y, Out* out, I n, DeviceLayout<2, I> layout, F f) {
  using N = Num<T>;
  for (I i = FirstIndex<I>(); i < n; i += GridStride<I>()) {
    I off[2];
    OffsetsOf(layout, i, off);
    out[i] = ApplyBinary<T, Out>(f, N::Up(x[off[0]]), N::Up(y[off[1]]));
  }
}

template <typename T, typename Out, typename F, int kMode>
cudaError_t LaunchFlat(const T* x, const T* y, Out* out, int64_t n, cudaStream_t stream,
                       const F& f) {
  constexpr int kVec = kVecOf<T>;
  if constexpr (kVec > 1) {
    const bool aligned = (kMode == 2 || AlignedTo(x, sizeof(T) * kVec)) &&
                         (kMode == 1 || AlignedTo(y, sizeof(T) * kVec)) &&
                         AlignedTo(out, sizeof(Out) * kVec);
    if (aligned && n >= kVec) {
      return Launch(BinaryFlatKernel<T, Out, F, kVec, kMode>, (n + kVec - 1) / kVec, stream, x, y,
                    out, n, f);
    }
  }
  return Launch(BinaryFlatKernel<T, Out, F, 1, kMode>, n, stream, x, y, out, n, f);
}

// out = f(x, y) over `layout`: T the operands' storage type, Out T or bool.
template <typename T, typename Out, typename F>
cudaError_t BinaryT(const CwiseLayout<2>& layout, const void* xv, const void* yv, void* outv,
                    cudaStream_t stream, const F& f) {
  const int64_t n = layout.num_elements();
  if (n <= 0) return cudaSuccess;
  const T* x = static_cast<const T*>(xv);
  const T* y = static_cast<const T*>(yv);
  Out* out = static_cast<Out*>(outv);
  switch (ClassifyBinaryLayout(layout)) {
    case BinaryPath::kFlat:
      return LaunchFlat<T, Out, F, 0>(x, y, out, n, stream, f);
    case BinaryPath::kScalarY:
      return LaunchFlat<T, Out, F, 1>(x, y, out, n, stream, f);
    case BinaryPath::kScalarX:
      return LaunchFlat<T, Out, F, 2>(x, y, out, n, stream, f);
    case BinaryPath::k2D: {
      const int64_t* s0 = layout.strides[0];
      const int64_t* s1 = layout.strides[1];
      if (FitsUint32Loop(n)) {
        using I = uint32_t;
        return Launch(Binary2DKernel<T, Out, F, I>, n, stream, x, y, out, I(n), I(layout.dims[1]),
                      I(s0[0]), I(s1[0]), I(s0[1]), I(s1[1]), f);
      }
      return Launch(Binary2DKernel<T, Out, F, int64_t>, n, stream, x, y, out, n, layout.dims[1],
                    s0[0], s1[0], s0[1], s1[1], f);
    }
    case BinaryPath::kGeneral:
      break;
  }
  if (FitsUint32Loop(n)) {
    using I = uint32_t;
    return Launch(BinaryGeneralKernel<T, Out, F, I>, n, stream, x, y, out, I(n),
                  ToDevice<2, I>(layout), f);
  }
  return Launch(BinaryGeneralKernel<T, Out, F, int64_t>, n, stream, x, y, out, n,
                ToDevice<2, int64_t>(layout), f);
}

// The dispatch body (body(Tag<T>{})) of functor F over `layout`: the output
// has the operands' type T (Same), or bool for the comparisons (ToBool).
template <typename F, bool kBoolOut>
struct BinaryBody {
  const CwiseLayout<2>& layout;
  const void* x;
  const void* y;
  void* out;
  cudaStream_t stream;
  template <typename TagT>
  cudaError_t operator()(TagT) const {
    using T = typename TagT::type;
    return BinaryT<T, std::conditional_t<kBoolOut, bool, T>>(layout, x, y, out, stream, F{});
  }
};
template <typename F>
using Same = BinaryBody<F, false>;
template <typename F>
using ToBool = BinaryBody<F, true>;

// LaunchBinary's comparisons (cwise_compare.cu).
cudaError_t LaunchCompare(BinaryFn fn, CwiseType type, const CwiseLayout<2>& layout, const void* x,
                          const void* y, void* out, cudaStream_t stream);

}  // namespace sluice::gpu::cwise_impl

#endif  // SLUICE_OPS_GPU_CWISE_BINARY_IMPL_CU_H_
