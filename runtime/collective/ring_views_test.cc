// The ring over a transport that copies what it sends later, on its own
// thread (as the Thrift transport does): pieces of the input and of the
// result then go out as views (CollectiveTransport::CopiesOnSend), so the
// ring must leave that memory alone until each send is done, and a small
// max_bytes_in_flight makes chains start one after another. All-gather and
// broadcast pieces land in the receivers' results (RecvInto).
#include <atomic>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/collective/mailbox.h"

namespace sluice {
namespace {

using Result = absl::StatusOr<Tensor>;

// Every member "in its own process". Send queues the value; a thread copies
// it (after the others queued before it) into the mailbox and then calls
// `done`, so a sender that changed a view's memory before `done` would be
// caught by the sums.
class DeferredCopyTransport : public CollectiveTransport {
 public:
  DeferredCopyTransport() : thread_([this] { Loop(); }) {}
  ~DeferredCopyTransport() override {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }

  void Send(const std::string& to_device, const std::string& key, const Tensor& value,
            int64_t timeout_ms, std::function<void(absl::Status)> done) override {
    absl::MutexLock lock(&mu_);
    queue_.push_back({to_device, key, value, std::move(done)});
    sends_.fetch_add(1);
  }
  void Recv(const std::string& from_device, const std::string& to_device, const std::string& key,
            int64_t timeout_ms, std::function<void(absl::StatusOr<Tensor>)> done) override {
    box_.Recv(from_device, to_device, key, timeout_ms, std::move(done));
  }
  // As the Thrift transport: the landing waits in the mailbox for the copy.
  void RecvInto(const std::string& from_device, const std::string& to_device,
                const std::string& key, Tensor landing, int64_t timeout_ms,
                std::function<void(absl::StatusOr<Tensor>)> done) override {
    box_.ExpectInto(to_device, key, std::move(landing));
    box_.Recv(from_device, to_device, key, timeout_ms, std::move(done));
  }
  void Abort(const std::string& key_prefix, const absl::Status& status) override {
    box_.Abort(key_prefix, status);
  }
  bool CopiesOnSend(const std::string& to_device) const override { return true; }

  size_t PendingValues() const { return box_.PendingValues(); }
  size_t PendingLandings() const { return box_.PendingLandings(); }
  int64_t landed() const { return landed_.load(); }
  int64_t sends() const { return sends_.load(); }

 private:
  struct Item {
    std::string to_device;
    std::string key;
    Tensor value;
    std::function<void(absl::Status)> done;
  };

  void Loop() {
    while (true) {
      Item item;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](DeferredCopyTransport* t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(t->mu_) {
              return t->stop_ || !t->queue_.empty();
            },
            this));
        if (queue_.empty()) return;
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      std::this_thread::yield();  // let the sender run on first
      // Into the receiver's landing when it registered one that fits (as
      // a server reading a push does), else into a fresh buffer.
      Tensor copy = box_.TakeLanding(item.to_device, item.key);
      if (copy.IsInitialized() && copy.dtype() == item.value.dtype() &&
          copy.NumElements() == item.value.NumElements()) {
        std::memcpy(copy.raw_data(), item.value.raw_data(), item.value.TotalBytes());
        landed_.fetch_add(1);
      } else {
        copy = item.value.DeepCopy();
      }
      item.value = Tensor();  // the view goes before `done`, as in the real transport
      absl::Status s = box_.Deliver(item.to_device, item.key, copy);
      item.done(s);
    }
  }

  CollectiveMailbox box_;
  absl::Mutex mu_;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int64_t> sends_{0};
  std::atomic<int64_t> landed_{0};
  std::thread thread_;
};

std::string Dev(int r) { return absl::StrCat("/job:worker/replica:0/task:", r, "/device:CPU:0"); }

struct Group {
  explicit Group(int n) {
    for (int r = 0; r < n; ++r) {
      devices.push_back(NewCpuDevice({.name = Dev(r), .num_threads = 1}));
      execs.push_back(std::make_unique<CollectiveExecutor>(&transport, nullptr, 4096));
    }
  }
  // Runs every member's part at once; the results in rank order.
  std::vector<Result> Run(CollectiveParams p, const std::vector<Tensor>& inputs) {
    const int n = static_cast<int>(devices.size());
    std::vector<Result> results(n, absl::InternalError("never finished"));
    std::vector<absl::Notification> done(n);
    for (int r = 0; r < n; ++r) p.group_devices.push_back(Dev(r));
    for (int r = 0; r < n; ++r) {
      CollectiveParams mine = p;
      mine.rank = r;
      execs[r]->Run(mine, devices[r].get(), inputs[r], [&, r](Result res) {
        results[r] = std::move(res);
        done[r].Notify();
      });
    }
    for (auto& d : done) d.WaitForNotificationWithTimeout(absl::Seconds(20));
    return results;
  }

  DeferredCopyTransport transport;  // outlives the executors
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::unique_ptr<CollectiveExecutor>> execs;
};

CollectiveParams Params(CollectiveKind kind, int64_t instance) {
  CollectiveParams p;
  p.kind = kind;
  p.group_key = 1;
  p.instance_key = instance;
  p.timeout_ms = 10000;
  p.node_name = "views";
  return p;
}

class RingViewsTest : public ::testing::TestWithParam<int> {};

TEST_P(RingViewsTest, AllReduceSumAndMeanWithFewChainsInFlight) {
  const int n = GetParam();
  Group group(n);
  std::mt19937 rng(n);
  std::uniform_int_distribution<int> value(-1000, 1000);
  int64_t instance = 0;
  for (int64_t elems : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{100003}}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean}) {
      for (int64_t in_flight : {int64_t{0}, int64_t{4096}}) {
        std::vector<Tensor> inputs;
        std::vector<double> sum(elems, 0.0);
        for (int r = 0; r < n; ++r) {
          std::vector<float> x(elems);
          for (int64_t i = 0; i < elems; ++i) {
            x[i] = static_cast<float>(value(rng));  // integers: exact sums
            sum[i] += x[i];
          }
          inputs.push_back(Tensor::FromVector<float>(x));
        }
        std::vector<Tensor> before;
        for (const Tensor& t : inputs) before.push_back(t.DeepCopy());
        CollectiveParams p = Params(CollectiveKind::kAllReduce, ++instance);
        p.reduce_op = op;
        p.max_bytes_in_flight = in_flight;
        std::vector<Result> results = group.Run(p, inputs);
        const std::string what = absl::StrCat("n=", n, " elems=", elems, " in_flight=", in_flight,
                                              op == ReduceOp::kMean ? " mean" : " sum");
        for (int r = 0; r < n; ++r) {
          ASSERT_TRUE(results[r].ok()) << what << " rank " << r << ": " << results[r].status();
          ASSERT_EQ(results[r]->NumElements(), elems) << what;
          // From the executor's caching pool (host_pool.h), reused next time.
          EXPECT_EQ(results[r]->buffer_allocator()->Name(), "collective_host") << what;
          for (int64_t i = 0; i < elems; ++i) {
            const double want = op == ReduceOp::kMean ? sum[i] / n : sum[i];
            ASSERT_NEAR(results[r]->flat<float>()[i], want, 1e-4) << what << " [" << i << "]";
            ASSERT_EQ(inputs[r].flat<float>()[i], before[r].flat<float>()[i])
                << what << ": the input changed at [" << i << "]";
          }
        }
      }
    }
  }
  EXPECT_EQ(group.transport.PendingValues(), 0u);
  // All-gather pieces landed in the results; no landing is left behind.
  EXPECT_GT(group.transport.landed(), 0);
  EXPECT_EQ(group.transport.PendingLandings(), 0u);
}

TEST_P(RingViewsTest, AllGatherAndBroadcast) {
  const int n = GetParam();
  Group group(n);
  const int64_t rows = 5000;  // 20 KB per member: several 4 KiB chunks
  std::vector<Tensor> inputs;
  for (int r = 0; r < n; ++r) {
    std::vector<float> x(rows);
    for (int64_t i = 0; i < rows; ++i) x[i] = static_cast<float>(r * rows + i);
    inputs.push_back(Tensor::FromVector<float>(x));
  }
  CollectiveParams gather = Params(CollectiveKind::kAllGather, 1);
  gather.max_bytes_in_flight = 4096;
  std::vector<Result> gathered = group.Run(gather, inputs);
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(gathered[r].ok()) << gathered[r].status();
    ASSERT_EQ(gathered[r]->NumElements(), rows * n);
    for (int64_t i = 0; i < rows * n; ++i) {
      ASSERT_EQ(gathered[r]->flat<float>()[i], static_cast<float>(i)) << "rank " << r;
    }
  }
  CollectiveParams bcast = Params(CollectiveKind::kBroadcast, 2);
  bcast.source_rank = n - 1;
  std::vector<Result> got = group.Run(bcast, inputs);
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(got[r].ok()) << got[r].status();
    for (int64_t i = 0; i < rows; ++i) {
      ASSERT_EQ(got[r]->flat<float>()[i], inputs[n - 1].flat<float>()[i]) << "rank " << r;
    }
  }
  EXPECT_GT(group.transport.sends(), 0);
  EXPECT_GT(group.transport.landed(), 0);
  EXPECT_EQ(group.transport.PendingValues(), 0u);
  EXPECT_EQ(group.transport.PendingLandings(), 0u);
}

INSTANTIATE_TEST_SUITE_P(GroupSizes, RingViewsTest, ::testing::Values(2, 3, 4));

}  // namespace
}  // namespace sluice
