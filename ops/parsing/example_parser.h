// ParseExamples / ParseSequenceExamples: serialized tf.train.Example and
// SequenceExample protos to tensors, with TensorFlow's semantics (its
// core/util/example_proto_fast_parsing.cc), read straight from the wire
// bytes (example_wire.h): only the configured keys are decoded, each list
// straight into its output. The kernels of ParseExample, ParseExampleV2,
// ParseSingleExample and ParseSequenceExample (parsing_ops.h) and the
// Example fuzz target call these.
//
//   ExampleParseConfig config;
//   config.dense.push_back({.key = "image", .dtype = DT_FLOAT,
//                           .shape = TensorShape({784}), .default_value = Tensor()});
//   config.sparse.push_back({.key = "tags", .dtype = DT_STRING});
//   RETURN_IF_ERROR(config.Finish());
//   ASSIGN_OR_RETURN(ExampleParseResult r, ParseExamples(config, serialized, names));
//   // r.dense[0]: float [batch, 784]; r.sparse_indices[0]: int64 [n, 2] ...
//
// Outputs (B the examples' batch shape, the shape of `serialized`):
//  - dense j, fixed shape S: [B..., S...]; a missing feature takes
//    default_value (of shape S, or one element repeated), required when the
//    default is empty. A dense shape whose first dimension is -1 is variable
//    length: [B..., max_len, S[1:]...], padded with the (scalar) default or
//    zeros; a missing feature is empty.
//  - sparse j: indices int64 [N, rank(B) + 1] (batch index..., position),
//    values [N], dense_shape int64 [B..., max count].
//  - ragged j: values [N], row_splits [size(B) + 1] (splits_dtype).
// Errors (InvalidArgument) name the example ("Name: <name>, Key: <key>,
// Index: <i>."): bytes that are not an Example, a feature of another kind
// than configured, a wrong number of values, a missing required feature.
// Thread-safe: a finished config is read-only. Ownership: the caller owns
// the config; results own their tensors (allocated from `allocator`, the
// default CPU allocator when null).
#ifndef SLUICE_OPS_PARSING_EXAMPLE_PARSER_H_
#define SLUICE_OPS_PARSING_EXAMPLE_PARSER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {

struct DenseFeatureSpec {
  std::string key;
  DataType dtype = DT_FLOAT;  // DT_FLOAT, DT_INT64 or DT_STRING
  TensorShape shape;          // fully defined, or first dim -1 (variable length)
  Tensor default_value;       // empty (no elements): the feature is required
};

struct SparseFeatureSpec {
  std::string key;
  DataType dtype = DT_FLOAT;
};

struct RaggedFeatureSpec {
  std::string key;
  DataType dtype = DT_FLOAT;
  DataType splits_dtype = DT_INT64;  // DT_INT32 or DT_INT64
};

struct ExampleParseConfig {
  std::vector<DenseFeatureSpec> dense;
  std::vector<SparseFeatureSpec> sparse;
  std::vector<RaggedFeatureSpec> ragged;

  // Checks the specs (dtypes, shapes, defaults against shapes, keys listed
  // twice) and builds the key lookup. InvalidArgument naming the key.
  absl::Status Finish();

  // Filled by Finish: key -> slot (dense first, then sparse, then ragged).
  absl::flat_hash_map<std::string, int> slots;
};

struct ExampleParseResult {
  std::vector<Tensor> sparse_indices, sparse_values, sparse_shapes;
  std::vector<Tensor> dense;
  std::vector<Tensor> ragged_values, ragged_splits;
};

// `serialized`: a DT_STRING tensor of any rank; `names`: empty or of the
// same size (names show up only in errors). Ragged features need rank <= 1.
// `dense_defaults`, when given, replaces each dense spec's default_value
// (the ops' default inputs; checked as Finish checks them), so that a
// finished config can be reused read-only by every call.
absl::StatusOr<ExampleParseResult> ParseExamples(
    const ExampleParseConfig& config, const Tensor& serialized, const Tensor& names,
    Allocator* allocator = nullptr, const std::vector<Tensor>* dense_defaults = nullptr);

// InvalidArgument unless `value` can be the default of `spec` (empty; or of
// its dtype with one element or as many as its shape, one for a
// variable-length feature).
absl::Status CheckDenseDefault(const DenseFeatureSpec& spec, const Tensor& value);

// The feature lists of a SequenceExample, batched: dense ones give values
// [batch, max_steps, S...] (zero padded) and lengths int64 [batch]; sparse
// ones indices [N, 3] (example, step, position), values, and dense_shape
// [batch, max_steps, max count]. A dense list that is missing is an error
// unless its key is in `missing_assumed_empty`.
struct FeatureListConfig {
  std::vector<DenseFeatureSpec> dense;  // shape: of one step; no defaults
  std::vector<SparseFeatureSpec> sparse;
  std::vector<std::string> missing_assumed_empty;
};

struct SequenceExampleParseResult {
  ExampleParseResult context;  // as ParseExamples on the context Features
  std::vector<Tensor> list_sparse_indices, list_sparse_values, list_sparse_shapes;
  std::vector<Tensor> list_dense, list_dense_lengths;
};

// `serialized`: a DT_STRING vector; `names` empty or as long.
absl::StatusOr<SequenceExampleParseResult> ParseSequenceExamples(
    const ExampleParseConfig& context, const FeatureListConfig& lists, const Tensor& serialized,
    const Tensor& names, Allocator* allocator = nullptr,
    const std::vector<Tensor>* dense_defaults = nullptr);

}  // namespace sluice

#endif  // SLUICE_OPS_PARSING_EXAMPLE_PARSER_H_
