// The C++ builder emits TensorFlow's nodes: op names, input order, attrs and
// literal values as tf.data's Python API writes them; a pipeline graph in
// TensorFlow's text format (as TF 1.x writes for
// `Dataset.range(5).batch(2, drop_remainder=False)` and an initializable
// iterator) imports and runs.
#include "ops/data/dataset_builder.h"

#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/graph_def_io.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/data/internal/session_drain.h"

namespace sluice {
namespace data {
namespace {

using ::testing::ElementsAre;

const NodeDef* Find(const GraphDef& g, const std::string& op) {
  for (const NodeDef& n : g.node()) {
    if (n.op() == op) return &n;
  }
  return nullptr;
}

// The value of the Const feeding input `i` of `n`.
const ::tensorflow::TensorProto& ConstInput(const GraphDef& g, const NodeDef& n, int i) {
  const std::string name = n.input(i).substr(0, n.input(i).find(':'));
  for (const NodeDef& c : g.node()) {
    if (c.name() == name) return c.attr().at("value").tensor();
  }
  static ::tensorflow::TensorProto none;
  ADD_FAILURE() << "no const " << name;
  return none;
}

int64_t Int(const ::tensorflow::TensorProto& t) {
  if (t.int64_val_size() > 0) return t.int64_val(0);
  int64_t v = 0;
  if (t.tensor_content().size() == 8) std::memcpy(&v, t.tensor_content().data(), 8);
  return v;
}

TEST(DatasetBuilderTest, EmitsTensorFlowsNodes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ::tensorflow::NameAttrList parse;
  parse.set_name("parse_example");
  Dataset ds = TFRecordDataset(s, Input(std::initializer_list<std::string>{"a.tfrecord", "b.tfrecord"}))
                   .Map(parse, ElementSpec{{DT_FLOAT, DT_INT64}, {TensorShape({784}), TensorShape()}},
                        {.num_parallel_calls = -1})
                   .Shuffle(10000, 7)
                   .Batch(64, true)
                   .Prefetch(2);
  Iterator it = ds.MakeInitializableIterator();
  std::vector<Output> next = it.GetNext();
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].shape(), TensorShape({64, 784}));
  EXPECT_EQ(next[1].shape(), TensorShape({64}));
  absl::StatusOr<GraphDef> g = s.ToGraphDef();
  ASSERT_TRUE(g.ok()) << g.status();

  const NodeDef* rec = Find(*g, "TFRecordDataset");
  ASSERT_NE(rec, nullptr);
  ASSERT_EQ(rec->input_size(), 3);
  EXPECT_EQ(ConstInput(*g, *rec, 0).string_val_size(), 2);
  EXPECT_EQ(Int(ConstInput(*g, *rec, 2)), 262144);  // TF's default read buffer

  const NodeDef* map = Find(*g, "ParallelMapDatasetV2");
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->attr().at("f").func().name(), "parse_example");
  EXPECT_EQ(map->attr().at("deterministic").s(), "default");
  EXPECT_EQ(map->attr().at("output_types").list().type_size(), 2);
  EXPECT_EQ(Int(ConstInput(*g, *map, 1)), -1);

  const NodeDef* shuffle = Find(*g, "ShuffleDataset");
  ASSERT_NE(shuffle, nullptr);
  EXPECT_EQ(Int(ConstInput(*g, *shuffle, 1)), 10000);
  EXPECT_EQ(Int(ConstInput(*g, *shuffle, 2)), 87654321);  // TF's default graph seed
  EXPECT_EQ(Int(ConstInput(*g, *shuffle, 3)), 7);
  EXPECT_TRUE(shuffle->attr().at("reshuffle_each_iteration").b());

  const NodeDef* batch = Find(*g, "BatchDatasetV2");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(Int(ConstInput(*g, *batch, 1)), 64);
  EXPECT_TRUE(ConstInput(*g, *batch, 2).bool_val(0) ||
              ConstInput(*g, *batch, 2).tensor_content() == std::string(1, '\1'));
  EXPECT_FALSE(batch->attr().at("parallel_copy").b());
  EXPECT_EQ(batch->attr().at("output_shapes").list().shape(0).dim(0).size(), 64);

  ASSERT_NE(Find(*g, "PrefetchDataset"), nullptr);
  const NodeDef* iter = Find(*g, "IteratorV2");
  ASSERT_NE(iter, nullptr);
  EXPECT_EQ(iter->attr().at("shared_name").s(), "");
  const NodeDef* make = Find(*g, "MakeIterator");
  ASSERT_NE(make, nullptr);
  EXPECT_EQ(make->input(1), iter->name());
  ASSERT_NE(Find(*g, "IteratorGetNext"), nullptr);
}

TEST(DatasetBuilderTest, BatchWithoutDropRemainderHasUnknownBatchDim) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Iterator it = Range(s, 0, 10).Batch(4).MakeInitializableIterator();
  std::vector<Output> next = it.GetNext();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(next[0].shape(), TensorShape({-1}));
}

TEST(DatasetBuilderTest, UnseededShuffleWritesZeroSeeds) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Range(s, 0, 10).Shuffle(4).MakeInitializableIterator();
  absl::StatusOr<GraphDef> g = s.ToGraphDef();
  ASSERT_TRUE(g.ok()) << g.status();
  const NodeDef* shuffle = Find(*g, "ShuffleDataset");
  ASSERT_NE(shuffle, nullptr);
  EXPECT_EQ(Int(ConstInput(*g, *shuffle, 2)), 0);
  EXPECT_EQ(Int(ConstInput(*g, *shuffle, 3)), 0);
}

// As TensorFlow 1.x writes it (tf.compat.v1 graph mode).
constexpr char kTfGraph[] = R"pb(
node {
  name: "start" op: "Const"
  attr { key: "dtype" value { type: DT_INT64 } }
  attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape {} int64_val: 0 } } }
}
node {
  name: "stop" op: "Const"
  attr { key: "dtype" value { type: DT_INT64 } }
  attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape {} int64_val: 5 } } }
}
node {
  name: "step" op: "Const"
  attr { key: "dtype" value { type: DT_INT64 } }
  attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape {} int64_val: 1 } } }
}
node {
  name: "RangeDataset" op: "RangeDataset" input: "start" input: "stop" input: "step"
  attr { key: "metadata" value { s: "" } }
  attr { key: "output_shapes" value { list { shape {} } } }
  attr { key: "output_types" value { list { type: DT_INT64 } } }
  attr { key: "replicate_on_split" value { b: false } }
}
node {
  name: "batch_size" op: "Const"
  attr { key: "dtype" value { type: DT_INT64 } }
  attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape {} int64_val: 2 } } }
}
node {
  name: "drop_remainder" op: "Const"
  attr { key: "dtype" value { type: DT_BOOL } }
  attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: false } } }
}
node {
  name: "BatchDatasetV2" op: "BatchDatasetV2"
  input: "RangeDataset" input: "batch_size" input: "drop_remainder"
  attr { key: "metadata" value { s: "" } }
  attr { key: "output_shapes" value { list { shape { dim { size: -1 } } } } }
  attr { key: "output_types" value { list { type: DT_INT64 } } }
  attr { key: "parallel_copy" value { b: false } }
}
node {
  name: "IteratorV2" op: "IteratorV2"
  attr { key: "container" value { s: "" } }
  attr { key: "output_shapes" value { list { shape { dim { size: -1 } } } } }
  attr { key: "output_types" value { list { type: DT_INT64 } } }
  attr { key: "shared_name" value { s: "" } }
}
node { name: "MakeIterator" op: "MakeIterator" input: "BatchDatasetV2" input: "IteratorV2" }
node {
  name: "IteratorGetNext" op: "IteratorGetNext" input: "IteratorV2"
  attr { key: "output_shapes" value { list { shape { dim { size: -1 } } } } }
  attr { key: "output_types" value { list { type: DT_INT64 } } }
}
versions { producer: 1645 }
)pb";

TEST(DatasetBuilderTest, TensorFlowWrittenPipelineRuns) {
  absl::StatusOr<GraphDef> def = ParseGraphDef(kTfGraph);
  ASSERT_TRUE(def.ok()) << def.status();
  auto sess = NewSession(BuiltinSessionConfig(), *def);
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {"MakeIterator"}).ok());
  std::vector<std::vector<int64_t>> batches;
  while (true) {
    absl::StatusOr<std::vector<Tensor>> b = (*sess)->Run({}, {"IteratorGetNext:0"}, {});
    if (!b.ok()) {
      EXPECT_TRUE(absl::IsOutOfRange(b.status())) << b.status();
      break;
    }
    auto f = (*b)[0].flat<int64_t>();
    batches.emplace_back(f.begin(), f.end());
  }
  EXPECT_THAT(batches, ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3), ElementsAre(4)));
}

}  // namespace
}  // namespace data
}  // namespace sluice

namespace sluice {
namespace data {
namespace {

// A pipeline goes through its GraphDef (as examples and tools hand graphs
// to sessions) with its string literals intact.
TEST(DatasetBuilderTest, PipelineRunsFromItsGraphDef) {
  const std::string path = ::testing::TempDir() + "/graphdef.tfrecord";
  {
    std::ofstream f(path, std::ios::binary);  // an empty file: no records
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  Iterator it = TFRecordDataset(s, Input(std::initializer_list<std::string>{path, path}))
                    .Batch(2)
                    .MakeInitializableIterator();
  std::vector<Output> next = it.GetNext();
  absl::StatusOr<GraphDef> def = s.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  auto sess = NewSession(BuiltinSessionConfig(), *def);
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::Status st = (*sess)->Run({}, {}, {it.initializer()->name()}).status();
  ASSERT_TRUE(st.ok()) << st;
  st = (*sess)->Run({}, {next[0].name()}, {}).status();
  EXPECT_TRUE(absl::IsOutOfRange(st)) << st;
}

}  // namespace
}  // namespace data
}  // namespace sluice

namespace sluice {
namespace data {
namespace {

// ops::Const of a std::vector<std::string> (how examples name their files)
// keeps its strings through a GraphDef.
TEST(DatasetBuilderTest, FileNamesFromAStringVectorConst) {
  const std::string path = ::testing::TempDir() + "/strings.tfrecord";
  { std::ofstream f(path, std::ios::binary); }
  Scope s = Scope::NewRootScope(BuiltinOps());
  Iterator it = TFRecordDataset(s, ops::Const(s, std::vector<std::string>{path, path}))
                    .MakeInitializableIterator();
  std::vector<Output> next = it.GetNext();
  absl::StatusOr<GraphDef> def = s.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  auto sess = NewSession(BuiltinSessionConfig(), *def);
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {it.initializer()->name()}).ok());
  absl::Status st = (*sess)->Run({}, {next[0].name()}, {}).status();
  EXPECT_TRUE(absl::IsOutOfRange(st)) << st;
}

}  // namespace
}  // namespace data
}  // namespace sluice
