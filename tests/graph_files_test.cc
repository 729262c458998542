// End-to-end: GraphDef files in the layout TensorFlow 1.x writes
// (tests/testdata/*.pbtxt) imported and run through the runner library, with
// the numbers checked against values worked out by hand.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "gmock/gmock.h"
#include "graph/proto/summary.pb.h"
#include "graph/graph_def_io.h"
#include "gtest/gtest.h"
#include "ops/builtins.h"
#include "tools/runner_lib.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr char kLinear[] = "tests/testdata/linear_regression.pbtxt";
constexpr char kMlp[] = "tests/testdata/mlp_frozen.pbtxt";

GraphDef ReadTestGraph(const std::string& path) {
  absl::StatusOr<GraphDef> def = ReadGraphDefFile(path);
  EXPECT_TRUE(def.ok()) << def.status();
  return def.ok() ? *def : GraphDef();
}

// The training data of the linear model: 3 examples, 2 features.
const std::vector<float> kX = {0.5f, 1.0f, 1.0f, -0.5f, 0.0f, 0.5f};
const std::vector<float> kY = {1.0f, 0.5f, 0.25f};

RunRequest LinearRequest(int steps) {
  RunRequest req;
  req.feeds = {{"x", Tensor::FromVector<float>(kX, TensorShape({3, 2}))},
               {"y:0", Tensor::FromVector<float>(kY, TensorShape({3, 1}))}};
  req.init_targets = {"init"};
  req.targets = {"GradientDescent"};
  req.steps = steps;
  req.fetches = {"W/read", "b/read", "Mean"};
  return req;
}

// Plain gradient descent on mean((x.W + b - y)^2), in double.
struct Linear {
  double w[2] = {0, 0};
  double b = 0;
  double Loss() const {
    double sum = 0;
    for (int i = 0; i < 3; ++i) {
      double r = kX[2 * i] * w[0] + kX[2 * i + 1] * w[1] + b - kY[i];
      sum += r * r;
    }
    return sum / 3;
  }
  void Step(double lr) {
    double gw[2] = {0, 0}, gb = 0;
    for (int i = 0; i < 3; ++i) {
      double r = kX[2 * i] * w[0] + kX[2 * i + 1] * w[1] + b - kY[i];
      gw[0] += 2.0 / 3 * r * kX[2 * i];
      gw[1] += 2.0 / 3 * r * kX[2 * i + 1];
      gb += 2.0 / 3 * r;
    }
    w[0] -= lr * gw[0];
    w[1] -= lr * gw[1];
    b -= lr * gb;
  }
};

TEST(GraphFilesTest, LinearRegressionImports) {
  GraphDef def = ReadTestGraph(kLinear);
  EXPECT_EQ(def.node_size(), 84);
  EXPECT_EQ(def.versions().producer(), 27);
  // The whole training part (everything but summaries and the saver) is
  // made of ops Sluice has.
  absl::StatusOr<GraphDef> train = PruneGraphDef(def, {"GradientDescent", "init", "Mean"});
  ASSERT_TRUE(train.ok()) << train.status();
  Graph graph(BuiltinOps());
  absl::Status s = ImportGraphDef(*train, &graph);
  ASSERT_TRUE(s.ok()) << s;
  // Shapes were inferred on import.
  Node* matmul = graph.FindNode("MatMul");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->output_shape(0), TensorShape({-1, 1})) << matmul->output_shape(0).DebugString();
  Node* w_grad = graph.FindNode("gradients/MatMul_grad/MatMul_1");
  ASSERT_NE(w_grad, nullptr);
  EXPECT_TRUE(w_grad->output_shape(0).IsCompatibleWith(TensorShape({2, 1})))
      << w_grad->output_shape(0).DebugString();
  EXPECT_EQ(w_grad->output_shape(0).dim(0), 2) << w_grad->output_shape(0).DebugString();
}

TEST(GraphFilesTest, LinearRegressionNoSteps) {
  absl::StatusOr<RunReport> r =
      RunGraphDef(ReadTestGraph(kLinear), LinearRequest(0), BuiltinSessionConfig());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->fetched.size(), 3u);
  EXPECT_THAT(r->fetched[0].flat<float>(), ::testing::ElementsAre(0.0f, 0.0f));
  EXPECT_THAT(r->fetched[1].flat<float>(), ::testing::ElementsAre(0.0f));
  // Predictions are 0: loss = (1 + 0.25 + 0.0625) / 3.
  EXPECT_NEAR(r->fetched[2].scalar<float>(), 0.4375f, 1e-6);
}

TEST(GraphFilesTest, LinearRegressionOneStep) {
  absl::StatusOr<RunReport> r =
      RunGraphDef(ReadTestGraph(kLinear), LinearRequest(1), BuiltinSessionConfig());
  ASSERT_TRUE(r.ok()) << r.status();
  // Residuals at W = 0, b = 0 are -y = (-1, -0.5, -0.25); the gradients
  // 2/3 * sum(r * x) are dW = (-2/3, -7/12), db = -7/6; with rate 0.1:
  // W = (1/15, 7/120), b = 7/60.
  ASSERT_EQ(r->fetched[0].shape(), TensorShape({2, 1}));
  EXPECT_NEAR(r->fetched[0].flat<float>()[0], 1.0 / 15, 1e-6);
  EXPECT_NEAR(r->fetched[0].flat<float>()[1], 7.0 / 120, 1e-6);
  ASSERT_EQ(r->fetched[1].shape(), TensorShape({1}));
  EXPECT_NEAR(r->fetched[1].flat<float>()[0], 7.0 / 60, 1e-6);
  // Loss at the new parameters: residuals (-0.7916667, -0.3458333,
  // -0.1041667), mean of squares 0.2523958.
  EXPECT_NEAR(r->fetched[2].scalar<float>(), 0.2523958, 1e-6);

  // Sluice has every op of the file now, summaries and saver included.
  EXPECT_TRUE(r->warnings.empty()) << r->warnings[0];
}

TEST(GraphFilesTest, LinearRegressionTenSteps) {
  absl::StatusOr<RunReport> r =
      RunGraphDef(ReadTestGraph(kLinear), LinearRequest(10), BuiltinSessionConfig());
  ASSERT_TRUE(r.ok()) << r.status();
  Linear ref;
  for (int i = 0; i < 10; ++i) ref.Step(0.1);
  EXPECT_NEAR(r->fetched[0].flat<float>()[0], ref.w[0], 1e-5);
  EXPECT_NEAR(r->fetched[0].flat<float>()[1], ref.w[1], 1e-5);
  EXPECT_NEAR(r->fetched[1].flat<float>()[0], ref.b, 1e-5);
  EXPECT_NEAR(r->fetched[2].scalar<float>(), ref.Loss(), 1e-5);
  EXPECT_LT(ref.Loss(), 0.4375);  // it is learning
}

TEST(GraphFilesTest, LinearRegressionFromBinaryFile) {
  GraphDef def = ReadTestGraph(kLinear);
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/linear_regression.pb");
  ASSERT_TRUE(WriteGraphDefFile(def, path, GraphFileFormat::kBinary).ok());
  GraphDef binary = ReadTestGraph(path);
  std::remove(path.c_str());
  absl::StatusOr<RunReport> r = RunGraphDef(binary, LinearRequest(1), BuiltinSessionConfig());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->fetched[1].flat<float>()[0], 7.0 / 60, 1e-6);
}

TEST(GraphFilesTest, LinearRegressionSummaryFromTensorFlow) {
  // TensorFlow's summary subgraph runs: MergeSummary of ScalarSummary "loss".
  RunRequest req = LinearRequest(1);
  req.fetches.push_back("Merge/MergeSummary");
  absl::StatusOr<RunReport> r = RunGraphDef(ReadTestGraph(kLinear), req, BuiltinSessionConfig());
  ASSERT_TRUE(r.ok()) << r.status();
  const Tensor& merged = r->fetched.back();
  ASSERT_EQ(merged.dtype(), DT_STRING);
  tensorflow::Summary summary;
  ASSERT_TRUE(summary.ParseFromString(merged.scalar<std::string>()));
  ASSERT_EQ(summary.value_size(), 1);
  EXPECT_EQ(summary.value(0).tag(), "loss");
}

TEST(GraphFilesTest, FrozenMlp) {
  RunRequest req;
  req.feeds = {{"x", Tensor::FromVector<float>({1, 2, 3, -1, 0, 1}, TensorShape({2, 3}))}};
  req.fetches = {"probs", "dense/Relu"};
  absl::StatusOr<RunReport> r = RunGraphDef(ReadTestGraph(kMlp), req, BuiltinSessionConfig());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->warnings.empty());
  // Hidden layer: x.K1 + b1 = [[-0.5, 3.25], [-1.5, 0.75]], after relu
  // [[0, 3.25], [0, 0.75]]; logits h.K2 + b2 = [[-3.25, 3.35], [-0.75, 0.85]].
  EXPECT_THAT(r->fetched[1].flat<float>(), ::testing::ElementsAre(0.0f, 3.25f, 0.0f, 0.75f));
  const double logits[2][2] = {{-3.25, 3.35}, {-0.75, 0.85}};
  ASSERT_EQ(r->fetched[0].shape(), TensorShape({2, 2}));
  for (int i = 0; i < 2; ++i) {
    double z = std::exp(logits[i][0]) + std::exp(logits[i][1]);
    EXPECT_NEAR(r->fetched[0].flat<float>()[2 * i], std::exp(logits[i][0]) / z, 1e-6);
    EXPECT_NEAR(r->fetched[0].flat<float>()[2 * i + 1], std::exp(logits[i][1]) / z, 1e-6);
  }
}

TEST(GraphFilesTest, FrozenMlpWrongFeed) {
  RunRequest req;
  req.feeds = {{"x", Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))}};
  req.fetches = {"probs"};
  absl::StatusOr<RunReport> r = RunGraphDef(ReadTestGraph(kMlp), req, BuiltinSessionConfig());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("feed 'x'"));
  EXPECT_THAT(r.status().message(), HasSubstr("[?,3]"));
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// TensorFlow producers up to 21 wrote an unknown Placeholder shape as an
// empty `shape {}`, and read it back as unknown; newer graphs mean a scalar.
GraphDef PlaceholderGraph(int producer) {
  absl::StatusOr<GraphDef> def = ParseGraphDef(absl::StrCat(R"pb(
    node {
      name: "net_input"
      op: "Placeholder"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape {} } }
    }
    node {
      name: "out"
      op: "Neg"
      input: "net_input"
      attr { key: "T" value { type: DT_FLOAT } }
    }
    versions { producer: )pb", producer, " }"));
  EXPECT_TRUE(def.ok()) << def.status();
  return def.ok() ? *def : GraphDef();
}

TEST(GraphFilesTest, OldProducersEmptyPlaceholderShapeMeansUnknown) {
  RunRequest req;
  req.feeds = {{"net_input", Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))}};
  req.fetches = {"out"};
  absl::StatusOr<RunReport> old = RunGraphDef(PlaceholderGraph(21), req, BuiltinSessionConfig());
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->fetched[0].flat<float>()[3], -4);
  absl::StatusOr<RunReport> scalar = RunGraphDef(PlaceholderGraph(27), req, BuiltinSessionConfig());
  EXPECT_EQ(scalar.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
