#include "training/monitored_session.h"

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "training/stop_at_step_hook.h"
#include "training/training_testutil.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<Session> Shared(const TinyModel& m) {
  absl::StatusOr<std::unique_ptr<Session>> s = m.NewLocalSession();
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::shared_ptr<Session>(std::move(*s)) : nullptr;
}

template <typename T>
T Fetch(Session* s, const std::string& name) {
  absl::StatusOr<std::vector<Tensor>> out = s->Run({}, {name}, {});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].scalar<T>() : T();
}

MonitoredSessionOptions ChiefOptions(const TinyModel& m, std::shared_ptr<Session> shared) {
  MonitoredSessionOptions o;
  o.create_session = [shared] { return ForwardTo(shared); };
  o.init_op = "init";
  o.ready_tensors = m.ready_tensors;
  o.recovery_wait_ms = 1;
  return o;
}

std::string TempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/monitored_session_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// Records what it is given; asks to stop after `stop_after` steps.
class RecordingHook : public SessionRunHook {
 public:
  explicit RecordingHook(std::vector<std::string> fetches) : fetches_(std::move(fetches)) {}
  absl::Status Begin() override { ++begins; return absl::OkStatus(); }
  absl::Status AfterCreateSession(Session*) override { ++creations; return absl::OkStatus(); }
  std::vector<std::string> BeforeRun() override { return fetches_; }
  absl::Status AfterRun(const std::vector<Tensor>& values, RunContext* context) override {
    last_values = values;
    if (++runs >= stop_after) context->RequestStop();
    return absl::OkStatus();
  }
  absl::Status End(Session*) override { ++ends; return absl::OkStatus(); }

  int begins = 0, creations = 0, runs = 0, ends = 0, stop_after = 1 << 30;
  std::vector<Tensor> last_values;

 private:
  std::vector<std::string> fetches_;
};

TEST(MonitoredSessionTest, StopsAtStep) {
  TinyModel m;
  StopAtStepHook stop(5, "global_step:0");
  MonitoredSessionOptions o = ChiefOptions(m, Shared(m));
  o.hooks = {&stop};
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  int steps = 0;
  while (!(*ms)->ShouldStop() && steps < 100) {
    ASSERT_TRUE((*ms)->Run({}, {}, {"train"}).ok());
    ++steps;
  }
  EXPECT_EQ(steps, 5);
  EXPECT_EQ(Fetch<int64_t>((*ms)->session(), "global_step:0"), 5);
  EXPECT_TRUE((*ms)->Close().ok());
}

TEST(MonitoredSessionTest, ChiefInitializesWithoutCheckpoint) {
  TinyModel m;
  ASSERT_NE(m.saver, nullptr);
  MonitoredSessionOptions o = ChiefOptions(m, Shared(m));
  o.saver = m.saver.get();
  o.checkpoint_dir = TempDir("empty");  // no checkpoint there
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_EQ(Fetch<float>((*ms)->session(), "w:0"), 0.0f);
  EXPECT_EQ(Fetch<int64_t>((*ms)->session(), "global_step:0"), 0);
  EXPECT_TRUE(Fetch<bool>((*ms)->session(), "w_ready:0"));
}

TEST(MonitoredSessionTest, ChiefRestoresLatestCheckpoint) {
  TinyModel m;
  ASSERT_NE(m.saver, nullptr);
  const std::string dir = TempDir("restore");
  float saved_w;
  {
    std::shared_ptr<Session> first = Shared(m);
    ASSERT_TRUE(first->Run({}, {}, {"init"}).ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(first->Run({}, {}, {"train"}).ok());
    saved_w = Fetch<float>(first.get(), "w:0");
    ASSERT_TRUE(m.saver->Save(first.get(), dir, 3).ok());
  }
  ASSERT_NE(saved_w, 0.0f);
  MonitoredSessionOptions o = ChiefOptions(m, Shared(m));  // a fresh session
  o.saver = m.saver.get();
  o.checkpoint_dir = dir;
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_EQ(Fetch<float>((*ms)->session(), "w:0"), saved_w);
  EXPECT_EQ(Fetch<int64_t>((*ms)->session(), "global_step:0"), 3);
}

TEST(MonitoredSessionTest, ChiefKeepsAnInitializedModel) {
  TinyModel m;
  std::shared_ptr<Session> shared = Shared(m);
  ASSERT_TRUE(shared->Run({}, {}, {"init"}).ok());
  ASSERT_TRUE(shared->Run({}, {}, {"train"}).ok());
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms =
      MonitoredSession::Create(ChiefOptions(m, shared));
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_EQ(Fetch<int64_t>(shared.get(), "global_step:0"), 1);  // init did not run again
}

TEST(MonitoredSessionTest, ChiefWithoutInitOpOrCheckpointFails) {
  TinyModel m;
  MonitoredSessionOptions o = ChiefOptions(m, Shared(m));
  o.init_op.clear();
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  ASSERT_FALSE(ms.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(ms.status())) << ms.status();
  EXPECT_THAT(std::string(ms.status().message()), HasSubstr("w_ready:0"));
}

TEST(MonitoredSessionTest, WorkerWaitsForTheChief) {
  TinyModel m;
  std::shared_ptr<Session> shared = Shared(m);
  std::thread chief([&] {
    absl::SleepFor(absl::Milliseconds(300));
    absl::StatusOr<std::unique_ptr<MonitoredSession>> ms =
        MonitoredSession::Create(ChiefOptions(m, shared));
    EXPECT_TRUE(ms.ok()) << ms.status();
  });
  MonitoredSessionOptions o = ChiefOptions(m, shared);
  o.is_chief = false;
  o.wait_for_ready_ms = 10000;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<MonitoredSession>> worker = MonitoredSession::Create(o);
  const absl::Duration waited = absl::Now() - start;
  chief.join();
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_GE(waited, absl::Milliseconds(250));
  EXPECT_LT(waited, absl::Seconds(5));
  ASSERT_TRUE((*worker)->Run({}, {}, {"train"}).ok());
  EXPECT_EQ(Fetch<int64_t>(shared.get(), "global_step:0"), 1);
}

TEST(MonitoredSessionTest, WorkerTimesOutWhenNobodyInitializes) {
  TinyModel m;
  MonitoredSessionOptions o = ChiefOptions(m, Shared(m));
  o.is_chief = false;
  o.wait_for_ready_ms = 300;
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  ASSERT_FALSE(ms.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(ms.status())) << ms.status();
  const std::string msg(ms.status().message());
  EXPECT_THAT(msg, HasSubstr("300 ms"));
  EXPECT_THAT(msg, HasSubstr("w_ready:0"));
  EXPECT_THAT(msg, HasSubstr("global_step_ready:0"));
}

TEST(MonitoredSessionTest, RecoversFromUnavailable) {
  TinyModel m;
  std::shared_ptr<Session> shared = Shared(m);
  auto failures = std::make_shared<FailureBudget>(0);
  int created = 0;
  MonitoredSessionOptions o = ChiefOptions(m, shared);
  o.create_session = [&] {
    ++created;
    return ForwardTo(shared, failures);
  };
  RecordingHook hook({});
  o.hooks = {&hook};
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  ASSERT_TRUE((*ms)->Run({}, {}, {"train"}).ok());
  // The step, then the chief's readiness checks of two new sessions fail.
  failures->Set(3);
  absl::StatusOr<std::vector<Tensor>> out = (*ms)->Run({}, {"loss:0"}, {"train"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*ms)->recoveries(), 3);
  EXPECT_EQ(created, 4);
  EXPECT_EQ(hook.begins, 1);
  EXPECT_EQ(hook.creations, 2);  // the first session and the one that worked
  EXPECT_EQ(hook.runs, 2);
  // The shared variables survived: the retried step ran once more.
  EXPECT_EQ(Fetch<int64_t>(shared.get(), "global_step:0"), 2);
}

// Fails its first AfterRun with Unavailable, as a checkpoint save does when
// the parameter server dies under it.
class FailingOnceHook : public SessionRunHook {
 public:
  absl::Status AfterRun(const std::vector<Tensor>&, RunContext*) override {
    return ++runs == 1 ? absl::UnavailableError("ps died during the save") : absl::OkStatus();
  }
  int runs = 0;
};

TEST(MonitoredSessionTest, RecoversFromAHookFailingWithUnavailable) {
  TinyModel m;
  std::shared_ptr<Session> shared = Shared(m);
  int created = 0;
  MonitoredSessionOptions o = ChiefOptions(m, shared);
  o.create_session = [&] {
    ++created;
    return ForwardTo(shared);
  };
  FailingOnceHook hook;
  o.hooks = {&hook};
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  absl::StatusOr<std::vector<Tensor>> out = (*ms)->Run({}, {"loss:0"}, {"train"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*ms)->recoveries(), 1);
  EXPECT_EQ(created, 2);
  EXPECT_EQ(hook.runs, 2);
  // The step was run again in the new session.
  EXPECT_EQ(Fetch<int64_t>(shared.get(), "global_step:0"), 2);
}

TEST(MonitoredSessionTest, GivesUpAfterMaxRecoveries) {
  TinyModel m;
  std::shared_ptr<Session> shared = Shared(m);
  auto failures = std::make_shared<FailureBudget>(0);
  MonitoredSessionOptions o = ChiefOptions(m, shared);
  o.create_session = [&] { return ForwardTo(shared, failures); };
  o.max_recoveries = 2;
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  failures->Set(100);
  absl::StatusOr<std::vector<Tensor>> out = (*ms)->Run({}, {}, {"train"});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsUnavailable(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("after 2 recoveries"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("injected failure"));
  EXPECT_EQ((*ms)->recoveries(), 2);
}

// While a task is gone the session says what it waits for, and gives up
// after recovery_timeout_s with an error naming the last failure (before:
// the workers waited without a word).
TEST(MonitoredSessionTest, WaitingIsReportedAndBoundedInTime) {
  TinyModel m;
  std::shared_ptr<Session> shared = Shared(m);
  auto failures = std::make_shared<FailureBudget>(0);
  MonitoredSessionOptions o = ChiefOptions(m, shared);
  o.create_session = [&] { return ForwardTo(shared, failures); };
  o.max_recoveries = 1000;
  o.recovery_wait_ms = 20;
  o.recovery_timeout_s = 0.5;
  o.waiting_log_every_s = 0.1;
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  failures->Set(1000000);
  testing::internal::CaptureStderr();
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Tensor>> out = (*ms)->Run({}, {}, {"train"});
  const absl::Duration took = absl::Now() - start;
  const std::string said = testing::internal::GetCapturedStderr();
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("gave up recovering after"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("injected failure"));
  EXPECT_LT(took, absl::Seconds(3));
  EXPECT_THAT(said, HasSubstr("monitored session: waiting"));
  EXPECT_THAT(said, HasSubstr("injected failure"));
}

TEST(MonitoredSessionTest, OtherErrorsAreNotRetried) {
  TinyModel m;
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms =
      MonitoredSession::Create(ChiefOptions(m, Shared(m)));
  ASSERT_TRUE(ms.ok()) << ms.status();
  absl::StatusOr<std::vector<Tensor>> out = (*ms)->Run({}, {"no_such_node:0"}, {});
  EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
  EXPECT_EQ((*ms)->recoveries(), 0);
}

TEST(MonitoredSessionTest, HookFetchesAreSplitOff) {
  TinyModel m;
  RecordingHook a({"loss", "global_step:0"});
  RecordingHook b({"loss:0"});
  b.stop_after = 2;
  MonitoredSessionOptions o = ChiefOptions(m, Shared(m));
  o.hooks = {&a, &b};
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  absl::StatusOr<std::vector<Tensor>> out = (*ms)->Run({}, {"loss:0"}, {"train"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_FLOAT_EQ((*out)[0].scalar<float>(), 9.0f);  // (0 - 3)^2
  ASSERT_EQ(a.last_values.size(), 2u);
  EXPECT_FLOAT_EQ(a.last_values[0].scalar<float>(), 9.0f);
  EXPECT_EQ(a.last_values[1].dtype(), DT_INT64);
  ASSERT_EQ(b.last_values.size(), 1u);
  EXPECT_FALSE((*ms)->ShouldStop());
  ASSERT_TRUE((*ms)->Run({{"target:0", Tensor::Scalar<float>(1.0f)}}, {}, {"train"}).ok());
  EXPECT_TRUE((*ms)->ShouldStop());
  EXPECT_TRUE((*ms)->Close().ok());
  EXPECT_EQ(a.ends, 1);
  EXPECT_TRUE((*ms)->Close().ok());
  EXPECT_EQ(a.ends, 1);
  EXPECT_TRUE(absl::IsFailedPrecondition((*ms)->Run({}, {}, {"train"}).status()));
}

TEST(MonitoredSessionTest, RequiresCreateSession) {
  EXPECT_TRUE(absl::IsInvalidArgument(MonitoredSession::Create({}).status()));
}

}  // namespace
}  // namespace sluice
