// The executor's hook for cross-process all-reduce implementations
// (an AllReduceProvider), on a fake device type "XPU" whose
// "device memory" is host memory flagged as device memory.
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/collective/mailbox.h"
#include "runtime/device.h"
#include "runtime/fake_device_memory.h"

namespace sluice {
namespace {

using Result = absl::StatusOr<Tensor>;

class XpuDevice : public Device {
 public:
  explicit XpuDevice(std::string name)
      : Device(std::move(name), "XPU"),
        memory_(std::make_shared<FakeDeviceMemory>("xpu")),
        cpu_(NewCpuDevice({.name = "/job:x/replica:0/task:0/device:CPU:0", .num_threads = 1})) {}
  Allocator* allocator() override { return memory_.get(); }
  ThreadPool* thread_pool() override { return cpu_->thread_pool(); }
  bool has_device_memory() const override { return true; }
  Allocator* host_allocator() override { return cpu_->allocator(); }
  absl::StatusOr<Tensor> CopyToHost(const Tensor& t) override {
    return CopyTo(cpu_->allocator(), t);
  }
  absl::StatusOr<Tensor> CopyFromHost(const Tensor& t) override { return CopyTo(memory_.get(), t); }

 private:
  static absl::StatusOr<Tensor> CopyTo(Allocator* a, const Tensor& t) {
    absl::StatusOr<Tensor> out = Tensor::Allocate(a, t.dtype(), t.shape());
    if (out.ok() && t.TotalBytes() > 0) std::memcpy(out->raw_data(), t.raw_data(), t.TotalBytes());
    return out;
  }

  std::shared_ptr<FakeDeviceMemory> memory_;
  std::unique_ptr<Device> cpu_;
};

std::string Xpu(int task) { return absl::StrCat("/job:w/replica:0/task:", task, "/device:XPU:0"); }

// kHandBack: takes the member, then hands it back later, from another
// thread, with Unimplemented (NCCL, once the members found they share a GPU).
enum class Mode { kDecline, kTake, kRefuse, kHandBack };
std::atomic<Mode> g_mode{Mode::kDecline};
std::atomic<int> g_calls{0};

// Takes the collective by swapping inputs through the transport under the
// execution's prefix and summing (float, two members).
absl::Status FakeCrossProcess(const CollectiveParams& p, const std::string& execution,
                              Device* device, const Tensor& input, CollectiveTransport* transport,
                              std::function<void(absl::StatusOr<Tensor>)> done) {
  ++g_calls;
  if (g_mode == Mode::kDecline) return absl::UnimplementedError("not this one");
  if (g_mode == Mode::kRefuse) return absl::InternalError("the fake refuses");
  if (g_mode == Mode::kHandBack) {
    std::thread([done] {
      absl::SleepFor(absl::Milliseconds(20));
      done(absl::UnimplementedError("members share a GPU"));
    }).detach();
    return absl::OkStatus();
  }
  EXPECT_EQ(execution.rfind(absl::StrCat("g", p.group_key, "/i", p.instance_key, "/n"), 0), 0u)
      << execution;
  absl::StatusOr<Tensor> mine = device->CopyToHost(input);
  if (!mine.ok()) return mine.status();
  const int peer = 1 - p.rank;
  transport->Send(p.group_devices[peer], execution + "/fake", *mine, p.timeout_ms,
                  [](absl::Status s) { EXPECT_TRUE(s.ok()) << s; });
  transport->Recv(p.group_devices[peer], p.group_devices[p.rank], execution + "/fake", p.timeout_ms,
                  [device, mine = *mine, done](absl::StatusOr<Tensor> theirs) {
                    if (!theirs.ok()) return done(theirs.status());
                    Tensor sum(DT_FLOAT, mine.shape());
                    for (int64_t i = 0; i < sum.NumElements(); ++i) {
                      sum.data<float>()[i] = mine.data<float>()[i] + theirs->data<float>()[i];
                    }
                    done(device->CopyFromHost(sum));
                  });
  return absl::OkStatus();
}

class CrossProcessAllReduceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_calls = 0;
    table_.SetCrossProcess("XPU", &FakeCrossProcess);
    for (int r = 0; r < 2; ++r) {
      devices_.push_back(std::make_unique<XpuDevice>(Xpu(r)));
      execs_.push_back(std::make_unique<CollectiveExecutor>(&box_, &table_));
    }
  }

  CollectiveParams Params(const std::string& hint = "auto") const {
    CollectiveParams p;
    p.group_key = 3;
    p.instance_key = 9;
    p.group_devices = {Xpu(0), Xpu(1)};
    p.timeout_ms = 5000;
    p.communication_hint = hint;
    p.node_name = "hooked";
    return p;
  }

  // Both members (on their own threads); inputs {r+1, 10(r+1)} in device
  // memory unless on_host.
  std::vector<Result> RunBoth(const CollectiveParams& base, bool on_host = false) {
    std::vector<std::optional<Result>> results(2);
    absl::Notification done[2];
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r) {
      threads.emplace_back([&, r] {
        Tensor x = Tensor::FromVector<float>({r + 1.0f, 10.0f * (r + 1)});
        if (!on_host) x = *devices_[r]->CopyFromHost(x);
        CollectiveParams p = base;
        p.rank = r;
        execs_[r]->Run(p, devices_[r].get(), x, [&, r](Result res) {
          results[r] = std::move(res);
          done[r].Notify();
        });
      });
    }
    for (auto& t : threads) t.join();
    std::vector<Result> out;
    for (int r = 0; r < 2; ++r) {
      if (!done[r].WaitForNotificationWithTimeout(absl::Seconds(10))) {
        out.push_back(absl::InternalError("never finished"));
      } else {
        out.push_back(*results[r]);
      }
    }
    return out;
  }

  void ExpectSums(const std::vector<Result>& out, bool on_device) {
    for (int r = 0; r < 2; ++r) {
      ASSERT_TRUE(out[r].ok()) << "rank " << r << ": " << out[r].status();
      EXPECT_EQ(out[r]->on_device(), on_device) << "rank " << r;
      EXPECT_EQ(out[r]->flat<float>()[0], 3.0f);
      EXPECT_EQ(out[r]->flat<float>()[1], 30.0f);
    }
  }

  AllReduceTable table_;   // what the executors' backends provide
  CollectiveMailbox box_;  // outlives the executors
  std::vector<std::unique_ptr<XpuDevice>> devices_;
  std::vector<std::unique_ptr<CollectiveExecutor>> execs_;
};

TEST_F(CrossProcessAllReduceTest, Provided) {
  EXPECT_TRUE(table_.CrossProcessAllReduceFor("XPU") != nullptr);
  EXPECT_TRUE(table_.CrossProcessAllReduceFor("NPU") == nullptr);
  EXPECT_TRUE(table_.LocalAllReduceFor("XPU") == nullptr);
}

TEST_F(CrossProcessAllReduceTest, TakenByTheImplementation) {
  g_mode = Mode::kTake;
  ExpectSums(RunBoth(Params()), /*on_device=*/true);
  EXPECT_EQ(g_calls, 2);
  ExpectSums(RunBoth(Params("nccl")), /*on_device=*/true);
  EXPECT_EQ(g_calls, 4);
}

TEST_F(CrossProcessAllReduceTest, UnimplementedFallsBackToTheRing) {
  g_mode = Mode::kDecline;
  ExpectSums(RunBoth(Params()), /*on_device=*/true);
  EXPECT_EQ(g_calls, 2);
}

// Two workers sharing one GPU: NCCL refuses such a communicator ("Duplicate
// GPU detected"), which members learn only together, after they were taken.
TEST_F(CrossProcessAllReduceTest, HandedBackLaterRunsTheRing) {
  g_mode = Mode::kHandBack;
  ExpectSums(RunBoth(Params()), /*on_device=*/true);
  EXPECT_EQ(g_calls, 2);
  ExpectSums(RunBoth(Params()), /*on_device=*/true);  // the next execution too
  EXPECT_EQ(g_calls, 4);
}

TEST_F(CrossProcessAllReduceTest, RingHintAndHostInputsSkipTheImplementation) {
  g_mode = Mode::kRefuse;  // would fail if called
  ExpectSums(RunBoth(Params("ring")), /*on_device=*/true);
  ExpectSums(RunBoth(Params(), /*on_host=*/true), /*on_device=*/false);
  EXPECT_EQ(g_calls, 0);
}

TEST_F(CrossProcessAllReduceTest, OtherErrorsFailTheMemberWithContext) {
  g_mode = Mode::kRefuse;
  CollectiveParams p = Params();
  p.timeout_ms = 500;
  std::vector<Result> out = RunBoth(p);
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(out[r].ok()) << "rank " << r;
    EXPECT_TRUE(absl::IsInternal(out[r].status())) << out[r].status();
    EXPECT_TRUE(absl::StrContains(out[r].status().message(), "node 'hooked'")) << out[r].status();
    EXPECT_TRUE(absl::StrContains(out[r].status().message(), "the fake refuses"))
        << out[r].status();
  }
}

}  // namespace
}  // namespace sluice
