// CPU kernels of the random ops: one std::mt19937_64 per kernel, seeded from
// (seed, seed2) or from std::random_device, advanced under a mutex.
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "ops/internal/random_kernel_checks.h"
#include "ops/random_ops.h"

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

// A seeded generator shared by every run of one kernel.
class RandomKernelBase : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(int64_t seed, ctx.GetAttr<int64_t>("seed"));
    ASSIGN_OR_RETURN(int64_t seed2, ctx.GetAttr<int64_t>("seed2"));
    absl::MutexLock lock(&mu_);
    if (seed == 0 && seed2 == 0) {
      std::random_device device;
      std::seed_seq seq{device(), device(), device(), device()};
      engine_.seed(seq);
    } else {
      const uint64_t a = static_cast<uint64_t>(seed);
      const uint64_t b = static_cast<uint64_t>(seed2);
      std::seed_seq seq{static_cast<uint32_t>(a), static_cast<uint32_t>(a >> 32),
                        static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32)};
      engine_.seed(seq);
    }
    return absl::OkStatus();
  }

 protected:
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
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

  absl::Mutex mu_;
  std::mt19937_64 engine_ ABSL_GUARDED_BY(mu_);
  bool has_spare_ ABSL_GUARDED_BY(mu_) = false;
  double spare_ ABSL_GUARDED_BY(mu_) = 0;
};

enum class Distribution { kUniform, kNormal, kTruncatedNormal };

template <typename T, Distribution kDist>
class RandomFloatOp : public RandomKernelBase {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape shape,
                     internal::RandomOutputShape(ctx->node().op(), ctx->input(0)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    T* data = out->data<T>();
    const int64_t n = out->NumElements();
    absl::MutexLock lock(&mu_);
    for (int64_t i = 0; i < n; ++i) data[i] = FromDouble<T>(Draw());
    return absl::OkStatus();
  }

 private:
  double Draw() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    switch (kDist) {
      case Distribution::kUniform:
        return Uniform();
      case Distribution::kNormal:
        return Normal();
      case Distribution::kTruncatedNormal:
        break;
    }
    while (true) {
      const double z = Normal();
      if (std::fabs(z) <= 2.0) return z;
    }
  }
};

template <typename T>
class RandomUniformIntOp : public RandomKernelBase {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape shape,
                     internal::RandomOutputShape(ctx->node().op(), ctx->input(0)));
    ASSIGN_OR_RETURN(auto bounds, internal::ReadUniformIntBounds<T>(ctx->input(1), ctx->input(2)));
    const T lo = bounds.first;
    const T hi = bounds.second;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(hi) - lo);
    // Largest multiple of `range` that fits: draws at or beyond it are redone
    // so every value is equally likely.
    const uint64_t limit =
        std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % range;
    T* data = out->data<T>();
    absl::MutexLock lock(&mu_);
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      uint64_t x;
      do {
        x = engine_();
      } while (x >= limit);
      data[i] = static_cast<T>(static_cast<int64_t>(lo) + static_cast<int64_t>(x % range));
    }
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterFloatKernels(KernelRegistry* kernels) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  const std::vector<DataType> shape_types = {DT_INT32, DT_INT64};
  kernels->Register<RandomFloatOp<T, Distribution::kUniform>>(
      KernelDef("RandomUniform", kDeviceTypeCpu)
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
  kernels->Register<RandomFloatOp<T, Distribution::kNormal>>(
      KernelDef("RandomStandardNormal", kDeviceTypeCpu)
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
  kernels->Register<RandomFloatOp<T, Distribution::kTruncatedNormal>>(
      KernelDef("TruncatedNormal", kDeviceTypeCpu)
          .TypeConstraint("dtype", kType)
          .TypeConstraint("T", shape_types)
          .HostMemory("shape"));
}

template <typename T>
void RegisterIntKernel(KernelRegistry* kernels) {
  kernels->Register<RandomUniformIntOp<T>>(
      KernelDef("RandomUniformInt", kDeviceTypeCpu)
          .TypeConstraint("Tout", DataTypeToEnum<T>::value)
          .TypeConstraint("T", std::vector<DataType>{DT_INT32, DT_INT64})
          .HostMemory("shape"));
}

}  // namespace

void RegisterRandomKernels(KernelRegistry* kernels) {
  RegisterFloatKernels<float>(kernels);
  RegisterFloatKernels<double>(kernels);
  RegisterFloatKernels<Half>(kernels);
  RegisterFloatKernels<BFloat16>(kernels);
  RegisterIntKernel<int32_t>(kernels);
  RegisterIntKernel<int64_t>(kernels);
}

}  // namespace sluice
