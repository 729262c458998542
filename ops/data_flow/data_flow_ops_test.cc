#include "ops/data_flow/data_flow_ops.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

std::unique_ptr<Session> MakeSession(const Scope& s) {
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

// One accumulator of float [2] with the ops of a test around it.
struct AccumulatorGraph {
  explicit AccumulatorGraph(int64_t timeout_ms = 0) : s(Scope::NewRootScope(BuiltinOps())) {
    spec = {.dtype = DT_FLOAT, .shape = {2}, .shared_name = "acc"};
    local_step = ops::Placeholder(s.WithOpName("local_step"), DT_INT64);
    grad = ops::Placeholder(s.WithOpName("grad"), DT_FLOAT);
    num_required = ops::Placeholder(s.WithOpName("num_required"), DT_INT32);
    new_step = ops::Placeholder(s.WithOpName("new_step"), DT_INT64);
    apply = ops::AccumulatorApplyGradient(s.WithOpName("apply"), spec, local_step, grad);
    take = ops::AccumulatorTakeGradient(s.WithOpName("take"), spec, num_required, timeout_ms);
    set_step = ops::AccumulatorSetGlobalStep(s.WithOpName("set_step"), spec, new_step);
    num_accumulated = ops::AccumulatorNumAccumulated(s.WithOpName("num_accumulated"), spec);
    num_stale = ops::AccumulatorNumStale(s.WithOpName("num_stale"), spec);
    sess = MakeSession(s);
  }

  absl::Status Apply(int64_t step, std::vector<float> g) {
    return sess
        ->Run({{local_step, Tensor::Scalar<int64_t>(step)}, {grad, Tensor::FromVector<float>(g)}},
              {}, {apply})
        .status();
  }
  absl::StatusOr<std::vector<float>> Take(int32_t n) {
    absl::StatusOr<std::vector<Tensor>> out =
        sess->Run({{num_required, Tensor::Scalar<int32_t>(n)}}, {take}, {});
    if (!out.ok()) return out.status();
    absl::Span<const float> v = (*out)[0].flat<float>();
    return std::vector<float>(v.begin(), v.end());
  }
  template <typename T>
  T Count(const Output& o) {
    absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {o}, {});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0].scalar<T>() : T{-1};
  }

  Scope s;
  ops::AccumulatorSpec spec;
  Output local_step, grad, num_required, new_step, take, num_accumulated, num_stale;
  Node* apply = nullptr;
  Node* set_step = nullptr;
  std::unique_ptr<Session> sess;
};

TEST(DataFlowOpsTest, ShapesAndTypes) {
  AccumulatorGraph g;
  EXPECT_EQ(g.take.dtype(), DT_FLOAT);
  EXPECT_EQ(g.take.shape(), TensorShape({2}));
  EXPECT_EQ(g.num_accumulated.dtype(), DT_INT32);
  EXPECT_EQ(g.num_stale.dtype(), DT_INT64);
  Output token = ops::SyncTokenDequeue(g.s, {.shared_name = "q"});
  EXPECT_EQ(token.dtype(), DT_INT64);
  EXPECT_EQ(token.shape(), TensorShape());
}

TEST(DataFlowOpsTest, AverageIsExactAndStaleGradientsAreDropped) {
  AccumulatorGraph g;
  ASSERT_TRUE(g.Apply(0, {1, 2}).ok());
  ASSERT_TRUE(g.Apply(0, {3, 4}).ok());
  ASSERT_TRUE(g.Apply(0, {-1, 0.5f}).ok());
  EXPECT_EQ(g.Count<int32_t>(g.num_accumulated), 3);
  absl::StatusOr<std::vector<float>> avg = g.Take(3);
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_EQ(*avg, (std::vector<float>{1.0f, 6.5f / 3.0f}));
  // The global step is now 1: a gradient for step 0 is dropped without error.
  ASSERT_TRUE(g.Apply(0, {100, 100}).ok());
  EXPECT_EQ(g.Count<int32_t>(g.num_accumulated), 0);
  EXPECT_EQ(g.Count<int64_t>(g.num_stale), 1);
  ASSERT_TRUE(g.Apply(1, {2, 2}).ok());
  EXPECT_EQ(g.Count<int32_t>(g.num_accumulated), 1);
}

TEST(DataFlowOpsTest, TakeBlocksUntilOtherThreadsApply) {
  AccumulatorGraph g;
  std::atomic<bool> taken{false};
  absl::StatusOr<std::vector<float>> avg;
  std::thread chief([&] {
    avg = g.Take(2);
    taken = true;
  });
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_FALSE(taken);
  std::thread w1([&] { EXPECT_TRUE(g.Apply(0, {1, 10}).ok()); });
  w1.join();
  absl::SleepFor(absl::Milliseconds(30));
  EXPECT_FALSE(taken);  // one of two
  std::thread w2([&] { EXPECT_TRUE(g.Apply(0, {3, 20}).ok()); });
  w2.join();
  chief.join();
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_EQ(*avg, (std::vector<float>{2, 15}));
}

TEST(DataFlowOpsTest, BackupWorkerGradientIsStaleAfterTheStepMovesOn) {
  AccumulatorGraph g;
  absl::StatusOr<std::vector<float>> avg;
  std::thread chief([&] { avg = g.Take(2); });  // 2 of 3 workers
  ASSERT_TRUE(g.Apply(0, {1, 1}).ok());
  ASSERT_TRUE(g.Apply(0, {3, 5}).ok());
  chief.join();
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_EQ(*avg, (std::vector<float>{2, 3}));
  ASSERT_TRUE(g.Apply(0, {1000, 1000}).ok());  // the late third worker
  EXPECT_EQ(g.Count<int64_t>(g.num_stale), 1);
  EXPECT_EQ(g.Count<int32_t>(g.num_accumulated), 0);
  // Step 1 is unaffected by it.
  ASSERT_TRUE(g.Apply(1, {4, 4}).ok());
  ASSERT_TRUE(g.Apply(1, {0, 2}).ok());
  avg = g.Take(2);
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_EQ(*avg, (std::vector<float>{2, 3}));
}

TEST(DataFlowOpsTest, TakeTimeoutIsDeadlineExceededNamingTheNode) {
  AccumulatorGraph g(/*timeout_ms=*/40);
  ASSERT_TRUE(g.Apply(0, {1, 1}).ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<float>> avg = g.Take(2);
  ASSERT_FALSE(avg.ok());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(40));
  EXPECT_EQ(avg.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(avg.status().message().find("'take'"), std::string::npos) << avg.status();
  // The gradient is still there for the next take.
  EXPECT_EQ(g.Count<int32_t>(g.num_accumulated), 1);
}

TEST(DataFlowOpsTest, NumRequiredMustBePositive) {
  AccumulatorGraph g;
  absl::StatusOr<std::vector<float>> avg = g.Take(0);
  ASSERT_FALSE(avg.ok());
  EXPECT_EQ(avg.status().code(), absl::StatusCode::kInvalidArgument) << avg.status();
}

TEST(DataFlowOpsTest, SetGlobalStep) {
  AccumulatorGraph g;
  ASSERT_TRUE(g.sess->Run({{g.new_step, Tensor::Scalar<int64_t>(5)}}, {}, {g.set_step}).ok());
  ASSERT_TRUE(g.Apply(4, {1, 1}).ok());
  EXPECT_EQ(g.Count<int64_t>(g.num_stale), 1);
  ASSERT_TRUE(g.Apply(5, {1, 1}).ok());
  EXPECT_EQ(g.Count<int32_t>(g.num_accumulated), 1);
}

TEST(DataFlowOpsTest, WrongGradientShapeIsInvalidArgument) {
  AccumulatorGraph g;
  absl::Status s = g.Apply(0, {1, 2, 3});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'apply'"), std::string::npos) << s;
}

TEST(DataFlowOpsTest, OpsDisagreeingOnDtypeFail) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Node* apply = ops::AccumulatorApplyGradient(
      s, {.dtype = DT_FLOAT, .shape = {1}, .shared_name = "acc"}, int64_t{0}, {1.0f});
  Output count =
      ops::AccumulatorNumAccumulated(s, {.dtype = DT_DOUBLE, .shape = {1}, .shared_name = "acc"});
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {apply}).ok());
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {count}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
}

TEST(DataFlowOpsTest, BuildErrors) {
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::AccumulatorNumAccumulated(s, {.dtype = DT_FLOAT});  // no shared_name
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  }
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::AccumulatorApplyGradient(s, {.dtype = DT_FLOAT, .shape = {3}, .shared_name = "a"},
                                  int64_t{0}, {1.0f, 2.0f});
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  }
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::SyncTokenEnqueue(s, {.shared_name = "q"}, int64_t{3});  // not a vector
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  }
}

TEST(DataFlowOpsTest, DequeueBlocksUntilEnqueue) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::SyncTokenQueueSpec q{.shared_name = "tokens"};
  Output tokens = ops::Placeholder(s.WithOpName("tokens"), DT_INT64);
  Node* enqueue = ops::SyncTokenEnqueue(s.WithOpName("enqueue"), q, tokens);
  Output dequeue = ops::SyncTokenDequeue(s.WithOpName("dequeue"), q);
  std::unique_ptr<Session> sess = MakeSession(s);
  std::vector<int64_t> got(2, -1);
  std::atomic<int> done{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 2; ++i) {
    workers.emplace_back([&, i] {
      absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {dequeue}, {});
      EXPECT_TRUE(out.ok()) << out.status();
      if (out.ok()) got[i] = (*out)[0].scalar<int64_t>();
      ++done;
    });
  }
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(done, 0);
  ASSERT_TRUE(sess->Run({{tokens, Tensor::FromVector<int64_t>({7, 7, 8})}}, {}, {enqueue}).ok());
  for (std::thread& t : workers) t.join();
  EXPECT_EQ(got, (std::vector<int64_t>{7, 7}));
  absl::StatusOr<std::vector<Tensor>> last = sess->Run({}, {dequeue}, {});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ((*last)[0].scalar<int64_t>(), 8);
}

TEST(DataFlowOpsTest, DequeueTimeout) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output dequeue = ops::SyncTokenDequeue(s.WithOpName("dequeue"), {.shared_name = "q"}, 30);
  std::unique_ptr<Session> sess = MakeSession(s);
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {dequeue}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(out.status().message().find("'dequeue'"), std::string::npos) << out.status();
}


// The sparse accumulator against TensorFlow's SparseConditionalAccumulator:
// TF 2.21 takes, from ([0, 1], [[1,1],[2,2]]) and ([1, 3, 3],
// [[3,3],[4,4],[5,5]]) for a [4, 2] table, rows 0 -> [1,1], 1 -> [2.5,2.5]
// (two gradients held row 1) and 3 -> [4,4] and [5,5] as two entries (9 in
// all; Sluice sums them into one row).
struct SparseAccumulatorGraph {
  SparseAccumulatorGraph() : s(Scope::NewRootScope(BuiltinOps())) {
    spec = {.dtype = DT_FLOAT, .shape = {4, 2}, .shared_name = "sparse_acc", .sparse = true};
    local_step = ops::Placeholder(s.WithOpName("local_step"), DT_INT64);
    indices = ops::Placeholder(s.WithOpName("indices"), DT_INT64);
    values = ops::Placeholder(s.WithOpName("values"), DT_FLOAT);
    shape = ops::Placeholder(s.WithOpName("shape"), DT_INT64);
    apply = ops::SparseAccumulatorApplyGradient(s.WithOpName("apply"), spec, local_step, indices,
                                                values, shape);
    take = ops::SparseAccumulatorTakeGradient(s.WithOpName("take"), spec, Input(int32_t{2}));
    num_accumulated = ops::AccumulatorNumAccumulated(s.WithOpName("num_accumulated"), spec);
    new_step = ops::Placeholder(s.WithOpName("new_step"), DT_INT64);
    set_step = ops::AccumulatorSetGlobalStep(s.WithOpName("set_step"), spec, new_step);
    sess = MakeSession(s);
  }
  absl::Status Apply(int64_t step, std::vector<int64_t> ids, std::vector<float> v,
                     std::vector<int64_t> dense_shape = {4, 2}) {
    const int64_t n = static_cast<int64_t>(ids.size());
    Tensor vt = Tensor::FromVector<float>(v);
    absl::StatusOr<Tensor> shaped =
        vt.Reshaped(TensorShape({n, n > 0 ? static_cast<int64_t>(v.size()) / n : 2}));
    EXPECT_TRUE(shaped.ok());
    return sess
        ->Run({{local_step, Tensor::Scalar<int64_t>(step)},
               {indices, Tensor::FromVector<int64_t>(ids)},
               {values, *shaped},
               {shape, Tensor::FromVector<int64_t>(dense_shape)}},
              {}, {apply})
        .status();
  }
  Scope s;
  ops::AccumulatorSpec spec;
  Output local_step, indices, values, shape, num_accumulated, new_step;
  ops::SparseAccumulatorTakeOutputs take;
  Node* apply = nullptr;
  Node* set_step = nullptr;
  std::unique_ptr<Session> sess;
};

TEST(DataFlowOpsTest, SparseAverageIsPerRowAsTensorFlowTakesIt) {
  SparseAccumulatorGraph g;
  ASSERT_TRUE(g.Apply(0, {0, 1}, {1, 1, 2, 2}).ok());
  ASSERT_TRUE(g.Apply(0, {1, 3, 3}, {3, 3, 4, 4, 5, 5}).ok());
  absl::StatusOr<std::vector<Tensor>> out =
      g.sess->Run({}, {g.take.indices, g.take.values, g.take.dense_shape}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  absl::Span<const int64_t> idx = (*out)[0].flat<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(idx.begin(), idx.end()), (std::vector<int64_t>{0, 1, 3}));
  absl::Span<const float> v = (*out)[1].flat<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{1, 1, 2.5f, 2.5f, 9, 9}));
  EXPECT_EQ((*out)[1].shape(), TensorShape({3, 2}));
  absl::Span<const int64_t> shape = (*out)[2].flat<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(shape.begin(), shape.end()), (std::vector<int64_t>{4, 2}));
  // Step 1 now: a step-0 gradient is stale, and the count serves sparse too.
  ASSERT_TRUE(g.Apply(0, {2}, {7, 7}).ok());
  absl::StatusOr<std::vector<Tensor>> n = g.sess->Run({}, {g.num_accumulated}, {});
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ((*n)[0].scalar<int32_t>(), 0);
  ASSERT_TRUE(g.sess->Run({{g.new_step, Tensor::Scalar<int64_t>(5)}}, {}, {g.set_step}).ok());
  ASSERT_TRUE(g.Apply(5, {2}, {7, 7}).ok());
  n = g.sess->Run({}, {g.num_accumulated}, {});
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ((*n)[0].scalar<int32_t>(), 1);
}

TEST(DataFlowOpsTest, SparseGradientsThatDoNotFitAreInvalidArgument) {
  SparseAccumulatorGraph g;
  absl::Status out_of_range = g.Apply(0, {4}, {1, 1});
  EXPECT_EQ(out_of_range.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out_of_range.message().find("index 4 is not in [0, 4)"), std::string::npos)
      << out_of_range;
  absl::Status wrong_table = g.Apply(0, {1}, {1, 1}, {5, 2});
  EXPECT_EQ(wrong_table.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_table.message().find("sparse_acc"), std::string::npos) << wrong_table;
  absl::Status wrong_row = g.Apply(0, {1}, {1, 1, 1}, {4, 3});
  EXPECT_EQ(wrong_row.code(), absl::StatusCode::kInvalidArgument) << wrong_row;
}

}  // namespace
}  // namespace sluice
