// The frame propagator on its own: the test plays the run loop, finishing
// nodes by hand with outputs it chooses, and checks what becomes ready where.
#include "runtime/frame_propagator.h"

#include <memory>
#include <string>
#include <vector>

#include "graph/scope.h"
#include "gtest/gtest.h"
#include "runtime/executor_layout.h"
#include "runtime/executor_testutil.h"
#include "runtime/frame_ops.h"

namespace sluice {
namespace internal {
namespace {

TensorValue Value(float v) { return TensorValue{Tensor::Scalar<float>(v)}; }
TensorValue Pred(bool v) { return TensorValue{Tensor::Scalar<bool>(v)}; }

class FramePropagatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterFrameOps(&ops_).ok());
    RegisterFrameKernels(&kernels_);
    ASSERT_TRUE(RegisterTestControlFlowOps(&ops_).ok());
    RegisterTestControlFlowKernels(&kernels_);
    device_ = NewCpuDevice({.num_threads = 1});
  }

  Output Arg(const Scope& s, const char* name, DataType type, int index) {
    return s.WithOpName(name).Op(kArgOp).Attr("T", type).Attr("index", int64_t{index}).Finalize1();
  }

  // x, p: _Arg; Enter(x) into frame "f", p as a constant Enter;
  // Merge(Enter, NextIteration) -> Switch(Merge, p): false -> Exit -> _Retval,
  // true -> NextIteration.
  void BuildLoop(int64_t parallel_iterations) {
    auto g = std::make_unique<Graph>(&ops_);
    Scope s = Scope::NewRootScope(g.get());
    auto enter = [&](const char* name, const Output& v, bool constant) {
      return s.WithOpName(name)
          .Op("Enter")
          .Input(v)
          .Attr("frame_name", "f")
          .Attr("is_constant", constant)
          .Attr("parallel_iterations", parallel_iterations)
          .Finalize1();
    };
    const Output ex = enter("enter_x", Arg(s, "x", DT_FLOAT, 0), false);
    const Output ep = enter("enter_p", Arg(s, "p", DT_BOOL, 1), true);
    const Output m =
        s.WithOpName("merge").Op("Merge").InputList(std::vector<Output>{ex, ex}).Finalize1();
    const std::vector<Output> sw =
        s.WithOpName("switch").Op("Switch").Input(m).Input(ep).FinalizeAll();
    const Output exit = s.WithOpName("exit").Op("Exit").Input(sw[0]).Finalize1();
    const Output next = s.WithOpName("next").Op("NextIteration").Input(sw[1]).Finalize1();
    s.WithOpName("retval").Op(kRetvalOp).Input(exit).Attr("index", int64_t{0}).Finalize();
    ASSERT_TRUE(s.ok()) << s.status();
    g->RemoveEdge(m.node->input_edge(1));
    ASSERT_TRUE(g->AddEdge(next.node, 0, m.node, 1).ok());
    Create(std::move(g));
  }

  // x: _Arg, p: _Arg; Switch(x, p) -> Identity "no" / "yes" -> Merge -> _Retval.
  void BuildCond() {
    auto g = std::make_unique<Graph>(&ops_);
    Scope s = Scope::NewRootScope(g.get());
    const std::vector<Output> sw = s.WithOpName("switch")
                                       .Op("Switch")
                                       .Input(Arg(s, "x", DT_FLOAT, 0))
                                       .Input(Arg(s, "p", DT_BOOL, 1))
                                       .FinalizeAll();
    const Output no = s.WithOpName("no").Op("Identity").Input(sw[0]).Finalize1();
    const Output yes = s.WithOpName("yes").Op("Identity").Input(sw[1]).Finalize1();
    const Output m =
        s.WithOpName("merge").Op("Merge").InputList(std::vector<Output>{no, yes}).Finalize1();
    s.WithOpName("retval").Op(kRetvalOp).Input(m).Attr("index", int64_t{0}).Finalize();
    ASSERT_TRUE(s.ok()) << s.status();
    Create(std::move(g));
  }

  void Create(std::unique_ptr<Graph> g) {
    absl::StatusOr<std::unique_ptr<const ExecutorLayout>> layout =
        ExecutorLayout::Create(std::move(g), device_.get(), kernels_);
    ASSERT_TRUE(layout.ok()) << layout.status();
    layout_ = *std::move(layout);
    propagator_ = std::make_unique<FramePropagator>(layout_.get());
  }

  int Id(const std::string& name) const {
    for (int i = 0; i < layout_->num_items(); ++i) {
      if (layout_->item(i).node->name() == name) return i;
    }
    ADD_FAILURE() << "no node " << name;
    return -1;
  }
  std::string Name(const TaggedNode& t) const { return layout_->item(t.id).node->name(); }

  // Finishes `t` with `outputs`; returns what became ready.
  ReadyNodes Finish(const TaggedNode& t, std::vector<TensorValue> outputs) {
    ReadyNodes ready;
    absl::Status s = propagator_->Propagate(t, outputs, &ready);
    EXPECT_TRUE(s.ok()) << s;
    return ready;
  }
  TaggedNode Root(const std::string& name) { return propagator_->RootNode(Id(name)); }
  // The one node that is ready, by name.
  TaggedNode Only(const ReadyNodes& ready, const std::string& name) {
    EXPECT_EQ(ready.size(), 1u);
    for (const TaggedNode& t : ready) {
      if (Name(t) == name) return t;
    }
    ADD_FAILURE() << name << " is not ready";
    return TaggedNode{};
  }
  TaggedNode Find(const ReadyNodes& ready, const std::string& name) {
    for (const TaggedNode& t : ready) {
      if (Name(t) == name) return t;
    }
    ADD_FAILURE() << name << " is not ready";
    return TaggedNode{};
  }

  OpRegistry ops_;
  KernelRegistry kernels_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<const ExecutorLayout> layout_;
  std::unique_ptr<FramePropagator> propagator_;
};

TEST_F(FramePropagatorTest, LayoutPutsTheLoopInAChildFrame) {
  BuildLoop(10);
  ASSERT_EQ(layout_->num_frames(), 2);
  EXPECT_EQ(layout_->frame(1).info.name, "f");
  EXPECT_EQ(layout_->frame(1).info.num_enters, 2);
  EXPECT_EQ(layout_->item(Id("enter_x")).frame, 0);  // an Enter runs in the parent
  EXPECT_EQ(layout_->item(Id("enter_x")).child_frame, 1);
  EXPECT_TRUE(layout_->item(Id("enter_p")).is_constant_enter);
  for (const char* n : {"merge", "switch", "exit", "next"}) {
    EXPECT_EQ(layout_->item(Id(n)).frame, 1) << n;
  }
  EXPECT_EQ(layout_->item(Id("merge")).kind, ItemKind::kMerge);
  EXPECT_EQ(layout_->item(Id("retval")).frame, 0);
}

TEST_F(FramePropagatorTest, EnterStartsAFrameNextIterationAdvancesExitLeaves) {
  BuildLoop(/*parallel_iterations=*/2);
  const TaggedNode ex = Only(Finish(Root("x"), {Value(1)}), "enter_x");
  const TaggedNode ep = Only(Finish(Root("p"), {Pred(true)}), "enter_p");
  EXPECT_TRUE(ex.frame->is_root());
  // Enter: the Merge is ready in iteration 0 of a new child frame.
  const TaggedNode m0 = Only(Finish(ex, {Value(1)}), "merge");
  EXPECT_FALSE(m0.frame->is_root());
  EXPECT_EQ(m0.frame->parent, ex.frame);
  EXPECT_NE(m0.frame->frame_id, 0u);
  EXPECT_EQ(m0.iter->iter, 0);
  EXPECT_TRUE(Finish(ep, {Pred(true)}).empty());  // Switch still waits for the Merge
  const TaggedNode sw0 = Only(Finish(m0, {Value(1), TensorValue{}}), "switch");
  // Switch took output 1: NextIteration is live, Exit (output 0) dead.
  ReadyNodes after_switch = Finish(sw0, {TensorValue{}, Value(1)});
  ASSERT_EQ(after_switch.size(), 2u);
  const TaggedNode next0 = Find(after_switch, "next");
  const TaggedNode exit0 = Find(after_switch, "exit");
  EXPECT_FALSE(next0.dead);
  EXPECT_TRUE(exit0.dead);
  // NextIteration: iteration 1 of the same frame, while iteration 0 still
  // has its Exit to run (two may be alive).
  const TaggedNode m1 = Only(Finish(next0, {Value(2)}), "merge");
  EXPECT_EQ(m1.frame, m0.frame);
  EXPECT_EQ(m1.iter->iter, 1);
  EXPECT_EQ(propagator_->NumIterationsForTesting(m1), 2);
  EXPECT_TRUE(Finish(exit0, {}).empty());  // dead, and not the newest: dropped
  EXPECT_EQ(propagator_->NumIterationsForTesting(m1), 1);
  // The constant Enter's value reached iteration 1 too: the Switch needs only the Merge.
  const TaggedNode sw1 = Only(Finish(m1, {Value(2), TensorValue{}}), "switch");
  EXPECT_EQ(sw1.iter->iter, 1);
  ReadyNodes last = Finish(sw1, {Value(2), TensorValue{}});
  ASSERT_EQ(last.size(), 2u);
  EXPECT_TRUE(Find(last, "next").dead);
  const TaggedNode exit1 = Find(last, "exit");
  EXPECT_FALSE(exit1.dead);
  EXPECT_TRUE(Finish(Find(last, "next"), {}).empty());  // a dead NextIteration: no iteration 2
  // Exit: back in the parent (root) frame.
  const TaggedNode retval = Only(Finish(exit1, {Value(2)}), "retval");
  EXPECT_TRUE(retval.frame->is_root());
  EXPECT_EQ(retval.iter->iter, 0);
  EXPECT_FALSE(retval.dead);
  EXPECT_EQ(retval.iter->slots[layout_->item(retval.id).input_start].tensor.scalar<float>(), 2);
}

TEST_F(FramePropagatorTest, OneParallelIterationDefersTheNextIteration) {
  BuildLoop(/*parallel_iterations=*/1);
  const TaggedNode ex = Only(Finish(Root("x"), {Value(1)}), "enter_x");
  const TaggedNode ep = Only(Finish(Root("p"), {Pred(true)}), "enter_p");
  const TaggedNode m0 = Only(Finish(ex, {Value(1)}), "merge");
  EXPECT_TRUE(Finish(ep, {Pred(true)}).empty());
  const TaggedNode sw0 = Only(Finish(m0, {Value(1), TensorValue{}}), "switch");
  ReadyNodes after_switch = Finish(sw0, {TensorValue{}, Value(1)});
  // NextIteration before the Exit: its value waits, iteration 0 is alive.
  EXPECT_TRUE(Finish(Find(after_switch, "next"), {Value(2)}).empty());
  EXPECT_EQ(propagator_->NumIterationsForTesting(m0), 1);
  // The Exit ends iteration 0; iteration 1 starts with the deferred value.
  const TaggedNode m1 = Only(Finish(Find(after_switch, "exit"), {}), "merge");
  EXPECT_EQ(m1.iter->iter, 1);
  EXPECT_EQ(m1.iter->slots[layout_->item(m1.id).input_start + 1].tensor.scalar<float>(), 2);
}

TEST_F(FramePropagatorTest, ADeadEnterRunsTheLoopDeadOnceAndItsExitIsDead) {
  BuildLoop(10);
  TaggedNode x = Root("x");
  x.dead = true;  // as if x came from an untaken branch
  const TaggedNode ex = Only(Finish(x, {}), "enter_x");
  EXPECT_TRUE(ex.dead);
  const TaggedNode ep = Only(Finish(Root("p"), {Pred(true)}), "enter_p");
  // A dead Enter makes its Merge dead at once (no NextIteration will come).
  const TaggedNode m0 = Only(Finish(ex, {}), "merge");
  EXPECT_TRUE(m0.dead);
  EXPECT_TRUE(Finish(ep, {Pred(true)}).empty());
  const TaggedNode sw0 = Only(Finish(m0, {}), "switch");
  EXPECT_TRUE(sw0.dead);
  ReadyNodes after_switch = Finish(sw0, {});
  ASSERT_EQ(after_switch.size(), 2u);
  EXPECT_TRUE(Find(after_switch, "next").dead);
  EXPECT_TRUE(Find(after_switch, "exit").dead);
  EXPECT_TRUE(Finish(Find(after_switch, "next"), {}).empty());
  // The Exit, dead in the loop's last iteration, reaches the parent dead
  // when the frame ends.
  const TaggedNode retval = Only(Finish(Find(after_switch, "exit"), {}), "retval");
  EXPECT_TRUE(retval.dead);
  EXPECT_TRUE(retval.frame->is_root());
}

TEST_F(FramePropagatorTest, DeadInputsMakeDeadOutputsUntilAMerge) {
  BuildCond();
  EXPECT_TRUE(Finish(Root("x"), {Value(3)}).empty());
  const TaggedNode sw = Only(Finish(Root("p"), {Pred(true)}), "switch");
  ReadyNodes branches = Finish(sw, {TensorValue{}, Value(3)});
  ASSERT_EQ(branches.size(), 2u);
  const TaggedNode no = Find(branches, "no");
  const TaggedNode yes = Find(branches, "yes");
  EXPECT_TRUE(no.dead);  // the output Switch left unset
  EXPECT_FALSE(yes.dead);
  // A dead input alone does not make the Merge ready; the live one does.
  EXPECT_TRUE(Finish(no, {}).empty());
  const TaggedNode m = Only(Finish(yes, {Value(3)}), "merge");
  EXPECT_FALSE(m.dead);
}

TEST_F(FramePropagatorTest, AMergeOfDeadInputsOnlyIsDead) {
  BuildCond();
  TaggedNode x = Root("x");
  x.dead = true;
  EXPECT_TRUE(Finish(x, {}).empty());
  const TaggedNode sw = Only(Finish(Root("p"), {Pred(true)}), "switch");
  EXPECT_TRUE(sw.dead);
  ReadyNodes branches = Finish(sw, {});
  ASSERT_EQ(branches.size(), 2u);
  EXPECT_TRUE(Find(branches, "no").dead);
  EXPECT_TRUE(Find(branches, "yes").dead);
  EXPECT_TRUE(Finish(Find(branches, "no"), {}).empty());
  const TaggedNode m = Only(Finish(Find(branches, "yes"), {}), "merge");
  EXPECT_TRUE(m.dead);
  EXPECT_TRUE(Only(Finish(m, {}), "retval").dead);
}

TEST_F(FramePropagatorTest, AnUnsetOutputIsAnErrorNamingTheNode) {
  BuildCond();
  ReadyNodes ready;
  absl::Status s = propagator_->Propagate(Root("x"), {TensorValue{}}, &ready);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("'x'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("did not produce output 0"), std::string::npos) << s;
  EXPECT_TRUE(ready.empty());
}

}  // namespace
}  // namespace internal
}  // namespace sluice
