// The Example parsing ops, with TensorFlow's names, inputs, outputs and
// attrs (its core/ops/parsing_ops.cc): ParseExample, ParseExampleV2,
// ParseSingleExample and ParseSequenceExample. CPU kernels (in
// parsing_kernels.cc) read the serialized protos straight from their bytes
// (ops/parsing/example_parser.h states the semantics and errors). No
// gradients (TensorFlow has none). Wrappers:
//
//   ops::ParseExampleOutputs p = ops::ParseExample(s, serialized, names,
//       /*sparse_keys=*/{"tags"}, /*dense_keys=*/{"image", "label"},
//       /*dense_defaults=*/{empty_float, ops::Const(s, int64_t{0})},
//       /*sparse_types=*/{DT_STRING}, /*dense_shapes=*/{TensorShape({784}), TensorShape({})});
//   // p.dense_values[0]: float [batch, 784]
//
// ParseExampleV2 also takes serialized of any rank (a scalar gives unbatched
// outputs) and ragged keys (values + row_splits; serialized of rank <= 1).
// Thread-safety: as Scope; kernels keep no per-step state. Ownership:
// nodes belong to the scope's graph.
#ifndef SLUICE_OPS_PARSING_PARSING_OPS_H_
#define SLUICE_OPS_PARSING_PARSING_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterParsingOps(OpRegistry* ops);
void RegisterParsingKernels(KernelRegistry* kernels);

namespace ops {

struct ParseExampleOutputs {
  std::vector<Output> sparse_indices, sparse_values, sparse_shapes, dense_values;
  std::vector<Output> ragged_values, ragged_row_splits;  // ParseExampleV2 only
};

// dense_defaults[j]: a tensor of dense_shapes[j] (or one element), or an
// empty one for a required feature; its dtype is the feature's.
ParseExampleOutputs ParseExample(const Scope& scope, Input serialized, Input names,
                                 const std::vector<std::string>& sparse_keys,
                                 const std::vector<std::string>& dense_keys,
                                 const std::vector<Output>& dense_defaults,
                                 const std::vector<DataType>& sparse_types,
                                 const std::vector<TensorShape>& dense_shapes,
                                 std::source_location loc = std::source_location::current());

struct ParseExampleV2Attrs {
  std::vector<DataType> sparse_types;
  std::vector<TensorShape> dense_shapes;
  std::vector<DataType> ragged_value_types;
  std::vector<DataType> ragged_split_types;
};
ParseExampleOutputs ParseExampleV2(const Scope& scope, Input serialized, Input names,
                                   const std::vector<std::string>& sparse_keys,
                                   const std::vector<std::string>& dense_keys,
                                   const std::vector<std::string>& ragged_keys,
                                   const std::vector<Output>& dense_defaults,
                                   const ParseExampleV2Attrs& attrs,
                                   std::source_location loc = std::source_location::current());

ParseExampleOutputs ParseSingleExample(const Scope& scope, Input serialized,
                                       const std::vector<Output>& dense_defaults,
                                       const std::vector<std::string>& sparse_keys,
                                       const std::vector<std::string>& dense_keys,
                                       const std::vector<DataType>& sparse_types,
                                       const std::vector<TensorShape>& dense_shapes,
                                       std::source_location loc = std::source_location::current());

struct ParseSequenceExampleAttrs {
  std::vector<std::string> context_sparse_keys, context_dense_keys;
  std::vector<DataType> context_sparse_types;
  std::vector<TensorShape> context_dense_shapes;
  std::vector<std::string> feature_list_sparse_keys, feature_list_dense_keys;
  std::vector<DataType> feature_list_sparse_types, feature_list_dense_types;
  std::vector<TensorShape> feature_list_dense_shapes;
  std::vector<std::string> feature_list_dense_missing_assumed_empty;
};
struct ParseSequenceExampleOutputs {
  std::vector<Output> context_sparse_indices, context_sparse_values, context_sparse_shapes;
  std::vector<Output> context_dense_values;
  std::vector<Output> feature_list_sparse_indices, feature_list_sparse_values,
      feature_list_sparse_shapes;
  std::vector<Output> feature_list_dense_values, feature_list_dense_lengths;
};
ParseSequenceExampleOutputs ParseSequenceExample(
    const Scope& scope, Input serialized, Input debug_name,
    const std::vector<Output>& context_dense_defaults, const ParseSequenceExampleAttrs& attrs,
    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_PARSING_PARSING_OPS_H_
