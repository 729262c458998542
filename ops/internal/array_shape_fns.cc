// Shape functions of the array ops (see array_shape_fns.h).
#include "ops/internal/array_shape_fns.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/attr_value.h"
#include "graph/proto/tensor.pb.h"
#include "base/status_macros.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "ops/internal/array_util.h"

namespace sluice {
namespace internal {
namespace {

using ::tensorflow::TensorProto;

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
    if (v->size() > TensorShape::kMaxRank) {
      return absl::InvalidArgumentError(absl::StrCat("a shape of ", v->size(),
                                                     " dimensions is above the maximum rank ",
                                                     TensorShape::kMaxRank));
    }
    return TensorShape(absl::MakeConstSpan(*v));
  }
  const int64_t n = VectorLength(c->input(i));
  return n >= 0 ? TensorShape::UnknownOfRank(n) : TensorShape::Unknown();
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
  if (rank < 0 || rank > TensorShape::kMaxRank) {
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

absl::StatusOr<StridedSliceSpec> ReadStridedSliceSpec(InferenceContext* c) {
  StridedSliceSpec spec;
  ASSIGN_OR_RETURN(spec.begin_mask, c->GetAttr<int64_t>("begin_mask"));
  ASSIGN_OR_RETURN(spec.end_mask, c->GetAttr<int64_t>("end_mask"));
  ASSIGN_OR_RETURN(spec.ellipsis_mask, c->GetAttr<int64_t>("ellipsis_mask"));
  ASSIGN_OR_RETURN(spec.new_axis_mask, c->GetAttr<int64_t>("new_axis_mask"));
  ASSIGN_OR_RETURN(spec.shrink_axis_mask, c->GetAttr<int64_t>("shrink_axis_mask"));
  return spec;
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

}  // namespace

absl::Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext* c) {
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

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
    ASSIGN_OR_RETURN(TensorShape out, ResolveReshape(c->input(0), *requested));
    c->set_output(0, out);
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(c->WithRank(1, 1));
  const int64_t n = VectorLength(c->input(1));
  c->set_output(0,
                n >= 0 ? TensorShape::UnknownOfRank(n) : TensorShape::Unknown());
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
        0, rank >= 0 ? TensorShape::UnknownOfRank(rank) : TensorShape::Unknown());
    return absl::OkStatus();
  }
  if (x.rank() >= 0 && static_cast<int64_t>(perm->size()) != x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("Transpose: perm ", IntsDebugString(*perm),
                                                   " has ", perm->size(),
                                                   " entries but x has shape ", x.DebugString()));
  }
  RETURN_IF_ERROR(CheckPermutation(*perm, "Transpose: perm"));
  if (x.rank() < 0) {
    c->set_output(0, TensorShape::UnknownOfRank(perm->size()));
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
  TensorShape out = TensorShape::UnknownOfRank(rank);
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
        0, rank >= 0 ? TensorShape::UnknownOfRank(rank) : TensorShape::Unknown());
    return absl::OkStatus();
  }
  if (x.rank() >= 0 && static_cast<int64_t>(multiples->size()) != x.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tile: multiples ", IntsDebugString(*multiples), " has ", multiples->size(),
                     " entries but input has shape ", x.DebugString()));
  }
  if (multiples->size() > TensorShape::kMaxRank) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  TensorShape out = TensorShape::UnknownOfRank(multiples->size());
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

absl::Status StridedSliceShape(InferenceContext* c) {
  const TensorShape& x = c->input(0);
  for (int i = 1; i <= 3; ++i) RETURN_IF_ERROR(c->WithRank(i, 1));
  ASSIGN_OR_RETURN(StridedSliceSpec spec, ReadStridedSliceSpec(c));
  if (x.rank() < 0) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> begin, c->InputAsInts(1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> end, c->InputAsInts(2));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> strides, c->InputAsInts(3));
  absl::Status status;
  if (begin && end && strides) {
    absl::StatusOr<StridedSlicePlan> plan = PlanStridedSlice(x, *begin, *end, *strides, spec);
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
        StridedSliceShapeOfRank(x.rank(), static_cast<int>(sparse), spec);
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
  const std::string& op = c->node().op();
  const TensorShape& data = c->input(0);
  const TensorShape& ids = c->input(1);
  ASSIGN_OR_RETURN(std::optional<int64_t> num,
                   ScalarFromInput(c, 2, absl::StrCat(op, ": num_segments")));
  if (num.has_value() && *num < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": num_segments must be non-negative, got ", *num));
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
        absl::StrCat(op, ": segment_ids shape ", ids.DebugString(),
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
    RETURN_IF_ERROR(BroadcastReductionAxes(*s0, *s1, &r0, &r1));
    c->set_output(0, TensorShape({static_cast<int64_t>(r0.size())}));
    c->set_output(1, TensorShape({static_cast<int64_t>(r1.size())}));
    return absl::OkStatus();
  }
  c->set_output(0, TensorShape::UnknownOfRank(1));
  c->set_output(1, TensorShape::UnknownOfRank(1));
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace sluice
