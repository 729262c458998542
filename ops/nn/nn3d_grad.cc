// Gradients of the 3-D window ops (TensorFlow's nn_grad.py _Conv3DGrad,
// _MaxPool3DGrad, _AvgPool3DGrad): each emits the backprop op with the
// forward node's attrs. The backprop ops have no gradient here.
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/nn/nn_gradients.h"
#include "ops/internal/grad_util.h"
#include "ops/nn/nn3d_ops.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

struct WindowAttrValues {
  std::vector<int64_t> ksize, strides, dilations;
  std::string padding, format;
};

absl::StatusOr<WindowAttrValues> Read(const Node& node, bool pool) {
  WindowAttrValues v;
  ASSIGN_OR_RETURN(v.strides, node.GetAttr<std::vector<int64_t>>("strides"));
  ASSIGN_OR_RETURN(v.padding, node.GetAttr<std::string>("padding"));
  ASSIGN_OR_RETURN(v.format, node.GetAttr<std::string>("data_format"));
  if (pool) {
    ASSIGN_OR_RETURN(v.ksize, node.GetAttr<std::vector<int64_t>>("ksize"));
  } else {
    ASSIGN_OR_RETURN(v.dilations, node.GetAttr<std::vector<int64_t>>("dilations"));
  }
  return v;
}

GradResult Done(const Scope& s, std::vector<Output> grads) {
  RETURN_IF_ERROR(s.status());
  return grads;
}

GradResult Conv3DGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  if (!g[0].valid()) return std::vector<Output>{Output(), Output()};
  ASSIGN_OR_RETURN(WindowAttrValues v, Read(node, false));
  const ops::Conv3DAttrs a{.data_format = v.format, .dilations = v.dilations};
  const Output x = InputOf(node, 0), w = InputOf(node, 1);
  return Done(s, {ops::Conv3DBackpropInputV2(s, ops::Shape(s, x), w, g[0], v.strides, v.padding, a),
                  ops::Conv3DBackpropFilterV2(s, x, ops::Shape(s, w), g[0], v.strides, v.padding,
                                              a)});
}

GradResult MaxPool3DGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(WindowAttrValues v, Read(node, true));
  return Done(s, {ops::MaxPool3DGrad(s, InputOf(node, 0), OutputOf(node), g[0], v.ksize,
                                     v.strides, v.padding, {.data_format = v.format})});
}

GradResult AvgPool3DGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(WindowAttrValues v, Read(node, true));
  return Done(s, {ops::AvgPool3DGrad(s, ops::Shape(s, InputOf(node, 0)), g[0], v.ksize, v.strides,
                                     v.padding, {.data_format = v.format})});
}

}  // namespace

absl::Status RegisterNn3dGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("Conv3D", Conv3DGrad));
  RETURN_IF_ERROR(ops->SetGradient("MaxPool3D", MaxPool3DGrad));
  RETURN_IF_ERROR(ops->SetGradient("AvgPool3D", AvgPool3DGrad));
  return absl::OkStatus();
}

}  // namespace sluice
