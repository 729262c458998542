// MetaGraphs: a training graph exported with its saver and collections,
// written and read back (binary and text), imported into a fresh session
// that restores its checkpoint and goes on training exactly as the
// original; bad files and names, each a clear error.
#include "training/checkpoint/meta_graph.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"
#include "ops/training/optimizers.h"
#include "runtime/atomic_file.h"
#include "runtime/session.h"
#include "session/direct_session.h"
#include "training/checkpoint/saver.h"

namespace sluice {
namespace {

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir =
      absl::StrCat(tmp ? tmp : "/tmp", "/meta_graph_test_", getpid(), "/", name);
  EXPECT_TRUE(CreateDirectories(dir).ok());
  return dir;
}

// A linear regression: loss = mean((x w + b - y)^2) on a fixed batch,
// trained by gradient descent with a global step.
struct Model {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Node* train = nullptr;
  Node* init = nullptr;
  Output loss;
  std::unique_ptr<Saver> saver;
};

std::unique_ptr<Model> BuildModel() {
  auto m = std::make_unique<Model>();
  Scope& s = m->root;
  Output x = ops::Const(s.WithOpName("x"),
                        Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({4, 2})));
  Output y =
      ops::Const(s.WithOpName("y"), Tensor::FromVector<float>({1, 0, 2, 1}, TensorShape({4, 1})));
  ops::VariableAndInit w = ops::VariableWithInit(
      s.WithOpName("w"),
      ops::Const(s, Tensor::FromVector<float>({0.1f, -0.2f}, TensorShape({2, 1}))));
  ops::VariableAndInit b = ops::VariableWithInit(s.WithOpName("b"), {0.05f});
  Output pred = ops::Add(s, ops::MatMul(s, x, w.var), b.var);
  Output err = ops::Sub(s, pred, y);
  m->loss = ops::Mean(s.WithOpName("loss"), ops::Mul(s, err, err),
                      ops::Const(s, std::vector<int32_t>{0, 1}));
  GlobalStep step = CreateGlobalStep(s);
  GradientDescentOptimizer sgd(0.01);
  absl::StatusOr<Node*> train =
      sgd.Minimize(s.WithOpName("train"), m->loss, {w.var, b.var}, &step.ref);
  EXPECT_TRUE(train.ok()) << train.status();
  m->train = train.ok() ? *train : nullptr;
  m->init = ops::GlobalVariablesInitializer(s);
  absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {});
  EXPECT_TRUE(saver.ok()) << saver.status();
  if (saver.ok()) m->saver = *std::move(saver);
  EXPECT_TRUE(s.ok()) << s.status();
  return m;
}

float Loss(Session* sess, const std::string& loss) {
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {loss}, {});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].scalar<float>() : -1;
}

MetaGraphExportOptions ExportOptions(const Model& m) {
  MetaGraphExportOptions opts;
  opts.saver = m.saver.get();
  opts.collections["train_op"] = {m.train->name()};
  opts.collections["losses"] = {m.loss.name()};
  opts.tags = {"train"};
  return opts;
}

TEST(MetaGraphTest, ExportRecordsSaverCollectionsAndOps) {
  std::unique_ptr<Model> m = BuildModel();
  absl::StatusOr<MetaGraphDef> meta = ExportMetaGraph(*m->root.graph(), ExportOptions(*m));
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->saver_def().filename_tensor_name(), "save/prefix:0");
  EXPECT_EQ(meta->saver_def().restore_op_name(), "save/restore_all");
  EXPECT_EQ(meta->saver_def().version(), ::tensorflow::SaverDef::V2);
  EXPECT_EQ(meta->meta_info_def().tags(0), "train");
  std::vector<std::string> ops;
  for (const auto& op : meta->meta_info_def().stripped_op_list().op()) ops.push_back(op.name());
  for (const char* op : {"MatMul", "VariableV2", "Assign", "SaveV2", "RestoreV2",
                         "MergeV2Checkpoints", "ApplyGradientDescent"}) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  }
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  const auto& collections = meta->collection_def();
  EXPECT_EQ(collections.at("train_op").node_list().value(0), m->train->name());
  ASSERT_EQ(collections.at("variables").bytes_list().value_size(), 3);  // w, b, global_step
  EXPECT_EQ(collections.at("trainable_variables").bytes_list().value_size(), 2);
  ::tensorflow::VariableDef w;
  ASSERT_TRUE(w.ParseFromString(collections.at("trainable_variables").bytes_list().value(0)));
  EXPECT_EQ(w.variable_name(), "w:0");
  EXPECT_EQ(w.initializer_name(), "w/Assign");
  EXPECT_TRUE(w.trainable());
  ASSERT_EQ(collections.at("global_step").bytes_list().value_size(), 1);
}

TEST(MetaGraphTest, ImportedGraphRestoresAndTrainsOnAsTheOriginal) {
  const std::string dir = TestDir("resume");
  std::unique_ptr<Model> m = BuildModel();
  SessionConfig config = BuiltinSessionConfig();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(config, *m->root.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {m->init}).ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE((*sess)->Run({}, {}, {m->train}).ok());
  absl::StatusOr<std::string> prefix = m->saver->Save(sess->get(), dir, 10);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  absl::StatusOr<MetaGraphDef> meta = ExportMetaGraph(*m->root.graph(), ExportOptions(*m));
  ASSERT_TRUE(meta.ok()) << meta.status();
  ASSERT_TRUE(WriteMetaGraph(*prefix + ".meta", *meta).ok());
  ASSERT_TRUE(WriteMetaGraph(*prefix + ".meta.pbtxt", *meta).ok());
  // The original goes on for 5 steps.
  std::vector<float> expected;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE((*sess)->Run({}, {}, {m->train}).ok());
    expected.push_back(Loss(sess->get(), m->loss.name()));
  }

  for (const std::string file : {*prefix + ".meta", *prefix + ".meta.pbtxt"}) {
    absl::StatusOr<MetaGraphDef> read = ReadMetaGraph(file);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*read, *meta)) << file;
    absl::StatusOr<ImportedMetaGraph> imported = ImportMetaGraph(*read);
    ASSERT_TRUE(imported.ok()) << imported.status();
    ASSERT_NE(imported->saver, nullptr);
    EXPECT_EQ(imported->variables.size(), 3u);
    EXPECT_EQ(imported->trainable_variables.size(), 2u);
    absl::StatusOr<std::unique_ptr<Session>> fresh = NewSession(config, imported->graph_def);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    absl::Status restored = imported->saver->Restore(fresh->get(), *prefix);
    ASSERT_TRUE(restored.ok()) << restored;
    const std::string train = imported->collections.at("train_op")[0];
    const std::string loss = imported->collections.at("losses")[0];
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE((*fresh)->Run({}, {}, {train}).ok());
      EXPECT_EQ(Loss(fresh->get(), loss), expected[i]) << file << " step " << i;
    }
    absl::StatusOr<std::vector<Tensor>> step = (*fresh)->Run({}, {"global_step"}, {});
    ASSERT_TRUE(step.ok()) << step.status();
    EXPECT_EQ((*step)[0].scalar<int64_t>(), 15);
    // Its saver saves too.
    absl::StatusOr<std::string> again = imported->saver->Save(fresh->get(), dir + "/again", 15);
    ASSERT_TRUE(again.ok()) << again.status();
  }
}

TEST(MetaGraphTest, BadFilesAndNamesAreClearErrors) {
  const std::string dir = TestDir("bad");
  absl::StatusOr<MetaGraphDef> none = ReadMetaGraph(dir + "/none.meta");
  EXPECT_TRUE(absl::IsNotFound(none.status())) << none.status();
  ASSERT_TRUE(WriteFileAtomically(dir + "/junk.meta", "\xff\xff\xff garbage").ok());
  absl::StatusOr<MetaGraphDef> junk = ReadMetaGraph(dir + "/junk.meta");
  EXPECT_TRUE(absl::IsDataLoss(junk.status())) << junk.status();
  EXPECT_TRUE(absl::StrContains(junk.status().message(), "junk.meta")) << junk.status();

  std::unique_ptr<Model> m = BuildModel();
  MetaGraphExportOptions opts = ExportOptions(*m);
  opts.collections["summaries"] = {"no_such_node:0"};
  absl::StatusOr<MetaGraphDef> bad = ExportMetaGraph(*m->root.graph(), opts);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "no_such_node")) << bad.status();

  absl::StatusOr<MetaGraphDef> meta = ExportMetaGraph(*m->root.graph(), ExportOptions(*m));
  ASSERT_TRUE(meta.ok());
  MetaGraphDef v1 = *meta;
  v1.mutable_saver_def()->set_version(::tensorflow::SaverDef::V1);
  for (auto& n : *v1.mutable_graph_def()->mutable_node()) {
    if (n.op() == "RestoreV2") n.set_op("RestoreSlice");
  }
  EXPECT_TRUE(absl::IsUnimplemented(ImportMetaGraph(v1).status()));
  MetaGraphDef renamed = *meta;
  renamed.mutable_saver_def()->set_restore_op_name("save/missing");
  absl::StatusOr<ImportedMetaGraph> imported = ImportMetaGraph(renamed);
  EXPECT_TRUE(absl::IsInvalidArgument(imported.status())) << imported.status();
  EXPECT_TRUE(absl::StrContains(imported.status().message(), "save/missing"));
  MetaGraphDef broken = *meta;
  (*broken.mutable_collection_def())["variables"].mutable_bytes_list()->add_value("\xff\xff");
  EXPECT_TRUE(absl::IsInvalidArgument(ImportMetaGraph(broken).status()));
}

}  // namespace
}  // namespace sluice
