#include "runtime/executor_testutil.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// Enter, Exit, NextIteration, LoopCond, Identity: the executor moves the value.
class ForwardOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, ctx->input(0));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// Forwards to output 1 when the predicate holds, else to output 0; the
// output not set is dead.
class SwitchOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ctx->set_output(ctx->input(1).scalar<bool>() ? 1 : 0, ctx->input(0));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// Runs with its one live input (the executor's rule).
class MergeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (!ctx->input(i).IsInitialized()) continue;
      ctx->set_output(0, ctx->input(i));
      ASSIGN_OR_RETURN(Tensor * index, ctx->allocate_output(1, TensorShape()));
      index->scalar<int32_t>() = i;
      return absl::OkStatus();
    }
    return absl::InternalError("Merge ran without a live input");
  }
  bool IsExpensive() const override { return false; }
};

class LessOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<bool>() = ctx->input(0).scalar<float>() < ctx->input(1).scalar<float>();
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

absl::Status RegisterForwarding(OpRegistry* ops, const char* name, ControlFlowRole role,
                                bool has_frame_attrs) {
  OpDefBuilder b(name);
  b.Input("data: T").Output("output: T").Attr("T: type").SetControlFlowRole(role);
  if (has_frame_attrs) {
    b.Attr("frame_name: string")
        .Attr("is_constant: bool = false")
        .Attr("parallel_iterations: int = 10");
  }
  return ops->Register(b);
}

Output Enter(const Scope& s, const Output& v, const TestLoopOptions& options, bool constant) {
  return s.Op("Enter")
      .Input(v)
      .Attr("frame_name", options.frame)
      .Attr("is_constant", constant)
      .Attr("parallel_iterations", options.parallel_iterations)
      .Finalize1();
}

}  // namespace

absl::Status RegisterTestControlFlowOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterForwarding(ops, "Enter", ControlFlowRole::kEnter, true));
  RETURN_IF_ERROR(RegisterForwarding(ops, "Exit", ControlFlowRole::kExit, false));
  RETURN_IF_ERROR(RegisterForwarding(ops, "NextIteration", ControlFlowRole::kNextIteration, false));
  RETURN_IF_ERROR(RegisterForwarding(ops, "Identity", ControlFlowRole::kNone, false));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Switch")
                                    .Input("data: T")
                                    .Input("pred: bool")
                                    .Output("output_false: T")
                                    .Output("output_true: T")
                                    .Attr("T: type")
                                    .SetControlFlowRole(ControlFlowRole::kSwitch)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Merge")
                                    .Input("inputs: N * T")
                                    .Output("output: T")
                                    .Output("value_index: int32")
                                    .Attr("T: type")
                                    .Attr("N: int >= 1")
                                    .SetControlFlowRole(ControlFlowRole::kMerge)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("LoopCond")
                                    .Input("input: bool")
                                    .Output("output: bool")
                                    .SetControlFlowRole(ControlFlowRole::kLoopCond)));
  return ops->Register(OpDefBuilder("Less").Input("x: float").Input("y: float").Output("z: bool"));
}

void RegisterTestControlFlowKernels(KernelRegistry* kernels) {
  for (const char* op : {"Enter", "Exit", "NextIteration", "Identity", "LoopCond"}) {
    kernels->Register<ForwardOp>(KernelDef(op, kDeviceTypeCpu));
  }
  kernels->Register<SwitchOp>(KernelDef("Switch", kDeviceTypeCpu));
  kernels->Register<MergeOp>(KernelDef("Merge", kDeviceTypeCpu));
  kernels->Register<LessOp>(KernelDef("Less", kDeviceTypeCpu));
}

Output Less(const Scope& s, const Output& a, const Output& b) {
  return s.Op("Less").Input(a).Input(b).Finalize1();
}

absl::StatusOr<std::vector<Output>> BuildTestLoop(const Scope& s, absl::Span<const Output> vars,
                                                  absl::Span<const Output> invariants,
                                                  const TestLoopCondFn& cond,
                                                  const TestLoopBodyFn& body,
                                                  const TestLoopOptions& options) {
  std::vector<Output> merges, in_loop;
  std::vector<Node*> merge_nodes;
  for (const Output& v : vars) {
    const Output e = Enter(s, v, options, /*constant=*/false);
    // Input 1 becomes the NextIteration once the body exists.
    const Output m = s.Op("Merge").InputList(std::vector<Output>{e, e}).Finalize1();
    merges.push_back(m);
    merge_nodes.push_back(m.node);
  }
  std::vector<Output> entered;
  for (const Output& v : invariants) entered.push_back(Enter(s, v, options, /*constant=*/true));
  RETURN_IF_ERROR(s.status());
  std::vector<Output> cond_in = merges;
  cond_in.insert(cond_in.end(), entered.begin(), entered.end());
  const Output pred = s.Op("LoopCond").Input(cond(s, cond_in)).Finalize1();
  std::vector<Output> exits;
  for (const Output& m : merges) {
    const std::vector<Output> sw = s.Op("Switch").Input(m).Input(pred).FinalizeAll();
    RETURN_IF_ERROR(s.status());
    exits.push_back(s.Op("Exit").Input(sw[0]).Finalize1());
    in_loop.push_back(s.Op("Identity").Input(sw[1]).Finalize1());
  }
  in_loop.insert(in_loop.end(), entered.begin(), entered.end());
  const std::vector<Output> next = body(s, in_loop);
  RETURN_IF_ERROR(s.status());
  if (next.size() != vars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the body returns ", next.size(), " values for ", vars.size(), " variables"));
  }
  for (size_t i = 0; i < next.size(); ++i) {
    const Output n = s.Op("NextIteration").Input(next[i]).Finalize1();
    RETURN_IF_ERROR(s.status());
    s.graph()->RemoveEdge(merge_nodes[i]->input_edge(1));
    RETURN_IF_ERROR(s.graph()->AddEdge(n.node, n.index, merge_nodes[i], 1));
  }
  return exits;
}

}  // namespace sluice
