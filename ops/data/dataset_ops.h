// tf.data's op definitions (TensorFlow's names, inputs and attrs): the dataset
// ops (TensorDataset ... ModelDataset) and the iterator ops (IteratorV2,
// MakeIterator, IteratorGetNext, OneShotIterator, AnonymousIteratorV2/V3,
// DeleteIterator, the string handles, SerializeIterator /
// DeserializeIterator). Build graphs with them through the builder in
// ops/data/dataset_builder.h; kernels: ops/data/data_family.h.
//
//   OpRegistry ops;
//   RETURN_IF_ERROR(RegisterDatasetOps(&ops));
//
// Thread-compatible (start-up registration).
#ifndef SLUICE_OPS_DATA_DATASET_OPS_H_
#define SLUICE_OPS_DATA_DATASET_OPS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/op_registry.h"

namespace sluice {

absl::Status RegisterDatasetOps(OpRegistry* ops);
// Every op RegisterDatasetOps defines.
std::vector<absl::string_view> DatasetOpNames();

}  // namespace sluice

#endif  // SLUICE_OPS_DATA_DATASET_OPS_H_
