#include "training/mirrored_strategy.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "runtime/direct_session.h"
#include "training/all_reduce_gradients.h"
#include "gtest/gtest.h"
#include "ops/array_ops.h"
#include "ops/builtins.h"
#include "ops/math_ops.h"
#include "ops/nn_ops.h"
#include "ops/optimizers.h"
#include "ops/state_ops.h"
#include "runtime/session.h"

namespace sluice {
namespace {

constexpr int64_t kIn = 4;
constexpr int64_t kOut = 3;
constexpr int kBatch = 12;  // divides between 2 and 3 replicas
constexpr int kSteps = 5;
constexpr double kLearningRate = 0.1;

std::string Cpu(int i) { return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", i); }

std::vector<std::string> Cpus(int k) {
  std::vector<std::string> out;
  for (int i = 0; i < k; ++i) out.push_back(Cpu(i));
  return out;
}

// Deterministic values in about [-0.5, 0.5], plus `shift`.
Output InitConst(const Scope& s, const TensorShape& shape, int salt, float shift) {
  std::vector<float> v;
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    v.push_back(0.5f * std::sin(salt * 13.0f + i) + shift);
  }
  return ops::Const(s, v, shape);
}

// A two-layer regression net; each call (replica) starts from different
// values, shifted by 0.25 per call, so only the init's copy makes them equal.
ReplicaFn MakeNet(int64_t hidden, int* calls) {
  return [hidden, calls](const Scope& s,
                         const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {
    const float shift = calls == nullptr ? 0.0f : 0.25f * static_cast<float>((*calls)++);
    ops::VariableAndInit w1 =
        ops::VariableWithInit(s.WithOpName("w1"), InitConst(s, {kIn, hidden}, 1, shift));
    ops::VariableAndInit b1 =
        ops::VariableWithInit(s.WithOpName("b1"), InitConst(s, {hidden}, 2, shift));
    ops::VariableAndInit w2 =
        ops::VariableWithInit(s.WithOpName("w2"), InitConst(s, {hidden, kOut}, 3, shift));
    ops::VariableAndInit b2 =
        ops::VariableWithInit(s.WithOpName("b2"), InitConst(s, {kOut}, 4, shift));
    Output h = ops::Relu(s, ops::BiasAdd(s, ops::MatMul(s, in[0], w1.var), b1.var));
    Output out = ops::BiasAdd(s, ops::MatMul(s, h, w2.var), b2.var);
    Output err = ops::Sub(s, out, in[1]);
    Output loss = ops::Mean(s, ops::Square(s, err), {0, 1});
    Output mae = ops::Mean(s, ops::Abs(s, err), {0, 1});
    if (!s.ok()) return s.status();
    return ReplicaModel{loss, {w1.var, b1.var, w2.var, b2.var}, {mae}};
  };
}

struct Data {
  Tensor x;
  Tensor y;
};

Data StepData(int step) {
  Data d{Tensor(DT_FLOAT, TensorShape({kBatch, kIn})),
         Tensor(DT_FLOAT, TensorShape({kBatch, kOut}))};
  auto x = d.x.flat<float>();
  auto y = d.y.flat<float>();
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * i + step);
  for (size_t i = 0; i < y.size(); ++i) y[i] = std::cos(0.3f * i + 2.0f * step);
  return d;
}

SessionOptions Options() {
  SessionOptions o = BuiltinSessionOptions();
  o.num_virtual_cpus = 3;
  o.virtual_cpu_threads = 1;
  return o;
}

float MaxAbsDiff(const Tensor& a, const Tensor& b) {
  auto fa = a.flat<float>();
  auto fb = b.flat<float>();
  EXPECT_EQ(fa.size(), fb.size());
  float d = 0;
  for (size_t i = 0; i < std::min(fa.size(), fb.size()); ++i)
    d = std::max(d, std::fabs(fa[i] - fb[i]));
  return d;
}

int CountOps(const Graph& g, absl::string_view op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

// The single-device reference: the net trained on the whole batch.
std::vector<Tensor> TrainSingle(int64_t hidden) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1, kIn}});
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, {.shape = {-1, kOut}});
  absl::StatusOr<ReplicaModel> m = MakeNet(hidden, nullptr)(s.WithDevice(Cpu(0)), {x, y});
  EXPECT_TRUE(m.ok()) << m.status();
  GradientDescentOptimizer sgd(kLearningRate);
  absl::StatusOr<Node*> train = sgd.Minimize(s, m->loss, m->variables);
  EXPECT_TRUE(train.ok()) << train.status();
  Node* init = ops::GlobalVariablesInitializer(s);
  EXPECT_TRUE(s.ok()) << s.status();
  auto sess = NewSession(Options(), *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  EXPECT_TRUE((*sess)->Run({}, {}, {init}).ok());
  for (int step = 0; step < kSteps; ++step) {
    Data d = StepData(step);
    auto out = (*sess)->Run({{x, d.x}, {y, d.y}}, {}, {*train});
    EXPECT_TRUE(out.ok()) << out.status();
  }
  auto vars = (*sess)->Run({}, m->variables);
  EXPECT_TRUE(vars.ok()) << vars.status();
  return *vars;
}

struct MirroredResult {
  std::vector<std::vector<Tensor>> vars;  // [replica][variable]
  std::vector<std::vector<Tensor>> initial;
  int reduce_nodes = 0;
  float last_loss = 0;
};

MirroredResult TrainMirrored(int k, int64_t bucket_bytes, int64_t hidden) {
  MirroredResult result;
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1, kIn}});
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, {.shape = {-1, kOut}});
  int calls = 0;
  GradientDescentOptimizer sgd(kLearningRate);
  MirroredOptions opts;
  opts.devices = Cpus(k);
  opts.all_reduce.bucket_bytes = bucket_bytes;
  opts.all_reduce.timeout_seconds = 20;
  absl::StatusOr<MirroredModel> mm = BuildMirrored(s, {x, y}, MakeNet(hidden, &calls), &sgd, opts);
  EXPECT_TRUE(mm.ok()) << mm.status();
  if (!mm.ok()) return result;
  EXPECT_EQ(calls, k);
  EXPECT_EQ(mm->replicas.size(), static_cast<size_t>(k));
  EXPECT_TRUE(absl::StartsWith(mm->replicas[k - 1].variables[0].node->name(),
                               absl::StrCat("replica_", k - 1, "/")));
  EXPECT_EQ(mm->replicas[k - 1].variables[0].node->requested_device(), Cpu(k - 1));
  result.reduce_nodes = CountOps(*s.graph(), "CollectiveReduce");
  auto sess = NewSession(Options(), *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  if (!sess.ok()) return result;
  auto fetch_vars = [&](std::vector<std::vector<Tensor>>* out) {
    for (const ReplicaModel& r : mm->replicas) {
      auto v = (*sess)->Run({}, r.variables);
      EXPECT_TRUE(v.ok()) << v.status();
      if (v.ok()) out->push_back(*v);
    }
  };
  absl::Status init = (*sess)->Run({}, {}, {mm->init}).status();
  EXPECT_TRUE(init.ok()) << init;
  fetch_vars(&result.initial);
  for (int step = 0; step < kSteps; ++step) {
    Data d = StepData(step);
    auto out = (*sess)->Run({{x, d.x}, {y, d.y}}, {mm->loss, mm->metrics[0]}, {mm->train});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return result;
    result.last_loss = out->at(0).scalar<float>();
  }
  fetch_vars(&result.vars);
  return result;
}

TEST(MirroredStrategyTest, EqualsOneDeviceOnTheCombinedBatch) {
  const std::vector<Tensor> single = TrainSingle(8);
  for (int k : {2, 3}) {
    MirroredResult m = TrainMirrored(k, 4 << 20, 8);
    ASSERT_EQ(m.vars.size(), static_cast<size_t>(k)) << k << " replicas";
    for (int r = 0; r < k; ++r) {
      for (size_t v = 0; v < single.size(); ++v) {
        EXPECT_LT(MaxAbsDiff(m.vars[r][v], single[v]), 1e-5f)
            << k << " replicas, replica " << r << ", variable " << v;
      }
    }
    EXPECT_TRUE(std::isfinite(m.last_loss));
  }
}

TEST(MirroredStrategyTest, InitCopiesReplicaZeroAndReplicasStayEqual) {
  MirroredResult m = TrainMirrored(3, 1024, 8);
  ASSERT_EQ(m.initial.size(), 3u);
  ASSERT_EQ(m.vars.size(), 3u);
  for (int r = 1; r < 3; ++r) {
    for (size_t v = 0; v < m.vars[0].size(); ++v) {
      // Replica r's own initializer would have shifted it by 0.25 * r.
      EXPECT_EQ(MaxAbsDiff(m.initial[r][v], m.initial[0][v]), 0.0f) << r << " " << v;
      EXPECT_EQ(MaxAbsDiff(m.vars[r][v], m.vars[0][v]), 0.0f) << r << " " << v;
    }
  }
  // Training moved them.
  EXPECT_GT(MaxAbsDiff(m.vars[0][0], m.initial[0][0]), 0.0f);
}

TEST(MirroredStrategyTest, BucketSizeChangesTheReduceCountNotTheResult) {
  // hidden 64: w1 [4,64] 1024 B, b1 [64] 256 B, w2 [64,3] 768 B, b2 [3] 12 B.
  // Backward order b2, w2, b1, w1. 1 KiB buckets: {b2, w2}, {b1}, {w1}
  // (w1 alone: not smaller than a bucket); no fusion: 4; 64 MiB: 1.
  struct Case {
    int64_t bucket_bytes;
    int buckets;
  };
  std::vector<MirroredResult> results;
  for (Case c : {Case{0, 4}, Case{1024, 3}, Case{64 << 20, 1}}) {
    results.push_back(TrainMirrored(2, c.bucket_bytes, 64));
    EXPECT_EQ(results.back().reduce_nodes, 2 * c.buckets) << "bucket_bytes " << c.bucket_bytes;
  }
  for (size_t i = 1; i < results.size(); ++i) {
    ASSERT_EQ(results[i].vars.size(), 2u);
    for (size_t v = 0; v < results[0].vars[0].size(); ++v) {
      EXPECT_EQ(MaxAbsDiff(results[i].vars[0][v], results[0].vars[0][v]), 0.0f) << i << " " << v;
    }
  }
}

TEST(MirroredStrategyTest, Errors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {10, kIn}});
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, {.shape = {10, kOut}});
  GradientDescentOptimizer sgd(kLearningRate);
  MirroredOptions opts;
  opts.devices = Cpus(3);
  absl::StatusOr<MirroredModel> mm = BuildMirrored(s, {x, y}, MakeNet(8, nullptr), &sgd, opts);
  ASSERT_FALSE(mm.ok());
  EXPECT_EQ(mm.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(mm.status().message(), "not a multiple of 3")) << mm.status();

  opts.devices.clear();
  mm = BuildMirrored(s, {x, y}, MakeNet(8, nullptr), &sgd, opts);
  ASSERT_FALSE(mm.ok());
  EXPECT_EQ(mm.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(mm.status().message(), "no devices")) << mm.status();

  opts.devices = Cpus(2);
  int calls = 0;
  ReplicaFn failing = [&](const Scope& rs,
                          const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {
    if (calls++ == 1) return absl::InvalidArgumentError("bad layer");
    return MakeNet(8, nullptr)(rs, in);
  };
  mm = BuildMirrored(s, {x, y}, failing, &sgd, opts);
  ASSERT_FALSE(mm.ok());
  EXPECT_TRUE(absl::StrContains(mm.status().message(), "replica 1")) << mm.status();

  // Replicas whose gradients disagree in shape.
  Output a = ops::Const(s, std::vector<float>{1, 2}, TensorShape({2}));
  Output b = ops::Const(s, std::vector<float>{1, 2, 3}, TensorShape({3}));
  auto reduced = AllReduceGradients(s, {{a}, {b}}, Cpus(2), AllReduceOptions());
  ASSERT_FALSE(reduced.ok());
  EXPECT_EQ(reduced.status().code(), absl::StatusCode::kInvalidArgument);
  reduced = AllReduceGradients(s, {{a}, {a}}, Cpus(3), AllReduceOptions());
  EXPECT_FALSE(reduced.ok());

  MultiWorkerOptions w;
  w.worker_devices = Cpus(2);
  w.worker_index = 2;
  auto mw = BuildMultiWorkerMirrored(s, {x, y}, MakeNet(8, nullptr), &sgd, w);
  ASSERT_FALSE(mw.ok());
  EXPECT_TRUE(absl::StrContains(mw.status().message(), "worker_index 2")) << mw.status();
}

TEST(MultiWorkerMirroredTest, GroupOfOneTrainsLikeOneDevice) {
  const std::vector<Tensor> single = TrainSingle(8);
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1, kIn}});
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, {.shape = {-1, kOut}});
  GradientDescentOptimizer sgd(kLearningRate);
  MultiWorkerOptions w;
  w.worker_devices = {Cpu(0)};
  w.generation = 2;
  w.all_reduce.timeout_seconds = 20;
  auto mw = BuildMultiWorkerMirrored(s, {x, y}, MakeNet(8, nullptr), &sgd, w);
  ASSERT_TRUE(mw.ok()) << mw.status();
  ASSERT_NE(mw->sync_init, nullptr);
  EXPECT_EQ(mw->replica.variables[0].node->requested_device(), Cpu(0));
  int group_key = 0;
  for (const Node* n : s.graph()->nodes()) {
    if (n->op() == "CollectiveReduce") group_key = n->GetAttr<int64_t>("group_key").value();
  }
  EXPECT_EQ(group_key, 100 + 2 * 1000);
  auto sess = NewSession(Options(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {mw->init}).ok());
  absl::Status sync = (*sess)->Run({}, {}, {mw->sync_init}).status();
  ASSERT_TRUE(sync.ok()) << sync;
  for (int step = 0; step < kSteps; ++step) {
    Data d = StepData(step);
    auto out = (*sess)->Run({{x, d.x}, {y, d.y}}, {mw->loss, mw->metrics[0]}, {mw->train});
    ASSERT_TRUE(out.ok()) << out.status();
  }
  auto vars = (*sess)->Run({}, mw->replica.variables);
  ASSERT_TRUE(vars.ok()) << vars.status();
  for (size_t v = 0; v < single.size(); ++v) {
    EXPECT_LT(MaxAbsDiff((*vars)[v], single[v]), 1e-5f) << "variable " << v;
  }
  auto step = (*sess)->Run({}, {mw->global_step});
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->at(0).scalar<int64_t>(), kSteps);
}

}  // namespace
}  // namespace sluice
