// Gradient functions of the math ops (TensorFlow's formulas).
//
// Binary ops sum each operand's gradient over the dimensions it was broadcast
// along (internal/broadcast_grad.h). Reductions broadcast the gradient back
// with Reshape + Tile, with constant shapes when they are known.
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"
#include "ops/math/internal/broadcast_grad.h"
#include "ops/math/math_gradients.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

using GradResult = absl::StatusOr<std::vector<Output>>;

using internal::InputOf;
using internal::IntList;
using internal::OutputOf;
using internal::ReduceToOperand;

// A scalar constant of a floating dtype.
Input Scalar(double value, DataType dtype) {
  ::tensorflow::TensorProto proto;
  proto.set_dtype(dtype);
  proto.mutable_tensor_shape();
  if (dtype == DT_DOUBLE) {
    proto.add_double_val(value);
  } else {
    proto.add_float_val(static_cast<float>(value));
  }
  return Input(std::move(proto));
}

// Array-family ops, built by name.
Output ShapeOf(const Scope& s, const Output& x) { return s.Op("Shape").Input(x).Finalize1(); }
Output Reshape(const Scope& s, const Output& x, const Input& shape) {
  return s.Op("Reshape").Input(x).Input(shape).Finalize1();
}
Output Tile(const Scope& s, const Output& x, const Input& multiples) {
  return s.Op("Tile").Input(x).Input(multiples).Finalize1();
}
Output ZerosLike(const Scope& s, const Output& x) {
  return s.Op("ZerosLike").Input(x).Finalize1();
}

// Both operands' gradients of a broadcasting binary op.
GradResult BinaryResult(const Scope& s, const Node& node, const Output& gx, const Output& gy) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  std::vector<Output> out = {ReduceToOperand(s, gx, x, {y}), ReduceToOperand(s, gy, y, {x})};
  RETURN_IF_ERROR(s.status());
  return out;
}

GradResult AddGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return BinaryResult(s, node, g[0], g[0]);
}

GradResult SubGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  std::vector<Output> out = {ReduceToOperand(s, g[0], x, {y}),
                             ops::Neg(s, ReduceToOperand(s, g[0], y, {x}))};
  RETURN_IF_ERROR(s.status());
  return out;
}

GradResult MulGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  return BinaryResult(s, node, ops::Mul(s, g[0], y), ops::Mul(s, x, g[0]));
}

// x / y with `div` (RealDiv, or DivNoNan, whose gradient divides the same
// way): d/dx = 1/y, d/dy = -x/y^2.
GradResult DivisionGrad(const Scope& s, const Node& node, absl::Span<const Output> g,
                        Output (*div)(const Scope&, Input, Input, std::source_location)) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  const std::source_location here = std::source_location::current();
  Output gx = div(s, g[0], y, here);
  Output gy = ops::Mul(s, g[0], div(s, div(s, ops::Neg(s, x), y, here), y, here));
  return BinaryResult(s, node, gx, gy);
}

GradResult RealDivGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return DivisionGrad(s, node, g, ops::RealDiv);
}

GradResult PowGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  const Output z = OutputOf(node);
  const DataType t = x.dtype();
  // d/dx = y * x^(y-1);  d/dy = z * log(x), taken as 0 where x <= 0.
  Output gx = ops::Mul(s, g[0], ops::Mul(s, y, ops::Pow(s, x, ops::Sub(s, y, Scalar(1, t)))));
  Output positive = ops::Greater(s, x, Scalar(0, t));
  Output safe_x = ops::SelectV2(s, positive, x, Scalar(1, t));
  Output log_x = ops::SelectV2(s, positive, ops::Log(s, safe_x), Scalar(0, t));
  Output gy = ops::Mul(s, g[0], ops::Mul(s, z, log_x));
  return BinaryResult(s, node, gx, gy);
}

GradResult SquaredDifferenceGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  Output gx = ops::Mul(s, g[0], ops::Mul(s, ops::Sub(s, x, y), Scalar(2, x.dtype())));
  return BinaryResult(s, node, gx, ops::Neg(s, gx));
}

// x mod y = x - floor(x / y) * y.
GradResult FloorModGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  return BinaryResult(s, node, g[0], ops::Mul(s, g[0], ops::Neg(s, ops::FloorDiv(s, x, y))));
}

// MulNoNan: each operand's gradient through MulNoNan too (TensorFlow's).
GradResult MulNoNanGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  return BinaryResult(s, node, ops::MulNoNan(s, g[0], y), ops::MulNoNan(s, x, g[0]));
}
GradResult DivNoNanGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return DivisionGrad(s, node, g, ops::DivNoNan);
}

// The gradient goes to t where it is inside the bounds, else to the bound
// that clipped it (TensorFlow's _ClipByValueGrad).
GradResult ClipByValueGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output t = InputOf(node, 0);
  const Output lo = InputOf(node, 1);
  const Output hi = InputOf(node, 2);
  const Output zeros = ZerosLike(s, g[0]);
  Output below = ops::Less(s, t, lo);
  Output above = ops::Greater(s, t, hi);
  std::vector<Output> out = {
      ops::SelectV2(s, ops::LogicalOr(s, below, above), zeros, g[0]),
      ReduceToOperand(s, ops::SelectV2(s, below, g[0], zeros), lo, {t}),
      ReduceToOperand(s, ops::SelectV2(s, above, g[0], zeros), hi, {t})};
  RETURN_IF_ERROR(s.status());
  return out;
}

// Maximum/Minimum: the gradient goes to x where x wins (ties included).
GradResult MaxMinGrad(const Scope& s, const Node& node, absl::Span<const Output> g,
                      bool is_max) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  const Input zero = Scalar(0, x.dtype());
  Output xmask = is_max ? ops::GreaterEqual(s, x, y) : ops::LessEqual(s, x, y);
  return BinaryResult(s, node, ops::SelectV2(s, xmask, g[0], zero),
                      ops::SelectV2(s, xmask, zero, g[0]));
}


// ---------------------------------------------------------------------------
// Unary ops.

GradResult One(const Scope& s, Output out) {
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{out};
}

GradResult NegGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Neg(s, g[0]));
}
GradResult SquareGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  return One(s, ops::Mul(s, g[0], ops::Mul(s, x, Scalar(2, x.dtype()))));
}
GradResult SqrtGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::SqrtGrad(s, OutputOf(node), g[0]));
}
GradResult RsqrtGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::RsqrtGrad(s, OutputOf(node), g[0]));
}
GradResult ExpGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Mul(s, g[0], OutputOf(node)));
}
GradResult LogGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Mul(s, g[0], ops::Reciprocal(s, InputOf(node, 0))));
}
GradResult TanhGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::TanhGrad(s, OutputOf(node), g[0]));
}
GradResult SigmoidGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::SigmoidGrad(s, OutputOf(node), g[0]));
}
GradResult Log1pGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  return One(s, ops::RealDiv(s, g[0], ops::Add(s, x, Scalar(1, x.dtype()))));
}
GradResult Expm1Grad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Mul(s, g[0], ops::Exp(s, InputOf(node, 0))));
}
// d erf(x)/dx = 2/sqrt(pi) e^(-x^2); erfc is its negation.
Output ErfSlope(const Scope& s, const Output& x, double sign) {
  return ops::Mul(s, ops::Exp(s, ops::Neg(s, ops::Square(s, x))),
                  Scalar(sign * 1.1283791670955126, x.dtype()));
}
GradResult ErfGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Mul(s, g[0], ErfSlope(s, InputOf(node, 0), 1)));
}
GradResult ErfcGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Mul(s, g[0], ErfSlope(s, InputOf(node, 0), -1)));
}
// d sin(x) = cos(x), d cos(x) = -sin(x).
GradResult SinGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Mul(s, g[0], ops::Cos(s, InputOf(node, 0))));
}
GradResult CosGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Neg(s, ops::Mul(s, g[0], ops::Sin(s, InputOf(node, 0)))));
}
// The other trigonometric and hyperbolic functions (TensorFlow's gradients).
GradResult TanGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  // 1 / cos(x)^2
  return One(s, ops::Mul(s, g[0], ops::Square(s, ops::Reciprocal(s, ops::Cos(s, InputOf(node, 0))))));
}
GradResult SinhGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Mul(s, g[0], ops::Cosh(s, InputOf(node, 0))));
}
GradResult CoshGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Mul(s, g[0], ops::Sinh(s, InputOf(node, 0))));
}
// 1 - x^2 (Asin, Acos, Atanh) and 1 + x^2 (Atan).
Output OneMinusSquare(const Scope& s, const Output& x, double sign) {
  return ops::Add(s, Scalar(1, x.dtype()), ops::Mul(s, ops::Square(s, x), Scalar(sign, x.dtype())));
}
GradResult AsinGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Mul(s, g[0], ops::Rsqrt(s, OneMinusSquare(s, InputOf(node, 0), -1))));
}
GradResult AcosGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Neg(s, ops::Mul(s, g[0], ops::Rsqrt(s, OneMinusSquare(s, InputOf(node, 0), -1)))));
}
GradResult AtanGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::RealDiv(s, g[0], OneMinusSquare(s, InputOf(node, 0), 1)));
}
// From the output y: d asinh = 1 / cosh(y), d acosh = 1 / sinh(y).
GradResult AsinhGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::RealDiv(s, g[0], ops::Cosh(s, OutputOf(node))));
}
GradResult AcoshGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::RealDiv(s, g[0], ops::Sinh(s, OutputOf(node))));
}
GradResult AtanhGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::RealDiv(s, g[0], OneMinusSquare(s, InputOf(node, 0), -1)));
}
// atan2(y, x): d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2). Input 0 is y.
GradResult Atan2Grad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output y = InputOf(node, 0);
  const Output x = InputOf(node, 1);
  const Output scale = ops::RealDiv(s, g[0], ops::Add(s, ops::Square(s, x), ops::Square(s, y)));
  return BinaryResult(s, node, ops::Mul(s, x, scale), ops::Neg(s, ops::Mul(s, y, scale)));
}
// Xlogy, Xdivy, Xlog1py: no gradient to x where x is 0 (TensorFlow's).
Output NotZero(const Scope& s, const Output& x) {
  return ops::Cast(s, ops::NotEqual(s, x, Scalar(0, x.dtype())), x.dtype());
}
GradResult XlogyGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  return BinaryResult(s, node, ops::Mul(s, g[0], ops::Xlogy(s, NotZero(s, x), y)),
                      ops::Mul(s, g[0], ops::Xdivy(s, x, y)));
}
GradResult XdivyGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  return BinaryResult(s, node, ops::Mul(s, g[0], ops::Xdivy(s, NotZero(s, x), y)),
                      ops::Mul(s, g[0], ops::Xdivy(s, ops::Neg(s, x), ops::Square(s, y))));
}
GradResult Xlog1pyGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  return BinaryResult(s, node, ops::Mul(s, g[0], ops::Xlog1py(s, NotZero(s, x), y)),
                      ops::Mul(s, g[0], ops::Xdivy(s, x, ops::Add(s, y, Scalar(1, y.dtype())))));
}
GradResult ReciprocalGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::ReciprocalGrad(s, OutputOf(node), g[0]));
}
GradResult AbsGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return One(s, ops::Mul(s, g[0], ops::Sign(s, InputOf(node, 0))));
}

// Second-order helpers: z = f(y, dy); returns {dz/dy * g, dz/ddy * g}.
GradResult Two(const Scope& s, Output gy, Output gdy) {
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{gy, gdy};
}
GradResult TanhGradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output y = InputOf(node, 0), dy = InputOf(node, 1);
  Output gy = ops::Mul(s, ops::Mul(s, g[0], dy), ops::Mul(s, y, Scalar(-2, y.dtype())));
  return Two(s, gy, ops::TanhGrad(s, y, g[0]));
}
GradResult SigmoidGradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output y = InputOf(node, 0), dy = InputOf(node, 1);
  Output one_minus_2y = ops::Sub(s, Scalar(1, y.dtype()), ops::Mul(s, y, Scalar(2, y.dtype())));
  Output gy = ops::Mul(s, ops::Mul(s, g[0], dy), one_minus_2y);
  return Two(s, gy, ops::SigmoidGrad(s, y, g[0]));
}
GradResult SqrtGradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output y = InputOf(node, 0);
  // z = 0.5 dy / y:  dz/dy = -z / y.
  Output gy = ops::Neg(s, ops::RealDiv(s, ops::Mul(s, g[0], OutputOf(node)), y));
  return Two(s, gy, ops::SqrtGrad(s, y, g[0]));
}
GradResult RsqrtGradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output y = InputOf(node, 0), dy = InputOf(node, 1);
  // z = -0.5 dy y^3:  dz/dy = -1.5 dy y^2.
  Output gy = ops::Mul(s, ops::Mul(s, g[0], dy),
                       ops::Mul(s, ops::Square(s, y), Scalar(-1.5, y.dtype())));
  return Two(s, gy, ops::RsqrtGrad(s, y, g[0]));
}
GradResult ReciprocalGradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output y = InputOf(node, 0), dy = InputOf(node, 1);
  // z = -dy y^2:  dz/dy = -2 dy y.
  Output gy = ops::Mul(s, ops::Mul(s, g[0], dy), ops::Mul(s, y, Scalar(-2, y.dtype())));
  return Two(s, gy, ops::ReciprocalGrad(s, y, g[0]));
}

// ---------------------------------------------------------------------------
// Select, AddN, Cast.

GradResult SelectGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output c = InputOf(node, 0);
  Output zeros = ZerosLike(s, g[0]);
  std::vector<Output> out = {Output(), ops::Select(s, c, g[0], zeros),
                             ops::Select(s, c, zeros, g[0])};
  RETURN_IF_ERROR(s.status());
  return out;
}

GradResult SelectV2Grad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output c = InputOf(node, 0), t = InputOf(node, 1), e = InputOf(node, 2);
  const Input zero = Scalar(0, t.dtype());
  Output gt = ops::SelectV2(s, c, g[0], zero);
  Output ge = ops::SelectV2(s, c, zero, g[0]);
  std::vector<Output> out = {Output(), ReduceToOperand(s, gt, t, {c, e}),
                             ReduceToOperand(s, ge, e, {c, t})};
  RETURN_IF_ERROR(s.status());
  return out;
}

GradResult AddNGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return std::vector<Output>(node.num_inputs(), g[0]);
}

GradResult CastGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(DataType src, node.GetAttr<DataType>("SrcT"));
  ASSIGN_OR_RETURN(DataType dst, node.GetAttr<DataType>("DstT"));
  if (!IsFloatingType(src) || !IsFloatingType(dst)) return std::vector<Output>{Output()};
  return One(s, ops::Cast(s, g[0], src));
}

// ---------------------------------------------------------------------------
// Reductions.

// What a reduction node reduces, as far as graph-building time knows.
struct Reduction {
  Output x;
  Output axes;
  Output y;
  bool keep_dims = false;
  // Set when x's rank and the axes are known: reduced[i] for each dim of x.
  std::optional<std::vector<bool>> reduced;
};

absl::StatusOr<Reduction> ReadReduction(const Node& node) {
  Reduction r;
  r.x = InputOf(node, 0);
  r.axes = InputOf(node, 1);
  r.y = OutputOf(node);
  ASSIGN_OR_RETURN(r.keep_dims, node.GetAttr<bool>("keep_dims"));
  const TensorShape& xs = r.x.shape();
  if (xs.unknown_rank() || r.axes.node->op() != "Const") return r;
  auto it = r.axes.node->attrs().find("value");
  if (it == r.axes.node->attrs().end()) return r;
  ASSIGN_OR_RETURN(std::vector<int64_t> axes, TensorProtoToInts(it->second.tensor()));
  std::vector<bool> reduced(xs.rank(), false);
  for (int64_t a : axes) {
    if (a < -xs.rank() || a >= xs.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("reduction axis ", a,
                                                     " is out of range for input of shape ",
                                                     xs.DebugString()));
    }
    reduced[a < 0 ? a + xs.rank() : a] = true;
  }
  r.reduced = std::move(reduced);
  return r;
}

// Int32 vector constant: `on` where reduced, `off` elsewhere.
Input ReducedMask(const Reduction& r, int64_t on, int64_t off) {
  std::vector<int64_t> mask;
  for (bool red : *r.reduced) mask.push_back(red ? on : off);
  return IntList(mask);
}

// The shape of the reduction's output with keep_dims: reduced dims become 1.
Input KeptShape(const Scope& s, const Reduction& r) {
  const TensorShape& xs = r.x.shape();
  if (r.reduced.has_value() && xs.IsFullyDefined()) {
    std::vector<int64_t> kept = xs.dims();
    for (size_t i = 0; i < kept.size(); ++i) kept[i] = (*r.reduced)[i] ? 1 : kept[i];
    return IntList(kept);
  }
  if (r.reduced.has_value()) {
    return ops::Add(s, ops::Mul(s, ShapeOf(s, r.x), ReducedMask(r, 0, 1)),
                    ReducedMask(r, 1, 0));
  }
  return ShapeOf(s, ops::Sum(s, r.x, r.axes, {.keep_dims = true}));
}

// Broadcasts `g` (shaped like the reduction's output) to x's shape.
Output BroadcastToInput(const Scope& s, const Reduction& r, const Output& g) {
  const TensorShape& xs = r.x.shape();
  if (r.reduced.has_value() && xs.IsFullyDefined()) {
    Output g_kept = r.keep_dims ? g : Reshape(s, g, KeptShape(s, r));
    std::vector<int64_t> multiples;
    bool all_one = true;
    for (int i = 0; i < xs.rank(); ++i) {
      multiples.push_back((*r.reduced)[i] ? xs.dim(i) : 1);
      all_one &= multiples.back() == 1;
    }
    return all_one ? g_kept : Tile(s, g_kept, IntList(multiples));
  }
  if (r.reduced.has_value()) {
    Output g_kept = r.keep_dims ? g : Reshape(s, g, KeptShape(s, r));
    Output multiples = ops::Add(s, ops::Mul(s, ShapeOf(s, r.x), ReducedMask(r, 1, 0)),
                                ReducedMask(r, 0, 1));
    return Tile(s, g_kept, multiples);
  }
  const Input kept = KeptShape(s, r);
  Output g_kept = r.keep_dims ? g : Reshape(s, g, kept);
  Output ratio = ops::RealDiv(s, ops::Cast(s, ShapeOf(s, r.x), DT_DOUBLE),
                              ops::Cast(s, kept, DT_DOUBLE));
  return Tile(s, g_kept, ops::Cast(s, ratio, DT_INT32));
}

// Reshapes `v` (shaped like the reduction's output) to keep_dims form.
Output ToKeptDims(const Scope& s, const Reduction& r, const Output& v) {
  return r.keep_dims ? v : Reshape(s, v, KeptShape(s, r));
}

GradResult SumGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(Reduction r, ReadReduction(node));
  return Two(s, BroadcastToInput(s, r, g[0]), Output());
}

GradResult MeanGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(Reduction r, ReadReduction(node));
  const DataType t = r.x.dtype();
  Output scaled;
  if (r.reduced.has_value() && r.x.shape().IsFullyDefined()) {
    int64_t count = 1;
    for (int i = 0; i < r.x.shape().rank(); ++i) {
      if ((*r.reduced)[i]) count *= r.x.shape().dim(i);
    }
    scaled = ops::RealDiv(s, g[0], Scalar(static_cast<double>(count), t));
  } else {
    Output in_size = ops::Prod(s, ShapeOf(s, r.x), 0);
    Output out_size = ops::Prod(s, ShapeOf(s, r.y), 0);
    Output count = ops::RealDiv(s, ops::Cast(s, in_size, t), ops::Cast(s, out_size, t));
    scaled = ops::RealDiv(s, g[0], count);
  }
  return Two(s, BroadcastToInput(s, r, scaled), Output());
}

// Max/Min: the gradient goes to the elements equal to the result, split
// evenly between ties.
GradResult MaxMinReductionGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(Reduction r, ReadReduction(node));
  const DataType t = r.x.dtype();
  Output y_kept = ToKeptDims(s, r, r.y);
  Output g_kept = ToKeptDims(s, r, g[0]);
  Output indicators = ops::Cast(s, ops::Equal(s, y_kept, r.x), t);
  Output num_selected = ops::Sum(s, indicators, r.axes, {.keep_dims = true});
  Output grad = ops::Mul(s, ops::RealDiv(s, indicators, num_selected), g_kept);
  return Two(s, grad, Output());
}

// Prod: product of the other elements, correct with zeros in the input
// (one zero: only it gets a gradient; two or more: none does).
GradResult ProdGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(Reduction r, ReadReduction(node));
  const DataType t = r.x.dtype();
  const ops::ReduceAttrs keep = {.keep_dims = true};
  Output is_zero = ops::Equal(s, r.x, Scalar(0, t));
  Output nonzero_x = ops::SelectV2(s, is_zero, Scalar(1, t), r.x);
  Output prod_nonzero = ops::Prod(s, nonzero_x, r.axes, keep);
  Output zero_count = ops::Sum(s, ops::Cast(s, is_zero, t), r.axes, keep);
  Output no_zero = ops::Equal(s, zero_count, Scalar(0, t));
  Output one_zero = ops::Equal(s, zero_count, Scalar(1, t));
  Output others = ops::RealDiv(s, prod_nonzero, nonzero_x);
  Output at_zero = ops::Mul(s, prod_nonzero, ops::Cast(s, is_zero, t));
  Output local = ops::SelectV2(s, no_zero, others,
                               ops::SelectV2(s, one_zero, at_zero, Scalar(0, t)));
  Output g_kept = ToKeptDims(s, r, g[0]);
  return Two(s, ops::Mul(s, local, g_kept), Output());
}

// ---------------------------------------------------------------------------
// MatMul.

GradResult MatMulGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(bool ta, node.GetAttr<bool>("transpose_a"));
  ASSIGN_OR_RETURN(bool tb, node.GetAttr<bool>("transpose_b"));
  const Output a = InputOf(node, 0);
  const Output b = InputOf(node, 1);
  const Output& dz = g[0];
  Output ga, gb;
  if (!ta && !tb) {
    ga = ops::MatMul(s, dz, b, {.transpose_b = true});
    gb = ops::MatMul(s, a, dz, {.transpose_a = true});
  } else if (!ta && tb) {
    ga = ops::MatMul(s, dz, b);
    gb = ops::MatMul(s, dz, a, {.transpose_a = true});
  } else if (ta && !tb) {
    ga = ops::MatMul(s, b, dz, {.transpose_b = true});
    gb = ops::MatMul(s, a, dz);
  } else {
    ga = ops::MatMul(s, b, dz, {.transpose_a = true, .transpose_b = true});
    gb = ops::MatMul(s, dz, a, {.transpose_a = true, .transpose_b = true});
  }
  return Two(s, ga, gb);
}

}  // namespace

absl::Status RegisterMathGradients(OpRegistry* ops) {
  struct Entry {
    const char* op;
    GradFn fn;
  };
  const Entry entries[] = {
      {"Add", AddGrad},
      {"AddV2", AddGrad},
      {"Sub", SubGrad},
      {"Mul", MulGrad},
      {"RealDiv", RealDivGrad},
      {"Pow", PowGrad},
      {"Maximum",
       [](const Scope& s, const Node& n, absl::Span<const Output> g) {
         return MaxMinGrad(s, n, g, /*is_max=*/true);
       }},
      {"Minimum",
       [](const Scope& s, const Node& n, absl::Span<const Output> g) {
         return MaxMinGrad(s, n, g, /*is_max=*/false);
       }},
      {"Neg", NegGrad},
      {"Square", SquareGrad},
      {"Sqrt", SqrtGrad},
      {"Rsqrt", RsqrtGrad},
      {"Exp", ExpGrad},
      {"Log", LogGrad},
      {"Tanh", TanhGrad},
      {"Sigmoid", SigmoidGrad},
      {"Reciprocal", ReciprocalGrad},
      {"Log1p", Log1pGrad},
      {"Expm1", Expm1Grad},
      {"SquaredDifference", SquaredDifferenceGrad},
      {"FloorMod", FloorModGrad},
      {"Div", RealDivGrad},
      {"DivNoNan", DivNoNanGrad},
      {"MulNoNan", MulNoNanGrad},
      {"Inv", ReciprocalGrad},
      {"ClipByValue", ClipByValueGrad},
      {"Erf", ErfGrad},
      {"Erfc", ErfcGrad},
      {"Sin", SinGrad},
      {"Cos", CosGrad},
      {"Tan", TanGrad},
      {"Sinh", SinhGrad},
      {"Cosh", CoshGrad},
      {"Asin", AsinGrad},
      {"Acos", AcosGrad},
      {"Atan", AtanGrad},
      {"Asinh", AsinhGrad},
      {"Acosh", AcoshGrad},
      {"Atanh", AtanhGrad},
      {"Atan2", Atan2Grad},
      {"Xlogy", XlogyGrad},
      {"Xdivy", XdivyGrad},
      {"Xlog1py", Xlog1pyGrad},
      {"Abs", AbsGrad},
      {"TanhGrad", TanhGradGrad},
      {"SigmoidGrad", SigmoidGradGrad},
      {"SqrtGrad", SqrtGradGrad},
      {"RsqrtGrad", RsqrtGradGrad},
      {"ReciprocalGrad", ReciprocalGradGrad},
      {"InvGrad", ReciprocalGradGrad},  // ReciprocalGrad's first name
      {"Select", SelectGrad},
      {"SelectV2", SelectV2Grad},
      {"AddN", AddNGrad},
      {"AccumulateNV2", AddNGrad},
      {"Cast", CastGrad},
      {"Sum", SumGrad},
      {"Mean", MeanGrad},
      {"Max", MaxMinReductionGrad},
      {"Min", MaxMinReductionGrad},
      {"Prod", ProdGrad},
      {"MatMul", MatMulGrad},
  };
  for (const Entry& e : entries) RETURN_IF_ERROR(ops->SetGradient(e.op, e.fn));
  for (const char* op : {"Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual",
                         "ArgMax", "ArgMin", "Sign", "FloorDiv", "Floor", "Ceil", "Round", "Rint", "Range", "LinSpace", "LogicalAnd", "LogicalOr", "LogicalNot",
                         "TruncateDiv", "Mod", "TruncateMod", "IsNan", "IsInf", "IsFinite", "All", "Any"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace sluice
