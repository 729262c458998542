// RpcCollectiveTransport over in-process peers: local members go through the
// mailbox, remote ones through CollectivePush (bounded concurrency, queued
// beyond), a receive from a dead, restarted or silent peer fails in time with
// an error naming it, Abort and destruction end what waits.
#include "distributed/collective/rpc_transport.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "distributed/in_process_worker_cache.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/device.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

constexpr char kTask0[] = "/job:worker/replica:0/task:0";
constexpr char kTask1[] = "/job:worker/replica:0/task:1";

std::string Cpu(const std::string& task) { return task + "/device:CPU:0"; }

// A peer task: pushes land in its mailbox; GetStatus reports `incarnation`.
class FakeTask : public WorkerInterface {
 public:
  FakeTask(std::string task, CollectiveMailbox* box) : task_(std::move(task)), box_(box) {}

  std::atomic<int64_t> incarnation{1};
  std::atomic<int> push_delay_ms{0};
  std::atomic<int> in_push{0};
  std::atomic<int> max_in_push{0};
  std::atomic<int> probes{0};

  absl::StatusOr<WorkerInfo> GetStatus() override {
    ++probes;
    WorkerInfo info;
    info.task = task_;
    info.incarnation = incarnation.load();
    return info;
  }
  absl::StatusOr<std::string> RegisterGraph(
      const std::string&, const std::map<std::string, tensorflow::GraphDef>&) override {
    return absl::UnimplementedError("");
  }
  absl::Status DeregisterGraph(const std::string&) override { return absl::UnimplementedError(""); }
  absl::Status RunGraph(const RunGraphArgs&, std::map<int, Tensor>*) override {
    return absl::UnimplementedError("");
  }
  absl::StatusOr<Tensor> RecvTensor(int64_t, const std::string&, int64_t) override {
    return absl::UnimplementedError("");
  }
  absl::Status AbortStep(int64_t, const absl::Status&) override { return absl::OkStatus(); }
  absl::Status CleanupStep(int64_t) override { return absl::OkStatus(); }
  absl::Status CollectivePush(const std::string& to_device, const std::string& key,
                              const Tensor& value, int64_t timeout_ms) override {
    const int now = ++in_push;
    int seen = max_in_push.load();
    while (now > seen && !max_in_push.compare_exchange_weak(seen, now)) {
    }
    if (push_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(push_delay_ms));
    absl::Status s = box_->Deliver(to_device, key, value);
    --in_push;
    return s;
  }

 private:
  const std::string task_;
  CollectiveMailbox* const box_;
};

struct Got {
  absl::Notification done;
  absl::StatusOr<Tensor> value;
  absl::Duration took;
};

// Starts a receive whose result lands in the returned Got.
std::shared_ptr<Got> StartRecv(CollectiveTransport* t, const std::string& from,
                               const std::string& to, const std::string& key, int64_t timeout_ms) {
  auto got = std::make_shared<Got>();
  const absl::Time start = absl::Now();
  t->Recv(from, to, key, timeout_ms, [got, start](absl::StatusOr<Tensor> v) {
    got->value = std::move(v);
    got->took = absl::Now() - start;
    got->done.Notify();
  });
  return got;
}

// Two tasks, each with a mailbox and a transport, peers in one cache.
class TwoTasks {
 public:
  explicit TwoTasks(RpcCollectiveTransport::Options options = {})
      : peer0_(kTask0, &box0_), peer1_(kTask1, &box1_) {
    cache_.Add(kTask0, &peer0_);
    cache_.Add(kTask1, &peer1_);
    t0_ = std::make_unique<RpcCollectiveTransport>(kTask0, &box0_, &cache_, options);
    t1_ = std::make_unique<RpcCollectiveTransport>(kTask1, &box1_, &cache_, options);
  }
  ~TwoTasks() {
    t0_.reset();
    t1_.reset();
    cache_.Quiesce();
  }

  CollectiveMailbox box0_, box1_;
  FakeTask peer0_, peer1_;
  InProcessWorkerCache cache_;
  std::unique_ptr<RpcCollectiveTransport> t0_, t1_;
};

absl::Status SendAndWait(CollectiveTransport* t, const std::string& to, const std::string& key,
                         const Tensor& v, int64_t timeout_ms) {
  absl::Notification n;
  absl::Status out;
  t->Send(to, key, v, timeout_ms, [&](absl::Status s) {
    out = s;
    n.Notify();
  });
  n.WaitForNotification();
  return out;
}

TEST(RpcCollectiveTransportTest, LocalMembersUseTheMailboxDirectly) {
  TwoTasks c;
  const std::string cpu1 = kTask0 + std::string("/device:CPU:1");
  auto got = StartRecv(c.t0_.get(), Cpu(kTask0), cpu1, "k", 1000);
  ASSERT_TRUE(SendAndWait(c.t0_.get(), cpu1, "k", Tensor::Scalar<float>(2.5f), 1000).ok());
  ASSERT_TRUE(got->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  ASSERT_TRUE(got->value.ok()) << got->value.status();
  EXPECT_EQ(got->value->scalar<float>(), 2.5f);
  EXPECT_EQ(c.peer0_.max_in_push.load(), 0);  // no RPC for a local member
}

TEST(RpcCollectiveTransportTest, RemotePushesArriveAndAreBounded) {
  RpcCollectiveTransport::Options options;
  options.max_concurrent_pushes = 2;
  TwoTasks c(options);
  c.peer1_.push_delay_ms = 5;
  constexpr int kN = 40;
  std::vector<std::shared_ptr<Got>> gots;
  for (int i = 0; i < kN; ++i) {
    gots.push_back(StartRecv(c.t1_.get(), Cpu(kTask0), Cpu(kTask1), absl::StrCat("c", i), 5000));
  }
  std::atomic<int> sent_ok{0};
  absl::Notification all_sent;
  for (int i = 0; i < kN; ++i) {
    c.t0_->Send(Cpu(kTask1), absl::StrCat("c", i), Tensor::Scalar<int64_t>(i), 5000,
                [&](absl::Status s) {
                  if (s.ok() && ++sent_ok == kN) all_sent.Notify();
                });
  }
  ASSERT_TRUE(all_sent.WaitForNotificationWithTimeout(absl::Seconds(10)));
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(gots[i]->done.WaitForNotificationWithTimeout(absl::Seconds(5))) << i;
    ASSERT_TRUE(gots[i]->value.ok()) << gots[i]->value.status();
    EXPECT_EQ(gots[i]->value->scalar<int64_t>(), i);
  }
  EXPECT_LE(c.peer1_.max_in_push.load(), 2);
  EXPECT_GE(c.peer1_.max_in_push.load(), 1);
}

TEST(RpcCollectiveTransportTest, DeadSenderFailsWithinAProbeNamingIt) {
  RpcCollectiveTransport::Options options;
  options.probe_interval_ms = 100;
  TwoTasks c(options);
  c.cache_.SetDead(kTask0, true);
  auto got = StartRecv(c.t1_.get(), Cpu(kTask0), Cpu(kTask1), "g1/i1/n0/rs/s0/c0", 20000);
  ASSERT_TRUE(got->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_LT(got->took, absl::Seconds(1));
  ASSERT_EQ(got->value.status().code(), absl::StatusCode::kUnavailable) << got->value.status();
  const std::string msg(got->value.status().message());
  EXPECT_TRUE(absl::StrContains(msg, std::string("collective peer ") + kTask0)) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "unreachable")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, Cpu(kTask0))) << msg;
}

TEST(RpcCollectiveTransportTest, RestartedSenderFailsNamingIt) {
  RpcCollectiveTransport::Options options;
  options.probe_interval_ms = 100;
  TwoTasks c(options);
  auto got = StartRecv(c.t1_.get(), Cpu(kTask0), Cpu(kTask1), "k", 20000);
  std::this_thread::sleep_for(std::chrono::milliseconds(350));  // a few probes see incarnation 1
  EXPECT_FALSE(got->done.HasBeenNotified());
  EXPECT_GE(c.peer0_.probes.load(), 1);
  c.peer0_.incarnation = 2;
  ASSERT_TRUE(got->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  ASSERT_EQ(got->value.status().code(), absl::StatusCode::kUnavailable) << got->value.status();
  EXPECT_TRUE(absl::StrContains(got->value.status().message(), "restarted"))
      << got->value.status();
  EXPECT_TRUE(absl::StrContains(got->value.status().message(), kTask0)) << got->value.status();

  // A receive that starts after the restart is fine with the new incarnation.
  auto later = StartRecv(c.t1_.get(), Cpu(kTask0), Cpu(kTask1), "k2", 5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  ASSERT_TRUE(SendAndWait(c.t0_.get(), Cpu(kTask1), "k2", Tensor::Scalar<float>(1), 1000).ok());
  ASSERT_TRUE(later->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_TRUE(later->value.ok()) << later->value.status();
}

TEST(RpcCollectiveTransportTest, SilentLiveSenderIsDeadlineExceededNamingIt) {
  RpcCollectiveTransport::Options options;
  options.probe_interval_ms = 50;
  TwoTasks c(options);
  auto got = StartRecv(c.t1_.get(), Cpu(kTask0), Cpu(kTask1), "k", 300);
  ASSERT_TRUE(got->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_GE(got->took, absl::Milliseconds(290));
  EXPECT_LT(got->took, absl::Seconds(2));
  ASSERT_EQ(got->value.status().code(), absl::StatusCode::kDeadlineExceeded)
      << got->value.status();
  EXPECT_TRUE(absl::StrContains(got->value.status().message(), Cpu(kTask0)))
      << got->value.status();
  EXPECT_GE(c.peer0_.probes.load(), 2);
  // A value that comes later still waits in the mailbox for a new receive.
  ASSERT_TRUE(SendAndWait(c.t0_.get(), Cpu(kTask1), "k", Tensor::Scalar<float>(4), 1000).ok());
  EXPECT_EQ(c.box1_.PendingValues(), 1u);
}

TEST(RpcCollectiveTransportTest, PushToADeadPeerIsUnavailableNamingIt) {
  TwoTasks c;
  c.cache_.SetDead(kTask1, true);
  absl::Status s = SendAndWait(c.t0_.get(), Cpu(kTask1), "k", Tensor::Scalar<float>(1), 1000);
  ASSERT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), std::string("collective peer ") + kTask1)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), Cpu(kTask1))) << s;
}

TEST(RpcCollectiveTransportTest, AbortFailsWaitingReceivesAndQueuedPushes) {
  RpcCollectiveTransport::Options options;
  options.max_concurrent_pushes = 1;
  TwoTasks c(options);
  c.peer1_.push_delay_ms = 200;
  auto got = StartRecv(c.t1_.get(), Cpu(kTask0), Cpu(kTask1), "g1/i1/n0/x", 20000);
  std::vector<absl::Status> results(3);
  std::atomic<int> finished{0};
  for (int i = 0; i < 3; ++i) {
    c.t0_->Send(Cpu(kTask1), absl::StrCat("g1/i1/n0/p", i), Tensor::Scalar<float>(1), 5000,
                [&, i](absl::Status s) {
                  results[i] = s;
                  ++finished;
                });
  }
  const absl::Status why = absl::AbortedError("rank 2 failed");
  c.t1_->Abort("g1/i1/n0/", why);
  c.t0_->Abort("g1/i1/n0/", why);
  ASSERT_TRUE(got->done.WaitForNotificationWithTimeout(absl::Seconds(2)));
  EXPECT_EQ(got->value.status().code(), absl::StatusCode::kAborted);
  for (int i = 0; i < 100 && finished.load() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(finished.load(), 3);
  EXPECT_EQ(results[1].code(), absl::StatusCode::kAborted) << results[1];  // dropped from the queue
  EXPECT_EQ(results[2].code(), absl::StatusCode::kAborted) << results[2];
}

TEST(RpcCollectiveTransportTest, DestructionEndsWaitingReceives) {
  RpcCollectiveTransport::Options options;
  options.probe_interval_ms = 100;
  auto c = std::make_unique<TwoTasks>(options);
  auto got = StartRecv(c->t1_.get(), Cpu(kTask0), Cpu(kTask1), "k", 60000);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  const absl::Time start = absl::Now();
  c.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  ASSERT_TRUE(got->done.HasBeenNotified());
  EXPECT_EQ(got->value.status().code(), absl::StatusCode::kCancelled) << got->value.status();
}

TEST(RpcCollectiveTransportTest, TellAbortedFailsThePeersReceiveWithTheRootCause) {
  TwoTasks c;
  auto got = StartRecv(c.t1_.get(), Cpu(kTask0), Cpu(kTask1), "g1/i1/n0/rs/s1/c0", 20000);
  auto other = StartRecv(c.t1_.get(), Cpu(kTask0), Cpu(kTask1), "g1/i2/n0/rs/s1/c0", 20000);
  const absl::Status why = absl::UnavailableError("collective peer task 2 is unreachable");
  c.t0_->TellAborted(Cpu(kTask1), "g1/i1/n0/", why, 1000);
  ASSERT_TRUE(got->done.WaitForNotificationWithTimeout(absl::Seconds(2)));
  EXPECT_EQ(got->value.status(), why);
  EXPECT_FALSE(other->done.HasBeenNotified());
  c.t0_->Abort("g1/i2/", absl::AbortedError("done"));  // local only: task 1 still waits
  EXPECT_FALSE(other->done.WaitForNotificationWithTimeout(absl::Milliseconds(100)));
  c.t1_->Abort("g1/i2/", absl::AbortedError("done"));
  // A dead peer: nothing to tell, nothing fails here.
  c.cache_.SetDead(kTask1, true);
  c.t0_->TellAborted(Cpu(kTask1), "g1/i3/n0/", why, 100);
}

// The ring 0 -> 1 -> 2 -> 0 over three tasks whose member on task 2 never
// runs (its task answers, so the failure is a timeout). Member 0, which
// waits on task 2, fails at its deadline; member 1, which waits on member 0
// and would wait much longer, fails right after it with the same root cause
// naming task 2, not with its own timeout naming task 0.
TEST(RpcCollectiveTransportTest, AFailedMemberTellsTheNextOneTheRootCause) {
  constexpr char kTask2[] = "/job:worker/replica:0/task:2";
  const std::vector<std::string> tasks = {kTask0, kTask1, kTask2};
  CollectiveMailbox boxes[3];
  std::vector<std::unique_ptr<FakeTask>> peers;
  InProcessWorkerCache cache;
  for (int t = 0; t < 3; ++t) {
    peers.push_back(std::make_unique<FakeTask>(tasks[t], &boxes[t]));
    cache.Add(tasks[t], peers.back().get());
  }
  std::vector<std::unique_ptr<RpcCollectiveTransport>> transports;
  std::vector<std::unique_ptr<CollectiveExecutor>> execs;
  std::vector<std::unique_ptr<Device>> devices;
  for (int t = 0; t < 3; ++t) {
    transports.push_back(std::make_unique<RpcCollectiveTransport>(tasks[t], &boxes[t], &cache));
    execs.push_back(std::make_unique<CollectiveExecutor>(transports.back().get(), nullptr, 4096));
    devices.push_back(NewCpuDevice({.name = Cpu(tasks[t]), .num_threads = 1}));
  }
  CollectiveParams p;
  p.kind = CollectiveKind::kAllReduce;
  p.group_key = 1;
  p.instance_key = 1;
  for (const std::string& t : tasks) p.group_devices.push_back(Cpu(t));
  p.node_name = "c";
  const Tensor input = Tensor::FromVector<float>(std::vector<float>(6000, 1.0f));
  std::vector<std::shared_ptr<Got>> got;
  const absl::Time start = absl::Now();
  for (int r = 0; r < 2; ++r) {
    CollectiveParams mine = p;
    mine.rank = r;
    mine.timeout_ms = r == 0 ? 500 : 30000;
    auto g = std::make_shared<Got>();
    execs[r]->Run(mine, devices[r].get(), input, [g, start](absl::StatusOr<Tensor> v) {
      g->value = std::move(v);
      g->took = absl::Now() - start;
      g->done.Notify();
    });
    got.push_back(g);
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(got[r]->done.WaitForNotificationWithTimeout(absl::Seconds(10))) << "rank " << r;
    const absl::Status s = got[r]->value.status();
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), Cpu(kTask2))) << "rank " << r << ": " << s;
    EXPECT_LT(got[r]->took, absl::Seconds(5)) << "rank " << r << ": " << s;
  }
  EXPECT_TRUE(absl::StrContains(got[1]->value.status().message(),
                                absl::StrCat("collective member ", Cpu(kTask0), " (rank 0 of 3) failed")))
      << got[1]->value.status();
  execs.clear();
  transports.clear();
  cache.Quiesce();
}

}  // namespace
}  // namespace sluice
