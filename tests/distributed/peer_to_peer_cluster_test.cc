// Peer-to-peer training over real //tools:server processes on 127.0.0.1
// (mutual TLS): one server per worker task, and per worker a client of its
// own in this process (its own graph, cluster session and thread), as
// between-graph workers are. With bounded staleness (S = 2) three workers
// learn a line, never exceed S, and end with equal replicas (SGD, every
// gradient applied once by every worker); a worker whose peer is killed
// fails its next step in bounded time, naming the peer's task.
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/cluster/launcher.h"
#include "distributed/cluster_session.h"
#include "gtest/gtest.h"
#include "sluice.h"
#include "tests/distributed/child_process.h"
#include "tests/distributed/test_credentials.h"
#include "training/peer_to_peer.h"
#include "training/peer_to_peer_trainer.h"

namespace sluice {
namespace {

// Every process of these tests uses mutual TLS, as a launched job does.
const ::testing::Environment* const kTls =
    ::testing::AddGlobalTestEnvironment(new TestJobCredentials);

constexpr int kIn = 6;
constexpr int kBatch = 8;

std::string WorkerDevice(int k) {
  return absl::StrCat("/job:worker/replica:0/task:", k, "/device:CPU:0");
}

// One //tools:server process per worker task, killed on destruction.
class WorkerServers {
 public:
  explicit WorkerServers(int workers) {
    absl::StatusOr<ClusterSpec> spec = LocalCluster(0, workers);
    EXPECT_TRUE(spec.ok()) << spec.status();
    if (spec.ok()) spec_ = *spec;
  }
  const ClusterSpec& spec() const { return spec_; }

  ::testing::AssertionResult StartAll() {
    static int runs = 0;
    for (int k = 0; k < spec_.num_tasks("worker"); ++k) {
      absl::StatusOr<std::unique_ptr<ChildProcess>> p = ChildProcess::Start(
          {RunfilePath("tools/server"), "--cluster=" + spec_.ToJson(), "--job=worker",
           absl::StrCat("--task=", k), "--threads=2"},
          {}, TestTmpPath(absl::StrCat("p2p-server-", k, "-", ++runs, "-", getpid(), ".log")));
      if (!p.ok()) return ::testing::AssertionFailure() << p.status();
      if (!(*p)->WaitForOutput("listening on", absl::Seconds(10))) {
        return ::testing::AssertionFailure() << "task " << k << " not ready:\n" << (*p)->Output();
      }
      procs_.push_back(*std::move(p));
    }
    return ::testing::AssertionSuccess();
  }
  ChildProcess* process(int k) { return procs_[k].get(); }

 private:
  ClusterSpec spec_;
  std::vector<std::unique_ptr<ChildProcess>> procs_;
};

// y = x . w + b against labels of a fixed line; every worker starts at 0.
absl::StatusOr<ReplicaModel> Linear(const Scope& s, const std::vector<Output>& in) {
  ops::VariableAndInit w = ops::VariableWithInit(
      s.WithOpName("w"), ops::Const(s, std::vector<float>(kIn, 0.0f), TensorShape({kIn, 1})));
  ops::VariableAndInit b =
      ops::VariableWithInit(s.WithOpName("b"), ops::Const(s, {0.0f}, TensorShape({1})));
  Output y = ops::Add(s, ops::MatMul(s, in[0], w.var), b.var);
  Output loss = ops::Mean(s, ops::Square(s, ops::Sub(s, y, in[1])), {0, 1});
  RETURN_IF_ERROR(s.status());
  return ReplicaModel{loss, {w.var, b.var}, {}};
}

float TrueW(int j) { return 0.5f * static_cast<float>(j) - 1.0f; }
constexpr float kTrueB = 0.3f;

// One worker: its graph, its session (a master in this process over every
// task), its trainer.
struct Worker {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x, y;
  GradientDescentOptimizer sgd{0.05};
  PeerToPeerModel model;
  std::unique_ptr<Session> session;
  std::unique_ptr<PeerToPeerTrainer> trainer;

  absl::Status Create(const ClusterSpec& spec, int k, int workers, int staleness,
                      int64_t peer_timeout_ms) {
    const Scope ws = root.WithDevice(WorkerDevice(k));
    x = ops::Placeholder(ws.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({kBatch, kIn})});
    y = ops::Placeholder(ws.WithOpName("y"), DT_FLOAT, {.shape = TensorShape({kBatch, 1})});
    std::vector<std::string> devices;
    for (int i = 0; i < workers; ++i) devices.push_back(WorkerDevice(i));
    ASSIGN_OR_RETURN(model, BuildPeerToPeer(root, {x, y}, Linear, &sgd, {devices, k, staleness}));
    ASSIGN_OR_RETURN(GraphDef def, root.ToGraphDef());
    ClusterSessionOptions options;
    options.session.default_device = absl::StrCat("/job:worker/task:", k);
    options.wait_for_cluster_ms = 10000;
    options.session.step_timeout_ms = 20000;
    options.rpc.connect_timeout_ms = 1000;
    ASSIGN_OR_RETURN(session, NewClusterSession(spec, def, options));
    RETURN_IF_ERROR(session->Run({}, {}, {model.init}).status());
    trainer = std::make_unique<PeerToPeerTrainer>(
        session.get(), model, PeerToPeerTrainerOptions{.peer_timeout_ms = peer_timeout_ms});
    return absl::OkStatus();
  }

  std::vector<std::pair<Output, Tensor>> Feeds(int k, int64_t step) const {
    std::vector<float> xs, ys;
    std::mt19937 gen(static_cast<uint32_t>(k * 100003 + step));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (int i = 0; i < kBatch; ++i) {
      float label = kTrueB;
      for (int j = 0; j < kIn; ++j) {
        const float v = uniform(gen);
        xs.push_back(v);
        label += v * TrueW(j);
      }
      ys.push_back(label);
    }
    return {{x, Tensor::FromVector(xs, TensorShape({kBatch, kIn}))},
            {y, Tensor::FromVector(ys, TensorShape({kBatch, 1}))}};
  }

  std::vector<float> Weights() const {
    absl::StatusOr<std::vector<Tensor>> got = session->Run({}, model.replica.variables);
    EXPECT_TRUE(got.ok()) << got.status();
    std::vector<float> out;
    if (!got.ok()) return out;
    for (int j = 0; j < kIn; ++j) out.push_back((*got)[0].flat<float>()[j]);
    out.push_back((*got)[1].flat<float>()[0]);
    return out;
  }
};

TEST(PeerToPeerClusterTest, ThreeWorkersWithStalenessTwoLearnAndEndEqual) {
  constexpr int kWorkers = 3, kSteps = 150, kStaleness = 2;
  WorkerServers servers(kWorkers);
  ASSERT_TRUE(servers.StartAll());
  std::vector<std::unique_ptr<Worker>> workers;
  for (int k = 0; k < kWorkers; ++k) {
    workers.push_back(std::make_unique<Worker>());
    absl::Status s = workers[k]->Create(servers.spec(), k, kWorkers, kStaleness, 15000);
    ASSERT_TRUE(s.ok()) << "worker " << k << ": " << s;
  }
  std::vector<absl::Status> status(kWorkers);
  std::vector<float> first_loss(kWorkers), last_loss(kWorkers);
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (int k = 0; k < kWorkers; ++k) {
    threads.emplace_back([&, k] {
      Worker& w = *workers[k];
      for (int t = 0; t < kSteps; ++t) {
        if (k == kWorkers - 1) absl::SleepFor(absl::Milliseconds(3));  // a slow worker
        absl::StatusOr<PeerStepStats> st = w.trainer->Step(w.Feeds(k, t));
        if (!st.ok()) {
          status[k] = st.status();
          return;
        }
        if (t == 0) first_loss[k] = st->loss;
        last_loss[k] = st->loss;
      }
      status[k] = w.trainer->Finish();
    });
  }
  for (std::thread& t : threads) t.join();
  const absl::Duration took = absl::Now() - start;
  int seen = 0;
  for (int k = 0; k < kWorkers; ++k) {
    ASSERT_TRUE(status[k].ok()) << "worker " << k << ": " << status[k];
    const PeerToPeerTrainer& tr = *workers[k]->trainer;
    EXPECT_LE(tr.max_staleness_seen(), kStaleness) << "worker " << k;
    seen = std::max(seen, tr.max_staleness_seen());
    EXPECT_LT(last_loss[k], 0.01f * first_loss[k])
        << "worker " << k << ": loss " << first_loss[k] << " -> " << last_loss[k];
    EXPECT_EQ(tr.peer_gradients_applied(), (kWorkers - 1) * kSteps) << "worker " << k;
    std::printf("worker %d: loss %.4f -> %.6f, max staleness %d\n", k, first_loss[k],
                last_loss[k], tr.max_staleness_seen());
  }
  std::printf("%d steps on %d workers in %.2f s (%.1f ms/step)\n", kSteps, kWorkers,
              absl::ToDoubleSeconds(took), absl::ToDoubleMilliseconds(took) / kSteps);
  EXPECT_GT(seen, 0) << "the slow worker never fell behind; the bound was not exercised";
  const std::vector<float> first = workers[0]->Weights();
  ASSERT_EQ(first.size(), static_cast<size_t>(kIn + 1));
  for (int j = 0; j < kIn; ++j) EXPECT_NEAR(first[j], TrueW(j), 0.05) << "w[" << j << "]";
  EXPECT_NEAR(first[kIn], kTrueB, 0.05);
  for (int k = 1; k < kWorkers; ++k) {
    const std::vector<float> other = workers[k]->Weights();
    ASSERT_EQ(other.size(), first.size());
    for (size_t j = 0; j < first.size(); ++j) {
      EXPECT_NEAR(other[j], first[j], 1e-4) << "worker " << k << " [" << j << "]";
    }
  }
}

// Two lock-step workers over their servers, having run two steps together.
std::vector<std::unique_ptr<Worker>> TwoWorkersAfterTwoSteps(WorkerServers* servers) {
  std::vector<std::unique_ptr<Worker>> workers;
  for (int k = 0; k < 2; ++k) {
    workers.push_back(std::make_unique<Worker>());
    absl::Status s = workers[k]->Create(servers->spec(), k, 2, /*staleness=*/0, 3000);
    EXPECT_TRUE(s.ok()) << "worker " << k << ": " << s;
    if (!s.ok()) return {};
  }
  std::thread other([&] {
    for (int t = 0; t < 2; ++t) EXPECT_TRUE(workers[1]->trainer->Step(workers[1]->Feeds(1, t)).ok());
  });
  for (int t = 0; t < 2; ++t) {
    absl::StatusOr<PeerStepStats> st = workers[0]->trainer->Step(workers[0]->Feeds(0, t));
    EXPECT_TRUE(st.ok()) << st.status();
  }
  other.join();
  return workers;
}

// Worker 1's server is stopped with `sig`; worker 0's next step fails
// within `bound`, naming task 1.
void ExpectNextStepNamesTask1(int sig, absl::Duration bound) {
  WorkerServers servers(2);
  ASSERT_TRUE(servers.StartAll());
  std::vector<std::unique_ptr<Worker>> workers = TwoWorkersAfterTwoSteps(&servers);
  ASSERT_EQ(workers.size(), 2u);
  servers.process(1)->Signal(sig);
  if (sig == SIGKILL) {
    ASSERT_TRUE(servers.process(1)->WaitForExit(absl::Seconds(5)).has_value());
  }
  if (sig == SIGSTOP) {
    ASSERT_TRUE(servers.process(1)->WaitUntilStopped(absl::Seconds(5)));
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<PeerStepStats> st = workers[0]->trainer->Step(workers[0]->Feeds(0, 2));
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(absl::StrContains(st.status().message(), "/job:worker/replica:0/task:1"))
      << st.status();
  EXPECT_LT(took, bound) << st.status();
  std::printf("peer stopped by signal %d reported after %.2f s: %s\n", sig,
              absl::ToDoubleSeconds(took), std::string(st.status().message()).c_str());
  if (sig == SIGSTOP) servers.process(1)->Signal(SIGCONT);
}

TEST(PeerToPeerClusterTest, AKilledPeerFailsTheNextStepNamingItsTask) {
  ExpectNextStepNamesTask1(SIGKILL, absl::Seconds(10));
}

// A hung peer (SIGSTOP) answers nothing: the step ends at the trainer's
// 3 s deadline instead of waiting forever.
TEST(PeerToPeerClusterTest, AHungPeerFailsTheNextStepAtTheDeadline) {
  ExpectNextStepNamesTask1(SIGSTOP, absl::Seconds(10));
}

}  // namespace
}  // namespace sluice
