#include "training/hooks.h"

#include <signal.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/io/record_reader.h"
#include "training/monitored_session.h"
#include "graph/proto/event.pb.h"
#include "training/training_testutil.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/hooks_test_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// A chief MonitoredSession over a fresh local session of `m` with `hooks`.
std::unique_ptr<MonitoredSession> Start(const TinyModel& m, std::vector<SessionRunHook*> hooks) {
  MonitoredSessionOptions o;
  o.create_session = [&m] { return m.NewLocalSession(); };
  o.init_op = "init";
  o.ready_tensors = m.ready_tensors;
  o.hooks = std::move(hooks);
  absl::StatusOr<std::unique_ptr<MonitoredSession>> ms = MonitoredSession::Create(o);
  EXPECT_TRUE(ms.ok()) << ms.status();
  return ms.ok() ? *std::move(ms) : nullptr;
}

// Runs "train" until a hook stops the loop (at most 100 steps).
int TrainUntilStopped(MonitoredSession* ms) {
  int steps = 0;
  while (!ms->ShouldStop() && steps < 100) {
    absl::Status s = ms->Run({}, {}, {"train"}).status();
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    ++steps;
  }
  return steps;
}

Tensor NanTarget() { return Tensor::Scalar<float>(std::numeric_limits<float>::quiet_NaN()); }

TEST(NanTensorHookTest, FailsNamingTheGlobalStep) {
  TinyModel m;
  NanTensorHook nan("loss:0", /*stop_instead=*/false, "global_step:0");
  std::unique_ptr<MonitoredSession> ms = Start(m, {&nan});
  ASSERT_NE(ms, nullptr);
  ASSERT_TRUE(ms->Run({}, {}, {"train"}).ok());
  ASSERT_TRUE(ms->Run({}, {}, {"train"}).ok());
  absl::Status s = ms->Run({{"target:0", NanTarget()}}, {}, {"train"}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'loss:0' is nan at global step 2"));
}

TEST(NanTensorHookTest, CountsLocalStepsWithoutAGlobalStep) {
  TinyModel m;
  NanTensorHook nan("loss:0");
  std::unique_ptr<MonitoredSession> ms = Start(m, {&nan});
  ASSERT_NE(ms, nullptr);
  ASSERT_TRUE(ms->Run({}, {}, {"train"}).ok());
  absl::Status s = ms->Run({{"target:0", NanTarget()}}, {}, {"train"}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("at local step 2"));
}

TEST(NanTensorHookTest, StopsInsteadWhenAsked) {
  TinyModel m;
  NanTensorHook nan("loss:0", /*stop_instead=*/true);
  std::unique_ptr<MonitoredSession> ms = Start(m, {&nan});
  ASSERT_NE(ms, nullptr);
  ASSERT_TRUE(ms->Run({}, {}, {"train"}).ok());
  EXPECT_FALSE(ms->ShouldStop());
  ASSERT_TRUE(ms->Run({{"target:0", NanTarget()}}, {}, {"train"}).ok());
  EXPECT_TRUE(ms->ShouldStop());
}

TEST(LoggingHookTest, PrintsStepLossAndRate) {
  TinyModel m;
  std::ostringstream out;
  LoggingHook log("global_step:0", "loss:0", /*every_steps=*/2, &out);
  StopAtStepHook stop(6, "global_step:0");
  std::unique_ptr<MonitoredSession> ms = Start(m, {&log, &stop});
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(TrainUntilStopped(ms.get()), 6);
  std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out.str();
  EXPECT_EQ(lines[0], "step 0: loss=9.0000");  // (0 - 3)^2, no rate yet
  const std::regex with_rate(R"(step (2|4): loss=\d+\.\d{4} \(\d+\.\d steps/s\))");
  EXPECT_TRUE(std::regex_match(lines[1], with_rate)) << lines[1];
  EXPECT_TRUE(std::regex_match(lines[2], with_rate)) << lines[2];
  EXPECT_THAT(lines[1], HasSubstr("step 2:"));
  EXPECT_THAT(lines[2], HasSubstr("step 4:"));
}

std::vector<std::string> Checkpoints(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> list = ListCheckpoints(dir);
  EXPECT_TRUE(list.ok()) << list.status();
  return list.ok() ? *list : std::vector<std::string>{};
}

TEST(CheckpointSaverHookTest, SavesEveryNStepsAndAtEnd) {
  TinyModel m(SaverOptions{.max_to_keep = 0});
  ASSERT_NE(m.saver, nullptr);
  const std::string dir = TempDir("every");
  CheckpointSaverHook ckpt(m.saver.get(), dir, "global_step:0",
                           {.every_steps = 5, .every_secs = 0});
  StopAtStepHook stop(12, "global_step:0");
  std::unique_ptr<MonitoredSession> ms = Start(m, {&ckpt, &stop});
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(TrainUntilStopped(ms.get()), 12);
  EXPECT_THAT(Checkpoints(dir), ElementsAre(dir + "/model.ckpt-5", dir + "/model.ckpt-10"));
  ASSERT_TRUE(ms->Close().ok());
  EXPECT_EQ(ckpt.last_saved(), dir + "/model.ckpt-12");
  EXPECT_THAT(Checkpoints(dir),
              ElementsAre(dir + "/model.ckpt-5", dir + "/model.ckpt-10", dir + "/model.ckpt-12"));
  for (int step : {5, 10, 12}) {
    const std::string prefix = dir + "/model.ckpt-" + std::to_string(step);
    EXPECT_TRUE(std::filesystem::exists(Saver::DataFilename(prefix, 0, m.saver->num_shards())))
        << prefix;
  }
}

// A save that finds no room (here: past RLIMIT_FSIZE, as ENOSPC would be)
// leaves training running; the next interval's save is tried again.
TEST(CheckpointSaverHookTest, DiskFullDoesNotStopTraining) {
  TinyModel m(SaverOptions{.max_to_keep = 0});
  ASSERT_NE(m.saver, nullptr);
  const std::string dir = TempDir("disk-full");
  CheckpointSaverHook ckpt(m.saver.get(), dir, "global_step:0",
                           {.every_steps = 5, .every_secs = 0});
  StopAtStepHook stop(12, "global_step:0");
  std::unique_ptr<MonitoredSession> ms = Start(m, {&ckpt, &stop});
  ASSERT_NE(ms, nullptr);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(ms->Run({}, {}, {"train"}).ok());
  ASSERT_EQ(ckpt.last_saved(), dir + "/model.ckpt-5");
  rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  sighandler_t old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit tiny = old_limit;
  tiny.rlim_cur = 8;  // every shard is larger
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tiny), 0);
  int64_t steps = 6;
  while (!ms->ShouldStop() && steps < 40) {
    absl::Status s = ms->Run({}, {}, {"train"}).status();
    ASSERT_TRUE(s.ok()) << s;
    ++steps;
  }
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  signal(SIGXFSZ, old_handler);
  EXPECT_EQ(steps, 12);                                 // trained to the end
  EXPECT_EQ(ckpt.last_saved(), dir + "/model.ckpt-5");  // step 10 found no room
  ASSERT_TRUE(ms->Close().ok());                        // room again: End saves
  EXPECT_EQ(ckpt.last_saved(), dir + "/model.ckpt-12");
}

TEST(CheckpointSaverHookTest, HonoursMaxToKeep) {
  TinyModel m(SaverOptions{.max_to_keep = 2});
  ASSERT_NE(m.saver, nullptr);
  const std::string dir = TempDir("keep");
  CheckpointSaverHook ckpt(m.saver.get(), dir, "global_step:0",
                           {.every_steps = 3, .every_secs = 0, .basename = "tiny"});
  StopAtStepHook stop(10, "global_step:0");
  std::unique_ptr<MonitoredSession> ms = Start(m, {&ckpt, &stop});
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(TrainUntilStopped(ms.get()), 10);
  ASSERT_TRUE(ms->Close().ok());
  EXPECT_THAT(Checkpoints(dir), ElementsAre(dir + "/tiny-9", dir + "/tiny-10"));
  const int shards = m.saver->num_shards();
  EXPECT_FALSE(std::filesystem::exists(Saver::DataFilename(dir + "/tiny-3", 0, shards)));
  EXPECT_FALSE(std::filesystem::exists(Saver::DataFilename(dir + "/tiny-6", 0, shards)));
  EXPECT_TRUE(std::filesystem::exists(Saver::DataFilename(dir + "/tiny-9", 0, shards)));
}

TEST(CheckpointSaverHookTest, SavesByTime) {
  TinyModel m;
  ASSERT_NE(m.saver, nullptr);
  const std::string dir = TempDir("time");
  CheckpointSaverHook ckpt(m.saver.get(), dir, "global_step:0",
                           {.every_steps = 0, .every_secs = 1e-6});
  std::unique_ptr<MonitoredSession> ms = Start(m, {&ckpt});
  ASSERT_NE(ms, nullptr);
  ASSERT_TRUE(ms->Run({}, {}, {"train"}).ok());
  EXPECT_EQ(ckpt.last_saved(), dir + "/model.ckpt-1");
}

TEST(SummarySaverHookTest, FetchesTheSummaryOnlyWhenWriting) {
  const std::string dir = TempDir("fetch");
  absl::StatusOr<std::unique_ptr<SummaryWriter>> writer = SummaryWriter::Create(dir);
  ASSERT_TRUE(writer.ok()) << writer.status();
  SummarySaverHook hook("summaries:0", writer->get(), "global_step:0", 3);
  ::tensorflow::Summary summary;
  summary.add_value()->set_tag("x");
  const Tensor serialized = Tensor::Scalar<std::string>(summary.SerializeAsString());
  RunContext context(nullptr);
  std::vector<size_t> fetched;
  for (int64_t step = 0; step < 7; ++step) {
    std::vector<std::string> names = hook.BeforeRun();
    fetched.push_back(names.size());
    std::vector<Tensor> values = {Tensor::Scalar<int64_t>(step)};
    if (names.size() == 2) values.push_back(serialized);
    ASSERT_TRUE(hook.AfterRun(values, &context).ok());
  }
  EXPECT_THAT(fetched, ElementsAre(2, 1, 1, 2, 1, 1, 2));
}

TEST(SummarySaverHookTest, WritesReadableEvents) {
  TinyModel m;
  const std::string dir = TempDir("events");
  absl::StatusOr<std::unique_ptr<SummaryWriter>> writer = SummaryWriter::Create(dir);
  ASSERT_TRUE(writer.ok()) << writer.status();
  SummarySaverHook summaries("summaries:0", writer->get(), "global_step:0", 3);
  StopAtStepHook stop(7, "global_step:0");
  std::unique_ptr<MonitoredSession> ms = Start(m, {&summaries, &stop});
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(TrainUntilStopped(ms.get()), 7);
  ASSERT_TRUE(ms->Close().ok());  // End flushes
  absl::StatusOr<std::vector<std::string>> records = ReadAllRecords((*writer)->filename());
  ASSERT_TRUE(records.ok()) << records.status();
  std::vector<int64_t> steps;
  std::vector<float> losses;
  for (const std::string& record : *records) {
    ::tensorflow::Event event;
    ASSERT_TRUE(event.ParseFromString(record));
    if (!event.has_summary()) continue;
    ASSERT_EQ(event.summary().value_size(), 1);
    EXPECT_EQ(event.summary().value(0).tag(), "loss");
    steps.push_back(event.step());
    losses.push_back(event.summary().value(0).simple_value());
  }
  EXPECT_THAT(steps, ElementsAre(0, 3, 6));
  ASSERT_EQ(losses.size(), 3u);
  EXPECT_FLOAT_EQ(losses[0], 9.0f);
  EXPECT_LT(losses[2], losses[1]);
  EXPECT_LT(losses[1], losses[0]);
}

}  // namespace
}  // namespace sluice
