// The pieces of the GPU batch normalization (launchers: batch_norm.cu.h),
// each one thread's work: a chunk's per-channel sums, a channel's finish,
// an element's output. The CPU kernels' arithmetic, operation for
// operation but for the order of the sums (by chunks of rows).
// __host__ __device__: batch_norm_on_host.cu runs the same sequence on the
// host for batch_norm_on_host_test.cc. nvcc only.
//
// Scratch (doubles): partial_a and partial_b [chunks * depth], then four
// per-channel arrays ch[0..3] [depth]:
//   forward: ch0 mean, ch1 biased variance, ch2 mul, ch3 add
//   grad:    ch0 sum(dy), ch1 sum(dy * xhat), ch2 1 / sqrt(var + epsilon)
#ifndef SLUICE_OPS_GPU_BATCH_NORM_FNS_CU_H_
#define SLUICE_OPS_GPU_BATCH_NORM_FNS_CU_H_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "ops/gpu/batch_norm.cu.h"

#define SLUICE_BN_FN __host__ __device__ __forceinline__

namespace sluice::gpu::batch_norm {

// The storage types S of x, y, dy, dx: loads to float, stores from it.
SLUICE_BN_FN float ToFloat(float v) { return v; }
SLUICE_BN_FN float ToFloat(__half v) { return __half2float(v); }
SLUICE_BN_FN float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename S>
SLUICE_BN_FN S FromFloat(float v) {
  if constexpr (std::is_same_v<S, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<S, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else {
    return v;
  }
}
template <typename S>
SLUICE_BN_FN float At(const void* p, int64_t i) {
  return ToFloat(static_cast<const S*>(p)[i]);
}

SLUICE_BN_FN int64_t Chunks(int64_t rows) { return BatchNormChunks(rows); }
SLUICE_BN_FN int64_t RowsPerChunk(int64_t rows) {
  const int64_t chunks = Chunks(rows);
  return (rows + chunks - 1) / chunks;
}

// The scratch's regions.
struct Scratch {
  double* partial_a;
  double* partial_b;
  double* ch[4];
};
SLUICE_BN_FN Scratch ScratchOf(double* base, int64_t rows, int64_t depth) {
  const int64_t partial = Chunks(rows) * depth;
  Scratch s;
  s.partial_a = base;
  s.partial_b = base + partial;
  for (int k = 0; k < 4; ++k) s.ch[k] = base + 2 * partial + k * depth;
  return s;
}

// Chunk k's rows [r0, r1).
SLUICE_BN_FN void ChunkRows(int64_t rows, int64_t k, int64_t* r0, int64_t* r1) {
  const int64_t per = RowsPerChunk(rows);
  *r0 = k * per < rows ? k * per : rows;
  *r1 = *r0 + per < rows ? *r0 + per : rows;
}

// ---- Forward -------------------------------------------------------------

// partial_a[k, c] = the sum of x over chunk k's rows (kSquares false), or
// of (x - mean[c])^2 (true).
template <bool kSquares, typename S>
SLUICE_BN_FN void ForwardPartial(const BatchNormForwardArgs& a, const Scratch& s, int64_t k,
                                 int64_t c) {
  int64_t r0, r1;
  ChunkRows(a.rows, k, &r0, &r1);
  double sum = 0;
  for (int64_t r = r0; r < r1; ++r) {
    const float x = At<S>(a.x, r * a.depth + c);
    if (kSquares) {
      const double d = x - s.ch[0][c];
      sum += d * d;
    } else {
      sum += x;
    }
  }
  s.partial_a[k * a.depth + c] = sum;
}

SLUICE_BN_FN double SumChunks(const double* partial, int64_t rows, int64_t depth, int64_t c) {
  double sum = 0;
  for (int64_t k = 0; k < Chunks(rows); ++k) sum += partial[k * depth + c];
  return sum;
}

// Training: channel c's mean from the chunks' sums.
SLUICE_BN_FN void FinishMean(const BatchNormForwardArgs& a, const Scratch& s, int64_t c) {
  s.ch[0][c] = a.rows > 0 ? SumChunks(s.partial_a, a.rows, a.depth, c) / a.rows : 0;
}

// Channel c's variance (training: from the chunks' squares; inference: the
// input), then its outputs and the normalization's mul and add.
SLUICE_BN_FN void FinishChannel(const BatchNormForwardArgs& a, const Scratch& s, int64_t c) {
  double mean, var;
  if (a.training) {
    mean = s.ch[0][c];
    var = a.rows > 0 ? SumChunks(s.partial_a, a.rows, a.depth, c) / a.rows : 0;
  } else {
    mean = a.mean_in[c];
    var = a.var_in[c];
  }
  const double mul = a.scale[c] / sqrt(var + a.epsilon);
  s.ch[2][c] = mul;
  s.ch[3][c] = a.offset[c] - mean * mul;
  const double bessel = a.rows > 1 ? static_cast<double>(a.rows) / (a.rows - 1) : 1.0;
  double out_mean = mean, out_var = var;
  if (a.training) {
    out_var = var * bessel;
    if (a.factor != 1.0f) {
      const double old_mean = a.mean_in[c];
      const double old_var = a.var_in[c];
      out_mean = (1 - a.factor) * old_mean + a.factor * mean;
      out_var = (1 - a.factor) * old_var + a.factor * out_var;
    }
  }
  a.batch_mean[c] = static_cast<float>(out_mean);
  a.batch_var[c] = static_cast<float>(out_var);
  a.saved_mean[c] = static_cast<float>(mean);
  a.saved_var[c] = static_cast<float>(var);
}

// y at flat index i.
template <typename S>
SLUICE_BN_FN void Normalize(const BatchNormForwardArgs& a, const Scratch& s, int64_t i) {
  const int64_t c = i % a.depth;
  static_cast<S*>(a.y)[i] =
      FromFloat<S>(static_cast<float>(At<S>(a.x, i) * s.ch[2][c] + s.ch[3][c]));
}

// ---- Gradient ------------------------------------------------------------

SLUICE_BN_FN double InvStd(const BatchNormGradArgs& a, int64_t c) {
  return 1 / sqrt(double{a.var[c]} + a.epsilon);
}

// partial_a[k, c] = sum of dy, partial_b[k, c] = sum of dy * xhat over
// chunk k's rows.
template <typename S>
SLUICE_BN_FN void GradPartial(const BatchNormGradArgs& a, const Scratch& s, int64_t k,
                              int64_t c) {
  int64_t r0, r1;
  ChunkRows(a.rows, k, &r0, &r1);
  const double r = InvStd(a, c);
  double sum_dy = 0, sum_dy_xhat = 0;
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t i = row * a.depth + c;
    const float g = At<S>(a.dy, i);
    sum_dy += g;
    sum_dy_xhat += g * (At<S>(a.x, i) - a.mean[c]) * r;
  }
  s.partial_a[k * a.depth + c] = sum_dy;
  s.partial_b[k * a.depth + c] = sum_dy_xhat;
}

SLUICE_BN_FN void FinishGradChannel(const BatchNormGradArgs& a, const Scratch& s, int64_t c) {
  const double sum_dy = SumChunks(s.partial_a, a.rows, a.depth, c);
  const double sum_dy_xhat = SumChunks(s.partial_b, a.rows, a.depth, c);
  s.ch[0][c] = sum_dy;
  s.ch[1][c] = sum_dy_xhat;
  s.ch[2][c] = InvStd(a, c);
  a.scale_grad[c] = static_cast<float>(sum_dy_xhat);
  a.offset_grad[c] = static_cast<float>(sum_dy);
}

// dx at flat index i.
template <typename S>
SLUICE_BN_FN void GradElement(const BatchNormGradArgs& a, const Scratch& s, int64_t i) {
  const int64_t c = i % a.depth;
  const double r = s.ch[2][c];
  double inner = At<S>(a.dy, i);
  if (a.training) {
    const double xhat = (At<S>(a.x, i) - a.mean[c]) * r;
    inner -= (s.ch[0][c] + xhat * s.ch[1][c]) / a.rows;
  }
  static_cast<S*>(a.dx)[i] = FromFloat<S>(static_cast<float>(a.scale[c] * r * inner));
}

// Calls fn with a null pointer of `type`'s storage type (host code: the
// launchers pick their kernels with it); false, calling nothing, for a
// value outside the enum.
template <typename Fn>
bool WithStorage(BatchNormType type, Fn&& fn) {
  switch (type) {
    case BatchNormType::kFloat:
      fn(static_cast<float*>(nullptr));
      return true;
    case BatchNormType::kHalf:
      fn(static_cast<__half*>(nullptr));
      return true;
    case BatchNormType::kBFloat16:
      fn(static_cast<__nv_bfloat16*>(nullptr));
      return true;
  }
  return false;
}

}  // namespace sluice::gpu::batch_norm

#undef SLUICE_BN_FN

#endif  // SLUICE_OPS_GPU_BATCH_NORM_FNS_CU_H_
