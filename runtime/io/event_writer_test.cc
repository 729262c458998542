// EventWriter: file name, version event, event sequence, flushing (explicit
// and periodic) and concurrent writers.
#include "runtime/io/event_writer.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/io/record_reader.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

std::string TempDir() {
  const char* env = std::getenv("TEST_TMPDIR");
  std::string base = env != nullptr ? env : std::filesystem::temp_directory_path().string();
  const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = base + "/events_" + info->name();
  std::filesystem::remove_all(dir);
  return dir;
}

std::string Host() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

std::vector<::tensorflow::Event> ReadEvents(const std::string& path) {
  absl::StatusOr<std::vector<std::string>> records = ReadAllRecords(path);
  EXPECT_TRUE(records.ok()) << records.status();
  std::vector<::tensorflow::Event> events;
  if (!records.ok()) return events;
  for (const std::string& r : *records) {
    ::tensorflow::Event e;
    EXPECT_TRUE(e.ParseFromString(r));
    events.push_back(std::move(e));
  }
  return events;
}

TEST(EventWriterTest, FileNameAndVersionEvent) {
  const std::string logdir = TempDir() + "/nested/run1";  // created on demand
  const int64_t before = absl::ToUnixSeconds(absl::Now());
  absl::StatusOr<std::unique_ptr<EventWriter>> w = EventWriter::Create(logdir);
  ASSERT_TRUE(w.ok()) << w.status();
  const int64_t after = absl::ToUnixSeconds(absl::Now());
  const std::filesystem::path file((*w)->filename());
  EXPECT_EQ(file.parent_path(), std::filesystem::path(logdir));
  std::smatch m;
  const std::string name = file.filename().string();
  ASSERT_TRUE(std::regex_match(name, m, std::regex(R"(events\.out\.tfevents\.(\d+)\.(.+))")))
      << name;
  EXPECT_GE(std::stoll(m[1]), before);
  EXPECT_LE(std::stoll(m[1]), after);
  EXPECT_EQ(m[2], Host());
  // The version event is on disk before any Flush.
  std::vector<::tensorflow::Event> events = ReadEvents((*w)->filename());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_NEAR(events[0].wall_time(), EventWallTimeNow(), 60);
  EXPECT_EQ(events[0].step(), 0);
}

TEST(EventWriterTest, Suffix) {
  const std::string logdir = TempDir();
  absl::StatusOr<std::unique_ptr<EventWriter>> a =
      EventWriter::Create(logdir, {.filename_suffix = "worker0"});
  absl::StatusOr<std::unique_ptr<EventWriter>> b =
      EventWriter::Create(logdir, {.filename_suffix = ".v2"});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE((*a)->filename().ends_with("." + Host() + ".worker0")) << (*a)->filename();
  EXPECT_TRUE((*b)->filename().ends_with("." + Host() + ".v2")) << (*b)->filename();
  EXPECT_EQ(EventWriter::Create("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EventWriterTest, EventSequence) {
  absl::StatusOr<std::unique_ptr<EventWriter>> w = EventWriter::Create(TempDir());
  ASSERT_TRUE(w.ok()) << w.status();
  ::tensorflow::GraphDef graph;
  graph.add_node()->set_name("x");
  graph.mutable_node(0)->set_op("Placeholder");
  ASSERT_TRUE((*w)->WriteGraph(graph).ok());
  ASSERT_TRUE((*w)->WriteScalar("loss", 10, 0.5f).ok());
  ::tensorflow::Summary summary;
  summary.add_value()->set_tag("a");
  summary.mutable_value(0)->set_simple_value(1.5f);
  summary.add_value()->set_tag("b");
  summary.mutable_value(1)->mutable_histo()->set_num(3);
  ASSERT_TRUE((*w)->WriteSummary(20, summary).ok());
  ::tensorflow::Event log;
  log.set_wall_time(1234.5);
  log.set_step(30);
  log.mutable_session_log()->set_status(::tensorflow::SessionLog::STOP);
  ASSERT_TRUE((*w)->WriteEvent(log).ok());
  ASSERT_TRUE((*w)->Flush().ok());

  std::vector<::tensorflow::Event> events = ReadEvents((*w)->filename());
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].file_version(), kEventFileVersion);
  ::tensorflow::GraphDef back;
  ASSERT_TRUE(back.ParseFromString(events[1].graph_def()));
  EXPECT_EQ(back.node(0).name(), "x");
  EXPECT_EQ(events[2].step(), 10);
  ASSERT_EQ(events[2].summary().value_size(), 1);
  EXPECT_EQ(events[2].summary().value(0).tag(), "loss");
  EXPECT_EQ(events[2].summary().value(0).simple_value(), 0.5f);
  EXPECT_EQ(events[3].step(), 20);
  EXPECT_EQ(events[3].summary().value(1).histo().num(), 3);
  EXPECT_EQ(events[4].wall_time(), 1234.5);  // kept when set
  EXPECT_EQ(events[4].session_log().status(), ::tensorflow::SessionLog::STOP);
  for (int i = 1; i < 4; ++i) {
    EXPECT_GE(events[i].wall_time(), events[i - 1].wall_time());
  }

  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_TRUE((*w)->Close().ok());
  EXPECT_EQ((*w)->WriteScalar("late", 1, 1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadEvents((*w)->filename()).size(), 5u);
}

TEST(EventWriterTest, FlushesPeriodically) {
  absl::StatusOr<std::unique_ptr<EventWriter>> w =
      EventWriter::Create(TempDir(), {.flush_interval = absl::Milliseconds(20)});
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->WriteScalar("x", 1, 2).ok());
  // No Flush call: the background thread must get the event to the file.
  size_t seen = 0;
  for (int i = 0; i < 500 && seen < 2; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    seen = ReadEvents((*w)->filename()).size();
  }
  EXPECT_EQ(seen, 2u);
}

TEST(EventWriterTest, ConcurrentWriters) {
  absl::StatusOr<std::unique_ptr<EventWriter>> w = EventWriter::Create(TempDir());
  ASSERT_TRUE(w.ok()) << w.status();
  constexpr int kThreads = 8, kEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        EXPECT_TRUE((*w)->WriteScalar("t" + std::to_string(t), i, static_cast<float>(i)).ok());
        if (i % 50 == 0) {
          EXPECT_TRUE((*w)->Flush().ok());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE((*w)->Close().ok());
  std::vector<::tensorflow::Event> events = ReadEvents((*w)->filename());
  ASSERT_EQ(events.size(), 1u + kThreads * kEach);
  std::set<std::pair<std::string, int64_t>> seen;
  for (size_t i = 1; i < events.size(); ++i) {
    const auto& v = events[i].summary().value(0);
    EXPECT_EQ(v.simple_value(), static_cast<float>(events[i].step()));
    seen.insert({v.tag(), events[i].step()});
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kEach));
}

}  // namespace
}  // namespace sluice
