// Definitions, wrappers, CPU kernels and gradients of the gamma, Poisson
// and binomial draws (ops/random/distribution_ops.h).
#include "ops/random/distribution_ops.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/incomplete_functions.h"
#include "ops/math/math_ops.h"
#include "ops/random/internal/philox_stream.h"
#include "ops/random/internal/random_kernel_checks.h"
#include "ops/random/internal/samplers.h"
#include "ops/random/stateful_random_ops.h"
#include "ops/math/internal/broadcast.h"
#include "ops/random/random_kernels.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// ---- Shapes ------------------------------------------------------------------

// The seeded forms: shape ++ the parameter's shape.
absl::Status ShapeThenParam(InferenceContext* c) {
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, c->InputAsInts(0));
  const TensorShape& param = c->input(1);
  if (!dims.has_value() || param.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<int64_t> out = *dims;
  for (int i = 0; i < param.rank(); ++i) out.push_back(param.dim(i));
  c->set_output(0, TensorShape(out));
  return absl::OkStatus();
}

// The stateless and stateful forms: `shape` (input `shape_input`).
absl::Status ShapeOfInput(InferenceContext* c, int shape_input) {
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, c->InputAsInts(shape_input));
  c->set_output(0, dims.has_value() ? TensorShape(*dims) : TensorShape::Unknown());
  return absl::OkStatus();
}

// ---- Kernels -----------------------------------------------------------------

// A parameter tensor's values as doubles (exact for every allowed type).
std::vector<double> ParamsAsDoubles(const Tensor& t) {
  std::vector<double> v(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    switch (t.dtype()) {
      case DT_HALF:
        v[i] = t.data<Half>()[i].ToFloat();
        break;
      case DT_FLOAT:
        v[i] = t.data<float>()[i];
        break;
      case DT_DOUBLE:
        v[i] = t.data<double>()[i];
        break;
      case DT_INT32:
        v[i] = t.data<int32_t>()[i];
        break;
      default:
        v[i] = static_cast<double>(t.data<int64_t>()[i]);
        break;
    }
  }
  return v;
}

// A draw stored as Out, as TensorFlow stores it: through float for half;
// results below the smallest normal flushed to zero (TensorFlow's kernels
// run with denormals flushed); integers from NaN or inf (undefined in
// TensorFlow, which gives 0 on x86) as 0, beyond the type saturated.
template <typename Out>
Out FromDouble(double v) {
  if constexpr (std::is_integral_v<Out>) {
    if (!std::isfinite(v)) return Out(0);
    // Saturated: a count beyond the type (a huge binomial count) has no
    // defined conversion.
    if (v >= static_cast<double>(std::numeric_limits<Out>::max())) return std::numeric_limits<Out>::max();
    if (v <= static_cast<double>(std::numeric_limits<Out>::lowest())) return std::numeric_limits<Out>::lowest();
    return static_cast<Out>(v);
  } else {
    if (std::fabs(v) < std::numeric_limits<double>::min()) v = 0;
    if constexpr (std::is_same_v<Out, double>) {
      return v;
    } else {
      float f = static_cast<float>(v);
      if (std::fabs(f) < std::numeric_limits<float>::min()) f = 0;
      if constexpr (std::is_same_v<Out, Half>) {
        return Half::FromFloat(f);
      } else {
        return f;
      }
    }
  }
}

// The largest value Out holds, as a double.
template <typename Out>
double Highest() {
  if constexpr (std::is_same_v<Out, Half>) {
    return 65504.0;
  } else {
    return static_cast<double>(std::numeric_limits<Out>::max());
  }
}

// How the draws of `params` parameters lie in the output: `samples` per
// parameter, output s * params + p made from draw p * samples + s
// (TensorFlow's layout for every form).
struct Layout {
  int64_t samples = 0;  // per parameter
  int64_t params = 0;
};

// Fills `out` by `sample(parameter index, draw index)`.
template <typename Out, typename Sample>
void FillSamples(const Layout& layout, Out* out, Sample sample) {
  for (int64_t p = 0; p < layout.params; ++p) {
    for (int64_t s = 0; s < layout.samples; ++s) {
      out[s * layout.params + p] =
          FromDouble<Out>(sample(p, static_cast<uint64_t>(p * layout.samples + s)));
    }
  }
}

// The same for samplers that draw 256 Philox calls per output.
template <typename Out, typename Sample>
void FillFromDraws(const stateless::KeyCounter& kc, const Layout& layout, Out* out, Sample sample) {
  FillSamples<Out>(layout, out, [&](int64_t p, uint64_t i) {
    internal::SampleDraws draws(kc, i);
    return sample(p, draws);
  });
}

// The layout of a stateless or stateful draw of `shape` whose parameters'
// broadcast shape `params` must end it (TensorFlow's rule and text).
absl::StatusOr<Layout> TrailingLayout(absl::string_view op, const TensorShape& shape,
                                      const TensorShape& params) {
  const int skip = shape.rank() - params.rank();
  bool ends = skip >= 0;
  for (int i = 0; ends && i < params.rank(); ++i) ends = shape.dim(skip + i) == params.dim(i);
  if (!ends) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": Shape passed in must end with broadcasted shape. shape ",
                     shape.DebugString(), ", parameters ", params.DebugString()));
  }
  Layout layout;
  layout.params = params.num_elements();
  layout.samples = layout.params == 0 ? 0 : shape.num_elements() / layout.params;
  return layout;
}

template <typename T>
class RandomGammaOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return generator_.Init(ctx); }
  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(op, ctx->input(0)));
    const Tensor& alpha = ctx->input(1);
    const Layout layout{shape.num_elements(), alpha.NumElements()};
    for (int i = 0; i < alpha.dims(); ++i) shape.AddDim(alpha.dim_size(i));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (layout.samples == 0) return absl::OkStatus();
    if (layout.params == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": Input alpha should have non-zero element count, got: 0"));
    }
    const stateless::KeyCounter kc = generator_.ReserveSamples128(
        static_cast<uint64_t>(layout.samples * layout.params) * internal::SampleDraws::kCallsPerOutput);
    const std::vector<double> a = ParamsAsDoubles(alpha);
    FillFromDraws<T>(kc, layout, out->data<T>(), [&a](int64_t p, internal::SampleDraws& draws) {
      return internal::SampleGamma(a[p], draws);
    });
    return absl::OkStatus();
  }

 private:
  SeededPhilox generator_;
};

// StatelessRandomGammaV2 (shape, seed, alpha) and V3 (shape, key,
// counter, alg, alpha).
template <typename T, bool kV3>
class StatelessRandomGammaOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(op, ctx->input(0)));
    ASSIGN_OR_RETURN(stateless::KeyCounter kc, StatelessDrawInputs(ctx, kV3));
    const Tensor& alpha = ctx->input(kV3 ? 4 : 2);
    ASSIGN_OR_RETURN(Layout layout, TrailingLayout(op, shape, alpha.shape()));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const std::vector<double> a = ParamsAsDoubles(alpha);
    FillFromDraws<T>(kc, layout, out->data<T>(), [&a](int64_t p, internal::SampleDraws& draws) {
      return internal::SampleGamma(a[p], draws);
    });
    return absl::OkStatus();
  }
};

// RandomPoissonV2 (shape, rate) with seed attrs, and RandomPoisson, its
// first form (rate and output of one type).
template <typename Out>
class RandomPoissonOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return generator_.Init(ctx); }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(ctx->node().op(), ctx->input(0)));
    const Tensor& rate = ctx->input(1);
    const Layout layout{shape.num_elements(), rate.NumElements()};
    for (int i = 0; i < rate.dims(); ++i) shape.AddDim(rate.dim_size(i));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    const stateless::KeyCounter kc = generator_.ReserveSamples128(
        static_cast<uint64_t>(out->NumElements()) * internal::SampleDraws::kCallsPerOutput);
    FillPoisson<Out>(kc, layout, ParamsAsDoubles(rate), out);
    return absl::OkStatus();
  }

  template <typename T>
  static void FillPoisson(const stateless::KeyCounter& kc, const Layout& layout,
                          const std::vector<double>& rates, Tensor* out) {
    FillFromDraws<T>(kc, layout, out->data<T>(), [&rates](int64_t p, internal::SampleDraws& draws) {
      return internal::SamplePoisson(rates[p], Highest<T>(), draws);
    });
  }

 private:
  SeededPhilox generator_;
};

// StatelessRandomPoisson (shape, seed, lam).
template <typename Out>
class StatelessRandomPoissonOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(op, ctx->input(0)));
    ASSIGN_OR_RETURN(stateless::KeyCounter kc, StatelessDrawInputs(ctx, /*v2=*/false));
    const Tensor& lam = ctx->input(2);
    ASSIGN_OR_RETURN(Layout layout, TrailingLayout(op, shape, lam.shape()));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    RandomPoissonOp<Out>::template FillPoisson<Out>(kc, layout, ParamsAsDoubles(lam), out);
    return absl::OkStatus();
  }
};

// Binomial draws of `shape` from counts and probs broadcast to its
// trailing dimensions (the stateless and stateful forms).
struct BinomialDraw {
  Layout layout;
  std::vector<internal::BinomialPlan> plans;  // one per parameter
};

template <typename T>
std::vector<internal::BinomialPlan> PlanAll(const std::vector<double>& counts,
                                            const std::vector<double>& probs) {
  std::vector<internal::BinomialPlan> plans(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) plans[i] = internal::PlanBinomial<T>(counts[i], probs[i]);
  return plans;
}

absl::StatusOr<BinomialDraw> PlanBinomialDraw(absl::string_view op, const TensorShape& shape,
                                              const Tensor& counts, const Tensor& probs) {
  ASSIGN_OR_RETURN(auto plan, internal::MakeBroadcastPlan<2>({&counts.shape(), &probs.shape()}));
  BinomialDraw draw;
  ASSIGN_OR_RETURN(draw.layout, TrailingLayout(op, shape, plan.out_shape));
  const std::vector<double> c = ParamsAsDoubles(counts), p = ParamsAsDoubles(probs);
  const int64_t n = plan.out_shape.num_elements();
  std::vector<double> bc(n), bp(n);
  if (n > 0) {
    internal::ForEachRow(plan, 0, plan.rows(), [&](int64_t row, const auto& off) {
      for (int64_t j = 0; j < plan.inner(); ++j) {
        bc[row * plan.inner() + j] = c[off[0] + j * plan.inner_strides()[0]];
        bp[row * plan.inner() + j] = p[off[1] + j * plan.inner_strides()[1]];
      }
    });
  }
  switch (counts.dtype()) {
    case DT_HALF:
      draw.plans = PlanAll<Half>(bc, bp);
      break;
    case DT_FLOAT:
      draw.plans = PlanAll<float>(bc, bp);
      break;
    case DT_DOUBLE:
      draw.plans = PlanAll<double>(bc, bp);
      break;
    case DT_INT32:
      draw.plans = PlanAll<int32_t>(bc, bp);
      break;
    default:
      draw.plans = PlanAll<int64_t>(bc, bp);
      break;
  }
  return draw;
}

template <typename Out>
void FillBinomial(const stateless::KeyCounter& kc, const BinomialDraw& draw, Tensor* out) {
  FillSamples<Out>(draw.layout, out->data<Out>(), [&](int64_t p, uint64_t i) {
    return internal::SampleBinomial(draw.plans[p], kc, i);
  });
}

// StatelessRandomBinomial (shape, seed, counts, probs).
template <typename Out>
class StatelessRandomBinomialOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(op, ctx->input(0)));
    ASSIGN_OR_RETURN(stateless::KeyCounter kc, StatelessDrawInputs(ctx, /*v2=*/false));
    ASSIGN_OR_RETURN(BinomialDraw draw, PlanBinomialDraw(op, shape, ctx->input(2), ctx->input(3)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    FillBinomial<Out>(kc, draw, out);
    return absl::OkStatus();
  }
};

// StatefulRandomBinomial (resource, algorithm, shape, counts, probs): the
// state's key and counter, advanced as TensorFlow advances them (by 256
// times params x 200 x (samples + 3) / 4), Philox only.
template <typename Out>
class StatefulRandomBinomialOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    const Tensor& alg = ctx->input(1);
    if (alg.dims() != 0 || alg.scalar<int64_t>() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": Unsupported algorithm id: ", alg.NumElements() == 1 ? alg.data<int64_t>()[0] : -1,
          " (only Philox, 1)"));
    }
    ASSIGN_OR_RETURN(TensorShape shape, internal::RandomOutputShape(op, ctx->input(2)));
    ASSIGN_OR_RETURN(BinomialDraw draw, PlanBinomialDraw(op, shape, ctx->input(3), ctx->input(4)));
    const uint64_t advance =
        static_cast<uint64_t>(draw.layout.params * 2 * 100 * (draw.layout.samples + 3) / 4) *
        internal::SampleDraws::kCallsPerOutput;
    ASSIGN_OR_RETURN(stateless::KeyCounter kc, internal::ReadAndAdvanceRngState(ctx, advance));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    FillBinomial<Out>(kc, draw, out);
    return absl::OkStatus();
  }
};

// ---- Gradients ---------------------------------------------------------------

using GradResult = absl::StatusOr<std::vector<Output>>;

// d loss / d alpha: grad times d sample / d alpha, summed over the
// `sample_dims` leading dimensions alpha was drawn (or broadcast) along.
Output GammaAlphaGrad(const Scope& s, const Output& alpha, const Output& sample,
                      const Output& grad, const Output& sample_dims) {
  const Output ones = ops::Fill(s, ops::ExpandDims(s, sample_dims, ops::Const(s, 0)),
                                ops::Const(s, 1));
  const Output alpha_shape = ops::Shape(s, alpha);
  const Output broadcastable =
      ops::Reshape(s, alpha, ops::ConcatV2(s, {ones, alpha_shape}, ops::Const(s, 0)));
  const Output partial = ops::RandomGammaGrad(s, broadcastable, sample);
  return ops::Sum(s, ops::Mul(s, grad, partial), ops::Range(s, ops::Const(s, 0), sample_dims,
                                                             ops::Const(s, 1)));
}

GradResult RandomGammaGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output shape = internal::InputOf(node, 0);
  Output ga = GammaAlphaGrad(s, internal::InputOf(node, 1), internal::OutputOf(node), g[0],
                             ops::Size(s, shape));
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{Output(), ga};
}

// Stateless: the sample dimensions are those of `shape` before alpha's.
GradResult StatelessGammaGrad(const Scope& s, const Node& node, absl::Span<const Output> g,
                              int alpha_input) {
  const Output alpha = internal::InputOf(node, alpha_input);
  const Output sample = internal::OutputOf(node);
  const Output sample_dims = ops::Sub(s, ops::Rank(s, sample), ops::Rank(s, alpha));
  Output ga = GammaAlphaGrad(s, alpha, sample, g[0], sample_dims);
  RETURN_IF_ERROR(s.status());
  std::vector<Output> out(alpha_input + 1);
  out[alpha_input] = ga;
  return out;
}

}  // namespace

absl::Status RegisterDistributionOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RandomGamma")
                                    .Input("shape: S")
                                    .Input("alpha: T")
                                    .Output("output: T")
                                    .Attr("seed: int = 0")
                                    .Attr("seed2: int = 0")
                                    .Attr("S: {int32, int64}")
                                    .Attr("T: {half, float, double}")
                                    .SetIsStateful()
                                    .SetShapeFn(ShapeThenParam)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomGammaV2")
                                    .Input("shape: T")
                                    .Input("seed: Tseed")
                                    .Input("alpha: dtype")
                                    .Output("output: dtype")
                                    .Attr("dtype: {half, float, double}")
                                    .Attr("T: {int32, int64}")
                                    .Attr("Tseed: {int32, int64} = DT_INT64")
                                    .SetShapeFn([](InferenceContext* c) { return ShapeOfInput(c, 0); })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomGammaV3")
                                    .Input("shape: shape_dtype")
                                    .Input("key: uint64")
                                    .Input("counter: uint64")
                                    .Input("alg: int32")
                                    .Input("alpha: dtype")
                                    .Output("output: dtype")
                                    .Attr("dtype: {half, float, double}")
                                    .Attr("shape_dtype: {int32, int64} = DT_INT32")
                                    .SetShapeFn([](InferenceContext* c) { return ShapeOfInput(c, 0); })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RandomPoisson")
                                    .Input("shape: S")
                                    .Input("rate: dtype")
                                    .Output("output: dtype")
                                    .Attr("seed: int = 0")
                                    .Attr("seed2: int = 0")
                                    .Attr("S: {int32, int64}")
                                    .Attr("dtype: {half, float, double}")
                                    .SetIsStateful()
                                    .SetShapeFn(ShapeThenParam)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RandomPoissonV2")
                                    .Input("shape: S")
                                    .Input("rate: R")
                                    .Output("output: dtype")
                                    .Attr("seed: int = 0")
                                    .Attr("seed2: int = 0")
                                    .Attr("S: {int32, int64}")
                                    .Attr("R: {half, float, double, int32, int64} = DT_DOUBLE")
                                    .Attr("dtype: {half, float, double, int32, int64} = DT_INT64")
                                    .SetIsStateful()
                                    .SetShapeFn(ShapeThenParam)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomPoisson")
                                    .Input("shape: T")
                                    .Input("seed: Tseed")
                                    .Input("lam: Rtype")
                                    .Output("output: dtype")
                                    .Attr("Rtype: {half, float, double, int32, int64}")
                                    .Attr("dtype: {half, float, double, int32, int64}")
                                    .Attr("T: {int32, int64}")
                                    .Attr("Tseed: {int32, int64} = DT_INT64")
                                    .SetShapeFn([](InferenceContext* c) { return ShapeOfInput(c, 0); })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomBinomial")
                                    .Input("shape: S")
                                    .Input("seed: Tseed")
                                    .Input("counts: T")
                                    .Input("probs: T")
                                    .Output("output: dtype")
                                    .Attr("S: {int32, int64}")
                                    .Attr("Tseed: {int32, int64} = DT_INT64")
                                    .Attr("T: {half, float, double, int32, int64} = DT_DOUBLE")
                                    .Attr("dtype: {half, float, double, int32, int64} = DT_INT64")
                                    .SetShapeFn([](InferenceContext* c) { return ShapeOfInput(c, 0); })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatefulRandomBinomial")
                                    .Input("resource: resource")
                                    .Input("algorithm: int64")
                                    .Input("shape: S")
                                    .Input("counts: T")
                                    .Input("probs: T")
                                    .Output("output: dtype")
                                    .Attr("S: {int32, int64}")
                                    .Attr("T: {half, float, double, int32, int64} = DT_DOUBLE")
                                    .Attr("dtype: {half, float, double, int32, int64} = DT_INT64")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) { return ShapeOfInput(c, 2); })));
  for (const char* op : {"RandomPoisson", "RandomPoissonV2", "StatelessRandomPoisson",
                         "StatelessRandomBinomial", "StatefulRandomBinomial"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  RETURN_IF_ERROR(ops->SetGradient("RandomGamma", RandomGammaGrad));
  RETURN_IF_ERROR(ops->SetGradient(
      "StatelessRandomGammaV2",
      [](const Scope& s, const Node& n, absl::Span<const Output> g) { return StatelessGammaGrad(s, n, g, 2); }));
  return ops->SetGradient("StatelessRandomGammaV3", [](const Scope& s, const Node& n,
                                                       absl::Span<const Output> g) {
    return StatelessGammaGrad(s, n, g, 4);
  });
}

void RegisterDistributionKernels(KernelRegistry* k) {
  auto gamma = [k]<typename T>() {
    constexpr DataType kType = DataTypeToEnum<T>::value;
    k->Register<RandomGammaOp<T>>(
        KernelDef("RandomGamma", kDeviceTypeCpu).TypeConstraint("T", kType).HostMemory("shape"));
    k->Register<StatelessRandomGammaOp<T, false>>(
        KernelDef("StatelessRandomGammaV2", kDeviceTypeCpu).TypeConstraint("dtype", kType));
    k->Register<StatelessRandomGammaOp<T, true>>(
        KernelDef("StatelessRandomGammaV3", kDeviceTypeCpu).TypeConstraint("dtype", kType));
  };
  gamma.template operator()<Half>();
  gamma.template operator()<float>();
  gamma.template operator()<double>();
  // Poisson and binomial: kernels by output type; the parameters' type is
  // read at run time.
  auto counts = [k]<typename Out>() {
    constexpr DataType kType = DataTypeToEnum<Out>::value;
    k->Register<RandomPoissonOp<Out>>(
        KernelDef("RandomPoissonV2", kDeviceTypeCpu).TypeConstraint("dtype", kType).HostMemory("shape"));
    k->Register<StatelessRandomPoissonOp<Out>>(
        KernelDef("StatelessRandomPoisson", kDeviceTypeCpu).TypeConstraint("dtype", kType));
    k->Register<StatelessRandomBinomialOp<Out>>(
        KernelDef("StatelessRandomBinomial", kDeviceTypeCpu).TypeConstraint("dtype", kType));
    k->Register<StatefulRandomBinomialOp<Out>>(
        KernelDef("StatefulRandomBinomial", kDeviceTypeCpu).TypeConstraint("dtype", kType));
    if constexpr (!std::is_integral_v<Out>) {
      k->Register<RandomPoissonOp<Out>>(
          KernelDef("RandomPoisson", kDeviceTypeCpu).TypeConstraint("dtype", kType).HostMemory("shape"));
    }
  };
  counts.template operator()<Half>();
  counts.template operator()<float>();
  counts.template operator()<double>();
  counts.template operator()<int32_t>();
  counts.template operator()<int64_t>();
}

namespace ops {

Output RandomGamma(const Scope& s, Input shape, Input alpha, const RandomAttrs& attrs,
                   std::source_location loc) {
  return s.Op("RandomGamma", loc)
      .Input(shape)
      .Input(alpha)
      .Attr("seed", attrs.seed)
      .Attr("seed2", attrs.seed2)
      .Finalize1();
}

Output StatelessRandomGammaV2(const Scope& s, Input shape, Input seed, Input alpha,
                              std::source_location loc) {
  return s.Op("StatelessRandomGammaV2", loc).Input(shape).Input(seed).Input(alpha).Finalize1();
}

Output RandomPoissonV2(const Scope& s, Input shape, Input rate, DataType dtype,
                       const RandomAttrs& attrs, std::source_location loc) {
  return s.Op("RandomPoissonV2", loc)
      .Input(shape)
      .Input(rate)
      .Attr("dtype", dtype)
      .Attr("seed", attrs.seed)
      .Attr("seed2", attrs.seed2)
      .Finalize1();
}

Output StatelessRandomPoisson(const Scope& s, Input shape, Input seed, Input lam, DataType dtype,
                              std::source_location loc) {
  return s.Op("StatelessRandomPoisson", loc)
      .Input(shape)
      .Input(seed)
      .Input(lam)
      .Attr("dtype", dtype)
      .Finalize1();
}

Output StatelessRandomBinomial(const Scope& s, Input shape, Input seed, Input counts, Input probs,
                               DataType dtype, std::source_location loc) {
  return s.Op("StatelessRandomBinomial", loc)
      .Input(shape)
      .Input(seed)
      .Input(counts)
      .Input(probs)
      .Attr("dtype", dtype)
      .Finalize1();
}

Output StatefulRandomBinomial(const Scope& s, Input resource, Input shape, Input counts,
                              Input probs, DataType dtype, int64_t algorithm,
                              std::source_location loc) {
  return s.Op("StatefulRandomBinomial", loc)
      .Input(resource)
      .Input(ops::Const(s, algorithm))
      .Input(shape)
      .Input(counts)
      .Input(probs)
      .Attr("dtype", dtype)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
