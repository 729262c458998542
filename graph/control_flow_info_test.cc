#include "graph/control_flow_info.h"

#include <string>
#include <vector>

#include "graph/algorithm.h"
#include "graph/attr_value.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

// A private registry of stand-ins with the control-flow roles (the real ops
// are in ops/control_flow/control_flow_ops.h, a layer above).
class ControlFlowInfoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Src").Output("y: float")).ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Id").Input("x: float").Output("y: float")).ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Add2")
                                  .Input("a: float")
                                  .Input("b: float")
                                  .Output("y: float"))
                    .ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Enter")
                                  .Input("x: float")
                                  .Output("y: float")
                                  .Attr("frame_name: string")
                                  .Attr("parallel_iterations: int = 10")
                                  .SetControlFlowRole(ControlFlowRole::kEnter))
                    .ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Exit").Input("x: float").Output("y: float")
                                  .SetControlFlowRole(ControlFlowRole::kExit))
                    .ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Next").Input("x: float").Output("y: float")
                                  .SetControlFlowRole(ControlFlowRole::kNextIteration))
                    .ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Merge")
                                  .Input("a: float")
                                  .Input("b: float")
                                  .Output("y: float")
                                  .SetControlFlowRole(ControlFlowRole::kMerge))
                    .ok());
  }

  Node* Add(Graph* g, const std::string& name, const std::string& op,
            const std::vector<Node*>& inputs, const std::string& frame = "",
            int64_t parallel = 10) {
    NodeDef def;
    def.set_name(name);
    def.set_op(op);
    if (op == "Enter") {
      (*def.mutable_attr())["frame_name"] = MakeAttr(frame);
      (*def.mutable_attr())["parallel_iterations"] = MakeAttr(parallel);
    }
    absl::StatusOr<Node*> n = g->AddNode(def);
    EXPECT_TRUE(n.ok()) << n.status();
    for (size_t i = 0; i < inputs.size(); ++i) {
      EXPECT_TRUE(g->AddEdge(inputs[i], 0, *n, static_cast<int>(i)).ok());
    }
    return *n;
  }

  absl::StatusOr<ControlFlowInfo> Build(const Graph& g) {
    absl::StatusOr<std::vector<Node*>> order = TopologicalOrder(g);
    if (!order.ok()) return order.status();
    return BuildControlFlowInfo(g, *order);
  }

  OpRegistry reg_;
};

TEST_F(ControlFlowInfoTest, ALoopIsAFrameAndNestedLoopsAreTheirOwn) {
  Graph g(&reg_);
  Node* src = Add(&g, "src", "Src", {});
  Node* enter = Add(&g, "enter", "Enter", {src}, "f", 4);
  Node* merge = Add(&g, "merge", "Merge", {enter, enter});
  Node* inner_enter = Add(&g, "inner_enter", "Enter", {merge}, "f");  // same name, nested
  Node* inner_exit = Add(&g, "inner_exit", "Exit", {inner_enter});
  Node* next = Add(&g, "next", "Next", {inner_exit});
  g.RemoveEdge(merge->input_edge(1));
  ASSERT_TRUE(g.AddEdge(next, 0, merge, 1).ok());  // the back edge
  Node* exit = Add(&g, "exit", "Exit", {merge});
  Node* after = Add(&g, "after", "Id", {exit});

  absl::StatusOr<ControlFlowInfo> info = Build(g);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->has_control_flow);
  ASSERT_EQ(info->frames.size(), 3u);
  const int loop = info->enter_child[enter->id()];
  const int inner = info->enter_child[inner_enter->id()];
  EXPECT_EQ(info->frame_of[src->id()], 0);
  EXPECT_EQ(info->frame_of[enter->id()], 0);  // an Enter runs in its parent
  EXPECT_EQ(info->frame_of[merge->id()], loop);
  EXPECT_EQ(info->frame_of[inner_exit->id()], inner);
  EXPECT_EQ(info->frame_of[next->id()], loop);
  EXPECT_EQ(info->frame_of[after->id()], 0);
  EXPECT_NE(loop, inner);
  EXPECT_EQ(info->frames[inner].parent, loop);
  EXPECT_EQ(info->frames[loop].parallel_iterations, 4);
  EXPECT_EQ(info->frames[loop].num_enters, 1);
}

TEST_F(ControlFlowInfoTest, MixedFramesAndStrayExitsAreErrors) {
  Graph g(&reg_);
  Node* src = Add(&g, "src", "Src", {});
  Node* enter = Add(&g, "enter", "Enter", {src}, "f");
  Add(&g, "mixed", "Add2", {enter, src});
  absl::StatusOr<ControlFlowInfo> info = Build(g);
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("'mixed'"), std::string::npos) << info.status();
  EXPECT_NE(info.status().message().find("two frames"), std::string::npos) << info.status();

  Graph h(&reg_);
  Add(&h, "stray", "Exit", {Add(&h, "src", "Src", {})});
  info = Build(h);
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("'stray'"), std::string::npos) << info.status();
}

TEST_F(ControlFlowInfoTest, OnlyNextIterationMayCloseACycle) {
  Graph g(&reg_);
  Node* src = Add(&g, "src", "Src", {});
  Node* a = Add(&g, "a", "Add2", {src, src});
  Node* b = Add(&g, "b", "Id", {a});
  g.RemoveEdge(a->input_edge(1));
  ASSERT_TRUE(g.AddEdge(b, 0, a, 1).ok());
  absl::StatusOr<std::vector<Node*>> order = TopologicalOrder(g);
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("cycle"), std::string::npos) << order.status();
}

}  // namespace
}  // namespace sluice
