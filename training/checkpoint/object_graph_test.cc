// The variables a TF2 SavedModel's calls capture, bound to their checkpoint
// values through the two object graphs: matched by child names (not ids),
// each handle restored once with its dtype and device, resources and
// unrelated calls left alone; the added nodes run and restore the values;
// a checkpoint without the value, a call short of its bound inputs and a
// bound input outside the graph are clear errors.
#include "training/checkpoint/object_graph.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "graph/text_proto.h"
#include "gtest/gtest.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::tensorflow::GraphDef;
using ::tensorflow::NodeDef;
using ::tensorflow::SavedObjectGraph;
using ::tensorflow::TrackableObjectGraph;

constexpr char kKernelKey[] = "layer/kernel/.ATTRIBUTES/VARIABLE_VALUE";
constexpr char kStepKey[] = "layer/step/.ATTRIBUTES/VARIABLE_VALUE";

// root -> layer -> {kernel (2), step (3), table (4, a resource)}; function
// "serve" binds kernel, step, table and kernel again.
SavedObjectGraph Objects() {
  SavedObjectGraph g;
  EXPECT_TRUE(ParseTextProto(R"pb(
    nodes { children { node_id: 1 local_name: "layer" } user_object {} }
    nodes {
      children { node_id: 2 local_name: "kernel" }
      children { node_id: 3 local_name: "step" }
      children { node_id: 4 local_name: "table" }
      user_object {}
    }
    nodes { variable { dtype: DT_FLOAT name: "kernel" } }
    nodes { variable { dtype: DT_INT64 name: "step" } }
    nodes { resource {} }
    concrete_functions {
      key: "serve"
      value { bound_inputs: [ 2, 3, 4, 2 ] }
    }
  )pb", &g).ok());
  return g;
}

// The same objects under other ids, as the checkpoint lists them.
TrackableObjectGraph CheckpointObjects() {
  TrackableObjectGraph g;
  EXPECT_TRUE(ParseTextProto(R"pb(
    nodes { children { node_id: 3 local_name: "layer" } }
    nodes { attributes { name: "VARIABLE_VALUE" checkpoint_key: "layer/step/.ATTRIBUTES/VARIABLE_VALUE" } }
    nodes { attributes { name: "VARIABLE_VALUE" checkpoint_key: "layer/kernel/.ATTRIBUTES/VARIABLE_VALUE" } }
    nodes {
      children { node_id: 1 local_name: "step" }
      children { node_id: 2 local_name: "kernel" }
      children { node_id: 4 local_name: "table" }
    }
    nodes {}
  )pb", &g).ok());
  return g;
}

NodeDef Handle(const std::string& name, const std::string& dtype, const std::string& device) {
  NodeDef n;
  EXPECT_TRUE(ParseTextProto(absl::StrCat(R"pb(op: "VarHandleOp" attr { key: "dtype" value { type: )pb",
                                          dtype, R"pb( } } attr { key: "shape" value { shape { unknown_rank: true } } })pb"),
                             &n).ok());
  n.set_name(name);
  n.set_device(device);
  return n;
}

// x, three handles, a call of "serve" (x, kernel, step, table, kernel) and a
// call of a function the object graph does not list.
GraphDef Graph() {
  GraphDef g;
  EXPECT_TRUE(ParseTextProto(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  )pb", &g).ok());
  *g.add_node() = Handle("kernel_handle", "DT_FLOAT", "/device:CPU:0");
  *g.add_node() = Handle("step_handle", "DT_INT64", "");
  *g.add_node() = Handle("table_handle", "DT_FLOAT", "");
  NodeDef* call = g.add_node();
  EXPECT_TRUE(ParseTextProto(R"pb(
    name: "call" op: "StatefulPartitionedCall"
    input: [ "x", "kernel_handle", "step_handle:0", "table_handle", "kernel_handle", "^x" ]
    attr { key: "f" value { func { name: "serve" } } }
  )pb", call).ok());
  NodeDef* other = g.add_node();
  EXPECT_TRUE(ParseTextProto(R"pb(
    name: "other_call" op: "StatefulPartitionedCall" input: [ "x", "table_handle" ]
    attr { key: "f" value { func { name: "not_saved" } } }
  )pb", other).ok());
  return g;
}

const NodeDef* Find(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

std::string TestPrefix(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/object_graph_test_", getpid());
  std::filesystem::create_directories(dir);
  return absl::StrCat(dir, "/", name);
}

TEST(ObjectGraphTest, BindsEachCapturedVariableOnceByChildNames) {
  GraphDef g = Graph();
  const int before = g.node_size();
  absl::StatusOr<CapturedVariableRestore> r =
      AddCapturedVariableRestore(Objects(), CheckpointObjects(), &g);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->variables, 2);  // kernel (twice) and step; not the table
  EXPECT_EQ(g.node_size(), before + 7);
  const NodeDef* names = Find(g, "_captured_variable_restore/tensor_names");
  ASSERT_NE(names, nullptr);
  const auto& keys = names->attr().at("value").tensor().string_val();
  ASSERT_EQ(keys.size(), 2);
  EXPECT_EQ(keys[0], kKernelKey);
  EXPECT_EQ(keys[1], kStepKey);
  const NodeDef* restore = Find(g, "_captured_variable_restore/RestoreV2");
  ASSERT_NE(restore, nullptr);
  ASSERT_EQ(restore->attr().at("dtypes").list().type_size(), 2);
  EXPECT_EQ(restore->attr().at("dtypes").list().type(1), ::tensorflow::DT_INT64);
  const NodeDef* assign = Find(g, "_captured_variable_restore/Assign_0");
  ASSERT_NE(assign, nullptr);
  EXPECT_EQ(assign->input(0), "kernel_handle");
  EXPECT_EQ(assign->input(1), "_captured_variable_restore/RestoreV2:0");
  EXPECT_EQ(assign->device(), "/device:CPU:0");
  EXPECT_EQ(Find(g, "_captured_variable_restore/Assign_1")->input(0), "step_handle");
  EXPECT_EQ(r->target, "_captured_variable_restore/restore_all");
  EXPECT_EQ(Find(g, r->target)->input_size(), 2);
}

// The added nodes run in a session and fill the handles from a checkpoint
// TensorFlow's way (the object graph stored in it, the values by key).
TEST(ObjectGraphTest, TheAddedNodesRestoreTheValues) {
  const std::string prefix = TestPrefix("ckpt");
  BundleWriter w(prefix);
  ASSERT_TRUE(w.Add(kKernelKey, Tensor::FromVector<float>({1.5f, -2.0f})).ok());
  ASSERT_TRUE(w.Add(kStepKey, Tensor::Scalar<int64_t>(42)).ok());
  ASSERT_TRUE(
      w.Add(kObjectGraphKey, Tensor::Scalar<std::string>(CheckpointObjects().SerializeAsString()))
          .ok());
  ASSERT_TRUE(w.Finish().ok());
  absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<TrackableObjectGraph> saved = ReadCheckpointObjectGraph(**reader);
  ASSERT_TRUE(saved.ok()) << saved.status();

  GraphDef g = Graph();
  absl::StatusOr<CapturedVariableRestore> r = AddCapturedVariableRestore(Objects(), *saved, &g);
  ASSERT_TRUE(r.ok()) << r.status();
  // The calls' functions are not in this graph: run without them.
  GraphDef runnable;
  for (const NodeDef& n : g.node()) {
    if (!absl::StrContains(n.name(), "call")) *runnable.add_node() = n;
  }
  for (const auto& [handle, dtype] : {std::pair{"kernel_handle", "DT_FLOAT"},
                                      std::pair{"step_handle", "DT_INT64"}}) {
    ASSERT_TRUE(ParseTextProto(absl::StrCat("name: \"read_", handle, "\" op: \"ReadVariableOp\" input: \"",
                                            handle, "\" attr { key: \"dtype\" value { type: ",
                                            dtype, " } }"),
                               runnable.add_node())
                    .ok());
  }
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), runnable);
  ASSERT_TRUE(session.ok()) << session.status();
  absl::Status ran =
      (*session)->Run({{r->prefix_tensor, Tensor::Scalar<std::string>(prefix)}}, {}, {r->target})
          .status();
  ASSERT_TRUE(ran.ok()) << ran;
  absl::StatusOr<std::vector<Tensor>> out =
      (*session)->Run(std::vector<std::pair<std::string, Tensor>>{},
                      {"read_kernel_handle:0", "read_step_handle:0"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<float>()[0], 1.5f);
  EXPECT_EQ((*out)[0].flat<float>()[1], -2.0f);
  EXPECT_EQ((*out)[1].scalar<int64_t>(), 42);
}

TEST(ObjectGraphTest, NothingToBindAddsNothing) {
  GraphDef g = Graph();
  SavedObjectGraph objects = Objects();
  objects.mutable_concrete_functions()->clear();
  absl::StatusOr<CapturedVariableRestore> r =
      AddCapturedVariableRestore(objects, CheckpointObjects(), &g);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->variables, 0);
  EXPECT_EQ(g.node_size(), Graph().node_size());
}

TEST(ObjectGraphTest, BadGraphsAreClearErrors) {
  {  // the checkpoint lost the kernel's value
    TrackableObjectGraph ckpt = CheckpointObjects();
    ckpt.mutable_nodes(2)->clear_attributes();
    GraphDef g = Graph();
    absl::Status s = AddCapturedVariableRestore(Objects(), ckpt, &g).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "layer.kernel")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "'kernel_handle'")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "'call'")) << s;
  }
  {  // the call passes fewer inputs than its function binds
    GraphDef g = Graph();
    for (NodeDef& n : *g.mutable_node()) {
      if (n.name() == "call") n.mutable_input()->DeleteSubrange(2, 4);
    }
    absl::Status s = AddCapturedVariableRestore(Objects(), CheckpointObjects(), &g).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "fewer than its 4 bound inputs")) << s;
  }
  {  // a bound input that is no saved object
    SavedObjectGraph objects = Objects();
    (*objects.mutable_concrete_functions())["serve"].set_bound_inputs(0, 9);
    GraphDef g = Graph();
    absl::Status s = AddCapturedVariableRestore(objects, CheckpointObjects(), &g).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "binds object 9")) << s;
  }
}

TEST(ObjectGraphTest, CheckpointsWithoutOrWithABadObjectGraph) {
  const std::string names_only = TestPrefix("name_based");
  BundleWriter w(names_only);
  ASSERT_TRUE(w.Add("w", Tensor::Scalar<float>(1)).ok());
  ASSERT_TRUE(w.Finish().ok());
  absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(names_only);
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE(absl::IsNotFound(ReadCheckpointObjectGraph(**reader).status()));

  const std::string bad = TestPrefix("bad_graph");
  BundleWriter b(bad);
  ASSERT_TRUE(b.Add(kObjectGraphKey, Tensor::Scalar<std::string>("\xff\xff not a proto")).ok());
  ASSERT_TRUE(b.Finish().ok());
  reader = BundleReader::Open(bad);
  ASSERT_TRUE(reader.ok());
  absl::Status s = ReadCheckpointObjectGraph(**reader).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
}

}  // namespace
}  // namespace sluice
