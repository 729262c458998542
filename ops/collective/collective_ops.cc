// Collective op definitions, shape functions, wrappers and the gradient of
// CollectiveReduce (kernels: collective_kernels.cc).
#include "ops/collective/collective_ops.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

// group_devices is not empty and group_size agrees with it.
absl::Status CheckGroup(InferenceContext* c) {
  ASSIGN_OR_RETURN(auto devices, c->GetAttr<std::vector<std::string>>("group_devices"));
  ASSIGN_OR_RETURN(int64_t size, c->GetAttr<int64_t>("group_size"));
  if (devices.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": attr group_devices is empty; name every member's device"));
  }
  if (size != static_cast<int64_t>(devices.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": attr group_size is ", size, " but group_devices names ",
                     devices.size(), " devices (", absl::StrJoin(devices, ", "), ")"));
  }
  return absl::OkStatus();
}

absl::Status ReduceShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckGroup(c));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status BcastSendShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckGroup(c));
  ASSIGN_OR_RETURN(TensorShape shape, c->GetAttr<TensorShape>("shape"));
  absl::StatusOr<TensorShape> merged = shape.Merge(c->input(0));
  if (!merged.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": attr shape is ",
                                                   shape.DebugString(), " but the input has shape ",
                                                   c->input(0).DebugString()));
  }
  c->set_output(0, *std::move(merged));
  return absl::OkStatus();
}

absl::Status BcastRecvShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckGroup(c));
  ASSIGN_OR_RETURN(TensorShape shape, c->GetAttr<TensorShape>("shape"));
  c->set_output(0, std::move(shape));
  return absl::OkStatus();
}

absl::Status GatherShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckGroup(c));
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  TensorShape out = c->input(0);
  if (out.rank() >= 1 && out.dim(0) >= 0) {
    ASSIGN_OR_RETURN(int64_t size, c->GetAttr<int64_t>("group_size"));
    out.set_dim(0, out.dim(0) * size);
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

// The attrs every collective op carries.
OpDefBuilder CollectiveOp(std::string name) {
  return OpDefBuilder(std::move(name))
      .Output("data: T")
      .Attr("T: {float, double, int32, int64}")
      .Attr("group_size: int")
      .Attr("group_key: int")
      .Attr("instance_key: int")
      .Attr("group_devices: list(string) = []")
      .Attr("communication_hint: string = 'auto'")
      .Attr("timeout_seconds: float = 0")
      .SetIsStateful();
}

OpBuilder CollectiveBuilder(const Scope& s, absl::string_view op, const ops::CollectiveSpec& spec,
                            std::source_location loc) {
  OpBuilder b = s.Op(op, loc);
  b.Attr("group_size", static_cast<int64_t>(spec.group_devices.size()))
      .Attr("group_key", spec.group_key)
      .Attr("instance_key", spec.instance_key)
      .Attr("group_devices", spec.group_devices)
      .Attr("communication_hint", spec.communication_hint)
      .Attr("timeout_seconds", spec.timeout_seconds);
  return b;
}

// CollectiveReduce is linear in every member's input: member j's gradient
// is the same reduction (sum, or mean) of all members' upstream gradients,
// which is the same all-reduce run on the gradients under its own instance.
absl::StatusOr<std::vector<Output>> CollectiveReduceGrad(const Scope& s, const Node& node,
                                                         absl::Span<const Output> grads) {
  if (grads.empty() || grads[0].node == nullptr) return std::vector<Output>{Output()};
  ASSIGN_OR_RETURN(int64_t instance, node.GetAttr<int64_t>("instance_key"));
  OpBuilder b = s.Op("CollectiveReduce");
  b.Input(grads[0]);
  for (const auto& [name, value] : node.attrs()) {
    if (absl::StartsWith(name, "_")) continue;  // internal: colocation and such
    b.SetAttr(name, value);
  }
  b.Attr("instance_key", instance + kGradientInstanceOffset);
  Output g = b.Finalize1();
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{g};
}

}  // namespace

absl::Status RegisterCollectiveOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(CollectiveOp("CollectiveReduce")
                                    .Input("input: T")
                                    .Attr("merge_op: {'Add'} = 'Add'")
                                    .Attr("final_op: {'Id', 'Div'} = 'Id'")
                                    .Attr("subdiv_offsets: list(int) = []")
                                    // TensorFlow's; Sluice orders instances itself.
                                    .Attr("wait_for: list(int) = []")
                                    .SetShapeFn(ReduceShape)));
  RETURN_IF_ERROR(ops->Register(CollectiveOp("CollectiveBcastSend")
                                    .Input("input: T")
                                    .Attr("shape: shape = unknown")
                                    .SetShapeFn(BcastSendShape)));
  RETURN_IF_ERROR(ops->Register(CollectiveOp("CollectiveBcastRecv")
                                    .Attr("shape: shape")
                                    .Attr("source_rank: int = 0")
                                    .SetShapeFn(BcastRecvShape)));
  RETURN_IF_ERROR(ops->Register(CollectiveOp("CollectiveGather")
                                    .Input("input: T")
                                    .Attr("shape: shape = unknown")
                                    .SetShapeFn(GatherShape)));
  return absl::OkStatus();
}

absl::Status RegisterCollectiveGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("CollectiveReduce", CollectiveReduceGrad));
  for (const char* op : {"CollectiveBcastSend", "CollectiveBcastRecv", "CollectiveGather"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output AllReduce(const Scope& scope, Input x, ReduceOp op, const CollectiveSpec& spec,
                 std::source_location loc) {
  return CollectiveBuilder(scope, "CollectiveReduce", spec, loc)
      .Input(x)
      .Attr("merge_op", "Add")
      .Attr("final_op", op == ReduceOp::kMean ? "Div" : "Id")
      .Finalize1();
}

Output BroadcastSend(const Scope& scope, Input x, const CollectiveSpec& spec,
                     std::source_location loc) {
  return CollectiveBuilder(scope, "CollectiveBcastSend", spec, loc).Input(x).Finalize1();
}

Output BroadcastRecv(const Scope& scope, DataType dtype, const TensorShape& shape,
                     const CollectiveSpec& spec, std::source_location loc) {
  return CollectiveBuilder(scope, "CollectiveBcastRecv", spec, loc)
      .Attr("T", dtype)
      .Attr("shape", shape)
      .Attr("source_rank", static_cast<int64_t>(spec.source_rank))
      .Finalize1();
}

Output AllGather(const Scope& scope, Input x, const CollectiveSpec& spec,
                 std::source_location loc) {
  return CollectiveBuilder(scope, "CollectiveGather", spec, loc).Input(x).Finalize1();
}

}  // namespace ops
}  // namespace sluice
