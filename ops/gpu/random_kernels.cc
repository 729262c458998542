// The GPU's part of the random ops (the shells: ops/random/random_kernels.h):
// Philox4x32-10 (ops/gpu/philox.h) keyed per kernel from (seed, seed2) — or
// from std::random_device when both are 0, as on the CPU — and a counter in
// device memory that each run advances on the GPU by the blocks it reads
// (ops/gpu/random.cu.h), so successive runs differ, a seeded graph repeats
// exactly, and a recorded step (runtime/step_replay.h) draws anew at every
// replay.
// `shape` (and RandomUniformInt's minval/maxval, which are checked on the
// host) are HostMemory; the output is written by the CUDA kernel.
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/random.cu.h"
#include "ops/gpu/stateless_random.cu.h"
#include "ops/random/random_kernels.h"

namespace sluice {
namespace {

template <typename T>
constexpr gpu::RandomElement ElementOf() {
  if constexpr (std::is_same_v<T, Half>) {
    return gpu::RandomElement::kHalf;
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return gpu::RandomElement::kBFloat16;
  } else {
    static_assert(std::is_same_v<T, float>, "GPU random kernels: float, half, bfloat16");
    return gpu::RandomElement::kFloat;
  }
}

constexpr gpu::RandomDistribution GpuDistribution(RandomDistribution dist) {
  switch (dist) {
    case RandomDistribution::kUniform:
      return gpu::RandomDistribution::kUniform;
    case RandomDistribution::kNormal:
      return gpu::RandomDistribution::kNormal;
    case RandomDistribution::kTruncatedNormal:
      break;
  }
  return gpu::RandomDistribution::kTruncatedNormal;
}

// The GPU's generator for the shells of ops/random/random_kernels.h: the kernel's
// Philox key and its next unused counter block.
class GpuRandomGen {
 public:
  static constexpr bool kCounterOnDevice = true;

  void Seed(const std::array<uint32_t, 4>& words) {
    // The same seeds always give the same key (seed_seq is specified).
    std::seed_seq seq(words.begin(), words.end());
    uint32_t key[2];
    seq.generate(key, key + 2);
    key_ = uint64_t{key[0]} | (uint64_t{key[1]} << 32);
  }

  template <typename T>
  absl::Status Floats(OpKernelContext* ctx, RandomDistribution dist, Tensor* out) {
    const int64_t n = out->NumElements();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    absl::MutexLock lock(&mu_);  // a fill and its advance, unparted by another run's
    ASSIGN_OR_RETURN(uint64_t* counter, Counter(ctx, stream));
    return LaunchStatus(ctx, gpu::LaunchRandomFloat(GpuDistribution(dist), ElementOf<T>(),
                                                    out->raw_data(), n, key_, counter, stream));
  }

  template <typename T>
  absl::Status Ints(OpKernelContext* ctx, T lo, uint64_t range, Tensor* out) {
    const int64_t n = out->NumElements();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    absl::MutexLock lock(&mu_);
    ASSIGN_OR_RETURN(uint64_t* counter, Counter(ctx, stream));
    return LaunchStatus(
        ctx, gpu::LaunchRandomUniformInt(out->data<T>(), n, lo, range, key_, counter, stream));
  }

 private:
  // The kernel's counter, made (and zeroed, on `stream`) by its first run,
  // which must not be part of a recording: a recorded zeroing would restart
  // the sequence at every replay. A step is recorded only after it ran
  // through the executor, so this holds for a recorded step's kernels.
  absl::StatusOr<uint64_t*> Counter(OpKernelContext* ctx, cudaStream_t stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (counter_.IsInitialized()) return static_cast<uint64_t*>(counter_.raw_data());
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess ||
        capture != cudaStreamCaptureStatusNone) {
      (void)cudaGetLastError();
      return absl::FailedPreconditionError(absl::StrCat(
          ctx->node().name(), ": a random op's first run cannot be recorded (its counter is made "
                              "then)"));
    }
    // The context's own allocator: the counter outlives any recording.
    ASSIGN_OR_RETURN(counter_, Tensor::Allocate(GpuOf(ctx)->context()->device_allocator(),
                                                DT_INT64, TensorShape({1})));
    RETURN_IF_ERROR(LaunchStatus(
        ctx, cudaMemsetAsync(counter_.raw_data(), 0, sizeof(uint64_t), stream)));
    return static_cast<uint64_t*>(counter_.raw_data());
  }

  uint64_t key_ = 0;  // set once, at Init
  absl::Mutex mu_;
  Tensor counter_ ABSL_GUARDED_BY(mu_);  // one int64 of device memory
};

template <typename T>
void RegisterFloatKernels(KernelRegistry* kernels) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  const std::vector<DataType> shape_types = {DT_INT32, DT_INT64};
  kernels->Register<RandomFloatOp<GpuRandomGen, T, RandomDistribution::kUniform>>(
      GpuKernel("RandomUniform")
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
  kernels->Register<RandomFloatOp<GpuRandomGen, T, RandomDistribution::kNormal>>(
      GpuKernel("RandomStandardNormal")
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
  kernels->Register<RandomFloatOp<GpuRandomGen, T, RandomDistribution::kTruncatedNormal>>(
      GpuKernel("TruncatedNormal")
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
}

template <typename T>
void RegisterIntKernel(KernelRegistry* kernels) {
  kernels->Register<RandomUniformIntOp<GpuRandomGen, T>>(
      GpuKernel("RandomUniformInt")
          .TypeConstraint("Tout", DataTypeToEnum<T>::value)
          .TypeConstraint("T", std::vector<DataType>{DT_INT32, DT_INT64})
          .HostMemory("shape")
          .HostMemory("minval")
          .HostMemory("maxval"));
}

// TensorFlow's stateless draws: the key and counter read on the host, the
// values written by stateless_random.cu with the CPU's arithmetic.
template <typename T>
constexpr gpu::StatelessElement StatelessElementOf() {
  if constexpr (std::is_same_v<T, Half>) {
    return gpu::StatelessElement::kHalf;
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return gpu::StatelessElement::kBFloat16;
  } else if constexpr (std::is_same_v<T, double>) {
    return gpu::StatelessElement::kDouble;
  } else {
    static_assert(std::is_same_v<T, float>, "stateless draws: float, double, half, bfloat16");
    return gpu::StatelessElement::kFloat;
  }
}

template <typename T, gpu::StatelessDistribution kDist, bool kV2>
class GpuStatelessRandomOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape shape,
                     internal::RandomOutputShape(ctx->node().op(), ctx->input(0)));
    ASSIGN_OR_RETURN(stateless::KeyCounter kc, StatelessDrawInputs(ctx, kV2));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchStatelessRandom(kDist, StatelessElementOf<T>(),
                                                        out->raw_data(), out->NumElements(), kc,
                                                        stream));
  }
};

// Stateless integer draws: bounds read on the host (HostMemory minval and
// maxval), the values written by stateless_random.cu.
template <typename T, bool kV2, bool kFullRange>
class GpuStatelessIntOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(op, ctx->input(0)));
    ASSIGN_OR_RETURN(stateless::KeyCounter kc, StatelessDrawInputs(ctx, kV2));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    uint64_t lo = 0, range = 0;  // the full range
    if constexpr (!kFullRange) {
      const int minval = kV2 ? 4 : 2;
      absl::StatusOr<std::pair<T, uint64_t>> read =
          internal::ReadStatelessIntBounds<T>(ctx->input(minval), ctx->input(minval + 1));
      if (!read.ok()) return absl::InvalidArgumentError(absl::StrCat(op, ": ", read.status().message()));
      lo = static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(read->first));
      range = read->second;
    }
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchStatelessInts(sizeof(T), out->raw_data(),
                                                      out->NumElements(), lo, range, kc, stream));
  }
};

// Bounded draws for int32 and int64, full-range ones for the unsigned words
// too (no DataTypeToEnum for those: `type` is passed).
template <typename T>
void RegisterStatelessIntKernels(KernelRegistry* kernels, DataType type) {
  auto v2 = [&](const char* op) {
    return GpuKernel(op).TypeConstraint("dtype", type).HostMemory("shape").HostMemory("key")
        .HostMemory("counter").HostMemory("alg");
  };
  auto v1 = [&](const char* op) {
    return GpuKernel(op).TypeConstraint("dtype", type).HostMemory("shape").HostMemory("seed");
  };
  if constexpr (std::is_signed_v<T>) {
    kernels->Register<GpuStatelessIntOp<T, true, false>>(
        v2("StatelessRandomUniformIntV2").HostMemory("minval").HostMemory("maxval"));
    kernels->Register<GpuStatelessIntOp<T, false, false>>(
        v1("StatelessRandomUniformInt").HostMemory("minval").HostMemory("maxval"));
  }
  kernels->Register<GpuStatelessIntOp<T, true, true>>(v2("StatelessRandomUniformFullIntV2"));
  kernels->Register<GpuStatelessIntOp<T, false, true>>(v1("StatelessRandomUniformFullInt"));
}

template <typename T>
void RegisterStatelessKernels(KernelRegistry* kernels) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  using Dist = gpu::StatelessDistribution;
  auto v2 = [&](const char* op) {
    return GpuKernel(op).TypeConstraint("dtype", kType).HostMemory("shape").HostMemory("key")
        .HostMemory("counter").HostMemory("alg");
  };
  auto v1 = [&](const char* op) {
    return GpuKernel(op).TypeConstraint("dtype", kType).HostMemory("shape").HostMemory("seed");
  };
  kernels->Register<GpuStatelessRandomOp<T, Dist::kUniform, true>>(v2("StatelessRandomUniformV2"));
  kernels->Register<GpuStatelessRandomOp<T, Dist::kNormal, true>>(v2("StatelessRandomNormalV2"));
  kernels->Register<GpuStatelessRandomOp<T, Dist::kUniform, false>>(v1("StatelessRandomUniform"));
  kernels->Register<GpuStatelessRandomOp<T, Dist::kNormal, false>>(v1("StatelessRandomNormal"));
  kernels->Register<GpuStatelessRandomOp<T, Dist::kTruncatedNormal, true>>(
      v2("StatelessTruncatedNormalV2"));
  kernels->Register<GpuStatelessRandomOp<T, Dist::kTruncatedNormal, false>>(
      v1("StatelessTruncatedNormal"));
}

}  // namespace

void RegisterGpuRandomKernels(KernelRegistry* kernels) {
  RegisterStatelessKernels<float>(kernels);
  RegisterStatelessKernels<double>(kernels);
  RegisterStatelessKernels<Half>(kernels);
  RegisterStatelessKernels<BFloat16>(kernels);
  RegisterStatelessIntKernels<int32_t>(kernels, DT_INT32);
  RegisterStatelessIntKernels<int64_t>(kernels, DT_INT64);
  RegisterStatelessIntKernels<uint32_t>(kernels, ::tensorflow::DT_UINT32);
  RegisterStatelessIntKernels<uint64_t>(kernels, ::tensorflow::DT_UINT64);
  // The key and counter are made on the host, beside the draws' host inputs.
  for (const char* op : {"StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg"}) {
    kernels->Register(GpuKernel(op).AllHostMemory(), &NewStatelessKeyCounterKernel);
  }
  RegisterFloatKernels<float>(kernels);
  RegisterFloatKernels<Half>(kernels);
  RegisterFloatKernels<BFloat16>(kernels);
  RegisterIntKernel<int32_t>(kernels);
  RegisterIntKernel<int64_t>(kernels);
}

}  // namespace sluice
