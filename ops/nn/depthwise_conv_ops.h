// Depthwise 2-D convolution, as TensorFlow's tf.nn.depthwise_conv2d writes
// it: DepthwiseConv2dNative and its backprops DepthwiseConv2dNativeBackprop-
// Input and DepthwiseConv2dNativeBackpropFilter (names, inputs and attrs of
// tensorflow/core/ops/nn_ops.cc). Definitions with shape functions
// (RegisterDepthwiseConvOps), CPU kernels for float and double on NHWC data
// (RegisterDepthwiseConvKernels) and wrappers:
//
//   // input [batch, rows, cols, in_depth], filter [fr, fc, in_depth, multiplier]
//   Output y = ops::DepthwiseConv2dNative(s, x, w, {1, 1, 1, 1}, "SAME");
//   // y: [batch, out_rows, out_cols, in_depth * multiplier]
//
// Output channel c * multiplier + m is input channel c convolved with
// filter[:, :, c, m]. Strides (equal along rows and columns, 1 in batch
// and depth, as TensorFlow requires), padding "SAME", "VALID" or
// "EXPLICIT" (explicit_paddings: 8 values, zero in batch and depth) and
// dilations are those of Conv2D (ops/nn/internal/window_geometry.h). NCHW is
// Unimplemented on the CPU. The gradient (RegisterDepthwiseConvGradients,
// ops/nn/nn_gradients.h) emits the two backprop ops.
//
// Errors: bad attrs or shapes are InvalidArgument naming the op and the
// shapes. Thread-safety: as Scope; kernels are stateless. Ownership: nodes
// belong to the scope's graph.
#ifndef SLUICE_OPS_NN_DEPTHWISE_CONV_OPS_H_
#define SLUICE_OPS_NN_DEPTHWISE_CONV_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterDepthwiseConvOps(OpRegistry* ops);
void RegisterDepthwiseConvKernels(KernelRegistry* kernels);

namespace ops {

struct DepthwiseConv2dAttrs {
  std::vector<int64_t> explicit_paddings;  // 8 values with padding "EXPLICIT"
  std::string data_format = "NHWC";
  std::vector<int64_t> dilations = {1, 1, 1, 1};
};
Output DepthwiseConv2dNative(const Scope& scope, Input input, Input filter,
                             const std::vector<int64_t>& strides, absl::string_view padding,
                             const DepthwiseConv2dAttrs& attrs = {},
                             std::source_location loc = std::source_location::current());
// input_sizes: int32 [4], the shape of the forward op's input.
Output DepthwiseConv2dNativeBackpropInput(
    const Scope& scope, Input input_sizes, Input filter, Input out_backprop,
    const std::vector<int64_t>& strides, absl::string_view padding,
    const DepthwiseConv2dAttrs& attrs = {},
    std::source_location loc = std::source_location::current());
// filter_sizes: int32 [4], the shape of the forward op's filter.
Output DepthwiseConv2dNativeBackpropFilter(
    const Scope& scope, Input input, Input filter_sizes, Input out_backprop,
    const std::vector<int64_t>& strides, absl::string_view padding,
    const DepthwiseConv2dAttrs& attrs = {},
    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_DEPTHWISE_CONV_OPS_H_
