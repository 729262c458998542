// Data-flow op definitions, shape functions and wrappers (kernels:
// data_flow_kernels.cc).
#include "ops/data_flow/data_flow_ops.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

absl::Status RequireSharedName(InferenceContext* c) {
  ASSIGN_OR_RETURN(std::string name, c->GetAttr<std::string>("shared_name"));
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": shared_name must name the resource"));
  }
  return absl::OkStatus();
}

absl::Status ScalarInput(InferenceContext* c, int i, absl::string_view what) {
  if (c->input(i).rank() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": ", what, " must be a scalar, got shape ", c->input(i).DebugString()));
  }
  return absl::OkStatus();
}

absl::Status ApplyGradientShape(InferenceContext* c) {
  RETURN_IF_ERROR(RequireSharedName(c));
  RETURN_IF_ERROR(ScalarInput(c, 0, "local_step"));
  ASSIGN_OR_RETURN(TensorShape shape, c->GetAttr<TensorShape>("shape"));
  if (!shape.IsCompatibleWith(c->input(1))) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": the accumulator has shape ", shape.DebugString(),
                     " but the gradient has shape ", c->input(1).DebugString()));
  }
  return absl::OkStatus();
}

absl::Status TakeGradientShape(InferenceContext* c) {
  RETURN_IF_ERROR(RequireSharedName(c));
  RETURN_IF_ERROR(ScalarInput(c, 0, "num_required"));
  ASSIGN_OR_RETURN(TensorShape shape, c->GetAttr<TensorShape>("shape"));
  c->set_output(0, std::move(shape));
  return absl::OkStatus();
}

// indices [n], values [n] + the row shape, dense shape [rank].
absl::Status SparseTakeGradientShape(InferenceContext* c) {
  RETURN_IF_ERROR(RequireSharedName(c));
  RETURN_IF_ERROR(ScalarInput(c, 0, "num_required"));
  ASSIGN_OR_RETURN(TensorShape shape, c->GetAttr<TensorShape>("shape"));
  c->set_output(0, TensorShape({-1}));
  if (shape.rank() < 1) {
    c->set_output(1, TensorShape::Unknown());
    c->set_output(2, TensorShape({-1}));
    return absl::OkStatus();
  }
  std::vector<int64_t> values = {-1};
  values.insert(values.end(), shape.dims().begin() + 1, shape.dims().end());
  c->set_output(1, TensorShape(values));
  c->set_output(2, TensorShape({shape.rank()}));
  return absl::OkStatus();
}

absl::Status SetGlobalStepShape(InferenceContext* c) {
  RETURN_IF_ERROR(RequireSharedName(c));
  return ScalarInput(c, 0, "new_global_step");
}

absl::Status ScalarOutputShape(InferenceContext* c) {
  RETURN_IF_ERROR(RequireSharedName(c));
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

absl::Status EnqueueShape(InferenceContext* c) {
  RETURN_IF_ERROR(RequireSharedName(c));
  if (c->input(0).rank() >= 0 && c->input(0).rank() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": tokens must be a vector, got shape ", c->input(0).DebugString()));
  }
  return absl::OkStatus();
}

// The attrs every accumulator op carries.
OpDefBuilder AccumulatorOp(std::string name) {
  return OpDefBuilder(std::move(name))
      .Attr("dtype: {float, double}")
      .Attr("shape: shape")
      .Attr("container: string = ''")
      .Attr("shared_name: string")
      .SetIsStateful();
}

OpBuilder AccumulatorBuilder(const Scope& s, absl::string_view op, const ops::AccumulatorSpec& spec,
                             std::source_location loc) {
  OpBuilder b = s.Op(op, loc);
  b.Attr("dtype", spec.dtype)
      .Attr("shape", spec.shape)
      .Attr("container", spec.container)
      .Attr("shared_name", spec.shared_name);
  // The ops that serve both kinds say which they mean.
  if (spec.sparse && !absl::StartsWith(op, "Sparse")) b.Attr("sparse", true);
  return b;
}

OpBuilder QueueBuilder(const Scope& s, absl::string_view op, const ops::SyncTokenQueueSpec& spec,
                       std::source_location loc) {
  OpBuilder b = s.Op(op, loc);
  b.Attr("container", spec.container).Attr("shared_name", spec.shared_name);
  return b;
}

}  // namespace

absl::Status RegisterDataFlowOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(AccumulatorOp("AccumulatorApplyGradient")
                                    .Input("local_step: int64")
                                    .Input("gradient: dtype")
                                    .SetShapeFn(ApplyGradientShape)));
  RETURN_IF_ERROR(ops->Register(AccumulatorOp("AccumulatorTakeGradient")
                                    .Input("num_required: int32")
                                    .Output("average: dtype")
                                    .Attr("timeout_ms: int = 0")
                                    .SetShapeFn(TakeGradientShape)));
  RETURN_IF_ERROR(ops->Register(AccumulatorOp("SparseAccumulatorApplyGradient")
                                    .Input("local_step: int64")
                                    .Input("gradient_indices: int64")
                                    .Input("gradient_values: dtype")
                                    .Input("gradient_shape: int64")
                                    .Attr("has_known_shape: bool = true")));
  RETURN_IF_ERROR(ops->Register(AccumulatorOp("SparseAccumulatorTakeGradient")
                                    .Input("num_required: int32")
                                    .Output("indices: int64")
                                    .Output("values: dtype")
                                    .Output("shape: int64")
                                    .Attr("timeout_ms: int = 0")
                                    .SetShapeFn(SparseTakeGradientShape)));
  RETURN_IF_ERROR(ops->Register(AccumulatorOp("AccumulatorSetGlobalStep")
                                    .Attr("sparse: bool = false")
                                    .Input("new_global_step: int64")
                                    .SetShapeFn(SetGlobalStepShape)));
  RETURN_IF_ERROR(ops->Register(AccumulatorOp("AccumulatorNumAccumulated")
                                    .Attr("sparse: bool = false")
                                    .Output("num_accumulated: int32")
                                    .SetShapeFn(ScalarOutputShape)));
  RETURN_IF_ERROR(ops->Register(AccumulatorOp("AccumulatorNumStale")
                                    .Attr("sparse: bool = false")
                                    .Output("num_stale: int64")
                                    .SetShapeFn(ScalarOutputShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SyncTokenEnqueue")
                                    .Input("tokens: int64")
                                    .Attr("container: string = ''")
                                    .Attr("shared_name: string")
                                    .SetIsStateful()
                                    .SetShapeFn(EnqueueShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SyncTokenDequeue")
                                    .Output("token: int64")
                                    .Attr("container: string = ''")
                                    .Attr("shared_name: string")
                                    .Attr("timeout_ms: int = 0")
                                    .SetIsStateful()
                                    .SetShapeFn(ScalarOutputShape)));
  for (const char* op : {"AccumulatorApplyGradient", "AccumulatorTakeGradient",
                         "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient",
                         "AccumulatorSetGlobalStep", "AccumulatorNumAccumulated",
                         "AccumulatorNumStale", "SyncTokenEnqueue", "SyncTokenDequeue"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Node* AccumulatorApplyGradient(const Scope& s, const AccumulatorSpec& spec, Input local_step,
                               Input gradient, std::source_location loc) {
  return AccumulatorBuilder(s, "AccumulatorApplyGradient", spec, loc)
      .Input(local_step)
      .Input(gradient)
      .Finalize();
}

Output AccumulatorTakeGradient(const Scope& s, const AccumulatorSpec& spec, Input num_required,
                               int64_t timeout_ms, std::source_location loc) {
  return AccumulatorBuilder(s, "AccumulatorTakeGradient", spec, loc)
      .Input(num_required)
      .Attr("timeout_ms", timeout_ms)
      .Finalize1();
}

Node* SparseAccumulatorApplyGradient(const Scope& s, const AccumulatorSpec& spec, Input local_step,
                                     Input indices, Input values, Input dense_shape,
                                     std::source_location loc) {
  return AccumulatorBuilder(s, "SparseAccumulatorApplyGradient", spec, loc)
      .Input(local_step)
      .Input(indices)
      .Input(values)
      .Input(dense_shape)
      .Finalize();
}

SparseAccumulatorTakeOutputs SparseAccumulatorTakeGradient(const Scope& s,
                                                           const AccumulatorSpec& spec,
                                                           Input num_required, int64_t timeout_ms,
                                                           std::source_location loc) {
  std::vector<Output> out = AccumulatorBuilder(s, "SparseAccumulatorTakeGradient", spec, loc)
                                .Input(num_required)
                                .Attr("timeout_ms", timeout_ms)
                                .FinalizeAll();
  if (out.size() != 3) return {};
  return {out[0], out[1], out[2]};
}

Node* AccumulatorSetGlobalStep(const Scope& s, const AccumulatorSpec& spec, Input new_global_step,
                               std::source_location loc) {
  return AccumulatorBuilder(s, "AccumulatorSetGlobalStep", spec, loc)
      .Input(new_global_step)
      .Finalize();
}

Output AccumulatorNumAccumulated(const Scope& s, const AccumulatorSpec& spec,
                                 std::source_location loc) {
  return AccumulatorBuilder(s, "AccumulatorNumAccumulated", spec, loc).Finalize1();
}

Output AccumulatorNumStale(const Scope& s, const AccumulatorSpec& spec, std::source_location loc) {
  return AccumulatorBuilder(s, "AccumulatorNumStale", spec, loc).Finalize1();
}

Node* SyncTokenEnqueue(const Scope& s, const SyncTokenQueueSpec& spec, Input tokens,
                       std::source_location loc) {
  return QueueBuilder(s, "SyncTokenEnqueue", spec, loc).Input(tokens).Finalize();
}

Output SyncTokenDequeue(const Scope& s, const SyncTokenQueueSpec& spec, int64_t timeout_ms,
                        std::source_location loc) {
  return QueueBuilder(s, "SyncTokenDequeue", spec, loc).Attr("timeout_ms", timeout_ms).Finalize1();
}

}  // namespace ops
}  // namespace sluice
