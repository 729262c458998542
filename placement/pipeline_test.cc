#include "placement/pipeline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/training/optimizers.h"
#include "ops/state/state_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

std::vector<float> RandomValues(int64_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// Dense layers with fixed initial values, so that two graphs start equal.
struct Layer {
  int64_t in = 0, out = 0;
  bool relu = true;
  uint32_t seed = 0;
};

std::vector<Output> MakeVariables(const Scope& s, absl::Span<const Layer> layers) {
  std::vector<Output> vars;
  for (const Layer& l : layers) {
    Scope ls = s.NewSubScope(absl::StrCat("layer", l.seed));
    std::vector<float> w = RandomValues(l.in * l.out, std::sqrt(2.0f / l.in), l.seed);
    std::vector<float> b = RandomValues(l.out, 0.1f, l.seed + 100);
    vars.push_back(ops::VariableWithInit(ls.WithOpName("weights"),
                                         ops::Const(ls, w, TensorShape({l.in, l.out})))
                       .var);
    vars.push_back(
        ops::VariableWithInit(ls.WithOpName("bias"), ops::Const(ls, b, TensorShape({l.out}))).var);
  }
  return vars;
}

Output ApplyLayers(const Scope& s, Output h, absl::Span<const Layer> layers,
                   absl::Span<const Output> vars) {
  for (size_t i = 0; i < layers.size(); ++i) {
    h = ops::BiasAdd(s, ops::MatMul(s, h, vars[2 * i]), vars[2 * i + 1]);
    if (layers[i].relu) h = ops::Relu(s, h);
  }
  return h;
}

PipelineStage DenseStage(std::string device, std::vector<Layer> layers) {
  PipelineStage stage;
  stage.device = std::move(device);
  stage.create_variables = [layers](const Scope& s) -> absl::StatusOr<std::vector<Output>> {
    return MakeVariables(s, layers);
  };
  stage.apply = [layers](const Scope& s, const Output& x,
                         absl::Span<const Output> vars) -> absl::StatusOr<Output> {
    return ApplyLayers(s, x, layers, vars);
  };
  return stage;
}

absl::StatusOr<Output> MeanXent(const Scope& s, const Output& logits,
                                absl::Span<const Output> targets) {
  return ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, targets[0])[0], {0});
}

struct Batch {
  Tensor x, y;
};

Batch MakeBatch(int64_t rows, int64_t features, uint32_t seed) {
  Batch b{
      Tensor::FromVector(RandomValues(rows * features, 1.0f, seed), TensorShape({rows, features})),
      Tensor(DT_INT32, TensorShape({rows}))};
  std::mt19937 rng(seed + 7);
  for (int64_t i = 0; i < rows; ++i) b.y.data<int32_t>()[i] = static_cast<int32_t>(rng() % 10);
  return b;
}

// A model (pipelined or not) with a session, ready to train.
struct Trainer {
  Scope scope = Scope::NewRootScope(BuiltinOps());
  Output x, y, loss;
  std::vector<Output> vars;
  bool fuse_ops = true;  // SessionConfig::fuse_ops
  Node* train = nullptr;
  std::unique_ptr<Session> session;
};

const std::vector<Layer> kStage0 = {{20, 64, true, 1}};
const std::vector<Layer> kStage1 = {{64, 32, true, 2}, {32, 10, false, 3}};

void StartSession(Trainer* t, int num_virtual_cpus) {
  Node* init = ops::GlobalVariablesInitializer(t->scope.WithOpName("init"));
  ASSERT_TRUE(t->scope.ok()) << t->scope.status();
  SessionConfig options = BuiltinSessionConfig();
  options.devices.num_virtual_cpus = num_virtual_cpus;
  options.fuse_ops = t->fuse_ops;
  absl::StatusOr<std::unique_ptr<Session>> s = NewSession(options, *t->scope.graph());
  ASSERT_TRUE(s.ok()) << s.status();
  t->session = *std::move(s);
  absl::Status status = t->session->Run({}, {}, {init}).status();
  ASSERT_TRUE(status.ok()) << status;
}

void BuildPipelined(Trainer* t, int micro_batches, const std::vector<Layer>& stage0 = kStage0,
                    const std::vector<Layer>& stage1 = kStage1) {
  t->x = ops::Placeholder(t->scope.WithOpName("x"), DT_FLOAT,
                          {.shape = TensorShape({-1, stage0[0].in})});
  t->y = ops::Placeholder(t->scope.WithOpName("y"), DT_INT32, {.shape = TensorShape({-1})});
  std::vector<PipelineStage> stages = {DenseStage("/device:CPU:0", stage0),
                                       DenseStage("/device:CPU:1", stage1)};
  absl::StatusOr<Pipeline> p =
      BuildPipeline(t->scope, stages, t->x, {t->y}, MeanXent, {.num_micro_batches = micro_batches});
  ASSERT_TRUE(p.ok()) << p.status();
  t->loss = p->loss;
  for (const GradAndVar& gv : p->grads_and_vars) {
    ASSERT_TRUE(gv.grad.valid()) << gv.var.node->name();
    t->vars.push_back(gv.var);
  }
  GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<Node*> train = sgd.ApplyGradients(t->scope.WithOpName("train"), p->grads_and_vars);
  ASSERT_TRUE(train.ok()) << train.status();
  t->train = *train;
  StartSession(t, /*num_virtual_cpus=*/1);
}

void BuildReference(Trainer* t) {
  t->x = ops::Placeholder(t->scope.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({-1, 20})});
  t->y = ops::Placeholder(t->scope.WithOpName("y"), DT_INT32, {.shape = TensorShape({-1})});
  std::vector<Output> v0 = MakeVariables(t->scope, kStage0);
  std::vector<Output> v1 = MakeVariables(t->scope, kStage1);
  Output h = ApplyLayers(t->scope, ApplyLayers(t->scope, t->x, kStage0, v0), kStage1, v1);
  absl::StatusOr<Output> loss = MeanXent(t->scope, h, {t->y});
  ASSERT_TRUE(loss.ok());
  t->loss = *loss;
  t->vars = v0;
  t->vars.insert(t->vars.end(), v1.begin(), v1.end());
  GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<Node*> train = sgd.Minimize(t->scope.WithOpName("train"), t->loss, t->vars);
  ASSERT_TRUE(train.ok()) << train.status();
  t->train = *train;
  StartSession(t, /*num_virtual_cpus=*/0);
}

// max |a - b| / max |b| over a tensor.
double RelativeError(const Tensor& a, const Tensor& b) {
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < b.NumElements(); ++i) {
    diff = std::max(diff, std::abs(double(a.data<float>()[i]) - b.data<float>()[i]));
    scale = std::max(scale, std::abs(double(b.data<float>()[i])));
  }
  return diff / std::max(scale, 1e-30);
}

// Three SGD steps, pipelined over two devices, against the same model on one
// device without micro-batches: losses and weights agree to float rounding.
void ExpectPipelinedEqualsReference(int micro_batches) {
  Trainer pipelined, reference;
  ASSERT_NO_FATAL_FAILURE(BuildPipelined(&pipelined, micro_batches));
  ASSERT_NO_FATAL_FAILURE(BuildReference(&reference));
  for (int step = 0; step < 3; ++step) {
    Batch b = MakeBatch(32, 20, 10 + step);
    auto p = pipelined.session->Run({{pipelined.x, b.x}, {pipelined.y, b.y}}, {pipelined.loss},
                                    {pipelined.train});
    auto r = reference.session->Run({{reference.x, b.x}, {reference.y, b.y}}, {reference.loss},
                                    {reference.train});
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE(r.ok()) << r.status();
    const float pl = (*p)[0].scalar<float>(), rl = (*r)[0].scalar<float>();
    EXPECT_NEAR(pl, rl, 1e-5 * std::abs(rl)) << "step " << step;
  }
  auto p = pipelined.session->Run({}, pipelined.vars);
  auto r = reference.session->Run({}, reference.vars);
  ASSERT_TRUE(p.ok() && r.ok());
  ASSERT_EQ(p->size(), r->size());
  for (size_t i = 0; i < p->size(); ++i) {
    EXPECT_LT(RelativeError((*p)[i], (*r)[i]), 1e-5) << reference.vars[i].node->name();
  }
  // Training moved the weights: the comparison is not vacuous.
  Trainer fresh;
  ASSERT_NO_FATAL_FAILURE(BuildReference(&fresh));
  auto f = fresh.session->Run({}, fresh.vars);
  ASSERT_TRUE(f.ok());
  EXPECT_GT(RelativeError((*f)[0], (*r)[0]), 1e-3);
}

TEST(PipelineTest, PipelinedStepsEqualTheUnpipelinedModel) {
  for (int m : {1, 2, 4, 8}) {
    SCOPED_TRACE(absl::StrCat(m, " micro-batches"));
    ExpectPipelinedEqualsReference(m);
  }
}

TEST(PipelineTest, EachStageForwardAndBackwardRunsOnItsDevice) {
  Trainer t;
  // The MatMul nodes are found by name below; fused chains take the names
  // of their last nodes (placement/fuse_ops.h), so run them unfused.
  t.fuse_ops = false;
  ASSERT_NO_FATAL_FAILURE(BuildPipelined(&t, /*micro_batches=*/2));
  Batch b = MakeBatch(8, 20, 3);
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata metadata;
  ASSERT_TRUE(
      t.session->Run({{t.x, b.x}, {t.y, b.y}}, {t.loss}, {t.train}, options, &metadata).ok());
  std::map<std::string, std::string> device_of;  // not counting _Send/_Recv
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      if (n.op() != "_Send" && n.op() != "_Recv") device_of[n.name()] = n.device();
    }
  }
  int matmuls[2] = {0, 0};
  for (const auto& [name, device] : device_of) {
    if (!absl::StrContains(name, "MatMul")) continue;
    const bool stage1 = absl::StrContains(name, "/stage1/");
    ASSERT_TRUE(stage1 || absl::StrContains(name, "/stage0/")) << name;
    EXPECT_EQ(device, stage1 ? kCpu1 : kCpu0) << name;
    ++matmuls[stage1];
  }
  // Forward per micro-batch, two gradients per forward MatMul (the first
  // stage's input gradient is not built).
  EXPECT_GE(matmuls[0], 2 * 2);  // forward and weight gradient per micro-batch
  EXPECT_GE(matmuls[1], 2 * 2 * 3);
  EXPECT_EQ(device_of.at("layer2/weights"), kCpu1);
  EXPECT_EQ(device_of.at("layer1/weights"), kCpu0);
}

absl::Status BuildWith(absl::Span<const PipelineStage> stages, int64_t rows, int64_t target_rows,
                       int micro_batches) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({rows, 20})});
  Output y = ops::Placeholder(s.WithOpName("y"), DT_INT32, {.shape = TensorShape({target_rows})});
  return BuildPipeline(s, stages, x, {y}, MeanXent, {.num_micro_batches = micro_batches}).status();
}

TEST(PipelineTest, BadArgumentsGiveClearErrors) {
  std::vector<PipelineStage> two = {DenseStage("/device:CPU:0", kStage0),
                                    DenseStage("/device:CPU:1", kStage1)};
  struct Case {
    std::vector<PipelineStage> stages;
    int64_t rows, target_rows;
    int m;
    const char* needle;
  };
  PipelineStage no_apply = two[1];
  no_apply.apply = nullptr;
  PipelineStage no_vars = two[0];
  no_vars.create_variables = nullptr;
  for (const Case& c :
       {Case{{}, 8, 8, 2, "no stages"}, Case{two, 8, 8, 0, "num_micro_batches must be >= 1, got 0"},
        Case{two, 10, 10, 4, "batch of 10 rows (input 'x') does not split into 4"},
        Case{two, 8, 6, 2, "target 'y' has 6 rows, the input 8"},
        Case{two, -1, 6, 4, "the 6 rows of target 'y' do not split into 4"},
        Case{{two[0], no_apply}, 8, 8, 2, "stage 1 ('stage1') has no apply"},
        Case{{no_vars}, 8, 8, 2, "no stage created a variable"}}) {
    absl::Status s = BuildWith(c.stages, c.rows, c.target_rows, c.m);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.needle << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), c.needle)) << s;
  }

  // An error inside a stage function comes back with the stage added.
  PipelineStage failing = two[1];
  failing.apply = [](const Scope&, const Output&,
                     absl::Span<const Output>) -> absl::StatusOr<Output> {
    return absl::InvalidArgumentError("bad layer");
  };
  absl::Status s = BuildWith({two[0], failing}, 8, 8, 2);
  EXPECT_TRUE(absl::StrContains(s.message(), "pipeline stage 1, micro-batch 0: bad layer")) << s;
}

TEST(PipelineTest, ABatchOfUnknownSizeThatDoesNotSplitFailsAtRunTime) {
  Trainer t;
  ASSERT_NO_FATAL_FAILURE(BuildPipelined(&t, /*micro_batches=*/4));
  Batch b = MakeBatch(10, 20, 1);
  auto r = t.session->Run({{t.x, b.x}, {t.y, b.y}}, {t.loss}, {t.train});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "split_")) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "(size = 10) and num_split 4")) << r.status();
}

// With M >= 2 micro-batches, some compute node of stage 0 runs while one of
// stage 1 does (trace times), in at least one of a few steps (loose: the
// machine may have 2 cores and other tests running). Every kernel's interval
// counts, so a GEMM waiting for another device's GEMM (OpenBLAS calls are
// serialized process-wide, ops/internal/blas.h) also counts: this shows that
// the schedule overlaps the stages, not that two GEMMs compute at once.
TEST(PipelineTest, StagesOverlapInTime) {
  Trainer t;
  ASSERT_NO_FATAL_FAILURE(BuildPipelined(&t, /*micro_batches=*/4,
                                         {{256, 512, true, 1}, {512, 512, true, 2}},
                                         {{512, 512, true, 3}, {512, 10, false, 4}}));
  Batch b = MakeBatch(512, 256, 5);
  int overlapping_steps = 0;
  for (int step = 0; step < 5; ++step) {
    RunOptions options;
    options.trace = true;
    RunMetadata metadata;
    ASSERT_TRUE(
        t.session->Run({{t.x, b.x}, {t.y, b.y}}, {t.loss}, {t.train}, options, &metadata).ok());
    std::vector<std::pair<int64_t, int64_t>> on[2];
    for (const NodeExecStats& n : metadata.step_stats.nodes) {
      if (n.op == "_Send" || n.op == "_Recv" || n.op == "NoOp" || n.op == "Const") continue;
      if (n.device == kCpu0) on[0].push_back({n.start_us, n.end_us});
      if (n.device == kCpu1) on[1].push_back({n.start_us, n.end_us});
    }
    ASSERT_FALSE(on[0].empty());
    ASSERT_FALSE(on[1].empty());
    bool overlap = false;
    for (const auto& a : on[0]) {
      for (const auto& c : on[1]) overlap |= a.first < c.second && c.first < a.second;
    }
    overlapping_steps += overlap;
  }
  EXPECT_GE(overlapping_steps, 1);
}

}  // namespace
}  // namespace sluice
