#include "training/partitioned_variables.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/array/index_ops.h"
#include "ops/math/math_ops.h"
#include "training/checkpoint/saver.h"
#include "ops/sparse/sparse_segment_ops.h"
#include "ops/state/state_ops.h"

namespace sluice {
namespace {

absl::Status CheckAxis(const TensorShape& shape, int axis) {
  if (shape.unknown_rank() || axis < 0 || axis >= shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("partition axis ", axis,
                                                   " is not an axis of ", shape.DebugString()));
  }
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape.dim(d) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("a partitioned variable needs a fully defined shape, not ", shape.DebugString()));
    }
  }
  return absl::OkStatus();
}

int64_t ElementBytes(DataType dtype, int64_t bytes_per_string_element) {
  return dtype == DT_STRING ? bytes_per_string_element : DataTypeSize(dtype);
}

std::vector<int64_t> AlongAxis(const TensorShape& shape, int axis, int64_t parts) {
  std::vector<int64_t> out(static_cast<size_t>(shape.rank()), 1);
  out[axis] = parts;
  return out;
}

}  // namespace

Partitioner FixedSizePartitioner(int64_t num_shards, int axis) {
  return [=](const TensorShape& shape, DataType) -> absl::StatusOr<std::vector<int64_t>> {
    RETURN_IF_ERROR(CheckAxis(shape, axis));
    if (num_shards < 1) return absl::InvalidArgumentError("num_shards must be at least 1");
    return AlongAxis(shape, axis, std::min(num_shards, shape.dim(axis)));
  };
}

Partitioner MinMaxVariablePartitioner(int64_t max_partitions, int axis, int64_t min_slice_size,
                                      int64_t bytes_per_string_element) {
  return [=](const TensorShape& shape, DataType dtype) -> absl::StatusOr<std::vector<int64_t>> {
    RETURN_IF_ERROR(CheckAxis(shape, axis));
    if (max_partitions < 1 || min_slice_size < 1) {
      return absl::InvalidArgumentError("max_partitions and min_slice_size must be positive");
    }
    const double total =
        static_cast<double>(shape.num_elements()) * ElementBytes(dtype, bytes_per_string_element);
    const int64_t wanted = static_cast<int64_t>(std::ceil(total / static_cast<double>(min_slice_size)));
    return AlongAxis(shape, axis,
                     std::max<int64_t>(1, std::min({shape.dim(axis), max_partitions, wanted})));
  };
}

Partitioner VariableAxisSizePartitioner(int64_t max_shard_bytes, int axis,
                                        int64_t bytes_per_string_element, int64_t max_shards) {
  return [=](const TensorShape& shape, DataType dtype) -> absl::StatusOr<std::vector<int64_t>> {
    RETURN_IF_ERROR(CheckAxis(shape, axis));
    if (max_shard_bytes < 1) return absl::InvalidArgumentError("max_shard_bytes must be positive");
    if (shape.dim(axis) == 0) return AlongAxis(shape, axis, 1);
    const double bytes_per_slice = static_cast<double>(shape.num_elements()) /
                                   static_cast<double>(shape.dim(axis)) *
                                   ElementBytes(dtype, bytes_per_string_element);
    const double slices_per_shard =
        std::max(1.0, std::floor(static_cast<double>(max_shard_bytes) / bytes_per_slice));
    int64_t shards = static_cast<int64_t>(std::ceil(static_cast<double>(shape.dim(axis)) / slices_per_shard));
    if (max_shards > 0) shards = std::min(shards, max_shards);
    return AlongAxis(shape, axis, shards);
  };
}

PartInitializer ZerosInitializer(DataType dtype) {
  return [dtype](const Scope& s, const TensorShape& shape, const std::vector<int64_t>&) {
    return ops::Const(s, Tensor(dtype, shape));  // tensors start zeroed
  };
}

std::string SliceSpec(const TensorShape& full_shape, const std::vector<int64_t>& offset,
                      const TensorShape& part_shape) {
  std::vector<std::string> full, slices;
  for (int d = 0; d < full_shape.rank(); ++d) {
    full.push_back(absl::StrCat(full_shape.dim(d)));
    slices.push_back(absl::StrCat(offset[d], ",", part_shape.dim(d)));
  }
  return absl::StrCat(absl::StrJoin(full, " "), " ", absl::StrJoin(slices, ":"));
}

absl::StatusOr<PartitionedVariable> CreatePartitionedVariable(const Scope& s, const std::string& name,
                                                              const TensorShape& shape,
                                                              DataType dtype,
                                                              const Partitioner& partitioner,
                                                              const PartInitializer& initializer) {
  ASSIGN_OR_RETURN(std::vector<int64_t> parts, partitioner(shape, dtype));
  if (static_cast<int>(parts.size()) != shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("the partitioner returned ", parts.size(),
                                                   " counts for a variable of rank ", shape.rank()));
  }
  int axis = 0, partitioned_axes = 0;
  for (int d = 0; d < shape.rank(); ++d) {
    if (parts[d] < 1) return absl::InvalidArgumentError("a partition count below 1");
    if (parts[d] > 1) {
      axis = d;
      ++partitioned_axes;
    }
  }
  if (partitioned_axes > 1) {
    return absl::InvalidArgumentError("only one axis may be partitioned");
  }
  PartitionedVariable v;
  v.name = name;
  v.full_shape = shape;
  v.dtype = dtype;
  v.axis = axis;
  const int64_t n = parts[axis];
  const int64_t size = shape.dim(axis);
  int64_t start = 0;
  for (int64_t i = 0; i < n; ++i) {
    VariablePart part;
    std::vector<int64_t> dims;
    for (int d = 0; d < shape.rank(); ++d) dims.push_back(shape.dim(d));
    dims[axis] = size / n + (i < size % n ? 1 : 0);
    part.shape = TensorShape(dims);
    part.offset.assign(static_cast<size_t>(shape.rank()), 0);
    part.offset[axis] = start;
    start += dims[axis];
    part.slice_spec = SliceSpec(shape, part.offset, part.shape);
    const Scope named = s.WithOpName(absl::StrCat(name, "/part_", i));
    // The variable first, then its initial value computed beside it (TF
    // colocates a partitioned variable's initializer with it): a part of a
    // parameter server's table is drawn there, not on a worker and sent.
    ops::VariableAndInit made;
    made.var = ops::Variable(named, part.shape, dtype);
    RETURN_IF_ERROR(s.status());
    const Scope beside = named.NewSubScope("initial_value").ColocateWith(made.var);
    const Output initial = initializer(beside, part.shape, part.offset);
    const Scope assign =
        s.WithOpName(absl::StrCat(name, "/part_", i, "/Assign")).ColocateWith(made.var);
    made.initializer = ops::Assign(assign, made.var, initial).node;
    RETURN_IF_ERROR(s.status());
    part.var = made.var;
    part.initializer = made.initializer;
    // The Saver stores the part as TensorFlow does: a slice of the full name.
    std::string full_name = made.var.node->name();
    full_name.resize(full_name.size() - absl::StrCat("/part_", i).size());
    made.var.node->SetAttr(kSaveSliceNameAttr, MakeAttr(full_name));
    made.var.node->SetAttr(kSaveSliceSpecAttr, MakeAttr(part.slice_spec));
    v.parts.push_back(std::move(part));
  }
  return v;
}

absl::StatusOr<Output> EmbeddingLookup(const Scope& s, const PartitionedVariable& params, Input ids,
                                       const std::string& strategy) {
  if (strategy != "mod" && strategy != "div") {
    return absl::InvalidArgumentError(
        absl::StrCat("partition_strategy must be \"mod\" or \"div\", not \"", strategy, "\""));
  }
  if (params.parts.empty()) return absl::InvalidArgumentError("the variable has no parts");
  if (params.axis != 0 && params.parts.size() > 1) {
    return absl::InvalidArgumentError("embedding lookups need a table partitioned along axis 0");
  }
  const Output zero = ops::Const(s, 0);
  // Each part's gather runs where the part is (TF's colocate_with(params[p])):
  // on a parameter server only the rows asked for leave it, not the part.
  const auto gather = [&s](const Output& part, Input part_ids) {
    const Scope at = s.ColocateWith(part);
    return ops::GatherV2(at, part, std::move(part_ids), ops::Const(at, 0));
  };
  if (params.parts.size() == 1) return gather(params.parts[0].var, ids);
  const int64_t np = static_cast<int64_t>(params.parts.size());
  const Output flat = ops::Cast(s, ops::Reshape(s, ids, ops::Const(s, std::vector<int32_t>{-1})), DT_INT64);
  const Output original = ops::Range(s, zero, ops::Size(s, flat), ops::Const(s, 1));
  Output assignment, new_ids;
  if (strategy == "mod") {
    assignment = ops::FloorMod(s, flat, ops::Const(s, np));
    new_ids = ops::FloorDiv(s, flat, ops::Const(s, np));
  } else {
    int64_t total = 0;
    for (const VariablePart& p : params.parts) total += p.shape.dim(0);
    const int64_t per = total / np, extras = total % np;
    const Output shifted = ops::Sub(s, flat, ops::Const(s, extras));
    assignment = ops::Maximum(s, ops::FloorDiv(s, flat, ops::Const(s, per + 1)),
                              ops::FloorDiv(s, shifted, ops::Const(s, per)));
    const Output first = ops::Cast(s, ops::Less(s, assignment, ops::Const(s, extras)), DT_INT64);
    new_ids = ops::Add(s, ops::Mul(s, first, ops::FloorMod(s, flat, ops::Const(s, per + 1))),
                       ops::Mul(s, ops::Sub(s, ops::Const(s, int64_t{1}), first),
                                ops::FloorMod(s, shifted, ops::Const(s, per))));
  }
  const Output p = ops::Cast(s, assignment, DT_INT32);
  std::vector<Output> gather_ids = ops::DynamicPartition(s, new_ids, p, np);
  std::vector<Output> positions = ops::DynamicPartition(s, original, p, np);
  RETURN_IF_ERROR(s.status());
  std::vector<Output> rows;
  for (int64_t i = 0; i < np; ++i) {
    rows.push_back(gather(params.parts[i].var, gather_ids[i]));
  }
  const Output stitched = ops::DynamicStitch(s, positions, rows);
  std::vector<int64_t> row_dims;
  for (int d = 1; d < params.full_shape.rank(); ++d) row_dims.push_back(params.full_shape.dim(d));
  const Output shape = ops::ConcatV2(
      s, {ops::Cast(s, ops::Shape(s, ids), DT_INT64), ops::Const(s, row_dims)}, zero);
  const Output out = ops::Reshape(s, stitched, shape);
  RETURN_IF_ERROR(s.status());
  return out;
}

absl::StatusOr<Output> EmbeddingLookupSparse(const Scope& s, const PartitionedVariable& params,
                                             const SparseIds& ids, Output weights,
                                             const std::string& combiner,
                                             const std::string& partition_strategy) {
  if (combiner != "sum" && combiner != "mean" && combiner != "sqrtn") {
    return absl::InvalidArgumentError(
        absl::StrCat("combiner must be \"sum\", \"mean\" or \"sqrtn\", not \"", combiner, "\""));
  }
  const Output rows = ops::Cast(
      s, ops::GatherV2(s, ids.indices, ops::Const(s, 0), ops::Const(s, 1)), DT_INT32);
  const ops::UniqueOutputs unique = ops::Unique(s, ids.values);
  ASSIGN_OR_RETURN(Output embeddings, EmbeddingLookup(s, params, unique.y, partition_strategy));
  if (!weights.valid()) {
    const std::string kind = combiner == "sum" ? "Sum" : combiner == "mean" ? "Mean" : "SqrtN";
    Output out = ops::SparseSegmentReduction(s, kind, embeddings, unique.idx, rows);
    RETURN_IF_ERROR(s.status());
    return out;
  }
  // Weighted: each id's row times its weight, summed per row, then divided
  // by the weights' sum (mean) or the root of their squares' sum (sqrtn).
  const Output w = ops::ExpandDims(s, weights, ops::Const(s, -1));
  const Output each = ops::Mul(s, ops::GatherV2(s, embeddings, unique.idx, ops::Const(s, 0)), w);
  Output out = ops::SegmentSum(s, each, rows);
  if (combiner == "mean") {
    out = ops::Div(s, out, ops::SegmentSum(s, w, rows));
  } else if (combiner == "sqrtn") {
    out = ops::Div(s, out, ops::Sqrt(s, ops::SegmentSum(s, ops::Mul(s, w, w), rows)));
  }
  RETURN_IF_ERROR(s.status());
  return out;
}

}  // namespace sluice
