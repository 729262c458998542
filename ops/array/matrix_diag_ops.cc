#include "ops/array/matrix_diag_ops.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/array/internal/matrix_diag_align.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

constexpr char kAlign[] =
    "align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = 'RIGHT_LEFT'";

// [lower, upper] when input `i` (k) is a constant of one or two elements.
absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> ConstantK(InferenceContext* c, int i) {
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> k, c->InputAsInts(i));
  if (!k.has_value()) return std::nullopt;
  if (k->empty() || k->size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": diag_index must have only one or two elements, received ", k->size(),
        " elements."));
  }
  const int64_t lower = (*k)[0], upper = k->back();
  if (lower > upper) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": lower_diag_index must not be larger than upper_diag_index: ",
                     lower, " > ", upper));
  }
  return std::make_pair(lower, upper);
}

absl::Status DiagPartShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  ASSIGN_OR_RETURN(auto k, ConstantK(c, 1));
  const TensorShape& x = c->input(0);
  if (!k.has_value() || x.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  const auto [lower, upper] = *k;
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  for (const int64_t d : {lower, upper}) {
    if (rows >= 0 && cols >= 0 && d != 0 && (d <= -rows || d >= cols)) {
      return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": diagonal ", d,
                                                     " is out of bound. It must be between ",
                                                     -rows, " and ", cols));
    }
  }
  std::vector<int64_t> dims(x.dims().begin(), x.dims().end() - 2);
  if (upper > lower) dims.push_back(upper - lower + 1);
  dims.push_back(rows < 0 || cols < 0 ? TensorShape::kUnknownDim
                                      : std::min(rows + std::min<int64_t>(upper, 0),
                                                 cols - std::max<int64_t>(lower, 0)));
  c->set_output(0, TensorShape(dims));
  return absl::OkStatus();
}

// Rows and columns as MatrixDiag's kernel chooses them, when the inputs
// are known; unknown dimensions otherwise.
absl::Status DiagShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(auto k, ConstantK(c, 1));
  const TensorShape& d = c->input(0);
  if (!k.has_value() || d.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  const auto [lower, upper] = *k;
  const int inner = upper > lower ? 2 : 1;
  RETURN_IF_ERROR(c->WithRankAtLeast(0, inner));
  if (inner == 2 && d.dim(d.rank() - 2) >= 0 && d.dim(d.rank() - 2) != upper - lower + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": the diagonal holds ", d.dim(d.rank() - 2), " diagonals where k = [",
        lower, ", ", upper, "] names ", upper - lower + 1));
  }
  std::vector<int64_t> dims(d.dims().begin(), d.dims().end() - inner);
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> rows_in, c->InputAsInts(2));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> cols_in, c->InputAsInts(3));
  const int64_t max_len = d.dim(d.rank() - 1);
  int64_t rows = TensorShape::kUnknownDim, cols = TensorShape::kUnknownDim;
  if (max_len >= 0 && rows_in.has_value() && cols_in.has_value() && rows_in->size() == 1 &&
      cols_in->size() == 1) {
    const int64_t min_rows = max_len - std::min<int64_t>(upper, 0);
    const int64_t min_cols = max_len + std::max<int64_t>(lower, 0);
    rows = (*rows_in)[0];
    cols = (*cols_in)[0];
    if (rows < -1 || cols < -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          c->node().op(), ": num_rows and num_cols must be -1 or at least 0, got ", rows, " and ",
          cols));
    }
    if (rows == -1 && cols == -1) {
      rows = cols = std::max(min_rows, min_cols);
    } else if (rows == -1) {
      rows = min_rows;
    } else if (cols == -1) {
      cols = min_cols;
    }
  }
  dims.push_back(rows);
  dims.push_back(cols);
  c->set_output(0, TensorShape(dims));
  return absl::OkStatus();
}

absl::Status SetDiagShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

OpDefBuilder DiagDef(const char* name, bool align) {
  OpDefBuilder b = OpDefBuilder(name)
                       .Input("diagonal: T")
                       .Input("k: int32")
                       .Input("num_rows: int32")
                       .Input("num_cols: int32")
                       .Input("padding_value: T")
                       .Output("output: T")
                       .Attr("T: type");
  if (align) b.Attr(kAlign);
  return b.SetShapeFn(DiagShape);
}

OpDefBuilder DiagPartDef(const char* name, bool align) {
  OpDefBuilder b = OpDefBuilder(name)
                       .Input("input: T")
                       .Input("k: int32")
                       .Input("padding_value: T")
                       .Output("diagonal: T")
                       .Attr("T: type");
  if (align) b.Attr(kAlign);
  return b.SetShapeFn(DiagPartShape);
}

OpDefBuilder SetDiagDef(const char* name, bool k, bool align) {
  OpDefBuilder b = OpDefBuilder(name).Input("input: T").Input("diagonal: T");
  if (k) b.Input("k: int32");
  b.Output("output: T").Attr("T: type");
  if (align) b.Attr(kAlign);
  return b.SetShapeFn(SetDiagShape);
}

using GradResult = absl::StatusOr<std::vector<Output>>;
using internal::InputOf;

Output Zero(const Scope& s, DataType dtype) { return ops::Cast(s, ops::Const(s, 0.0), dtype); }

// The diagonals of the gradient.
GradResult DiagGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(node.num_inputs());
  grads[0] = ops::MatrixDiagPartV3(s, g[0], InputOf(node, 1), Zero(s, g[0].dtype()),
                                   internal::AlignOf(node));
  RETURN_IF_ERROR(s.status());
  return grads;
}

// The band of the gradient set into zeros.
GradResult DiagPartGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(node.num_inputs());
  grads[0] = ops::MatrixSetDiagV3(s, ops::ZerosLike(s, InputOf(node, 0)), g[0], InputOf(node, 1),
                                  internal::AlignOf(node));
  RETURN_IF_ERROR(s.status());
  return grads;
}

// The input's gradient outside the band; the band's gradient.
GradResult SetDiagGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(node.num_inputs());
  const Output k = node.num_inputs() > 2 ? InputOf(node, 2) : ops::Const(s, 0);
  const std::string align = internal::AlignOf(node);
  grads[0] = ops::MatrixSetDiagV3(s, g[0], ops::ZerosLike(s, InputOf(node, 1)), k, align);
  grads[1] = ops::MatrixDiagPartV3(s, g[0], k, Zero(s, g[0].dtype()), align);
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterMatrixDiagOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(DiagDef("MatrixDiagV2", false)));
  RETURN_IF_ERROR(ops->Register(DiagDef("MatrixDiagV3", true)));
  RETURN_IF_ERROR(ops->Register(DiagPartDef("MatrixDiagPartV2", false)));
  RETURN_IF_ERROR(ops->Register(DiagPartDef("MatrixDiagPartV3", true)));
  RETURN_IF_ERROR(ops->Register(SetDiagDef("MatrixSetDiag", false, false)));
  RETURN_IF_ERROR(ops->Register(SetDiagDef("MatrixSetDiagV2", true, false)));
  RETURN_IF_ERROR(ops->Register(SetDiagDef("MatrixSetDiagV3", true, true)));
  return absl::OkStatus();
}

absl::Status RegisterMatrixDiagGradients(OpRegistry* ops) {
  for (const char* op : {"MatrixDiagV2", "MatrixDiagV3"}) {
    RETURN_IF_ERROR(ops->SetGradient(op, DiagGrad));
  }
  for (const char* op : {"MatrixDiagPartV2", "MatrixDiagPartV3"}) {
    RETURN_IF_ERROR(ops->SetGradient(op, DiagPartGrad));
  }
  for (const char* op : {"MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3"}) {
    RETURN_IF_ERROR(ops->SetGradient(op, SetDiagGrad));
  }
  return absl::OkStatus();
}

namespace ops {

Output MatrixDiagV3(const Scope& scope, Input diagonal, Input k, Input padding_value,
                    const MatrixDiagAttrs& attrs, std::source_location loc) {
  return scope.Op("MatrixDiagV3", loc)
      .Input(diagonal)
      .Input(k)
      .Input(ops::Const(scope, static_cast<int32_t>(attrs.num_rows)))
      .Input(ops::Const(scope, static_cast<int32_t>(attrs.num_cols)))
      .Input(padding_value)
      .Attr("align", attrs.align)
      .Finalize1();
}

Output MatrixDiagPartV3(const Scope& scope, Input input, Input k, Input padding_value,
                        const std::string& align, std::source_location loc) {
  return scope.Op("MatrixDiagPartV3", loc)
      .Input(input)
      .Input(k)
      .Input(padding_value)
      .Attr("align", align)
      .Finalize1();
}

Output MatrixSetDiagV3(const Scope& scope, Input input, Input diagonal, Input k,
                       const std::string& align, std::source_location loc) {
  return scope.Op("MatrixSetDiagV3", loc)
      .Input(input)
      .Input(diagonal)
      .Input(k)
      .Attr("align", align)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
