// Neural-network ops: definitions with shape functions (RegisterNnOps), CPU
// kernels for float and double (RegisterNnKernels) and typed graph-building
// wrappers. Names, arguments, attrs and defaults are TensorFlow's.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output h = ops::Relu(s, ops::BiasAdd(s, ops::MatMul(s, x, w), b));
//   Output c = ops::Conv2D(s, images, filter, {1, 2, 2, 1}, "SAME");
//   Output p = ops::MaxPool(s, c, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
//   std::vector<Output> xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels);
//   Output loss = xent[0], backprop = xent[1];
//
// Ops: Relu, ReluGrad, BiasAdd, BiasAddGrad, Softmax, LogSoftmax,
// SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits, Conv2D,
// Conv2DBackpropInput, Conv2DBackpropFilter, MaxPool, MaxPoolGrad, AvgPool,
// AvgPoolGrad. Conv2D and
// MaxPool kernels take NHWC data (NCHW answers Unimplemented); BiasAdd takes
// both. Gradients are registered by RegisterNnGradients (ops/nn/nn_gradients.h).
//
// Errors: wrappers record the first error in the scope (see graph/scope.h);
// shape functions and kernels report bad shapes as InvalidArgument naming
// the shapes. Thread-safety: the wrappers follow Scope (one building thread);
// the kernels are safe to run concurrently. Ownership: nodes belong to the
// scope's graph; the registries own what is registered into them.
#ifndef SLUICE_OPS_NN_NN_OPS_H_
#define SLUICE_OPS_NN_NN_OPS_H_

#include <cstdint>
#include "base/source_location.h"
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterNnOps(OpRegistry* ops);
void RegisterNnKernels(KernelRegistry* kernels);

namespace ops {

Output Relu(const Scope& scope, Input features,
            std::source_location loc = std::source_location::current());
// backprops = gradients where features > 0, else 0.
Output ReluGrad(const Scope& scope, Input gradients, Input features,
                std::source_location loc = std::source_location::current());

struct BiasAddAttrs {
  std::string data_format = "NHWC";  // or "NCHW": bias runs along dim 1
};
Output BiasAdd(const Scope& scope, Input value, Input bias, const BiasAddAttrs& attrs = {},
               std::source_location loc = std::source_location::current());
// Sums out_backprop over every dimension but the channel one.
Output BiasAddGrad(const Scope& scope, Input out_backprop, const BiasAddAttrs& attrs = {},
                   std::source_location loc = std::source_location::current());

// Along the last dimension.
Output Softmax(const Scope& scope, Input logits,
               std::source_location loc = std::source_location::current());
Output LogSoftmax(const Scope& scope, Input logits,
                  std::source_location loc = std::source_location::current());

// features, labels: [batch, classes]. Returns {loss [batch], backprop [batch, classes]}.
std::vector<Output> SoftmaxCrossEntropyWithLogits(
    const Scope& scope, Input features, Input labels,
    std::source_location loc = std::source_location::current());
// features: [batch, classes]; labels: [batch] int32 or int64 class indices.
// Returns {loss, backprop}. A label outside [0, classes) fails at run time.
std::vector<Output> SparseSoftmaxCrossEntropyWithLogits(
    const Scope& scope, Input features, Input labels,
    std::source_location loc = std::source_location::current());

struct Conv2DAttrs {
  bool use_cudnn_on_gpu = true;
  std::vector<int64_t> explicit_paddings;  // 8 values with padding "EXPLICIT"
  std::string data_format = "NHWC";
  std::vector<int64_t> dilations = {1, 1, 1, 1};
};
// input [batch, height, width, in_depth], filter [fh, fw, in_depth, out_depth];
// padding "SAME", "VALID" or "EXPLICIT".
Output Conv2D(const Scope& scope, Input input, Input filter, const std::vector<int64_t>& strides,
              absl::string_view padding, const Conv2DAttrs& attrs = {},
              std::source_location loc = std::source_location::current());
// input_sizes: int32 [4], the shape of Conv2D's input.
Output Conv2DBackpropInput(const Scope& scope, Input input_sizes, Input filter, Input out_backprop,
                           const std::vector<int64_t>& strides, absl::string_view padding,
                           const Conv2DAttrs& attrs = {},
                           std::source_location loc = std::source_location::current());
// filter_sizes: int32 [4], the shape of Conv2D's filter.
Output Conv2DBackpropFilter(const Scope& scope, Input input, Input filter_sizes, Input out_backprop,
                            const std::vector<int64_t>& strides, absl::string_view padding,
                            const Conv2DAttrs& attrs = {},
                            std::source_location loc = std::source_location::current());

struct MaxPoolAttrs {
  std::string data_format = "NHWC";
};
// padding "SAME" or "VALID"; padded positions never win the max.
Output MaxPool(const Scope& scope, Input input, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, absl::string_view padding,
               const MaxPoolAttrs& attrs = {},
               std::source_location loc = std::source_location::current());
// The mean of each window's elements inside the input (padding not counted).
// Takes MaxPoolAttrs (its data_format).
Output AvgPool(const Scope& scope, Input value, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, absl::string_view padding,
               const MaxPoolAttrs& attrs = {},
               std::source_location loc = std::source_location::current());
// Spreads each grad value evenly over its window; orig_input_shape is int32 [4].
Output AvgPoolGrad(const Scope& scope, Input orig_input_shape, Input grad,
                   const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                   absl::string_view padding, const MaxPoolAttrs& attrs = {},
                   std::source_location loc = std::source_location::current());
// Routes each grad value to the first maximum of its window in orig_input.
Output MaxPoolGrad(const Scope& scope, Input orig_input, Input orig_output, Input grad,
                   const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                   absl::string_view padding, const MaxPoolAttrs& attrs = {},
                   std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_NN_OPS_H_
