// SavedModels: a classifier written with its variables, a signature and a
// vocabulary asset, loaded in a fresh session that gives the same answers;
// bad directories, tags, signatures and inputs, each a clear error.
#include "training/checkpoint/saved_model.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "graph/proto/example.pb.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/lookup/lookup_ops.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/state/state_ops.h"
#include "runtime/atomic_file.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp ? tmp : "/tmp", "/saved_model_test_", getpid(), "/", name);
}

// logits = x W + b over 4 features and 3 classes; the class's name looked
// up in a vocabulary file (line i: class i), the table filled by a main op.
struct Classifier {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x, probabilities, classes, names;
  Node* init = nullptr;
  Node* table_init = nullptr;
  std::unique_ptr<Saver> saver;
  std::string vocab;
};

std::unique_ptr<Classifier> BuildClassifier(const std::string& dir) {
  auto c = std::make_unique<Classifier>();
  Scope& s = c->root;
  c->x = ops::Placeholder(s.WithOpName("images"), DT_FLOAT);
  std::vector<float> w(12);
  for (int i = 0; i < 12; ++i) w[i] = 0.25f * static_cast<float>((i * 7) % 5) - 0.5f;
  ops::VariableAndInit weights =
      ops::VariableWithInit(s.WithOpName("dense/kernel"),
                            ops::Const(s, Tensor::FromVector<float>(w, TensorShape({4, 3}))));
  ops::VariableAndInit bias =
      ops::VariableWithInit(s.WithOpName("dense/bias"), {0.1f, -0.1f, 0.0f});
  Output logits = ops::Add(s, ops::MatMul(s, c->x, weights.var), bias.var);
  c->probabilities = ops::Softmax(s.WithOpName("probabilities"), logits);
  c->classes = ops::ArgMax(s.WithOpName("classes"), logits, 1);
  c->vocab = dir + "/labels.txt";
  EXPECT_TRUE(CreateDirectories(dir).ok());
  EXPECT_TRUE(WriteFileAtomically(c->vocab, "cat\ndog\nbird\n").ok());
  Output table = ops::HashTable(s.WithOpName("labels"), DT_INT64, DT_STRING);
  Output path = ops::Const(s.WithOpName("vocab_path"), Input(c->vocab));
  c->table_init = ops::InitializeTableFromTextFile(s.WithOpName("labels/init"), table, path,
                                                   /*key_index=*/-1,
                                                   /*value_index=*/-2);  // line number -> line
  c->names = ops::LookupTableFind(s.WithOpName("names"), table, c->classes, Input("?"));
  c->init = ops::GlobalVariablesInitializer(s);
  absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {});
  EXPECT_TRUE(saver.ok()) << saver.status();
  if (saver.ok()) c->saver = *std::move(saver);
  EXPECT_TRUE(s.ok()) << s.status();
  return c;
}

Tensor Batch() {
  return Tensor::FromVector<float>({1, 0, 2, -1, 0.5f, 3, -2, 1, -1, -1, 0, 4},
                                   TensorShape({3, 4}));
}

TEST(SavedModelTest, WrittenModelLoadsAndAnswersAsTheOriginal) {
  const std::string dir = TestDir("round_trip");
  std::unique_ptr<Classifier> c = BuildClassifier(dir + "/src");
  absl::StatusOr<std::unique_ptr<Session>> sess =
      NewSession(BuiltinSessionConfig(), *c->root.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::Status inited = (*sess)->Run({}, {}, std::vector<Node*>{c->init, c->table_init}).status();
  ASSERT_TRUE(inited.ok()) << inited;
  absl::StatusOr<std::vector<Tensor>> want = (*sess)->Run(
      {{"images", Batch()}}, {c->probabilities.name(), c->classes.name(), c->names.name()}, {});
  ASSERT_TRUE(want.ok()) << want.status();

  SaveModelOptions opts;
  opts.signatures[kDefaultServingSignature] = PredictSignature(
      {{"images", c->x}},
      {{"probabilities", c->probabilities}, {"classes", c->classes}, {"names", c->names}});
  opts.main_op = c->table_init->name();
  opts.assets = {{"vocab_path:0", c->vocab}};
  const std::string model_dir = dir + "/model/1";
  absl::Status saved = SaveModel(sess->get(), *c->root.graph(), *c->saver, model_dir, opts);
  ASSERT_TRUE(saved.ok()) << saved;
  EXPECT_TRUE(std::filesystem::exists(model_dir + "/saved_model.pb"));
  EXPECT_TRUE(std::filesystem::exists(model_dir + "/variables/variables.index"));
  EXPECT_TRUE(std::filesystem::exists(model_dir + "/assets/labels.txt"));
  // The original vocabulary is gone: the loaded model reads its asset.
  std::filesystem::remove(c->vocab);

  absl::StatusOr<SavedModelBundle> model =
      LoadSavedModel(BuiltinSessionConfig(), model_dir, {kSavedModelServeTag});
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::map<std::string, Tensor>> got =
      RunSignature(*model, kDefaultServingSignature, {{"images", Batch()}});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 3u);
  const Tensor& p = got->at("probabilities");
  ASSERT_EQ(p.shape(), TensorShape({3, 3}));
  for (int i = 0; i < 9; ++i) EXPECT_EQ(p.flat<float>()[i], (*want)[0].flat<float>()[i]) << i;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got->at("classes").flat<int64_t>()[i], (*want)[1].flat<int64_t>()[i]);
    EXPECT_EQ(got->at("names").flat<std::string>()[i], (*want)[2].flat<std::string>()[i]);
  }
  EXPECT_NE(got->at("names").flat<std::string>()[0], "?");
  // Only the outputs asked for.
  absl::StatusOr<std::map<std::string, Tensor>> one =
      RunSignature(*model, kDefaultServingSignature, {{"images", Batch()}}, {"classes"});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->size(), 1u);

  // The MetaGraph records what TensorFlow's loader looks for.
  const MetaGraphDef& meta = model->meta_graph;
  EXPECT_EQ(meta.meta_info_def().tags(0), "serve");
  EXPECT_EQ(meta.signature_def().at("serving_default").method_name(), kPredictMethodName);
  EXPECT_EQ(meta.asset_file_def(0).filename(), "labels.txt");
  EXPECT_EQ(meta.collection_def().at("saved_model_main_op").node_list().value(0), "labels/init");
}

TEST(SavedModelTest, BadDirectoriesTagsSignaturesAndInputsAreClearErrors) {
  const std::string dir = TestDir("errors");
  absl::StatusOr<SavedModelBundle> none =
      LoadSavedModel(BuiltinSessionConfig(), dir + "/none", {"serve"});
  EXPECT_TRUE(absl::IsNotFound(none.status())) << none.status();
  EXPECT_TRUE(absl::StrContains(none.status().message(), "saved_model.pb")) << none.status();

  std::unique_ptr<Classifier> c = BuildClassifier(dir + "/src");
  absl::StatusOr<std::unique_ptr<Session>> sess =
      NewSession(BuiltinSessionConfig(), *c->root.graph());
  ASSERT_TRUE(sess.ok());
  ASSERT_TRUE((*sess)->Run({}, {}, {c->init}).ok());
  SaveModelOptions opts;
  opts.signatures["predict"] = PredictSignature({{"images", c->x}}, {{"classes", c->classes}});
  const std::string model_dir = dir + "/model";
  ASSERT_TRUE(SaveModel(sess->get(), *c->root.graph(), *c->saver, model_dir, opts).ok());
  // Not into a directory that holds something.
  absl::Status again = SaveModel(sess->get(), *c->root.graph(), *c->saver, model_dir, opts);
  EXPECT_TRUE(absl::IsInvalidArgument(again)) << again;

  absl::StatusOr<SavedModelBundle> wrong_tag =
      LoadSavedModel(BuiltinSessionConfig(), model_dir, {"serve", "gpu"});
  EXPECT_TRUE(absl::IsNotFound(wrong_tag.status())) << wrong_tag.status();
  EXPECT_TRUE(absl::StrContains(wrong_tag.status().message(), "{serve}")) << wrong_tag.status();

  absl::StatusOr<SavedModelBundle> model =
      LoadSavedModel(BuiltinSessionConfig(), model_dir, {"serve"});
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::map<std::string, Tensor>> r = RunSignature(*model, "serving_default", {});
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "predict")) << r.status();
  r = RunSignature(*model, "predict", {{"pixels", Batch()}});
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "images")) << r.status();
  r = RunSignature(*model, "predict", {{"images", Tensor::FromVector<int32_t>({1, 2})}});
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  r = RunSignature(*model, "predict", {});
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  r = RunSignature(*model, "predict", {{"images", Batch()}}, {"logits"});
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();

  ASSERT_TRUE(WriteFileAtomically(model_dir + "/saved_model.pb", "\xff\xfe garbage").ok());
  absl::StatusOr<SavedModelBundle> junk =
      LoadSavedModel(BuiltinSessionConfig(), model_dir, {"serve"});
  EXPECT_TRUE(absl::IsDataLoss(junk.status())) << junk.status();
}

// A SavedModel TensorFlow 1.14 wrote for TensorFlow Serving's tests
// (testdata/README.md): y = 0.5 x + 2 by predict, and by regress and
// classify signatures that parse serialized tf.Examples in the graph.
TEST(SavedModelTest, ServesTensorFlowServingsHalfPlusTwo) {
  const std::string dir =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                   "/training/checkpoint/testdata/half_plus_two/00000123");
  absl::StatusOr<SavedModelBundle> model = LoadSavedModel(BuiltinSessionConfig(), dir, {"serve"});
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::map<std::string, Tensor>> y =
      RunSignature(*model, "serving_default",
                   {{"x", Tensor::FromVector<float>({1, 2, 5}, TensorShape({3, 1}))}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(std::vector<float>(y->at("y").flat<float>().begin(), y->at("y").flat<float>().end()),
            (std::vector<float>{2.5f, 3.0f, 4.5f}));
  absl::StatusOr<std::map<std::string, Tensor>> y3 =
      RunSignature(*model, "regress_x2_to_y3",
                   {{"inputs", Tensor::FromVector<float>({4}, TensorShape({1, 1}))}});
  ASSERT_TRUE(y3.ok()) << y3.status();
  EXPECT_EQ(y3->at("outputs").flat<float>()[0], 5.0f);  // 0.5 * 4 + 3
  // The regress signature takes serialized Examples with a float "x".
  Tensor examples(DT_STRING, TensorShape({2}));
  for (int i = 0; i < 2; ++i) {
    ::tensorflow::Example e;
    (*e.mutable_features()->mutable_feature())["x"].mutable_float_list()->add_value(2.0f * i + 1);
    examples.flat<std::string>()[i] = e.SerializeAsString();
  }
  absl::StatusOr<std::map<std::string, Tensor>> r =
      RunSignature(*model, "regress_x_to_y", {{"inputs", examples}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->at("outputs").flat<float>()[0], 2.5f);
  EXPECT_EQ(r->at("outputs").flat<float>()[1], 3.5f);
  EXPECT_EQ(model->meta_graph.signature_def().at("classify_x_to_y").method_name(),
            kClassifyMethodName);
}

// A Keras 3 model (Embedding, LSTM, BatchNormalization, Dense) saved by
// tf.saved_model.save (testdata/make_keras_saved_model.py): its serving
// function captures handles that only the object graph binds to the
// checkpoint (the MetaGraph's saver fills others). Served with
// TensorFlow's outputs, and with the saver's restore alone it would fail.
TEST(SavedModelTest, ServesAKerasModelThroughItsObjectGraph) {
  const std::string testdata = absl::StrCat(std::getenv("TEST_SRCDIR"), "/",
                                            std::getenv("TEST_WORKSPACE"),
                                            "/training/checkpoint/testdata/");
  std::ifstream expected(testdata + "keras_lstm.expected.txt");
  ASSERT_TRUE(expected.good());
  std::map<std::string, std::vector<double>> values;
  for (std::string line; std::getline(expected, line);) {
    std::istringstream in(line);
    std::string kind, key;
    in >> kind >> key;
    for (double v; in >> v;) values[key].push_back(v);
  }
  std::vector<int32_t> ids(values["inputs"].begin(), values["inputs"].end());
  ASSERT_EQ(ids.size(), 28u);
  absl::StatusOr<SavedModelBundle> model =
      LoadSavedModel(BuiltinSessionConfig(), testdata + "keras_lstm", {"serve"});
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(model->meta_graph.has_object_graph_def());
  absl::StatusOr<std::map<std::string, Tensor>> out = RunSignature(
      *model, "serving_default", {{"inputs", Tensor::FromVector(ids, TensorShape({4, 7}))}});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& probs = out->at("output_0");
  ASSERT_EQ(probs.NumElements(), 12);
  for (int i = 0; i < 12; ++i) {
    EXPECT_NEAR(probs.flat<float>()[i], values["output_0"][i], 1e-5) << i;
  }
}

}  // namespace
}  // namespace sluice
