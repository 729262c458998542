// Writes to a strided slice of a variable (what `v[1:3].assign(x)` and
// `v[:, ::2].assign(x)` run in TensorFlow), and TF1's epoch counters, under
// TensorFlow's names, inputs and attrs:
//   StridedSliceAssign(ref: Ref(T), begin, end, strides: Index, value: T)
//       -> output_ref: Ref(T)
//   ResourceStridedSliceAssign(ref: resource, begin, end, strides, value)
//       the slice as StridedSlice takes it (the five mask attrs); `value`
//       broadcast to the slice's shape; copy-on-write under the variable's
//       lock (a value read before keeps its bytes)
//   CountUpTo(ref: Ref(T)) -> output: T, ResourceCountUpTo(resource) -> T
//       attr limit: the value before, then the variable plus one;
//       OutOfRange "Reached limit of N" once it reached the limit (what
//       tf.train.limit_epochs and string_input_producer(num_epochs=...)
//       end their epochs with). T in {int32, int64}.
//
//   Node* write = ops::ResourceStridedSliceAssign(s, v, {0, 1}, {2, 3}, {1, 1}, rows);
//
// Errors: InvalidArgument for a slice the variable's shape does not allow
// or a value that does not broadcast to it (both shapes named);
// FailedPrecondition for an uninitialized variable; Unimplemented for
// string variables. No gradients. Thread-safety: as Scope; kernels lock the
// variable.
#ifndef SLUICE_OPS_STATE_VARIABLE_SLICE_OPS_H_
#define SLUICE_OPS_STATE_VARIABLE_SLICE_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "ops/array/array_ops.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterVariableSliceOps(OpRegistry* ops);
void RegisterVariableSliceKernels(KernelRegistry* kernels);

namespace ops {

Node* ResourceStridedSliceAssign(const Scope& scope, Input ref, Input begin, Input end,
                                 Input strides, Input value, const StridedSliceAttrs& attrs = {},
                                 std::source_location loc = std::source_location::current());
Output StridedSliceAssign(const Scope& scope, Input ref, Input begin, Input end, Input strides,
                          Input value, const StridedSliceAttrs& attrs = {},
                          std::source_location loc = std::source_location::current());
Output CountUpTo(const Scope& scope, Input ref, int64_t limit,
                 std::source_location loc = std::source_location::current());
Output ResourceCountUpTo(const Scope& scope, Input resource, int64_t limit, DataType dtype,
                         std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_STATE_VARIABLE_SLICE_OPS_H_
