#include "ops/array_ops.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "graph/attr_value.h"
#include "graph/op_def.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace sluice {
namespace array_internal {
namespace {

constexpr int kShrinkAxis = -1;
constexpr int kNewAxis = -2;

std::string IntsDebugString(absl::Span<const int64_t> v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

// The mask bits of one index entry, after ellipsis expansion.
struct DenseSpec {
  std::vector<int64_t> begin, end, strides;
  std::vector<bool> begin_masked, end_masked, shrink;
  // Per output dimension before shrinking: an input dimension, kNewAxis or
  // kShrinkAxis.
  std::vector<int> final_gather;
};

// TensorFlow's BuildDenseSpec: expands the ellipsis (implicit at the end
// when absent) and maps the sparse index entries onto input dimensions.
absl::StatusOr<DenseSpec> BuildDenseSpec(int rank, absl::Span<const int64_t> begin,
                                         absl::Span<const int64_t> end,
                                         absl::Span<const int64_t> strides,
                                         const StridedSliceSpec& spec) {
  const int sparse_dims = static_cast<int>(begin.size());
  if (end.size() != begin.size() || strides.size() != begin.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("StridedSlice: begin, end and strides must have the same length, got ",
                     begin.size(), ", ", end.size(), " and ", strides.size()));
  }
  if (sparse_dims > 62) {
    return absl::InvalidArgumentError("StridedSlice: too many index entries");
  }
  int64_t ellipsis_mask = spec.ellipsis_mask & ((int64_t{1} << sparse_dims) - 1);
  if ((ellipsis_mask & (ellipsis_mask - 1)) != 0) {
    return absl::InvalidArgumentError("StridedSlice: multiple ellipses in slice spec not allowed");
  }
  int num_add_axis_after_ellipsis = 0;
  bool ellipsis_seen = false;
  for (int i = 0; i < sparse_dims; ++i) {
    if (ellipsis_seen && (spec.new_axis_mask & (int64_t{1} << i))) ++num_add_axis_after_ellipsis;
    if (ellipsis_mask & (int64_t{1} << i)) ellipsis_seen = true;
  }
  int total_sparse = sparse_dims;
  if (!ellipsis_seen) {
    ellipsis_mask |= int64_t{1} << sparse_dims;
    ++total_sparse;
  }

  DenseSpec dense;
  dense.begin.assign(rank, 0);
  dense.end.assign(rank, 0);
  dense.strides.assign(rank, 1);
  dense.begin_masked.assign(rank, false);
  dense.end_masked.assign(rank, false);
  dense.shrink.assign(rank, false);
  int full_index = 0;
  for (int i = 0; i < total_sparse; ++i) {
    const int64_t bit = int64_t{1} << i;
    if (ellipsis_mask & bit) {
      const int next_index =
          std::min(rank - (total_sparse - i) + 1 + num_add_axis_after_ellipsis, rank);
      for (; full_index < next_index; ++full_index) {
        dense.begin_masked[full_index] = true;
        dense.end_masked[full_index] = true;
        dense.final_gather.push_back(full_index);
      }
    } else if (spec.new_axis_mask & bit) {
      dense.final_gather.push_back(kNewAxis);
    } else {
      if (full_index >= rank) {
        return absl::InvalidArgumentError(
            absl::StrCat("StridedSlice: index out of range using input dim ", full_index,
                         "; input has only ", rank, " dims"));
      }
      dense.begin[full_index] = begin[i];
      dense.end[full_index] = end[i];
      dense.strides[full_index] = strides[i];
      dense.begin_masked[full_index] = (spec.begin_mask & bit) != 0;
      dense.end_masked[full_index] = (spec.end_mask & bit) != 0;
      if (spec.shrink_axis_mask & bit) {
        dense.shrink[full_index] = true;
        dense.final_gather.push_back(kShrinkAxis);
      } else {
        dense.final_gather.push_back(full_index);
      }
      ++full_index;
    }
  }
  return dense;
}

}  // namespace

absl::StatusOr<StridedSlicePlan> PlanStridedSlice(const TensorShape& input_shape,
                                                  absl::Span<const int64_t> begin,
                                                  absl::Span<const int64_t> end,
                                                  absl::Span<const int64_t> strides,
                                                  const StridedSliceSpec& spec) {
  const int rank = input_shape.rank();
  if (rank < 0) return absl::InvalidArgumentError("StridedSlice: input rank is unknown");
  ASSIGN_OR_RETURN(DenseSpec dense, BuildDenseSpec(rank, begin, end, strides, spec));

  StridedSlicePlan plan;
  plan.begin.resize(rank);
  plan.strides.resize(rank);
  plan.processing_dims.resize(rank);
  bool identity = true;
  for (int i = 0; i < rank; ++i) {
    const int64_t dim = input_shape.dim(i);
    const int64_t stride = dense.strides[i];
    if (stride == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("StridedSlice: strides[", i, "] must be non-zero"));
    }
    plan.strides[i] = stride;
    if (dense.shrink[i]) {
      if (stride <= 0) {
        return absl::InvalidArgumentError(
            "StridedSlice: only stride 1 allowed on non-range indexing");
      }
      const int64_t b = dense.begin[i];
      if (dim >= 0) {
        const int64_t fwd = b < 0 ? dim + b : b;
        if (fwd < 0 || fwd >= dim) {
          return absl::InvalidArgumentError(absl::StrCat("StridedSlice: slice index ", b,
                                                         " of dimension ", i,
                                                         " out of bounds (size ", dim, ")"));
        }
        plan.begin[i] = fwd;
      }
      plan.strides[i] = 1;
      plan.processing_dims[i] = 1;
      identity = identity && dim == 1;  // dropping a dimension of 1 moves no data
      continue;
    }
    if (dim < 0) {
      plan.processing_dims[i] = -1;
      identity = false;
      continue;
    }
    // Canonicalizes begin (c = 0) or end (c = 1) into the valid range.
    const int64_t lo = stride > 0 ? 0 : -1;
    const int64_t hi = stride > 0 ? dim : dim - 1;
    auto canonical = [&](int64_t x, int c) -> int64_t {
      const bool masked = c == 0 ? dense.begin_masked[i] : dense.end_masked[i];
      if (masked) {
        // begin: the first element in stride direction; end: past the last.
        if (stride > 0) return c == 0 ? lo : hi;
        return c == 0 ? hi : lo;
      }
      const int64_t fwd = x < 0 ? dim + x : x;
      return fwd < lo ? lo : (fwd > hi ? hi : fwd);
    };
    const int64_t b = canonical(dense.begin[i], 0);
    const int64_t e = canonical(dense.end[i], 1);
    const int64_t interval = e - b;
    int64_t size = 0;
    if (interval != 0 && ((interval < 0) == (stride < 0))) {
      size = interval / stride + (interval % stride != 0 ? 1 : 0);
    }
    plan.begin[i] = b;
    plan.processing_dims[i] = size;
    identity = identity && stride == 1 && b == 0 && size == dim;
  }
  std::vector<int64_t> final_dims;
  for (int g : dense.final_gather) {
    if (g == kNewAxis) {
      final_dims.push_back(1);
    } else if (g >= 0) {
      final_dims.push_back(plan.processing_dims[g]);
    }
  }
  plan.final_shape = TensorShape(absl::MakeConstSpan(final_dims));
  plan.is_identity = identity;
  return plan;
}

absl::StatusOr<TensorShape> StridedSliceShapeOfRank(int input_rank, int sparse_dims,
                                                    const StridedSliceSpec& spec) {
  std::vector<int64_t> zeros(sparse_dims, 0), ones(sparse_dims, 1);
  ASSIGN_OR_RETURN(DenseSpec dense, BuildDenseSpec(input_rank, zeros, zeros, ones, spec));
  std::vector<int64_t> dims;
  for (int g : dense.final_gather) {
    if (g == kNewAxis) {
      dims.push_back(1);
    } else if (g >= 0) {
      dims.push_back(-1);
    }
  }
  return TensorShape(absl::MakeConstSpan(dims));
}

absl::StatusOr<TensorShape> ResolveReshape(const TensorShape& input_shape,
                                           absl::Span<const int64_t> requested) {
  int unknown_index = -1;
  int64_t product = 1;
  for (int i = 0; i < static_cast<int>(requested.size()); ++i) {
    const int64_t d = requested[i];
    if (d == -1) {
      if (unknown_index >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Reshape: only one input size may be -1, not both ", unknown_index,
                         " and ", i, " (requested shape ", IntsDebugString(requested), ")"));
      }
      unknown_index = i;
    } else if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Reshape: size ", i, " must be non-negative, not ", d, " (requested shape ",
                       IntsDebugString(requested), ")"));
    } else {
      product *= d;
    }
  }
  std::vector<int64_t> dims(requested.begin(), requested.end());
  const int64_t n = input_shape.num_elements();
  if (unknown_index >= 0) {
    if (n >= 0) {
      if (product == 0 || n % product != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Cannot reshape a tensor of shape ", input_shape.DebugString(), " (", n,
            " elements) to shape ", IntsDebugString(requested),
            product == 0 ? ": the -1 cannot be inferred when the other sizes multiply to 0"
                         : absl::StrCat(": ", n, " is not a multiple of ", product)));
      }
      dims[unknown_index] = n / product;
    }
  } else if (n >= 0 && n != product) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot reshape a tensor of shape ", input_shape.DebugString(), " (", n,
        " elements) to shape ", IntsDebugString(requested), " (", product, " elements)"));
  }
  return TensorShape(absl::MakeConstSpan(dims));
}

absl::Status BroadcastReductionAxes(absl::Span<const int64_t> s0, absl::Span<const int64_t> s1,
                                    std::vector<int64_t>* r0, std::vector<int64_t>* r1) {
  r0->clear();
  r1->clear();
  const int n = static_cast<int>(std::max(s0.size(), s1.size()));
  const int pad0 = n - static_cast<int>(s0.size());
  const int pad1 = n - static_cast<int>(s1.size());
  for (int i = 0; i < n; ++i) {
    const int64_t a = i < pad0 ? 1 : s0[i - pad0];
    const int64_t b = i < pad1 ? 1 : s1[i - pad1];
    if (a == b) {
      // Summing over a dimension of size 1 changes nothing but keeps the
      // reduction a pure function of the axes (TensorFlow does the same).
      if (a == 1) {
        r0->push_back(i);
        r1->push_back(i);
      }
    } else if (a == 1) {
      r0->push_back(i);
    } else if (b == 1) {
      r1->push_back(i);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("Incompatible shapes: ", IntsDebugString(s0), " vs. ", IntsDebugString(s1)));
    }
  }
  return absl::OkStatus();
}

}  // namespace array_internal

namespace {

using array_internal::IntsDebugString;
using ::tensorflow::TensorProto;

// ---- Shape function helpers ------------------------------------------------

// Maps axis in [-rank, rank) onto [0, rank).
absl::StatusOr<int64_t> CanonicalAxis(int64_t axis, int64_t rank, absl::string_view what,
                                      const TensorShape& shape) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", axis, " is out of range [", -rank,
                                                   ", ", rank, ") for shape ",
                                                   shape.DebugString()));
  }
  return axis < 0 ? axis + rank : axis;
}

// The length of a vector input, when its shape says so (else -1).
int64_t VectorLength(const TensorShape& s) { return s.rank() == 1 ? s.dim(0) : -1; }

// A shape given by the int vector on input `i`: exact when constant, of
// known rank when the vector's length is known, else unknown.
absl::StatusOr<TensorShape> ShapeFromInput(InferenceContext* c, int i) {
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> v, c->InputAsInts(i));
  if (v.has_value()) {
    for (int64_t d : *v) {
      if (d < -1) {
        return absl::InvalidArgumentError(
            absl::StrCat("shape ", IntsDebugString(*v), " has a negative dimension"));
      }
    }
    return TensorShape(absl::MakeConstSpan(*v));
  }
  const int64_t n = VectorLength(c->input(i));
  return n >= 0 ? TensorShape::UnknownOfRank(static_cast<int>(n)) : TensorShape::Unknown();
}

// A scalar int (or one-element vector) on input i, when constant.
absl::StatusOr<std::optional<int64_t>> ScalarFromInput(InferenceContext* c, int i,
                                                       absl::string_view what) {
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> v, c->InputAsInts(i));
  if (!v.has_value()) return std::optional<int64_t>();
  if (v->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar, got ", v->size(), " values"));
  }
  return std::optional<int64_t>((*v)[0]);
}

absl::Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext* c) {
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

// ---- Shape functions ---------------------------------------------------------

absl::Status ConstShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorProto value, c->GetAttr<TensorProto>("value"));
  ASSIGN_OR_RETURN(DataType dtype, c->GetAttr<DataType>("dtype"));
  if (value.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat("Const: dtype ", DataTypeName(dtype),
                                                   " does not match the value's ",
                                                   DataTypeName(value.dtype())));
  }
  ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(value.tensor_shape()));
  if (!shape.IsFullyDefined()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Const: value has a shape that is not fully defined: ", shape.DebugString()));
  }
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status PlaceholderShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape shape, c->GetAttr<TensorShape>("shape"));
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status PlaceholderWithDefaultShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape shape, c->GetAttr<TensorShape>("shape"));
  if (!c->input(0).IsCompatibleWith(shape)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PlaceholderWithDefault: default value of shape ", c->input(0).DebugString(),
                     " does not fit shape ", shape.DebugString()));
  }
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status FillShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 1));
  RETURN_IF_ERROR(c->WithRank(1, 0));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, c->InputAsInts(0));
  if (dims.has_value()) {
    for (int64_t d : *dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Fill: dims must be non-negative, got ", IntsDebugString(*dims)));
      }
    }
  }
  ASSIGN_OR_RETURN(TensorShape shape, ShapeFromInput(c, 0));
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status ReshapeShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> requested, c->InputAsInts(1));
  if (requested.has_value()) {
    ASSIGN_OR_RETURN(TensorShape out, array_internal::ResolveReshape(c->input(0), *requested));
    c->set_output(0, out);
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(c->WithRank(1, 1));
  const int64_t n = VectorLength(c->input(1));
  c->set_output(0,
                n >= 0 ? TensorShape::UnknownOfRank(static_cast<int>(n)) : TensorShape::Unknown());
  return absl::OkStatus();
}

absl::Status CheckPermutation(absl::Span<const int64_t> perm, absl::string_view what) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) {
      return absl::InvalidArgumentError(absl::StrCat(what, " ", IntsDebugString(perm),
                                                     " is not a permutation of 0..",
                                                     static_cast<int64_t>(perm.size()) - 1));
    }
    seen[p] = true;
  }
  return absl::OkStatus();
}

absl::Status TransposeShape(InferenceContext* c) {
  const TensorShape& x = c->input(0);
  RETURN_IF_ERROR(c->WithRank(1, 1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> perm, c->InputAsInts(1));
  if (!perm.has_value()) {
    int64_t rank = x.rank();
    if (rank < 0) rank = VectorLength(c->input(1));
    c->set_output(
        0, rank >= 0 ? TensorShape::UnknownOfRank(static_cast<int>(rank)) : TensorShape::Unknown());
    return absl::OkStatus();
  }
  if (x.rank() >= 0 && static_cast<int64_t>(perm->size()) != x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("Transpose: perm ", IntsDebugString(*perm),
                                                   " has ", perm->size(),
                                                   " entries but x has shape ", x.DebugString()));
  }
  RETURN_IF_ERROR(CheckPermutation(*perm, "Transpose: perm"));
  if (x.rank() < 0) {
    c->set_output(0, TensorShape::UnknownOfRank(static_cast<int>(perm->size())));
    return absl::OkStatus();
  }
  TensorShape y = x;
  for (size_t i = 0; i < perm->size(); ++i) y.set_dim(i, x.dim((*perm)[i]));
  c->set_output(0, y);
  return absl::OkStatus();
}

absl::Status InvertPermutationShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> perm, c->InputAsInts(0));
  if (perm.has_value()) RETURN_IF_ERROR(CheckPermutation(*perm, "InvertPermutation: x"));
  c->set_output(0, c->input(0).rank() < 0 ? TensorShape::UnknownOfRank(1) : c->input(0));
  return absl::OkStatus();
}

absl::Status ExpandDimsShape(InferenceContext* c) {
  const TensorShape& x = c->input(0);
  ASSIGN_OR_RETURN(std::optional<int64_t> dim, ScalarFromInput(c, 1, "ExpandDims: dim"));
  if (x.rank() < 0) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  if (!dim.has_value()) {
    c->set_output(0, TensorShape::UnknownOfRank(x.rank() + 1));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(int64_t d, CanonicalAxis(*dim, x.rank() + 1, "ExpandDims: dim", x));
  TensorShape y = x;
  y.InsertDim(static_cast<int>(d), 1);
  c->set_output(0, y);
  return absl::OkStatus();
}

absl::Status SqueezeShape(InferenceContext* c) {
  const TensorShape& x = c->input(0);
  ASSIGN_OR_RETURN(std::vector<int64_t> squeeze_dims,
                   c->GetAttr<std::vector<int64_t>>("squeeze_dims"));
  if (x.rank() < 0) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<bool> remove(x.rank(), false);
  for (int64_t d : squeeze_dims) {
    ASSIGN_OR_RETURN(int64_t a, CanonicalAxis(d, x.rank(), "Squeeze: squeeze_dims entry", x));
    if (x.dim(a) >= 0 && x.dim(a) != 1) {
      return absl::InvalidArgumentError(absl::StrCat("Can not squeeze dim[", a,
                                                     "], expected a dimension of 1, got ", x.dim(a),
                                                     " (shape ", x.DebugString(), ")"));
    }
    remove[a] = true;
  }
  if (squeeze_dims.empty()) {
    for (int i = 0; i < x.rank(); ++i) {
      if (x.dim(i) < 0) {  // might be 1: the rank is unknown
        c->set_output(0, TensorShape::Unknown());
        return absl::OkStatus();
      }
      remove[i] = x.dim(i) == 1;
    }
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    if (!remove[i]) dims.push_back(x.dim(i));
  }
  c->set_output(0, TensorShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status ShapeShape(InferenceContext* c) {
  const int rank = c->input(0).rank();
  c->set_output(0, TensorShape({rank < 0 ? TensorShape::kUnknownDim : rank}));
  return absl::OkStatus();
}

// ConcatV2 (axis last) and Concat (axis first).
absl::Status ConcatShapeImpl(InferenceContext* c, int first_value, int num_values, int axis_input) {
  int rank = -1;
  int rank_source = -1;
  for (int i = 0; i < num_values; ++i) {
    const TensorShape& s = c->input(first_value + i);
    if (s.rank() < 0) continue;
    if (rank < 0) {
      rank = s.rank();
      rank_source = i;
    } else if (s.rank() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Concat: input ", i, " has shape ", s.DebugString(), " but input ", rank_source,
          " has shape ", c->input(first_value + rank_source).DebugString(), ": ranks differ"));
    }
  }
  if (rank < 0) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  if (rank == 0) {
    return absl::InvalidArgumentError("Concat: can't concatenate scalars (use Pack instead)");
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> axis_value,
                   ScalarFromInput(c, axis_input, "Concat: axis"));
  if (!axis_value.has_value()) {
    c->set_output(0, TensorShape::UnknownOfRank(rank));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(*axis_value, rank, "Concat: axis",
                                               c->input(first_value + rank_source)));
  TensorShape out = TensorShape::UnknownOfRank(rank);
  std::vector<int> dim_source(rank, -1);
  int64_t axis_size = 0;
  for (int i = 0; i < num_values; ++i) {
    const TensorShape& s = c->input(first_value + i);
    if (s.rank() < 0) {
      axis_size = -1;
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      if (d == axis) continue;
      if (s.dim(d) < 0) continue;
      if (out.dim(d) < 0) {
        out.set_dim(d, s.dim(d));
        dim_source[d] = i;
      } else if (out.dim(d) != s.dim(d)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Concat: dimension ", d, " of input ", i, " ", s.DebugString(),
                         " does not match input ", dim_source[d], " ",
                         c->input(first_value + dim_source[d]).DebugString(),
                         " (concatenating along axis ", axis, ")"));
      }
    }
    if (axis_size >= 0) axis_size = s.dim(axis) < 0 ? -1 : axis_size + s.dim(axis);
  }
  out.set_dim(static_cast<int>(axis), axis_size);
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status ConcatV2Shape(InferenceContext* c) {
  const int n = c->num_inputs() - 1;
  return ConcatShapeImpl(c, 0, n, n);
}

absl::Status ConcatShape(InferenceContext* c) {
  return ConcatShapeImpl(c, 1, c->num_inputs() - 1, 0);
}

absl::Status ConcatOffsetShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 0));
  for (int i = 1; i < c->num_inputs(); ++i) {
    RETURN_IF_ERROR(c->WithRank(i, 1));
    c->set_output(i - 1, c->input(i).rank() < 0 ? TensorShape::UnknownOfRank(1) : c->input(i));
  }
  return absl::OkStatus();
}

absl::Status SplitShape(InferenceContext* c) {
  const TensorShape& x = c->input(1);
  ASSIGN_OR_RETURN(int64_t num_split, c->GetAttr<int64_t>("num_split"));
  ASSIGN_OR_RETURN(std::optional<int64_t> axis_value, ScalarFromInput(c, 0, "Split: axis"));
  TensorShape out = TensorShape::Unknown();
  if (x.rank() >= 0 && !axis_value.has_value()) {
    out = TensorShape::UnknownOfRank(x.rank());
  } else if (x.rank() >= 0) {
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(*axis_value, x.rank(), "Split: axis", x));
    out = x;
    const int64_t d = x.dim(axis);
    if (d >= 0 && d % num_split != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Number of ways to split should evenly divide the split dimension, but got split_dim ",
          axis, " (size = ", d, ") and num_split ", num_split, " (shape ", x.DebugString(), ")"));
    }
    out.set_dim(static_cast<int>(axis), d < 0 ? -1 : d / num_split);
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

absl::Status SliceShape(InferenceContext* c) {
  const TensorShape& x = c->input(0);
  RETURN_IF_ERROR(c->WithRank(1, 1));
  RETURN_IF_ERROR(c->WithRank(2, 1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> begin, c->InputAsInts(1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> size, c->InputAsInts(2));
  int64_t rank = x.rank();
  if (rank < 0) rank = begin ? static_cast<int64_t>(begin->size()) : VectorLength(c->input(1));
  if (rank < 0) rank = size ? static_cast<int64_t>(size->size()) : VectorLength(c->input(2));
  if (rank < 0) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  auto length_error = [&](absl::string_view what, size_t n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Slice: ", what, " has ", n, " entries but input has shape ", x.DebugString()));
  };
  if (begin && static_cast<int64_t>(begin->size()) != rank)
    return length_error("begin", begin->size());
  if (size && static_cast<int64_t>(size->size()) != rank) return length_error("size", size->size());
  TensorShape out = TensorShape::UnknownOfRank(static_cast<int>(rank));
  for (int i = 0; i < rank; ++i) {
    const int64_t d = x.rank() >= 0 ? x.dim(i) : -1;
    const int64_t b = begin ? (*begin)[i] : -1;
    const int64_t s = size ? (*size)[i] : -2;  // -2: unknown
    if (begin && (b < 0 || (d >= 0 && b > d))) {
      return absl::InvalidArgumentError(absl::StrCat("Slice: begin[", i, "] = ", b,
                                                     " is out of range [0, ", d, "] for shape ",
                                                     x.DebugString()));
    }
    if (size && s < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Slice: size[", i, "] = ", s, " must be -1 or non-negative"));
    }
    if (begin && size && d >= 0 && s >= 0 && b + s > d) {
      return absl::InvalidArgumentError(absl::StrCat("Slice: begin[", i, "] + size[", i,
                                                     "] = ", b + s, " exceeds dimension ", i,
                                                     " of shape ", x.DebugString()));
    }
    if (s >= 0) {
      out.set_dim(i, s);
    } else if (s == -1 && begin && d >= 0) {
      out.set_dim(i, d - b);
    }
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status PackShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(int64_t axis_attr, c->GetAttr<int64_t>("axis"));
  TensorShape merged = TensorShape::Unknown();
  for (int i = 0; i < c->num_inputs(); ++i) {
    absl::StatusOr<TensorShape> m = merged.Merge(c->input(i));
    if (!m.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Pack: shapes of all inputs must match: values[0] has shape ", c->input(0).DebugString(),
          " but values[", i, "] has shape ", c->input(i).DebugString()));
    }
    merged = *std::move(m);
  }
  if (merged.rank() < 0) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_attr, merged.rank() + 1, "Pack: axis", merged));
  merged.InsertDim(static_cast<int>(axis), c->num_inputs());
  c->set_output(0, merged);
  return absl::OkStatus();
}

absl::Status UnpackShape(InferenceContext* c) {
  const TensorShape& x = c->input(0);
  ASSIGN_OR_RETURN(int64_t axis_attr, c->GetAttr<int64_t>("axis"));
  ASSIGN_OR_RETURN(int64_t num, c->GetAttr<int64_t>("num"));
  TensorShape out = TensorShape::Unknown();
  if (x.rank() >= 0) {
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_attr, x.rank(), "Unpack: axis", x));
    if (x.dim(axis) >= 0 && x.dim(axis) != num) {
      return absl::InvalidArgumentError(absl::StrCat("Unpack: dimension ", axis, " of shape ",
                                                     x.DebugString(), " must be ", num, " (num)"));
    }
    out = x;
    out.RemoveDim(static_cast<int>(axis));
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

absl::Status TileShape(InferenceContext* c) {
  const TensorShape& x = c->input(0);
  RETURN_IF_ERROR(c->WithRank(1, 1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> multiples, c->InputAsInts(1));
  if (!multiples.has_value()) {
    int64_t rank = x.rank() >= 0 ? x.rank() : VectorLength(c->input(1));
    c->set_output(
        0, rank >= 0 ? TensorShape::UnknownOfRank(static_cast<int>(rank)) : TensorShape::Unknown());
    return absl::OkStatus();
  }
  if (x.rank() >= 0 && static_cast<int64_t>(multiples->size()) != x.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tile: multiples ", IntsDebugString(*multiples), " has ", multiples->size(),
                     " entries but input has shape ", x.DebugString()));
  }
  TensorShape out = TensorShape::UnknownOfRank(static_cast<int>(multiples->size()));
  for (size_t i = 0; i < multiples->size(); ++i) {
    const int64_t m = (*multiples)[i];
    if (m < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tile: multiples ", IntsDebugString(*multiples), " must be non-negative"));
    }
    const int64_t d = x.rank() >= 0 ? x.dim(i) : -1;
    if (m == 0) {
      out.set_dim(i, 0);
    } else if (d >= 0) {
      out.set_dim(i, d * m);
    }
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::StatusOr<array_internal::StridedSliceSpec> ReadStridedSliceSpec(InferenceContext* c) {
  array_internal::StridedSliceSpec spec;
  ASSIGN_OR_RETURN(spec.begin_mask, c->GetAttr<int64_t>("begin_mask"));
  ASSIGN_OR_RETURN(spec.end_mask, c->GetAttr<int64_t>("end_mask"));
  ASSIGN_OR_RETURN(spec.ellipsis_mask, c->GetAttr<int64_t>("ellipsis_mask"));
  ASSIGN_OR_RETURN(spec.new_axis_mask, c->GetAttr<int64_t>("new_axis_mask"));
  ASSIGN_OR_RETURN(spec.shrink_axis_mask, c->GetAttr<int64_t>("shrink_axis_mask"));
  return spec;
}

absl::Status StridedSliceShape(InferenceContext* c) {
  const TensorShape& x = c->input(0);
  for (int i = 1; i <= 3; ++i) RETURN_IF_ERROR(c->WithRank(i, 1));
  ASSIGN_OR_RETURN(array_internal::StridedSliceSpec spec, ReadStridedSliceSpec(c));
  if (x.rank() < 0) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> begin, c->InputAsInts(1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> end, c->InputAsInts(2));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> strides, c->InputAsInts(3));
  absl::Status status;
  if (begin && end && strides) {
    absl::StatusOr<array_internal::StridedSlicePlan> plan =
        array_internal::PlanStridedSlice(x, *begin, *end, *strides, spec);
    if (plan.ok()) {
      c->set_output(0, plan->final_shape);
      return absl::OkStatus();
    }
    status = plan.status();
  } else {
    int64_t sparse = VectorLength(c->input(1));
    if (sparse < 0 && begin) sparse = static_cast<int64_t>(begin->size());
    if (sparse < 0 && end) sparse = static_cast<int64_t>(end->size());
    if (sparse < 0 && strides) sparse = static_cast<int64_t>(strides->size());
    if (sparse < 0) {
      c->set_output(0, TensorShape::Unknown());
      return absl::OkStatus();
    }
    absl::StatusOr<TensorShape> shape =
        array_internal::StridedSliceShapeOfRank(x.rank(), static_cast<int>(sparse), spec);
    if (shape.ok()) {
      c->set_output(0, *shape);
      return absl::OkStatus();
    }
    status = shape.status();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(status.message(), " (input shape ", x.DebugString(), ")"));
}

absl::Status StridedSliceGradShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape shape, ShapeFromInput(c, 0));
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status GatherShapeImpl(InferenceContext* c, std::optional<int64_t> axis_value) {
  const TensorShape& params = c->input(0);
  const TensorShape& indices = c->input(1);
  if (params.rank() == 0) {
    return absl::InvalidArgumentError("Gather: params must be at least 1-D, got a scalar");
  }
  if (params.rank() < 0 || indices.rank() < 0 || !axis_value.has_value()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(*axis_value, params.rank(), "Gather: axis", params));
  std::vector<int64_t> dims(params.dims().begin(), params.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), params.dims().begin() + axis + 1, params.dims().end());
  c->set_output(0, TensorShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status GatherV2Shape(InferenceContext* c) {
  ASSIGN_OR_RETURN(int64_t batch_dims, c->GetAttr<int64_t>("batch_dims"));
  if (batch_dims != 0) {
    return absl::UnimplementedError(
        absl::StrCat("GatherV2: batch_dims = ", batch_dims, " is not supported (only 0)"));
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> axis, ScalarFromInput(c, 2, "GatherV2: axis"));
  return GatherShapeImpl(c, axis);
}

absl::Status GatherShape(InferenceContext* c) { return GatherShapeImpl(c, 0); }

absl::Status UnsortedSegmentSumShape(InferenceContext* c) {
  const TensorShape& data = c->input(0);
  const TensorShape& ids = c->input(1);
  ASSIGN_OR_RETURN(std::optional<int64_t> num,
                   ScalarFromInput(c, 2, "UnsortedSegmentSum: num_segments"));
  if (num.has_value() && *num < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("UnsortedSegmentSum: num_segments must be non-negative, got ", *num));
  }
  if (data.rank() < 0 || ids.rank() < 0) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  bool prefix_ok = ids.rank() <= data.rank();
  for (int i = 0; prefix_ok && i < ids.rank(); ++i) {
    prefix_ok = ids.dim(i) < 0 || data.dim(i) < 0 || ids.dim(i) == data.dim(i);
  }
  if (!prefix_ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("UnsortedSegmentSum: segment_ids shape ", ids.DebugString(),
                     " must be a prefix of data shape ", data.DebugString()));
  }
  std::vector<int64_t> dims = {num.value_or(-1)};
  dims.insert(dims.end(), data.dims().begin() + ids.rank(), data.dims().end());
  c->set_output(0, TensorShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status BroadcastGradientArgsShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 1));
  RETURN_IF_ERROR(c->WithRank(1, 1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> s0, c->InputAsInts(0));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> s1, c->InputAsInts(1));
  if (s0 && s1) {
    std::vector<int64_t> r0, r1;
    RETURN_IF_ERROR(array_internal::BroadcastReductionAxes(*s0, *s1, &r0, &r1));
    c->set_output(0, TensorShape({static_cast<int64_t>(r0.size())}));
    c->set_output(1, TensorShape({static_cast<int64_t>(r1.size())}));
    return absl::OkStatus();
  }
  c->set_output(0, TensorShape::UnknownOfRank(1));
  c->set_output(1, TensorShape::UnknownOfRank(1));
  return absl::OkStatus();
}

// ---- Registration ------------------------------------------------------------

// Builds the OpDef and registers it; `defaults` set attr defaults whose text
// form the spec parser need not understand (shapes, lists, strings).
absl::Status Register(OpRegistry* ops, const OpDefBuilder& builder,
                      std::initializer_list<std::pair<const char*, AttrValue>> defaults = {}) {
  ASSIGN_OR_RETURN(OpDef def, builder.Build());
  for (const auto& [name, value] : defaults) {
    bool found = false;
    for (AttrDef& attr : def.attrs) {
      if (attr.name == name) {
        attr.default_value = value;
        found = true;
      }
    }
    if (!found) {
      return absl::InternalError(absl::StrCat(def.name, ": no attr '", name, "' to default"));
    }
  }
  return ops->Register(std::move(def));
}

constexpr char kIndexTypes[] = "{int32, int64}";

std::string IndexAttr(absl::string_view name, bool with_default = true) {
  return absl::StrCat(name, ": ", kIndexTypes, with_default ? " = DT_INT32" : "");
}

AttrValue EmptyIntList() {
  AttrValue v;
  v.mutable_list();
  return v;
}

}  // namespace

absl::Status RegisterArrayOps(OpRegistry* ops) {
  // Constants and feeds.
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Const")
                                    .Output("output: dtype")
                                    .Attr("value: tensor")
                                    .Attr("dtype: type")
                                    .SetShapeFn(ConstShape)));
  RETURN_IF_ERROR(Register(ops,
                           OpDefBuilder("Placeholder")
                               .Output("output: dtype")
                               .Attr("dtype: type")
                               .Attr("shape: shape")
                               .SetShapeFn(PlaceholderShape),
                           {{"shape", MakeAttr(TensorShape::Unknown())}}));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("PlaceholderWithDefault")
                                    .Input("input: dtype")
                                    .Output("output: dtype")
                                    .Attr("dtype: type")
                                    .Attr("shape: shape")
                                    .SetShapeFn(PlaceholderWithDefaultShape)));

  // Identity-like.
  for (const char* name : {"Identity", "StopGradient"}) {
    RETURN_IF_ERROR(Register(ops, OpDefBuilder(name)
                                      .Input("input: T")
                                      .Output("output: T")
                                      .Attr("T: type")
                                      .SetShapeFn(UnchangedShape)));
  }
  RETURN_IF_ERROR(Register(ops,
                           OpDefBuilder("PreventGradient")
                               .Input("input: T")
                               .Output("output: T")
                               .Attr("T: type")
                               .Attr("message: string")
                               .SetShapeFn(UnchangedShape),
                           {{"message", MakeAttr("")}}));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("NoOp")));

  // Creating.
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Fill")
                                    .Input("dims: index_type")
                                    .Input("value: T")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("index_type"))
                                    .SetShapeFn(FillShape)));
  for (const char* name : {"ZerosLike", "OnesLike"}) {
    RETURN_IF_ERROR(
        Register(ops, OpDefBuilder(name).Input("x: T").Output("y: T").Attr("T: type").SetShapeFn(
                          UnchangedShape)));
  }

  // Shapes.
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Reshape")
                                    .Input("tensor: T")
                                    .Input("shape: Tshape")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Tshape"))
                                    .SetShapeFn(ReshapeShape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Transpose")
                                    .Input("x: T")
                                    .Input("perm: Tperm")
                                    .Output("y: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Tperm"))
                                    .SetShapeFn(TransposeShape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("InvertPermutation")
                                    .Input("x: T")
                                    .Output("y: T")
                                    .Attr(IndexAttr("T"))
                                    .SetShapeFn(InvertPermutationShape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("ExpandDims")
                                    .Input("input: T")
                                    .Input("dim: Tdim")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Tdim"))
                                    .SetShapeFn(ExpandDimsShape)));
  RETURN_IF_ERROR(Register(ops,
                           OpDefBuilder("Squeeze")
                               .Input("input: T")
                               .Output("output: T")
                               .Attr("T: type")
                               .Attr("squeeze_dims: list(int)")
                               .SetShapeFn(SqueezeShape),
                           {{"squeeze_dims", EmptyIntList()}}));
  for (const char* name : {"Shape", "Size"}) {
    RETURN_IF_ERROR(
        Register(ops, OpDefBuilder(name)
                          .Input("input: T")
                          .Output("output: out_type")
                          .Attr("T: type")
                          .Attr(IndexAttr("out_type"))
                          .SetShapeFn(std::string_view(name) == "Shape" ? ShapeFn(ShapeShape)
                                                                        : ShapeFn(ScalarShape))));
  }
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Rank")
                                    .Input("input: T")
                                    .Output("output: int32")
                                    .Attr("T: type")
                                    .SetShapeFn(ScalarShape)));

  // Joining and splitting.
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("ConcatV2")
                                    .Input("values: N * T")
                                    .Input("axis: Tidx")
                                    .Output("output: T")
                                    .Attr("N: int >= 2")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Tidx"))
                                    .SetShapeFn(ConcatV2Shape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Concat")
                                    .Input("concat_dim: int32")
                                    .Input("values: N * T")
                                    .Output("output: T")
                                    .Attr("N: int >= 2")
                                    .Attr("T: type")
                                    .SetShapeFn(ConcatShape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("ConcatOffset")
                                    .Input("concat_dim: int32")
                                    .Input("shape: N * shape_type")
                                    .Output("offset: N * shape_type")
                                    .Attr("N: int >= 2")
                                    .Attr(IndexAttr("shape_type"))
                                    .SetShapeFn(ConcatOffsetShape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Split")
                                    .Input("split_dim: int32")
                                    .Input("value: T")
                                    .Output("output: num_split * T")
                                    .Attr("num_split: int >= 1")
                                    .Attr("T: type")
                                    .SetShapeFn(SplitShape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Pack")
                                    .Input("values: N * T")
                                    .Output("output: T")
                                    .Attr("N: int >= 1")
                                    .Attr("T: type")
                                    .Attr("axis: int = 0")
                                    .SetShapeFn(PackShape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Unpack")
                                    .Input("value: T")
                                    .Output("output: num * T")
                                    .Attr("num: int >= 0")
                                    .Attr("T: type")
                                    .Attr("axis: int = 0")
                                    .SetShapeFn(UnpackShape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Tile")
                                    .Input("input: T")
                                    .Input("multiples: Tmultiples")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Tmultiples"))
                                    .SetShapeFn(TileShape)));

  // Indexing.
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Slice")
                                    .Input("input: T")
                                    .Input("begin: Index")
                                    .Input("size: Index")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Index", /*with_default=*/false))
                                    .SetShapeFn(SliceShape)));
  auto add_masks = [](OpDefBuilder& b) -> OpDefBuilder& {
    return b.Attr("begin_mask: int = 0")
        .Attr("end_mask: int = 0")
        .Attr("ellipsis_mask: int = 0")
        .Attr("new_axis_mask: int = 0")
        .Attr("shrink_axis_mask: int = 0");
  };
  {
    OpDefBuilder b("StridedSlice");
    b.Input("input: T")
        .Input("begin: Index")
        .Input("end: Index")
        .Input("strides: Index")
        .Output("output: T")
        .Attr("T: type")
        .Attr(IndexAttr("Index", /*with_default=*/false))
        .SetShapeFn(StridedSliceShape);
    RETURN_IF_ERROR(Register(ops, add_masks(b)));
  }
  {
    OpDefBuilder b("StridedSliceGrad");
    b.Input("shape: Index")
        .Input("begin: Index")
        .Input("end: Index")
        .Input("strides: Index")
        .Input("dy: T")
        .Output("output: T")
        .Attr("T: type")
        .Attr(IndexAttr("Index", /*with_default=*/false))
        .SetShapeFn(StridedSliceGradShape);
    RETURN_IF_ERROR(Register(ops, add_masks(b)));
  }
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("GatherV2")
                                    .Input("params: Tparams")
                                    .Input("indices: Tindices")
                                    .Input("axis: Taxis")
                                    .Output("output: Tparams")
                                    .Attr("batch_dims: int = 0")
                                    .Attr("Tparams: type")
                                    .Attr(IndexAttr("Tindices", /*with_default=*/false))
                                    .Attr(IndexAttr("Taxis", /*with_default=*/false))
                                    .SetShapeFn(GatherV2Shape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("Gather")
                                    .Input("params: Tparams")
                                    .Input("indices: Tindices")
                                    .Output("output: Tparams")
                                    .Attr("validate_indices: bool = true")
                                    .Attr("Tparams: type")
                                    .Attr(IndexAttr("Tindices", /*with_default=*/false))
                                    .SetShapeFn(GatherShape)));
  RETURN_IF_ERROR(
      Register(ops, OpDefBuilder("UnsortedSegmentSum")
                        .Input("data: T")
                        .Input("segment_ids: Tindices")
                        .Input("num_segments: Tnumsegments")
                        .Output("output: T")
                        .Attr("T: {float, double, int32, int64, uint8, int16, int8, uint16, "
                              "half, bfloat16}")
                        .Attr(IndexAttr("Tindices", /*with_default=*/false))
                        .Attr(IndexAttr("Tnumsegments"))
                        .SetShapeFn(UnsortedSegmentSumShape)));
  RETURN_IF_ERROR(Register(ops, OpDefBuilder("BroadcastGradientArgs")
                                    .Input("s0: T")
                                    .Input("s1: T")
                                    .Output("r0: T")
                                    .Output("r1: T")
                                    .Attr(IndexAttr("T"))
                                    .SetShapeFn(BroadcastGradientArgsShape)));
  return absl::OkStatus();
}

// ---- Wrappers ------------------------------------------------------------------

namespace ops {
namespace {

std::string Where(const SourceLocation& loc) {
  return absl::StrCat(loc.file_name(), ":", loc.line());
}

// Pads a multi-output wrapper's result so callers may index it.
std::vector<Output> PadOutputs(std::vector<Output> outputs, int64_t n) {
  if (static_cast<int64_t>(outputs.size()) < n) outputs.resize(n);
  return outputs;
}

int64_t NumElementsOf(const ::tensorflow::TensorShapeProto& shape) {
  int64_t n = 1;
  for (const auto& d : shape.dim()) n *= d.size();
  return n;
}

std::vector<Input> ToInputs(absl::Span<const Output> outputs) {
  return std::vector<Input>(outputs.begin(), outputs.end());
}

}  // namespace

Output Const(const Scope& scope, const Input& value, SourceLocation loc) {
  if (!value.is_literal()) {
    if (value.output().valid()) {
      scope.UpdateStatus(absl::InvalidArgumentError(
          absl::StrCat("Const at ", Where(loc), ": needs a literal value, not the tensor ",
                       value.output().name())));
    }
    return Output();
  }
  const TensorProto& proto = value.literal();
  return scope.Op("Const", loc).Attr("value", proto).Attr("dtype", proto.dtype()).Finalize1();
}

Output Const(const Scope& scope, const Input& value, const TensorShape& shape, SourceLocation loc) {
  if (!value.is_literal()) return Const(scope, value, loc);
  const int64_t n = shape.num_elements();
  TensorProto proto = value.literal();
  const int64_t k = NumElementsOf(proto.tensor_shape());
  if (n < 0 || (k != n && k != 1)) {
    scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
        "Const at ", Where(loc), ": ", k, " value(s) do not fit shape ", shape.DebugString())));
    return Output();
  }
  if (k != n && !proto.tensor_content().empty()) {
    // One value in tensor_content: repeat it (the *_val fields repeat their
    // last value by themselves).
    const std::string one = proto.tensor_content();
    std::string content;
    content.reserve(one.size() * n);
    for (int64_t i = 0; i < n; ++i) content += one;
    proto.set_tensor_content(std::move(content));
  }
  shape.ToProto(proto.mutable_tensor_shape());
  return Const(scope, Input(std::move(proto)), loc);
}

Output Const(const Scope& scope, const Tensor& value, SourceLocation loc) {
  TensorProto proto;
  value.ToProto(&proto);
  return Const(scope, Input(std::move(proto)), loc);
}

Output Placeholder(const Scope& scope, DataType dtype, const PlaceholderAttrs& attrs,
                   SourceLocation loc) {
  return scope.Op("Placeholder", loc).Attr("dtype", dtype).Attr("shape", attrs.shape).Finalize1();
}

Output PlaceholderWithDefault(const Scope& scope, const Input& input, const TensorShape& shape,
                              SourceLocation loc) {
  return scope.Op("PlaceholderWithDefault", loc).Input(input).Attr("shape", shape).Finalize1();
}

Output Identity(const Scope& scope, const Input& input, SourceLocation loc) {
  return scope.Op("Identity", loc).Input(input).Finalize1();
}

Output StopGradient(const Scope& scope, const Input& input, SourceLocation loc) {
  return scope.Op("StopGradient", loc).Input(input).Finalize1();
}

Output PreventGradient(const Scope& scope, const Input& input, const PreventGradientAttrs& attrs,
                       SourceLocation loc) {
  return scope.Op("PreventGradient", loc).Input(input).Attr("message", attrs.message).Finalize1();
}

Node* NoOp(const Scope& scope, SourceLocation loc) { return scope.Op("NoOp", loc).Finalize(); }

Output Fill(const Scope& scope, const Input& dims, const Input& value, SourceLocation loc) {
  return scope.Op("Fill", loc).Input(dims).Input(value).Finalize1();
}

Output ZerosLike(const Scope& scope, const Input& x, SourceLocation loc) {
  return scope.Op("ZerosLike", loc).Input(x).Finalize1();
}

Output OnesLike(const Scope& scope, const Input& x, SourceLocation loc) {
  return scope.Op("OnesLike", loc).Input(x).Finalize1();
}

Output Reshape(const Scope& scope, const Input& tensor, const Input& shape, SourceLocation loc) {
  return scope.Op("Reshape", loc).Input(tensor).Input(shape).Finalize1();
}

Output Transpose(const Scope& scope, const Input& x, const Input& perm, SourceLocation loc) {
  return scope.Op("Transpose", loc).Input(x).Input(perm).Finalize1();
}

Output InvertPermutation(const Scope& scope, const Input& x, SourceLocation loc) {
  return scope.Op("InvertPermutation", loc).Input(x).Finalize1();
}

Output ExpandDims(const Scope& scope, const Input& input, const Input& dim, SourceLocation loc) {
  return scope.Op("ExpandDims", loc).Input(input).Input(dim).Finalize1();
}

Output Squeeze(const Scope& scope, const Input& input, const SqueezeAttrs& attrs,
               SourceLocation loc) {
  return scope.Op("Squeeze", loc).Input(input).Attr("squeeze_dims", attrs.squeeze_dims).Finalize1();
}

Output Shape(const Scope& scope, const Input& input, const ShapeAttrs& attrs, SourceLocation loc) {
  return scope.Op("Shape", loc).Input(input).Attr("out_type", attrs.out_type).Finalize1();
}

Output Size(const Scope& scope, const Input& input, const ShapeAttrs& attrs, SourceLocation loc) {
  return scope.Op("Size", loc).Input(input).Attr("out_type", attrs.out_type).Finalize1();
}

Output Rank(const Scope& scope, const Input& input, SourceLocation loc) {
  return scope.Op("Rank", loc).Input(input).Finalize1();
}

Output ConcatV2(const Scope& scope, std::initializer_list<Input> values, const Input& axis,
                SourceLocation loc) {
  return ConcatV2(scope, absl::Span<const Input>(values.begin(), values.size()), axis, loc);
}

Output ConcatV2(const Scope& scope, absl::Span<const Input> values, const Input& axis,
                SourceLocation loc) {
  return scope.Op("ConcatV2", loc).InputList(values).Input(axis).Finalize1();
}

Output ConcatV2(const Scope& scope, absl::Span<const Output> values, const Input& axis,
                SourceLocation loc) {
  std::vector<Input> inputs = ToInputs(values);
  return ConcatV2(scope, absl::Span<const Input>(inputs), axis, loc);
}

std::vector<Output> ConcatOffset(const Scope& scope, const Input& concat_dim,
                                 absl::Span<const Output> shapes, SourceLocation loc) {
  return PadOutputs(scope.Op("ConcatOffset", loc).Input(concat_dim).InputList(shapes).FinalizeAll(),
                    static_cast<int64_t>(shapes.size()));
}

std::vector<Output> Split(const Scope& scope, const Input& axis, const Input& value,
                          int64_t num_split, SourceLocation loc) {
  return PadOutputs(
      scope.Op("Split", loc).Input(axis).Input(value).Attr("num_split", num_split).FinalizeAll(),
      num_split);
}

Output Pack(const Scope& scope, std::initializer_list<Input> values, const PackAttrs& attrs,
            SourceLocation loc) {
  return Pack(scope, absl::Span<const Input>(values.begin(), values.size()), attrs, loc);
}

Output Pack(const Scope& scope, absl::Span<const Input> values, const PackAttrs& attrs,
            SourceLocation loc) {
  return scope.Op("Pack", loc).InputList(values).Attr("axis", attrs.axis).Finalize1();
}

Output Pack(const Scope& scope, absl::Span<const Output> values, const PackAttrs& attrs,
            SourceLocation loc) {
  std::vector<Input> inputs = ToInputs(values);
  return Pack(scope, absl::Span<const Input>(inputs), attrs, loc);
}

std::vector<Output> Unpack(const Scope& scope, const Input& value, int64_t num,
                           const PackAttrs& attrs, SourceLocation loc) {
  return PadOutputs(
      scope.Op("Unpack", loc).Input(value).Attr("num", num).Attr("axis", attrs.axis).FinalizeAll(),
      num);
}

Output Tile(const Scope& scope, const Input& input, const Input& multiples, SourceLocation loc) {
  return scope.Op("Tile", loc).Input(input).Input(multiples).Finalize1();
}

Output Slice(const Scope& scope, const Input& input, const Input& begin, const Input& size,
             SourceLocation loc) {
  return scope.Op("Slice", loc).Input(input).Input(begin).Input(size).Finalize1();
}

namespace {
OpBuilder& SetMasks(OpBuilder& b, const StridedSliceAttrs& a) {
  return b.Attr("begin_mask", a.begin_mask)
      .Attr("end_mask", a.end_mask)
      .Attr("ellipsis_mask", a.ellipsis_mask)
      .Attr("new_axis_mask", a.new_axis_mask)
      .Attr("shrink_axis_mask", a.shrink_axis_mask);
}
}  // namespace

Output StridedSlice(const Scope& scope, const Input& input, const Input& begin, const Input& end,
                    const Input& strides, const StridedSliceAttrs& attrs, SourceLocation loc) {
  OpBuilder b = scope.Op("StridedSlice", loc);
  b.Input(input).Input(begin).Input(end).Input(strides);
  return SetMasks(b, attrs).Finalize1();
}

Output StridedSliceGrad(const Scope& scope, const Input& shape, const Input& begin,
                        const Input& end, const Input& strides, const Input& dy,
                        const StridedSliceAttrs& attrs, SourceLocation loc) {
  OpBuilder b = scope.Op("StridedSliceGrad", loc);
  b.Input(shape).Input(begin).Input(end).Input(strides).Input(dy);
  return SetMasks(b, attrs).Finalize1();
}

Output GatherV2(const Scope& scope, const Input& params, const Input& indices, const Input& axis,
                const GatherV2Attrs& attrs, SourceLocation loc) {
  return scope.Op("GatherV2", loc)
      .Input(params)
      .Input(indices)
      .Input(axis)
      .Attr("batch_dims", attrs.batch_dims)
      .Finalize1();
}

Output UnsortedSegmentSum(const Scope& scope, const Input& data, const Input& segment_ids,
                          const Input& num_segments, SourceLocation loc) {
  return scope.Op("UnsortedSegmentSum", loc)
      .Input(data)
      .Input(segment_ids)
      .Input(num_segments)
      .Finalize1();
}

BroadcastGradientArgsOutputs BroadcastGradientArgs(const Scope& scope, const Input& s0,
                                                   const Input& s1, SourceLocation loc) {
  std::vector<Output> outs =
      PadOutputs(scope.Op("BroadcastGradientArgs", loc).Input(s0).Input(s1).FinalizeAll(), 2);
  return {outs[0], outs[1]};
}

}  // namespace ops
}  // namespace sluice
