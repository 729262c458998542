// HistogramFixedWidth (tf.histogram_fixed_width): counts of values in nbins
// equal bins spanning value_range [lo, hi]; values below lo count in the
// first bin, values at or above hi in the last, as TensorFlow's kernel
// (bin = min(floor((max(v, lo) - lo) / ((hi - lo) / nbins)), nbins - 1),
// the difference taken in the values' type, the division in double).
// Output [nbins] of dtype (int32 or int64). CPU kernels for float, double,
// int32 and int64; no gradient (as TensorFlow). Errors (InvalidArgument,
// TensorFlow's texts): nbins <= 0, value_range not 2 elements or not
// increasing, a NaN value.
//
//   Output counts = ops::HistogramFixedWidth(s, activations, range, ops::Const(s, 20));
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_MATH_HISTOGRAM_OPS_H_
#define SLUICE_OPS_MATH_HISTOGRAM_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterHistogramOps(OpRegistry* ops);
void RegisterHistogramKernels(KernelRegistry* kernels);

namespace ops {

Output HistogramFixedWidth(const Scope& scope, Input values, Input value_range, Input nbins,
                           DataType dtype = DT_INT32,
                           std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_HISTOGRAM_OPS_H_
