// Math ops: element-wise arithmetic and comparisons with NumPy broadcasting,
// unary functions (and the *Grad helper ops TensorFlow graphs contain),
// Select, AddN (and AccumulateNV2), Cast, reductions (Sum, Mean, Max, Min,
// Prod), ArgMax, ArgMin and MatMul — their definitions (TensorFlow names,
// args and attrs), CPU kernels and typed graph-building wrappers.
//
//   OpRegistry ops;  KernelRegistry kernels;
//   RETURN_IF_ERROR(RegisterMathOps(&ops));
//   RegisterMathKernels(&kernels);
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output h = ops::Tanh(s, ops::Add(s, ops::MatMul(s, x, w), b));
//   Output loss = ops::Mean(s, ops::Square(s, h), {0, 1});
//   Output n = ops::Sum(s, x, -1, {.keep_dims = true});
//   Output i = ops::ArgMax(s, logits, 1);                 // int64
//   Output f = ops::Cast(s, i, DT_FLOAT);
//
// Wrappers follow Scope's error model (graph/scope.h): a bad input records
// the first error in the scope and returns an invalid Output.
//
// Thread-safety: the register functions may be called concurrently on
// different registries; wrappers are thread-compatible like Scope. Kernels
// keep no per-step state. Ownership: registries own what is registered;
// wrappers' nodes belong to the scope's Graph.
#ifndef SLUICE_OPS_MATH_MATH_OPS_H_
#define SLUICE_OPS_MATH_MATH_OPS_H_

#include "base/source_location.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Definitions and shape functions of every op below. AlreadyExists when one
// is registered already.
absl::Status RegisterMathOps(OpRegistry* ops);
// CPU kernels: float and double for every op; int32/int64 where cheap.
void RegisterMathKernels(KernelRegistry* kernels);

namespace ops {

using Loc = std::source_location;

// Binary element-wise ops with NumPy broadcasting: z = x (op) y.
Output Add(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output AddV2(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output Sub(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output Mul(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output RealDiv(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
// Rounds toward negative infinity; an integer division by zero is an error.
Output FloorDiv(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
// x - floor(x / y) * y: the remainder takes y's sign.
Output FloorMod(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
// TensorFlow's legacy Div: x / y, integers rounded toward zero (as its kernel).
Output Div(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output TruncateDiv(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
// x / y, and 0 where y is 0.
Output DivNoNan(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
// x * y, and 0 where y is 0 (whatever x is, inf and NaN included).
Output MulNoNan(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
// The remainder of x / y with x's sign (C's % and fmod; TruncateMod is the
// same op under TensorFlow's other name). No gradient, as in TensorFlow.
Output Mod(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output TruncateMod(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output SquaredDifference(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
// x * log(y), x / y and x * log1p(y), each 0 where x is 0 (whatever y is).
Output Xlogy(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output Xdivy(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output Xlog1py(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
// The angle of the point (x, y) in (-pi, pi]: y first, as TensorFlow.
Output Atan2(const Scope& scope, Input y, Input x, Loc loc = Loc::current());
Output Maximum(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output Minimum(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output Pow(const Scope& scope, Input x, Input y, Loc loc = Loc::current());

// Comparisons with broadcasting; the output is bool.
Output Equal(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output NotEqual(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output Greater(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output GreaterEqual(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output Less(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output LessEqual(const Scope& scope, Input x, Input y, Loc loc = Loc::current());

// Unary element-wise ops: y = f(x).
Output Neg(const Scope& scope, Input x, Loc loc = Loc::current());
Output Square(const Scope& scope, Input x, Loc loc = Loc::current());
Output Sqrt(const Scope& scope, Input x, Loc loc = Loc::current());
Output Rsqrt(const Scope& scope, Input x, Loc loc = Loc::current());
Output Exp(const Scope& scope, Input x, Loc loc = Loc::current());
Output Log(const Scope& scope, Input x, Loc loc = Loc::current());
Output Tanh(const Scope& scope, Input x, Loc loc = Loc::current());
Output Sigmoid(const Scope& scope, Input x, Loc loc = Loc::current());
Output Reciprocal(const Scope& scope, Input x, Loc loc = Loc::current());
Output Inv(const Scope& scope, Input x, Loc loc = Loc::current());  // Reciprocal's old name
// A bool per element.
Output IsNan(const Scope& scope, Input x, Loc loc = Loc::current());
Output IsInf(const Scope& scope, Input x, Loc loc = Loc::current());
Output IsFinite(const Scope& scope, Input x, Loc loc = Loc::current());
// min(max(t, clip_value_min), clip_value_max); the bounds are scalars or t's shape.
Output ClipByValue(const Scope& scope, Input t, Input clip_value_min, Input clip_value_max,
                   Loc loc = Loc::current());
// Floor, Ceil and Round (halves to even) have no gradient, as in TensorFlow.
Output Floor(const Scope& scope, Input x, Loc loc = Loc::current());
Output Ceil(const Scope& scope, Input x, Loc loc = Loc::current());
Output Round(const Scope& scope, Input x, Loc loc = Loc::current());
Output Log1p(const Scope& scope, Input x, Loc loc = Loc::current());     // log(1 + x)
Output Expm1(const Scope& scope, Input x, Loc loc = Loc::current());     // e^x - 1
Output Softplus(const Scope& scope, Input x, Loc loc = Loc::current());  // log(1 + e^x)
Output Softsign(const Scope& scope, Input x, Loc loc = Loc::current());  // x / (1 + |x|)
Output Erf(const Scope& scope, Input x, Loc loc = Loc::current());
Output Erfc(const Scope& scope, Input x, Loc loc = Loc::current());
Output Sin(const Scope& scope, Input x, Loc loc = Loc::current());  // radians
Output Cos(const Scope& scope, Input x, Loc loc = Loc::current());
Output Tan(const Scope& scope, Input x, Loc loc = Loc::current());
Output Sinh(const Scope& scope, Input x, Loc loc = Loc::current());
Output Cosh(const Scope& scope, Input x, Loc loc = Loc::current());
Output Asin(const Scope& scope, Input x, Loc loc = Loc::current());   // in [-pi/2, pi/2]
Output Acos(const Scope& scope, Input x, Loc loc = Loc::current());   // in [0, pi]
Output Atan(const Scope& scope, Input x, Loc loc = Loc::current());
Output Asinh(const Scope& scope, Input x, Loc loc = Loc::current());
Output Acosh(const Scope& scope, Input x, Loc loc = Loc::current());  // x >= 1
Output Atanh(const Scope& scope, Input x, Loc loc = Loc::current());  // |x| < 1
// The nearest integer, halves to even; no gradient (as Round).
Output Rint(const Scope& scope, Input x, Loc loc = Loc::current());
Output Abs(const Scope& scope, Input x, Loc loc = Loc::current());
Output Sign(const Scope& scope, Input x, Loc loc = Loc::current());

// Gradient helpers, z from the forward output y and the incoming gradient dy:
// TanhGrad dy*(1-y^2), SigmoidGrad dy*y*(1-y), SqrtGrad dy*0.5/y,
// RsqrtGrad dy*(-0.5)*y^3, ReciprocalGrad -dy*y^2.
Output TanhGrad(const Scope& scope, Input y, Input dy, Loc loc = Loc::current());
Output SigmoidGrad(const Scope& scope, Input y, Input dy, Loc loc = Loc::current());
Output SqrtGrad(const Scope& scope, Input y, Input dy, Loc loc = Loc::current());
Output RsqrtGrad(const Scope& scope, Input y, Input dy, Loc loc = Loc::current());
Output ReciprocalGrad(const Scope& scope, Input y, Input dy, Loc loc = Loc::current());

// condition ? t : e. Select: condition is a scalar, has t's shape, or is a
// vector choosing whole rows of t. SelectV2: all three broadcast.
Output Select(const Scope& scope, Input condition, Input t, Input e, Loc loc = Loc::current());
Output SelectV2(const Scope& scope, Input condition, Input t, Input e,
                Loc loc = Loc::current());

// Sum of N >= 1 tensors of one shape and type.
Output AddN(const Scope& scope, absl::Span<const Output> inputs, Loc loc = Loc::current());
// tf.math.accumulate_n's form of AddN (the shape as an attr, from inputs[0]).
Output AccumulateNV2(const Scope& scope, absl::Span<const Output> inputs,
                     Loc loc = Loc::current());
// Element-wise on bool tensors (And, Or broadcast).
Output LogicalAnd(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output LogicalOr(const Scope& scope, Input x, Input y, Loc loc = Loc::current());
Output LogicalNot(const Scope& scope, Input x, Loc loc = Loc::current());
// start, start + delta, ... excluding limit; the dtype of start (Tidx).
Output Range(const Scope& scope, Input start, Input limit, Input delta, Loc loc = Loc::current());
// num evenly spaced values from start to stop, both included (stop exactly);
// num > 0. Not differentiable, as in TensorFlow.
Output LinSpace(const Scope& scope, Input start, Input stop, Input num, Loc loc = Loc::current());

struct CastAttrs {
  bool truncate = false;  // attr "Truncate"
};
Output Cast(const Scope& scope, Input x, DataType dst_type, const CastAttrs& attrs = {},
            Loc loc = Loc::current());

// Reductions over `axis` (int32/int64 scalar or vector; negative counts from
// the end; an empty vector reduces nothing).
struct ReduceAttrs {
  bool keep_dims = false;
};
Output Sum(const Scope& scope, Input input, Input axis, const ReduceAttrs& attrs = {},
           Loc loc = Loc::current());
Output Mean(const Scope& scope, Input input, Input axis, const ReduceAttrs& attrs = {},
            Loc loc = Loc::current());
Output Max(const Scope& scope, Input input, Input axis, const ReduceAttrs& attrs = {},
           Loc loc = Loc::current());
Output Min(const Scope& scope, Input input, Input axis, const ReduceAttrs& attrs = {},
           Loc loc = Loc::current());
// Logical and / or over the axes of a bool tensor.
Output All(const Scope& scope, Input input, Input axis, const ReduceAttrs& attrs = {},
           Loc loc = Loc::current());
Output Any(const Scope& scope, Input input, Input axis, const ReduceAttrs& attrs = {},
           Loc loc = Loc::current());
Output Prod(const Scope& scope, Input input, Input axis, const ReduceAttrs& attrs = {},
            Loc loc = Loc::current());

// Index of the largest (ArgMin: smallest) value along scalar `dimension`
// (first one on ties; NaNs lose to every number, all NaN gives 0).
struct ArgMaxAttrs {
  DataType output_type = DT_INT64;
};
Output ArgMax(const Scope& scope, Input input, Input dimension, const ArgMaxAttrs& attrs = {},
              Loc loc = Loc::current());
Output ArgMin(const Scope& scope, Input input, Input dimension, const ArgMaxAttrs& attrs = {},
              Loc loc = Loc::current());

struct MatMulAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
};
Output MatMul(const Scope& scope, Input a, Input b, const MatMulAttrs& attrs = {},
              Loc loc = Loc::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_MATH_OPS_H_
