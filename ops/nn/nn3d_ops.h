// TensorFlow's 3-D window ops over NDHWC data (tf.nn.conv3d, max_pool3d,
// avg_pool3d and their gradients): Conv3D, Conv3DBackpropInputV2,
// Conv3DBackpropFilterV2, MaxPool3D, MaxPool3DGrad, AvgPool3D and
// AvgPool3DGrad (names, inputs, attrs and types of
// tensorflow/core/ops/nn_ops.cc). Definitions with shape functions
// (RegisterNn3dOps), CPU kernels (RegisterNn3dKernels: convolutions for
// float and double, pooling for float as TensorFlow registers) and wrappers:
//
//   // input [batch, planes, rows, cols, in_depth]; filter [fp, fr, fc, in_depth, out_depth]
//   Output y = ops::Conv3D(s, x, w, {1, 1, 1, 1, 1}, "SAME");
//   Output p = ops::MaxPool3D(s, y, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, "VALID");
//
// Padding "SAME" or "VALID"; strides, ksize and dilations are 5 values,
// 1 in batch and depth. Max pooling ignores padding; average pooling
// divides by the number of elements of the window inside the input.
// MaxPool3DGrad passes each gradient to every element of its window within
// 1e-5 of the window's maximum (TensorFlow's CPU kernel). NCDHW is
// Unimplemented on the CPU. Gradients: RegisterNn3dGradients
// (ops/nn/nn_gradients.h).
//
// Errors: bad attrs or shapes are InvalidArgument naming the op and shapes.
// Thread-safety: as Scope; kernels are stateless. Ownership: nodes belong
// to the scope's graph.
#ifndef SLUICE_OPS_NN_NN3D_OPS_H_
#define SLUICE_OPS_NN_NN3D_OPS_H_

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

absl::Status RegisterNn3dOps(OpRegistry* ops);
void RegisterNn3dKernels(KernelRegistry* kernels);

namespace ops {

struct Conv3DAttrs {
  std::string data_format = "NDHWC";
  std::vector<int64_t> dilations = {1, 1, 1, 1, 1};
};
Output Conv3D(const Scope& scope, Input input, Input filter, const std::vector<int64_t>& strides,
              absl::string_view padding, const Conv3DAttrs& attrs = {},
              std::source_location loc = std::source_location::current());
// input_sizes: int32 or int64 [5].
Output Conv3DBackpropInputV2(const Scope& scope, Input input_sizes, Input filter,
                             Input out_backprop, const std::vector<int64_t>& strides,
                             absl::string_view padding, const Conv3DAttrs& attrs = {},
                             std::source_location loc = std::source_location::current());
// filter_sizes: int32 [5].
Output Conv3DBackpropFilterV2(const Scope& scope, Input input, Input filter_sizes,
                              Input out_backprop, const std::vector<int64_t>& strides,
                              absl::string_view padding, const Conv3DAttrs& attrs = {},
                              std::source_location loc = std::source_location::current());

struct Pool3DAttrs {
  std::string data_format = "NDHWC";
};
Output MaxPool3D(const Scope& scope, Input input, const std::vector<int64_t>& ksize,
                 const std::vector<int64_t>& strides, absl::string_view padding,
                 const Pool3DAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());
Output AvgPool3D(const Scope& scope, Input input, const std::vector<int64_t>& ksize,
                 const std::vector<int64_t>& strides, absl::string_view padding,
                 const Pool3DAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());
Output MaxPool3DGrad(const Scope& scope, Input orig_input, Input orig_output, Input grad,
                     const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                     absl::string_view padding, const Pool3DAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());
// orig_input_shape: int32 [5].
Output AvgPool3DGrad(const Scope& scope, Input orig_input_shape, Input grad,
                     const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                     absl::string_view padding, const Pool3DAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_NN3D_OPS_H_
