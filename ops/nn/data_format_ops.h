// What TensorFlow's layout optimizer leaves in graphs it converted between
// NHWC and NCHW (tf.nn's data format helpers), under TensorFlow's names,
// inputs and attrs src_format ("NHWC") and dst_format ("NCHW"), formats of
// 4 or 5 letters that permute each other:
//   DataFormatDimMap(x: T) -> y: T   each dimension index of src (negative
//       from the end) as its index in dst
//   DataFormatVecPermute(x: T) -> y: T   a vector of one entry per
//       dimension (or per spatial dimension), or [dims, 2] (one row each),
//       reordered from src's order into dst's
// T in {int32, int64}. No gradients.
//
//   Output axis_nchw = ops::DataFormatDimMap(s, axis_nhwc);
//
// Errors (InvalidArgument): formats of other lengths or that do not permute
// each other, an index out of [-rank, rank), x of another shape.
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_NN_DATA_FORMAT_OPS_H_
#define SLUICE_OPS_NN_DATA_FORMAT_OPS_H_

#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterDataFormatOps(OpRegistry* ops);
void RegisterDataFormatKernels(KernelRegistry* kernels);

namespace ops {

Output DataFormatDimMap(const Scope& scope, Input x, const std::string& src_format = "NHWC",
                        const std::string& dst_format = "NCHW",
                        std::source_location loc = std::source_location::current());
Output DataFormatVecPermute(const Scope& scope, Input x, const std::string& src_format = "NHWC",
                            const std::string& dst_format = "NCHW",
                            std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_DATA_FORMAT_OPS_H_
