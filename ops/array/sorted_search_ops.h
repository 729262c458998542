// LowerBound and UpperBound (tf.searchsorted, side "left" and "right"),
// under TensorFlow's names, inputs and attrs: for each row b, where each
// of values[b] would go in the sorted row sorted_inputs[b] — the first
// position whose element is >= the value (LowerBound) or > it
// (UpperBound), so N when none is. sorted_inputs [B, N], values [B, M],
// output [B, M] of out_type (int32 or int64). Rows that are not sorted give
// what the binary search gives (as TensorFlow). CPU kernels for float,
// double, int32 and int64; no gradient (as TensorFlow). Errors
// (InvalidArgument): inputs not of rank 2 with equal first dimensions; a
// position that does not fit in int32.
//
//   Output bucket = ops::UpperBound(s, boundaries, x);   // Bucketize by a tensor
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_ARRAY_SORTED_SEARCH_OPS_H_
#define SLUICE_OPS_ARRAY_SORTED_SEARCH_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterSortedSearchOps(OpRegistry* ops);
void RegisterSortedSearchKernels(KernelRegistry* kernels);

namespace ops {

Output LowerBound(const Scope& scope, Input sorted_inputs, Input values,
                  DataType out_type = DT_INT32,
                  std::source_location loc = std::source_location::current());
Output UpperBound(const Scope& scope, Input sorted_inputs, Input values,
                  DataType out_type = DT_INT32,
                  std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_SORTED_SEARCH_OPS_H_
