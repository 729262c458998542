// The gradient of DepthwiseConv2dNative (TensorFlow's nn_grad.py
// _DepthwiseConv2dNativeGrad): the two backprop ops with the forward node's
// attrs. The backprop ops themselves have no gradient (as in TensorFlow).
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/nn/depthwise_conv_ops.h"
#include "ops/nn/nn_gradients.h"
#include "ops/internal/grad_util.h"

namespace sluice {
namespace {

using internal::InputOf;

absl::StatusOr<std::vector<Output>> DepthwiseConv2dNativeGrad(const Scope& s, const Node& node,
                                                              absl::Span<const Output> g) {
  if (!g[0].valid()) return std::vector<Output>{Output(), Output()};
  ASSIGN_OR_RETURN(auto strides, node.GetAttr<std::vector<int64_t>>("strides"));
  ASSIGN_OR_RETURN(std::string padding, node.GetAttr<std::string>("padding"));
  ops::DepthwiseConv2dAttrs a;
  ASSIGN_OR_RETURN(a.explicit_paddings, node.GetAttr<std::vector<int64_t>>("explicit_paddings"));
  ASSIGN_OR_RETURN(a.data_format, node.GetAttr<std::string>("data_format"));
  ASSIGN_OR_RETURN(a.dilations, node.GetAttr<std::vector<int64_t>>("dilations"));
  const Output input = InputOf(node, 0), filter = InputOf(node, 1);
  std::vector<Output> grads = {
      ops::DepthwiseConv2dNativeBackpropInput(s, ops::Shape(s, input), filter, g[0], strides,
                                              padding, a),
      ops::DepthwiseConv2dNativeBackpropFilter(s, input, ops::Shape(s, filter), g[0], strides,
                                               padding, a)};
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterDepthwiseConvGradients(OpRegistry* ops) {
  return ops->SetGradient("DepthwiseConv2dNative", DepthwiseConv2dNativeGrad);
}

}  // namespace sluice
