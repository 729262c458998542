// The GPU's part of the random ops (the shells: ops/random/random_kernels.h):
// Philox4x32-10 (ops/gpu/philox.h) keyed per kernel from (seed, seed2) — or
// from std::random_device when both are 0, as on the CPU — and a counter
// that each run advances atomically by the blocks it reads, so successive
// runs differ and a seeded graph repeats exactly.
// `shape` (and RandomUniformInt's minval/maxval, which are checked on the
// host) are HostMemory; the output is written by the CUDA kernel.
#include <array>
#include <atomic>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/random.cu.h"
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
    const uint64_t base = ReserveBlocks(gpu::RandomFloatBlocks(n));
    return LaunchStatus(ctx, gpu::LaunchRandomFloat(GpuDistribution(dist), ElementOf<T>(),
                                                    out->raw_data(), n, key_, base, stream));
  }

  template <typename T>
  absl::Status Ints(OpKernelContext* ctx, T lo, uint64_t range, Tensor* out) {
    const int64_t n = out->NumElements();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    const uint64_t base = ReserveBlocks(gpu::RandomIntBlocks(n));
    return LaunchStatus(
        ctx, gpu::LaunchRandomUniformInt(out->data<T>(), n, lo, range, key_, base, stream));
  }

 private:
  // The first of `blocks` counter blocks that are this run's alone.
  uint64_t ReserveBlocks(int64_t blocks) {
    return next_block_.fetch_add(static_cast<uint64_t>(blocks), std::memory_order_relaxed);
  }

  uint64_t key_ = 0;  // set once, at Init
  std::atomic<uint64_t> next_block_{0};
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

}  // namespace

void RegisterGpuRandomKernels(KernelRegistry* kernels) {
  RegisterFloatKernels<float>(kernels);
  RegisterFloatKernels<Half>(kernels);
  RegisterFloatKernels<BFloat16>(kernels);
  RegisterIntKernel<int32_t>(kernels);
  RegisterIntKernel<int64_t>(kernels);
}

}  // namespace sluice
