#include "graph/function_inline.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "graph/function_testutil.h"
#include "google/protobuf/text_format.h"
#include "graph/graph_def_io.h"

namespace sluice {
namespace {

constexpr char kAddMul[] = R"pb(
  signature {
    name: "AddMul"
    input_arg { name: "x" type_attr: "T" }
    input_arg { name: "y" type_attr: "T" }
    output_arg { name: "sum" type_attr: "T" }
    output_arg { name: "prod" type_attr: "T" }
    attr { name: "T" type: "type" }
  }
  node_def { name: "add" op: "Add" input: "x" input: "y" attr { key: "T" value { placeholder: "T" } } }
  node_def {
    name: "mul" op: "Mul" input: "add:z:0" input: "y" device: "/device:CPU:1"
    attr { key: "T" value { placeholder: "T" } }
  }
  ret { key: "sum" value: "add:z:0" }
  ret { key: "prod" value: "mul:z:0" }
)pb";

// Calls AddMul through PartitionedCall and adds a constant (a body node with
// no inputs).
constexpr char kOuter[] = R"pb(
  signature {
    name: "Outer"
    input_arg { name: "a" type: DT_FLOAT }
    output_arg { name: "out" type: DT_FLOAT }
  }
  node_def {
    name: "one" op: "Const"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } }
  }
  node_def {
    name: "call" op: "PartitionedCall" input: "a" input: "one:output:0"
    attr { key: "Tin" value { list { type: DT_FLOAT type: DT_FLOAT } } }
    attr { key: "Tout" value { list { type: DT_FLOAT type: DT_FLOAT } } }
    attr { key: "f" value { func { name: "AddMul" attr { key: "T" value { type: DT_FLOAT } } } } }
  }
  ret { key: "out" value: "call:output:1" }
)pb";

constexpr char kSelf[] = R"pb(
  signature {
    name: "Self"
    input_arg { name: "a" type: DT_FLOAT }
    output_arg { name: "out" type: DT_FLOAT }
  }
  node_def { name: "again" op: "Self" input: "a" }
  ret { key: "out" value: "again:out:0" }
)pb";

class FunctionInlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterFunctionTestOps(&ops_).ok());
    graph_ = std::make_unique<Graph>(&ops_);
    for (const char* f : {kAddMul, kOuter, kSelf}) {
      ASSERT_TRUE(graph_->AddFunction(ParseFunctionDefOrDie(f)).ok());
    }
  }
  Node* AddNode(const std::string& text) {
    NodeDef def;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def));
    absl::StatusOr<Node*> n = graph_->AddNode(def);
    EXPECT_TRUE(n.ok()) << n.status();
    return n.ok() ? *n : nullptr;
  }
  Node* Placeholder(const std::string& name) {
    return AddNode("name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }");
  }
  static std::string InputOf(const Node* n, int i) {
    const Edge* e = n->input_edge(i);
    return e == nullptr ? "" : absl::StrCat(e->src->name(), ":", e->src_output);
  }
  static bool HasControlInput(const Node* n, const std::string& src) {
    for (const Edge* e : n->in_edges()) {
      if (e->IsControl() && e->src->name() == src) return true;
    }
    return false;
  }

  OpRegistry ops_;
  std::unique_ptr<Graph> graph_;
};

TEST_F(FunctionInlineTest, DirectCallBecomesItsBody) {
  Node* a = Placeholder("a");
  Node* b = Placeholder("b");
  Node* init = AddNode("name: 'init' op: 'NoOp'");
  Node* call = AddNode("name: 'c' op: 'AddMul' device: '/device:CPU:0' attr { key: 'T' value { type: DT_FLOAT } }");
  ASSERT_TRUE(graph_->AddEdge(a, 0, call, 0).ok());
  ASSERT_TRUE(graph_->AddEdge(b, 0, call, 1).ok());
  graph_->AddControlEdge(init, call);
  Node* use = AddNode("name: 'use' op: 'Identity' attr { key: 'T' value { type: DT_FLOAT } }");
  ASSERT_TRUE(graph_->AddEdge(call, 1, use, 0).ok());
  ASSERT_TRUE(IsFunctionCall(*call));

  absl::StatusOr<int> n = InlineFunctionCalls(graph_.get());
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1);
  // The call node is still there, as the IdentityN of the results.
  EXPECT_EQ(graph_->FindNode("c"), call);
  EXPECT_EQ(call->op(), "IdentityN");
  EXPECT_FALSE(IsFunctionCall(*call));
  EXPECT_EQ(InputOf(call, 0), "c/add:0");
  EXPECT_EQ(InputOf(call, 1), "c/mul:0");
  EXPECT_EQ(InputOf(use, 0), "c:1");
  // Arguments are Identities of the call's inputs, after its control inputs.
  Node* x = graph_->FindNode("c/x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->op(), "Identity");
  EXPECT_EQ(InputOf(x, 0), "a:0");
  EXPECT_TRUE(HasControlInput(x, "init"));
  EXPECT_EQ(InputOf(graph_->FindNode("c/add"), 1), "c/y:0");
  EXPECT_EQ(InputOf(graph_->FindNode("c/mul"), 0), "c/add:0");
  // Devices: the body node's own, else the call's.
  EXPECT_EQ(graph_->FindNode("c/add")->requested_device(), "/device:CPU:0");
  EXPECT_EQ(graph_->FindNode("c/mul")->requested_device(), "/device:CPU:1");
}

TEST_F(FunctionInlineTest, NestedCallsAndRootsWaitForTheCall) {
  Node* a = Placeholder("a");
  Node* call = AddNode(R"(name: 'p' op: 'PartitionedCall'
      attr { key: 'Tin' value { list { type: DT_FLOAT } } }
      attr { key: 'Tout' value { list { type: DT_FLOAT } } }
      attr { key: 'f' value { func { name: 'Outer' } } })");
  ASSERT_TRUE(graph_->AddEdge(a, 0, call, 0).ok());
  absl::StatusOr<int> n = InlineFunctionCalls(graph_.get());
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 2);
  for (Node* node : graph_->nodes()) EXPECT_FALSE(IsFunctionCall(*node)) << node->name();
  // p = Outer(a): out = AddMul(a, 1).prod = (a + 1) * 1
  EXPECT_EQ(InputOf(call, 0), "p/call:1");
  EXPECT_EQ(graph_->FindNode("p/call")->op(), "IdentityN");
  EXPECT_EQ(InputOf(graph_->FindNode("p/call/mul"), 1), "p/call/y:0");
  EXPECT_EQ(InputOf(graph_->FindNode("p/call/y"), 0), "p/one:0");
  // The constant waits for the call's arguments (same frame, same moment).
  EXPECT_TRUE(HasControlInput(graph_->FindNode("p/one"), "p/input_control_node"));
  EXPECT_TRUE(HasControlInput(graph_->FindNode("p/input_control_node"), "p/a"));
  GraphDef def;
  graph_->ToGraphDef(&def);
  Graph copy(&ops_);
  absl::Status s = ImportGraphDef(def, &copy);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(FunctionInlineTest, RecursionIsAnError) {
  Node* a = Placeholder("a");
  Node* call = AddNode("name: 's' op: 'Self'");
  ASSERT_TRUE(graph_->AddEdge(a, 0, call, 0).ok());
  absl::StatusOr<int> n = InlineFunctionCalls(graph_.get(), {.max_depth = 5});
  EXPECT_EQ(n.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(n.status().message(), "Self")) << n.status();
}

TEST_F(FunctionInlineTest, MismatchedCallTypesNameTheNodeAndFunction) {
  Node* a = Placeholder("a");
  Node* call = AddNode(R"(name: 'p' op: 'PartitionedCall'
      attr { key: 'Tin' value { list { type: DT_FLOAT } } }
      attr { key: 'Tout' value { list { type: DT_INT32 } } }
      attr { key: 'f' value { func { name: 'Outer' } } })");
  ASSERT_TRUE(graph_->AddEdge(a, 0, call, 0).ok());
  absl::StatusOr<int> n = InlineFunctionCalls(graph_.get());
  ASSERT_FALSE(n.ok());
  EXPECT_TRUE(absl::StrContains(n.status().message(), "'p' (PartitionedCall)")) << n.status();
  EXPECT_TRUE(absl::StrContains(n.status().message(), "function 'Outer'")) << n.status();
  EXPECT_TRUE(absl::StrContains(n.status().message(), "output 0")) << n.status();
}

TEST_F(FunctionInlineTest, FilterKeepsOtherCalls) {
  Node* a = Placeholder("a");
  Node* b = Placeholder("b");
  Node* c1 = AddNode("name: 'c1' op: 'AddMul' attr { key: 'T' value { type: DT_FLOAT } }");
  Node* c2 = AddNode("name: 'c2' op: 'AddMul' attr { key: 'T' value { type: DT_FLOAT } }");
  for (Node* c : {c1, c2}) {
    ASSERT_TRUE(graph_->AddEdge(a, 0, c, 0).ok());
    ASSERT_TRUE(graph_->AddEdge(b, 0, c, 1).ok());
  }
  InlineOptions options;
  options.filter = [](const Node& n) { return n.name() == "c2"; };
  absl::StatusOr<int> n = InlineFunctionCalls(graph_.get(), options);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(c1->op(), "AddMul");
  EXPECT_EQ(c2->op(), "IdentityN");
}

}  // namespace
}  // namespace sluice
