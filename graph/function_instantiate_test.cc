#include "graph/function_instantiate.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "graph/function_testutil.h"
#include "graph/graph_def_io.h"

namespace sluice {
namespace {

// TensorFlow's way of writing a function: inputs "arg" and "node:out_arg:i",
// attrs bound by placeholders ($T).
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
    name: "mul" op: "Mul" input: "add:z:0" input: "y"
    attr { key: "T" value { placeholder: "T" } }
  }
  ret { key: "sum" value: "add:z:0" }
  ret { key: "prod" value: "mul:z:0" }
)pb";

// List arguments and list outputs: sums N floats, splits a vector in two.
constexpr char kLists[] = R"pb(
  signature {
    name: "Lists"
    input_arg { name: "xs" type: DT_FLOAT number_attr: "N" }
    input_arg { name: "v" type: DT_FLOAT }
    output_arg { name: "total" type: DT_FLOAT }
    output_arg { name: "halves" type: DT_FLOAT number_attr: "K" }
    attr { name: "N" type: "int" has_minimum: true minimum: 1 }
    attr { name: "K" type: "int" default_value { i: 2 } }
  }
  node_def {
    name: "sum" op: "AddN" input: "xs"
    attr { key: "N" value { placeholder: "N" } }
    attr { key: "T" value { type: DT_FLOAT } }
  }
  node_def {
    name: "dim" op: "Const"
    attr { key: "dtype" value { type: DT_INT32 } }
    attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } }
  }
  node_def {
    name: "split" op: "Split" input: "dim:output:0" input: "v" input: "^sum"
    attr { key: "num_split" value { placeholder: "K" } }
    attr { key: "T" value { type: DT_FLOAT } }
  }
  ret { key: "total" value: "sum:sum:0" }
  ret { key: "halves" value: "split:output" }
)pb";

class FunctionInstantiateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterFunctionTestOps(&ops_).ok());
    graph_ = std::make_unique<Graph>(&ops_);
  }
  void Add(const char* text) {
    absl::Status s = graph_->AddFunction(ParseFunctionDefOrDie(text));
    ASSERT_TRUE(s.ok()) << s;
  }
  static NameAttrList Func(const std::string& name) {
    NameAttrList f;
    f.set_name(name);
    return f;
  }
  static const NodeDef* Find(const FunctionInstantiation& inst, const std::string& name) {
    for (const NodeDef& n : inst.nodes) {
      if (n.name() == name) return &n;
    }
    return nullptr;
  }

  OpRegistry ops_;
  std::unique_ptr<Graph> graph_;
};

TEST_F(FunctionInstantiateTest, BindsTypeAttrAndRenamesInputs) {
  Add(kAddMul);
  NameAttrList f = Func("AddMul");
  (*f.mutable_attr())["T"] = MakeAttr(DT_DOUBLE);
  absl::StatusOr<FunctionInstantiation> inst = InstantiateFunction(*graph_, f);
  ASSERT_TRUE(inst.ok()) << inst.status();
  EXPECT_EQ(inst->arg_types, (std::vector<DataType>{DT_DOUBLE, DT_DOUBLE}));
  EXPECT_EQ(inst->ret_types, (std::vector<DataType>{DT_DOUBLE, DT_DOUBLE}));
  ASSERT_EQ(inst->nodes.size(), 6u);
  const NodeDef* x = Find(*inst, "x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->op(), "_Arg");
  EXPECT_EQ(x->attr().at("index").i(), 0);
  EXPECT_EQ(Find(*inst, "y")->attr().at("index").i(), 1);
  const NodeDef* mul = Find(*inst, "mul");
  ASSERT_EQ(mul->input_size(), 2);
  EXPECT_EQ(mul->input(0), "add");
  EXPECT_EQ(mul->input(1), "y");
  EXPECT_EQ(mul->attr().at("T").type(), DT_DOUBLE);
  const NodeDef* prod = Find(*inst, "prod_RetVal");
  ASSERT_NE(prod, nullptr);
  EXPECT_EQ(prod->op(), "_Retval");
  EXPECT_EQ(prod->input(0), "mul");
  EXPECT_EQ(prod->attr().at("index").i(), 1);
}

TEST_F(FunctionInstantiateTest, ListArgumentsOutputsDefaultsAndControlInputs) {
  Add(kLists);
  NameAttrList f = Func("Lists");
  (*f.mutable_attr())["N"] = MakeAttr(3);  // K defaults to 2
  absl::StatusOr<FunctionInstantiation> inst = InstantiateFunction(*graph_, f);
  ASSERT_TRUE(inst.ok()) << inst.status();
  EXPECT_EQ(inst->arg_types.size(), 4u);  // xs_0..xs_2, v
  EXPECT_EQ(inst->ret_types.size(), 3u);  // total, halves x2
  const NodeDef* sum = Find(*inst, "sum");
  ASSERT_EQ(sum->input_size(), 3);
  EXPECT_EQ(sum->input(0), "xs_0");
  EXPECT_EQ(sum->input(2), "xs_2");
  EXPECT_EQ(Find(*inst, "v")->attr().at("index").i(), 3);
  const NodeDef* split = Find(*inst, "split");
  ASSERT_EQ(split->input_size(), 3);
  EXPECT_EQ(split->input(0), "dim");
  EXPECT_EQ(split->input(1), "v");
  EXPECT_EQ(split->input(2), "^sum");
  EXPECT_EQ(split->attr().at("num_split").i(), 2);
  EXPECT_EQ(Find(*inst, "halves_RetVal_1")->input(0), "split:1");

  absl::StatusOr<FunctionBody> body = InstantiateFunctionBody(*graph_, f);
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(body->graph->num_nodes(), 10);
  EXPECT_EQ(body->graph->FindNode("split")->num_outputs(), 2);
}

TEST_F(FunctionInstantiateTest, ErrorsNameTheFunctionAndTheNode) {
  Add(kAddMul);
  // No T.
  absl::StatusOr<FunctionInstantiation> inst = InstantiateFunction(*graph_, Func("AddMul"));
  ASSERT_EQ(inst.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(inst.status().message(), "function 'AddMul'")) << inst.status();
  EXPECT_TRUE(absl::StrContains(inst.status().message(), "attr 'T'")) << inst.status();
  // T not allowed by Add.
  NameAttrList f = Func("AddMul");
  (*f.mutable_attr())["T"] = MakeAttr(DT_STRING);
  absl::StatusOr<FunctionBody> body = InstantiateFunctionBody(*graph_, f);
  ASSERT_FALSE(body.ok());
  EXPECT_TRUE(absl::StrContains(body.status().message(), "function 'AddMul'")) << body.status();
  EXPECT_TRUE(absl::StrContains(body.status().message(), "'add'")) << body.status();

  EXPECT_EQ(InstantiateFunction(*graph_, Func("Nope")).status().code(),
            absl::StatusCode::kNotFound);

  FunctionDef bad = ParseFunctionDefOrDie(kAddMul);
  bad.mutable_signature()->set_name("BadInput");
  bad.mutable_node_def(1)->set_input(0, "nope:z:0");
  ASSERT_TRUE(graph_->AddFunction(bad).ok());
  NameAttrList g = Func("BadInput");
  (*g.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  inst = InstantiateFunction(*graph_, g);
  ASSERT_FALSE(inst.ok());
  EXPECT_TRUE(absl::StrContains(inst.status().message(), "function 'BadInput'")) << inst.status();
  EXPECT_TRUE(absl::StrContains(inst.status().message(), "node 'mul' (Mul)")) << inst.status();
  EXPECT_TRUE(absl::StrContains(inst.status().message(), "'nope:z:0'")) << inst.status();

  // A graph-style input name ("add:0") is not how a function names tensors.
  bad.mutable_signature()->set_name("GraphStyle");
  bad.mutable_node_def(1)->set_input(0, "add:0");
  ASSERT_TRUE(graph_->AddFunction(bad).ok());
  g.set_name("GraphStyle");
  EXPECT_FALSE(InstantiateFunction(*graph_, g).ok());

  // A ret of the wrong type.
  FunctionDef wrong = ParseFunctionDefOrDie(kAddMul);
  wrong.mutable_signature()->set_name("WrongRet");
  wrong.mutable_signature()->mutable_output_arg(0)->clear_type_attr();
  wrong.mutable_signature()->mutable_output_arg(0)->set_type(DT_INT32);
  ASSERT_TRUE(graph_->AddFunction(wrong).ok());
  g.set_name("WrongRet");
  inst = InstantiateFunction(*graph_, g);
  ASSERT_FALSE(inst.ok());
  EXPECT_TRUE(absl::StrContains(inst.status().message(), "result 'sum'")) << inst.status();
}

TEST_F(FunctionInstantiateTest, ArgAttrShapesReachTheArgNodes) {
  FunctionDef f = ParseFunctionDefOrDie(kAddMul);
  f.mutable_signature()->set_name("Shaped");
  auto& attrs = *(*f.mutable_arg_attr())[1].mutable_attr();
  attrs["_output_shapes"].mutable_list()->add_shape()->add_dim()->set_size(-1);
  attrs["_user_specified_name"] = MakeAttr("y");
  ASSERT_TRUE(graph_->AddFunction(f).ok());
  NameAttrList g = Func("Shaped");
  (*g.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  absl::StatusOr<FunctionInstantiation> inst = InstantiateFunction(*graph_, g);
  ASSERT_TRUE(inst.ok()) << inst.status();
  EXPECT_FALSE(Find(*inst, "x")->attr().contains("shape"));
  ASSERT_TRUE(Find(*inst, "y")->attr().contains("shape"));
  EXPECT_EQ(Find(*inst, "y")->attr().at("shape").shape().dim(0).size(), -1);
}

// TensorFlow does not write a function's nodes in dataflow order: a node may
// name one that comes later.
TEST_F(FunctionInstantiateTest, InputsMayNameLaterNodes) {
  FunctionDef f = ParseFunctionDefOrDie(kAddMul);
  f.mutable_signature()->set_name("Reversed");
  std::swap(*f.mutable_node_def(0), *f.mutable_node_def(1));  // mul before add
  f.mutable_node_def(0)->add_input("^add");
  ASSERT_TRUE(graph_->AddFunction(f).ok());
  NameAttrList g = Func("Reversed");
  (*g.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  absl::StatusOr<FunctionInstantiation> inst = InstantiateFunction(*graph_, g);
  ASSERT_TRUE(inst.ok()) << inst.status();
  const NodeDef* mul = Find(*inst, "mul");
  ASSERT_EQ(mul->input_size(), 3);
  EXPECT_EQ(mul->input(0), "add");
  EXPECT_EQ(mul->input(2), "^add");
  EXPECT_TRUE(InstantiateFunctionBody(*graph_, g).ok());
}

TEST_F(FunctionInstantiateTest, UnboundPlaceholder) {
  FunctionDef f = ParseFunctionDefOrDie(kAddMul);
  f.mutable_signature()->set_name("Unbound");
  (*f.mutable_node_def(0)->mutable_attr())["T"].set_placeholder("U");
  ASSERT_TRUE(graph_->AddFunction(f).ok());
  NameAttrList g = Func("Unbound");
  (*g.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  absl::StatusOr<FunctionInstantiation> inst = InstantiateFunction(*graph_, g);
  ASSERT_FALSE(inst.ok());
  EXPECT_TRUE(absl::StrContains(inst.status().message(), "$U")) << inst.status();
  EXPECT_TRUE(absl::StrContains(inst.status().message(), "node 'add'")) << inst.status();
}

TEST_F(FunctionInstantiateTest, LibraryChecksFunctions) {
  Add(kAddMul);
  // The same function again is fine; another under that name is not.
  EXPECT_TRUE(graph_->AddFunction(ParseFunctionDefOrDie(kAddMul)).ok());
  FunctionDef other = ParseFunctionDefOrDie(kAddMul);
  other.mutable_node_def(0)->set_op("Mul");
  EXPECT_EQ(graph_->AddFunction(other).code(), absl::StatusCode::kInvalidArgument);
  // A function may not take a registered op's name.
  other.mutable_signature()->set_name("Add");
  EXPECT_EQ(graph_->AddFunction(other).code(), absl::StatusCode::kInvalidArgument);
  // An output with no ret.
  FunctionDef noret = ParseFunctionDefOrDie(kAddMul);
  noret.mutable_signature()->set_name("NoRet");
  noret.mutable_ret()->erase("prod");
  absl::Status s = graph_->AddFunction(noret);
  EXPECT_TRUE(absl::StrContains(s.message(), "output 'prod' has no ret")) << s;
  // An arg typed by an attr the signature lacks.
  FunctionDef badsig = ParseFunctionDefOrDie(kAddMul);
  badsig.mutable_signature()->set_name("BadSig");
  badsig.mutable_signature()->mutable_input_arg(0)->set_type_attr("U");
  s = graph_->AddFunction(badsig);
  EXPECT_TRUE(absl::StrContains(s.message(), "argument 'x'")) << s;
  // A body node of an unknown op: the library takes it (a graph may carry
  // functions it never calls); instantiating it names function, node, op.
  FunctionDefLibrary lib;
  FunctionDef unknown = ParseFunctionDefOrDie(kAddMul);
  unknown.mutable_signature()->set_name("Unknown");
  unknown.mutable_node_def(1)->set_op("Frobnicate");
  *lib.add_function() = unknown;
  ASSERT_TRUE(graph_->AddFunctionLibrary(lib).ok());
  NameAttrList u = Func("Unknown");
  (*u.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  s = InstantiateFunction(*graph_, u).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(s.message(), "function 'Unknown'")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "node 'mul' (Frobnicate)")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "unknown op 'Frobnicate'")) << s;
}

// A GraphDef that calls a library function directly (TensorFlow's Defun
// style) and through PartitionedCall (tf.function's), as TF writes them.
TEST_F(FunctionInstantiateTest, ImportsGraphsThatCallFunctions) {
  GraphDef def = ParseGraphDefOrDie(std::string(R"pb(
    node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "direct" op: "AddMul" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
    node {
      name: "pcall" op: "PartitionedCall" input: "a" input: "direct:1"
      attr { key: "Tin" value { list { type: DT_FLOAT type: DT_FLOAT } } }
      attr { key: "Tout" value { list { type: DT_FLOAT type: DT_FLOAT } } }
      attr { key: "f" value { func { name: "AddMul" attr { key: "T" value { type: DT_FLOAT } } } } }
    }
    library { function { )pb") + kAddMul + "} }");
  Graph g(&ops_);
  absl::Status s = ImportGraphDef(def, &g);
  ASSERT_TRUE(s.ok()) << s;
  const Node* direct = g.FindNode("direct");
  EXPECT_TRUE(direct->op_def().is_function);
  EXPECT_EQ(direct->num_inputs(), 2);
  EXPECT_EQ(direct->output_types(), (std::vector<DataType>{DT_FLOAT, DT_FLOAT}));
  EXPECT_EQ(g.FindNode("pcall")->num_outputs(), 2);
  EXPECT_NE(g.FindFunction("AddMul"), nullptr);

  // A func attr naming a function the library does not have.
  GraphDef missing = def;
  (*missing.mutable_node(3)->mutable_attr())["f"].mutable_func()->set_name("Missing");
  Graph g2(&ops_);
  s = ImportGraphDef(missing, &g2);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(s.message(), "'pcall'")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "'Missing'")) << s;

  // A func attr with no name.
  GraphDef unnamed = def;
  (*unnamed.mutable_node(3)->mutable_attr())["f"].mutable_func()->clear_name();
  Graph g3(&ops_);
  s = ImportGraphDef(unnamed, &g3);
  EXPECT_TRUE(absl::StrContains(s.message(), "names no function")) << s;

  // Without the library the call is an unknown op.
  GraphDef nolib = def;
  nolib.clear_library();
  nolib.mutable_node()->RemoveLast();
  Graph g4(&ops_);
  EXPECT_EQ(ImportGraphDef(nolib, &g4).code(), absl::StatusCode::kNotFound);

  // The library goes back out with the graph.
  GraphDef out;
  g.ToGraphDef(&out);
  EXPECT_EQ(out.library().function_size(), 1);
}

}  // namespace
}  // namespace sluice
