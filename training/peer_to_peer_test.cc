// Peer-to-peer training in one process: W workers' graphs in one graph over
// W virtual CPUs, one session, each worker driven by its own thread and
// PeerToPeerTrainer. Lock-step (S = 0) equals one process applying the sum
// of the W gradients (SGD and Momentum, against a reference computed here
// by hand); bounded staleness learns and never exceeds S; a finished peer is
// not waited for; a silent peer ends a step at the deadline naming it; bad
// options are InvalidArgument.
#include "training/peer_to_peer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/training/optimizers.h"
#include "ops/state/state_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"
#include "training/peer_to_peer_trainer.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr int kIn = 3;
constexpr int kBatch = 4;
constexpr float kInitW[kIn] = {0.3f, -0.2f, 0.1f};
constexpr float kInitB = 0.05f;
constexpr float kTrueW[kIn] = {1.0f, -2.0f, 0.5f};
constexpr float kTrueB = 0.7f;

std::string Cpu(int i) { return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", i); }

// y = x . w + b, loss = mean((y - labels)^2); every worker starts at kInit.
ReplicaFn LinearModel() {
  return [](const Scope& s, const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {
    ops::VariableAndInit w = ops::VariableWithInit(
        s.WithOpName("w"), ops::Const(s, std::vector<float>(kInitW, kInitW + kIn),
                                      TensorShape({kIn, 1})));
    ops::VariableAndInit b =
        ops::VariableWithInit(s.WithOpName("b"), ops::Const(s, {kInitB}, TensorShape({1})));
    Output y = ops::Add(s, ops::MatMul(s, in[0], w.var), b.var);
    Output loss = ops::Mean(s, ops::Square(s, ops::Sub(s, y, in[1])), {0, 1});
    if (!s.ok()) return s.status();
    return ReplicaModel{loss, {w.var, b.var}, {}};
  };
}

// Worker k's batch of step t: deterministic x, labels of the true line.
struct Batch {
  std::vector<float> x;  // kBatch x kIn
  std::vector<float> y;  // kBatch
};
Batch MakeBatch(int worker, int64_t step) {
  Batch b;
  std::mt19937 gen(static_cast<uint32_t>(worker * 100003 + step));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int i = 0; i < kBatch; ++i) {
    float y = kTrueB;
    for (int j = 0; j < kIn; ++j) {
      const float x = uniform(gen);
      b.x.push_back(x);
      y += x * kTrueW[j];
    }
    b.y.push_back(y);
  }
  return b;
}

// Parameters of the reference: w (kIn) then b.
using Params = std::vector<double>;

// d loss / d params of one batch at `p` (the gradient of the mean squared
// error: 2/n sum r_i x_i, 2/n sum r_i).
Params Gradient(const Params& p, const Batch& b) {
  Params g(kIn + 1, 0.0);
  for (int i = 0; i < kBatch; ++i) {
    double r = p[kIn] - b.y[i];
    for (int j = 0; j < kIn; ++j) r += b.x[i * kIn + j] * p[j];
    for (int j = 0; j < kIn; ++j) g[j] += 2.0 / kBatch * r * b.x[i * kIn + j];
    g[kIn] += 2.0 / kBatch * r;
  }
  return g;
}

// One process applying the sum of the W workers' gradients each step, with
// SGD (momentum 0) or TensorFlow's ApplyMomentum (accum = m accum + g;
// var -= lr accum).
Params Reference(int workers, int steps, double lr, double momentum) {
  Params p(kInitW, kInitW + kIn);
  p.push_back(kInitB);
  Params accum(kIn + 1, 0.0);
  for (int t = 0; t < steps; ++t) {
    Params sum(kIn + 1, 0.0);
    for (int k = 0; k < workers; ++k) {
      Params g = Gradient(p, MakeBatch(k, t));
      for (int j = 0; j <= kIn; ++j) sum[j] += g[j];
    }
    for (int j = 0; j <= kIn; ++j) {
      accum[j] = momentum * accum[j] + sum[j];
      p[j] -= lr * (momentum > 0 ? accum[j] : sum[j]);
    }
  }
  return p;
}

// W workers' graphs in one graph and one session over W virtual CPUs.
class PeerToPeerTest : public ::testing::Test {
 protected:
  // Builds every worker with a fresh optimizer from `make_optimizer`.
  void Build(int workers, int max_staleness,
             const std::function<std::unique_ptr<Optimizer>()>& make_optimizer) {
    std::vector<std::string> devices;
    for (int k = 0; k < workers; ++k) devices.push_back(Cpu(k));
    for (int k = 0; k < workers; ++k) {
      const Scope ws = root_.NewSubScope(absl::StrCat("worker_", k)).WithDevice(devices[k]);
      x_.push_back(ops::Placeholder(ws.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({kBatch, kIn})}));
      y_.push_back(ops::Placeholder(ws.WithOpName("y"), DT_FLOAT, {.shape = TensorShape({kBatch, 1})}));
      optimizers_.push_back(make_optimizer());
      PeerToPeerOptions o{devices, k, max_staleness};
      absl::StatusOr<PeerToPeerModel> m =
          BuildPeerToPeer(ws, {x_[k], y_[k]}, LinearModel(), optimizers_.back().get(), o);
      ASSERT_TRUE(m.ok()) << m.status();
      models_.push_back(*std::move(m));
    }
    SessionConfig options = BuiltinSessionConfig();
    options.devices.num_virtual_cpus = workers;
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(options, *root_.graph());
    ASSERT_TRUE(sess.ok()) << sess.status();
    session_ = *std::move(sess);
    std::vector<Node*> inits;
    for (const PeerToPeerModel& m : models_) inits.push_back(m.init);
    ASSERT_TRUE(session_->Run({}, {}, inits).ok());
    for (const PeerToPeerModel& m : models_) {
      trainers_.push_back(std::make_unique<PeerToPeerTrainer>(
          session_.get(), m, PeerToPeerTrainerOptions{.peer_timeout_ms = 20000}));
    }
  }

  std::vector<std::pair<Output, Tensor>> Feeds(int k, int64_t step) {
    Batch b = MakeBatch(k, step);
    return {{x_[k], Tensor::FromVector(b.x, TensorShape({kBatch, kIn}))},
            {y_[k], Tensor::FromVector(b.y, TensorShape({kBatch, 1}))}};
  }

  // Worker k's w and b, as reference Params.
  Params Weights(int k) {
    absl::StatusOr<std::vector<Tensor>> got = session_->Run({}, models_[k].replica.variables);
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok()) return {};
    Params p;
    for (int j = 0; j < kIn; ++j) p.push_back((*got)[0].flat<float>()[j]);
    p.push_back((*got)[1].flat<float>()[0]);
    return p;
  }

  // Runs `steps` steps on every worker, each in its own thread (worker k
  // sleeping k * delay per step), then Finish; returns each worker's stats.
  std::vector<std::vector<PeerStepStats>> TrainAll(int steps, absl::Duration delay = {}) {
    const int workers = static_cast<int>(models_.size());
    std::vector<std::vector<PeerStepStats>> stats(workers);
    std::vector<absl::Status> status(workers);
    std::vector<std::thread> threads;
    for (int k = 0; k < workers; ++k) {
      threads.emplace_back([&, k] {
        for (int t = 0; t < steps; ++t) {
          absl::SleepFor(delay * k);
          absl::StatusOr<PeerStepStats> st = trainers_[k]->Step(Feeds(k, t));
          if (!st.ok()) {
            status[k] = st.status();
            return;
          }
          stats[k].push_back(*st);
        }
        status[k] = trainers_[k]->Finish();
      });
    }
    for (std::thread& t : threads) t.join();
    for (int k = 0; k < workers; ++k) EXPECT_TRUE(status[k].ok()) << "worker " << k << ": " << status[k];
    return stats;
  }

  Scope root_ = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> x_, y_;
  std::vector<std::unique_ptr<Optimizer>> optimizers_;
  std::vector<PeerToPeerModel> models_;
  std::unique_ptr<Session> session_;
  std::vector<std::unique_ptr<PeerToPeerTrainer>> trainers_;
};

void ExpectNear(const Params& got, const Params& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t j = 0; j < got.size(); ++j) EXPECT_NEAR(got[j], want[j], tol) << what << " [" << j << "]";
}

TEST_F(PeerToPeerTest, LockStepSgdEqualsOneProcessApplyingTheSum) {
  constexpr int kWorkers = 3, kSteps = 15;
  constexpr double kLr = 0.03;
  Build(kWorkers, /*max_staleness=*/0,
        [=] { return std::make_unique<GradientDescentOptimizer>(kLr); });
  std::vector<std::vector<PeerStepStats>> stats = TrainAll(kSteps, absl::Milliseconds(1));
  const Params want = Reference(kWorkers, kSteps, kLr, /*momentum=*/0);
  // The reference moved: the test compares trained weights, not the init.
  EXPECT_GT(std::abs(want[0] - kInitW[0]), 0.1);
  const Params first = Weights(0);
  ExpectNear(first, want, 1e-4, "worker 0 vs reference");
  for (int k = 0; k < kWorkers; ++k) {
    ExpectNear(Weights(k), first, 1e-6, absl::StrCat("worker ", k, " vs worker 0"));
    ASSERT_EQ(stats[k].size(), static_cast<size_t>(kSteps));
    for (const PeerStepStats& st : stats[k]) {
      EXPECT_EQ(st.staleness, 0) << "worker " << k << " step " << st.step;
      EXPECT_EQ(st.peer_gradients, kWorkers - 1) << "worker " << k << " step " << st.step;
    }
    EXPECT_EQ(trainers_[k]->peer_gradients_applied(), (kWorkers - 1) * kSteps);
  }
}

TEST_F(PeerToPeerTest, LockStepMomentumUpdatesOnceAStep) {
  constexpr int kWorkers = 2, kSteps = 12;
  constexpr double kLr = 0.02, kMomentum = 0.9;
  Build(kWorkers, 0, [=] { return std::make_unique<MomentumOptimizer>(kLr, kMomentum); });
  TrainAll(kSteps);
  const Params want = Reference(kWorkers, kSteps, kLr, kMomentum);
  for (int k = 0; k < kWorkers; ++k) {
    ExpectNear(Weights(k), want, 1e-4, absl::StrCat("worker ", k, " vs reference"));
  }
}

TEST_F(PeerToPeerTest, BoundedStalenessLearnsAndStaysWithinTheBound) {
  constexpr int kWorkers = 3, kSteps = 120, kStaleness = 2;
  Build(kWorkers, kStaleness, [] { return std::make_unique<GradientDescentOptimizer>(0.02); });
  // Worker 2 is slowest: the others run ahead of it, as far as S lets them.
  std::vector<std::vector<PeerStepStats>> stats = TrainAll(kSteps, absl::Milliseconds(2));
  int seen = 0;
  for (int k = 0; k < kWorkers; ++k) {
    ASSERT_EQ(stats[k].size(), static_cast<size_t>(kSteps));
    EXPECT_LE(trainers_[k]->max_staleness_seen(), kStaleness) << "worker " << k;
    seen = std::max(seen, trainers_[k]->max_staleness_seen());
    const float first = stats[k].front().loss, last = stats[k].back().loss;
    EXPECT_LT(last, 0.01f * first) << "worker " << k << ": loss " << first << " -> " << last;
    // Finish applied the rest: every gradient of every worker, once.
    EXPECT_EQ(trainers_[k]->peer_gradients_applied(), (kWorkers - 1) * kSteps);
  }
  EXPECT_GT(seen, 0) << "the workers never ran apart; the bound was not exercised";
  // SGD's updates add up: having applied the same gradients, replicas agree.
  const Params first = Weights(0);
  for (int k = 1; k < kWorkers; ++k) {
    ExpectNear(Weights(k), first, 1e-4, absl::StrCat("worker ", k, " vs worker 0"));
  }
  ExpectNear(first, {kTrueW[0], kTrueW[1], kTrueW[2], kTrueB}, 0.05, "learned line");
}

TEST_F(PeerToPeerTest, APeerThatFinishedIsNotWaitedFor) {
  Build(2, 0, [] { return std::make_unique<GradientDescentOptimizer>(0.02); });
  std::thread early([&] {
    for (int t = 0; t < 3; ++t) EXPECT_TRUE(trainers_[1]->Step(Feeds(1, t)).ok());
    EXPECT_TRUE(trainers_[1]->Finish().ok());  // waits for worker 0 to finish
  });
  for (int t = 0; t < 3; ++t) ASSERT_TRUE(trainers_[0]->Step(Feeds(0, t)).ok());
  // Once worker 1 has closed its queue to worker 0, worker 0 goes on alone.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  bool closed = false;
  while (!closed && absl::Now() < deadline) {
    absl::StatusOr<std::vector<Tensor>> got = session_->Run({}, {models_[0].peers[0].is_closed});
    ASSERT_TRUE(got.ok()) << got.status();
    closed = (*got)[0].scalar<bool>();
    if (!closed) absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_TRUE(closed);
  for (int t = 3; t < 6; ++t) {
    absl::StatusOr<PeerStepStats> st = trainers_[0]->Step(Feeds(0, t));
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(st->peer_gradients, 0);
  }
  EXPECT_TRUE(trainers_[0]->Finish().ok());
  early.join();
  EXPECT_EQ(trainers_[0]->newest_from(0), 2);
  EXPECT_EQ(trainers_[1]->newest_from(0), 5);  // worker 1 applied all of worker 0's
}

TEST_F(PeerToPeerTest, ASilentPeerEndsTheStepAtTheDeadlineNamingIt) {
  Build(2, 0, [] { return std::make_unique<GradientDescentOptimizer>(0.02); });
  PeerToPeerTrainer trainer(session_.get(), models_[0], {.peer_timeout_ms = 300});
  const absl::Time start = absl::Now();
  absl::StatusOr<PeerStepStats> st = trainer.Step(Feeds(0, 0));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(st.status().code(), absl::StatusCode::kDeadlineExceeded) << st.status();
  EXPECT_THAT(std::string(st.status().message()), HasSubstr("worker 1"));
  EXPECT_THAT(std::string(st.status().message()), HasSubstr("step 0"));
  EXPECT_GE(took, absl::Milliseconds(250));
  EXPECT_LT(took, absl::Seconds(5));
}

// --- bad inputs ----------------------------------------------------------------

class PeerToPeerBadInputTest : public ::testing::Test {
 protected:
  absl::Status Build(PeerToPeerOptions o, ReplicaFn fn = LinearModel(), bool optimizer = true) {
    Output x = ops::Placeholder(s_.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({kBatch, kIn})});
    Output y = ops::Placeholder(s_.WithOpName("y"), DT_FLOAT, {.shape = TensorShape({kBatch, 1})});
    return BuildPeerToPeer(s_, {x, y}, fn, optimizer ? &sgd_ : nullptr, o).status();
  }
  Scope s_ = Scope::NewRootScope(BuiltinOps());
  GradientDescentOptimizer sgd_{0.1};
};

void ExpectInvalid(const absl::Status& s, const std::string& needle) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(needle));
}

TEST_F(PeerToPeerBadInputTest, EmptyWorkerDevices) {
  ExpectInvalid(Build({{}, 0, 0}), "worker_devices is empty");
}

TEST_F(PeerToPeerBadInputTest, WorkerIndexOutOfRange) {
  ExpectInvalid(Build({{Cpu(0), Cpu(1)}, 2, 0}), "worker_index 2 is out of range for 2 workers");
  ExpectInvalid(Build({{Cpu(0), Cpu(1)}, -1, 0}), "worker_index -1 is out of range");
}

TEST_F(PeerToPeerBadInputTest, NegativeStaleness) {
  ExpectInvalid(Build({{Cpu(0)}, 0, -1}), "max_staleness is -1");
}

TEST_F(PeerToPeerBadInputTest, RepeatedDevice) {
  ExpectInvalid(Build({{Cpu(0), Cpu(0)}, 0, 0}), "listed twice");
}

TEST_F(PeerToPeerBadInputTest, NoOptimizer) {
  ExpectInvalid(Build({{Cpu(0)}, 0, 0}, LinearModel(), false), "no optimizer");
}

TEST_F(PeerToPeerBadInputTest, ReplicaFunctionErrorNamesTheWorker) {
  ReplicaFn broken = [](const Scope&, const std::vector<Output>&) -> absl::StatusOr<ReplicaModel> {
    return absl::InvalidArgumentError("the model is broken");
  };
  absl::Status s = Build({{Cpu(0), Cpu(1)}, 1, 0}, broken);
  ExpectInvalid(s, "worker 1");
  EXPECT_THAT(std::string(s.message()), HasSubstr("the model is broken"));
}

TEST_F(PeerToPeerBadInputTest, VariableWithoutAFullShape) {
  ReplicaFn partial = [](const Scope& s, const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {
    Output v = ops::Variable(s.WithOpName("v"), TensorShape({-1}), DT_FLOAT);
    Output loss = ops::Sum(s, ops::Mul(s, v, v), {0});
    return ReplicaModel{loss, {v}, {}, {ops::Assign(s, v, ops::Const(s, {1.0f})).node}};
  };
  ExpectInvalid(Build({{Cpu(0)}, 0, 0}, partial), "fully defined shape");
}

}  // namespace
}  // namespace sluice
