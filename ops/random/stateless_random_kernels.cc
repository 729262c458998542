// CPU kernels of TensorFlow's stateless random ops (random_ops.h): Philox
// from a key and counter (internal/stateless_philox.h), TensorFlow's
// groups and conversions, so that the values are TensorFlow's.
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/random/internal/random_kernel_checks.h"
#include "ops/random/internal/stateless_fill.h"
#include "ops/gpu/stateless_philox.h"
#include "ops/random/random_kernels.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

constexpr int32_t kPhilox = 1;
constexpr int32_t kThreeFry = 2;
constexpr int32_t kAutoSelect = 3;

absl::StatusOr<stateless::KeyCounter> FromSeedTensor(absl::string_view op, const Tensor& seed) {
  if (seed.dims() != 1 || seed.NumElements() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": seed must have shape [2], got ", seed.shape().DebugString()));
  }
  // StatelessRandomUniformFullInt's OpDef allows unsigned seeds; TensorFlow's
  // kernels refuse them.
  if (seed.dtype() != DT_INT32 && seed.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": Invalid seed type: ", DataTypeName(seed.dtype())));
  }
  // An int32 seed's words are sign-extended, as TensorFlow reads them.
  const uint64_t s0 = seed.dtype() == DT_INT32 ? static_cast<uint64_t>(int64_t{seed.data<int32_t>()[0]})
                                               : static_cast<uint64_t>(seed.data<int64_t>()[0]);
  const uint64_t s1 = seed.dtype() == DT_INT32 ? static_cast<uint64_t>(int64_t{seed.data<int32_t>()[1]})
                                               : static_cast<uint64_t>(seed.data<int64_t>()[1]);
  return stateless::FromSeed(s0, s1);
}

absl::StatusOr<stateless::KeyCounter> FromKeyCounterTensors(absl::string_view op,
                                                            const Tensor& key,
                                                            const Tensor& counter,
                                                            const Tensor& alg) {
  if (alg.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": alg must be a scalar, got ", alg.shape().DebugString()));
  }
  const int32_t a = alg.scalar<int32_t>();
  if (a == kThreeFry) {
    return absl::UnimplementedError(absl::StrCat(op, ": the ThreeFry algorithm (2); Philox is 1"));
  }
  if (a != kPhilox && a != kAutoSelect) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": unknown algorithm ", a));
  }
  if (key.NumElements() != 1 || counter.NumElements() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": key must have 1 element and counter 2, got ",
                                                   key.shape().DebugString(), " and ",
                                                   counter.shape().DebugString()));
  }
  const uint64_t* c = counter.data<uint64_t>();
  return stateless::FromWords(key.data<uint64_t>()[0], c[0], c[1]);
}

}  // namespace

absl::StatusOr<stateless::KeyCounter> StatelessDrawInputs(OpKernelContext* ctx, bool v2) {
  const std::string& op = ctx->node().op();
  if (v2) return FromKeyCounterTensors(op, ctx->input(1), ctx->input(2), ctx->input(3));
  return FromSeedTensor(op, ctx->input(1));
}

namespace {

class GetKeyCounterOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(stateless::KeyCounter kc, FromSeedTensor(ctx->node().op(), ctx->input(0)));
    Tensor key(::tensorflow::DT_UINT64, TensorShape({1}));
    Tensor counter(::tensorflow::DT_UINT64, TensorShape({2}));
    key.data<uint64_t>()[0] = uint64_t{kc.key.v[0]} | (uint64_t{kc.key.v[1]} << 32);
    counter.data<uint64_t>()[0] = uint64_t{kc.counter.v[0]} | (uint64_t{kc.counter.v[1]} << 32);
    counter.data<uint64_t>()[1] = uint64_t{kc.counter.v[2]} | (uint64_t{kc.counter.v[3]} << 32);
    ctx->set_output(0, std::move(key));
    ctx->set_output(1, std::move(counter));
    if (ctx->num_outputs() > 2) ctx->set_output(2, Tensor::Scalar<int32_t>(kPhilox));
    return absl::OkStatus();
  }
};

class GetAlgOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, Tensor::Scalar<int32_t>(kPhilox));
    return absl::OkStatus();
  }
};

// StatelessRandom{Uniform,Normal}V2 and StatelessTruncatedNormalV2(shape,
// key, counter, alg), and the V1 forms (shape, seed), whose key and counter
// come from the seed.
template <typename T, RandomDistribution kDist, bool kV2>
class StatelessRandomOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(op, ctx->input(0)));
    ASSIGN_OR_RETURN(stateless::KeyCounter kc, StatelessDrawInputs(ctx, kV2));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    internal::FillStateless(kc, kDist, out->data<T>(), out->NumElements());
    return absl::OkStatus();
  }
};

// StatelessRandomUniformIntV2(shape, key, counter, alg, minval, maxval) and
// StatelessRandomUniformFullIntV2(shape, key, counter, alg); V1: (shape,
// seed[, minval, maxval]). As in TensorFlow, an empty draw checks no bounds.
template <typename T, bool kV2, bool kFullRange>
class StatelessIntOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(op, ctx->input(0)));
    ASSIGN_OR_RETURN(stateless::KeyCounter kc, StatelessDrawInputs(ctx, kV2));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    std::pair<T, uint64_t> bounds{T{0}, 0};  // the full range
    if constexpr (!kFullRange) {
      const int minval = kV2 ? 4 : 2;
      absl::StatusOr<std::pair<T, uint64_t>> read =
          internal::ReadStatelessIntBounds<T>(ctx->input(minval), ctx->input(minval + 1));
      if (!read.ok()) return absl::InvalidArgumentError(absl::StrCat(op, ": ", read.status().message()));
      bounds = *read;
    }
    internal::FillStatelessInts(kc, bounds.first, bounds.second, out->data<T>(), out->NumElements());
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterFor(KernelRegistry* k) {
  const DataType t = DataTypeToEnum<T>::value;
  auto on = [t](const char* op) { return KernelDef(op, kDeviceTypeCpu).TypeConstraint("dtype", t); };
  k->Register<StatelessRandomOp<T, RandomDistribution::kUniform, true>>(
      on("StatelessRandomUniformV2"));
  k->Register<StatelessRandomOp<T, RandomDistribution::kNormal, true>>(
      on("StatelessRandomNormalV2"));
  k->Register<StatelessRandomOp<T, RandomDistribution::kUniform, false>>(
      on("StatelessRandomUniform"));
  k->Register<StatelessRandomOp<T, RandomDistribution::kNormal, false>>(
      on("StatelessRandomNormal"));
  k->Register<StatelessRandomOp<T, RandomDistribution::kTruncatedNormal, true>>(
      on("StatelessTruncatedNormalV2"));
  k->Register<StatelessRandomOp<T, RandomDistribution::kTruncatedNormal, false>>(
      on("StatelessTruncatedNormal"));
}

// Bounded draws for int32 and int64 (TensorFlow registers no unsigned ones);
// full-range draws for the unsigned types too.
template <typename T>
void RegisterIntFor(KernelRegistry* k, DataType t) {
  auto on = [t](const char* op) { return KernelDef(op, kDeviceTypeCpu).TypeConstraint("dtype", t); };
  if constexpr (std::is_signed_v<T>) {
    k->Register<StatelessIntOp<T, true, false>>(on("StatelessRandomUniformIntV2"));
    k->Register<StatelessIntOp<T, false, false>>(on("StatelessRandomUniformInt"));
  }
  k->Register<StatelessIntOp<T, true, true>>(on("StatelessRandomUniformFullIntV2"));
  k->Register<StatelessIntOp<T, false, true>>(on("StatelessRandomUniformFullInt"));
}

}  // namespace

std::unique_ptr<OpKernel> NewStatelessKeyCounterKernel() {
  return std::make_unique<GetKeyCounterOp>();
}

void RegisterStatelessRandomKernels(KernelRegistry* k) {
  k->Register<GetKeyCounterOp>(KernelDef("StatelessRandomGetKeyCounter", kDeviceTypeCpu));
  k->Register<GetKeyCounterOp>(KernelDef("StatelessRandomGetKeyCounterAlg", kDeviceTypeCpu));
  k->Register<GetAlgOp>(KernelDef("StatelessRandomGetAlg", kDeviceTypeCpu));
  RegisterFor<float>(k);
  RegisterFor<double>(k);
  RegisterFor<Half>(k);
  RegisterFor<BFloat16>(k);
  RegisterIntFor<int32_t>(k, DT_INT32);
  RegisterIntFor<int64_t>(k, DT_INT64);
  RegisterIntFor<uint32_t>(k, ::tensorflow::DT_UINT32);  // no DataTypeToEnum for unsigned words
  RegisterIntFor<uint64_t>(k, ::tensorflow::DT_UINT64);
}

}  // namespace sluice
