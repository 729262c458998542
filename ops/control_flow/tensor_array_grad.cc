// Gradients of the TensorArray ops (TensorFlow's tensor_array_grad.py): the
// gradient of an array's elements lives in its gradient array
// (TensorArrayGradV3, one per gradient computation), and each op's
// gradient is its mirror image on that array: a read's gradient is a write,
// a gather's a scatter, a concat's a split, and the other way round. The
// flow tensors carry the order: a gradient array is made from, and read
// after, the flow that its writes produced.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "ops/control_flow/control_flow_gradients.h"
#include "ops/internal/grad_util.h"
#include "ops/control_flow/tensor_array_ops.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;
using Grads = std::vector<Output>;
using GradResult = absl::StatusOr<Grads>;

// Which gradient computation `s` builds for: the first name component that
// starts with "gradients" ("gradients", "gradients_1"), so that the
// gradient ops inside a while loop's backward loop and those after it
// share one gradient array, as TensorFlow's share theirs.
std::string GradientSource(const Scope& s) {
  for (absl::string_view part : absl::StrSplit(s.name_prefix(), '/')) {
    if (absl::StartsWith(part, "gradients")) return std::string(part);
  }
  return "gradients";
}

// The gradient array of the array `node` works on (its input 0), made
// after `flow`.
ops::TensorArrayOutputs GradArray(const Scope& s, const Node& node, const Output& flow) {
  return ops::TensorArrayGradV3(s, InputOf(node, 0), flow, GradientSource(s));
}

DataType ElementType(const Node& node, const char* attr) {
  absl::StatusOr<DataType> t = node.GetAttr<DataType>(attr);
  return t.ok() ? *t : DT_INVALID;
}

// handle, index, flow_in -> value.
GradResult ReadGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(3);
  if (!dy[0].valid()) return grads;
  ops::TensorArrayOutputs g = GradArray(s, node, InputOf(node, 2));
  grads[2] = ops::TensorArrayWriteV3(s, g.handle, InputOf(node, 1), dy[0], g.flow);
  return grads;
}

// handle, index, value, flow_in -> flow_out.
GradResult WriteGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(4);
  if (!dy[0].valid()) return grads;
  ops::TensorArrayOutputs g = GradArray(s, node, dy[0]);
  grads[2] = ops::TensorArrayReadV3(s, g.handle, InputOf(node, 1), g.flow, ElementType(node, "T"));
  grads[3] = dy[0];
  return grads;
}

// handle, indices, flow_in -> value.
GradResult GatherGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(3);
  if (!dy[0].valid()) return grads;
  ops::TensorArrayOutputs g = GradArray(s, node, InputOf(node, 2));
  grads[2] = ops::TensorArrayScatterV3(s, g.handle, InputOf(node, 1), dy[0], g.flow);
  return grads;
}

// handle, indices, value, flow_in -> flow_out.
GradResult ScatterGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(4);
  if (!dy[0].valid()) return grads;
  ops::TensorArrayOutputs g = GradArray(s, node, dy[0]);
  grads[2] = ops::TensorArrayGatherV3(s, g.handle, InputOf(node, 1), g.flow, ElementType(node, "T"));
  grads[3] = dy[0];
  return grads;
}

// handle, flow_in -> value, lengths.
GradResult ConcatGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(2);
  if (!dy[0].valid()) return grads;
  ops::TensorArrayOutputs g = GradArray(s, node, InputOf(node, 1));
  grads[1] = ops::TensorArraySplitV3(s, g.handle, dy[0], OutputOf(node, 1), g.flow);
  return grads;
}

// handle, value, lengths, flow_in -> flow_out.
GradResult SplitGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(4);
  if (!dy[0].valid()) return grads;
  ops::TensorArrayOutputs g = GradArray(s, node, dy[0]);
  grads[1] = ops::TensorArrayConcatV3(s, g.handle, g.flow, ElementType(node, "T")).value;
  grads[3] = dy[0];
  return grads;
}

}  // namespace

absl::Status RegisterTensorArrayGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("TensorArrayReadV3", ReadGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorArrayWriteV3", WriteGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorArrayGatherV3", GatherGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorArrayScatterV3", ScatterGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorArrayConcatV3", ConcatGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorArraySplitV3", SplitGrad));
  for (const char* op : {"TensorArrayV3", "TensorArrayGradV3", "TensorArrayGradWithShape",
                         "TensorArraySizeV3",
                         "TensorArrayCloseV3"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace sluice
