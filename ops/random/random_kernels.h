// RandomUniform, RandomStandardNormal, TruncatedNormal and RandomUniformInt
// written once for every device (the pattern of ops/training/training_kernels.h): the
// shell reads the seeds, the output shape and RandomUniformInt's bounds, and
// allocates; a device brings its generator `Gen`, one object per kernel,
// shared by every run of it (so it must be thread-safe):
//
//   void Seed(const std::array<uint32_t, 4>& words)
//       called once, at Init: the words of (seed, seed2), or random ones
//       when both attrs are 0
//   template <typename T> absl::Status Floats(OpKernelContext*, RandomDistribution, Tensor* out)
//       out's elements (type T) drawn from the distribution
//   template <typename T> absl::Status Ints(OpKernelContext*, T lo, uint64_t range, Tensor* out)
//       out's elements uniform in [lo, lo + range), range >= 1
//   static constexpr bool kCounterOnDevice
//       whether its counter lives in device memory and advances there, so
//       a recorded step replays the op right (OpKernel::ReplaysRight)
//
// Floats and Ints are called with a non-empty output. A seeded graph
// repeats its draws exactly on one device; devices draw differently.
#ifndef SLUICE_OPS_RANDOM_RANDOM_KERNELS_H_
#define SLUICE_OPS_RANDOM_RANDOM_KERNELS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <random>

#include "base/status_macros.h"
#include "ops/gpu/stateless_philox.h"
#include "ops/random/internal/random_kernel_checks.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// TensorFlow's stateless random ops (stateless_random_kernels.cc).
void RegisterStatelessRandomKernels(KernelRegistry* kernels);
// Shared with their GPU kernels (ops/gpu/random_kernels.cc): the key and
// counter of a draw from its inputs, read on the host (V2: key, counter,
// alg at inputs 1-3; V1: the seed at input 1), checked; and the kernel of
// StatelessRandomGetKeyCounter(Alg), whose tensors all live in host memory.
absl::StatusOr<stateless::KeyCounter> StatelessDrawInputs(OpKernelContext* ctx, bool v2);
std::unique_ptr<OpKernel> NewStatelessKeyCounterKernel();

enum class RandomDistribution {
  kUniform,          // [0, 1)
  kNormal,           // N(0, 1)
  kTruncatedNormal,  // N(0, 1), redrawn outside [-2, 2]
};

// The generator's seed words from the seed and seed2 attrs.
inline std::array<uint32_t, 4> RandomSeedWords(int64_t seed, int64_t seed2) {
  if (seed == 0 && seed2 == 0) {
    std::random_device device;
    return {device(), device(), device(), device()};
  }
  const uint64_t a = static_cast<uint64_t>(seed);
  const uint64_t b = static_cast<uint64_t>(seed2);
  return {static_cast<uint32_t>(a), static_cast<uint32_t>(a >> 32), static_cast<uint32_t>(b),
          static_cast<uint32_t>(b >> 32)};
}

// Reads the seeds and owns the generator.
template <typename Gen>
class RandomOpBase : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(int64_t seed, ctx.GetAttr<int64_t>("seed"));
    ASSIGN_OR_RETURN(int64_t seed2, ctx.GetAttr<int64_t>("seed2"));
    gen_.Seed(RandomSeedWords(seed, seed2));
    return absl::OkStatus();
  }
  bool ReplaysRight() const override { return Gen::kCounterOnDevice; }

 protected:
  Gen gen_;
};

// RandomUniform, RandomStandardNormal, TruncatedNormal of element type T.
template <typename Gen, typename T, RandomDistribution kDist>
class RandomFloatOp : public RandomOpBase<Gen> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape shape,
                     internal::RandomOutputShape(ctx->node().op(), ctx->input(0)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return this->gen_.template Floats<T>(ctx, kDist, out);
  }
};

// RandomUniformInt of T = int32_t or int64_t; minval and maxval in host
// memory.
template <typename Gen, typename T>
class RandomUniformIntOp : public RandomOpBase<Gen> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape shape,
                     internal::RandomOutputShape(ctx->node().op(), ctx->input(0)));
    ASSIGN_OR_RETURN(auto bounds, internal::ReadUniformIntBounds<T>(ctx->input(1), ctx->input(2)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    // hi - lo in unsigned arithmetic: exact for every int64 pair with lo < hi.
    const uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(bounds.second)) -
                           static_cast<uint64_t>(static_cast<int64_t>(bounds.first));
    return this->gen_.template Ints<T>(ctx, bounds.first, range, out);
  }
};

}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_RANDOM_KERNELS_H_
