#include "ops/control_flow/control_flow_ops.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// ---- Shapes -----------------------------------------------------------------

absl::Status ForwardShape(InferenceContext* ctx) {
  for (int i = 0; i < ctx->num_outputs(); ++i) ctx->set_output(i, ctx->input(0));
  return absl::OkStatus();
}

absl::Status SwitchShape(InferenceContext* ctx) {
  RETURN_IF_ERROR(ctx->WithRank(1, 0));
  return ForwardShape(ctx);
}

// The most specific shape every input fits: dims that differ become unknown,
// ranks that differ an unknown rank (an input not yet connected, the back
// edge of a loop, is unknown).
absl::Status MergeShape(InferenceContext* ctx) {
  TensorShape out = ctx->input(0);
  for (int i = 1; i < ctx->num_inputs() && !out.unknown_rank(); ++i) {
    const TensorShape& in = ctx->input(i);
    if (in.unknown_rank() || in.rank() != out.rank()) {
      out = TensorShape::Unknown();
      break;
    }
    for (int d = 0; d < out.rank(); ++d) {
      if (out.dim(d) != in.dim(d)) out.set_dim(d, TensorShape::kUnknownDim);
    }
  }
  ctx->set_output(0, out);
  ctx->set_output(1, TensorShape());
  return absl::OkStatus();
}

absl::Status LoopCondShape(InferenceContext* ctx) {
  RETURN_IF_ERROR(ctx->WithRank(0, 0));
  ctx->set_output(0, TensorShape());
  return absl::OkStatus();
}

// ---- Kernels ------------------------------------------------------------------

void Forward(OpKernelContext* ctx, int input, int output) {
  ctx->set_output(output, ctx->input(input));
  if (ctx->input_ref(input) != nullptr) ctx->set_output_ref(output, ctx->input_ref(input));
}

// Switch, RefSwitch: the output not set is dead (the executor's rule).
class SwitchOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& pred = ctx->input(1);
    if (pred.dims() != 0 || pred.dtype() != DT_BOOL) {
      return absl::InvalidArgumentError(
          absl::StrCat("Switch: pred must be a bool scalar, got ", DataTypeName(pred.dtype()),
                       " of shape ", pred.shape().DebugString()));
    }
    Forward(ctx, 0, pred.scalar<bool>() ? 1 : 0);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// Merge, RefMerge: the executor runs it with its live input only.
class MergeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (!ctx->input(i).IsInitialized() && ctx->input_ref(i) == nullptr) continue;
      Forward(ctx, i, 0);
      ASSIGN_OR_RETURN(Tensor * index, ctx->allocate_output(1, TensorShape()));
      index->scalar<int32_t>() = i;
      return absl::OkStatus();
    }
    return absl::InternalError("Merge ran without a live input");
  }
  bool IsExpensive() const override { return false; }
};

// Enter, Exit, NextIteration, LoopCond and their Ref forms: the executor
// moves the value between frames and iterations.
class ForwardOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    Forward(ctx, 0, 0);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class ControlTriggerOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext*) override { return absl::OkStatus(); }
  bool IsExpensive() const override { return false; }
};

// One op and its Ref form.
absl::Status RegisterForwarding(OpRegistry* ops, const std::string& name, ControlFlowRole role,
                                bool has_frame_attrs) {
  for (bool ref : {false, true}) {
    const std::string type = ref ? "Ref(T)" : "T";
    OpDefBuilder b(ref ? "Ref" + name : name);
    b.Input("data: " + type).Output("output: " + type).Attr("T: type");
    if (has_frame_attrs) {
      b.Attr("frame_name: string")
          .Attr("is_constant: bool = false")
          .Attr("parallel_iterations: int = 10");
    }
    if (ref) b.SetAllowsUninitializedInput();
    RETURN_IF_ERROR(ops->Register(b.SetControlFlowRole(role).SetShapeFn(ForwardShape)));
  }
  return absl::OkStatus();
}

bool IsRefOutput(const Input& data) {
  return !data.is_literal() && data.output().valid() && IsRefType(data.output().dtype());
}

}  // namespace

absl::Status RegisterControlFlowOps(OpRegistry* ops) {
  for (bool ref : {false, true}) {
    const std::string type = ref ? "Ref(T)" : "T";
    OpDefBuilder sw(ref ? "RefSwitch" : "Switch");
    sw.Input("data: " + type)
        .Input("pred: bool")
        .Output("output_false: " + type)
        .Output("output_true: " + type)
        .Attr("T: type")
        .SetControlFlowRole(ControlFlowRole::kSwitch)
        .SetShapeFn(SwitchShape);
    if (ref) sw.SetAllowsUninitializedInput();
    RETURN_IF_ERROR(ops->Register(sw));
    OpDefBuilder merge(ref ? "RefMerge" : "Merge");
    merge.Input(ref ? "inputs: Ref(N * T)" : "inputs: N * T")
        .Output("output: " + type)
        .Output("value_index: int32")
        .Attr("T: type")
        .Attr("N: int >= 1")
        .SetControlFlowRole(ControlFlowRole::kMerge)
        .SetShapeFn(MergeShape);
    if (ref) merge.SetAllowsUninitializedInput();
    RETURN_IF_ERROR(ops->Register(merge));
  }
  RETURN_IF_ERROR(RegisterForwarding(ops, "Enter", ControlFlowRole::kEnter, true));
  RETURN_IF_ERROR(RegisterForwarding(ops, "Exit", ControlFlowRole::kExit, false));
  RETURN_IF_ERROR(RegisterForwarding(ops, "NextIteration", ControlFlowRole::kNextIteration, false));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("LoopCond")
                                    .Input("input: bool")
                                    .Output("output: bool")
                                    .SetControlFlowRole(ControlFlowRole::kLoopCond)
                                    .SetShapeFn(LoopCondShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ControlTrigger")
                                    .SetControlFlowRole(ControlFlowRole::kControlTrigger)));
  return absl::OkStatus();
}

void RegisterControlFlowKernels(KernelRegistry* kernels) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  kernels->Register<SwitchOp>(cpu("Switch"));
  kernels->Register<SwitchOp>(cpu("RefSwitch"));
  kernels->Register<MergeOp>(cpu("Merge"));
  kernels->Register<MergeOp>(cpu("RefMerge"));
  for (const char* op : {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration",
                         "RefNextIteration", "LoopCond"}) {
    kernels->Register<ForwardOp>(cpu(op));
  }
  kernels->Register<ControlTriggerOp>(cpu("ControlTrigger"));
}

void RegisterControlFlowDeviceKernels(KernelRegistry* kernels, const std::string& device_type,
                                      const std::vector<DataType>& device_types) {
  // Values that live in host memory beside the device's kernels: counters,
  // strings, handles, TensorLists (a variant never enters device memory).
  const std::vector<DataType> host_types = {DT_INT32, DT_STRING, DT_RESOURCE,
                                            ::tensorflow::DT_VARIANT};
  auto on = [&](const char* op, const std::vector<DataType>& types) {
    return KernelDef(op, device_type).TypeConstraint("T", types);
  };
  for (const char* op : {"Switch", "RefSwitch"}) {
    kernels->Register<SwitchOp>(on(op, device_types).HostMemory("pred"));
    kernels->Register<SwitchOp>(on(op, host_types).AllHostMemory());
  }
  for (const char* op : {"Merge", "RefMerge"}) {
    kernels->Register<MergeOp>(on(op, device_types).HostMemory("value_index"));
    kernels->Register<MergeOp>(on(op, host_types).AllHostMemory());
  }
  for (const char* op :
       {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration"}) {
    kernels->Register<ForwardOp>(on(op, device_types));
    kernels->Register<ForwardOp>(on(op, host_types).AllHostMemory());
  }
  kernels->Register<ForwardOp>(KernelDef("LoopCond", device_type).AllHostMemory());
  kernels->Register<ControlTriggerOp>(KernelDef("ControlTrigger", device_type));
}

namespace ops {

SwitchOutputs Switch(const Scope& scope, const Input& data, const Input& pred,
                     std::source_location loc) {
  std::vector<Output> out = scope.Op(IsRefOutput(data) ? "RefSwitch" : "Switch", loc)
                                .Input(data)
                                .Input(pred)
                                .FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

MergeOutputs Merge(const Scope& scope, absl::Span<const Output> inputs,
                   std::source_location loc) {
  const bool ref = !inputs.empty() && inputs[0].valid() && IsRefType(inputs[0].dtype());
  std::vector<Output> out = scope.Op(ref ? "RefMerge" : "Merge", loc).InputList(inputs).FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

Output Enter(const Scope& scope, const Input& data, absl::string_view frame_name,
             const EnterAttrs& attrs, std::source_location loc) {
  return scope.Op(IsRefOutput(data) ? "RefEnter" : "Enter", loc)
      .Input(data)
      .Attr("frame_name", std::string(frame_name))
      .Attr("is_constant", attrs.is_constant)
      .Attr("parallel_iterations", attrs.parallel_iterations)
      .Finalize1();
}

Output Exit(const Scope& scope, const Input& data, std::source_location loc) {
  return scope.Op(IsRefOutput(data) ? "RefExit" : "Exit", loc).Input(data).Finalize1();
}

Output NextIteration(const Scope& scope, const Input& data, std::source_location loc) {
  return scope.Op(IsRefOutput(data) ? "RefNextIteration" : "NextIteration", loc)
      .Input(data)
      .Finalize1();
}

Output LoopCond(const Scope& scope, const Input& pred, std::source_location loc) {
  return scope.Op("LoopCond", loc).Input(pred).Finalize1();
}

Node* ControlTrigger(const Scope& scope, std::source_location loc) {
  return scope.Op("ControlTrigger", loc).Finalize();
}

}  // namespace ops
}  // namespace sluice
