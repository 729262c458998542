// Graph, Scope and AddGradients against a private registry of toy ops.
#include "graph/graph.h"

#include "gtest/gtest.h"
#include "graph/algorithm.h"
#include "graph/gradients.h"
#include "graph/graph_def_io.h"
#include "graph/scope.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

absl::Status SameShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status AddShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape s, BroadcastShapes(c->input(0), c->input(1)));
  c->set_output(0, s);
  return absl::OkStatus();
}

class GraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Const")
                                  .Output("output: dtype")
                                  .Attr("value: tensor")
                                  .Attr("dtype: type")
                                  .SetShapeFn([](InferenceContext* c) {
                                    ASSIGN_OR_RETURN(auto t, c->GetAttr<tensorflow::TensorProto>("value"));
                                    ASSIGN_OR_RETURN(TensorShape s, TensorShape::FromProto(t.tensor_shape()));
                                    c->set_output(0, s);
                                    return absl::OkStatus();
                                  }))
                    .ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Add")
                                  .Input("x: T")
                                  .Input("y: T")
                                  .Output("z: T")
                                  .Attr("T: {float, double, int32}")
                                  .SetShapeFn(AddShape))
                    .ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Neg").Input("x: T").Output("y: T").Attr("T: type").SetShapeFn(SameShape)).ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Var").Output("ref: Ref(dtype)").Attr("dtype: type")).ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("Upd").Input("ref: Ref(T)").Input("v: T").Attr("T: type")).ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("AddN").Input("inputs: N * T").Output("sum: T").Attr("N: int >= 1").Attr("T: type").SetShapeFn(SameShape)).ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("OnesLike").Input("x: T").Output("y: T").Attr("T: type").SetShapeFn(SameShape)).ok());
    ASSERT_TRUE(reg_.Register(OpDefBuilder("NoGrad").Input("x: T").Output("y: T").Attr("T: type")).ok());
    // d(x+y) = (g, g); d(-x) = -g.
    ASSERT_TRUE(reg_.SetGradient("Add", [](const Scope& s, const Node&, absl::Span<const Output> g)
                                            -> absl::StatusOr<std::vector<Output>> {
                      return std::vector<Output>{g[0], g[0]};
                    }).ok());
    ASSERT_TRUE(reg_.SetGradient("Neg", [](const Scope& s, const Node&, absl::Span<const Output> g)
                                            -> absl::StatusOr<std::vector<Output>> {
                      return std::vector<Output>{s.Op("Neg").Input(g[0]).Finalize1()};
                    }).ok());
  }

  OpRegistry reg_;
};

TEST_F(GraphTest, AddNodeFillsDefaultsAndTypes) {
  Graph g(&reg_);
  NodeDef def;
  def.set_name("v");
  def.set_op("Var");
  (*def.mutable_attr())["dtype"] = MakeAttr(DT_FLOAT);
  absl::StatusOr<Node*> v = g.AddNode(def);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ((*v)->output_type(0), DT_FLOAT_REF);
  EXPECT_EQ(g.FindNode("v"), *v);
}

TEST_F(GraphTest, AddNodeErrorsNameTheNode) {
  Graph g(&reg_);
  NodeDef unknown;
  unknown.set_name("u");
  unknown.set_op("Bogus");
  absl::Status s = g.AddNode(unknown).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("node 'u'"), std::string::npos);
  EXPECT_NE(s.message().find("'Bogus'"), std::string::npos);

  NodeDef missing;
  missing.set_name("m");
  missing.set_op("Neg");
  s = g.AddNode(missing).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("missing attr 'T'"), std::string::npos);
  EXPECT_NE(s.message().find("'m'"), std::string::npos);

  NodeDef extra = missing;
  (*extra.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  (*extra.mutable_attr())["bogus"] = MakeAttr(true);
  s = g.AddNode(extra).status();
  EXPECT_NE(s.message().find("attr 'bogus' is not defined"), std::string::npos);

  NodeDef bad_type;
  bad_type.set_name("b");
  bad_type.set_op("Add");
  (*bad_type.mutable_attr())["T"] = MakeAttr(DT_BOOL);
  s = g.AddNode(bad_type).status();
  EXPECT_NE(s.message().find("not one of"), std::string::npos);

  NodeDef internal = extra;
  internal.mutable_attr()->erase("bogus");
  (*internal.mutable_attr())["_output_shapes"] = MakeAttr(true);  // '_' attrs ride along
  EXPECT_TRUE(g.AddNode(internal).ok());
  EXPECT_EQ(g.AddNode(internal).status().code(), absl::StatusCode::kInvalidArgument);  // duplicate
}

TEST_F(GraphTest, EdgesCheckTypesAndSlots) {
  Scope root = Scope::NewRootScope(&reg_);
  Output a = root.Op("Neg").Input(1.0f).Finalize1();
  Graph* g = root.graph();
  NodeDef def;
  def.set_name("n");
  def.set_op("Neg");
  (*def.mutable_attr())["T"] = MakeAttr(DT_INT32);
  Node* n = *g->AddNode(def);
  absl::Status s = g->AddEdge(a.node, 0, n, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expects int32"), std::string::npos) << s;
  EXPECT_FALSE(g->AddEdge(a.node, 3, n, 0).ok());
  EXPECT_FALSE(g->AddEdge(a.node, 0, n, 5).ok());
}

TEST_F(GraphTest, TopologicalOrderAndCycle) {
  Scope root = Scope::NewRootScope(&reg_);
  Output a = root.WithOpName("a").Op("Neg").Input(1.0f).Finalize1();
  Output b = root.WithOpName("b").Op("Neg").Input(a).Finalize1();
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<std::vector<Node*>> order = TopologicalOrder(*root.graph());
  ASSERT_TRUE(order.ok());
  auto pos = [&](Node* n) { return std::find(order->begin(), order->end(), n) - order->begin(); };
  EXPECT_LT(pos(a.node), pos(b.node));
  root.graph()->AddControlEdge(b.node, a.node);
  order = TopologicalOrder(*root.graph());
  EXPECT_EQ(order.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(order.status().message().find("cycle"), std::string::npos);
}

TEST_F(GraphTest, ScopeNamesDevicesColocationAndControlDeps) {
  Scope root = Scope::NewRootScope(&reg_);
  Output x = root.WithOpName("x").Op("Neg").Input(2.0f).Finalize1();
  Scope layer = root.NewSubScope("fc1").WithDevice("/device:CPU:1");
  Output y = layer.Op("Neg").Input(x).Finalize1();
  Output y2 = layer.Op("Neg").Input(x).Finalize1();
  Output z = root.ColocateWith(x).WithControlDependencies({y}).Op("Neg").Input(y2).Finalize1();
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(x.node->name(), "x");
  EXPECT_EQ(y.node->name(), "fc1/Neg");
  EXPECT_EQ(y2.node->name(), "fc1/Neg_1");
  EXPECT_EQ(y.node->requested_device(), "/device:CPU:1");
  EXPECT_EQ(z.node->ColocationNames(), std::vector<std::string>{"x"});
  bool has_control = false;
  for (const Edge* e : z.node->in_edges()) has_control |= e->IsControl() && e->src == y.node;
  EXPECT_TRUE(has_control);
  EXPECT_EQ(x.shape(), TensorShape());
  EXPECT_EQ(x.dtype(), DT_FLOAT);
}

TEST_F(GraphTest, LiteralsTakeTheTypeTheOpNeeds) {
  Scope root = Scope::NewRootScope(&reg_);
  Output d = root.Op("Neg").Input(Input(std::initializer_list<double>{1.0, 2.0})).Finalize1();
  Output sum = root.Op("Add").Input(d).Input(3).Finalize1();  // int literal -> double Const
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(sum.dtype(), DT_DOUBLE);
  EXPECT_EQ(sum.shape(), TensorShape({2}));
}

TEST_F(GraphTest, BuildErrorNamesTheSourceLineAndLaterOpsDoNothing) {
  Scope root = Scope::NewRootScope(&reg_);
  Output a = root.Op("Neg").Input(Input({1.0f, 2.0f, 3.0f})).Finalize1();
  Output b = root.Op("Neg").Input(Input({1.0f, 2.0f})).Finalize1();
  const int line = __LINE__ + 1;
  Output bad = root.Op("Add").Input(a).Input(b).Finalize1();
  EXPECT_FALSE(bad.valid());
  EXPECT_FALSE(root.ok());
  std::string msg(root.status().message());
  EXPECT_NE(msg.find("graph_test.cc:" + std::to_string(line)), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2]"), std::string::npos) << msg;
  int before = root.graph()->num_nodes();
  Output after = root.Op("Neg").Input(bad).Finalize1();
  EXPECT_FALSE(after.valid());
  EXPECT_EQ(root.graph()->num_nodes(), before);  // the failed Add was removed, nothing added
}

TEST_F(GraphTest, GraphDefRoundTripKeepsEdges) {
  Scope root = Scope::NewRootScope(&reg_);
  Output a = root.WithOpName("a").Op("Neg").Input(1.0f).Finalize1();
  Output b = root.WithOpName("b").WithControlDependencies({a}).Op("Add").Input(a).Input(a).Finalize1();
  ASSERT_TRUE(root.ok());
  ASSERT_TRUE(b.valid());
  absl::StatusOr<GraphDef> def = root.ToGraphDef();
  ASSERT_TRUE(def.ok());
  Graph copy(&reg_);
  ASSERT_TRUE(ImportGraphDef(*def, &copy).ok());
  Node* b2 = copy.FindNode("b");
  ASSERT_NE(b2, nullptr);
  EXPECT_EQ(b2->input_edge(0)->src->name(), "a");
  EXPECT_EQ(b2->in_edges().size(), 3u);
  EXPECT_EQ(b2->output_shape(0), TensorShape());
}

TEST_F(GraphTest, AddGradientsSumsAndChains) {
  Scope root = Scope::NewRootScope(&reg_);
  Output x = root.WithOpName("x").Op("Neg").Input(1.0f).Finalize1();
  Output y = root.Op("Add").Input(x).Input(x).Finalize1();  // x used twice
  Output z = root.Op("Neg").Input(y).Finalize1();
  absl::StatusOr<std::vector<Output>> g = AddGradients(root, {z}, {x});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE((*g)[0].valid());
  EXPECT_EQ((*g)[0].node->op(), "AddN");  // two paths summed
  EXPECT_EQ((*g)[0].node->name().rfind("gradients/", 0), 0u);
  // An x no y depends on gets no gradient.
  Output lonely = root.Op("Neg").Input(2.0f).Finalize1();
  g = AddGradients(root, {z}, {lonely});
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE((*g)[0].valid());
}

TEST_F(GraphTest, AddGradientsMissingGradientNamesTheOp) {
  Scope root = Scope::NewRootScope(&reg_);
  Output x = root.Op("Neg").Input(1.0f).Finalize1();
  Output y = root.WithOpName("blocker").Op("NoGrad").Input(x).Finalize1();
  absl::StatusOr<std::vector<Output>> g = AddGradients(root, {y}, {x});
  EXPECT_EQ(g.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(g.status().message().find("'NoGrad'"), std::string::npos);
  EXPECT_NE(g.status().message().find("'blocker'"), std::string::npos);
  ASSERT_TRUE(reg_.SetNoGradient("NoGrad").ok());
  g = AddGradients(root, {y}, {x});
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE((*g)[0].valid());
}

TEST(ParseTensorNameTest, Forms) {
  EXPECT_EQ(ParseTensorName("a/b")->index, 0);
  EXPECT_EQ(ParseTensorName("a:3")->index, 3);
  EXPECT_EQ(ParseTensorName("a:3")->node, "a");
  EXPECT_EQ(ParseTensorName("^c")->index, Edge::kControlSlot);
  EXPECT_FALSE(ParseTensorName("a:x").ok());
  EXPECT_FALSE(ParseTensorName(":1").ok());
}

}  // namespace
}  // namespace sluice
