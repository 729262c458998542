// The MLP trains to the accuracy the examples promise, and the graph it saves
// (variables frozen) gives the same outputs in the runner as in the session.
#include <cstdlib>

#include "examples/mlp_model.h"
#include "gtest/gtest.h"
#include "session/direct_session.h"
#include "sluice.h"
#include "tools/runner_lib.h"

namespace sluice {
namespace {

TEST(MlpEndToEndTest, TrainsAndSavedGraphRunsTheSameInTheRunner) {
  MlpConfig config;
  config.layers = {784, 64, 10};
  config.optimizer = "momentum";
  config.learning_rate = 0.05;
  absl::StatusOr<MlpModel> m = BuildMlp(config);
  ASSERT_TRUE(m.ok()) << m.status();
  Output probs = ops::Softmax(m->scope.WithOpName("probabilities"), m->logits);
  ASSERT_TRUE(m->scope.ok());
  Dataset data = MakeSyntheticDataset({.examples = 2048});
  auto session = NewSession(BuiltinSessionConfig(), *m->scope.graph());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Run({}, {}, {m->init}).ok());
  for (int step = 0; step < 150; ++step) {
    Dataset b = Batch(data, step * 64, 64);
    ASSERT_TRUE((*session)->Run({{m->x, b.x}, {m->labels, b.y}}, {}, {m->train}).ok());
  }
  auto eval = (*session)->Run({{m->x, data.x}, {m->labels, data.y}}, {m->accuracy, m->global_step});
  ASSERT_TRUE(eval.ok()) << eval.status();
  EXPECT_GE((*eval)[0].scalar<float>(), 0.95f);
  EXPECT_EQ((*eval)[1].scalar<int64_t>(), 150);

  absl::StatusOr<GraphDef> def = m->scope.ToGraphDef();
  ASSERT_TRUE(def.ok());
  absl::StatusOr<GraphDef> frozen =
      FreezeGraph(session->get(), *BuiltinOps(), *def, {"prediction", "probabilities"});
  ASSERT_TRUE(frozen.ok()) << frozen.status();
  for (const NodeDef& n : frozen->node()) EXPECT_NE(n.op(), "VariableV2") << n.name();
  std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/mlp.pb";
  ASSERT_TRUE(WriteGraphDefFile(*frozen, path, GraphFileFormat::kBinary).ok());

  Dataset sample = Batch(data, 0, 16);
  auto expected = (*session)->Run({{m->x, sample.x}}, {m->prediction, probs});
  ASSERT_TRUE(expected.ok());
  absl::StatusOr<GraphDef> reread = ReadGraphDefFile(path);
  ASSERT_TRUE(reread.ok()) << reread.status();
  RunRequest req;
  req.feeds = {{"x", sample.x}};
  req.fetches = {"prediction", "probabilities"};
  absl::StatusOr<RunReport> report = RunGraphDef(*reread, req, BuiltinSessionConfig());
  ASSERT_TRUE(report.ok()) << report.status();
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(report->fetched[0].flat<int64_t>()[i], (*expected)[0].flat<int64_t>()[i]);
  }
  for (int64_t i = 0; i < (*expected)[1].NumElements(); ++i) {
    EXPECT_FLOAT_EQ(report->fetched[1].flat<float>()[i], (*expected)[1].flat<float>()[i]);
  }
}

TEST(MlpEndToEndTest, FreezingAGraphThatUpdatesVariablesIsRefused) {
  absl::StatusOr<MlpModel> m = BuildMlp(MlpConfig{.layers = {784, 10}});
  ASSERT_TRUE(m.ok());
  auto session = NewSession(BuiltinSessionConfig(), *m->scope.graph());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Run({}, {}, {m->init}).ok());
  absl::StatusOr<GraphDef> frozen =
      FreezeGraph(session->get(), *BuiltinOps(), *m->scope.ToGraphDef(), {"train"});
  EXPECT_EQ(frozen.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(frozen.status().message().find("updates variable"), std::string::npos);
}

}  // namespace
}  // namespace sluice
