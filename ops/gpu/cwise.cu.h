// Launchers of the element-wise CUDA kernels (unary and binary arithmetic
// with NumPy broadcasting, comparisons, the *Grad helpers, Cast, AddN,
// Select, SelectV2). Plain C++: the host-side kernels (cwise_kernels.cc,
// g++) include it; the CUDA code sits in cwise_*.cu.
//
//   gpu::CwiseLayout<2> layout = gpu::FlatCwiseLayout<2>(n);  // x, y, out: n elements each
//   cudaError_t err = gpu::LaunchBinary(gpu::BinaryFn::kAdd, gpu::CwiseType::kFloat, layout,
//                                       x_dev, y_dev, out_dev, stream);
//
// A broadcast operation is described by a CwiseLayout: the output's
// dimensions after merging (row-major, at most kMaxCwiseDims) and, per
// operand, the element stride along each of them (0 where that operand is
// broadcast). ops/gpu/cwise_layout.h builds one from a BroadcastPlan.
//
// Every launcher only enqueues work on `stream` and returns the launch's
// cudaGetLastError() (cudaErrorNotSupported for a function/type pair that
// has no kernel). Pointers are device memory; an output may be the buffer of
// an input that is read at the output's own offsets (forwarding). Nothing is
// launched for zero elements. Thread-safe: no state beyond a per-device cache
// of the multiprocessor count.
#ifndef SLUICE_OPS_GPU_CWISE_CU_H_
#define SLUICE_OPS_GPU_CWISE_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice::gpu {

// Element types of the kernels (storage: half and bfloat16 are 16-bit IEEE
// binary16 / bfloat16 bits; arithmetic on them is done in float).
enum class CwiseType : int { kFloat, kHalf, kBFloat16, kDouble, kInt32, kInt64, kBool };

enum class UnaryFn : int {
  kNeg,
  kSquare,
  kAbs,
  kSign,
  kSqrt,
  kRsqrt,
  kExp,
  kLog,
  kTanh,
  kSigmoid,
  kReciprocal,
  kFloor,
  kCeil,
  kRound,  // halves to even, as TensorFlow's Round
  kLog1p,
  kExpm1,
  kErf,  // GELU's
  kErfc,
  kSin,
  kCos,
  kTan,
  kSinh,
  kCosh,
  kAsin,
  kAcos,
  kAtan,
  kAsinh,
  kAcosh,
  kAtanh,
  kRint,  // halves to even, as Round
};

// out = f(x, y). The *Grad functions take (y, dy). Comparisons write bool.
enum class BinaryFn : int {
  kAdd,
  kSub,
  kMul,
  kRealDiv,
  kFloorDiv,
  kMaximum,
  kMinimum,
  kPow,
  kSquaredDifference,
  kDivNoNan,  // 0 where y is 0
  kFloorMod,  // the remainder with y's sign (an int64 zero divisor gives 0)
  kAtan2,     // atan2 of the first input (the ordinate) and the second
  kXlogy,     // 0 where x is 0, as Xdivy and Xlog1py
  kXdivy,
  kXlog1py,
  kTanhGrad,
  kSigmoidGrad,
  kSqrtGrad,
  kRsqrtGrad,
  kReciprocalGrad,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLess,
  kLessEqual,
};

inline constexpr int kMaxCwiseDims = 8;

// The merged broadcast of N operands into one contiguous output.
template <int N>
struct CwiseLayout {
  int rank = 1;                            // merged dimensions, 1..kMaxCwiseDims
  int64_t dims[kMaxCwiseDims] = {};        // their sizes, outermost first
  int64_t strides[kMaxCwiseDims][N] = {};  // strides[k][j]: operand j along dims[k]

  int64_t num_elements() const {
    int64_t n = 1;
    for (int k = 0; k < rank; ++k) n *= dims[k];
    return n;
  }
};

// N operands of `n` elements each, read at the output's offsets.
template <int N>
CwiseLayout<N> FlatCwiseLayout(int64_t n) {
  CwiseLayout<N> layout;
  layout.dims[0] = n;
  for (int j = 0; j < N; ++j) layout.strides[0][j] = 1;
  return layout;
}

// How LaunchBinary walks a layout.
enum class BinaryPath : int {
  kFlat,     // x[i], y[i] (also one element: every stride 0)
  kScalarY,  // x[i], y[0]
  kScalarX,  // x[0], y[i]
  k2D,       // rows x columns with arbitrary strides (bias-like rows, column vectors)
  kGeneral,  // up to kMaxCwiseDims dimensions
};

inline BinaryPath ClassifyBinaryLayout(const CwiseLayout<2>& layout) {
  if (layout.rank == 2) return BinaryPath::k2D;
  if (layout.rank != 1) return BinaryPath::kGeneral;
  const int64_t sx = layout.strides[0][0];
  const int64_t sy = layout.strides[0][1];
  if (layout.dims[0] <= 1 || (sx == 1 && sy == 1)) return BinaryPath::kFlat;
  if (sx == 1 && sy == 0) return BinaryPath::kScalarY;
  if (sx == 0 && sy == 1) return BinaryPath::kScalarX;
  return BinaryPath::kGeneral;
}

// y[i] = fn(x[i]) for i < n. Types: float, half, bfloat16, double for all;
// int64 too for kNeg, kSquare, kAbs, kSign.
cudaError_t LaunchUnary(UnaryFn fn, CwiseType type, const void* x, void* y, int64_t n,
                        cudaStream_t stream);

// out = fn(x, y) over `layout` (operand 0: x, 1: y). Types: float, half,
// bfloat16, double; int64 too for kAdd, kSub, kMul, kMaximum, kMinimum, kPow,
// kSquaredDifference and the comparisons; bool for kEqual and kNotEqual. `out` holds bool for
// the comparisons, else `type`.
cudaError_t LaunchBinary(BinaryFn fn, CwiseType type, const CwiseLayout<2>& layout, const void* x,
                         const void* y, void* out, cudaStream_t stream);

// y[i] = x[i] converted from `src` to `dst` (src != dst), like the CPU
// Cast: to bool is `!= 0`; float to integer maps NaN to 0 and saturates.
cudaError_t LaunchCast(CwiseType src, CwiseType dst, const void* x, void* y, int64_t n,
                       cudaStream_t stream);

// out[i] = inputs[0][i] + ... + inputs[num_inputs-1][i], num_inputs >= 2,
// summed in order. `inputs` is a host array of device pointers; one launch
// per 8 inputs. out may be inputs[0]. Types: float, half, bfloat16, double,
// int64.
cudaError_t LaunchAddN(CwiseType type, const void* const* inputs, int num_inputs, void* out,
                       int64_t n, cudaStream_t stream);

// Select: out[i] = cond[c(i)] ? t[i] : e[i] for i < n, where c(i) is i
// (kSame), 0 (kScalar) or i / row_width (kRows). elem_bytes: 1, 2, 4 or 8.
enum class SelectCondition : int { kSame, kScalar, kRows };
cudaError_t LaunchSelect(int elem_bytes, SelectCondition mode, int64_t row_width, const bool* cond,
                         const void* t, const void* e, void* out, int64_t n, cudaStream_t stream);

// SelectV2: out = cond ? t : e broadcast over `layout` (operands 0: cond,
// 1: t, 2: e). elem_bytes: 1, 2, 4 or 8.
cudaError_t LaunchSelectV2(int elem_bytes, const CwiseLayout<3>& layout, const bool* cond,
                           const void* t, const void* e, void* out, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_CWISE_CU_H_
