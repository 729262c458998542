// EditDistance (tf.edit_distance: the label error rate of a CTC decoder's
// output against the truth), under TensorFlow's name, inputs and attrs:
// hypothesis and truth as sparse tensors (indices int64 [n, rank], values
// T [n], shape int64 [rank]) whose last dimension holds the sequences;
// output float, the elementwise max of both shapes without the last
// dimension, each element the Levenshtein distance between the
// sequences at that index, divided by the truth's length when `normalize`
// (true by default; a hypothesis without truth is inf, a truth without
// hypothesis 1). Where neither has a sequence the output is 0. CPU
// kernels for every integer type, float, double, bool and string values.
//
//   Output cer = ops::EditDistance(s, decoded, truth);
//
// Errors (InvalidArgument): indices not [n, rank] for a shape of `rank`
// values, values not [n], ranks that differ, indices outside their shape
// or not in row-major order (TensorFlow's result for unordered indices is
// undefined; Sluice refuses them). No gradient. Thread-safety: as Scope;
// the kernel is stateless.
#ifndef SLUICE_OPS_SPARSE_EDIT_DISTANCE_OPS_H_
#define SLUICE_OPS_SPARSE_EDIT_DISTANCE_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterEditDistanceOps(OpRegistry* ops);
void RegisterEditDistanceKernels(KernelRegistry* kernels);

namespace ops {

struct SparseInput {
  Input indices;
  Input values;
  Input shape;
};
Output EditDistance(const Scope& scope, const SparseInput& hypothesis, const SparseInput& truth,
                    bool normalize = true, std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_SPARSE_EDIT_DISTANCE_OPS_H_
