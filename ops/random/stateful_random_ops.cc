// tf.random.Generator's ops: definitions, CPU kernels and wrappers
// (ops/random/stateful_random_ops.h).
#include "ops/random/stateful_random_ops.h"

#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/gpu/stateless_philox.h"
#include "ops/random/internal/random_kernel_checks.h"
#include "ops/random/internal/stateless_fill.h"
#include "ops/state/state_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

constexpr int64_t kPhilox = 1;
constexpr int64_t kThreeFry = 2;
constexpr int64_t kAutoSelect = 3;
constexpr int64_t kPhiloxStateWords = 3;  // counter low, counter high, key
// TensorFlow advances the counter by this many per value drawn, whatever
// the distribution uses.
constexpr uint64_t kCounterPerValue = 256;

absl::Status CheckAlgorithm(absl::string_view op, int64_t alg) {
  if (alg == kThreeFry) {
    return absl::UnimplementedError(absl::StrCat(op, ": the ThreeFry algorithm (2); Philox is 1"));
  }
  if (alg != kPhilox && alg != kAutoSelect) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": Unsupported algorithm id: ", alg));
  }
  return absl::OkStatus();
}

// Input `i` as a scalar of T (the algorithm, delta).
template <typename T>
absl::StatusOr<T> ScalarInput(OpKernelContext* ctx, int i) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": input ", i,
                                                   " (0-based) must have shape [], not ",
                                                   t.shape().DebugString()));
  }
  return t.scalar<T>();
}

// Under the state variable's lock: the Philox key and counter at word
// `skip` of the state, and the counter advanced by `advance` written back
// (copy-on-write). Returns the key and counter before the advance.
absl::StatusOr<stateless::KeyCounter> ReadAndAdvance(OpKernelContext* ctx, int64_t skip,
                                                     uint64_t advance, int64_t* alg_from_state,
                                                     int64_t old_state[kPhiloxStateWords]) {
  const std::string& op = ctx->node().op();
  ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
  absl::MutexLock lock(&var->mu);
  RETURN_IF_ERROR(internal::CheckInitialized(*var));
  if (var->tensor.dtype() != DT_INT64 || var->tensor.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": the RNG state variable ", var->name, " must be an int64 vector, not ",
        DataTypeName(var->tensor.dtype()), " ", var->tensor.shape().DebugString()));
  }
  if (var->tensor.NumElements() < skip + kPhiloxStateWords) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": For the Philox algorithm, the size of state must be at least ",
                     skip + kPhiloxStateWords, "; got ", var->tensor.NumElements()));
  }
  ASSIGN_OR_RETURN(internal::VarUpdate u, internal::VarUpdate::Begin(var, ctx->device()));
  int64_t* words = u.data<int64_t>();
  if (alg_from_state != nullptr) *alg_from_state = words[0];
  uint64_t* philox = reinterpret_cast<uint64_t*>(words + skip);
  if (old_state != nullptr) {
    for (int i = 0; i < kPhiloxStateWords; ++i) old_state[i] = words[skip + i];
  }
  const stateless::KeyCounter kc = stateless::FromWords(philox[2], philox[0], philox[1]);
  // The 128-bit counter (low word first) plus `advance`.
  const uint64_t low = philox[0] + advance;
  if (low < philox[0]) ++philox[1];
  philox[0] = low;
  u.Commit();
  return kc;
}

}  // namespace

absl::StatusOr<stateless::KeyCounter> internal::ReadAndAdvanceRngState(OpKernelContext* ctx,
                                                                       uint64_t advance) {
  ASSIGN_OR_RETURN(int64_t alg, ScalarInput<int64_t>(ctx, 1));
  RETURN_IF_ERROR(CheckAlgorithm(ctx->node().op(), alg));
  return ReadAndAdvance(ctx, 0, advance, nullptr, nullptr);
}

namespace {

// The draws: (resource, algorithm, shape[, minval, maxval]) -> output,
// or StatefulStandardNormal's (resource, shape) with the algorithm first
// in the state.
template <typename T>
class StatefulDrawOp : public OpKernel {
 public:
  enum class Form { kFloat, kBoundedInt, kFullInt };
  StatefulDrawOp(Form form, RandomDistribution dist, bool alg_in_state)
      : form_(form), dist_(dist), alg_in_state_(alg_in_state) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    const int shape_input = alg_in_state_ ? 1 : 2;
    int64_t alg = kPhilox;
    if (!alg_in_state_) {
      ASSIGN_OR_RETURN(alg, ScalarInput<int64_t>(ctx, 1));
      RETURN_IF_ERROR(CheckAlgorithm(op, alg));
    }
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(op, ctx->input(shape_input)));
    std::pair<T, uint64_t> bounds{T{}, 0};
    if constexpr (std::is_integral_v<T>) {
      if (form_ == Form::kBoundedInt) {
        absl::StatusOr<std::pair<T, uint64_t>> read =
            internal::ReadStatelessIntBounds<T>(ctx->input(3), ctx->input(4));
        if (!read.ok()) return absl::InvalidArgumentError(absl::StrCat(op, ": ", read.status().message()));
        bounds = *read;
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const int64_t n = out->NumElements();
    int64_t state_alg = kPhilox;
    ASSIGN_OR_RETURN(stateless::KeyCounter kc,
                     ReadAndAdvance(ctx, alg_in_state_ ? 1 : 0, static_cast<uint64_t>(n) * kCounterPerValue,
                                    alg_in_state_ ? &state_alg : nullptr, nullptr));
    if (alg_in_state_) RETURN_IF_ERROR(CheckAlgorithm(op, state_alg));
    if constexpr (std::is_integral_v<T>) {
      internal::FillStatelessInts(kc, bounds.first, bounds.second, out->data<T>(), n);
    } else {
      internal::FillStateless(kc, dist_, out->data<T>(), n);
    }
    return absl::OkStatus();
  }

 private:
  const Form form_;
  const RandomDistribution dist_;
  const bool alg_in_state_;
};

class RngReadAndSkipOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(int32_t alg, ScalarInput<int32_t>(ctx, 1));
    RETURN_IF_ERROR(CheckAlgorithm(ctx->node().op(), alg));
    ASSIGN_OR_RETURN(uint64_t delta, ScalarInput<uint64_t>(ctx, 2));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({kPhiloxStateWords})));
    return ReadAndAdvance(ctx, 0, delta * kCounterPerValue, nullptr, out->data<int64_t>()).status();
  }
};

class RngSkipOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(int64_t alg, ScalarInput<int64_t>(ctx, 1));
    RETURN_IF_ERROR(CheckAlgorithm(ctx->node().op(), alg));
    ASSIGN_OR_RETURN(int64_t delta, ScalarInput<int64_t>(ctx, 2));
    return ReadAndAdvance(ctx, 0, static_cast<uint64_t>(delta) * kCounterPerValue, nullptr, nullptr)
        .status();
  }
};

template <typename T>
class NonDeterministicIntsOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(ctx->node().op(), ctx->input(0)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    std::random_device entropy;
    T* data = out->data<T>();
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      const uint64_t v = (uint64_t{entropy()} << 32) | entropy();
      data[i] = static_cast<T>(v);
    }
    return absl::OkStatus();
  }
};

// The draw's shape from its `shape` input: known values, else a known
// rank (the input's length), else unknown.
absl::Status DrawShape(InferenceContext* c, int shape_input) {
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, c->InputAsInts(shape_input));
  const TensorShape& in = c->input(shape_input);
  if (dims.has_value()) {
    c->set_output(0, TensorShape(*dims));
  } else if (in.rank() == 1 && in.dim(0) >= 0) {
    c->set_output(0, TensorShape::UnknownOfRank(static_cast<int>(in.dim(0))));
  } else {
    c->set_output(0, TensorShape::Unknown());
  }
  return absl::OkStatus();
}

OpDefBuilder Draw(const char* name, const char* dtype_attr, bool with_algorithm = true) {
  OpDefBuilder b(name);
  b.Input("resource: resource");
  if (with_algorithm) b.Input("algorithm: int64");
  b.Input("shape: shape_dtype").Output("output: dtype").Attr(dtype_attr)
      .Attr("shape_dtype: type = int64").SetIsStateful();
  return b;
}

template <typename T>
void RegisterFloatDraws(KernelRegistry* k, DataType t) {
  using Op = StatefulDrawOp<T>;
  auto on = [t](const char* op) { return KernelDef(op, kDeviceTypeCpu).TypeConstraint("dtype", t); };
  k->Register(on("StatefulUniform"), [] {
    return std::make_unique<Op>(Op::Form::kFloat, RandomDistribution::kUniform, false);
  });
  k->Register(on("StatefulStandardNormalV2"), [] {
    return std::make_unique<Op>(Op::Form::kFloat, RandomDistribution::kNormal, false);
  });
  k->Register(on("StatefulTruncatedNormal"), [] {
    return std::make_unique<Op>(Op::Form::kFloat, RandomDistribution::kTruncatedNormal, false);
  });
  k->Register(on("StatefulStandardNormal"), [] {
    return std::make_unique<Op>(Op::Form::kFloat, RandomDistribution::kNormal, true);
  });
}

template <typename T>
void RegisterIntDraws(KernelRegistry* k, DataType t) {
  using Op = StatefulDrawOp<T>;
  auto on = [t](const char* op) { return KernelDef(op, kDeviceTypeCpu).TypeConstraint("dtype", t); };
  if constexpr (std::is_signed_v<T>) {
    k->Register(on("StatefulUniformInt"), [] {
      return std::make_unique<Op>(Op::Form::kBoundedInt, RandomDistribution::kUniform, false);
    });
  }
  k->Register(on("StatefulUniformFullInt"), [] {
    return std::make_unique<Op>(Op::Form::kFullInt, RandomDistribution::kUniform, false);
  });
  k->Register<NonDeterministicIntsOp<T>>(on("NonDeterministicInts"));
}

}  // namespace

absl::Status RegisterStatefulRandomOps(OpRegistry* ops) {
  auto draw_shape = [](InferenceContext* c) { return DrawShape(c, 2); };
  RETURN_IF_ERROR(ops->Register(Draw("StatefulUniform", "dtype: type = float").SetShapeFn(draw_shape)));
  RETURN_IF_ERROR(
      ops->Register(Draw("StatefulStandardNormalV2", "dtype: type = float").SetShapeFn(draw_shape)));
  RETURN_IF_ERROR(
      ops->Register(Draw("StatefulTruncatedNormal", "dtype: type = float").SetShapeFn(draw_shape)));
  RETURN_IF_ERROR(ops->Register(
      Draw("StatefulStandardNormal", "dtype: type = float", /*with_algorithm=*/false)
          .SetShapeFn([](InferenceContext* c) { return DrawShape(c, 1); })));
  RETURN_IF_ERROR(ops->Register(
      Draw("StatefulUniformFullInt", "dtype: type = uint64").SetShapeFn(draw_shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatefulUniformInt")
                                    .Input("resource: resource")
                                    .Input("algorithm: int64")
                                    .Input("shape: shape_dtype")
                                    .Input("minval: dtype")
                                    .Input("maxval: dtype")
                                    .Output("output: dtype")
                                    .Attr("dtype: type = int64")
                                    .Attr("shape_dtype: type = int64")
                                    .SetIsStateful()
                                    .SetShapeFn(draw_shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RngReadAndSkip")
                                    .Input("resource: resource")
                                    .Input("alg: int32")
                                    .Input("delta: uint64")
                                    .Output("value: int64")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape({kPhiloxStateWords}));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RngSkip")
                                    .Input("resource: resource")
                                    .Input("algorithm: int64")
                                    .Input("delta: int64")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext*) { return absl::OkStatus(); })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("NonDeterministicInts")
                                    .Input("shape: shape_dtype")
                                    .Output("output: dtype")
                                    .Attr("dtype: type = int64")
                                    .Attr("shape_dtype: type = int64")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) { return DrawShape(c, 0); })));
  for (const char* op : {"StatefulUniform", "StatefulStandardNormalV2", "StatefulTruncatedNormal",
                         "StatefulStandardNormal", "StatefulUniformFullInt", "StatefulUniformInt",
                         "RngReadAndSkip", "RngSkip", "NonDeterministicInts"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

void RegisterStatefulRandomKernels(KernelRegistry* k) {
  RegisterFloatDraws<float>(k, DT_FLOAT);
  RegisterFloatDraws<double>(k, DT_DOUBLE);
  RegisterFloatDraws<Half>(k, DT_HALF);
  RegisterFloatDraws<BFloat16>(k, DT_BFLOAT16);
  RegisterIntDraws<int32_t>(k, DT_INT32);
  RegisterIntDraws<int64_t>(k, DT_INT64);
  RegisterIntDraws<uint32_t>(k, ::tensorflow::DT_UINT32);
  RegisterIntDraws<uint64_t>(k, ::tensorflow::DT_UINT64);
  k->Register<RngReadAndSkipOp>(KernelDef("RngReadAndSkip", kDeviceTypeCpu));
  k->Register<RngSkipOp>(KernelDef("RngSkip", kDeviceTypeCpu));
}

namespace ops {

Output RngReadAndSkip(const Scope& s, Input resource, Input alg, Input delta,
                      std::source_location loc) {
  return s.Op("RngReadAndSkip", loc).Input(resource).Input(alg).Input(delta).Finalize1();
}

Node* RngSkip(const Scope& s, Input resource, Input algorithm, Input delta,
              std::source_location loc) {
  return s.Op("RngSkip", loc).Input(resource).Input(algorithm).Input(delta).Finalize();
}

namespace {

Output DrawNode(const Scope& s, const char* op, Input resource, Input shape, DataType dtype,
                int64_t algorithm, std::source_location loc) {
  return s.Op(op, loc).Input(resource).Input(algorithm).Input(shape).Attr("dtype", dtype)
      .Finalize1();
}

}  // namespace

Output StatefulUniform(const Scope& s, Input resource, Input shape, DataType dtype,
                       int64_t algorithm, std::source_location loc) {
  return DrawNode(s, "StatefulUniform", resource, shape, dtype, algorithm, loc);
}

Output StatefulStandardNormalV2(const Scope& s, Input resource, Input shape, DataType dtype,
                                int64_t algorithm, std::source_location loc) {
  return DrawNode(s, "StatefulStandardNormalV2", resource, shape, dtype, algorithm, loc);
}

Output StatefulTruncatedNormal(const Scope& s, Input resource, Input shape, DataType dtype,
                               int64_t algorithm, std::source_location loc) {
  return DrawNode(s, "StatefulTruncatedNormal", resource, shape, dtype, algorithm, loc);
}

Output StatefulUniformInt(const Scope& s, Input resource, Input shape, Input minval, Input maxval,
                          int64_t algorithm, std::source_location loc) {
  return s.Op("StatefulUniformInt", loc)
      .Input(resource)
      .Input(algorithm)
      .Input(shape)
      .Input(minval)
      .Input(maxval)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
