#include "training/mirrored_strategy.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "session/direct_session.h"
#include "training/all_reduce_gradients.h"
#include "training/strategy_testutil.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/training/optimizers.h"
#include "ops/state/state_ops.h"
#include "runtime/session.h"

namespace sluice {
namespace {

using strategy_testing::Cpu;
using strategy_testing::Cpus;
using strategy_testing::Data;
using strategy_testing::kBatch;
using strategy_testing::kIn;
using strategy_testing::kLearningRate;
using strategy_testing::kOut;
using strategy_testing::kSteps;
using strategy_testing::MakeNet;
using strategy_testing::MaxAbsDiff;
using strategy_testing::StepData;

SessionConfig Options() { return strategy_testing::ThreeCpuOptions(); }

int CountOps(const Graph& g, absl::string_view op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
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
  const std::vector<Tensor> single =
      strategy_testing::TrainOnOneDevice(8, strategy_testing::NewSgd);
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

// An embedding table trained mirrored: each replica's sparse gradient is
// all-gathered (values and indices, CollectiveGather), never made dense, and
// the replicas end equal to one device on the combined batch.
TEST(MirroredStrategyTest, SparseGradientsAreGatheredNotReduced) {
  constexpr int kTableRows = 20;
  const std::vector<int32_t> ids = {3, 7, 3, 11, 19, 7};  // 3 per replica
  auto embedding_net = [&](const Scope& s, const std::vector<Output>& in)
      -> absl::StatusOr<ReplicaModel> {
    ::tensorflow::TensorProto init;
    init.set_dtype(DT_FLOAT);
    init.mutable_tensor_shape()->add_dim()->set_size(kTableRows);
    init.mutable_tensor_shape()->add_dim()->set_size(2);
    for (int i = 0; i < kTableRows * 2; ++i) init.add_float_val(0.1f * i - 1.0f);
    ops::VariableAndInit table = ops::VariableWithInit(s.WithOpName("table"), Input(init));
    Output rows = ops::GatherV2(s, table.var, in[0], int32_t{0});
    Output per_example = ops::Mul(s, ops::Sum(s, ops::Square(s, rows), {1}), 0.5f);
    ReplicaModel m;
    m.loss = ops::Mean(s, per_example, {0});
    m.variables = {table.var};
    return m;
  };
  std::vector<float> result[2];
  for (int k : {1, 2}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = ops::Placeholder(s.WithOpName("ids"), DT_INT32, {.shape = {-1}});
    GradientDescentOptimizer sgd(0.5);
    MirroredOptions opts;
    opts.devices = Cpus(k);
    opts.all_reduce.timeout_seconds = 20;
    absl::StatusOr<MirroredModel> mm = BuildMirrored(s, {x}, embedding_net, &sgd, opts);
    ASSERT_TRUE(mm.ok()) << mm.status();
    if (k == 2) {
      EXPECT_EQ(CountOps(*s.graph(), "CollectiveGather"), 4);  // values, indices per replica
      EXPECT_EQ(CountOps(*s.graph(), "CollectiveReduce"), 0);
      for (const Node* n : s.graph()->nodes()) {
        EXPECT_FALSE(absl::StrContains(n->name(), "IndexedSlicesToDense")) << n->name();
      }
    }
    auto sess = NewSession(Options(), *s.graph());
    ASSERT_TRUE(sess.ok()) << sess.status();
    ASSERT_TRUE((*sess)->Run({}, {}, {mm->init}).ok());
    for (int step = 0; step < 3; ++step) {
      absl::Status st =
          (*sess)->Run({{x, Tensor::FromVector<int32_t>(ids)}}, {}, {mm->train}).status();
      ASSERT_TRUE(st.ok()) << st;
    }
    std::vector<std::vector<float>> tables;
    for (const ReplicaModel& r : mm->replicas) {
      auto v = (*sess)->Run({}, r.variables);
      ASSERT_TRUE(v.ok()) << v.status();
      absl::Span<const float> f = (*v)[0].flat<float>();
      tables.emplace_back(f.begin(), f.end());
    }
    for (size_t r = 1; r < tables.size(); ++r) EXPECT_EQ(tables[r], tables[0]);
    result[k - 1] = tables[0];
  }
  ASSERT_EQ(result[0].size(), result[1].size());
  for (size_t i = 0; i < result[0].size(); ++i) EXPECT_NEAR(result[1][i], result[0][i], 1e-6) << i;
  EXPECT_NE(result[0][3 * 2], 0.1f * 6 - 1.0f);  // row 3 moved
  EXPECT_EQ(result[0][0], -1.0f);                // row 0 did not
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
  const std::vector<Tensor> single =
      strategy_testing::TrainOnOneDevice(8, strategy_testing::NewSgd);
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
