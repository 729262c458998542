// Definitions, wrappers, CPU kernels and gradients of Dawsn, FresnelCos,
// FresnelSin and Spence (ops/math/special_integrals.h).
#include "ops/math/special_integrals.h"

#include <cmath>
#include <vector>

#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/internal/cpu_cwise_loops.h"
#include "ops/math/internal/special_integrals.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

template <typename T> struct DawsnF {
  static T Apply(T x) { return static_cast<T>(internal::Dawson(x)); }
};
template <typename T> struct FresnelCosF {
  static T Apply(T x) {
    double c, s;
    internal::Fresnel(x, &c, &s);
    return static_cast<T>(c);
  }
};
template <typename T> struct FresnelSinF {
  static T Apply(T x) {
    double c, s;
    internal::Fresnel(x, &c, &s);
    return static_cast<T>(s);
  }
};
template <typename T> struct SpenceF {
  static T Apply(T x) { return static_cast<T>(internal::Spence(x)); }
};

using internal::InputOf;
using internal::OutputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

Output Scalar(const Scope& s, double v, const Output& like) { return ops::Cast(s, ops::Const(s, v), like.dtype()); }

GradResult Times(const Scope& s, const Output& grad, const Output& derivative) {
  Output g = ops::Mul(s, grad, derivative);
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{g};
}

// pi/2 x^2.
Output HalfPiSquare(const Scope& s, const Output& x) {
  return ops::Mul(s, Scalar(s, 1.5707963267948966, x), ops::Square(s, x));
}

}  // namespace

absl::Status RegisterSpecialIntegralOps(OpRegistry* ops) {
  for (const char* name : {"Dawsn", "FresnelCos", "FresnelSin", "Spence"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("x: T")
                                      .Output("y: T")
                                      .Attr("T: {bfloat16, half, float, double}")
                                      .SetShapeFn([](InferenceContext* c) {
                                        c->set_output(0, c->input(0));
                                        return absl::OkStatus();
                                      })));
  }
  using Span = absl::Span<const Output>;
  RETURN_IF_ERROR(ops->SetGradient("Dawsn", [](const Scope& s, const Node& n, Span g) {
    const Output x = InputOf(n, 0);
    return Times(s, g[0],
                 ops::Sub(s, ops::OnesLike(s, x), ops::Mul(s, Scalar(s, 2, x), ops::Mul(s, x, OutputOf(n)))));
  }));
  RETURN_IF_ERROR(ops->SetGradient("FresnelCos", [](const Scope& s, const Node& n, Span g) {
    return Times(s, g[0], ops::Cos(s, HalfPiSquare(s, InputOf(n, 0))));
  }));
  RETURN_IF_ERROR(ops->SetGradient("FresnelSin", [](const Scope& s, const Node& n, Span g) {
    return Times(s, g[0], ops::Sin(s, HalfPiSquare(s, InputOf(n, 0))));
  }));
  return ops->SetGradient("Spence", [](const Scope& s, const Node& n, Span g) {
    const Output x = InputOf(n, 0);
    const Output one = ops::OnesLike(s, x);
    const Output partial = ops::Div(s, ops::Log(s, x), ops::Sub(s, one, x));
    return Times(s, g[0], ops::SelectV2(s, ops::Equal(s, x, one), ops::Neg(s, one), partial));
  });
}

void RegisterSpecialIntegralKernels(KernelRegistry* k) {
  internal::RegisterCpuUnary<DawsnF, float, double>(k, "Dawsn");
  internal::RegisterCpuUnary<FresnelCosF, float, double>(k, "FresnelCos");
  internal::RegisterCpuUnary<FresnelSinF, float, double>(k, "FresnelSin");
  internal::RegisterCpuUnary<SpenceF, float, double>(k, "Spence");
}

namespace ops {

Output Dawsn(const Scope& s, Input x, std::source_location loc) { return s.Op("Dawsn", loc).Input(x).Finalize1(); }
Output FresnelCos(const Scope& s, Input x, std::source_location loc) {
  return s.Op("FresnelCos", loc).Input(x).Finalize1();
}
Output FresnelSin(const Scope& s, Input x, std::source_location loc) {
  return s.Op("FresnelSin", loc).Input(x).Finalize1();
}
Output Spence(const Scope& s, Input x, std::source_location loc) { return s.Op("Spence", loc).Input(x).Finalize1(); }

}  // namespace ops
}  // namespace sluice
