// The leaves of a StructuredValue (graph/proto/struct.proto), the nested
// arguments and results of a TF2 SavedModel's concrete function, in
// TensorFlow's nest.flatten order: lists, tuples and named tuples in order,
// dict entries by sorted key. Each leaf has its path: the dict keys,
// named-tuple field names and indexes that lead to it, joined by '/' ("" for
// a value that is itself a leaf). None is a leaf, as in nest.flatten.
//
//   for (const StructureLeaf& leaf : FlattenStructure(fn.output_signature()))
//     if (leaf.value->has_tensor_spec_value()) ...
//
// A value type over the proto it points into; thread-compatible.
#ifndef SLUICE_TRAINING_CHECKPOINT_STRUCTURED_VALUE_H_
#define SLUICE_TRAINING_CHECKPOINT_STRUCTURED_VALUE_H_

#include <string>
#include <vector>

#include "graph/proto/struct.pb.h"

namespace sluice {

struct StructureLeaf {
  std::string path;
  const ::tensorflow::StructuredValue* value;  // not owned
};

std::vector<StructureLeaf> FlattenStructure(const ::tensorflow::StructuredValue& value);

// A leaf as Python would show it: "float32[?,3]" for a TensorSpec, "True",
// "None", "3", "'abc'", "RaggedTensorSpec" for a composite's spec.
std::string DescribeLeaf(const ::tensorflow::StructuredValue& leaf);

}  // namespace sluice

#endif  // SLUICE_TRAINING_CHECKPOINT_STRUCTURED_VALUE_H_
