// ResourceGatherNd (tf.gather_nd on a resource variable, Variable.gather_nd)
// under TensorFlow's name, inputs and attrs: (resource, indices: Tindices
// int32 or int64) -> output: dtype, the GatherNd of the variable's value.
// Lowered into ReadVariableOp and GatherNd (so every device that has
// those runs it); TensorFlow's gradient to the variable, ScatterNd of the
// incoming gradient into the variable's shape.
//
//   Output rows = ops::ResourceGatherNd(s, handle, indices, DT_FLOAT);
//
// Errors: GatherNd's (InvalidArgument for indices out of range) and
// FailedPrecondition for an uninitialized variable. Thread-safety: as
// Scope.
#ifndef SLUICE_OPS_STATE_RESOURCE_GATHER_ND_OPS_H_
#define SLUICE_OPS_STATE_RESOURCE_GATHER_ND_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"

namespace sluice {

absl::Status RegisterResourceGatherNdOps(OpRegistry* ops);

namespace ops {

Output ResourceGatherNd(const Scope& scope, Input resource, Input indices, DataType dtype,
                        std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_STATE_RESOURCE_GATHER_ND_OPS_H_
