// Array ops that TensorFlow graphs carry beside the core ones, under
// TensorFlow's names, inputs and attrs:
//   Empty(shape: int32) -> output: dtype       attr init (the values are
//       zeros either way: Sluice never hands out uninitialized memory)
//   UnravelIndex(indices, dims: Tidx) -> output: Tidx   flat indices into
//       coordinates: [ndims] for a scalar, [ndims, n] for n indices
//   InplaceUpdate / InplaceAdd / InplaceSub(x, i: int32, v) -> y   x with
//       rows i[k] set to (or added / subtracted) v[k]; y is always a copy
//       (TensorFlow's raw kernels write into x's buffer when they can, so
//       another reader of x may see the rows change; here it never does)
//   NthElement(input, n: int32) -> values   attr reverse: the n-th smallest
//       (reverse: largest) of each last-dimension vector; TensorFlow's
//       gradient (shared among equal values)
//   Snapshot, GuaranteeConst (input -> output), DeepCopy (x -> y)   the
//       input itself, any type (no copy is needed: Sluice never writes a
//       tensor in place once another op holds it); no gradient, as
//       TensorFlow
//   ToBool(input) -> output: bool scalar   a scalar's truth (nonzero, a
//       non-empty string), else whether the tensor has elements
//
//   Output coords = ops::UnravelIndex(s, flat, dims);
//
// Errors (InvalidArgument): an index out of bounds (UnravelIndex, the
// Inplace ops), a dimension of zero, v not [len(i)] + x's row shape, n out
// of [0, columns); Unimplemented for ToBool of a scalar not bool, string,
// float, double, int32 or int64. Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_ARRAY_COMPAT_ARRAY_OPS_H_
#define SLUICE_OPS_ARRAY_COMPAT_ARRAY_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterCompatArrayOps(OpRegistry* ops);
absl::Status RegisterCompatArrayGradients(OpRegistry* ops);
void RegisterCompatArrayKernels(KernelRegistry* kernels);

namespace ops {

Output Snapshot(const Scope& scope, Input input,
                std::source_location loc = std::source_location::current());
Output ToBool(const Scope& scope, Input input,
              std::source_location loc = std::source_location::current());

Output Empty(const Scope& scope, Input shape, DataType dtype, bool init = false,
             std::source_location loc = std::source_location::current());
Output UnravelIndex(const Scope& scope, Input indices, Input dims,
                    std::source_location loc = std::source_location::current());
// op: "InplaceUpdate", "InplaceAdd" or "InplaceSub".
Output Inplace(const Scope& scope, const char* op, Input x, Input i, Input v,
               std::source_location loc = std::source_location::current());
Output NthElement(const Scope& scope, Input input, Input n, bool reverse = false,
                  std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_COMPAT_ARRAY_OPS_H_
