// RemoteRendezvous: local transfers stay in process, remote keys are fetched
// from the sending task (errors name it), StartAbort tells every waiting
// receiver at once, and WaitForLocal answers peers with a deadline, surviving
// a timed-out wait.
#include "distributed/remote_rendezvous.h"

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "distributed/in_process_worker_cache.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

constexpr char kPs[] = "/job:ps/replica:0/task:0";
constexpr char kWorker[] = "/job:worker/replica:0/task:0";
constexpr int64_t kStep = 7;

std::string Dev(const std::string& task) { return task + "/device:CPU:0"; }

std::string KeyFrom(const std::string& src_task, const std::string& name) {
  return Rendezvous::CreateKey(kStep, Dev(src_task), 1, Dev(kWorker), name);
}

Tensor Vec(std::vector<float> v) { return Tensor::FromVector<float>(v); }

// A peer whose RecvTensor runs `recv`.
class FakePeer : public WorkerInterface {
 public:
  std::function<absl::StatusOr<Tensor>(int64_t, const std::string&, int64_t)> recv;
  std::atomic<int> calls{0};

  absl::StatusOr<WorkerInfo> GetStatus() override { return absl::UnimplementedError(""); }
  absl::StatusOr<std::string> RegisterGraph(
      const std::string&, const std::map<std::string, tensorflow::GraphDef>&) override {
    return absl::UnimplementedError("");
  }
  absl::Status DeregisterGraph(const std::string&) override { return absl::UnimplementedError(""); }
  absl::Status RunGraph(const RunGraphArgs&, std::map<int, Tensor>*) override {
    return absl::UnimplementedError("");
  }
  absl::StatusOr<Tensor> RecvTensor(int64_t step, const std::string& key,
                                    int64_t timeout_ms) override {
    calls.fetch_add(1);
    return recv(step, key, timeout_ms);
  }
  absl::Status AbortStep(int64_t, const absl::Status&) override { return absl::OkStatus(); }
  absl::Status CleanupStep(int64_t) override { return absl::OkStatus(); }
  absl::Status CollectivePush(const std::string&, const std::string&, const Tensor&,
                              int64_t) override {
    return absl::UnimplementedError("");
  }
};

struct Received {
  absl::Notification done;
  absl::Status status;
  Tensor value;
  Rendezvous::DoneCallback Callback() {
    return [this](absl::Status s, Tensor t) {
      status = std::move(s);
      value = std::move(t);
      done.Notify();
    };
  }
  bool Wait() { return done.WaitForNotificationWithTimeout(absl::Seconds(10)); }
};

class RemoteRendezvousTest : public ::testing::Test {
 protected:
  RemoteRendezvousTest() { cache_.Add(kPs, &ps_); }
  InProcessWorkerCache cache_;
  FakePeer ps_;
  CallPool pool_{"test"};
};

TEST_F(RemoteRendezvousTest, LocalKeysStayInProcess) {
  RemoteRendezvous r(kStep, kWorker, &cache_, &pool_, 5000);
  Tensor t = Vec({1, 2});
  const std::string key = Rendezvous::CreateKey(kStep, Dev(kWorker), 1, kWorker + std::string("/device:CPU:1"), "e1");
  Received before;
  r.RecvAsync(key, before.Callback());  // receive first
  ASSERT_TRUE(r.Send(key, t).ok());
  ASSERT_TRUE(before.Wait());
  ASSERT_TRUE(before.status.ok()) << before.status;
  EXPECT_TRUE(before.value.SharesBufferWith(t));

  const std::string key2 =
      Rendezvous::CreateKey(kStep, Dev(kWorker), 1, kWorker + std::string("/device:CPU:1"), "e1b");
  ASSERT_TRUE(r.Send(key2, t).ok());  // send first
  Received after;
  r.RecvAsync(key2, after.Callback());
  ASSERT_TRUE(after.Wait());
  EXPECT_TRUE(after.value.SharesBufferWith(t));
  EXPECT_EQ(ps_.calls.load(), 0);
}

TEST_F(RemoteRendezvousTest, RemoteKeyIsFetchedFromTheSendingTask) {
  Tensor t = Vec({3, 4});
  ps_.recv = [&](int64_t step, const std::string& key, int64_t timeout_ms) -> absl::StatusOr<Tensor> {
    EXPECT_EQ(step, kStep);
    EXPECT_EQ(key, KeyFrom(kPs, "w:0"));
    EXPECT_EQ(timeout_ms, 5000);
    return t;
  };
  RemoteRendezvous r(kStep, kWorker, &cache_, &pool_, 5000);
  Received got;
  r.RecvAsync(KeyFrom(kPs, "w:0"), got.Callback());
  ASSERT_TRUE(got.Wait());
  ASSERT_TRUE(got.status.ok()) << got.status;
  EXPECT_EQ(got.value.flat<float>()[1], 4.f);
  EXPECT_EQ(ps_.calls.load(), 1);
}

TEST_F(RemoteRendezvousTest, FetchErrorsNameThePeer) {
  ps_.recv = [](int64_t, const std::string&, int64_t) -> absl::StatusOr<Tensor> {
    return absl::UnavailableError("connection refused");
  };
  RemoteRendezvous r(kStep, kWorker, &cache_, &pool_, 5000);
  Received got;
  r.RecvAsync(KeyFrom(kPs, "w:0"), got.Callback());
  ASSERT_TRUE(got.Wait());
  EXPECT_EQ(got.status.code(), absl::StatusCode::kUnavailable) << got.status;
  EXPECT_TRUE(absl::StrContains(got.status.message(), std::string("receiving w:0 from ") + kPs))
      << got.status;
  EXPECT_TRUE(absl::StrContains(got.status.message(), "connection refused")) << got.status;

  // A task the cache does not know.
  Received unknown;
  r.RecvAsync(KeyFrom("/job:ps/replica:0/task:9", "u:0"), unknown.Callback());
  ASSERT_TRUE(unknown.Wait());
  EXPECT_EQ(unknown.status.code(), absl::StatusCode::kNotFound) << unknown.status;
  EXPECT_TRUE(absl::StrContains(unknown.status.message(), "/job:ps/replica:0/task:9"));

  // A dead task.
  cache_.SetDead(kPs, true);
  Received dead;
  r.RecvAsync(KeyFrom(kPs, "d:0"), dead.Callback());
  ASSERT_TRUE(dead.Wait());
  EXPECT_EQ(dead.status.code(), absl::StatusCode::kUnavailable) << dead.status;
  EXPECT_TRUE(absl::StrContains(dead.status.message(), kPs)) << dead.status;

  Received bad_key;
  r.RecvAsync("not a key", bad_key.Callback());
  ASSERT_TRUE(bad_key.Wait());
  EXPECT_EQ(bad_key.status.code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RemoteRendezvousTest, AbortTellsWaitingReceiversAtOnce) {
  absl::Notification release_peer;
  std::atomic<bool> fetch_returned{false};
  ps_.recv = [&](int64_t, const std::string&, int64_t) -> absl::StatusOr<Tensor> {
    release_peer.WaitForNotification();
    fetch_returned = true;
    return Vec({1});
  };
  Received remote, local;
  {
    RemoteRendezvous r(kStep, kWorker, &cache_, &pool_, 5000);
    r.RecvAsync(KeyFrom(kPs, "w:0"), remote.Callback());
    r.RecvAsync(KeyFrom(kWorker, "l:0"), local.Callback());
    absl::SleepFor(absl::Milliseconds(50));
    EXPECT_FALSE(remote.done.HasBeenNotified());
    r.StartAbort(absl::AbortedError("peer task failed"));
    ASSERT_TRUE(remote.Wait());
    ASSERT_TRUE(local.Wait());
    EXPECT_EQ(remote.status.code(), absl::StatusCode::kAborted);
    EXPECT_EQ(local.status.code(), absl::StatusCode::kAborted);
    EXPECT_TRUE(r.aborted());
    EXPECT_EQ(r.abort_status().message(), "peer task failed");

    // Later receives fail at once, without a fetch.
    Received late;
    r.RecvAsync(KeyFrom(kPs, "w2:0"), late.Callback());
    ASSERT_TRUE(late.done.HasBeenNotified());
    EXPECT_EQ(late.status.code(), absl::StatusCode::kAborted);
    EXPECT_EQ(ps_.calls.load(), 1);
    EXPECT_EQ(r.Send(KeyFrom(kWorker, "s:0"), Vec({1})).code(), absl::StatusCode::kAborted);

    // The destructor waits for the fetch still blocked in the peer.
    std::thread releaser([&] {
      absl::SleepFor(absl::Milliseconds(100));
      release_peer.Notify();
    });
    releaser.detach();
  }
  EXPECT_TRUE(fetch_returned.load());
}

TEST_F(RemoteRendezvousTest, WaitForLocalBeforeAndAfterSend) {
  RemoteRendezvous r(kStep, kPs, &cache_, &pool_, 5000);
  Tensor t = Vec({5, 6});
  const std::string early = KeyFrom(kPs, "early:0");
  absl::StatusOr<Tensor> got;
  std::thread waiter([&] { got = r.WaitForLocal(early, 5000); });
  absl::SleepFor(absl::Milliseconds(50));
  ASSERT_TRUE(r.Send(early, t).ok());
  waiter.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->SharesBufferWith(t));

  const std::string late = KeyFrom(kPs, "late:0");
  ASSERT_TRUE(r.Send(late, t).ok());
  got = r.WaitForLocal(late, 5000);
  ASSERT_TRUE(got.ok()) << got.status();
  // Delivered: asking again is a second receive.
  got = r.WaitForLocal(late, 100);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInternal) << got.status();
}

TEST_F(RemoteRendezvousTest, WaitForLocalTimesOutAndARetrySucceeds) {
  RemoteRendezvous r(kStep, kPs, &cache_, &pool_, 5000);
  const std::string key = KeyFrom(kPs, "slow:0");
  const absl::Time start = absl::Now();
  absl::StatusOr<Tensor> got = r.WaitForLocal(key, 100);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded) << got.status();
  EXPECT_TRUE(absl::StrContains(got.status().message(), key)) << got.status();
  // The timed-out wait left its receive behind; the retry shares it.
  ASSERT_TRUE(r.Send(key, Vec({9})).ok());
  got = r.WaitForLocal(key, 1000);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->flat<float>()[0], 9.f);
}

TEST_F(RemoteRendezvousTest, AbortWakesWaitForLocal) {
  RemoteRendezvous r(kStep, kPs, &cache_, &pool_, 5000);
  absl::StatusOr<Tensor> got;
  std::thread waiter([&] { got = r.WaitForLocal(KeyFrom(kPs, "never:0"), 10000); });
  absl::SleepFor(absl::Milliseconds(50));
  const absl::Time start = absl::Now();
  r.StartAbort(absl::CancelledError("step 7 cancelled by the master"));
  waiter.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kCancelled);
  // And later waits fail at once.
  got = r.WaitForLocal(KeyFrom(kPs, "after:0"), 10000);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace sluice
