#include "ops/array/index_ops.h"

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

constexpr const char* kRealTypes =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half}";

// ---- Shapes ----------------------------------------------------------------------

TensorShape UnknownVector() { return TensorShape({TensorShape::kUnknownDim}); }

absl::Status UniqueShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 1));
  c->set_output(0, UnknownVector());
  c->set_output(1, c->input(0));
  return absl::OkStatus();
}

absl::Status ListDiffShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 1));
  RETURN_IF_ERROR(c->WithRank(1, 1));
  c->set_output(0, UnknownVector());
  c->set_output(1, UnknownVector());
  return absl::OkStatus();
}

// [max index + 1 when every index is a constant] + data[0]'s dims past
// indices[0]'s rank.
absl::Status StitchShape(InferenceContext* c) {
  const int n = c->num_inputs() / 2;
  int64_t rows = 0;
  for (int i = 0; i < n && rows >= 0; ++i) {
    ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> idx, c->InputAsInts(i));
    if (!idx.has_value()) {
      rows = TensorShape::kUnknownDim;
      break;
    }
    for (int64_t v : *idx) rows = std::max(rows, v + 1);
  }
  const TensorShape& indices = c->input(0);
  const TensorShape& data = c->input(n);
  if (indices.unknown_rank() || data.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  if (data.rank() < indices.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": data[0].shape ", data.DebugString(),
        " does not start with indices[0].shape ", indices.DebugString()));
  }
  TensorShape out({rows});
  for (int d = indices.rank(); d < data.rank(); ++d) out.AddDim(data.dim(d));
  c->set_output(0, out);
  return absl::OkStatus();
}

// Each partition: [unknown] + data's dims past partitions' rank.
absl::Status PartitionShape(InferenceContext* c) {
  const TensorShape& data = c->input(0);
  const TensorShape& parts = c->input(1);
  TensorShape out = TensorShape::Unknown();
  if (!data.unknown_rank() && !parts.unknown_rank()) {
    if (data.rank() < parts.rank()) {
      return absl::InvalidArgumentError(
          absl::StrCat("DynamicPartition: data.shape ", data.DebugString(),
                       " does not start with partitions.shape ", parts.DebugString()));
    }
    out = UnknownVector();
    for (int d = parts.rank(); d < data.rank(); ++d) out.AddDim(data.dim(d));
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

// indices.shape[:-1] + params.shape[indices.shape[-1]:].
absl::Status GatherNdShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(1, 1));
  const TensorShape& params = c->input(0);
  const TensorShape& indices = c->input(1);
  if (params.unknown_rank() || indices.unknown_rank() || indices.dim(indices.rank() - 1) < 0) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  const int64_t depth = indices.dim(indices.rank() - 1);
  if (depth > params.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GatherNd: indices.shape[-1] = ", depth, " must be <= the rank of params ",
        params.DebugString()));
  }
  TensorShape out = indices;
  out.RemoveDim(out.rank() - 1);
  for (int d = static_cast<int>(depth); d < params.rank(); ++d) out.AddDim(params.dim(d));
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status ScatterNdShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  RETURN_IF_ERROR(c->WithRank(2, 1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shape, c->InputAsInts(2));
  if (shape.has_value()) {
    c->set_output(0, TensorShape(absl::MakeConstSpan(*shape)));
  } else {
    const int64_t rank = c->input(2).unknown_rank() ? -1 : c->input(2).dim(0);
    c->set_output(0, rank < 0 ? TensorShape::Unknown() : TensorShape::UnknownOfRank(rank));
  }
  return absl::OkStatus();
}

absl::Status TopKShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  RETURN_IF_ERROR(c->WithRank(1, 0));
  TensorShape out = c->input(0);
  if (!out.unknown_rank()) {
    ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> k, c->InputAsInts(1));
    const int64_t last = out.dim(out.rank() - 1);
    if (k.has_value() && k->size() == 1) {
      if ((*k)[0] < 0) {
        return absl::InvalidArgumentError(absl::StrCat("TopKV2: k = ", (*k)[0], " < 0"));
      }
      if (last >= 0 && last < (*k)[0]) {
        return absl::InvalidArgumentError(absl::StrCat("TopKV2: input ", out.DebugString(),
                                                       " must have at least k = ", (*k)[0],
                                                       " columns"));
      }
    }
    out.set_dim(out.rank() - 1, k.has_value() && k->size() == 1 ? (*k)[0]
                                                                 : TensorShape::kUnknownDim);
  }
  c->set_output(0, out);
  c->set_output(1, out);
  return absl::OkStatus();
}

absl::Status InTopKShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 2));
  RETURN_IF_ERROR(c->WithRank(1, 1));
  RETURN_IF_ERROR(c->WithRank(2, 0));
  const TensorShape& p = c->input(0);
  const TensorShape& t = c->input(1);
  int64_t batch = p.unknown_rank() ? TensorShape::kUnknownDim : p.dim(0);
  if (!t.unknown_rank() && t.dim(0) >= 0) {
    if (batch >= 0 && batch != t.dim(0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("InTopKV2: predictions ", p.DebugString(), " and targets ",
                       t.DebugString(), " must have the same batch size"));
    }
    batch = t.dim(0);
  }
  c->set_output(0, TensorShape({batch}));
  return absl::OkStatus();
}

OpDefBuilder StitchDef(const char* name) {
  return OpDefBuilder(name)
      .Input("indices: N * int32")
      .Input("data: N * T")
      .Output("merged: T")
      .Attr("N: int >= 1")
      .Attr("T: type")
      .SetShapeFn(StitchShape);
}

}  // namespace

absl::Status RegisterIndexOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Bucketize")
                                    .Input("input: T")
                                    .Output("output: int32")
                                    .Attr("T: {int32, int64, float, double}")
                                    .Attr("boundaries: list(float)")
                                    .SetShapeFn(internal::UnchangedShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Unique")
                                    .Input("x: T")
                                    .Output("y: T")
                                    .Output("idx: out_idx")
                                    .Attr("T: type")
                                    .Attr("out_idx: {int32, int64} = int32")
                                    .SetShapeFn(UniqueShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ListDiff")
                                    .Input("x: T")
                                    .Input("y: T")
                                    .Output("out: T")
                                    .Output("idx: out_idx")
                                    .Attr("T: type")
                                    .Attr("out_idx: {int32, int64} = int32")
                                    .SetShapeFn(ListDiffShape)));
  RETURN_IF_ERROR(ops->Register(StitchDef("DynamicStitch")));
  RETURN_IF_ERROR(ops->Register(StitchDef("ParallelDynamicStitch")));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("DynamicPartition")
                                    .Input("data: T")
                                    .Input("partitions: int32")
                                    .Output("outputs: num_partitions * T")
                                    .Attr("num_partitions: int >= 1")
                                    .Attr("T: type")
                                    .SetShapeFn(PartitionShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("GatherNd")
                                    .Input("params: Tparams")
                                    .Input("indices: Tindices")
                                    .Output("output: Tparams")
                                    .Attr("Tparams: type")
                                    .Attr("Tindices: {int16, int32, int64}")
                                    // TensorFlow's: the CPU takes "",
                                    // "DEFAULT" or "ERROR" (a bad index is an
                                    // error), the GPU "", "DEFAULT" or
                                    // "IGNORE" (zeros for a bad index).
                                    .Attr("bad_indices_policy: string = ''")
                                    .SetShapeFn(GatherNdShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ScatterNd")
                                    .Input("indices: Tindices")
                                    .Input("updates: T")
                                    .Input("shape: Tindices")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr("Tindices: {int16, int32, int64}")
                                    // TensorFlow's; only its default is taken.
                                    .Attr("bad_indices_policy: {''} = ''")
                                    .SetShapeFn(ScatterNdShape)));
  // tf.tensor_scatter_nd_update / _add / _sub: `tensor` with the slices the
  // index rows name replaced by (or added to, or less) the updates' rows.
  // TensorScatterMax / Min: the larger / smaller of each addressed element
  // and the update; ScatterNdNonAliasingAdd is TensorScatterAdd under its
  // TF1 name (tf.compat.v1.scatter_nd_add on a tensor).
  for (const char* name : {"TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub",
                           "TensorScatterMax", "TensorScatterMin", "ScatterNdNonAliasingAdd"}) {
    RETURN_IF_ERROR(ops->Register(
        OpDefBuilder(name)
            .Input(std::string(name) == "ScatterNdNonAliasingAdd" ? "input: T" : "tensor: T")
            .Input("indices: Tindices")
            .Input("updates: T")
            .Output("output: T")
            .Attr("T: type")
            .Attr(std::string(name) == "TensorScatterUpdate" ? "Tindices: {int16, int32, int64, uint16}"
                                                             : "Tindices: {int32, int64}")
            .Attr("bad_indices_policy: {''} = ''")
            .SetShapeFn([](InferenceContext* c) {
              c->set_output(0, c->input(0));
              return absl::OkStatus();
            })));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TopKV2")
                                    .Input("input: T")
                                    .Input("k: Tk")
                                    .Output("values: T")
                                    .Output("indices: index_type")
                                    .Attr("sorted: bool = true")
                                    .Attr(kRealTypes)
                                    .Attr("Tk: {int32, int64} = DT_INT32")
                                    .Attr("index_type: {int32, int64} = DT_INT32")
                                    .SetShapeFn(TopKShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("InTopKV2")
                                    .Input("predictions: float")
                                    .Input("targets: T")
                                    .Input("k: T")
                                    .Output("precision: bool")
                                    .Attr("T: {int32, int64} = int32")
                                    .SetShapeFn(InTopKShape)));
  return absl::OkStatus();
}

namespace ops {

Output Bucketize(const Scope& scope, Input input, const std::vector<float>& boundaries,
                 std::source_location loc) {
  return scope.Op("Bucketize", loc).Input(input).Attr("boundaries", boundaries).Finalize1();
}

UniqueOutputs Unique(const Scope& scope, Input x, DataType out_idx, std::source_location loc) {
  std::vector<Output> out = scope.Op("Unique", loc).Input(x).Attr("out_idx", out_idx).FinalizeAll();
  out.resize(2);
  return {out[0], out[1]};
}

ListDiffOutputs ListDiff(const Scope& scope, Input x, Input y, DataType out_idx,
                         std::source_location loc) {
  std::vector<Output> out =
      scope.Op("ListDiff", loc).Input(x).Input(y).Attr("out_idx", out_idx).FinalizeAll();
  out.resize(2);
  return {out[0], out[1]};
}

Output DynamicStitch(const Scope& scope, absl::Span<const Output> indices,
                     absl::Span<const Output> data, std::source_location loc) {
  return scope.Op("DynamicStitch", loc).InputList(indices).InputList(data).Finalize1();
}

Output ParallelDynamicStitch(const Scope& scope, absl::Span<const Output> indices,
                             absl::Span<const Output> data, std::source_location loc) {
  return scope.Op("ParallelDynamicStitch", loc).InputList(indices).InputList(data).Finalize1();
}

std::vector<Output> DynamicPartition(const Scope& scope, Input data, Input partitions,
                                     int64_t num_partitions, std::source_location loc) {
  std::vector<Output> out = scope.Op("DynamicPartition", loc)
                                .Input(data)
                                .Input(partitions)
                                .Attr("num_partitions", num_partitions)
                                .FinalizeAll();
  out.resize(static_cast<size_t>(num_partitions > 0 ? num_partitions : 0));
  return out;
}

Output GatherNd(const Scope& scope, Input params, Input indices, std::source_location loc) {
  return scope.Op("GatherNd", loc).Input(params).Input(indices).Finalize1();
}

Output ScatterNd(const Scope& scope, Input indices, Input updates, Input shape,
                 std::source_location loc) {
  return scope.Op("ScatterNd", loc).Input(indices).Input(updates).Input(shape).Finalize1();
}

Output TensorScatterUpdate(const Scope& scope, Input tensor, Input indices, Input updates,
                           std::source_location loc) {
  return scope.Op("TensorScatterUpdate", loc).Input(tensor).Input(indices).Input(updates).Finalize1();
}

Output TensorScatterAdd(const Scope& scope, Input tensor, Input indices, Input updates,
                        std::source_location loc) {
  return scope.Op("TensorScatterAdd", loc).Input(tensor).Input(indices).Input(updates).Finalize1();
}

Output TensorScatterSub(const Scope& scope, Input tensor, Input indices, Input updates,
                        std::source_location loc) {
  return scope.Op("TensorScatterSub", loc).Input(tensor).Input(indices).Input(updates).Finalize1();
}

Output TensorScatterMax(const Scope& scope, Input tensor, Input indices, Input updates,
                        std::source_location loc) {
  return scope.Op("TensorScatterMax", loc).Input(tensor).Input(indices).Input(updates).Finalize1();
}

Output TensorScatterMin(const Scope& scope, Input tensor, Input indices, Input updates,
                        std::source_location loc) {
  return scope.Op("TensorScatterMin", loc).Input(tensor).Input(indices).Input(updates).Finalize1();
}

Output ScatterNdNonAliasingAdd(const Scope& scope, Input input, Input indices, Input updates,
                               std::source_location loc) {
  return scope.Op("ScatterNdNonAliasingAdd", loc)
      .Input(input)
      .Input(indices)
      .Input(updates)
      .Finalize1();
}

TopKOutputs TopKV2(const Scope& scope, Input input, Input k, bool sorted,
                   std::source_location loc) {
  std::vector<Output> out =
      scope.Op("TopKV2", loc).Input(input).Input(k).Attr("sorted", sorted).FinalizeAll();
  out.resize(2);
  return {out[0], out[1]};
}

Output InTopKV2(const Scope& scope, Input predictions, Input targets, Input k,
                std::source_location loc) {
  return scope.Op("InTopKV2", loc).Input(predictions).Input(targets).Input(k).Finalize1();
}

}  // namespace ops
}  // namespace sluice
