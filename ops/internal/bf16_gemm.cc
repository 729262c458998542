#include "ops/internal/bf16_gemm.h"

#include <cstring>
#include <dnnl.hpp>

// From libgomp, oneDNN's threading runtime (see blas.cc).
extern "C" void omp_set_num_threads(int num_threads);

namespace sluice {
namespace internal {
namespace {

using dnnl::memory;

const dnnl::engine& CpuEngine() {
  static const dnnl::engine* const kEngine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *kEngine;
}

// A matrix of `rows` x `cols` stored row-major with leading dimension `ld`,
// or its transpose.
memory::desc Matrix(int64_t rows, int64_t cols, int64_t ld, bool transposed, memory::data_type t) {
  const memory::dims strides = transposed ? memory::dims{1, ld} : memory::dims{ld, 1};
  return memory::desc({rows, cols}, t, strides);
}

}  // namespace

void Bf16Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const BFloat16* a,
              int64_t lda, const BFloat16* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // C = beta * C; 0 when beta is (C may hold anything then)
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    }
    return;
  }
  // Kernels split work over their device's threads themselves; oneDNN's
  // OpenMP threads stay off on every thread that calls it (as in blas.cc).
  thread_local bool single = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)single;
  const memory::desc ad = Matrix(m, k, lda, trans_a, memory::data_type::bf16);
  const memory::desc bd = Matrix(k, n, ldb, trans_b, memory::data_type::bf16);
  const memory::desc cd = Matrix(m, n, ldc, false, memory::data_type::f32);
  dnnl::primitive_attr attr;
  if (beta != 0.0f) {
    dnnl::post_ops post;
    post.append_sum(beta);
    attr.set_post_ops(post);
  }
  // oneDNN caches the primitives by their description, so a step's repeated
  // shapes compile each kernel once; the descriptors themselves are made
  // on every call (microseconds, against the GEMM's tens or hundreds).
  const dnnl::matmul::desc desc(ad, bd, cd);
  const dnnl::matmul::primitive_desc pd(desc, attr, CpuEngine());
  dnnl::stream stream(CpuEngine());
  memory am(ad, CpuEngine(), const_cast<BFloat16*>(a));
  memory bm(bd, CpuEngine(), const_cast<BFloat16*>(b));
  memory cm(cd, CpuEngine(), c);
  dnnl::matmul(pd).execute(stream,
                           {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
  stream.wait();
}

bool CpuHasNativeBf16Gemm() {
  static const bool kNative = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
    return (isa & bf16) == bf16;
  }();
  return kNative;
}

// BFloat16::FromFloat and ToFloat (graph/types.h) bit for bit, written out
// here so that these loops inline and vectorize: a step converts every
// activation it computes in bfloat16.
void FloatToBf16(const float* in, BFloat16* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t x;
    std::memcpy(&x, &in[i], sizeof(x));
    out[i].bits = (x & 0x7fffffffu) > 0x7f800000u
                      ? static_cast<uint16_t>((x >> 16) | 0x40u)  // NaN stays NaN
                      : static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
}

void Bf16ToFloat(const BFloat16* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t x = static_cast<uint32_t>(in[i].bits) << 16;
    std::memcpy(&out[i], &x, sizeof(x));
  }
}

}  // namespace internal
}  // namespace sluice
