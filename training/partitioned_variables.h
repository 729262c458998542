// Partitioned variables, as TensorFlow 1.x makes them for tables too large
// for one task: a partitioner decides how many parts a variable has along
// one axis, the parts are ordinary variables named "<name>/part_<i>", and
// embedding lookups route each id to its part (TF's embedding_ops.py).
//
//   ASSIGN_OR_RETURN(PartitionedVariable table,
//                    CreatePartitionedVariable(s, "emb/w", TensorShape({1 << 22, 32}), DT_FLOAT,
//                                              FixedSizePartitioner(2), ZerosInitializer()));
//   Output rows = EmbeddingLookup(s, table, ids, "mod");     // [ids..., 32]
//   ... ApplyReplicaDeviceSetter then puts part 0 and part 1 on different ps tasks.
//
// Partitioners return the number of parts along every axis (one axis > 1),
// with TensorFlow's formulas:
//   FixedSizePartitioner(n, axis)        min(n, shape[axis]) parts
//   MinMaxVariablePartitioner(max, axis, min_slice_size, bytes_per_string)
//       ceil(total bytes / min_slice_size), within [1, min(shape[axis], max)]
//   VariableAxisSizePartitioner(max_shard_bytes, axis, bytes_per_string, max_shards)
//       as few parts as keep each under max_shard_bytes (at least one slice
//       per part), at most max_shards (-1: no limit)
// Parts split the axis as TensorFlow splits it: the first (size % n) parts
// get one slice more. Each part carries its offset and its slice spec
// ("10 2 4,3:0,2": the full shape, then start,length per axis), the
// shape_and_slices string a TF checkpoint stores it under.
//
// EmbeddingLookup over parts: "mod" sends id to part id % n, row id / n;
// EmbeddingLookupSparse pools a SparseTensor's rows of ids with a combiner
// (TF's embedding_lookup_sparse, through the SparseSegment ops);
// "div" cuts the id space into contiguous blocks sized like the parts (the
// first `extras` blocks one larger). Ids may have any shape; the result is
// ids' shape + a row's shape. Each part's Gather is colocated with the part
// (on a ps, only the rows asked for leave it); gradients flow to each part
// as IndexedSlices.
//
// Errors: InvalidArgument for an axis out of range, a shape not fully
// defined, a partitioner that returns the wrong rank or more than one
// partitioned axis, an unknown partition strategy, parts of different row
// shapes; an initializer's error as it is.
// Thread-safety: as Scope. Ownership: nodes belong to the scope's graph.
#ifndef SLUICE_TRAINING_PARTITIONED_VARIABLES_H_
#define SLUICE_TRAINING_PARTITIONED_VARIABLES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"

namespace sluice {

// Parts per axis for a variable of `shape` and `dtype`.
using Partitioner =
    std::function<absl::StatusOr<std::vector<int64_t>>(const TensorShape& shape, DataType dtype)>;

Partitioner FixedSizePartitioner(int64_t num_shards, int axis = 0);
Partitioner MinMaxVariablePartitioner(int64_t max_partitions = 1, int axis = 0,
                                      int64_t min_slice_size = 256 << 10,
                                      int64_t bytes_per_string_element = 16);
Partitioner VariableAxisSizePartitioner(int64_t max_shard_bytes, int axis = 0,
                                        int64_t bytes_per_string_element = 16,
                                        int64_t max_shards = -1);

// The initial value of one part: its shape and its offset in the full
// variable (TF's partition_info.var_offset).
using PartInitializer = std::function<Output(const Scope& scope, const TensorShape& part_shape,
                                             const std::vector<int64_t>& offset)>;
// Zeros of the part's shape (float).
PartInitializer ZerosInitializer(DataType dtype = DT_FLOAT);

struct VariablePart {
  Output var;               // the VariableV2 ref
  Node* initializer = nullptr;  // its Assign
  TensorShape shape;
  std::vector<int64_t> offset;
  std::string slice_spec;   // "full shape" then "start,length" per axis
};

struct PartitionedVariable {
  std::string name;
  TensorShape full_shape;
  DataType dtype = DT_INVALID;
  int axis = 0;
  std::vector<VariablePart> parts;
};

// The slice spec of a part: "10 2 4,3:0,2".
std::string SliceSpec(const TensorShape& full_shape, const std::vector<int64_t>& offset,
                      const TensorShape& part_shape);

absl::StatusOr<PartitionedVariable> CreatePartitionedVariable(const Scope& scope,
                                                              const std::string& name,
                                                              const TensorShape& shape,
                                                              DataType dtype,
                                                              const Partitioner& partitioner,
                                                              const PartInitializer& initializer);

// Rows of the table for `ids` (int32 or int64), routed to its parts.
absl::StatusOr<Output> EmbeddingLookup(const Scope& scope, const PartitionedVariable& params,
                                       Input ids, const std::string& partition_strategy = "mod");

// A SparseTensor of ids (TF's sp_ids): indices int64 [n, 2] (row, position),
// values the ids, dense_shape int64 [2].
struct SparseIds {
  Output indices, values, dense_shape;
};

// TF's embedding_lookup_sparse: one row per input row that has ids (rows up
// to the last such), combining its ids' embeddings by `combiner` ("sum",
// "mean" or "sqrtn"), weighted by `weights` (values aligned with the ids'
// values; an invalid Output: all 1). Each distinct id is looked up once.
absl::StatusOr<Output> EmbeddingLookupSparse(const Scope& scope, const PartitionedVariable& params,
                                             const SparseIds& ids, Output weights,
                                             const std::string& combiner = "mean",
                                             const std::string& partition_strategy = "mod");

}  // namespace sluice

#endif  // SLUICE_TRAINING_PARTITIONED_VARIABLES_H_
