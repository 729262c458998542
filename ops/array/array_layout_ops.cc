#include "ops/array/array_layout_ops.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/array_shape_fns.h"

namespace sluice {
namespace {

// ---- Shapes ----------------------------------------------------------------------

absl::Status PadShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(1, 2));
  const TensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  TensorShape out = TensorShape::UnknownOfRank(in.rank());
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> pads, c->InputAsInts(1));
  if (pads.has_value()) {
    if (pads->size() != 2 * static_cast<size_t>(in.rank())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "paddings must be [", in.rank(), ", 2] for an input of shape ", in.DebugString()));
    }
    for (int i = 0; i < in.rank(); ++i) {
      if (in.dim(i) >= 0) out.set_dim(i, in.dim(i) + (*pads)[2 * i] + (*pads)[2 * i + 1]);
    }
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status SplitVShape(InferenceContext* c) {
  const TensorShape& in = c->input(0);
  for (int i = 0; i < c->num_outputs(); ++i) {
    c->set_output(i, in.unknown_rank() ? TensorShape::Unknown() : TensorShape::UnknownOfRank(in.rank()));
  }
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> sizes, c->InputAsInts(1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axis, c->InputAsInts(2));
  if (in.unknown_rank() || !sizes.has_value() || !axis.has_value() || axis->size() != 1) {
    return absl::OkStatus();
  }
  int64_t a = (*axis)[0];
  if (a < 0) a += in.rank();
  if (a < 0 || a >= in.rank() || static_cast<int>(sizes->size()) != c->num_outputs()) {
    return absl::OkStatus();  // the kernel reports it with the values
  }
  for (int i = 0; i < c->num_outputs(); ++i) {
    TensorShape out = in;
    out.set_dim(static_cast<int>(a), (*sizes)[i] >= 0 ? (*sizes)[i] : TensorShape::kUnknownDim);
    c->set_output(i, out);
  }
  return absl::OkStatus();
}

absl::Status ShapeNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) {
    const TensorShape& in = c->input(i);
    c->set_output(i, TensorShape({in.unknown_rank() ? TensorShape::kUnknownDim : in.rank()}));
  }
  return absl::OkStatus();
}

absl::Status OneHotShape(InferenceContext* c) {
  const TensorShape& in = c->input(0);
  ASSIGN_OR_RETURN(int64_t axis, c->GetAttr<int64_t>("axis"));
  if (axis < -1) return absl::InvalidArgumentError(absl::StrCat("OneHot: axis ", axis, " < -1"));
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  if (axis > in.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("OneHot: axis ", axis, " is past the rank ",
                                                   in.rank(), " of the indices"));
  }
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> depth, c->InputAsInts(1));
  TensorShape out = in;
  out.InsertDim(axis == -1 ? in.rank() : static_cast<int>(axis),
                depth.has_value() && depth->size() == 1 ? (*depth)[0] : TensorShape::kUnknownDim);
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status WhereShape(InferenceContext* c) {
  const TensorShape& in = c->input(0);
  c->set_output(0, TensorShape({TensorShape::kUnknownDim,
                                in.unknown_rank() ? TensorShape::kUnknownDim : in.rank()}));
  return absl::OkStatus();
}

// SpaceToDepth (depth grows) and DepthToSpace (space grows).
absl::Status BlockShape(InferenceContext* c, bool to_depth) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  ASSIGN_OR_RETURN(int64_t bs, c->GetAttr<int64_t>("block_size"));
  const TensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape::UnknownOfRank(4));
    return absl::OkStatus();
  }
  auto scaled = [&](int64_t d, bool up) {
    if (d < 0) return TensorShape::kUnknownDim;
    return up ? d * bs : d / bs;
  };
  c->set_output(0, TensorShape({in.dim(0), scaled(in.dim(1), !to_depth), scaled(in.dim(2), !to_depth),
                                to_depth ? scaled(in.dim(3), true)
                                         : (in.dim(3) < 0 ? TensorShape::kUnknownDim
                                                          : in.dim(3) / (bs * bs))}));
  return absl::OkStatus();
}

absl::Status MatrixDiagShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  TensorShape out = c->input(0);
  if (!out.unknown_rank()) out.AddDim(out.dim(out.rank() - 1));
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status MatrixDiagPartShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  TensorShape out = c->input(0);
  if (!out.unknown_rank()) {
    const int64_t m = out.dim(out.rank() - 2), n = out.dim(out.rank() - 1);
    out.RemoveDim(out.rank() - 1);
    out.set_dim(out.rank() - 1, m < 0 || n < 0 ? TensorShape::kUnknownDim : std::min(m, n));
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterArrayLayoutOps(OpRegistry* ops) {
  for (const char* name : {"SpaceToDepth", "DepthToSpace"}) {
    const bool to_depth = std::string(name) == "SpaceToDepth";
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("input: T")
                                      .Output("output: T")
                                      .Attr("T: type")
                                      .Attr("block_size: int >= 2")
                                      .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
                                      .SetShapeFn([to_depth](InferenceContext* c) {
                                        return BlockShape(c, to_depth);
                                      })));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MatrixDiag")
                                    .Input("diagonal: T")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .SetShapeFn(MatrixDiagShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MatrixDiagPart")
                                    .Input("input: T")
                                    .Output("diagonal: T")
                                    .Attr("T: type")
                                    .SetShapeFn(MatrixDiagPartShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Pad")
                                    .Input("input: T")
                                    .Input("paddings: Tpaddings")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr("Tpaddings: {int32, int64} = int32")
                                    .SetShapeFn(PadShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("PadV2")
                                    .Input("input: T")
                                    .Input("paddings: Tpaddings")
                                    .Input("constant_values: T")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr("Tpaddings: {int32, int64} = int32")
                                    .SetShapeFn(PadShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ReverseV2")
                                    .Input("tensor: T")
                                    .Input("axis: Tidx")
                                    .Output("output: T")
                                    .Attr("Tidx: {int32, int64} = int32")
                                    .Attr("T: type")
                                    .SetShapeFn(internal::UnchangedShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Reverse")
                                    .Input("tensor: T")
                                    .Input("dims: bool")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .SetShapeFn(internal::UnchangedShape)));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("Diag")
          .Input("diagonal: T")
          .Output("output: T")
          .Attr("T: {bfloat16, half, float, double, int32, int64}")
          .SetShapeFn([](InferenceContext* c) {
            const TensorShape& d = c->input(0);
            if (d.unknown_rank()) {
              c->set_output(0, TensorShape::Unknown());
              return absl::OkStatus();
            }
            std::vector<int64_t> dims = d.dims();
            dims.insert(dims.end(), d.dims().begin(), d.dims().end());
            c->set_output(0, TensorShape(dims));
            return absl::OkStatus();
          })));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("DiagPart")
          .Input("input: T")
          .Output("diagonal: T")
          .Attr("T: {bfloat16, half, float, double, int32, int64}")
          .SetShapeFn([](InferenceContext* c) -> absl::Status {
            const TensorShape& x = c->input(0);
            if (x.unknown_rank()) {
              c->set_output(0, TensorShape::Unknown());
              return absl::OkStatus();
            }
            if (x.rank() == 0 || x.rank() % 2 != 0) {
              return absl::InvalidArgumentError(absl::StrCat(
                  "DiagPart: the rank of the input must be even and positive, got ",
                  x.DebugString()));
            }
            std::vector<int64_t> half(x.dims().begin(), x.dims().begin() + x.rank() / 2);
            for (int i = 0; i < x.rank() / 2; ++i) {
              if (half[i] < 0) half[i] = x.dim(i + x.rank() / 2);
            }
            c->set_output(0, TensorShape(half));
            return absl::OkStatus();
          })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SplitV")
                                    .Input("value: T")
                                    .Input("size_splits: Tlen")
                                    .Input("split_dim: int32")
                                    .Output("output: num_split * T")
                                    .Attr("num_split: int >= 1")
                                    .Attr("T: type")
                                    .Attr("Tlen: {int32, int64} = int64")
                                    .SetShapeFn(SplitVShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ShapeN")
                                    .Input("input: N * T")
                                    .Output("output: N * out_type")
                                    .Attr("N: int >= 1")
                                    .Attr("T: type")
                                    .Attr("out_type: {int32, int64} = int32")
                                    .SetShapeFn(ShapeNShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("OneHot")
                                    .Input("indices: TI")
                                    .Input("depth: int32")
                                    .Input("on_value: T")
                                    .Input("off_value: T")
                                    .Output("output: T")
                                    .Attr("axis: int = -1")
                                    .Attr("T: type")
                                    .Attr("TI: {uint8, int32, int64} = int64")
                                    .SetShapeFn(OneHotShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Where")
                                    .Input("input: T")
                                    .Output("index: int64")
                                    .Attr("T: {float, double, int32, uint8, int16, int8, int64, "
                                          "bfloat16, uint16, half, bool} = bool")
                                    .SetShapeFn(WhereShape)));
  return absl::OkStatus();
}

namespace ops {

Output Pad(const Scope& scope, Input input, Input paddings, std::source_location loc) {
  return scope.Op("Pad", loc).Input(input).Input(paddings).Finalize1();
}

Output PadV2(const Scope& scope, Input input, Input paddings, Input constant_values,
             std::source_location loc) {
  return scope.Op("PadV2", loc).Input(input).Input(paddings).Input(constant_values).Finalize1();
}

Output ReverseV2(const Scope& scope, Input tensor, Input axis, std::source_location loc) {
  return scope.Op("ReverseV2", loc).Input(tensor).Input(axis).Finalize1();
}

std::vector<Output> SplitV(const Scope& scope, Input value, Input size_splits, Input axis,
                           int64_t num_split, std::source_location loc) {
  std::vector<Output> out = scope.Op("SplitV", loc)
                                .Input(value)
                                .Input(size_splits)
                                .Input(axis)
                                .Attr("num_split", num_split)
                                .FinalizeAll();
  out.resize(static_cast<size_t>(num_split > 0 ? num_split : 0));
  return out;
}

std::vector<Output> ShapeN(const Scope& scope, absl::Span<const Output> inputs,
                           std::source_location loc) {
  std::vector<Output> out = scope.Op("ShapeN", loc).InputList(inputs).FinalizeAll();
  out.resize(inputs.size());
  return out;
}

Output OneHot(const Scope& scope, Input indices, Input depth, Input on_value, Input off_value,
              const OneHotAttrs& attrs, std::source_location loc) {
  return scope.Op("OneHot", loc)
      .Input(indices)
      .Input(depth)
      .Input(on_value)
      .Input(off_value)
      .Attr("axis", attrs.axis)
      .Finalize1();
}

Output Where(const Scope& scope, Input condition, std::source_location loc) {
  return scope.Op("Where", loc).Input(condition).Finalize1();
}

Output SpaceToDepth(const Scope& scope, Input input, int64_t block_size, std::source_location loc) {
  return scope.Op("SpaceToDepth", loc).Input(input).Attr("block_size", block_size).Finalize1();
}

Output DepthToSpace(const Scope& scope, Input input, int64_t block_size, std::source_location loc) {
  return scope.Op("DepthToSpace", loc).Input(input).Attr("block_size", block_size).Finalize1();
}

Output MatrixDiag(const Scope& scope, Input diagonal, std::source_location loc) {
  return scope.Op("MatrixDiag", loc).Input(diagonal).Finalize1();
}

Output Reverse(const Scope& scope, Input tensor, Input dims, std::source_location loc) {
  return scope.Op("Reverse", loc).Input(tensor).Input(dims).Finalize1();
}

Output Diag(const Scope& scope, Input diagonal, std::source_location loc) {
  return scope.Op("Diag", loc).Input(diagonal).Finalize1();
}

Output DiagPart(const Scope& scope, Input input, std::source_location loc) {
  return scope.Op("DiagPart", loc).Input(input).Finalize1();
}

Output MatrixDiagPart(const Scope& scope, Input input, std::source_location loc) {
  return scope.Op("MatrixDiagPart", loc).Input(input).Finalize1();
}

}  // namespace ops
}  // namespace sluice
