// Tests of collapsing name scopes into boxes.
#include "tools/graph_view.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sluice.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Names of the boxes, in order.
std::vector<std::string> BoxNames(const GraphView& view) {
  std::vector<std::string> names;
  for (const ViewBox& b : view.boxes) names.push_back(b.name);
  return names;
}

const ViewBox& BoxNamed(const GraphView& view, absl::string_view name) {
  for (const ViewBox& b : view.boxes) {
    if (b.name == name) return b;
  }
  static const ViewBox kNone;
  ADD_FAILURE() << "no box " << name;
  return kNone;
}

std::vector<std::string> AllOn(const Graph& g, const std::string& device) {
  return std::vector<std::string>(g.num_node_ids(), device);
}

// x -> four scopes s0..s3 in a chain, each of 5 blocks of 25 Adds (each Add
// with its own Const): 1 + 4 * 5 * 25 * 2 = 1001 nodes.
class BigGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Output h = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({4})});
    for (int s = 0; s < 4; ++s) {
      Scope scope = root_.NewSubScope(absl::StrCat("s", s));
      for (int b = 0; b < 5; ++b) {
        Scope block = scope.NewSubScope(absl::StrCat("block", b));
        for (int i = 0; i < 25; ++i) h = ops::Add(block, h, 1.0f);
      }
    }
    ASSERT_TRUE(root_.ok()) << root_.status();
  }

  Scope root_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(BigGraphTest, ScopesCollapseToOneBoxEach) {
  const Graph& g = *root_.graph();
  ASSERT_EQ(g.num_nodes(), 1001);
  absl::StatusOr<GraphView> view = BuildGraphView(g, AllOn(g, "/device:CPU:0"), {});
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_THAT(BoxNames(*view), ElementsAre("x", "s0", "s1", "s2", "s3"));
  EXPECT_FALSE(view->boxes[0].collapsed);
  const ViewBox& s1 = BoxNamed(*view, "s1");
  EXPECT_TRUE(s1.collapsed);
  EXPECT_EQ(s1.node_ids.size(), 250u);
  EXPECT_EQ(s1.scope_size, 250);
  EXPECT_EQ(s1.device, "/device:CPU:0");
  EXPECT_THAT(s1.op_counts, ElementsAre(Pair("Add", 125), Pair("Const", 125)));
  // x -> s0 -> s1 -> s2 -> s3, one edge each.
  ASSERT_EQ(view->edges.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(view->edges[i].src_box, i);
    EXPECT_EQ(view->edges[i].dst_box, i + 1);
    EXPECT_EQ(view->edges[i].count, 1);
    EXPECT_FALSE(view->edges[i].control);
  }
  EXPECT_EQ(view->box_of[g.FindNode("s2/block3/Add_4")->id()], 3);
}

TEST_F(BigGraphTest, ExpandOpensOneScopeOneLevel) {
  const Graph& g = *root_.graph();
  absl::StatusOr<GraphView> view = BuildGraphView(g, AllOn(g, ""), {.expand = {"s1"}});
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_THAT(BoxNames(*view), ElementsAre("x", "s0", "s1/block0", "s1/block1", "s1/block2",
                                           "s1/block3", "s1/block4", "s2", "s3"));
  EXPECT_EQ(BoxNamed(*view, "s1/block2").node_ids.size(), 50u);
  EXPECT_EQ(view->edges.size(), 8u);
}

TEST_F(BigGraphTest, ExpandingANestedScopeOpensItsParents) {
  const Graph& g = *root_.graph();
  absl::StatusOr<GraphView> view = BuildGraphView(g, AllOn(g, ""), {.expand = {"s3/block4/"}});
  ASSERT_TRUE(view.ok()) << view.status();
  // x, s0..s2, s3/block0..3 and the 50 single nodes of s3/block4.
  EXPECT_EQ(view->boxes.size(), 58u);
  const ViewBox& add = BoxNamed(*view, "s3/block4/Add_7");
  EXPECT_FALSE(add.collapsed);
  EXPECT_EQ(add.node_ids.size(), 1u);
}

TEST_F(BigGraphTest, UnknownScopeIsAnError) {
  const Graph& g = *root_.graph();
  absl::StatusOr<GraphView> view = BuildGraphView(g, AllOn(g, ""), {.expand = {"s9"}});
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(view.status().message(), HasSubstr("'s9'"));
  EXPECT_THAT(view.status().message(), HasSubstr("s0, s1, s2, s3"));
  // A node is not a scope.
  EXPECT_FALSE(BuildGraphView(g, AllOn(g, ""), {.expand = {"x"}}).ok());
}

TEST(GraphViewTest, NodeNamedLikeAScopeJoinsIt) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Const(root.WithOpName("W"), {1.0f, 2.0f});
  Output read = ops::Identity(root.WithOpName("W/read"), w);
  ops::Square(root.WithOpName("y"), read);
  ASSERT_TRUE(root.ok()) << root.status();
  const Graph& g = *root.graph();
  absl::StatusOr<GraphView> view = BuildGraphView(g, AllOn(g, ""), {});
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_THAT(BoxNames(*view), ElementsAre("W", "y"));
  EXPECT_TRUE(view->boxes[0].collapsed);
  EXPECT_EQ(view->boxes[0].node_ids.size(), 2u);
  EXPECT_FALSE(view->boxes[1].collapsed);
}

TEST(GraphViewTest, BoxesNeverSpanDevicesAndCrossDeviceDataEdgesAreLeftOut) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope a = root.NewSubScope("a");
  Output c = ops::Const(a.WithOpName("c"), {1.0f, 2.0f});
  Output d = ops::Square(a.WithOpName("d"), c);
  Output e = ops::Neg(a.WithOpName("e"), d);
  Node* f = ops::NoOp(root.WithOpName("f").WithControlDependencies({d}));
  ASSERT_TRUE(root.ok()) << root.status();
  const Graph& g = *root.graph();
  std::vector<std::string> device_of = AllOn(g, "/device:CPU:0");
  device_of[e.node->id()] = "/device:CPU:1";
  device_of[f->id()] = "/device:CPU:1";
  absl::StatusOr<GraphView> view = BuildGraphView(g, device_of, {});
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_EQ(view->boxes.size(), 3u);
  EXPECT_EQ(view->boxes[0].name, "a");
  EXPECT_EQ(view->boxes[0].device, "/device:CPU:0");
  EXPECT_EQ(view->boxes[0].node_ids.size(), 2u);
  EXPECT_EQ(view->boxes[1].name, "a");
  EXPECT_EQ(view->boxes[1].device, "/device:CPU:1");
  EXPECT_EQ(view->boxes[1].scope_size, 3);
  EXPECT_TRUE(view->boxes[1].collapsed);  // one node here, but it stands for part of "a"
  // d -> e crosses devices (a transfer, not a view edge); the control edge stays.
  ASSERT_EQ(view->edges.size(), 1u);
  EXPECT_EQ(view->edges[0].src_box, 0);
  EXPECT_EQ(view->edges[0].dst_box, 2);
  EXPECT_TRUE(view->edges[0].control);
}

TEST(GraphViewTest, ParallelEdgesMergeAndControlBesideDataIsDropped) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output c = ops::Const(root.NewSubScope("p").WithOpName("c"), {1.0f});
  Output c2 = ops::Const(root.NewSubScope("p").WithOpName("c2"), {2.0f});
  Scope q = root.NewSubScope("q").WithControlDependencies({c});
  ops::Add(q, c, c2);
  ops::Mul(q, c, c);
  ASSERT_TRUE(root.ok()) << root.status();
  const Graph& g = *root.graph();
  absl::StatusOr<GraphView> view = BuildGraphView(g, AllOn(g, ""), {});
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_EQ(view->edges.size(), 1u);
  EXPECT_EQ(view->edges[0].count, 4);
  EXPECT_FALSE(view->edges[0].control);
}

TEST(GraphViewTest, SingularOpsStayAlone) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope s = root.NewSubScope("s");
  Output c = ops::Const(s, {1.0f});
  ops::Square(s.WithOpName("sq"), c);
  ASSERT_TRUE(root.ok()) << root.status();
  const Graph& g = *root.graph();
  GraphViewOptions opts;
  opts.singular_ops = {"Square"};
  absl::StatusOr<GraphView> view = BuildGraphView(g, AllOn(g, ""), opts);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_THAT(BoxNames(*view), ElementsAre("s", "s/sq"));
  EXPECT_FALSE(view->boxes[1].collapsed);
}

}  // namespace
}  // namespace sluice
