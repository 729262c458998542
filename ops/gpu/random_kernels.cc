// GPU kernels of the random ops: Philox4x32-10 (ops/gpu/philox.h) keyed per
// kernel from (seed, seed2) — or from std::random_device when both are 0, as
// on the CPU — and a counter that each run advances atomically by the blocks
// it reads, so successive runs differ and a seeded graph repeats exactly.
// `shape` (and RandomUniformInt's minval/maxval, which are checked on the
// host) are HostMemory; the output is written by the CUDA kernel.
#include <atomic>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/random.cu.h"
#include "ops/internal/random_kernel_checks.h"

namespace sluice {
namespace {

// The Philox key of one kernel and its next unused counter block.
class GpuRandomKernelBase : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(int64_t seed, ctx.GetAttr<int64_t>("seed"));
    ASSIGN_OR_RETURN(int64_t seed2, ctx.GetAttr<int64_t>("seed2"));
    uint32_t words[2];
    if (seed == 0 && seed2 == 0) {
      std::random_device device;
      words[0] = device();
      words[1] = device();
    } else {
      // The same seeds always give the same key (seed_seq is specified).
      const uint64_t a = static_cast<uint64_t>(seed);
      const uint64_t b = static_cast<uint64_t>(seed2);
      std::seed_seq seq{static_cast<uint32_t>(a), static_cast<uint32_t>(a >> 32),
                        static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32)};
      seq.generate(words, words + 2);
    }
    key_ = uint64_t{words[0]} | (uint64_t{words[1]} << 32);
    return absl::OkStatus();
  }

 protected:
  // The first of `blocks` counter blocks that are this run's alone.
  uint64_t ReserveBlocks(int64_t blocks) {
    return next_block_.fetch_add(static_cast<uint64_t>(blocks), std::memory_order_relaxed);
  }
  uint64_t key() const { return key_; }

 private:
  uint64_t key_ = 0;
  std::atomic<uint64_t> next_block_{0};
};

template <DataType kType>
constexpr gpu::RandomElement ElementOf() {
  if constexpr (kType == DT_HALF) {
    return gpu::RandomElement::kHalf;
  } else if constexpr (kType == DT_BFLOAT16) {
    return gpu::RandomElement::kBFloat16;
  } else {
    static_assert(kType == DT_FLOAT, "GPU random kernels: float, half, bfloat16");
    return gpu::RandomElement::kFloat;
  }
}

template <DataType kType, gpu::RandomDistribution kDist>
class RandomFloatGpuOp : public GpuRandomKernelBase {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape shape,
                     internal::RandomOutputShape(ctx->node().op(), ctx->input(0)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const int64_t n = out->NumElements();
    if (n == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    const uint64_t base = ReserveBlocks(gpu::RandomFloatBlocks(n));
    return LaunchStatus(ctx, gpu::LaunchRandomFloat(kDist, ElementOf<kType>(), out->raw_data(), n,
                                                    key(), base, stream));
  }
};

template <typename T>
class RandomUniformIntGpuOp : public GpuRandomKernelBase {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape shape,
                     internal::RandomOutputShape(ctx->node().op(), ctx->input(0)));
    // minval and maxval are in host memory (HostMemory args).
    ASSIGN_OR_RETURN(auto bounds, internal::ReadUniformIntBounds<T>(ctx->input(1), ctx->input(2)));
    const T lo = bounds.first;
    const T hi = bounds.second;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const int64_t n = out->NumElements();
    if (n == 0) return absl::OkStatus();
    // hi - lo in unsigned arithmetic: exact for every int64 pair with lo < hi.
    const uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(hi)) -
                           static_cast<uint64_t>(static_cast<int64_t>(lo));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    const uint64_t base = ReserveBlocks(gpu::RandomIntBlocks(n));
    return LaunchStatus(
        ctx, gpu::LaunchRandomUniformInt(out->data<T>(), n, lo, range, key(), base, stream));
  }
};

template <DataType kType>
void RegisterFloatKernels(KernelRegistry* kernels) {
  const std::vector<DataType> shape_types = {DT_INT32, DT_INT64};
  kernels->Register<RandomFloatGpuOp<kType, gpu::RandomDistribution::kUniform>>(
      GpuKernel("RandomUniform")
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
  kernels->Register<RandomFloatGpuOp<kType, gpu::RandomDistribution::kNormal>>(
      GpuKernel("RandomStandardNormal")
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
  kernels->Register<RandomFloatGpuOp<kType, gpu::RandomDistribution::kTruncatedNormal>>(
      GpuKernel("TruncatedNormal")
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
}

template <typename T>
void RegisterIntKernel(KernelRegistry* kernels) {
  kernels->Register<RandomUniformIntGpuOp<T>>(
      GpuKernel("RandomUniformInt")
          .TypeConstraint("Tout", DataTypeToEnum<T>::value)
          .TypeConstraint("T", std::vector<DataType>{DT_INT32, DT_INT64})
          .HostMemory("shape")
          .HostMemory("minval")
          .HostMemory("maxval"));
}

}  // namespace

void RegisterGpuRandomKernels(KernelRegistry* kernels) {
  RegisterFloatKernels<DT_FLOAT>(kernels);
  RegisterFloatKernels<DT_HALF>(kernels);
  RegisterFloatKernels<DT_BFLOAT16>(kernels);
  RegisterIntKernel<int32_t>(kernels);
  RegisterIntKernel<int64_t>(kernels);
}

}  // namespace sluice
