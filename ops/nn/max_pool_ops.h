// The max-pooling ops beside MaxPool (ops/nn/nn_ops.h), under TensorFlow's
// names, inputs and attrs, NHWC on the CPU (as TensorFlow's CPU kernels):
//   MaxPoolV2              MaxPool with ksize and strides as int32 inputs
//   MaxPoolGradV2          MaxPoolGrad with them as inputs
//   MaxPoolGradGradV2      MaxPoolGradGrad with them as inputs (the two V2
//                          ops are each other's gradient)
//   MaxPoolWithArgmax      also each maximum's flat index, int64 or int32:
//                          (y * width + x) * channels + c, plus the batch's
//                          offset when include_batch_in_index
//                          (tf.nn.max_pool_with_argmax; SegNet's unpooling)
//   MaxPoolGradWithArgmax  the gradient routed to those indices
//   MaxPoolGradGradWithArgmax  an input-shaped tensor read at those indices
//                          (the two are each other's gradient here: second
//                          derivatives through max_pool_with_argmax;
//                          TensorFlow registers neither that gradient nor a
//                          CPU kernel for MaxPoolGradGradWithArgmax)
// Windows as MaxPool's (SAME: centred, padding never the maximum; ties: the
// first in row-major order). Gradients are TensorFlow's: MaxPoolV2 through
// MaxPoolGradV2, MaxPoolWithArgmax through MaxPoolGradWithArgmax (argmax
// gets none). CPU kernels for float and double. Errors (InvalidArgument):
// input not 4-D, ksize/strides not 4 values with 1 for batch and depth,
// NCHW (Unimplemented on the CPU), an argmax index outside the input.
//
//   ops::MaxPoolWithArgmaxOutputs p = ops::MaxPoolWithArgmax(s, x, {1, 2, 2, 1}, {1, 2, 2, 1},
//                                                            "SAME");
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_NN_MAX_POOL_OPS_H_
#define SLUICE_OPS_NN_MAX_POOL_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterMaxPoolOps(OpRegistry* ops);
absl::Status RegisterMaxPoolGradients(OpRegistry* ops);
void RegisterMaxPoolKernels(KernelRegistry* kernels);

namespace ops {

Output MaxPoolV2(const Scope& scope, Input input, Input ksize, Input strides,
                 const std::string& padding,
                 std::source_location loc = std::source_location::current());

struct MaxPoolWithArgmaxOutputs {
  Output output, argmax;
};
MaxPoolWithArgmaxOutputs MaxPoolWithArgmax(
    const Scope& scope, Input input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
    const std::string& padding, bool include_batch_in_index = false,
    DataType argmax_type = DT_INT64, std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_MAX_POOL_OPS_H_
