#include "placement/replicate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
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

constexpr int kFeatures = 20, kHidden = 16, kClasses = 4;

// A 20-16-4 MLP forward graph with fixed initial values: inputs "x" and
// "labels", loss "loss" (mean cross-entropy over the batch).
struct Mlp {
  Scope scope = Scope::NewRootScope(BuiltinOps());
  Output x, labels, logits, loss;
  std::vector<Output> vars;
};

std::vector<float> RandomValues(size_t n, uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& f : v) f = normal(rng);
  return v;
}

Mlp BuildForward(int64_t static_batch = -1) {
  Mlp m;
  const Scope& s = m.scope;
  m.x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {static_batch, kFeatures}});
  m.labels = ops::Placeholder(s.WithOpName("labels"), DT_INT32, {.shape = {static_batch}});
  Output h = m.x;
  const int64_t sizes[] = {kFeatures, kHidden, kClasses};
  for (int l = 1; l <= 2; ++l) {
    Scope layer = s.NewSubScope(absl::StrCat("layer", l));
    Output w0 = ops::Const(layer, RandomValues(sizes[l - 1] * sizes[l], l, 0.4f),
                           TensorShape({sizes[l - 1], sizes[l]}));
    Output b0 = ops::Const(layer, RandomValues(sizes[l], 10 + l, 0.1f), TensorShape({sizes[l]}));
    ops::VariableAndInit w = ops::VariableWithInit(layer.WithOpName("weights"), w0);
    ops::VariableAndInit b = ops::VariableWithInit(layer.WithOpName("bias"), b0);
    m.vars.push_back(w.var);
    m.vars.push_back(b.var);
    h = ops::BiasAdd(layer, ops::MatMul(layer, h, w.var), b.var);
    if (l == 1) h = ops::Relu(layer, h);
  }
  m.logits = h;
  std::vector<Output> xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, m.logits, m.labels);
  m.loss = ops::Mean(s.WithOpName("loss"), xent[0], {0});
  return m;
}

ReplicationOptions TowersOn(const Mlp& m, int towers) {
  ReplicationOptions o;
  for (int k = 1; k <= towers; ++k) o.devices.push_back(absl::StrCat("/device:CPU:", k));
  o.batch_inputs = {m.x, m.labels};
  o.loss = m.loss;
  o.variables = m.vars;
  return o;
}

struct Batch {
  Tensor x, labels;
};

Batch MakeBatch(int64_t n, uint64_t seed) {
  std::vector<float> x = RandomValues(n * kFeatures, 100 + seed, 1.0f);
  std::mt19937_64 rng(200 + seed);
  std::vector<int32_t> y(n);
  for (int32_t& v : y) v = static_cast<int32_t>(rng() % kClasses);
  return {Tensor::FromVector(x, TensorShape({n, kFeatures})), Tensor::FromVector(y)};
}

bool IsTowerNode(const Node& n, int k) {
  return absl::StartsWith(n.name(), absl::StrCat("tower_", k, "/"));
}

TEST(ReplicateTest, TowersHaveTheirOwnDevicesAndShareTheVariables) {
  Mlp m = BuildForward();
  ASSERT_TRUE(m.scope.ok()) << m.scope.status();
  const int variables_before = [&] {
    int n = 0;
    for (Node* node : m.scope.graph()->nodes()) n += node->op() == "VariableV2";
    return n;
  }();
  absl::StatusOr<ReplicatedGraph> r = ReplicateTraining(m.scope, TowersOn(m, 2));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->tower_losses.size(), 2u);
  ASSERT_EQ(r->grads_and_vars.size(), m.vars.size());

  int variables_after = 0;
  int copied[2] = {0, 0};
  for (Node* node : m.scope.graph()->nodes()) {
    if (node->op() == "VariableV2") {
      ++variables_after;
      EXPECT_EQ(node->requested_device(), "/device:CPU:0") << node->name();
      EXPECT_FALSE(absl::StartsWith(node->name(), "tower_")) << node->name();
    }
    for (int k = 0; k < 2; ++k) {
      if (!IsTowerNode(*node, k)) continue;
      ++copied[k];
      EXPECT_EQ(node->requested_device(), absl::StrCat("/device:CPU:", k + 1)) << node->name();
    }
  }
  EXPECT_EQ(variables_after, variables_before);
  EXPECT_GT(copied[0], 10);
  EXPECT_EQ(copied[0], copied[1]);
  for (int k = 0; k < 2; ++k) {
    Output logits = r->InTower(k, m.logits);
    ASSERT_TRUE(logits.valid());
    EXPECT_EQ(logits.node->name(), absl::StrCat("tower_", k, "/", m.logits.node->name()));
    // The first layer's MatMul reads the shared variable and its batch slice.
    Node* matmul = m.scope.graph()->FindNode(absl::StrCat("tower_", k, "/layer1/MatMul"));
    ASSERT_NE(matmul, nullptr);
    EXPECT_EQ(matmul->input_edge(1)->src, m.vars[0].node);
    EXPECT_EQ(matmul->input_edge(0)->src->op(), "Split");
    EXPECT_EQ(matmul->input_edge(0)->src_output, k);
  }
  EXPECT_FALSE(r->InTower(0, m.vars[0]).valid());
  EXPECT_FALSE(r->InTower(0, m.x).valid());
  for (const GradAndVar& gv : r->grads_and_vars) {
    ASSERT_TRUE(gv.grad.valid());
    EXPECT_EQ(gv.grad.node->requested_device(), "/device:CPU:0");
  }

  // Placed and partitioned by a session: each tower runs on its own device.
  GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<Node*> train = sgd.ApplyGradients(m.scope, r->grads_and_vars);
  ASSERT_TRUE(train.ok()) << train.status();
  Node* init = ops::GlobalVariablesInitializer(m.scope);
  ASSERT_TRUE(m.scope.ok()) << m.scope.status();
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.num_virtual_cpus = 2;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *m.scope.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init}).ok());
  Batch b = MakeBatch(8, 0);
  RunOptions run_options;
  run_options.output_partition_graphs = true;
  RunMetadata meta;
  absl::StatusOr<std::vector<Tensor>> out =
      (*sess)->Run({{m.x, b.x}, {m.labels, b.labels}}, {r->loss}, {*train}, run_options, &meta);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(meta.partition_graphs.size(), 3u);
  for (const GraphDef& part : meta.partition_graphs) {
    for (const NodeDef& n : part.node()) {
      const std::string& device = n.device();
      if (absl::StartsWith(n.name(), "tower_0/")) {
        EXPECT_TRUE(absl::EndsWith(device, "CPU:1")) << n.name() << " on " << device;
      }
      if (absl::StartsWith(n.name(), "tower_1/")) {
        EXPECT_TRUE(absl::EndsWith(device, "CPU:2")) << n.name() << " on " << device;
      }
      if (n.op() == "VariableV2" || n.op() == "ApplyGradientDescent") {
        EXPECT_TRUE(absl::EndsWith(device, "CPU:0")) << n.name() << " on " << device;
      }
    }
  }
}

// Runs `steps` training steps of `m` (SGD when momentum == 0) with batches of
// `batch` examples and returns the variables' values; `towers` == 0 trains on
// one device without replication.
absl::StatusOr<std::vector<std::vector<float>>> Train(int towers, int64_t batch, int steps,
                                                      double momentum,
                                                      std::vector<float>* losses) {
  Mlp m = BuildForward();
  std::unique_ptr<Optimizer> opt;
  if (momentum == 0) {
    opt = std::make_unique<GradientDescentOptimizer>(0.2);
  } else {
    opt = std::make_unique<MomentumOptimizer>(0.1, momentum);
  }
  Output loss = m.loss;
  absl::StatusOr<Node*> train;
  if (towers == 0) {
    train = opt->Minimize(m.scope, m.loss, m.vars);
  } else {
    absl::StatusOr<ReplicatedGraph> r = ReplicateTraining(m.scope, TowersOn(m, towers));
    if (!r.ok()) return r.status();
    loss = r->loss;
    train = opt->ApplyGradients(m.scope, r->grads_and_vars);
  }
  if (!train.ok()) return train.status();
  Node* init = ops::GlobalVariablesInitializer(m.scope);
  if (!m.scope.ok()) return m.scope.status();
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.num_virtual_cpus = towers;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *m.scope.graph());
  if (!sess.ok()) return sess.status();
  if (absl::Status s = (*sess)->Run({}, {}, {init}).status(); !s.ok()) return s;
  for (int step = 0; step < steps; ++step) {
    Batch b = MakeBatch(batch, step);
    absl::StatusOr<std::vector<Tensor>> out =
        (*sess)->Run({{m.x, b.x}, {m.labels, b.labels}}, {loss}, {*train});
    if (!out.ok()) return out.status();
    losses->push_back((*out)[0].scalar<float>());
  }
  absl::StatusOr<std::vector<Tensor>> values = (*sess)->Run({}, m.vars, {});
  if (!values.ok()) return values.status();
  std::vector<std::vector<float>> result;
  for (const Tensor& t : *values) {
    result.emplace_back(t.data<float>(), t.data<float>() + t.NumElements());
  }
  return result;
}

// Checks got ~ want (relative 1e-5); returns the largest relative difference.
double ExpectClose(const std::vector<float>& got, const std::vector<float>& want,
                   const std::string& what) {
  EXPECT_EQ(got.size(), want.size()) << what;
  double worst = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    worst = std::max(worst, std::abs(double{got[i]} - want[i]) / std::max(1.0f, std::abs(want[i])));
    EXPECT_NEAR(got[i], want[i], 1e-5 * std::max(1.0f, std::abs(want[i]))) << what << "[" << i
                                                                            << "]";
  }
  return worst;
}

TEST(ReplicateTest, TowersTrainLikeOneDeviceWithTheWholeBatch) {
  constexpr int kSteps = 5;
  constexpr int64_t kPerTower = 4;
  for (double momentum : {0.0, 0.9}) {
    for (int towers : {2, 3}) {
      SCOPED_TRACE(absl::StrCat(towers, " towers, momentum ", momentum));
      std::vector<float> one_losses, rep_losses;
      auto one = Train(0, towers * kPerTower, kSteps, momentum, &one_losses);
      ASSERT_TRUE(one.ok()) << one.status();
      auto rep = Train(towers, towers * kPerTower, kSteps, momentum, &rep_losses);
      ASSERT_TRUE(rep.ok()) << rep.status();
      double worst = ExpectClose(rep_losses, one_losses, "loss");
      ASSERT_EQ(rep->size(), one->size());
      for (size_t v = 0; v < one->size(); ++v) {
        worst = std::max(worst, ExpectClose((*rep)[v], (*one)[v], absl::StrCat("variable ", v)));
      }
      std::printf("%d towers, momentum %.1f: largest relative difference %.2g after %d steps\n",
                  towers, momentum, worst, kSteps);
      // Training moved the variables: the comparison is not vacuous.
      EXPECT_LT(one_losses.back(), one_losses.front());
    }
  }
}

absl::Status ReplicateError(const std::function<void(Mlp&, ReplicationOptions&)>& edit,
                            int64_t static_batch = -1) {
  Mlp m = BuildForward(static_batch);
  ReplicationOptions o = TowersOn(m, 2);
  edit(m, o);
  return ReplicateTraining(m.scope, o).status();
}

void ExpectError(const absl::Status& s, const std::string& needle) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), needle)) << s;
}

TEST(ReplicateTest, BadOptionsNameTheProblem) {
  ExpectError(ReplicateError([](Mlp&, ReplicationOptions& o) { o.devices.clear(); }),
              "no devices");
  ExpectError(ReplicateError([](Mlp&, ReplicationOptions& o) { o.devices[1] = "/device:CPU"; }),
              "/device:CPU");
  ExpectError(ReplicateError([](Mlp&, ReplicationOptions& o) { o.devices[0] = ""; }),
              "empty device name");
  ExpectError(ReplicateError([](Mlp& m, ReplicationOptions& o) {
                Output z = ops::Placeholder(m.scope.WithOpName("z"), DT_FLOAT);
                o.batch_inputs.push_back(z);
              }),
              "batch input 'z' (Placeholder) is not an input of loss 'loss'");
  ExpectError(ReplicateError([](Mlp& m, ReplicationOptions& o) {
                o.loss = ops::Mean(m.scope.WithOpName("xmean"), m.x, {0, 1});
                o.batch_inputs = {m.x};
              }),
              "loss 'xmean' (Mean) does not depend on any of the variables");
  ExpectError(ReplicateError([](Mlp& m, ReplicationOptions& o) { o.loss = m.logits; }),
              "must be a scalar");
  ExpectError(ReplicateError([](Mlp& m, ReplicationOptions& o) { o.variables = {m.logits}; }),
              "is not a variable");
  ExpectError(ReplicateError([](Mlp&, ReplicationOptions& o) { o.devices.push_back("/cpu:3"); },
                             /*static_batch=*/8),
              "batch input 'x' (Placeholder) has batch size 8, not a multiple of 3 towers");
}

TEST(ReplicateTest, ColocationFollowsTheTowerAndSharedStateStaysShared) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1, 2}});
  Output scale = ops::Placeholder(s.WithOpName("scale"), DT_FLOAT, {.shape = {}});
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0f, 2.0f});
  Output read = ops::Identity(s.WithOpName("w/read"), w.var);
  Output prod = ops::Mul(s.WithOpName("prod"), x, read);
  Output scaled = ops::Mul(s.WithOpName("scaled").ColocateWith(prod), prod, scale);
  Output near_w = ops::Square(s.WithOpName("near_w").ColocateWith(w.var), scaled);
  Output loss = ops::Mean(s.WithOpName("loss"), near_w, {0, 1});
  ASSERT_TRUE(s.ok()) << s.status();
  ReplicationOptions o;
  o.devices = {"/device:CPU:1", "/device:CPU:2"};
  o.batch_inputs = {x};
  o.loss = loss;
  o.variables = {w.var};
  absl::StatusOr<ReplicatedGraph> r = ReplicateTraining(s, o);
  ASSERT_TRUE(r.ok()) << r.status();
  Graph* g = s.graph();
  Node* scaled1 = g->FindNode("tower_1/scaled");
  ASSERT_NE(scaled1, nullptr);
  EXPECT_EQ(scaled1->ColocationNames(), std::vector<std::string>{"tower_1/prod"});
  EXPECT_EQ(scaled1->input_edge(1)->src, scale.node);  // the Placeholder is fed once
  Node* near_w1 = g->FindNode("tower_1/near_w");
  ASSERT_NE(near_w1, nullptr);
  EXPECT_TRUE(near_w1->ColocationNames().empty());  // not dragged to w's device
  EXPECT_EQ(g->FindNode("tower_1/prod")->input_edge(1)->src, read.node);
  EXPECT_EQ(g->FindNode("tower_0/w/read"), nullptr);
  EXPECT_EQ(g->FindNode("tower_0/scale"), nullptr);

  // Runs: 2 towers over a batch of 4 give the loss of the whole batch.
  Node* init = ops::GlobalVariablesInitializer(s);
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.num_virtual_cpus = 2;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *g);
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init}).ok());
  Tensor xs = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({4, 2}));
  auto out = (*sess)->Run({{x, xs}, {scale, Tensor::Scalar<float>(0.5f)}},
                          {r->loss, loss, r->grads_and_vars[0].grad});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ((*out)[0].scalar<float>(), (*out)[1].scalar<float>());
}

TEST(ReplicateTest, ALossThatIsSharedStateIsRejected) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1}});
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), 1.0f);
  Output read = ops::Identity(s.WithOpName("w/read").WithControlDependencies({x}), w.var);
  ASSERT_TRUE(s.ok()) << s.status();
  ReplicationOptions o;
  o.devices = {"/device:CPU:1"};
  o.batch_inputs = {x};
  o.loss = read;
  o.variables = {w.var};
  ExpectError(ReplicateTraining(s, o).status(), "must be computed per tower");
}

TEST(ReplicateTest, ABatchTheTowersCannotShareFailsAtRunTime) {
  Mlp m = BuildForward();
  absl::StatusOr<ReplicatedGraph> r = ReplicateTraining(m.scope, TowersOn(m, 2));
  ASSERT_TRUE(r.ok()) << r.status();
  Node* init = ops::GlobalVariablesInitializer(m.scope);
  ASSERT_TRUE(m.scope.ok());
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.num_virtual_cpus = 2;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *m.scope.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init}).ok());
  Batch b = MakeBatch(7, 0);
  absl::Status s = (*sess)->Run({{m.x, b.x}, {m.labels, b.labels}}, {r->loss}).status();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "replicate/split_")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "evenly divide")) << s;
  // The original single-tower loss still runs on the whole (odd) batch.
  EXPECT_TRUE((*sess)->Run({{m.x, b.x}, {m.labels, b.labels}}, {m.loss}).ok());
}

TEST(ReplicateTest, OneTowerOnOneDeviceMatchesTheOriginalLoss) {
  Mlp m = BuildForward();
  ReplicationOptions o = TowersOn(m, 1);
  o.devices = {"/device:CPU:0"};
  absl::StatusOr<ReplicatedGraph> r = ReplicateTraining(m.scope, o);
  ASSERT_TRUE(r.ok()) << r.status();
  Node* init = ops::GlobalVariablesInitializer(m.scope);
  absl::StatusOr<std::unique_ptr<Session>> sess =
      NewSession(BuiltinSessionConfig(), *m.scope.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init}).ok());
  Batch b = MakeBatch(5, 1);
  auto out = (*sess)->Run({{m.x, b.x}, {m.labels, b.labels}}, {r->loss, m.loss});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ((*out)[0].scalar<float>(), (*out)[1].scalar<float>());
}

TEST(ReplicateTest, TowerOutputsAreComputedPerSlice) {
  Mlp m = BuildForward();
  // The per-example cross-entropy's sum: each tower's copy sums its slice,
  // so the towers' values add up to the whole batch's.
  Output xent_sum = ops::Sum(m.scope.WithOpName("xent_sum"), m.logits, {0, 1});
  ReplicationOptions o = TowersOn(m, 2);
  o.tower_outputs = {xent_sum};
  absl::StatusOr<ReplicatedGraph> r = ReplicateTraining(m.scope, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->tower_outputs.size(), 2u);
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(r->tower_outputs[k].size(), 1u);
    EXPECT_EQ(r->tower_outputs[k][0].node->name(), absl::StrCat("tower_", k, "/xent_sum"));
    EXPECT_EQ(r->tower_outputs[k][0].node->requested_device(), absl::StrCat("/device:CPU:", k + 1));
  }
  Node* init = ops::GlobalVariablesInitializer(m.scope);
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.num_virtual_cpus = 2;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *m.scope.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init}).ok());
  Batch b = MakeBatch(8, 3);
  auto out = (*sess)->Run({{m.x, b.x}, {m.labels, b.labels}},
                          {r->tower_outputs[0][0], r->tower_outputs[1][0], xent_sum});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].scalar<float>() + (*out)[1].scalar<float>(), (*out)[2].scalar<float>(),
              1e-4 * std::abs((*out)[2].scalar<float>()) + 1e-4);
}

TEST(ReplicateTest, ATowerOutputThatIsSharedStateIsRejected) {
  Mlp m = BuildForward();
  ReplicationOptions o = TowersOn(m, 2);
  o.tower_outputs = {m.vars[0]};
  ExpectError(ReplicateTraining(m.scope, o).status(), "tower output");
  o.tower_outputs = {Output()};
  ExpectError(ReplicateTraining(m.scope, o).status(), "a tower output is not set");
}

}  // namespace
}  // namespace sluice
