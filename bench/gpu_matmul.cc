// An 8192x8192 float MatMul on GPU:0 through Session::Run against cuBLAS
// called directly in the same process, for float32, TF32 and bfloat16
// arithmetic (ops/gpu/matmul_precision.h; cuBLAS compute types
// CUBLAS_COMPUTE_32F, _32F_FAST_TF32, _32F_FAST_16BF on float32 storage).
//
//   bazel run //bench:gpu_matmul [-- --n=8192 --reps=30 --precisions=fp32,tf32,bf16]
//
// Session: variables a and b on GPU:0 (filled once from the host), the
// MatMul node run as a target, so nothing is fetched; each Run ends with the
// device synchronized, like every step. Direct: cublasGemmEx on buffers of
// the same values, one call per sample between two CUDA events, synchronized
// after each. Samples of the two alternate in rounds; each figure is the
// median of --reps samples after --warmup. Prints per precision
//   gpu_matmul_N_P_session: X TFLOP/s, gpu_matmul_N_P_cublas: Y TFLOP/s,
//   gpu_matmul_N_P_ratio: X/Y (target >= 0.95)
// Then the figure of a bf16 user: the product of two DT_BFLOAT16 variables
// (cast once from the same values) against cublasGemmEx on bf16 buffers,
//   gpu_matmul_N_bf16_tensors_session / _cublas / _ratio,
// and whether Session::Run returns only when the GPU work is done: the wall
// time of K runs with one cudaDeviceSynchronize after them, against K times
// the median run,
//   gpu_matmul_N_bf16_tensors_run_returns_after_work: 1 (or 0, with both times)
// Prints `gpu: none (<reason>)` (exit 0) where no GPU is visible.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "ops/gpu/matmul_precision.h"
#include "session/direct_session.h"
#include "runtime/gpu/gpu_devices.h"
#include "sluice.h"

ABSL_FLAG(int, n, 8192, "matrix size (n x n times n x n)");
ABSL_FLAG(int, reps, 30, "timed samples per method and precision (at least 20 are used)");
ABSL_FLAG(int, warmup, 3, "untimed calls per method and precision first");
ABSL_FLAG(std::string, precisions, "fp32,tf32,bf16", "comma separated: fp32, tf32, bf16");

namespace sluice {
namespace {

absl::Status Cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorName(e), " (",
                                          cudaGetErrorString(e), ")"));
}

absl::Status Blas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cublasGetStatusName(s)));
}

// Uniform in [-1, 1), fast (a 64-bit LCG): 2 x 64M values take no time.
Tensor HostRandom(int64_t n, uint64_t seed) {
  Tensor t(DT_FLOAT, TensorShape({n, n}));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& v : t.flat<float>()) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(static_cast<int64_t>(s >> 40) - (int64_t{1} << 23)) / (1 << 23);
  }
  return t;
}

Tensor ToBFloat16(const Tensor& t) {
  Tensor out(DT_BFLOAT16, t.shape());
  const float* src = t.flat<float>().data();
  BFloat16* dst = static_cast<BFloat16*>(out.raw_data());
  for (int64_t i = 0; i < t.NumElements(); ++i) dst[i] = BFloat16::FromFloat(src[i]);
  return out;
}

cublasComputeType_t ComputeType(GpuMatMulPrecision p) {
  switch (p) {
    case GpuMatMulPrecision::kTF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GpuMatMulPrecision::kBF16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    default: return CUBLAS_COMPUTE_32F;
  }
}

// cuBLAS on its own stream and handle, with its own copies of a and b.
class DirectGemm {
 public:
  DirectGemm() = default;
  DirectGemm(const DirectGemm&) = delete;
  DirectGemm& operator=(const DirectGemm&) = delete;
  ~DirectGemm() {
    if (handle_ != nullptr) cublasDestroy(handle_);
    for (void* p : {a_, b_, c_}) {
      if (p != nullptr) cudaFree(p);
    }
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // a and b: float or bfloat16 host tensors of the same shape.
  absl::Status Init(const Tensor& a, const Tensor& b) {
    n_ = a.dim_size(0);
    type_ = a.dtype() == DT_BFLOAT16 ? CUDA_R_16BF : CUDA_R_32F;
    const size_t bytes = a.TotalBytes();
    RETURN_IF_ERROR(Cuda(cudaSetDevice(0), "cudaSetDevice"));
    RETURN_IF_ERROR(Cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream"));
    RETURN_IF_ERROR(Cuda(cudaEventCreate(&start_), "cudaEventCreate"));
    RETURN_IF_ERROR(Cuda(cudaEventCreate(&stop_), "cudaEventCreate"));
    RETURN_IF_ERROR(Cuda(cudaMalloc(&a_, bytes), "cudaMalloc a"));
    RETURN_IF_ERROR(Cuda(cudaMalloc(&b_, bytes), "cudaMalloc b"));
    RETURN_IF_ERROR(Cuda(cudaMalloc(&c_, bytes), "cudaMalloc c"));
    RETURN_IF_ERROR(Cuda(cudaMemcpy(a_, a.raw_data(), bytes, cudaMemcpyHostToDevice), "copy a"));
    RETURN_IF_ERROR(Cuda(cudaMemcpy(b_, b.raw_data(), bytes, cudaMemcpyHostToDevice), "copy b"));
    RETURN_IF_ERROR(Blas(cublasCreate(&handle_), "cublasCreate"));
    return Blas(cublasSetStream(handle_, stream_), "cublasSetStream");
  }

  // One product, timed between events; synchronized.
  absl::StatusOr<double> TimedCall(GpuMatMulPrecision p) {
    const float one = 1.0f, zero = 0.0f;
    const int n = static_cast<int>(n_);
    RETURN_IF_ERROR(Cuda(cudaEventRecord(start_, stream_), "cudaEventRecord"));
    // Row-major C = A B is column-major C^T = B^T A^T.
    RETURN_IF_ERROR(Blas(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b_, type_,
                                      n, a_, type_, n, &zero, c_, type_, n,
                                      type_ == CUDA_R_16BF ? CUBLAS_COMPUTE_32F : ComputeType(p),
                                      CUBLAS_GEMM_DEFAULT),
                         "cublasGemmEx"));
    RETURN_IF_ERROR(Cuda(cudaEventRecord(stop_, stream_), "cudaEventRecord"));
    RETURN_IF_ERROR(Cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize"));
    float ms = 0;
    RETURN_IF_ERROR(Cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime"));
    return static_cast<double>(ms);
  }

 private:
  int64_t n_ = 0;
  cudaDataType_t type_ = CUDA_R_32F;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* c_ = nullptr;
};

// MatMul on DT_BFLOAT16 tensors ("c16"), Session::Run against cuBLAS, and
// whether Run waits for the product.
absl::Status Bfloat16Tensors(Session* session, const Tensor& ta, const Tensor& tb, int reps,
                             int warmup) {
  const int64_t n = ta.dim_size(0);
  DirectGemm direct;
  RETURN_IF_ERROR(direct.Init(ToBFloat16(ta), ToBFloat16(tb)));
  absl::Status status;
  auto session_call = [&] {
    absl::Status s = session->Run({}, {}, {"c16"}).status();
    if (!s.ok()) status = s;
  };
  for (int i = 0; i < warmup; ++i) {
    session_call();
    RETURN_IF_ERROR(direct.TimedCall(GpuMatMulPrecision::kFloat32).status());
  }
  RETURN_IF_ERROR(status);
  std::vector<double> session_ms, direct_ms;
  const int rounds = 4, per_round = (reps + rounds - 1) / rounds;
  for (int r = 0; r < rounds; ++r) {
    for (double v : bench::TimeRepeated(per_round, session_call)) session_ms.push_back(v);
    RETURN_IF_ERROR(status);
    for (int i = 0; i < per_round; ++i) {
      ASSIGN_OR_RETURN(double ms, direct.TimedCall(GpuMatMulPrecision::kFloat32));
      direct_ms.push_back(ms);
    }
  }
  // K runs back to back, then the device drained: when Run returns only
  // after its GPU work, the drain adds nothing.
  const int k = 20;
  RETURN_IF_ERROR(Cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < k; ++i) session_call();
  const auto t1 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(Cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
  const auto t2 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(status);
  const double returned_ms = std::chrono::duration<double, std::milli>(t1 - t0).count() / k;
  const double drained_ms = std::chrono::duration<double, std::milli>(t2 - t0).count() / k;

  const double flop = 2.0 * n * n * n;
  const double sm = bench::Median(session_ms), dm = bench::Median(direct_ms);
  const std::string key = absl::StrCat("gpu_matmul_", n, "_bf16_tensors");
  std::printf("%s_session: %.1f TFLOP/s\n", key.c_str(), flop / (sm * 1e-3) * 1e-12);
  std::printf("%s_cublas: %.1f TFLOP/s\n", key.c_str(), flop / (dm * 1e-3) * 1e-12);
  std::printf("%s_session_ms: %.3f ms\n", key.c_str(), sm);
  std::printf("%s_cublas_ms: %.3f ms\n", key.c_str(), dm);
  std::printf("%s_ratio: %.3f (target >= 0.95)\n", key.c_str(), dm / sm);
  std::printf("%s_run_returned_ms: %.3f ms\n", key.c_str(), returned_ms);
  std::printf("%s_run_drained_ms: %.3f ms\n", key.c_str(), drained_ms);
  // Within 2% (timer and launch noise): Run waited for its work.
  std::printf("%s_run_returns_after_work: %d\n", key.c_str(),
              drained_ms <= returned_ms * 1.02 ? 1 : 0);
  return absl::OkStatus();
}

absl::Status Main() {
  std::string why;
  if (VisibleGpuCount(&why) == 0) {
    std::printf("gpu: none (%s)\n", why.c_str());
    return absl::OkStatus();
  }
  cudaDeviceProp prop;
  RETURN_IF_ERROR(Cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"));
  std::printf("# device: %s\n", prop.name);

  const int64_t n = absl::GetFlag(FLAGS_n);
  const int reps = std::max(20, absl::GetFlag(FLAGS_reps));
  const int warmup = absl::GetFlag(FLAGS_warmup);
  std::vector<GpuMatMulPrecision> precisions;
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_precisions), ',',
                                               absl::SkipEmpty())) {
    ASSIGN_OR_RETURN(GpuMatMulPrecision p, ParseGpuMatMulPrecision(name));
    precisions.push_back(p);
  }
  const Tensor ta = HostRandom(n, 1), tb = HostRandom(n, 2);

  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope gpu = root.WithDevice("/device:GPU:0");
  Output a_init = ops::Placeholder(gpu.WithOpName("a_init"), DT_FLOAT);
  Output b_init = ops::Placeholder(gpu.WithOpName("b_init"), DT_FLOAT);
  Output a = ops::Variable(gpu.WithOpName("a"), TensorShape({n, n}), DT_FLOAT);
  Output b = ops::Variable(gpu.WithOpName("b"), TensorShape({n, n}), DT_FLOAT);
  Output assign_a = ops::Assign(gpu.WithOpName("assign_a"), a, a_init);
  Output assign_b = ops::Assign(gpu.WithOpName("assign_b"), b, b_init);
  ops::MatMul(gpu.WithOpName("c"), a, b);
  // The same values as bf16 tensors, cast once on the GPU.
  Output a16 = ops::Variable(gpu.WithOpName("a16"), TensorShape({n, n}), DT_BFLOAT16);
  Output b16 = ops::Variable(gpu.WithOpName("b16"), TensorShape({n, n}), DT_BFLOAT16);
  Output assign_a16 = ops::Assign(gpu.WithOpName("assign_a16"), a16,
                                  ops::Cast(gpu, a_init, DT_BFLOAT16));
  Output assign_b16 = ops::Assign(gpu.WithOpName("assign_b16"), b16,
                                  ops::Cast(gpu, b_init, DT_BFLOAT16));
  ops::MatMul(gpu.WithOpName("c16"), a16, b16);
  RETURN_IF_ERROR(root.status());
  SessionConfig options = BuiltinSessionConfig();
  // Room beside the session's device memory for the direct buffers.
  options.devices.gpu_memory_limit = int64_t{8} << 30;
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options, *root.graph()));
  RETURN_IF_ERROR(
      session->Run({{a_init, ta}, {b_init, tb}}, {},
                   {assign_a.node, assign_b.node, assign_a16.node, assign_b16.node})
          .status());
  // Check once that the product runs on the GPU.
  {
    RunOptions ro;
    ro.output_partition_graphs = true;
    RunMetadata md;
    RETURN_IF_ERROR(session->Run({}, {}, {"c"}, ro, &md).status());
    std::string device;
    for (const GraphDef& g : md.partition_graphs) {
      for (const NodeDef& nd : g.node()) {
        if (nd.name() == "c") device = nd.device();
      }
    }
    if (device.find("GPU:0") == std::string::npos) {
      return absl::FailedPreconditionError(absl::StrCat("MatMul 'c' ran on '", device, "'"));
    }
  }

  auto direct = std::make_unique<DirectGemm>();
  RETURN_IF_ERROR(direct->Init(ta, tb));

  const double flop = 2.0 * n * n * n;
  for (GpuMatMulPrecision p : precisions) {
    SetGpuMatMulPrecision(p);
    absl::Status status;
    auto session_call = [&] {
      absl::Status s = session->Run({}, {}, {"c"}).status();
      if (!s.ok()) status = s;
    };
    std::vector<double> direct_ms, session_ms;
    for (int i = 0; i < warmup; ++i) {
      session_call();
      RETURN_IF_ERROR(direct->TimedCall(p).status());
    }
    RETURN_IF_ERROR(status);
    const int rounds = 4, per_round = (reps + rounds - 1) / rounds;
    for (int r = 0; r < rounds; ++r) {
      for (double v : bench::TimeRepeated(per_round, session_call)) session_ms.push_back(v);
      RETURN_IF_ERROR(status);
      for (int i = 0; i < per_round; ++i) {
        ASSIGN_OR_RETURN(double ms, direct->TimedCall(p));
        direct_ms.push_back(ms);
      }
    }
    const double sm = bench::Median(session_ms), dm = bench::Median(direct_ms);
    const std::string key = absl::StrCat("gpu_matmul_", n, "_", GpuMatMulPrecisionName(p));
    std::printf("%s_session: %.1f TFLOP/s\n", key.c_str(), flop / (sm * 1e-3) * 1e-12);
    std::printf("%s_cublas: %.1f TFLOP/s\n", key.c_str(), flop / (dm * 1e-3) * 1e-12);
    std::printf("%s_session_ms: %.3f ms\n", key.c_str(), sm);
    std::printf("%s_cublas_ms: %.3f ms\n", key.c_str(), dm);
    std::printf("%s_ratio: %.3f (target >= 0.95)\n", key.c_str(), dm / sm);
    std::fflush(stdout);
  }
  SetGpuMatMulPrecision(GpuMatMulPrecision::kFloat32);
  direct.reset();  // frees the float buffers
  return Bfloat16Tensors(session.get(), ta, tb, reps, warmup);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "gpu_matmul", sluice::Main);
}
