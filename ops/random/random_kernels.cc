// The CPU's part of the random ops (the shells: ops/random/random_kernels.h): one
// std::mt19937_64 per kernel, seeded from (seed, seed2) or from
// std::random_device, advanced under a mutex.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "ops/random/random_kernels.h"
#include "ops/random/random_ops.h"

namespace sluice {
namespace {

template <typename T>
T FromDouble(double v) {
  return static_cast<T>(v);
}
template <>
Half FromDouble<Half>(double v) {
  return Half::FromFloat(static_cast<float>(v));
}
template <>
BFloat16 FromDouble<BFloat16>(double v) {
  return BFloat16::FromFloat(static_cast<float>(v));
}

// Significant bits of a uniform in [0, 1) that T holds exactly. A uniform
// with more bits would round up to 1 in T once in 2^(bits + 1) draws (float:
// 1 in 2^25, Half: 1 in 2^12, bfloat16: 1 in 2^9), outside RandomUniform's
// [0, 1).
template <typename T>
constexpr int kUniformBits = 53;
template <>
constexpr int kUniformBits<float> = 24;
template <>
constexpr int kUniformBits<Half> = 11;
template <>
constexpr int kUniformBits<BFloat16> = 8;

// The CPU's generator for the shells of ops/random/random_kernels.h: one
// std::mt19937_64, advanced under a mutex.
class CpuRandomGen {
 public:
  static constexpr bool kCounterOnDevice = false;

  void Seed(const std::array<uint32_t, 4>& words) {
    std::seed_seq seq(words.begin(), words.end());
    absl::MutexLock lock(&mu_);
    engine_.seed(seq);
  }

  template <typename T>
  absl::Status Floats(OpKernelContext*, RandomDistribution dist, Tensor* out) {
    T* data = out->data<T>();
    const int64_t n = out->NumElements();
    absl::MutexLock lock(&mu_);
    for (int64_t i = 0; i < n; ++i) data[i] = FromDouble<T>(Draw(dist, kUniformBits<T>));
    return absl::OkStatus();
  }

  template <typename T>
  absl::Status Ints(OpKernelContext*, T lo, uint64_t range, Tensor* out) {
    // Largest multiple of `range` that fits: draws at or beyond it are redone
    // so every value is equally likely.
    const uint64_t limit =
        std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % range;
    T* data = out->data<T>();
    const int64_t n = out->NumElements();
    absl::MutexLock lock(&mu_);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t x;
      do {
        x = engine_();
      } while (x >= limit);
      data[i] = static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(lo)) + x % range);
    }
    return absl::OkStatus();
  }

 private:
  // Uniform in [0, 1): a multiple of 2^-bits, so a type with `bits`
  // significant bits holds it exactly.
  double Uniform(int bits = 53) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return std::ldexp(static_cast<double>(engine_() >> (64 - bits)), -bits);
  }
  // N(0, 1) by the Box-Muller transform; caches the second value of a pair.
  double Normal() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - Uniform();  // (0, 1]: log is finite
    const double u2 = Uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * std::numbers::pi * u2;
    spare_ = r * std::sin(theta);
    has_spare_ = true;
    return r * std::cos(theta);
  }
  double Draw(RandomDistribution dist, int uniform_bits) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    switch (dist) {
      case RandomDistribution::kUniform:
        return Uniform(uniform_bits);
      case RandomDistribution::kNormal:
        return Normal();
      case RandomDistribution::kTruncatedNormal:
        break;
    }
    while (true) {
      const double z = Normal();
      if (std::fabs(z) <= 2.0) return z;
    }
  }

  absl::Mutex mu_;
  std::mt19937_64 engine_ ABSL_GUARDED_BY(mu_);
  bool has_spare_ ABSL_GUARDED_BY(mu_) = false;
  double spare_ ABSL_GUARDED_BY(mu_) = 0;
};

template <typename T>
void RegisterFloatKernels(KernelRegistry* kernels) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  const std::vector<DataType> shape_types = {DT_INT32, DT_INT64};
  kernels->Register<RandomFloatOp<CpuRandomGen, T, RandomDistribution::kUniform>>(
      KernelDef("RandomUniform", kDeviceTypeCpu)
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
  kernels->Register<RandomFloatOp<CpuRandomGen, T, RandomDistribution::kNormal>>(
      KernelDef("RandomStandardNormal", kDeviceTypeCpu)
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
  kernels->Register<RandomFloatOp<CpuRandomGen, T, RandomDistribution::kTruncatedNormal>>(
      KernelDef("TruncatedNormal", kDeviceTypeCpu)
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
}

template <typename T>
void RegisterIntKernel(KernelRegistry* kernels) {
  kernels->Register<RandomUniformIntOp<CpuRandomGen, T>>(
      KernelDef("RandomUniformInt", kDeviceTypeCpu)
          .TypeConstraint("Tout", DataTypeToEnum<T>::value)
          .TypeConstraint("T", std::vector<DataType>{DT_INT32, DT_INT64})
          .HostMemory("shape"));
}

}  // namespace

void RegisterRandomKernels(KernelRegistry* kernels) {
  RegisterStatelessRandomKernels(kernels);
  RegisterFloatKernels<float>(kernels);
  RegisterFloatKernels<double>(kernels);
  RegisterFloatKernels<Half>(kernels);
  RegisterFloatKernels<BFloat16>(kernels);
  RegisterIntKernel<int32_t>(kernels);
  RegisterIntKernel<int64_t>(kernels);
}

}  // namespace sluice
