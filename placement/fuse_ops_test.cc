// The rewrite pass: each pattern gives the unfused graph's results (the
// same graph run with SessionConfig::fuse_ops on and off, on known inputs)
// and is really rewritten (ops counted in the partition graphs); and the
// cases where it must not fire.
#include "placement/fuse_ops.h"

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "graph/scope.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/training/optimizers.h"
#include "ops/state/state_ops.h"
#include "ops/training/training_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";

// Deterministic values in [-1, 1).
Tensor Values(const TensorShape& shape, uint32_t seed) {
  Tensor t(DT_FLOAT, shape);
  uint32_t state = seed * 2654435761u + 1;
  for (float& v : t.flat<float>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return t;
}

std::unique_ptr<Session> MakeSession(const Scope& s, bool fuse, int virtual_cpus = 0) {
  EXPECT_TRUE(s.ok()) << s.status();
  SessionConfig options = BuiltinSessionConfig();
  options.fuse_ops = fuse;
  options.devices.num_virtual_cpus = virtual_cpus;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(options, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

// Op -> how many nodes of it the step ran, over every partition.
std::map<std::string, int> OpCounts(const RunMetadata& metadata) {
  std::map<std::string, int> counts;
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) ++counts[n.op()];
  }
  return counts;
}

const NodeDef* FindNode(const RunMetadata& metadata, const std::string& name) {
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      if (n.name() == name) return &n;
    }
  }
  return nullptr;
}

void ExpectClose(const Tensor& fused, const Tensor& unfused, float tolerance = 1e-5f) {
  ASSERT_EQ(fused.shape(), unfused.shape());
  absl::Span<const float> a = fused.flat<float>(), b = unfused.flat<float>();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], tolerance * (1.0f + std::abs(b[i]))) << "element " << i;
  }
}

struct Step {
  std::vector<Tensor> outputs;
  RunMetadata metadata;
};

Step RunOnce(Session* sess, const std::vector<std::pair<Output, Tensor>>& feeds,
             const std::vector<Output>& fetches, const std::vector<Node*>& targets = {}) {
  Step step;
  RunOptions options;
  options.output_partition_graphs = true;
  absl::StatusOr<std::vector<Tensor>> out =
      sess->Run(feeds, fetches, targets, options, &step.metadata);
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok()) step.outputs = *std::move(out);
  return step;
}

// A two-layer MLP trained by SGD: x [8,6] -> 5 (ReLU) -> 3 classes.
struct Mlp {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x, labels, hidden, logits, loss;
  std::vector<Output> vars;
  Node* train = nullptr;
  Node* init = nullptr;

  Mlp() {
    x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    labels = ops::Placeholder(s.WithOpName("labels"), DT_INT32);
    Output h = x;
    const std::vector<int64_t> sizes = {6, 5, 3};
    for (size_t l = 1; l < sizes.size(); ++l) {
      Scope layer = s.NewSubScope(absl::StrCat("layer", l));
      ops::VariableAndInit w = ops::VariableWithInit(
          layer.WithOpName("weights"),
          ops::Const(layer, Values(TensorShape({sizes[l - 1], sizes[l]}), 10 + l)));
      ops::VariableAndInit b = ops::VariableWithInit(
          layer.WithOpName("bias"), ops::Const(layer, Values(TensorShape({sizes[l]}), 20 + l)));
      vars.push_back(w.var);
      vars.push_back(b.var);
      h = ops::BiasAdd(layer, ops::MatMul(layer, h, w.var), b.var);
      if (l + 1 < sizes.size()) {
        h = ops::Relu(layer, h);
        hidden = h;
      }
    }
    logits = h;
    loss = ops::Mean(s.WithOpName("loss"),
                     ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels)[0], {0});
    GradientDescentOptimizer sgd(0.5);
    absl::StatusOr<Node*> t = sgd.Minimize(s.WithOpName("train"), loss, vars);
    EXPECT_TRUE(t.ok()) << t.status();
    if (t.ok()) train = *t;
    init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  }

  std::vector<std::pair<Output, Tensor>> Feeds() const {
    Tensor y(DT_INT32, TensorShape({8}));
    for (int i = 0; i < 8; ++i) y.flat<int32_t>()[i] = (i * 7) % 3;
    return {{x, Values(TensorShape({8, 6}), 1)}, {labels, y}};
  }
};

TEST(FuseOpsTest, MlpTrainingStepEqualsTheUnfusedStep) {
  Mlp m;
  std::unique_ptr<Session> fused = MakeSession(m.s, true), unfused = MakeSession(m.s, false);
  ASSERT_TRUE(fused && unfused);
  ASSERT_TRUE(fused->Run({}, {}, {m.init}).ok());
  ASSERT_TRUE(unfused->Run({}, {}, {m.init}).ok());
  Step f, u;
  for (int i = 0; i < 3; ++i) {
    f = RunOnce(fused.get(), m.Feeds(), {m.loss}, {m.train});
    u = RunOnce(unfused.get(), m.Feeds(), {m.loss}, {m.train});
    ASSERT_EQ(f.outputs.size(), 1u);
    ASSERT_EQ(u.outputs.size(), 1u);
    ExpectClose(f.outputs[0], u.outputs[0]);
  }
  // The rewrite happened: both forward layers are _FusedMatMul (ReLU fused
  // into the first), both weight updates take their gradient GEMM; the one
  // MatMul left is layer 2's input gradient. Unfused, all five are MatMuls.
  std::map<std::string, int> fc = OpCounts(f.metadata), uc = OpCounts(u.metadata);
  EXPECT_EQ(fc["_FusedMatMul"], 2);
  EXPECT_EQ(fc["_MatMulApplyGradientDescent"], 2);
  EXPECT_EQ(fc["MatMul"], 1);
  EXPECT_EQ(fc["BiasAdd"], 0);
  EXPECT_EQ(fc["Relu"], 0);
  EXPECT_EQ(fc["ApplyGradientDescent"], 2);  // the biases'
  EXPECT_EQ(uc["MatMul"], 5);
  EXPECT_EQ(uc["_FusedMatMul"] + uc["_MatMulApplyGradientDescent"], 0);
  // The fused nodes keep the names of the chains' last nodes.
  const NodeDef* layer1 = FindNode(f.metadata, "layer1/Relu");
  ASSERT_NE(layer1, nullptr);
  EXPECT_EQ(layer1->op(), "_FusedMatMul");
  EXPECT_EQ(layer1->attr().at("fused_ops").list().s_size(), 2);
  std::vector<std::string> updates;
  for (const GraphDef& g : f.metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      if (n.op() == "_MatMulApplyGradientDescent") updates.push_back(n.name());
    }
  }
  EXPECT_THAT(updates, ::testing::UnorderedElementsAre(
                           "GradientDescent/update_layer1/weights/ApplyGradientDescent",
                           "GradientDescent/update_layer2/weights/ApplyGradientDescent"));
  // The variables went the same way.
  std::vector<Output> fetch(m.vars.begin(), m.vars.end());
  Step fv = RunOnce(fused.get(), {}, fetch), uv = RunOnce(unfused.get(), {}, fetch);
  ASSERT_EQ(fv.outputs.size(), fetch.size());
  ASSERT_EQ(uv.outputs.size(), fetch.size());
  for (size_t i = 0; i < fetch.size(); ++i) ExpectClose(fv.outputs[i], uv.outputs[i]);
}

// x [4,3] · w [3,5] + b, then ReLU, with constants: the forward chain alone.
struct Dense {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Values(TensorShape({4, 3}), 3));
  Output matmul, bias_add, relu;
  explicit Dense(DataType dtype = DT_FLOAT, const std::string& bias_device = "") {
    Output w = ops::Const(s, Values(TensorShape({3, 5}), 4));
    Output b = ops::Const(s, Values(TensorShape({5}), 5));
    if (dtype != DT_FLOAT) {
      x = ops::Cast(s, x, dtype);
      w = ops::Cast(s, w, dtype);
      b = ops::Cast(s, b, dtype);
    }
    matmul = ops::MatMul(s.WithOpName("matmul"), x, w);
    bias_add = ops::BiasAdd(s.WithOpName("bias_add").WithDevice(bias_device), matmul, b);
    relu = ops::Relu(s.WithOpName("relu").WithDevice(bias_device), bias_add);
  }
};

TEST(FuseOpsTest, MatMulBiasAddReluEqualsTheUnfusedChain) {
  Dense d;
  std::unique_ptr<Session> fused = MakeSession(d.s, true), unfused = MakeSession(d.s, false);
  Step f = RunOnce(fused.get(), {}, {d.relu}), u = RunOnce(unfused.get(), {}, {d.relu});
  ExpectClose(f.outputs[0], u.outputs[0], 1e-6f);
  EXPECT_EQ(OpCounts(f.metadata)["_FusedMatMul"], 1);
  EXPECT_EQ(OpCounts(f.metadata)["MatMul"], 0);
  EXPECT_EQ(FindNode(f.metadata, "relu")->op(), "_FusedMatMul");
}

TEST(FuseOpsTest, FetchedIntermediateIsNotFusedAway) {
  Dense d;
  std::unique_ptr<Session> fused = MakeSession(d.s, true), unfused = MakeSession(d.s, false);
  // The MatMul's output is fetched: nothing fuses.
  Step f = RunOnce(fused.get(), {}, {d.matmul, d.relu});
  Step u = RunOnce(unfused.get(), {}, {d.matmul, d.relu});
  ExpectClose(f.outputs[0], u.outputs[0], 1e-6f);
  ExpectClose(f.outputs[1], u.outputs[1], 1e-6f);
  EXPECT_EQ(OpCounts(f.metadata)["_FusedMatMul"], 0);
  // The BiasAdd's output is fetched: MatMul + BiasAdd fuse, the ReLU stays.
  f = RunOnce(fused.get(), {}, {d.bias_add, d.relu});
  u = RunOnce(unfused.get(), {}, {d.bias_add, d.relu});
  ExpectClose(f.outputs[0], u.outputs[0], 1e-6f);
  ExpectClose(f.outputs[1], u.outputs[1], 1e-6f);
  std::map<std::string, int> counts = OpCounts(f.metadata);
  EXPECT_EQ(counts["_FusedMatMul"], 1);
  EXPECT_EQ(counts["Relu"], 1);
  EXPECT_EQ(FindNode(f.metadata, "bias_add")->op(), "_FusedMatMul");
}

TEST(FuseOpsTest, MatMulWithAnotherConsumerIsNotFused) {
  Dense d;
  Output other = ops::Sum(d.s, d.matmul, {0, 1});
  std::unique_ptr<Session> fused = MakeSession(d.s, true);
  Step f = RunOnce(fused.get(), {}, {d.relu, other});
  EXPECT_EQ(OpCounts(f.metadata)["_FusedMatMul"], 0);
  EXPECT_EQ(OpCounts(f.metadata)["MatMul"], 1);
}

TEST(FuseOpsTest, ChainAcrossDevicesIsNotFused) {
  Dense d(DT_FLOAT, "/device:CPU:1");
  std::unique_ptr<Session> fused = MakeSession(d.s, true, /*virtual_cpus=*/1);
  std::unique_ptr<Session> unfused = MakeSession(d.s, false, /*virtual_cpus=*/1);
  Step f = RunOnce(fused.get(), {}, {d.relu}), u = RunOnce(unfused.get(), {}, {d.relu});
  ExpectClose(f.outputs[0], u.outputs[0], 1e-6f);
  std::map<std::string, int> counts = OpCounts(f.metadata);
  EXPECT_EQ(counts["_FusedMatMul"], 0);
  EXPECT_EQ(counts["MatMul"], 1);
  EXPECT_EQ(counts["BiasAdd"], 1);
}

TEST(FuseOpsTest, DoubleIsNotFused) {
  Dense d(DT_DOUBLE);
  std::unique_ptr<Session> fused = MakeSession(d.s, true);
  Step f = RunOnce(fused.get(), {}, {d.relu});
  ASSERT_EQ(f.outputs.size(), 1u);
  EXPECT_EQ(f.outputs[0].dtype(), DT_DOUBLE);
  EXPECT_EQ(OpCounts(f.metadata)["_FusedMatMul"], 0);
  EXPECT_EQ(OpCounts(f.metadata)["MatMul"], 1);
}

TEST(FuseOpsTest, TargetIsNotFusedAway) {
  Dense d;
  std::unique_ptr<Session> fused = MakeSession(d.s, true);
  // matmul named as a target (run for effect) must stay a node of its own.
  Step f = RunOnce(fused.get(), {}, {d.relu}, {d.matmul.node});
  EXPECT_NE(FindNode(f.metadata, "matmul"), nullptr);
  EXPECT_EQ(OpCounts(f.metadata)["_FusedMatMul"], 0);
}

// w [3,2] -= 0.5 · xᵀ · g, with x [4,3] and g [4,2].
struct Update {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"),
                                                 ops::Const(s, Values(TensorShape({3, 2}), 6)));
  Output grad = ops::MatMul(s.WithOpName("grad"), ops::Const(s, Values(TensorShape({4, 3}), 7)),
                            ops::Const(s, Values(TensorShape({4, 2}), 8)), {.transpose_a = true});
  Output apply = ops::ApplyGradientDescent(s.WithOpName("apply"), w.var, 0.5f, grad);
};

TEST(FuseOpsTest, WeightGradientIntoTheUpdateEqualsTheUnfusedUpdate) {
  Update m;
  std::unique_ptr<Session> fused = MakeSession(m.s, true), unfused = MakeSession(m.s, false);
  for (Session* sess : {fused.get(), unfused.get()}) ASSERT_TRUE(sess->Run({}, {}, {m.w.initializer}).ok());
  Step f, u;
  for (int i = 0; i < 2; ++i) {
    f = RunOnce(fused.get(), {}, {}, {m.apply.node});
    u = RunOnce(unfused.get(), {}, {}, {m.apply.node});
  }
  EXPECT_EQ(FindNode(f.metadata, "apply")->op(), "_MatMulApplyGradientDescent");
  EXPECT_EQ(OpCounts(f.metadata)["MatMul"], 0);
  EXPECT_EQ(FindNode(u.metadata, "apply")->op(), "ApplyGradientDescent");
  ExpectClose(RunOnce(fused.get(), {}, {m.w.var}).outputs[0],
              RunOnce(unfused.get(), {}, {m.w.var}).outputs[0]);
}

TEST(FuseOpsTest, FetchedWeightGradientIsNotFused) {
  Update m;
  std::unique_ptr<Session> fused = MakeSession(m.s, true);
  ASSERT_TRUE(fused->Run({}, {}, {m.w.initializer}).ok());
  Step f = RunOnce(fused.get(), {}, {m.grad}, {m.apply.node});
  EXPECT_EQ(FindNode(f.metadata, "apply")->op(), "ApplyGradientDescent");
  EXPECT_EQ(OpCounts(f.metadata)["MatMul"], 1);
}

// Gradient accumulation over micro-batches: the same weight's gradient from
// `slices` batch slices of `rows` rows (Xᵢᵀ·dYᵢ), summed by AddN. The batch
// is a placeholder of unknown size, as a pipeline's is.
struct SummedGradient {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({-1, 6})});
  Output dy = ops::Placeholder(s.WithOpName("dy"), DT_FLOAT, {.shape = TensorShape({-1, 5})});
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"),
                                                 ops::Const(s, Values(TensorShape({6, 5}), 3)));
  Output sum;
  Output apply;

  explicit SummedGradient(int slices) {
    std::vector<Output> xs = ops::Split(s, 0, x, slices);
    std::vector<Output> dys = ops::Split(s, 0, dy, slices);
    std::vector<Output> products;
    for (int i = 0; i < slices; ++i) {
      products.push_back(ops::MatMul(s.WithOpName(absl::StrCat("dw", i)), xs[i], dys[i],
                                     {.transpose_a = true}));
    }
    sum = ops::AddN(s.WithOpName("sum"), products);
    apply = ops::ApplyGradientDescent(s.WithOpName("apply"), w.var, 0.25f, sum);
  }

  std::vector<std::pair<Output, Tensor>> Feeds(int64_t batch) const {
    return {{x, Values(TensorShape({batch, 6}), 4)}, {dy, Values(TensorShape({batch, 5}), 5)}};
  }
};

TEST(FuseOpsTest, SummedProductsBecomeOneProductOverStackedSlices) {
  SummedGradient m(4);
  std::unique_ptr<Session> fused = MakeSession(m.s, true), unfused = MakeSession(m.s, false);
  Step f = RunOnce(fused.get(), m.Feeds(12), {m.sum});
  Step u = RunOnce(unfused.get(), m.Feeds(12), {m.sum});
  std::map<std::string, int> ops = OpCounts(f.metadata);
  EXPECT_EQ(ops["AddN"], 0);
  EXPECT_EQ(ops["MatMul"], 1);
  EXPECT_EQ(ops["ConcatV2"], 2);
  EXPECT_EQ(FindNode(f.metadata, "sum")->op(), "MatMul");
  EXPECT_EQ(OpCounts(u.metadata)["MatMul"], 4);
  ExpectClose(f.outputs[0], u.outputs[0]);
}

TEST(FuseOpsTest, SummedWeightGradientGoesStraightIntoTheUpdate) {
  SummedGradient m(3);
  std::unique_ptr<Session> fused = MakeSession(m.s, true), unfused = MakeSession(m.s, false);
  for (Session* sess : {fused.get(), unfused.get()}) {
    ASSERT_TRUE(sess->Run({}, {}, {m.w.initializer}).ok());
  }
  Step f, u;
  for (int i = 0; i < 2; ++i) {
    f = RunOnce(fused.get(), m.Feeds(9), {}, {m.apply.node});
    u = RunOnce(unfused.get(), m.Feeds(9), {}, {m.apply.node});
  }
  std::map<std::string, int> ops = OpCounts(f.metadata);
  EXPECT_EQ(FindNode(f.metadata, "apply")->op(), "_MatMulApplyGradientDescent");
  EXPECT_EQ(ops["AddN"], 0);
  EXPECT_EQ(ops["MatMul"], 0);
  EXPECT_EQ(ops["ConcatV2"], 2);
  ExpectClose(RunOnce(fused.get(), {}, {m.w.var}).outputs[0],
              RunOnce(unfused.get(), {}, {m.w.var}).outputs[0]);
}

TEST(FuseOpsTest, StackedOperandsTakeFreshNames) {
  SummedGradient m(2);
  Output taken = ops::Identity(m.s.WithOpName("sum/stacked_a"), m.x);
  std::unique_ptr<Session> fused = MakeSession(m.s, true), unfused = MakeSession(m.s, false);
  Step f = RunOnce(fused.get(), m.Feeds(4), {m.sum, taken});
  EXPECT_EQ(FindNode(f.metadata, "sum")->op(), "MatMul");
  EXPECT_EQ(FindNode(f.metadata, "sum/stacked_a")->op(), "Identity");
  ExpectClose(f.outputs[0], RunOnce(unfused.get(), m.Feeds(4), {m.sum}).outputs[0]);
}

// Stacking would copy more than the products weigh: x [2, 40] slices into
// products [40, 1].
TEST(FuseOpsTest, SumOfProductsWithLargeContractionsIsNotStacked) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Const(s, Values(TensorShape({64, 40}), 1));
  Output b = ops::Const(s, Values(TensorShape({64, 1}), 2));
  Output sum = ops::AddN(s.WithOpName("sum"),
                         {ops::MatMul(s, a, b, {.transpose_a = true}),
                          ops::MatMul(s, a, b, {.transpose_a = true})});
  std::unique_ptr<Session> fused = MakeSession(s, true);
  Step f = RunOnce(fused.get(), {}, {sum});
  EXPECT_EQ(FindNode(f.metadata, "sum")->op(), "AddN");
  EXPECT_EQ(OpCounts(f.metadata)["MatMul"], 2);
}

TEST(FuseOpsTest, SumOfProductsIsNotStackedWhenItCannotBe) {
  // Transposes differ: aᵀ·a and b·bᵀ, both [8, 8].
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output a = ops::Const(s, Values(TensorShape({2, 8}), 1));
    Output b = ops::Const(s, Values(TensorShape({8, 2}), 2));
    Output sum = ops::AddN(s.WithOpName("sum"), {ops::MatMul(s, a, a, {.transpose_a = true}),
                                                 ops::MatMul(s, b, b, {.transpose_b = true})});
    std::unique_ptr<Session> fused = MakeSession(s, true);
    Step f = RunOnce(fused.get(), {}, {sum});
    EXPECT_EQ(FindNode(f.metadata, "sum")->op(), "AddN");
  }
  // A product with a second consumer, and products on two devices.
  SummedGradient m(2);
  Output extra = ops::Identity(m.s.WithOpName("extra"), Output(m.s.graph()->FindNode("dw0"), 0));
  std::unique_ptr<Session> fused = MakeSession(m.s, true);
  Step f = RunOnce(fused.get(), m.Feeds(4), {m.sum, extra});
  EXPECT_EQ(FindNode(f.metadata, "sum")->op(), "AddN");

  SummedGradient split(2);
  split.s.graph()->FindNode("dw1")->set_requested_device("/device:CPU:1");
  std::unique_ptr<Session> two = MakeSession(split.s, true, /*virtual_cpus=*/1);
  Step t = RunOnce(two.get(), split.Feeds(4), {split.sum});
  EXPECT_EQ(FindNode(t.metadata, "sum")->op(), "AddN");
}

// FuseOps on a graph placed by hand.
TEST(FuseOpsTest, ControlEdgesMoveToTheFusedNode) {
  Dense d;
  Node* before = ops::NoOp(d.s.WithOpName("before"));
  Node* after = ops::NoOp(d.s.WithOpName("after"));
  ASSERT_TRUE(d.s.ok()) << d.s.status();
  Graph* g = d.s.graph();
  g->AddControlEdge(before, d.matmul.node);
  g->AddControlEdge(d.relu.node, after);
  for (Node* n : g->nodes()) n->set_assigned_device(kCpu0);
  FuseOptions options;
  options.kernels = BuiltinKernels();
  absl::StatusOr<FuseStats> stats = FuseOps(g, options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->matmul_bias_relu, 1);
  EXPECT_EQ(stats->total(), 1);
  Node* fused = g->FindNode("relu");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->op(), "_FusedMatMul");
  EXPECT_EQ(fused->assigned_device(), kCpu0);
  EXPECT_EQ(fused->output_shape(0), TensorShape({4, 5}));
  EXPECT_EQ(g->FindNode("matmul"), nullptr);
  EXPECT_EQ(g->FindNode("bias_add"), nullptr);
  bool from_before = false, to_after = false;
  for (const Edge* e : fused->in_edges()) from_before |= e->IsControl() && e->src == before;
  for (const Edge* e : fused->out_edges()) to_after |= e->IsControl() && e->dst == after;
  EXPECT_TRUE(from_before);
  EXPECT_TRUE(to_after);
}

TEST(FuseOpsTest, NothingFusesWithoutTheKernelOrADevice) {
  Dense d;
  ASSERT_TRUE(d.s.ok()) << d.s.status();
  KernelRegistry empty;
  FuseOptions options;
  options.kernels = &empty;
  for (Node* n : d.s.graph()->nodes()) n->set_assigned_device(kCpu0);
  absl::StatusOr<FuseStats> stats = FuseOps(d.s.graph(), options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->total(), 0);
  // Unplaced nodes: the device type is unknown.
  for (Node* n : d.s.graph()->nodes()) n->set_assigned_device("");
  options.kernels = BuiltinKernels();
  stats = FuseOps(d.s.graph(), options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->total(), 0);
  EXPECT_EQ(d.s.graph()->FindNode("matmul")->op(), "MatMul");
}

TEST(FuseOpsTest, NeedsAKernelRegistry) {
  Dense d;
  EXPECT_EQ(FuseOps(d.s.graph(), {}).status().code(), absl::StatusCode::kInvalidArgument);
}

// ---- On a device type other than the CPU (a GPU's cuBLASLt epilogues) -----

constexpr char kGpu0[] = "/job:localhost/replica:0/task:0/device:GPU:0";

// Never run: a registry entry telling the pass that a GPU has the op.
class NeverRunKernel : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext*) override {
    return absl::InternalError("a placeholder kernel ran");
  }
};

// The fused ops a GPU has (ops/gpu/fused_matmul_kernels.cc), without CUDA:
// float and bfloat16 (not half, to see a missing type refused).
const KernelRegistry& GpuFusedKernels() {
  static const KernelRegistry* kernels = [] {
    auto* k = new KernelRegistry;
    for (const char* op : {"_FusedMatMul", "_MatMulBiasAddGrad"}) {
      k->Register<NeverRunKernel>(
          KernelDef(op, kDeviceTypeGpu).TypeConstraint("T", {DT_FLOAT, DT_BFLOAT16}));
    }
    return k;
  }();
  return *kernels;
}

absl::StatusOr<FuseStats> FuseOn(const char* device, const KernelRegistry& kernels, Graph* g,
                                 std::vector<std::string> keep = {}) {
  for (Node* n : g->nodes()) n->set_assigned_device(device);
  FuseOptions options;
  options.kernels = &kernels;
  options.keep = std::move(keep);
  return FuseOps(g, options);
}

// The MLP's training step on a GPU: every dense layer's forward is one
// product with its bias (and ReLU), and its weight and bias gradients one
// product with the bias gradient; no BiasAdd, Relu or BiasAddGrad is left.
TEST(FuseOpsTest, DenseLayersOnAGpuLeaveOnlyProducts) {
  Mlp m;
  ASSERT_NE(m.train, nullptr);
  Graph* g = m.s.graph();
  absl::StatusOr<FuseStats> stats =
      FuseOn(kGpu0, GpuFusedKernels(), g, {m.train->name(), m.init->name()});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->matmul_bias_relu, 1);
  EXPECT_EQ(stats->matmul_bias, 1);
  EXPECT_EQ(stats->matmul_bias_grad, 2);
  EXPECT_EQ(stats->matmul_apply_gradient_descent, 0);  // no GPU kernel: grouped updates there
  std::map<std::string, int> ops;
  for (const Node* n : g->nodes()) ++ops[n->op()];
  EXPECT_EQ(ops["BiasAdd"] + ops["Relu"] + ops["BiasAddGrad"], 0);
  EXPECT_EQ(ops["MatMul"], 2);  // the input gradients (layer 1's is pruned from a step)
  EXPECT_EQ(ops["_FusedMatMul"], 2);
  EXPECT_EQ(ops["_MatMulBiasAddGrad"], 2);
  // Each gradient pair feeds its layer's two updates: output 0 the weights',
  // output 1 the bias's.
  for (const Node* n : g->nodes()) {
    if (n->op() != "_MatMulBiasAddGrad") continue;
    EXPECT_EQ(n->assigned_device(), kGpu0);
    EXPECT_EQ(n->output_shape(1).rank(), 1) << n->name();
    std::map<int, std::string> updated;
    for (const Edge* e : n->out_edges()) {
      if (e->IsControl() || e->dst->op() != "ApplyGradientDescent") continue;
      updated[e->src_output] = e->dst->input_edge(0)->src->name();
    }
    ASSERT_EQ(updated.size(), 2u) << n->name();
    EXPECT_THAT(updated[0], ::testing::EndsWith("/weights")) << n->name();
    EXPECT_THAT(updated[1], ::testing::EndsWith("/bias")) << n->name();
  }
}

// The rewritten GPU graph, run on the CPU (whose kernels of the fused ops
// compute the same values), trains exactly like the unfused graph.
TEST(FuseOpsTest, TheGpuRewriteTrainsLikeTheUnfusedStep) {
  Mlp rewritten, plain;
  ASSERT_TRUE(FuseOn(kGpu0, GpuFusedKernels(), rewritten.s.graph(),
                     {rewritten.train->name(), rewritten.init->name()})
                  .ok());
  GraphDef def;
  rewritten.s.graph()->ToGraphDef(&def);
  for (NodeDef& n : *def.mutable_node()) n.clear_device();
  SessionConfig config = BuiltinSessionConfig();
  config.fuse_ops = false;  // run the graph as rewritten
  absl::StatusOr<std::unique_ptr<Session>> fused = NewSession(config, def);
  ASSERT_TRUE(fused.ok()) << fused.status();
  std::unique_ptr<Session> unfused = MakeSession(plain.s, false);
  ASSERT_TRUE((*fused)->Run({}, {}, {rewritten.init->name()}).ok());
  ASSERT_TRUE(unfused->Run({}, {}, {plain.init}).ok());
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [out, value] : plain.Feeds()) feeds.push_back({out.node->name() + ":0", value});
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::vector<Tensor>> f =
        (*fused)->Run(feeds, {"loss:0"}, {rewritten.train->name()});
    ASSERT_TRUE(f.ok()) << f.status();
    Step u = RunOnce(unfused.get(), plain.Feeds(), {plain.loss}, {plain.train});
    ExpectClose((*f)[0], u.outputs[0]);
  }
  for (const Output& v : plain.vars) {
    absl::StatusOr<std::vector<Tensor>> f = (*fused)->Run({}, {v.node->name() + ":0"}, {});
    ASSERT_TRUE(f.ok()) << f.status();
    ExpectClose((*f)[0], RunOnce(unfused.get(), {}, {v}).outputs[0]);
  }
}

// MatMul(x, dy) + BiasAddGrad(dy) alone.
struct DenseGrad {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Values(TensorShape({4, 3}), 9));
  Output dy = ops::Const(s.WithOpName("dy"), Values(TensorShape({4, 5}), 10));
  Output dw, db;
  explicit DenseGrad(bool transpose_b = false) {
    Output b = transpose_b ? ops::Transpose(s, dy, {1, 0}) : dy;
    dw = ops::MatMul(s.WithOpName("dw"), x, b, {.transpose_a = true, .transpose_b = transpose_b});
    db = ops::BiasAddGrad(s.WithOpName("db"), dy);
  }
};

TEST(FuseOpsTest, BiasGradientJoinsItsProductOnlyOffTheCpu) {
  {
    DenseGrad d;
    absl::StatusOr<FuseStats> on_cpu = FuseOn(kCpu0, *BuiltinKernels(), d.s.graph());
    ASSERT_TRUE(on_cpu.ok()) << on_cpu.status();
    EXPECT_EQ(on_cpu->total(), 0);  // the CPU has the kernel, but no epilogue to gain from
  }
  DenseGrad d;
  Node* before = ops::NoOp(d.s.WithOpName("before"));
  Node* after = ops::NoOp(d.s.WithOpName("after"));
  Graph* g = d.s.graph();
  g->AddControlEdge(before, d.db.node);
  g->AddControlEdge(d.dw.node, after);
  absl::StatusOr<FuseStats> on_gpu = FuseOn(kGpu0, GpuFusedKernels(), g);
  ASSERT_TRUE(on_gpu.ok()) << on_gpu.status();
  EXPECT_EQ(on_gpu->matmul_bias_grad, 1);
  EXPECT_EQ(on_gpu->total(), 1);
  EXPECT_EQ(g->FindNode("db"), nullptr);
  Node* fused = g->FindNode("dw");  // the product's name
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->op(), "_MatMulBiasAddGrad");
  EXPECT_EQ(fused->output_shape(0), TensorShape({3, 5}));
  EXPECT_EQ(fused->output_shape(1), TensorShape({5}));
  EXPECT_EQ(fused->input_edge(1)->src->name(), "dy");
  bool from_before = false, to_after = false;
  for (const Edge* e : fused->in_edges()) from_before |= e->IsControl() && e->src == before;
  for (const Edge* e : fused->out_edges()) to_after |= e->IsControl() && e->dst == after;
  EXPECT_TRUE(from_before);
  EXPECT_TRUE(to_after);
}

TEST(FuseOpsTest, BiasGradientIsNotFusedWhenItCannotBe) {
  {
    DenseGrad d(/*transpose_b=*/true);  // b is dy's transpose, not dy
    absl::StatusOr<FuseStats> stats = FuseOn(kGpu0, GpuFusedKernels(), d.s.graph());
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->total(), 0);
  }
  {
    DenseGrad d;  // the bias gradient is a target
    for (Node* n : d.s.graph()->nodes()) n->set_assigned_device(kGpu0);
    FuseOptions options;
    options.kernels = &GpuFusedKernels();
    options.keep = {"db"};
    absl::StatusOr<FuseStats> stats = FuseOps(d.s.graph(), options);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->total(), 0);
  }
  {
    DenseGrad d;  // on two devices
    for (Node* n : d.s.graph()->nodes()) n->set_assigned_device(kGpu0);
    d.db.node->set_assigned_device(kCpu0);
    FuseOptions options;
    options.kernels = &GpuFusedKernels();
    absl::StatusOr<FuseStats> stats = FuseOps(d.s.graph(), options);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->total(), 0);
  }
}

TEST(FuseOpsTest, ThePrecisionAttrGoesToTheFusedNode) {
  Dense d;
  d.matmul.node->SetAttr("_gpu_precision", MakeAttr("tf32"));
  Graph* g = d.s.graph();
  ASSERT_TRUE(FuseOn(kGpu0, GpuFusedKernels(), g).ok());
  Node* fused = g->FindNode("relu");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->op(), "_FusedMatMul");
  absl::StatusOr<std::string> p = fused->GetAttr<std::string>("_gpu_precision");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, "tf32");
}

// A mixed-precision step's 16-bit chains fuse where the device type has the
// fused kernel of that type: bfloat16 on the GPU; not half there (this
// registry has none), nor bfloat16 on the CPU (float kernels only).
TEST(FuseOpsTest, SixteenBitChainsFuseWhereTheDeviceHasThatType) {
  {
    Dense d(DT_BFLOAT16);
    absl::StatusOr<FuseStats> stats = FuseOn(kGpu0, GpuFusedKernels(), d.s.graph());
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->matmul_bias_relu, 1);
    Node* fused = d.s.graph()->FindNode("relu");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->op(), "_FusedMatMul");
    EXPECT_EQ(fused->GetAttr<DataType>("T").value_or(DT_INVALID), DT_BFLOAT16);
  }
  {
    Dense d(DT_HALF);
    absl::StatusOr<FuseStats> stats = FuseOn(kGpu0, GpuFusedKernels(), d.s.graph());
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->total(), 0);
  }
  {
    Dense d(DT_BFLOAT16);
    absl::StatusOr<FuseStats> stats = FuseOn(kCpu0, *BuiltinKernels(), d.s.graph());
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->total(), 0);
  }
}

}  // namespace
}  // namespace sluice
