// Math op definitions, shape functions and wrappers (kernels: math_kernels.cc,
// reduction_kernels.cc and matmul_kernels.cc; gradients: math_grad.cc).
#include "ops/math/math_ops.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

// TensorFlow's type sets, less the quantized types.
constexpr char kNumberTypes[] =
    "{float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, uint16, "
    "complex128, half, uint32, uint64}";
constexpr char kRealNumberTypes[] =
    "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
    "uint64}";
constexpr char kFloatTypes[] = "{bfloat16, half, float, double}";
constexpr char kFloatComplexTypes[] = "{bfloat16, half, float, double, complex64, complex128}";

// ---------------------------------------------------------------------------
// Shape functions.

absl::Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status BroadcastBinaryShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape out, BroadcastShapes(c->input(0), c->input(1)));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

// Outputs the merge of all inputs' shapes (they must agree).
absl::Status MergeAllInputsShape(InferenceContext* c) {
  TensorShape out = TensorShape::Unknown();
  for (int i = 0; i < c->num_inputs(); ++i) {
    absl::StatusOr<TensorShape> merged = out.Merge(c->input(i));
    if (!merged.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " has shape ", c->input(i).DebugString(),
                       ", incompatible with the other inputs' shape ", out.DebugString()));
    }
    out = *std::move(merged);
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status SelectShape(InferenceContext* c) {
  const TensorShape& cond = c->input(0);
  ASSIGN_OR_RETURN(TensorShape out, c->input(1).Merge(c->input(2)));
  if (!cond.unknown_rank() && !out.unknown_rank() && cond.rank() != 0) {
    bool ok = cond.IsCompatibleWith(out);
    if (!ok && cond.rank() == 1 && out.rank() > 1) {
      ok = cond.dim(0) < 0 || out.dim(0) < 0 || cond.dim(0) == out.dim(0);
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "condition of shape ", cond.DebugString(),
          " must be a scalar, have the shape of t and e ", out.DebugString(),
          ", or be a vector of their first dimension"));
    }
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status SelectV2Shape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape te, BroadcastShapes(c->input(1), c->input(2)));
  ASSIGN_OR_RETURN(TensorShape out, BroadcastShapes(c->input(0), te));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status CheckAxis(int64_t axis, int rank, const TensorShape& input) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "axis ", axis, " is out of range for input of shape ", input.DebugString(),
        " (rank ", rank, ")"));
  }
  return absl::OkStatus();
}

absl::Status ReductionShape(InferenceContext* c) {
  const TensorShape& in = c->input(0);
  const TensorShape& axes_shape = c->input(1);
  ASSIGN_OR_RETURN(bool keep_dims, c->GetAttr<bool>("keep_dims"));
  if (axes_shape.rank() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reduction axes must be a scalar or vector, got shape ", axes_shape.DebugString()));
  }
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, c->InputAsInts(1));
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  const int rank = in.rank();
  if (!axes.has_value()) {
    if (keep_dims) {
      c->set_output(0, TensorShape::UnknownOfRank(rank));
    } else if (axes_shape.rank() == 0) {
      c->set_output(0, TensorShape::UnknownOfRank(std::max(rank - 1, 0)));
    } else {
      c->set_output(0, TensorShape::Unknown());
    }
    return absl::OkStatus();
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : *axes) {
    RETURN_IF_ERROR(CheckAxis(a, rank, in));
    reduced[a < 0 ? a + rank : a] = true;
  }
  TensorShape out;
  for (int i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      out.AddDim(in.dim(i));
    } else if (keep_dims) {
      out.AddDim(1);
    }
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status ArgMaxShape(InferenceContext* c) {
  const TensorShape& in = c->input(0);
  if (c->input(1).rank() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dimension must be a scalar, got shape ", c->input(1).DebugString()));
  }
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dim, c->InputAsInts(1));
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  if (in.rank() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), " needs an input of rank >= 1, got a scalar"));
  }
  if (!dim.has_value() || dim->size() != 1) {
    c->set_output(0, TensorShape::UnknownOfRank(in.rank() - 1));
    return absl::OkStatus();
  }
  int64_t d = (*dim)[0];
  RETURN_IF_ERROR(CheckAxis(d, in.rank(), in));
  if (d < 0) d += in.rank();
  TensorShape out = in;
  out.RemoveDim(static_cast<int>(d));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status MatMulShape(InferenceContext* c) {
  const TensorShape& a = c->input(0);
  const TensorShape& b = c->input(1);
  if ((!a.unknown_rank() && a.rank() != 2) || (!b.unknown_rank() && b.rank() != 2)) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul needs two matrices, got shapes ",
                                                   a.DebugString(), " and ", b.DebugString()));
  }
  ASSIGN_OR_RETURN(bool ta, c->GetAttr<bool>("transpose_a"));
  ASSIGN_OR_RETURN(bool tb, c->GetAttr<bool>("transpose_b"));
  const int64_t m = a.unknown_rank() ? -1 : a.dim(ta ? 1 : 0);
  const int64_t ka = a.unknown_rank() ? -1 : a.dim(ta ? 0 : 1);
  const int64_t kb = b.unknown_rank() ? -1 : b.dim(tb ? 1 : 0);
  const int64_t n = b.unknown_rank() ? -1 : b.dim(tb ? 0 : 1);
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MatMul inner dimensions differ: a ", a.DebugString(), " (transpose_a=", ta, ") and b ",
        b.DebugString(), " (transpose_b=", tb, ")"));
  }
  c->set_output(0, TensorShape({m, n}));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Definitions.

absl::Status RegisterBinary(OpRegistry* ops, const char* name, const char* types,
                            bool commutative) {
  OpDefBuilder b(name);
  b.Input("x: T").Input("y: T").Output("z: T").Attr(absl::StrCat("T: ", types));
  if (commutative) b.SetIsCommutative();
  return ops->Register(b.SetShapeFn(BroadcastBinaryShape));
}

absl::Status RegisterComparison(OpRegistry* ops, const char* name, const char* types,
                                bool equality) {
  OpDefBuilder b(name);
  b.Input("x: T").Input("y: T").Output("z: bool").Attr(absl::StrCat("T: ", types));
  if (equality) {
    b.Attr("incompatible_shape_error: bool = true").SetIsCommutative();
  }
  return ops->Register(b.SetShapeFn(BroadcastBinaryShape));
}

absl::Status RegisterUnary(OpRegistry* ops, const char* name, const char* types) {
  return ops->Register(OpDefBuilder(name)
                           .Input("x: T")
                           .Output("y: T")
                           .Attr(absl::StrCat("T: ", types))
                           .SetShapeFn(UnchangedShape));
}

absl::Status RegisterUnaryGrad(OpRegistry* ops, const char* name) {
  return ops->Register(OpDefBuilder(name)
                           .Input("y: T")
                           .Input("dy: T")
                           .Output("z: T")
                           .Attr(absl::StrCat("T: ", kFloatComplexTypes))
                           .SetShapeFn(MergeAllInputsShape));
}

absl::Status RegisterReduction(OpRegistry* ops, const char* name, const char* types) {
  return ops->Register(OpDefBuilder(name)
                           .Input("input: T")
                           .Input("reduction_indices: Tidx")
                           .Output("output: T")
                           .Attr("keep_dims: bool = false")
                           .Attr(absl::StrCat("T: ", types))
                           .Attr("Tidx: {int32, int64} = int32")
                           .SetShapeFn(ReductionShape));
}

absl::Status RegisterElementwiseOps(OpRegistry* ops) {
  const std::string add_types =
      "{bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
      "complex128, string}";
  RETURN_IF_ERROR(RegisterBinary(ops, "Add", add_types.c_str(), /*commutative=*/true));
  RETURN_IF_ERROR(RegisterBinary(ops, "AddV2", kNumberTypes, true));
  RETURN_IF_ERROR(RegisterBinary(ops, "Sub", kNumberTypes, false));
  RETURN_IF_ERROR(RegisterBinary(ops, "Mul", kNumberTypes, true));
  RETURN_IF_ERROR(RegisterBinary(ops, "RealDiv", kNumberTypes, false));
  RETURN_IF_ERROR(RegisterBinary(
      ops, "FloorDiv",
      "{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, complex64, "
      "complex128}",
      false));
  const char* minmax_types = "{bfloat16, half, float, double, uint8, int16, int32, int64}";
  RETURN_IF_ERROR(RegisterBinary(ops, "Maximum", minmax_types, true));
  RETURN_IF_ERROR(RegisterBinary(ops, "Minimum", minmax_types, true));
  RETURN_IF_ERROR(RegisterBinary(
      ops, "Pow", "{bfloat16, float, half, double, int32, int64, complex64, complex128}", false));

  const std::string eq_types =
      "{bfloat16, half, float, double, uint8, int8, int16, int32, int64, uint16, uint32, "
      "uint64, complex64, complex128, bool, string}";
  RETURN_IF_ERROR(RegisterComparison(ops, "Equal", eq_types.c_str(), true));
  RETURN_IF_ERROR(RegisterComparison(ops, "NotEqual", eq_types.c_str(), true));
  for (const char* name : {"Greater", "GreaterEqual", "Less", "LessEqual"}) {
    RETURN_IF_ERROR(RegisterComparison(ops, name, kRealNumberTypes, false));
  }

  for (const char* name : {"LogicalAnd", "LogicalOr"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("x: bool")
                                      .Input("y: bool")
                                      .Output("z: bool")
                                      .SetIsCommutative()
                                      .SetShapeFn(BroadcastBinaryShape)));
  }
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("LogicalNot").Input("x: bool").Output("y: bool").SetShapeFn(UnchangedShape)));

  const char* div_types =
      "{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, complex64, "
      "complex128}";
  RETURN_IF_ERROR(RegisterBinary(ops, "Div", div_types, false));
  RETURN_IF_ERROR(RegisterBinary(ops, "TruncateDiv", div_types, false));
  RETURN_IF_ERROR(RegisterBinary(
      ops, "DivNoNan", "{half, float, bfloat16, double, complex64, complex128}", false));
  RETURN_IF_ERROR(RegisterBinary(
      ops, "FloorMod",
      "{int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, half, float, double}",
      false));
  // x * y, and 0 where y is 0 (even where x is inf or NaN).
  RETURN_IF_ERROR(RegisterBinary(
      ops, "MulNoNan", "{bfloat16, half, float, double, complex64, complex128}", false));
  // The remainder with the dividend's sign (C's % and fmod).
  RETURN_IF_ERROR(
      RegisterBinary(ops, "Mod", "{int32, int64, half, bfloat16, float, double}", false));
  RETURN_IF_ERROR(
      RegisterBinary(ops, "TruncateMod", "{int32, int64, bfloat16, half, float, double}", false));
  RETURN_IF_ERROR(RegisterBinary(
      ops, "SquaredDifference",
      "{bfloat16, half, float, double, int32, int64, complex64, complex128}", true));
  // x * log(y), x / y, x * log1p(y): 0 where x is 0 (cross-entropies' 0 log 0).
  for (const char* name : {"Xlogy", "Xdivy", "Xlog1py"}) {
    RETURN_IF_ERROR(RegisterBinary(ops, name, kFloatComplexTypes, false));
  }
  // TensorFlow names Atan2's inputs y and x (the angle of the point (x, y)).
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Atan2")
                                    .Input("y: T")
                                    .Input("x: T")
                                    .Output("z: T")
                                    .Attr("T: {bfloat16, half, float, double}")
                                    .SetShapeFn(BroadcastBinaryShape)));
  for (const char* name : {"IsNan", "IsInf", "IsFinite"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("x: T")
                                      .Output("y: bool")
                                      .Attr("T: {bfloat16, half, float, double}")
                                      .SetShapeFn(UnchangedShape)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ClipByValue")
                                    .Input("t: T")
                                    .Input("clip_value_min: T")
                                    .Input("clip_value_max: T")
                                    .Output("output: T")
                                    .Attr(absl::StrCat("T: ", kNumberTypes))
                                    .SetShapeFn(UnchangedShape)));

  const char* signed_types =
      "{bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}";
  RETURN_IF_ERROR(RegisterUnary(ops, "Neg", signed_types));
  RETURN_IF_ERROR(RegisterUnary(ops, "Square", signed_types));
  RETURN_IF_ERROR(RegisterUnary(ops, "Reciprocal", signed_types));
  RETURN_IF_ERROR(RegisterUnary(ops, "Inv", signed_types));
  RETURN_IF_ERROR(RegisterUnary(ops, "Abs", "{bfloat16, half, float, double, int8, int16, "
                                            "int32, int64}"));
  RETURN_IF_ERROR(RegisterUnary(ops, "Sign", signed_types));
  for (const char* name : {"Sqrt", "Rsqrt", "Exp", "Log", "Tanh", "Sigmoid", "Sin", "Cos", "Tan",
                           "Sinh", "Cosh", "Asin", "Acos", "Atan", "Asinh", "Acosh", "Atanh"}) {
    RETURN_IF_ERROR(RegisterUnary(ops, name, kFloatComplexTypes));
  }
  // Real-valued only (TensorFlow's own type lists for these).
  for (const char* name : {"Floor", "Ceil", "Round", "Rint", "Log1p", "Expm1", "Erf", "Erfc"}) {
    RETURN_IF_ERROR(RegisterUnary(ops, name, "{bfloat16, half, float, double}"));
  }
  // Activations: TensorFlow names their argument and result differently
  // (function bodies refer to "node:activations:0").
  for (const char* name : {"Softplus", "Softsign"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("features: T")
                                      .Output("activations: T")
                                      .Attr("T: {bfloat16, half, float, double}")
                                      .SetShapeFn(UnchangedShape)));
  }
  for (const char* name :
       {"TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "InvGrad"}) {
    RETURN_IF_ERROR(RegisterUnaryGrad(ops, name));
  }
  return absl::OkStatus();
}

// [num]: known when num is a constant.
absl::Status LinSpaceShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(c->WithRank(i, 0));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> num, c->InputAsInts(2));
  if (num.has_value() && num->size() == 1 && (*num)[0] <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("LinSpace: num must be positive, got ", (*num)[0]));
  }
  c->set_output(0, TensorShape({num.has_value() && num->size() == 1 ? (*num)[0]
                                                                    : TensorShape::kUnknownDim}));
  return absl::OkStatus();
}

// [n]: n known when start, limit and delta are integer constants.
absl::Status RangeShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(c->WithRank(i, 0));
  c->set_output(0, TensorShape({TensorShape::kUnknownDim}));
  const DataType t = c->input_type(0);
  if (t != DT_INT32 && t != DT_INT64) return absl::OkStatus();
  std::vector<int64_t> v;
  for (int i = 0; i < 3; ++i) {
    ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> ints, c->InputAsInts(i));
    if (!ints.has_value() || ints->size() != 1) return absl::OkStatus();
    v.push_back((*ints)[0]);
  }
  const int64_t start = v[0], limit = v[1], delta = v[2];
  if (delta == 0 || (delta > 0 && start > limit) || (delta < 0 && start < limit)) {
    return absl::InvalidArgumentError(absl::StrCat("Range: no sequence from ", start, " to ",
                                                   limit, " by ", delta));
  }
  const int64_t span = limit > start ? limit - start : start - limit;
  const int64_t step = delta > 0 ? delta : -delta;
  c->set_output(0, TensorShape({(span + step - 1) / step}));
  return absl::OkStatus();
}

absl::Status RegisterOtherOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Select")
                                    .Input("condition: bool")
                                    .Input("t: T")
                                    .Input("e: T")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .SetShapeFn(SelectShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SelectV2")
                                    .Input("condition: bool")
                                    .Input("t: T")
                                    .Input("e: T")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .SetShapeFn(SelectV2Shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("AddN")
                                    .Input("inputs: N * T")
                                    .Output("sum: T")
                                    .Attr("N: int >= 1")
                                    // variant: TensorLists, added element by element
                                    // (their kernel: ops/control_flow/tensor_list_ops.h).
                                    .Attr("T: {float, double, int32, uint8, int16, int8, complex64, "
                                          "int64, bfloat16, uint16, complex128, half, uint32, "
                                          "uint64, variant}")
                                    .SetIsCommutative()
                                    .SetShapeFn(MergeAllInputsShape)));
  // tf.math.accumulate_n's op: AddN with the sum's shape as an attr (it
  // runs AddN's kernel and has AddN's gradient).
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("AccumulateNV2")
          .Input("inputs: N * T")
          .Output("sum: T")
          .Attr("N: int >= 1")
          .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
                "uint32, uint64}")
          .Attr("shape: shape")
          .SetShapeFn([](InferenceContext* c) -> absl::Status {
            ASSIGN_OR_RETURN(TensorShape shape, c->GetAttr<TensorShape>("shape"));
            if (shape.unknown_rank()) return MergeAllInputsShape(c);
            c->set_output(0, shape);
            return absl::OkStatus();
          })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Range")
                                    .Input("start: Tidx")
                                    .Input("limit: Tidx")
                                    .Input("delta: Tidx")
                                    .Output("output: Tidx")
                                    .Attr("Tidx: {bfloat16, half, float, double, int32, int64} = int32")
                                    .SetShapeFn(RangeShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("LinSpace")
                                    .Input("start: T")
                                    .Input("stop: T")
                                    .Input("num: Tidx")
                                    .Output("output: T")
                                    .Attr("T: {bfloat16, half, float, double}")
                                    .Attr("Tidx: {int32, int64} = DT_INT32")
                                    .SetShapeFn(LinSpaceShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Cast")
                                    .Input("x: SrcT")
                                    .Output("y: DstT")
                                    .Attr("SrcT: type")
                                    .Attr("DstT: type")
                                    .Attr("Truncate: bool = false")
                                    .SetShapeFn(UnchangedShape)));
  for (const char* name : {"Sum", "Mean", "Prod"}) {
    RETURN_IF_ERROR(RegisterReduction(ops, name, kNumberTypes));
  }
  for (const char* name : {"Max", "Min"}) {
    RETURN_IF_ERROR(RegisterReduction(ops, name, kRealNumberTypes));
  }
  // sqrt(sum(x^2)): no kernel, lowered by ops/math/composite_ops.cc.
  RETURN_IF_ERROR(RegisterReduction(ops, "EuclideanNorm", kNumberTypes));
  for (const char* name : {"All", "Any"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("input: bool")
                                      .Input("reduction_indices: Tidx")
                                      .Output("output: bool")
                                      .Attr("keep_dims: bool = false")
                                      .Attr("Tidx: {int32, int64} = int32")
                                      .SetShapeFn(ReductionShape)));
  }
  for (const char* op : {"ArgMax", "ArgMin"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(op)
                                      .Input("input: T")
                                      .Input("dimension: Tidx")
                                      .Output("output: output_type")
                                      .Attr(absl::StrCat("T: ", kNumberTypes))
                                      .Attr("Tidx: {int32, int64} = int32")
                                      .Attr("output_type: {int32, int64} = int64")
                                      .SetShapeFn(ArgMaxShape)));
  }
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("MatMul")
          .Input("a: T")
          .Input("b: T")
          .Output("product: T")
          .Attr("transpose_a: bool = false")
          .Attr("transpose_b: bool = false")
          .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, complex128}")
          // TensorFlow 2.x marks the MatMuls of a gradient (hints for its
          // grappler; no effect on the product). Its graphs carry them.
          .Attr("grad_a: bool = false")
          .Attr("grad_b: bool = false")
          .SetShapeFn(MatMulShape)));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterMathOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterElementwiseOps(ops));
  return RegisterOtherOps(ops);
}

// ---------------------------------------------------------------------------
// Wrappers.

namespace ops {

#define SLUICE_BINARY_WRAPPER_(NAME)                                      \
  Output NAME(const Scope& scope, Input x, Input y, Loc loc) {            \
    return scope.Op(#NAME, loc).Input(x).Input(y).Finalize1();            \
  }
SLUICE_BINARY_WRAPPER_(Add)
SLUICE_BINARY_WRAPPER_(AddV2)
SLUICE_BINARY_WRAPPER_(Sub)
SLUICE_BINARY_WRAPPER_(Mul)
SLUICE_BINARY_WRAPPER_(RealDiv)
SLUICE_BINARY_WRAPPER_(FloorDiv)
SLUICE_BINARY_WRAPPER_(FloorMod)
SLUICE_BINARY_WRAPPER_(Div)
SLUICE_BINARY_WRAPPER_(TruncateDiv)
SLUICE_BINARY_WRAPPER_(DivNoNan)
SLUICE_BINARY_WRAPPER_(MulNoNan)
SLUICE_BINARY_WRAPPER_(Mod)
SLUICE_BINARY_WRAPPER_(TruncateMod)
SLUICE_BINARY_WRAPPER_(SquaredDifference)
SLUICE_BINARY_WRAPPER_(Xlogy)
SLUICE_BINARY_WRAPPER_(Xdivy)
SLUICE_BINARY_WRAPPER_(Xlog1py)
SLUICE_BINARY_WRAPPER_(Atan2)
SLUICE_BINARY_WRAPPER_(Maximum)
SLUICE_BINARY_WRAPPER_(Minimum)
SLUICE_BINARY_WRAPPER_(Pow)
SLUICE_BINARY_WRAPPER_(Equal)
SLUICE_BINARY_WRAPPER_(NotEqual)
SLUICE_BINARY_WRAPPER_(Greater)
SLUICE_BINARY_WRAPPER_(GreaterEqual)
SLUICE_BINARY_WRAPPER_(Less)
SLUICE_BINARY_WRAPPER_(LessEqual)
SLUICE_BINARY_WRAPPER_(TanhGrad)
SLUICE_BINARY_WRAPPER_(SigmoidGrad)
SLUICE_BINARY_WRAPPER_(SqrtGrad)
SLUICE_BINARY_WRAPPER_(RsqrtGrad)
SLUICE_BINARY_WRAPPER_(ReciprocalGrad)
#undef SLUICE_BINARY_WRAPPER_

#define SLUICE_UNARY_WRAPPER_(NAME)                   \
  Output NAME(const Scope& scope, Input x, Loc loc) { \
    return scope.Op(#NAME, loc).Input(x).Finalize1(); \
  }
SLUICE_UNARY_WRAPPER_(Neg)
SLUICE_UNARY_WRAPPER_(Inv)
SLUICE_UNARY_WRAPPER_(IsNan)
SLUICE_UNARY_WRAPPER_(IsInf)
SLUICE_UNARY_WRAPPER_(IsFinite)
SLUICE_UNARY_WRAPPER_(Square)
SLUICE_UNARY_WRAPPER_(Sqrt)
SLUICE_UNARY_WRAPPER_(Rsqrt)
SLUICE_UNARY_WRAPPER_(Exp)
SLUICE_UNARY_WRAPPER_(Log)
SLUICE_UNARY_WRAPPER_(Tanh)
SLUICE_UNARY_WRAPPER_(Sigmoid)
SLUICE_UNARY_WRAPPER_(Floor)
SLUICE_UNARY_WRAPPER_(Ceil)
SLUICE_UNARY_WRAPPER_(Round)
SLUICE_UNARY_WRAPPER_(Log1p)
SLUICE_UNARY_WRAPPER_(Expm1)
SLUICE_UNARY_WRAPPER_(Softplus)
SLUICE_UNARY_WRAPPER_(Softsign)
SLUICE_UNARY_WRAPPER_(Erf)
SLUICE_UNARY_WRAPPER_(Erfc)
SLUICE_UNARY_WRAPPER_(Sin)
SLUICE_UNARY_WRAPPER_(Cos)
SLUICE_UNARY_WRAPPER_(Tan)
SLUICE_UNARY_WRAPPER_(Sinh)
SLUICE_UNARY_WRAPPER_(Cosh)
SLUICE_UNARY_WRAPPER_(Asin)
SLUICE_UNARY_WRAPPER_(Acos)
SLUICE_UNARY_WRAPPER_(Atan)
SLUICE_UNARY_WRAPPER_(Asinh)
SLUICE_UNARY_WRAPPER_(Acosh)
SLUICE_UNARY_WRAPPER_(Atanh)
SLUICE_UNARY_WRAPPER_(Rint)
SLUICE_UNARY_WRAPPER_(Reciprocal)
SLUICE_UNARY_WRAPPER_(Abs)
SLUICE_UNARY_WRAPPER_(Sign)
#undef SLUICE_UNARY_WRAPPER_

Output Select(const Scope& scope, Input condition, Input t, Input e, Loc loc) {
  return scope.Op("Select", loc).Input(condition).Input(t).Input(e).Finalize1();
}

Output SelectV2(const Scope& scope, Input condition, Input t, Input e, Loc loc) {
  return scope.Op("SelectV2", loc).Input(condition).Input(t).Input(e).Finalize1();
}

Output AddN(const Scope& scope, absl::Span<const Output> inputs, Loc loc) {
  return scope.Op("AddN", loc).InputList(inputs).Finalize1();
}

Output AccumulateNV2(const Scope& scope, absl::Span<const Output> inputs, Loc loc) {
  const TensorShape shape = inputs.empty() ? TensorShape::Unknown() : inputs[0].shape();
  return scope.Op("AccumulateNV2", loc).InputList(inputs).Attr("shape", shape).Finalize1();
}

Output LogicalAnd(const Scope& scope, Input x, Input y, Loc loc) {
  return scope.Op("LogicalAnd", loc).Input(x).Input(y).Finalize1();
}

Output LogicalOr(const Scope& scope, Input x, Input y, Loc loc) {
  return scope.Op("LogicalOr", loc).Input(x).Input(y).Finalize1();
}

Output LogicalNot(const Scope& scope, Input x, Loc loc) {
  return scope.Op("LogicalNot", loc).Input(x).Finalize1();
}

Output ClipByValue(const Scope& scope, Input t, Input clip_value_min, Input clip_value_max,
                   Loc loc) {
  return scope.Op("ClipByValue", loc).Input(t).Input(clip_value_min).Input(clip_value_max).Finalize1();
}

Output Range(const Scope& scope, Input start, Input limit, Input delta, Loc loc) {
  return scope.Op("Range", loc).Input(start).Input(limit).Input(delta).Finalize1();
}

Output LinSpace(const Scope& scope, Input start, Input stop, Input num, Loc loc) {
  return scope.Op("LinSpace", loc).Input(start).Input(stop).Input(num).Finalize1();
}

Output Cast(const Scope& scope, Input x, DataType dst_type, const CastAttrs& attrs, Loc loc) {
  return scope.Op("Cast", loc)
      .Input(x)
      .Attr("DstT", dst_type)
      .Attr("Truncate", attrs.truncate)
      .Finalize1();
}

#define SLUICE_REDUCTION_WRAPPER_(NAME)                                                 \
  Output NAME(const Scope& scope, Input input, Input axis, const ReduceAttrs& attrs,    \
              Loc loc) {                                                                \
    return scope.Op(#NAME, loc)                                                         \
        .Input(input)                                                                   \
        .Input(axis)                                                                    \
        .Attr("keep_dims", attrs.keep_dims)                                             \
        .Finalize1();                                                                   \
  }
SLUICE_REDUCTION_WRAPPER_(Sum)
SLUICE_REDUCTION_WRAPPER_(Mean)
SLUICE_REDUCTION_WRAPPER_(Max)
SLUICE_REDUCTION_WRAPPER_(Min)
SLUICE_REDUCTION_WRAPPER_(Prod)
SLUICE_REDUCTION_WRAPPER_(All)
SLUICE_REDUCTION_WRAPPER_(Any)
#undef SLUICE_REDUCTION_WRAPPER_

// ArgMax or ArgMin.
static Output ArgBest(const char* op, const Scope& scope, Input input, Input dimension,
                      const ArgMaxAttrs& attrs, Loc loc) {
  return scope.Op(op, loc)
      .Input(input)
      .Input(dimension)
      .Attr("output_type", attrs.output_type)
      .Finalize1();
}

Output ArgMax(const Scope& scope, Input input, Input dimension, const ArgMaxAttrs& attrs,
              Loc loc) {
  return ArgBest("ArgMax", scope, input, dimension, attrs, loc);
}

Output ArgMin(const Scope& scope, Input input, Input dimension, const ArgMaxAttrs& attrs,
              Loc loc) {
  return ArgBest("ArgMin", scope, input, dimension, attrs, loc);
}

Output MatMul(const Scope& scope, Input a, Input b, const MatMulAttrs& attrs, Loc loc) {
  return scope.Op("MatMul", loc)
      .Input(a)
      .Input(b)
      .Attr("transpose_a", attrs.transpose_a)
      .Attr("transpose_b", attrs.transpose_b)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
