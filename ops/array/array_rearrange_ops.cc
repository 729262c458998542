#include "ops/array/array_rearrange_ops.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

constexpr const char* kModeAttr = "mode: {'REFLECT', 'SYMMETRIC'}";

// ---- Shapes ----------------------------------------------------------------------

// MirrorPad (grow) and MirrorPadGrad (shrink) by constant paddings [rank, 2].
absl::Status MirrorPadShape(InferenceContext* c, int sign) {
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
      return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": paddings must be [",
                                                     in.rank(), ", 2] for an input of shape ",
                                                     in.DebugString()));
    }
    for (int i = 0; i < in.rank(); ++i) {
      if (in.dim(i) >= 0) out.set_dim(i, in.dim(i) + sign * ((*pads)[2 * i] + (*pads)[2 * i + 1]));
    }
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

// SpaceToBatchND (to_batch) and BatchToSpaceND with constant block_shape
// and paddings/crops: the exact shape; otherwise the rank only.
absl::Status SpaceBatchShape(InferenceContext* c, bool to_batch) {
  RETURN_IF_ERROR(c->WithRank(1, 1));
  RETURN_IF_ERROR(c->WithRank(2, 2));
  const TensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  TensorShape out = TensorShape::UnknownOfRank(in.rank());
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> block, c->InputAsInts(1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> pads, c->InputAsInts(2));
  const bool known = block.has_value() && pads.has_value() &&
                     pads->size() == 2 * block->size() &&
                     static_cast<int>(block->size()) < in.rank();
  if (known) {
    int64_t prod = 1;
    for (int64_t b : *block) prod *= b;
    for (int d = static_cast<int>(block->size()) + 1; d < in.rank(); ++d) out.set_dim(d, in.dim(d));
    if (in.dim(0) >= 0 && prod > 0) out.set_dim(0, to_batch ? in.dim(0) * prod : in.dim(0) / prod);
    for (size_t k = 0; k < block->size(); ++k) {
      const int64_t dim = in.dim(static_cast<int>(k) + 1);
      const int64_t b = (*block)[k], around = (*pads)[2 * k] + (*pads)[2 * k + 1];
      if (dim < 0 || b <= 0) continue;
      out.set_dim(static_cast<int>(k) + 1, to_batch ? (dim + around) / b : dim * b - around);
    }
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status ReverseSequenceShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(1, 1));
  ASSIGN_OR_RETURN(int64_t seq_dim, c->GetAttr<int64_t>("seq_dim"));
  ASSIGN_OR_RETURN(int64_t batch_dim, c->GetAttr<int64_t>("batch_dim"));
  const TensorShape& in = c->input(0);
  if (seq_dim == batch_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReverseSequence: seq_dim and batch_dim are both ", seq_dim));
  }
  if (!in.unknown_rank() && (seq_dim < 0 || seq_dim >= in.rank() || batch_dim < 0 ||
                             batch_dim >= in.rank())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ReverseSequence: seq_dim ", seq_dim, " and batch_dim ", batch_dim,
        " must be in [0, ", in.rank(), ") for an input of shape ", in.DebugString()));
  }
  c->set_output(0, in);
  return absl::OkStatus();
}

absl::Status ParallelConcatShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape shape, c->GetAttr<TensorShape>("shape"));
  if (!shape.IsFullyDefined() || shape.rank() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ParallelConcat: the shape attr must be fully defined and at least 1-D, got ",
        shape.DebugString()));
  }
  for (int i = 0; i < c->num_inputs(); ++i) {
    const TensorShape& v = c->input(i);
    if (!v.unknown_rank() && (v.rank() < 1 || (v.dim(0) >= 0 && v.dim(0) != 1))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ParallelConcat: each value must have shape [1, ...], got ", v.DebugString()));
    }
  }
  c->set_output(0, shape);
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterArrayRearrangeOps(OpRegistry* ops) {
  for (const char* name : {"MirrorPad", "MirrorPadGrad"}) {
    const int sign = std::string(name) == "MirrorPad" ? 1 : -1;
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("input: T")
                                      .Input("paddings: Tpaddings")
                                      .Output("output: T")
                                      .Attr("T: type")
                                      .Attr("Tpaddings: {int32, int64} = int32")
                                      .Attr(kModeAttr)
                                      .SetShapeFn([sign](InferenceContext* c) {
                                        return MirrorPadShape(c, sign);
                                      })));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SpaceToBatchND")
                                    .Input("input: T")
                                    .Input("block_shape: Tblock_shape")
                                    .Input("paddings: Tpaddings")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr("Tblock_shape: {int32, int64} = int32")
                                    .Attr("Tpaddings: {int32, int64} = int32")
                                    .SetShapeFn([](InferenceContext* c) {
                                      return SpaceBatchShape(c, /*to_batch=*/true);
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("BatchToSpaceND")
                                    .Input("input: T")
                                    .Input("block_shape: Tblock_shape")
                                    .Input("crops: Tcrops")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr("Tblock_shape: {int32, int64} = int32")
                                    .Attr("Tcrops: {int32, int64} = int32")
                                    .SetShapeFn([](InferenceContext* c) {
                                      return SpaceBatchShape(c, /*to_batch=*/false);
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ReverseSequence")
                                    .Input("input: T")
                                    .Input("seq_lengths: Tlen")
                                    .Output("output: T")
                                    .Attr("seq_dim: int")
                                    .Attr("batch_dim: int = 0")
                                    .Attr("T: type")
                                    .Attr("Tlen: {int32, int64} = int64")
                                    .SetShapeFn(ReverseSequenceShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ParallelConcat")
                                    .Input("values: N * T")
                                    .Output("output: T")
                                    .Attr("N: int >= 1")
                                    .Attr("T: type")
                                    .Attr("shape: shape")
                                    .SetShapeFn(ParallelConcatShape)));
  return absl::OkStatus();
}

namespace ops {

Output MirrorPad(const Scope& scope, Input input, Input paddings, const std::string& mode,
                 std::source_location loc) {
  return scope.Op("MirrorPad", loc).Input(input).Input(paddings).Attr("mode", mode).Finalize1();
}

Output MirrorPadGrad(const Scope& scope, Input input, Input paddings, const std::string& mode,
                     std::source_location loc) {
  return scope.Op("MirrorPadGrad", loc).Input(input).Input(paddings).Attr("mode", mode).Finalize1();
}

Output SpaceToBatchND(const Scope& scope, Input input, Input block_shape, Input paddings,
                      std::source_location loc) {
  return scope.Op("SpaceToBatchND", loc).Input(input).Input(block_shape).Input(paddings).Finalize1();
}

Output BatchToSpaceND(const Scope& scope, Input input, Input block_shape, Input crops,
                      std::source_location loc) {
  return scope.Op("BatchToSpaceND", loc).Input(input).Input(block_shape).Input(crops).Finalize1();
}

Output ReverseSequence(const Scope& scope, Input input, Input seq_lengths, int64_t seq_dim,
                       const ReverseSequenceAttrs& attrs, std::source_location loc) {
  return scope.Op("ReverseSequence", loc)
      .Input(input)
      .Input(seq_lengths)
      .Attr("seq_dim", seq_dim)
      .Attr("batch_dim", attrs.batch_dim)
      .Finalize1();
}

Output ParallelConcat(const Scope& scope, absl::Span<const Output> values,
                      const TensorShape& shape, std::source_location loc) {
  return scope.Op("ParallelConcat", loc).InputList(values).Attr("shape", shape).Finalize1();
}

}  // namespace ops
}  // namespace sluice
