#include "graph/graph_def_io.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "graph/algorithm.h"
#include "graph/shape_inference.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// A small private registry: Const, Placeholder, Add, Identity, NoOp.
class GraphDefIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registry_
                    .Register(OpDefBuilder("Placeholder")
                                  .Output("output: dtype")
                                  .Attr("dtype: type")
                                  .Attr("shape: shape")
                                  .SetShapeFn([](InferenceContext* c) {
                                    absl::StatusOr<TensorShape> s = c->GetAttr<TensorShape>("shape");
                                    if (!s.ok()) return s.status();
                                    c->set_output(0, *s);
                                    return absl::OkStatus();
                                  }))
                    .ok());
    ASSERT_TRUE(registry_
                    .Register(OpDefBuilder("Const")
                                  .Output("output: dtype")
                                  .Attr("value: tensor")
                                  .Attr("dtype: type"))
                    .ok());
    ASSERT_TRUE(registry_
                    .Register(OpDefBuilder("Add")
                                  .Input("x: T")
                                  .Input("y: T")
                                  .Output("z: T")
                                  .Attr("T: {float, int32}")
                                  .SetShapeFn([](InferenceContext* c) {
                                    absl::StatusOr<TensorShape> s =
                                        BroadcastShapes(c->input(0), c->input(1));
                                    if (!s.ok()) return s.status();
                                    c->set_output(0, *s);
                                    return absl::OkStatus();
                                  }))
                    .ok());
    ASSERT_TRUE(registry_
                    .Register(OpDefBuilder("Identity")
                                  .Input("input: T")
                                  .Output("output: T")
                                  .Attr("T: type")
                                  .SetShapeFn([](InferenceContext* c) {
                                    c->set_output(0, c->input(0));
                                    return absl::OkStatus();
                                  }))
                    .ok());
    ASSERT_TRUE(registry_.Register(OpDefBuilder("NoOp")).ok());
  }

  static GraphDef Parse(const std::string& text) {
    GraphDef def;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
    return def;
  }

  static std::string TmpPath(const std::string& name) {
    const char* dir = std::getenv("TEST_TMPDIR");
    return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
  }

  // x: float[2,3] placeholder; y = x + x; z = Identity(y); init: NoOp after z.
  static GraphDef GoodGraph() {
    return Parse(R"pb(
      node {
        name: "x"
        op: "Placeholder"
        attr {
          key: "dtype"
          value { type: DT_FLOAT }
        }
        attr {
          key: "shape"
          value { shape { dim { size: 2 } dim { size: 3 } } }
        }
      }
      node {
        name: "z"
        op: "Identity"
        input: "y:0"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      node {
        name: "y"
        op: "Add"
        input: "x"
        input: "x:0"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      node { name: "init" op: "NoOp" input: "^z" }
      node {
        name: "unused"
        op: "Placeholder"
        attr {
          key: "dtype"
          value { type: DT_INT32 }
        }
        attr {
          key: "shape"
          value { shape {} }
        }
      }
      versions { producer: 27 }
    )pb");
  }

  absl::Status Import(const GraphDef& def) {
    graph_ = std::make_unique<Graph>(&registry_);
    return ImportGraphDef(def, graph_.get());
  }

  OpRegistry registry_;
  std::unique_ptr<Graph> graph_;
};

bool SameGraphDef(const GraphDef& a, const GraphDef& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

TEST_F(GraphDefIoTest, BinaryRoundTrip) {
  GraphDef def = GoodGraph();
  std::string path = TmpPath("graph.pb");
  ASSERT_TRUE(WriteGraphDefFile(def, path, GraphFileFormat::kBinary).ok());
  absl::StatusOr<GraphDef> back = ReadGraphDefFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(SameGraphDef(def, *back));
  // The file really is binary: it does not start with text.
  std::ifstream in(path, std::ios::binary);
  char first = 0;
  in.get(first);
  EXPECT_EQ(first, '\x0a');  // field 1 (node), length-delimited
  std::remove(path.c_str());
}

TEST_F(GraphDefIoTest, TextRoundTrip) {
  GraphDef def = GoodGraph();
  std::string path = TmpPath("graph.pbtxt");
  ASSERT_TRUE(WriteGraphDefFile(def, path, GraphFileFormat::kText).ok());
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("name: \"x\""));
  EXPECT_THAT(text, HasSubstr("type: DT_FLOAT"));
  absl::StatusOr<GraphDef> back = ReadGraphDefFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(SameGraphDef(def, *back));
  std::remove(path.c_str());
}

TEST_F(GraphDefIoTest, TextWithComments) {
  absl::StatusOr<GraphDef> def = ParseGraphDef(R"(# A graph written by hand.
node {
  name: "a"   # the only node
  op: "NoOp"
}
# trailing comment
versions {
  producer: 27
}
)");
  ASSERT_TRUE(def.ok()) << def.status();
  ASSERT_EQ(def->node_size(), 1);
  EXPECT_EQ(def->node(0).name(), "a");
  EXPECT_EQ(def->versions().producer(), 27);
}

TEST_F(GraphDefIoTest, EmptyBytesAreAnEmptyGraph) {
  absl::StatusOr<GraphDef> def = ParseGraphDef("");
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->node_size(), 0);
}

TEST_F(GraphDefIoTest, GarbageBytes) {
  const std::string garbage("\xff\xfe\x00\x13garbage\x01\x02", 13);
  absl::StatusOr<GraphDef> def = ParseGraphDef(garbage);
  ASSERT_FALSE(def.ok());
  EXPECT_EQ(def.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(def.status().message(), HasSubstr("not a GraphDef (binary or text)"));

  absl::StatusOr<GraphDef> text = ParseGraphDef("node { name: \"a\" op: NoOp oops }");
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("not a GraphDef (binary or text)"));
  EXPECT_THAT(text.status().message(), HasSubstr("line 1"));

  std::string path = TmpPath("garbage.pb");
  {
    std::ofstream out(path, std::ios::binary);
    out << garbage;
  }
  absl::StatusOr<GraphDef> file = ReadGraphDefFile(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr(path));
  std::remove(path.c_str());
}

TEST_F(GraphDefIoTest, MissingFile) {
  std::string path = TmpPath("no_such_dir/graph.pb");
  absl::StatusOr<GraphDef> def = ReadGraphDefFile(path);
  ASSERT_FALSE(def.ok());
  EXPECT_EQ(def.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(def.status().message(), HasSubstr(path));

  absl::Status w = WriteGraphDefFile(GoodGraph(), path, GraphFileFormat::kText);
  EXPECT_EQ(w.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(w.message(), HasSubstr(path));
}

TEST_F(GraphDefIoTest, ImportConnectsEdgesAndInfersShapes) {
  ASSERT_TRUE(Import(GoodGraph()).ok());
  EXPECT_EQ(graph_->num_nodes(), 5);
  Node* y = graph_->FindNode("y");
  Node* z = graph_->FindNode("z");
  Node* init = graph_->FindNode("init");
  ASSERT_NE(y, nullptr);
  ASSERT_NE(z, nullptr);
  ASSERT_NE(init, nullptr);
  ASSERT_NE(y->input_edge(0), nullptr);
  ASSERT_NE(y->input_edge(1), nullptr);
  EXPECT_EQ(y->input_edge(0)->src->name(), "x");
  EXPECT_EQ(y->input_edge(1)->src->name(), "x");
  EXPECT_EQ(z->input_edge(0)->src, y);
  ASSERT_EQ(init->in_edges().size(), 1u);
  EXPECT_TRUE(init->in_edges()[0]->IsControl());
  EXPECT_EQ(init->in_edges()[0]->src, z);
  EXPECT_EQ(z->output_shape(0), TensorShape({2, 3}));
  EXPECT_EQ(graph_->versions().producer(), 27);

  absl::StatusOr<std::vector<Node*>> order = TopologicalOrder(*graph_);
  ASSERT_TRUE(order.ok());
  std::vector<std::string> names;
  for (Node* n : *order) names.push_back(n->name());
  // Ties keep id (file) order: x and unused are ready first.
  EXPECT_EQ(names, (std::vector<std::string>{"x", "y", "z", "init", "unused"}));
}

TEST_F(GraphDefIoTest, ImportIntoGraphWithNodes) {
  ASSERT_TRUE(Import(Parse(R"pb(
    node {
      name: "w"
      op: "Placeholder"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 3 } } } }
    }
  )pb")).ok());
  // A second GraphDef may name nodes already in the graph.
  ASSERT_TRUE(ImportGraphDef(Parse(R"pb(
                               node {
                                 name: "v"
                                 op: "Identity"
                                 input: "w"
                                 attr { key: "T" value { type: DT_FLOAT } }
                               }
                             )pb"),
                             graph_.get())
                  .ok());
  EXPECT_EQ(graph_->FindNode("v")->output_shape(0), TensorShape({3}));
}

TEST_F(GraphDefIoTest, UnknownOp) {
  absl::Status s = Import(Parse(R"pb(node { name: "mystery" op: "FrobnicateV9" })pb"));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("mystery"));
  EXPECT_THAT(s.message(), HasSubstr("FrobnicateV9"));
}

TEST_F(GraphDefIoTest, InternalOpsAreRejected) {
  absl::Status s = Import(Parse(R"pb(node { name: "sneaky" op: "_Retval" })pb"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("sneaky"));
  EXPECT_THAT(s.message(), HasSubstr("internal"));
}

TEST_F(GraphDefIoTest, DanglingInput) {
  GraphDef def = GoodGraph();
  def.mutable_node(1)->set_input(0, "nope:0");  // z
  absl::Status s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'z': input 'nope:0' refers to unknown node 'nope'"));

  def = GoodGraph();
  def.mutable_node(3)->set_input(0, "^ghost");  // init
  s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'init'"));
  EXPECT_THAT(s.message(), HasSubstr("ghost"));
}

TEST_F(GraphDefIoTest, BadOutputIndex) {
  GraphDef def = GoodGraph();
  def.mutable_node(1)->set_input(0, "y:3");
  absl::Status s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'z'"));
  EXPECT_THAT(s.message(), HasSubstr("y:3"));
  EXPECT_THAT(s.message(), HasSubstr("output 3"));
}

TEST_F(GraphDefIoTest, WrongNumberOfInputs) {
  GraphDef def = GoodGraph();
  def.mutable_node(2)->mutable_input()->RemoveLast();  // y = Add(x)
  absl::Status s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'y'"));

  def = GoodGraph();
  def.mutable_node(2)->add_input("x");  // y = Add(x, x, x)
  s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'y'"));
}

TEST_F(GraphDefIoTest, DataInputAfterControlInput) {
  GraphDef def = GoodGraph();
  NodeDef* y = def.mutable_node(2);
  y->clear_input();
  y->add_input("x");
  y->add_input("^unused");
  y->add_input("x");
  absl::Status s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'y'"));
  EXPECT_THAT(s.message(), HasSubstr("control input"));
}

TEST_F(GraphDefIoTest, TypeMismatch) {
  GraphDef def = GoodGraph();
  def.mutable_node(2)->set_input(1, "unused");  // int32 into a float Add
  absl::Status s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'y'"));
  EXPECT_THAT(s.message(), HasSubstr("unused"));
}

TEST_F(GraphDefIoTest, MissingAttr) {
  GraphDef def = GoodGraph();
  def.mutable_node(1)->mutable_attr()->erase("T");  // z: Identity without T
  absl::Status s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'z'"));
  EXPECT_THAT(s.message(), HasSubstr("T"));
}

TEST_F(GraphDefIoTest, UndefinedAttr) {
  GraphDef def = GoodGraph();
  (*def.mutable_node(2)->mutable_attr())["frob"].set_i(3);
  absl::Status s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'y'"));
  EXPECT_THAT(s.message(), HasSubstr("frob"));
}

TEST_F(GraphDefIoTest, InternalAttrsAreAccepted) {
  // TensorFlow writes "_output_shapes" and "_class" on any node.
  GraphDef def = GoodGraph();
  (*def.mutable_node(2)->mutable_attr())["_class"].mutable_list()->add_s("loc:@x");
  (*def.mutable_node(2)->mutable_attr())["_output_shapes"].mutable_list()->add_shape();
  absl::Status s = Import(def);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(GraphDefIoTest, DuplicateName) {
  GraphDef def = GoodGraph();
  def.mutable_node(4)->set_name("x");
  absl::Status s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'x'"));
}

TEST_F(GraphDefIoTest, Cycle) {
  GraphDef def = Parse(R"pb(
    node {
      name: "x"
      op: "Placeholder"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape {} } }
    }
    node {
      name: "a"
      op: "Add"
      input: "x"
      input: "b"
      attr { key: "T" value { type: DT_FLOAT } }
    }
    node {
      name: "b"
      op: "Identity"
      input: "c"
      attr { key: "T" value { type: DT_FLOAT } }
    }
    node {
      name: "c"
      op: "Identity"
      input: "a"
      attr { key: "T" value { type: DT_FLOAT } }
    }
    node { name: "after" op: "NoOp" input: "^c" }
  )pb");
  absl::Status s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("graph has a cycle: a -> c -> b -> a"));
}

TEST_F(GraphDefIoTest, ControlCycle) {
  GraphDef def = Parse(R"pb(
    node { name: "p" op: "NoOp" input: "^q" }
    node { name: "q" op: "NoOp" input: "^p" }
  )pb");
  absl::Status s = Import(def);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("graph has a cycle: p -> q -> p"));
}

TEST_F(GraphDefIoTest, ReachableBackward) {
  ASSERT_TRUE(Import(GoodGraph()).ok());
  Node* init = graph_->FindNode("init");
  std::vector<bool> reached = ReachableBackward(*graph_, {init});
  EXPECT_TRUE(reached[graph_->FindNode("x")->id()]);
  EXPECT_TRUE(reached[graph_->FindNode("y")->id()]);
  EXPECT_TRUE(reached[init->id()]);
  EXPECT_FALSE(reached[graph_->FindNode("unused")->id()]);
}

TEST_F(GraphDefIoTest, Prune) {
  GraphDef def = GoodGraph();
  absl::StatusOr<GraphDef> pruned = PruneGraphDef(def, {"y:0"});
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  std::vector<std::string> names;
  for (const NodeDef& n : pruned->node()) names.push_back(n.name());
  EXPECT_EQ(names, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(pruned->versions().producer(), 27);

  // Through control inputs, with a node name and a "^name" target.
  pruned = PruneGraphDef(def, {"^init", "unused"});
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_EQ(pruned->node_size(), 5);
  ASSERT_TRUE(Import(*pruned).ok());

  absl::StatusOr<GraphDef> missing = PruneGraphDef(def, {"y", "nothere:0"});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nothere"));
}

}  // namespace
}  // namespace sluice
