// Gradient functions of the neural-network ops (TensorFlow's formulas).
//
// The helper ops they emit (ReluGrad, BiasAddGrad, Conv2DBackprop*) have no
// gradient of their own; MaxPoolGrad and MaxPoolGradGrad are each other's
// (second derivatives through max pooling, as gradient penalties take).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/scope.h"
#include "base/status_macros.h"
#include "ops/nn/nn_gradients.h"
#include "ops/nn/nn_ops.h"

namespace sluice {
namespace {

// Math/array nodes by op name, so this file depends only on the op names.
Output Binary(const Scope& s, const char* op, const Output& a, const Output& b) {
  return s.Op(op).Input(a).Input(b).Finalize1();
}
Output Unary(const Scope& s, const char* op, const Output& a) {
  return s.Op(op).Input(a).Finalize1();
}
// sum(x, axis=-1, keepdims=True)
Output SumLastKeepDims(const Scope& s, const Output& x) {
  return s.Op("Sum")
      .Input(x)
      .Input(Input(std::initializer_list<int32_t>{-1}))
      .Attr("keep_dims", true)
      .Finalize1();
}
// expand_dims(x, -1)
Output ExpandLast(const Scope& s, const Output& x) {
  return s.Op("ExpandDims").Input(x).Input(Input(int32_t{-1})).Finalize1();
}
Output ShapeOf(const Scope& s, const Output& x) { return s.Op("Shape").Input(x).Finalize1(); }

// Output `i` of the node being differentiated. Output holds a mutable
// pointer because it is a graph-building handle; nothing here mutates the node.
Output OutputOf(const Node& node, int i) { return Output(const_cast<Node*>(&node), i); }

// The data input `i` of `node`.
absl::StatusOr<Output> InputOf(const Node& node, int i) {
  const Edge* e = node.input_edge(i);
  if (e == nullptr) {
    return absl::InternalError(absl::StrCat(node.DebugName(), ": input ", i, " is unconnected"));
  }
  return Output(e->src, e->src_output);
}

absl::Status BuildStatus(const Scope& s) { return s.status(); }

absl::StatusOr<std::vector<Output>> Done(const Scope& s, std::vector<Output> grads) {
  RETURN_IF_ERROR(BuildStatus(s));
  return grads;
}

absl::StatusOr<std::vector<Output>> ReluGradFn(const Scope& s, const Node& node,
                                               absl::Span<const Output> grads) {
  if (!grads[0].valid()) return std::vector<Output>{Output()};
  return Done(s, {ops::ReluGrad(s, grads[0], OutputOf(node, 0))});
}

absl::StatusOr<std::vector<Output>> BiasAddGradFn(const Scope& s, const Node& node,
                                                  absl::Span<const Output> grads) {
  if (!grads[0].valid()) return std::vector<Output>{Output(), Output()};
  std::string format = "NHWC";  // BiasAddV1's only layout
  if (node.op() != "BiasAddV1") {
    ASSIGN_OR_RETURN(format, node.GetAttr<std::string>("data_format"));
  }
  return Done(s, {grads[0], ops::BiasAddGrad(s, grads[0], {.data_format = format})});
}

// (g - sum(g * y, -1, keepdims)) * y, y = softmax(x).
Output SoftmaxBackward(const Scope& s, const Output& g, const Output& y) {
  Output dot = SumLastKeepDims(s, Binary(s, "Mul", g, y));
  return Binary(s, "Mul", Binary(s, "Sub", g, dot), y);
}

absl::StatusOr<std::vector<Output>> SoftmaxGradFn(const Scope& s, const Node& node,
                                                  absl::Span<const Output> grads) {
  if (!grads[0].valid()) return std::vector<Output>{Output()};
  return Done(s, {SoftmaxBackward(s, grads[0], OutputOf(node, 0))});
}

// g - exp(y) * sum(g, -1, keepdims), y = log_softmax(x).
absl::StatusOr<std::vector<Output>> LogSoftmaxGradFn(const Scope& s, const Node& node,
                                                     absl::Span<const Output> grads) {
  if (!grads[0].valid()) return std::vector<Output>{Output()};
  const Output& g = grads[0];
  Output softmax = Unary(s, "Exp", OutputOf(node, 0));
  return Done(s, {Binary(s, "Sub", g, Binary(s, "Mul", softmax, SumLastKeepDims(s, g)))});
}

// Gradient to features of either cross entropy: expand_dims(grad_loss) *
// backprop, plus the softmax backward pass of any gradient flowing into the
// backprop output (backprop = softmax(features) - labels).
absl::StatusOr<Output> XentFeaturesGrad(const Scope& s, const Node& node,
                                        absl::Span<const Output> grads) {
  Output result;
  if (grads[0].valid()) {
    result = Binary(s, "Mul", ExpandLast(s, grads[0]), OutputOf(node, 1));
  }
  if (grads.size() > 1 && grads[1].valid()) {
    ASSIGN_OR_RETURN(Output features, InputOf(node, 0));
    Output second = SoftmaxBackward(s, grads[1], ops::Softmax(s, features));
    result = result.valid() ? Binary(s, "Add", result, second) : second;
  }
  RETURN_IF_ERROR(BuildStatus(s));
  return result;
}

absl::StatusOr<std::vector<Output>> SoftmaxXentGradFn(const Scope& s, const Node& node,
                                                      absl::Span<const Output> grads) {
  ASSIGN_OR_RETURN(Output features_grad, XentFeaturesGrad(s, node, grads));
  Output labels_grad;
  if (grads[0].valid()) {
    ASSIGN_OR_RETURN(Output features, InputOf(node, 0));
    Output neg_log_softmax = Unary(s, "Neg", ops::LogSoftmax(s, features));
    labels_grad = Binary(s, "Mul", ExpandLast(s, grads[0]), neg_log_softmax);
  }
  return Done(s, {features_grad, labels_grad});
}

absl::StatusOr<std::vector<Output>> SparseXentGradFn(const Scope& s, const Node& node,
                                                     absl::Span<const Output> grads) {
  ASSIGN_OR_RETURN(Output features_grad, XentFeaturesGrad(s, node, grads));
  return Done(s, {features_grad, Output()});
}

absl::StatusOr<ops::Conv2DAttrs> ReadConv2DAttrs(const Node& node) {
  ops::Conv2DAttrs a;
  ASSIGN_OR_RETURN(a.use_cudnn_on_gpu, node.GetAttr<bool>("use_cudnn_on_gpu"));
  ASSIGN_OR_RETURN(a.explicit_paddings, node.GetAttr<std::vector<int64_t>>("explicit_paddings"));
  ASSIGN_OR_RETURN(a.data_format, node.GetAttr<std::string>("data_format"));
  ASSIGN_OR_RETURN(a.dilations, node.GetAttr<std::vector<int64_t>>("dilations"));
  return a;
}

absl::StatusOr<std::vector<Output>> Conv2DGradFn(const Scope& s, const Node& node,
                                                 absl::Span<const Output> grads) {
  if (!grads[0].valid()) return std::vector<Output>{Output(), Output()};
  ASSIGN_OR_RETURN(std::vector<int64_t> strides, node.GetAttr<std::vector<int64_t>>("strides"));
  ASSIGN_OR_RETURN(std::string padding, node.GetAttr<std::string>("padding"));
  ASSIGN_OR_RETURN(ops::Conv2DAttrs attrs, ReadConv2DAttrs(node));
  ASSIGN_OR_RETURN(Output input, InputOf(node, 0));
  ASSIGN_OR_RETURN(Output filter, InputOf(node, 1));
  Output dx =
      ops::Conv2DBackpropInput(s, ShapeOf(s, input), filter, grads[0], strides, padding, attrs);
  Output dw =
      ops::Conv2DBackpropFilter(s, input, ShapeOf(s, filter), grads[0], strides, padding, attrs);
  return Done(s, {dx, dw});
}

// A pooling node's window attrs, to build its gradient op with.
struct PoolAttrValues {
  std::vector<int64_t> ksize, strides;
  std::string padding, format;
};
absl::StatusOr<PoolAttrValues> ReadPoolAttrValues(const Node& node) {
  PoolAttrValues a;
  ASSIGN_OR_RETURN(a.ksize, node.GetAttr<std::vector<int64_t>>("ksize"));
  ASSIGN_OR_RETURN(a.strides, node.GetAttr<std::vector<int64_t>>("strides"));
  ASSIGN_OR_RETURN(a.padding, node.GetAttr<std::string>("padding"));
  ASSIGN_OR_RETURN(a.format, node.GetAttr<std::string>("data_format"));
  return a;
}

absl::StatusOr<std::vector<Output>> MaxPoolGradFn(const Scope& s, const Node& node,
                                                  absl::Span<const Output> grads) {
  if (!grads[0].valid()) return std::vector<Output>{Output()};
  ASSIGN_OR_RETURN(PoolAttrValues a, ReadPoolAttrValues(node));
  ASSIGN_OR_RETURN(Output input, InputOf(node, 0));
  return Done(s, {ops::MaxPoolGrad(s, input, OutputOf(node, 0), grads[0], a.ksize, a.strides,
                                   a.padding, {.data_format = a.format})});
}

// MaxPoolGrad is linear in grad: its gradient routes the incoming one back
// through the same maxima (MaxPoolGradGrad), and MaxPoolGradGrad's through
// MaxPoolGrad; the original input and output get none (TensorFlow's).
absl::StatusOr<std::vector<Output>> MaxPoolGradGradFn(const Scope& s, const Node& node,
                                                      absl::Span<const Output> grads) {
  std::vector<Output> out(3);
  if (!grads[0].valid()) return out;
  ASSIGN_OR_RETURN(Output input, InputOf(node, 0));
  ASSIGN_OR_RETURN(Output orig_output, InputOf(node, 1));
  const bool of_grad = node.op() == "MaxPoolGrad";
  OpBuilder b = s.Op(of_grad ? "MaxPoolGradGrad" : "MaxPoolGrad");
  b.Input(input).Input(orig_output).Input(grads[0]);
  for (const char* attr : {"ksize", "strides", "padding", "data_format"}) {
    b.SetAttr(attr, node.attrs().at(attr));
  }
  out[0] = s.Op("ZerosLike").Input(input).Finalize1();
  out[1] = s.Op("ZerosLike").Input(orig_output).Finalize1();
  out[2] = b.Finalize1();
  return Done(s, out);
}

absl::StatusOr<std::vector<Output>> AvgPoolGradFn(const Scope& s, const Node& node,
                                                  absl::Span<const Output> grads) {
  if (!grads[0].valid()) return std::vector<Output>{Output()};
  ASSIGN_OR_RETURN(PoolAttrValues a, ReadPoolAttrValues(node));
  ASSIGN_OR_RETURN(Output input, InputOf(node, 0));
  return Done(s, {ops::AvgPoolGrad(s, ShapeOf(s, input), grads[0], a.ksize, a.strides, a.padding,
                                   {.data_format = a.format})});
}

}  // namespace

absl::Status RegisterNnGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("Relu", ReluGradFn));
  RETURN_IF_ERROR(ops->SetGradient("BiasAdd", BiasAddGradFn));
  RETURN_IF_ERROR(ops->SetGradient("BiasAddV1", BiasAddGradFn));
  RETURN_IF_ERROR(ops->SetGradient("Softmax", SoftmaxGradFn));
  RETURN_IF_ERROR(ops->SetGradient("LogSoftmax", LogSoftmaxGradFn));
  RETURN_IF_ERROR(ops->SetGradient("SoftmaxCrossEntropyWithLogits", SoftmaxXentGradFn));
  RETURN_IF_ERROR(ops->SetGradient("SparseSoftmaxCrossEntropyWithLogits", SparseXentGradFn));
  RETURN_IF_ERROR(ops->SetGradient("Conv2D", Conv2DGradFn));
  RETURN_IF_ERROR(ops->SetGradient("MaxPool", MaxPoolGradFn));
  RETURN_IF_ERROR(ops->SetGradient("MaxPoolGrad", MaxPoolGradGradFn));
  RETURN_IF_ERROR(ops->SetGradient("MaxPoolGradGrad", MaxPoolGradGradFn));
  RETURN_IF_ERROR(ops->SetGradient("AvgPool", AvgPoolGradFn));
  return absl::OkStatus();
}

}  // namespace sluice
