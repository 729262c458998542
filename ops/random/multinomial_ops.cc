// Definitions, wrappers and CPU kernels of Multinomial and
// StatelessMultinomial.
#include "ops/random/multinomial_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/gpu/stateless_philox.h"
#include "ops/random/internal/philox_stream.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

absl::Status MultinomialShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 2));
  RETURN_IF_ERROR(c->WithRank(1, 0));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> n, c->InputAsInts(1));
  const TensorShape& logits = c->input(0);
  c->set_output(0, TensorShape({logits.unknown_rank() ? TensorShape::kUnknownDim : logits.dim(0),
                                n.has_value() && n->size() == 1 ? (*n)[0]
                                                                : TensorShape::kUnknownDim}));
  return absl::OkStatus();
}

// The checks of TensorFlow's MultinomialOp; the number of samples.
absl::StatusOr<int64_t> CheckInputs(const Tensor& logits, const Tensor& num_samples) {
  if (logits.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("logits should be a matrix, got shape ", logits.shape().DebugString()));
  }
  if (num_samples.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat("num_samples should be a scalar, got shape ",
                                                   num_samples.shape().DebugString()));
  }
  const int32_t n = num_samples.flat<int32_t>()[0];
  if (n < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_samples should be non-negative, got ", n));
  }
  if (logits.dim_size(1) <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_classes should be positive, got ", logits.dim_size(1)));
  }
  return n;
}

template <typename T, typename Out>
void Draw(const Tensor& logits, int64_t num_samples, const stateless::KeyCounter& kc,
          Tensor* out) {
  const int64_t batch = logits.dim_size(0);
  const int64_t classes = logits.dim_size(1);
  const T* l = logits.data<T>();
  Out* o = out->data<Out>();
  PhiloxStream words(kc);
  std::vector<double> cdf(classes);
  for (int64_t b = 0; b < batch; ++b) {
    const T* row = l + b * classes;
    T max = std::numeric_limits<T>::lowest();
    for (int64_t j = 0; j < classes; ++j) {
      if (std::isfinite(row[j])) max = std::max(max, row[j]);
    }
    const double max_logit = static_cast<double>(max);
    double total = 0;
    for (int64_t j = 0; j < classes; ++j) {
      if (std::isfinite(row[j])) total += std::exp(static_cast<double>(row[j]) - max_logit);
      cdf[j] = total;
    }
    for (int64_t j = 0; j < num_samples; ++j) {
      const double to_find = words.RandDouble() * total;
      o[b * num_samples + j] =
          static_cast<Out>(std::upper_bound(cdf.begin(), cdf.end(), to_find) - cdf.begin());
    }
  }
}

template <typename T, typename Out>
class StatelessMultinomialOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    ASSIGN_OR_RETURN(int64_t n, CheckInputs(logits, ctx->input(1)));
    const Tensor& seed = ctx->input(2);
    if (seed.dims() != 1 || seed.dim_size(0) != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("seed must have shape [2], not ", seed.shape().DebugString()));
    }
    int64_t s0, s1;
    if (seed.dtype() == DT_INT32) {
      s0 = seed.flat<int32_t>()[0];
      s1 = seed.flat<int32_t>()[1];
    } else {
      s0 = seed.flat<int64_t>()[0];
      s1 = seed.flat<int64_t>()[1];
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({logits.dim_size(0), n})));
    if (out->NumElements() > 0) {
      Draw<T, Out>(logits, n,
                   stateless::FromSeed(static_cast<uint64_t>(s0), static_cast<uint64_t>(s1)), out);
    }
    return absl::OkStatus();
  }
};

template <typename T, typename Out>
class MultinomialOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return generator_.Init(ctx); }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    ASSIGN_OR_RETURN(int64_t n, CheckInputs(logits, ctx->input(1)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({logits.dim_size(0), n})));
    if (out->NumElements() == 0) return absl::OkStatus();
    // What TensorFlow reserves per run: batch x ceil4(n) x 2 words' worth
    // of 128-bit blocks, times 256.
    const stateless::KeyCounter kc = generator_.ReserveSamples128(
        static_cast<uint64_t>(logits.dim_size(0)) * ((n + 3) / 4 * 4 * 2) * 256);
    Draw<T, Out>(logits, n, kc, out);
    return absl::OkStatus();
  }

 private:
  SeededPhilox generator_;
};

template <template <typename, typename> class Op, typename T>
void RegisterFor(KernelRegistry* k, const char* name) {
  auto def = [name](DataType out) {
    return KernelDef(name, kDeviceTypeCpu)
        .TypeConstraint("T", DataTypeToEnum<T>::value)
        .TypeConstraint("output_dtype", out);
  };
  k->Register<Op<T, int32_t>>(def(DT_INT32));
  k->Register<Op<T, int64_t>>(def(DT_INT64));
}

}  // namespace

absl::Status RegisterMultinomialOps(OpRegistry* ops) {
  constexpr char kTypes[] =
      "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
      "uint64}";
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Multinomial")
                                    .Input("logits: T")
                                    .Input("num_samples: int32")
                                    .Output("output: output_dtype")
                                    .Attr("seed: int = 0")
                                    .Attr("seed2: int = 0")
                                    .Attr(kTypes)
                                    .Attr("output_dtype: {int32, int64} = DT_INT64")
                                    .SetIsStateful()
                                    .SetShapeFn(MultinomialShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessMultinomial")
                                    .Input("logits: T")
                                    .Input("num_samples: int32")
                                    .Input("seed: Tseed")
                                    .Output("output: output_dtype")
                                    .Attr(kTypes)
                                    .Attr("Tseed: {int32, int64} = DT_INT64")
                                    .Attr("output_dtype: {int32, int64} = DT_INT64")
                                    .SetShapeFn(MultinomialShape)));
  RETURN_IF_ERROR(ops->SetNoGradient("Multinomial"));
  return ops->SetNoGradient("StatelessMultinomial");
}

void RegisterMultinomialKernels(KernelRegistry* k) {
  RegisterFor<MultinomialOp, float>(k, "Multinomial");
  RegisterFor<MultinomialOp, double>(k, "Multinomial");
  RegisterFor<StatelessMultinomialOp, float>(k, "StatelessMultinomial");
  RegisterFor<StatelessMultinomialOp, double>(k, "StatelessMultinomial");
}

namespace ops {

Output Multinomial(const Scope& s, Input logits, Input num_samples, int64_t seed, int64_t seed2,
                   DataType output_dtype, std::source_location loc) {
  return s.Op("Multinomial", loc)
      .Input(logits)
      .Input(num_samples)
      .Attr("seed", seed)
      .Attr("seed2", seed2)
      .Attr("output_dtype", output_dtype)
      .Finalize1();
}

Output StatelessMultinomial(const Scope& s, Input logits, Input num_samples, Input seed,
                            DataType output_dtype, std::source_location loc) {
  return s.Op("StatelessMultinomial", loc)
      .Input(logits)
      .Input(num_samples)
      .Input(seed)
      .Attr("output_dtype", output_dtype)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
