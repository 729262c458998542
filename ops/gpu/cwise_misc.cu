// AddN, Select and SelectV2 on the GPU (launchers: cwise.cu.h). Select and
// SelectV2 only move elements, so they run on unsigned integers of the
// element's size.
#include <algorithm>
#include <cstdint>

#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/cwise_impl.cu.h"

namespace sluice::gpu {
namespace cwise_impl {
namespace {

// ---------------------------------------------------------------------------
// AddN: one launch per kAddNPerLaunch inputs; launches after the first add
// to the output.

inline constexpr int kAddNPerLaunch = 8;

template <typename T>
struct AddNInputs {
  const T* p[kAddNPerLaunch];
};

template <typename T, bool kAccumulate>
__global__ void __launch_bounds__(kThreads)
    AddNKernel(AddNInputs<T> in, int count, T* out, int64_t n) {
  using N = Num<T>;
  using C = typename N::C;
  constexpr int kFirst = kAccumulate ? 0 : 1;
  for (int64_t i = FirstIndex<int64_t>(); i < n; i += GridStride<int64_t>()) {
    C sum = kAccumulate ? N::Up(out[i]) : N::Up(in.p[0][i]);
#pragma unroll
    for (int k = kFirst; k < kAddNPerLaunch; ++k) {
      if (k < count) sum += N::Up(in.p[k][i]);
    }
    out[i] = N::Down(sum);
  }
}

struct AddN {
  const void* const* inputs;
  int num_inputs;
  void* out;
  int64_t n;
  cudaStream_t stream;
  template <typename TagT>
  cudaError_t operator()(TagT) const {
    using T = typename TagT::type;
    if (num_inputs < 1) return cudaErrorInvalidValue;
    if (n <= 0) return cudaSuccess;
    T* o = static_cast<T*>(out);
    for (int begin = 0; begin < num_inputs; begin += kAddNPerLaunch) {
      const int count = std::min(kAddNPerLaunch, num_inputs - begin);
      AddNInputs<T> in{};
      for (int k = 0; k < count; ++k) in.p[k] = static_cast<const T*>(inputs[begin + k]);
      const cudaError_t err = begin == 0 ? Launch(AddNKernel<T, false>, n, stream, in, count, o, n)
                                         : Launch(AddNKernel<T, true>, n, stream, in, count, o, n);
      if (err != cudaSuccess) return err;
    }
    return cudaSuccess;
  }
};

// ---------------------------------------------------------------------------
// Select and SelectV2.

template <typename Body>
cudaError_t DispatchBytes(int bytes, Body&& body) {
  switch (bytes) {
    case 1:
      return body(Tag<uint8_t>{});
    case 2:
      return body(Tag<uint16_t>{});
    case 4:
      return body(Tag<uint32_t>{});
    case 8:
      return body(Tag<uint64_t>{});
    default:
      return cudaErrorNotSupported;
  }
}

template <typename U, SelectCondition kMode>
__global__ void __launch_bounds__(kThreads)
    SelectKernel(const bool* cond, const U* t, const U* e, U* out, int64_t n, int64_t width) {
  bool c0 = false;
  if constexpr (kMode == SelectCondition::kScalar) c0 = cond[0];
  for (int64_t i = FirstIndex<int64_t>(); i < n; i += GridStride<int64_t>()) {
    bool c = c0;
    if constexpr (kMode == SelectCondition::kSame) c = cond[i];
    if constexpr (kMode == SelectCondition::kRows) c = cond[i / width];
    out[i] = c ? t[i] : e[i];
  }
}

template <typename U, typename I>
__global__ void __launch_bounds__(kThreads) SelectV2Kernel(const bool* cond, const U* t, const U* e,
                                                           U* out, I n, DeviceLayout<3, I> layout) {
  for (I i = FirstIndex<I>(); i < n; i += GridStride<I>()) {
    I off[3];
    OffsetsOf(layout, i, off);
    out[i] = cond[off[0]] ? t[off[1]] : e[off[2]];
  }
}

struct Select {
  SelectCondition mode;
  int64_t width;
  const bool* cond;
  const void* t;
  const void* e;
  void* out;
  int64_t n;
  cudaStream_t stream;
  template <typename TagT>
  cudaError_t operator()(TagT) const {
    using U = typename TagT::type;
    if (n <= 0) return cudaSuccess;
    const U* tu = static_cast<const U*>(t);
    const U* eu = static_cast<const U*>(e);
    U* o = static_cast<U*>(out);
    switch (mode) {
      case SelectCondition::kSame:
        return Launch(SelectKernel<U, SelectCondition::kSame>, n, stream, cond, tu, eu, o, n,
                      width);
      case SelectCondition::kScalar:
        return Launch(SelectKernel<U, SelectCondition::kScalar>, n, stream, cond, tu, eu, o, n,
                      width);
      case SelectCondition::kRows:
        if (width <= 0) return cudaErrorInvalidValue;
        return Launch(SelectKernel<U, SelectCondition::kRows>, n, stream, cond, tu, eu, o, n,
                      width);
    }
    return cudaErrorInvalidValue;
  }
};

struct SelectV2 {
  const CwiseLayout<3>& layout;
  const bool* cond;
  const void* t;
  const void* e;
  void* out;
  template <typename TagT>
  cudaError_t operator()(TagT, int64_t n, cudaStream_t stream) const {
    using U = typename TagT::type;
    const U* tu = static_cast<const U*>(t);
    const U* eu = static_cast<const U*>(e);
    U* o = static_cast<U*>(out);
    if (FitsUint32Loop(n)) {
      using I = uint32_t;
      return Launch(SelectV2Kernel<U, I>, n, stream, cond, tu, eu, o, I(n), ToDevice<3, I>(layout));
    }
    return Launch(SelectV2Kernel<U, int64_t>, n, stream, cond, tu, eu, o, n,
                  ToDevice<3, int64_t>(layout));
  }
};

}  // namespace
}  // namespace cwise_impl

cudaError_t LaunchAddN(CwiseType type, const void* const* inputs, int num_inputs, void* out,
                       int64_t n, cudaStream_t stream) {
  return cwise_impl::DispatchFloatInt64(type, cwise_impl::AddN{inputs, num_inputs, out, n, stream});
}

cudaError_t LaunchSelect(int elem_bytes, SelectCondition mode, int64_t row_width, const bool* cond,
                         const void* t, const void* e, void* out, int64_t n, cudaStream_t stream) {
  return cwise_impl::DispatchBytes(elem_bytes,
                                   cwise_impl::Select{mode, row_width, cond, t, e, out, n, stream});
}

cudaError_t LaunchSelectV2(int elem_bytes, const CwiseLayout<3>& layout, const bool* cond,
                           const void* t, const void* e, void* out, cudaStream_t stream) {
  const int64_t n = layout.num_elements();
  if (n <= 0) return cudaSuccess;
  if (layout.rank == 1 && layout.strides[0][1] == 1 && layout.strides[0][2] == 1) {
    // t and e element-wise: a condition of the same size, or one scalar.
    const int64_t sc = layout.strides[0][0];
    if (sc == 1 || sc == 0) {
      return LaunchSelect(elem_bytes, sc == 1 ? SelectCondition::kSame : SelectCondition::kScalar,
                          /*row_width=*/1, cond, t, e, out, n, stream);
    }
  }
  const cwise_impl::SelectV2 body{layout, cond, t, e, out};
  return cwise_impl::DispatchBytes(elem_bytes, [&](auto tag) { return body(tag, n, stream); });
}

}  // namespace sluice::gpu
