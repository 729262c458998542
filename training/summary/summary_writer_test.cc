// SummaryWriter end to end: summaries from the summary ops run in a session,
// scalars, a histogram, the graph and session logs, read back record by
// record (framing and CRCs checked here by hand, then with RecordReader) and,
// when TensorBoard is installed for /usr/bin/python3, with its own loader.
#include "training/summary/summary_writer.h"

#include <unistd.h>

#include <cfloat>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "session/direct_session.h"
#include "runtime/io/record_reader.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/io/summary_ops.h"
#include "runtime/crc32c.h"
#include "runtime/session.h"

namespace sluice {
namespace {

using ::tensorflow::Event;
using ::tensorflow::SessionLog;

std::string TempDir() {
  const char* env = std::getenv("TEST_TMPDIR");
  std::string base = env != nullptr ? env : std::filesystem::temp_directory_path().string();
  const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = base + "/summary_" + info->name();
  std::filesystem::remove_all(dir);
  return dir;
}

uint32_t Le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// Splits the file into payloads by hand, checking both CRCs of every record.
std::vector<std::string> SplitRecordsByHand(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> records;
  size_t at = 0;
  while (at < bytes.size()) {
    EXPECT_LE(at + 12, bytes.size());
    if (at + 12 > bytes.size()) break;
    const uint64_t length = Le32(bytes, at) | uint64_t{Le32(bytes, at + 4)} << 32;
    EXPECT_EQ(UnmaskCrc32c(Le32(bytes, at + 8)), Crc32c(bytes.data() + at, 8)) << "at " << at;
    EXPECT_LE(at + 16 + length, bytes.size());
    if (at + 16 + length > bytes.size()) break;
    const std::string data = bytes.substr(at + 12, length);
    EXPECT_EQ(UnmaskCrc32c(Le32(bytes, at + 12 + length)), Crc32c(data.data(), data.size()))
        << "at " << at;
    records.push_back(data);
    at += 16 + length;
  }
  EXPECT_EQ(at, bytes.size());
  return records;
}

// A graph with the summary ops: loss and weights, merged.
struct SummaryGraph {
  Scope scope = Scope::NewRootScope(BuiltinOps());
  Output loss, weights, merged;
  SummaryGraph() {
    loss = ops::Placeholder(scope.WithOpName("loss"), DT_FLOAT);
    weights = ops::Placeholder(scope.WithOpName("weights"), DT_FLOAT);
    Output a = ops::ScalarSummary(scope, "loss", loss);
    Output b = ops::HistogramSummary(scope, "weights", weights);
    merged = ops::MergeSummary(scope.WithOpName("merged"), {a, b});
  }
};

// Writes: START, graph, steps 1..3 of merged summaries plus an "lr" scalar,
// a direct histogram, a CHECKPOINT log. Returns the file name.
std::string WriteRun(const std::string& logdir) {
  SummaryGraph g;
  EXPECT_TRUE(g.scope.ok()) << g.scope.status();
  absl::StatusOr<GraphDef> def = g.scope.ToGraphDef();
  EXPECT_TRUE(def.ok()) << def.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *def);
  EXPECT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::unique_ptr<SummaryWriter>> w = SummaryWriter::Create(logdir);
  EXPECT_TRUE(w.ok()) << w.status();
  if (!sess.ok() || !w.ok()) return "";
  EXPECT_TRUE((*w)->AddSessionLog(SessionLog::START, "starting").ok());
  EXPECT_TRUE((*w)->AddGraph(*def).ok());
  for (int step = 1; step <= 3; ++step) {
    absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run(
        {{"loss", Tensor::Scalar<float>(1.0f / (1 << step))},
         {"weights", Tensor::FromVector<float>({-1, 0, 0.5f, static_cast<float>(step)})}},
        {"merged"}, {});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return "";
    EXPECT_TRUE((*w)->Add((*out)[0], step).ok());
    EXPECT_TRUE((*w)->AddScalar("lr", 0.1 * step, step).ok());
  }
  EXPECT_TRUE((*w)->AddHistogram("direct", {1.0, 2.0, 2.0}, 3).ok());
  EXPECT_TRUE((*w)->AddSessionLog(SessionLog::CHECKPOINT, "", "/tmp/ckpt-3", 3).ok());
  EXPECT_TRUE((*w)->Flush().ok());
  EXPECT_TRUE((*w)->Close().ok());
  return (*w)->filename();
}

TEST(SummaryWriterTest, EventSequence) {
  const std::string logdir = TempDir();
  const std::string file = WriteRun(logdir);
  ASSERT_FALSE(file.empty());
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  EXPECT_TRUE(std::regex_match(file, std::regex(logdir + R"(/events\.out\.tfevents\.\d{10}\.)" +
                                                std::regex_replace(host, std::regex(R"([.\-])"),
                                                                   R"(\$&)"))))
      << file;

  const std::vector<std::string> by_hand = SplitRecordsByHand(file);
  absl::StatusOr<std::vector<std::string>> records = ReadAllRecords(file);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(*records, by_hand);
  std::vector<Event> events;
  for (const std::string& r : *records) {
    Event e;
    ASSERT_TRUE(e.ParseFromString(r));
    events.push_back(e);
  }
  // version, START, graph, 3 x (merged, lr), direct histogram, CHECKPOINT
  ASSERT_EQ(events.size(), 1u + 1 + 1 + 6 + 1 + 1);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_EQ(events[1].session_log().status(), SessionLog::START);
  EXPECT_EQ(events[1].session_log().msg(), "starting");
  GraphDef graph;
  ASSERT_TRUE(graph.ParseFromString(events[2].graph_def()));
  EXPECT_GT(graph.node_size(), 4);
  for (int step = 1; step <= 3; ++step) {
    const Event& merged = events[1 + 2 * step];
    EXPECT_EQ(merged.step(), step);
    ASSERT_EQ(merged.summary().value_size(), 2);
    EXPECT_EQ(merged.summary().value(0).tag(), "loss");
    EXPECT_EQ(merged.summary().value(0).simple_value(), 1.0f / (1 << step));
    const auto& h = merged.summary().value(1).histo();
    EXPECT_EQ(merged.summary().value(1).tag(), "weights");
    EXPECT_EQ(h.num(), 4);
    EXPECT_EQ(h.min(), -1);
    EXPECT_EQ(h.max(), step);
    EXPECT_EQ(h.sum(), -0.5 + step);
    EXPECT_EQ(h.sum_squares(), 1.25 + step * step);
    const Event& lr = events[2 + 2 * step];
    EXPECT_EQ(lr.step(), step);
    EXPECT_EQ(lr.summary().value(0).tag(), "lr");
    EXPECT_EQ(lr.summary().value(0).simple_value(), static_cast<float>(0.1 * step));
  }
  const auto& direct = events[9].summary().value(0);
  EXPECT_EQ(direct.tag(), "direct");
  EXPECT_EQ(direct.histo().sum_squares(), 9);
  EXPECT_EQ(direct.histo().bucket_limit(direct.histo().bucket_limit_size() - 1), DBL_MAX);
  EXPECT_EQ(events[10].session_log().status(), SessionLog::CHECKPOINT);
  EXPECT_EQ(events[10].session_log().checkpoint_path(), "/tmp/ckpt-3");
  EXPECT_EQ(events[10].step(), 3);
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_GE(events[i].wall_time(), events[i - 1].wall_time()) << i;
  }
}

TEST(SummaryWriterTest, BadInput) {
  absl::StatusOr<std::unique_ptr<SummaryWriter>> w = SummaryWriter::Create(TempDir());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ((*w)->Add(std::string("\xff\xff\xff", 3), 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*w)->Add(Tensor::Scalar<float>(1), 1).code(), absl::StatusCode::kInvalidArgument);
  absl::Status nan = (*w)->AddHistogram("h", {1.0, std::nan("")}, 1);
  EXPECT_EQ(nan.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(nan.message().find("'h'"), std::string::npos) << nan;
  ASSERT_TRUE((*w)->Close().ok());
  absl::StatusOr<std::vector<std::string>> records = ReadAllRecords((*w)->filename());
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->size(), 1u);  // only the version event
}

// TensorBoard's own reader, when /usr/bin/python3 has the tensorboard package.
TEST(SummaryWriterTest, TensorBoardReadsIt) {
  if (std::system("/usr/bin/python3 -c 'import tensorboard' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "the tensorboard Python package is not installed for /usr/bin/python3";
  }
  const std::string logdir = TempDir();
  ASSERT_FALSE(WriteRun(logdir).empty());
  const std::string script = logdir + "/check.py";
  std::ofstream(script) << R"(import sys
from tensorboard.backend.event_processing import event_accumulator as ea
acc = ea.EventAccumulator(sys.argv[1], size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0})
acc.Reload()
tags = acc.Tags()
assert tags['graph'], tags
loss = [(e.step, e.value) for e in acc.Scalars('loss')]
assert loss == [(1, 0.5), (2, 0.25), (3, 0.125)], loss
assert [e.step for e in acc.Scalars('lr')] == [1, 2, 3]
hist = acc.Histograms('weights')
assert [h.step for h in hist] == [1, 2, 3], hist
assert hist[2].histogram_value.num == 4 and hist[2].histogram_value.max == 3, hist[2]
assert acc.Histograms('direct')[0].histogram_value.sum == 5
print('tensorboard ok')
)";
  const std::string command = "/usr/bin/python3 " + script + " " + logdir;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

}  // namespace
}  // namespace sluice
