#include "training/sync_replicas.h"

#include <atomic>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "builtin_session.h"
#include "session/direct_session.h"
#include "training/replica_device_setter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/data_flow/data_flow_ops.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"
#include "runtime/session.h"

namespace sluice {
namespace {

constexpr int kRows = 4;  // examples per worker batch
constexpr double kLearningRate = 0.1;

struct Batch {
  std::vector<float> x;  // [rows, 3]
  std::vector<float> y;  // [rows, 1]
  int rows = 0;
};

Batch WorkerBatch(int worker) {
  Batch b;
  b.rows = kRows;
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < 3; ++c) b.x.push_back(std::sin(1.0f + worker * 7 + r * 3 + c));
    b.y.push_back(std::cos(2.0f + worker * 5 + r));
  }
  return b;
}

Batch Concat(const std::vector<Batch>& parts) {
  Batch out;
  for (const Batch& p : parts) {
    out.x.insert(out.x.end(), p.x.begin(), p.x.end());
    out.y.insert(out.y.end(), p.y.begin(), p.y.end());
    out.rows += p.rows;
  }
  return out;
}

// Linear regression: loss = mean((x w + b - y)^2) over the batch.
struct Linear {
  explicit Linear(const Scope& s) {
    x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1, 3}});
    y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, {.shape = {-1, 1}});
    ::tensorflow::TensorProto w_init;
    w_init.set_dtype(DT_FLOAT);
    w_init.mutable_tensor_shape()->add_dim()->set_size(3);
    w_init.mutable_tensor_shape()->add_dim()->set_size(1);
    for (float v : {0.5f, -0.25f, 1.0f}) w_init.add_float_val(v);
    w = ops::VariableWithInit(s.WithOpName("w"), Input(std::move(w_init)));
    b = ops::VariableWithInit(s.WithOpName("b"), {0.1f});
    Output pred = ops::Add(s, ops::MatMul(s, x, w.var), b.var);
    loss = ops::Mean(s.WithOpName("loss"), ops::Square(s, ops::Sub(s, pred, y)), {0, 1});
  }
  std::vector<std::pair<Output, Tensor>> Feeds(const Batch& batch) const {
    return {{x, Tensor::FromVector<float>(batch.x, TensorShape({batch.rows, 3}))},
            {y, Tensor::FromVector<float>(batch.y, TensorShape({batch.rows, 1}))}};
  }
  Output x, y, loss;
  ops::VariableAndInit w, b;
};

std::vector<float> ReadVars(Session* sess, const Linear& m) {
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {m.w.var, m.b.var}, {});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  std::vector<float> v;
  for (const Tensor& t : *out) {
    for (float f : t.flat<float>()) v.push_back(f);
  }
  return v;
}

// Plain gradient descent, one step per batch.
std::vector<float> Reference(const std::vector<Batch>& steps) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Linear m(s);
  GradientDescentOptimizer sgd(kLearningRate);
  absl::StatusOr<Node*> train = sgd.Minimize(s, m.loss, {m.w.var, m.b.var});
  EXPECT_TRUE(train.ok()) << train.status();
  Node* init = ops::GlobalVariablesInitializer(s);
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  if (!train.ok() || !sess.ok()) return {};
  EXPECT_TRUE((*sess)->Run({}, {}, {init}).ok());
  for (const Batch& b : steps) EXPECT_TRUE((*sess)->Run(m.Feeds(b), {}, {*train}).ok());
  return ReadVars(sess->get(), m);
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 * std::max(1.0f, std::fabs(want[i]))) << "element " << i;
  }
}

// The synchronous-training graph of one task, and a session over it.
struct SyncModel {
  SyncModel(const SyncReplicasOptions& options, bool place_with_setter = false)
      : s(Scope::NewRootScope(BuiltinOps())), m(s), gs(CreateGlobalStep(s)), sgd(kLearningRate) {
    absl::StatusOr<std::vector<GradAndVar>> gv =
        sgd.ComputeGradients(s, m.loss, {m.w.var, m.b.var});
    EXPECT_TRUE(gv.ok()) << gv.status();
    if (!gv.ok()) return;
    absl::StatusOr<SyncReplicas> built = BuildSyncReplicas(s, &sgd, *gv, gs.ref, options);
    EXPECT_TRUE(built.ok()) << built.status();
    if (!built.ok()) return;
    sync = *built;
    init = ops::GlobalVariablesInitializer(s);
    // Documented accumulator naming: "<var>/grad_accum", colocated with var.
    restore_step = ops::Assign(s.WithOpName("probe/restore_step"), gs.ref, int64_t{10});
    stale_w = ops::AccumulatorNumStale(
        s.ColocateWith(m.w.var).WithOpName("probe/stale_w"),
        {.dtype = DT_FLOAT, .shape = {3, 1}, .shared_name = "w/grad_accum"});
    SessionConfig so = BuiltinSessionConfig();
    if (place_with_setter) {
      // Variables on CPU:0 as the "ps", compute on CPU:1 as the worker.
      so.devices.num_virtual_cpus = 1;
      ReplicaDeviceSetterOptions ro;
      ro.num_ps_tasks = 1;
      ro.ps_job = "localhost";
      ro.worker_device = "/job:localhost/replica:0/task:0/device:CPU:1";
      absl::StatusOr<std::map<std::string, std::string>> where =
          ApplyReplicaDeviceSetter(s.graph(), ro);
      EXPECT_TRUE(where.ok()) << where.status();
      for (Node* n : s.graph()->nodes()) {
        if (n->requested_device() == "/job:localhost/task:0") {
          n->set_requested_device("/job:localhost/task:0/device:CPU:0");
        }
      }
    }
    EXPECT_TRUE(s.ok()) << s.status();
    absl::StatusOr<std::unique_ptr<Session>> made = NewSession(so, *s.graph());
    EXPECT_TRUE(made.ok()) << made.status();
    if (made.ok()) sess = std::move(*made);
  }

  // The chief's start: init, accumulators at global_step, first tokens.
  void Start() {
    ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
    ASSERT_TRUE(sess->Run({}, {}, {sync.set_global_step}).ok());
    ASSERT_TRUE(sess->Run({}, {}, {sync.init_tokens}).ok());
  }
  absl::StatusOr<int64_t> Token() {
    absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {sync.token}, {});
    if (!out.ok()) return out.status();
    return (*out)[0].scalar<int64_t>();
  }
  absl::Status Apply(int64_t step, const Batch& batch) {
    std::vector<std::pair<Output, Tensor>> feeds = m.Feeds(batch);
    feeds.emplace_back(sync.local_step, Tensor::Scalar<int64_t>(step));
    return sess->Run(feeds, {}, {sync.apply_gradients}).status();
  }
  // One run a step: this step's gradients in, the next step's token out.
  absl::StatusOr<int64_t> ApplyAndNext(int64_t step, const Batch& batch) {
    std::vector<std::pair<Output, Tensor>> feeds = m.Feeds(batch);
    feeds.emplace_back(sync.local_step, Tensor::Scalar<int64_t>(step));
    absl::StatusOr<std::vector<Tensor>> out =
        sess->Run(feeds, {sync.next_token}, {sync.apply_gradients});
    if (!out.ok()) return out.status();
    return (*out)[0].scalar<int64_t>();
  }
  int64_t ReadGlobalStep() {
    absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {gs.ref}, {});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0].scalar<int64_t>() : -1;
  }

  Scope s;
  Linear m;
  GlobalStep gs;
  GradientDescentOptimizer sgd;
  SyncReplicas sync;
  Node* init = nullptr;
  Output stale_w;       // stale gradients dropped by w's accumulator
  Output restore_step;  // global_step = 10, as a restore would
  std::unique_ptr<Session> sess;
};

class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void Wait() {
    absl::MutexLock lock(&mu_);
    const int64_t gen = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      return;
    }
    mu_.Await(absl::Condition(
        +[](std::pair<Barrier*, int64_t>* a) { return a->first->generation_ != a->second; },
        new std::pair<Barrier*, int64_t>(this, gen)));
  }

 private:
  absl::Mutex mu_;
  const int n_;
  int arrived_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
};

class SyncReplicasEquivalenceTest : public testing::TestWithParam<bool> {};

// N workers in lock step (a barrier per step, as workers of equal speed):
// after K steps the variables equal plain gradient descent on the N batches
// concatenated.
TEST_P(SyncReplicasEquivalenceTest, MatchesGradientDescentOnConcatenatedBatch) {
  constexpr int kWorkers = 3;
  constexpr int kSteps = 5;
  SyncModel sm(
      {.replicas_to_aggregate = kWorkers, .total_num_replicas = kWorkers, .take_timeout_ms = 10000},
      /*place_with_setter=*/GetParam());
  ASSERT_NE(sm.sess, nullptr);
  sm.Start();
  std::thread chief([&] {
    for (int i = 0; i < kSteps; ++i) {
      absl::Status st = sm.sess->Run({}, {}, {sm.sync.chief_update}).status();
      ASSERT_TRUE(st.ok()) << st;
    }
  });
  Barrier barrier(kWorkers);
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      const Batch batch = WorkerBatch(w);
      for (int i = 0; i < kSteps; ++i) {
        barrier.Wait();
        absl::StatusOr<int64_t> step = sm.Token();
        ASSERT_TRUE(step.ok()) << step.status();
        EXPECT_EQ(*step, i);
        absl::Status st = sm.Apply(*step, batch);
        ASSERT_TRUE(st.ok()) << st;
      }
    });
  }
  for (std::thread& t : workers) t.join();
  chief.join();
  EXPECT_EQ(sm.ReadGlobalStep(), kSteps);
  if (GetParam()) {
    // The worker's step really spans the "ps" (CPU:0) and the worker (CPU:1);
    // this late gradient is stale and changes nothing.
    RunOptions ro;
    ro.output_partition_graphs = true;
    RunMetadata md;
    std::vector<std::pair<Output, Tensor>> feeds = sm.m.Feeds(WorkerBatch(0));
    feeds.emplace_back(sm.sync.local_step, Tensor::Scalar<int64_t>(0));
    ASSERT_TRUE(sm.sess->Run(feeds, {}, {sm.sync.apply_gradients}, ro, &md).ok());
    EXPECT_EQ(md.partition_graphs.size(), 2u);
  }
  const Batch all = Concat({WorkerBatch(0), WorkerBatch(1), WorkerBatch(2)});
  ExpectClose(ReadVars(sm.sess.get(), sm.m), Reference(std::vector<Batch>(kSteps, all)));
}

// The same with one run a step (next_token fetched with apply_gradients):
// each token comes after the chief's update of the step before.
TEST_P(SyncReplicasEquivalenceTest, OneRunAStepWithNextToken) {
  constexpr int kWorkers = 3;
  constexpr int kSteps = 5;
  SyncModel sm(
      {.replicas_to_aggregate = kWorkers, .total_num_replicas = kWorkers, .take_timeout_ms = 10000},
      /*place_with_setter=*/GetParam());
  ASSERT_NE(sm.sess, nullptr);
  sm.Start();
  std::thread chief([&] {
    for (int i = 0; i < kSteps; ++i) {
      absl::Status st = sm.sess->Run({}, {}, {sm.sync.chief_update}).status();
      ASSERT_TRUE(st.ok()) << st;
    }
  });
  Barrier barrier(kWorkers);
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      const Batch batch = WorkerBatch(w);
      absl::StatusOr<int64_t> step = sm.Token();
      ASSERT_TRUE(step.ok()) << step.status();
      for (int i = 0; i < kSteps; ++i) {
        barrier.Wait();
        EXPECT_EQ(*step, i);
        step = sm.ApplyAndNext(*step, batch);
        ASSERT_TRUE(step.ok()) << step.status();
        EXPECT_EQ(*step, i + 1);
      }
    });
  }
  for (std::thread& t : workers) t.join();
  chief.join();
  EXPECT_EQ(sm.ReadGlobalStep(), kSteps);
  const Batch all = Concat({WorkerBatch(0), WorkerBatch(1), WorkerBatch(2)});
  ExpectClose(ReadVars(sm.sess.get(), sm.m), Reference(std::vector<Batch>(kSteps, all)));
}

INSTANTIATE_TEST_SUITE_P(LocalAndPlaced, SyncReplicasEquivalenceTest, testing::Bool());

// A next_token that times out fails the run after the worker's gradient
// went in: the step still completes once the other worker contributes, and
// the first worker takes its next token with `token`.
TEST(SyncReplicasTest, NextTokenTimeoutKeepsTheContribution) {
  // Replica 0's graph (its own token queue); replica 1 only applies.
  SyncModel sm({.replicas_to_aggregate = 2,
                .total_num_replicas = 2,
                .take_timeout_ms = 300,
                .replica_index = 0});
  ASSERT_NE(sm.sess, nullptr);
  sm.Start();
  absl::StatusOr<int64_t> first = sm.Token();
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<int64_t> next = sm.ApplyAndNext(*first, WorkerBatch(0));
  ASSERT_EQ(next.status().code(), absl::StatusCode::kDeadlineExceeded) << next.status();
  EXPECT_THAT(std::string(next.status().message()), testing::HasSubstr("next_token"));
  ASSERT_TRUE(sm.Apply(*first, WorkerBatch(1)).ok());
  // Both gradients are in: the chief's take does not wait.
  ASSERT_TRUE(sm.sess->Run({}, {}, {sm.sync.chief_update}).ok());
  EXPECT_EQ(sm.ReadGlobalStep(), 1);
  absl::StatusOr<int64_t> after = sm.Token();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(*after, 1);
  ExpectClose(ReadVars(sm.sess.get(), sm.m),
              Reference({Concat({WorkerBatch(0), WorkerBatch(1)})}));
}

// 2 of 3 replicas per step: the third worker's gradient arrives after the
// step moved on and is dropped as stale.
TEST(SyncReplicasTest, BackupWorkerGradientIsDropped) {
  SyncModel sm({.replicas_to_aggregate = 2, .total_num_replicas = 3, .take_timeout_ms = 10000});
  ASSERT_NE(sm.sess, nullptr);
  sm.Start();
  const Batch b0 = WorkerBatch(0), b1 = WorkerBatch(1), b2 = WorkerBatch(2);

  // Step 0: workers 0 and 1 are in time.
  std::thread chief([&] { EXPECT_TRUE(sm.sess->Run({}, {}, {sm.sync.chief_update}).ok()); });
  for (const Batch* b : {&b0, &b1}) {
    absl::StatusOr<int64_t> step = sm.Token();
    ASSERT_TRUE(step.ok()) << step.status();
    EXPECT_EQ(*step, 0);
    ASSERT_TRUE(sm.Apply(*step, *b).ok());
  }
  chief.join();
  EXPECT_EQ(sm.ReadGlobalStep(), 1);
  // Worker 2 is late: its gradient for step 0 is dropped.
  absl::StatusOr<int64_t> late = sm.Token();
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(*late, 0);
  ASSERT_TRUE(sm.Apply(*late, b2).ok());
  absl::StatusOr<std::vector<Tensor>> n = sm.sess->Run({}, {sm.stale_w}, {});
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ((*n)[0].scalar<int64_t>(), 1);
  ExpectClose(ReadVars(sm.sess.get(), sm.m), Reference({Concat({b0, b1})}));

  // Step 1: workers 2 and 0 take the step's tokens; worker 1 is the backup.
  chief = std::thread([&] { EXPECT_TRUE(sm.sess->Run({}, {}, {sm.sync.chief_update}).ok()); });
  for (const Batch* b : {&b2, &b0}) {
    absl::StatusOr<int64_t> step = sm.Token();
    ASSERT_TRUE(step.ok()) << step.status();
    EXPECT_EQ(*step, 1);
    ASSERT_TRUE(sm.Apply(*step, *b).ok());
  }
  chief.join();
  EXPECT_EQ(sm.ReadGlobalStep(), 2);
  ExpectClose(ReadVars(sm.sess.get(), sm.m), Reference({Concat({b0, b1}), Concat({b2, b0})}));
}

// Workers looping freely (no barrier): every step completes, no one blocks
// forever, and each worker's tokens never go down.
TEST(SyncReplicasTest, FreeRunningWorkersFinish) {
  constexpr int kWorkers = 3;
  constexpr int kSteps = 8;
  SyncModel sm({.replicas_to_aggregate = kWorkers,
                .total_num_replicas = kWorkers,
                .take_timeout_ms = 10000});
  ASSERT_NE(sm.sess, nullptr);
  sm.Start();
  std::thread chief([&] {
    for (int i = 0; i < kSteps; ++i) {
      absl::Status st = sm.sess->Run({}, {}, {sm.sync.chief_update}).status();
      ASSERT_TRUE(st.ok()) << st;
    }
  });
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      const Batch batch = WorkerBatch(w);
      int64_t last = -1;
      while (true) {
        absl::StatusOr<int64_t> step = sm.Token();
        ASSERT_TRUE(step.ok()) << step.status();
        EXPECT_GE(*step, last);
        last = *step;
        if (*step >= kSteps) break;
        ASSERT_TRUE(sm.Apply(*step, batch).ok());
      }
    });
  }
  for (std::thread& t : workers) t.join();
  chief.join();
  EXPECT_EQ(sm.ReadGlobalStep(), kSteps);
}

// After a restore the chief moves the accumulators to the restored step;
// workers start from it.
TEST(SyncReplicasTest, StartsFromRestoredGlobalStep) {
  SyncModel sm({.replicas_to_aggregate = 1, .total_num_replicas = 1, .take_timeout_ms = 10000});
  ASSERT_NE(sm.sess, nullptr);
  ASSERT_TRUE(sm.sess->Run({}, {}, {sm.init}).ok());
  // A restore assigns global_step (here: 10).
  ASSERT_TRUE(sm.Apply(0, WorkerBatch(0)).ok());  // a gradient for step 0 before the restore
  Output restored = sm.restore_step;
  ASSERT_TRUE(sm.sess->Run({}, {restored}, {}).ok());
  ASSERT_TRUE(sm.sess->Run({}, {}, {sm.sync.set_global_step}).ok());
  ASSERT_TRUE(sm.sess->Run({}, {}, {sm.sync.init_tokens}).ok());
  absl::StatusOr<int64_t> step = sm.Token();
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(*step, 10);
  absl::StatusOr<std::vector<Tensor>> stale = sm.sess->Run({}, {sm.stale_w}, {});
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ((*stale)[0].scalar<int64_t>(), 1);  // the pre-restore gradient
  ASSERT_TRUE(sm.Apply(*step, WorkerBatch(0)).ok());
  ASSERT_TRUE(sm.sess->Run({}, {}, {sm.sync.chief_update}).ok());
  EXPECT_EQ(sm.ReadGlobalStep(), 11);
  ExpectClose(ReadVars(sm.sess.get(), sm.m), Reference({WorkerBatch(0)}));
}

TEST(SyncReplicasTest, TakeTimeoutFailsTheChiefStep) {
  SyncModel sm({.replicas_to_aggregate = 2, .total_num_replicas = 2, .take_timeout_ms = 50});
  ASSERT_NE(sm.sess, nullptr);
  sm.Start();
  ASSERT_TRUE(sm.Apply(0, WorkerBatch(0)).ok());  // one of two
  absl::Status st = sm.sess->Run({}, {}, {sm.sync.chief_update}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_NE(st.message().find("sync_replicas/take_"), std::string::npos) << st;
  EXPECT_EQ(sm.ReadGlobalStep(), 0);
}

TEST(SyncReplicasTest, BuildErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Linear m(s);
  GlobalStep gs = CreateGlobalStep(s);
  GradientDescentOptimizer sgd(kLearningRate);
  absl::StatusOr<std::vector<GradAndVar>> gv = sgd.ComputeGradients(s, m.loss, {m.w.var, m.b.var});
  ASSERT_TRUE(gv.ok()) << gv.status();
  EXPECT_EQ(BuildSyncReplicas(s, &sgd, *gv, gs.ref, {.replicas_to_aggregate = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildSyncReplicas(s, &sgd, *gv, m.w.var, {}).status().code(),
            absl::StatusCode::kInvalidArgument);  // a float "global step"
  EXPECT_EQ(BuildSyncReplicas(s, &sgd, {{Output(), m.w.var}}, gs.ref, {}).status().code(),
            absl::StatusCode::kInvalidArgument);  // no gradient
  EXPECT_EQ(BuildSyncReplicas(s, &sgd, {{m.loss, m.loss}}, gs.ref, {}).status().code(),
            absl::StatusCode::kInvalidArgument);  // not a variable
}


// An embedding table's gradient goes through a sparse accumulator: each
// worker sends only the rows it read, and each row moves by the average of
// the gradients that held it (TensorFlow's SparseConditionalAccumulator).
TEST(SyncReplicasTest, SparseGradientsAreAveragedPerRow) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ::tensorflow::TensorProto init;
  init.set_dtype(DT_FLOAT);
  init.mutable_tensor_shape()->add_dim()->set_size(6);
  init.mutable_tensor_shape()->add_dim()->set_size(2);
  for (int i = 0; i < 12; ++i) init.add_float_val(1.0f + i);
  ops::VariableAndInit table = ops::VariableWithInit(s.WithOpName("table"), Input(init));
  Output ids = ops::Placeholder(s.WithOpName("ids"), DT_INT32, {.shape = {-1}});
  Output rows = ops::GatherV2(s, table.var, ids, int32_t{0});
  Output loss = ops::Mul(s, ops::Sum(s, ops::Square(s, rows), {0, 1}), 0.5f);
  GlobalStep gs = CreateGlobalStep(s);
  GradientDescentOptimizer sgd(0.5);
  absl::StatusOr<std::vector<GradAndVar>> gv = sgd.ComputeGradients(s, loss, {table.var});
  ASSERT_TRUE(gv.ok()) << gv.status();
  ASSERT_TRUE((*gv)[0].sparse_grad.values.valid());
  absl::StatusOr<SyncReplicas> sync = BuildSyncReplicas(
      s, &sgd, *gv, gs.ref,
      {.replicas_to_aggregate = 2, .total_num_replicas = 2, .take_timeout_ms = 10000});
  ASSERT_TRUE(sync.ok()) << sync.status();
  Node* init_all = ops::GlobalVariablesInitializer(s);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init_all}).ok());
  ASSERT_TRUE((*sess)->Run({}, {}, {sync->set_global_step}).ok());
  for (const std::vector<int32_t>& worker_ids : {std::vector<int32_t>{1, 2}, {2, 5, 5}}) {
    absl::Status st = (*sess)
                          ->Run({{ids, Tensor::FromVector<int32_t>(worker_ids)},
                                 {sync->local_step, Tensor::Scalar<int64_t>(0)}},
                                {}, {sync->apply_gradients})
                          .status();
    ASSERT_TRUE(st.ok()) << st;
  }
  ASSERT_TRUE((*sess)->Run({}, {}, {sync->chief_update}).ok());
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {table.var, gs.ref}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].scalar<int64_t>(), 1);
  // d loss / d row = the row, once per read. Row 1: one worker (t); row 2:
  // both (t each: average t); row 5: one worker, read twice (2t).
  std::vector<float> want;
  for (int i = 0; i < 12; ++i) want.push_back(1.0f + i);
  for (int k = 0; k < 2; ++k) {
    want[1 * 2 + k] -= 0.5f * want[1 * 2 + k];
    want[2 * 2 + k] -= 0.5f * want[2 * 2 + k];
    want[5 * 2 + k] -= 0.5f * 2.0f * want[5 * 2 + k];
  }
  absl::Span<const float> got = (*out)[0].flat<float>();
  ExpectClose(std::vector<float>(got.begin(), got.end()), want);
}

}  // namespace
}  // namespace sluice
