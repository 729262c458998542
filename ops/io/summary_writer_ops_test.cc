// The TF2 summary writer ops in a session: every Write* op's event read
// back from the file (steps, tags, values, PNG and WAV payloads, metadata),
// one file per writer however often it is created, a new file after Close,
// flushing by queue length, and the errors (a writer not created or
// closed, bad protos, non-scalar inputs, a logdir outside the write roots).
#include "ops/io/summary_writer_ops.h"

#include <dirent.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/proto/event.pb.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/io/file_write_policy.h"
#include "ops/testutil/session_fixture.h"
#include "runtime/io/record_reader.h"

namespace sluice {
namespace {

using ::tensorflow::Event;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

std::string TestDir(const std::string& name) {
  const char* t = std::getenv("TEST_TMPDIR");
  return std::string(t != nullptr ? t : "/tmp") + "/summary_writer_ops_test_" + name;
}

std::vector<std::string> EventFiles(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.find("tfevents") != std::string::npos) out.push_back(dir + "/" + n);
  }
  closedir(d);
  return out;
}

std::vector<Event> ReadEvents(const std::string& path) {
  std::vector<Event> out;
  absl::StatusOr<std::vector<std::string>> records = ReadAllRecords(path);
  EXPECT_TRUE(records.ok()) << records.status();
  if (!records.ok()) return out;
  for (const std::string& r : *records) {
    out.emplace_back();
    EXPECT_TRUE(out.back().ParseFromString(r));
  }
  return out;
}

class SummaryWriterOpsTest : public testing_util::SessionFixture {
 protected:
  // A writer on `dir` and its creation node.
  void MakeWriter(const std::string& dir, int32_t max_queue = 10) {
    writer_ = ops::SummaryWriter(s_.WithOpName("writer"));
    create_ = ops::CreateSummaryFileWriter(s_.WithOpName("create"), writer_, dir, max_queue,
                                           120000, std::string(".v2"));
    flush_ = ops::FlushSummaryWriter(s_.WithOpName("flush"), writer_);
  }
  Output writer_;
  Node* create_ = nullptr;
  Node* flush_ = nullptr;
};

TEST_F(SummaryWriterOpsTest, EveryWriteOpLandsInTheEventFile) {
  const std::string dir = TestDir("all");
  MakeWriter(dir);
  Output step = ops::Const(s_, int64_t{7});
  ::tensorflow::SummaryMetadata meta;
  meta.mutable_plugin_data()->set_plugin_name("scalars");
  Node* writes[] = {
      ops::WriteScalarSummary(s_, writer_, step, "loss", 0.25f),
      ops::WriteHistogramSummary(s_, writer_, step, "w", ops::Const(s_, {1.0f, 2.0f, 2.0f})),
      ops::WriteImageSummary(s_, writer_, step, "img",
                             ops::Const(s_, Tensor::FromVector<float>(
                                                {0.0f, 0.5f, 1.0f, -1.0f}, TensorShape({2, 1, 2, 1}))),
                             ops::Const(s_, Tensor::FromVector<uint8_t>({255, 0, 0, 255})), 3),
      ops::WriteAudioSummary(s_, writer_, step, "clip",
                             ops::Const(s_, Tensor::FromVector<float>({0.5f, -0.5f},
                                                                      TensorShape({1, 2}))),
                             8000.0f, 1),
      ops::WriteSummary(s_, writer_, step, ops::Const(s_, {1, 2, 3}), "t",
                        ops::Const(s_, meta.SerializeAsString())),
  };
  Start({create_});
  for (Node* w : writes) ASSERT_TRUE(RunTarget(w).ok()) << w->name();
  ASSERT_TRUE(RunTarget(flush_).ok());

  std::vector<std::string> files = EventFiles(dir);
  ASSERT_THAT(files, SizeIs(1));
  EXPECT_THAT(files[0], HasSubstr(".v2"));
  std::vector<Event> events = ReadEvents(files[0]);
  ASSERT_THAT(events, SizeIs(6));
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_EQ(events[i].step(), 7);
    EXPECT_GT(events[i].wall_time(), 1.0e9);
  }
  const auto& scalar = events[1].summary().value(0);
  EXPECT_EQ(scalar.tag(), "loss");
  EXPECT_EQ(scalar.simple_value(), 0.25f);
  const auto& histo = events[2].summary().value(0).histo();
  EXPECT_EQ(histo.num(), 3);
  EXPECT_EQ(histo.sum(), 5);
  const auto& images = events[3].summary();
  ASSERT_EQ(images.value_size(), 2);
  EXPECT_EQ(images.value(0).tag(), "img/image/0");
  EXPECT_EQ(images.value(1).tag(), "img/image/1");
  EXPECT_EQ(images.value(0).image().width(), 2);
  EXPECT_EQ(images.value(0).image().height(), 1);
  EXPECT_EQ(images.value(0).image().colorspace(), 1);
  EXPECT_THAT(images.value(0).image().encoded_image_string(), StartsWith("\x89PNG"));
  const auto& audio = events[4].summary().value(0);
  EXPECT_EQ(audio.tag(), "clip/audio");
  EXPECT_EQ(audio.audio().length_frames(), 2);
  EXPECT_EQ(audio.audio().num_channels(), 1);
  EXPECT_EQ(audio.audio().content_type(), "audio/wav");
  EXPECT_THAT(audio.audio().encoded_audio_string(), StartsWith("RIFF"));
  const auto& tensor = events[5].summary().value(0);
  EXPECT_EQ(tensor.tag(), "t");
  EXPECT_EQ(tensor.metadata().plugin_data().plugin_name(), "scalars");
  EXPECT_EQ(tensor.tensor().dtype(), DT_INT32);
  EXPECT_EQ(tensor.tensor().tensor_content().size(), 12u);
}

TEST_F(SummaryWriterOpsTest, RawProtosGraphsAndImportedEvents) {
  const std::string dir = TestDir("raw");
  MakeWriter(dir);
  ::tensorflow::Summary a, b;
  a.add_value()->set_tag("a");
  b.add_value()->set_tag("b");
  Event imported;
  imported.set_step(99);
  imported.set_wall_time(5.0);
  imported.mutable_summary()->add_value()->set_tag("old");
  ::tensorflow::GraphDef g;
  g.add_node()->set_name("n");
  Node* raw = ops::WriteRawProtoSummary(
      s_, writer_, int64_t{3},
      ops::Const(s_, Tensor::FromVector<std::string>({a.SerializeAsString(), b.SerializeAsString()})));
  Node* graph = ops::WriteGraphSummary(s_, writer_, int64_t{0}, g.SerializeAsString());
  Node* import = ops::ImportEvent(s_, writer_, imported.SerializeAsString());
  Start({create_});
  ASSERT_TRUE(RunTarget(raw).ok());
  ASSERT_TRUE(RunTarget(graph).ok());
  ASSERT_TRUE(RunTarget(import).ok());
  ASSERT_TRUE(RunTarget(flush_).ok());
  std::vector<Event> events = ReadEvents(EventFiles(dir).at(0));
  ASSERT_THAT(events, SizeIs(5));
  EXPECT_EQ(events[1].summary().value(0).tag(), "a");
  EXPECT_EQ(events[2].summary().value(0).tag(), "b");
  EXPECT_EQ(events[2].step(), 3);
  ::tensorflow::GraphDef back;
  ASSERT_TRUE(back.ParseFromString(events[3].graph_def()));
  EXPECT_EQ(back.node(0).name(), "n");
  EXPECT_EQ(events[4].step(), 99);
  EXPECT_EQ(events[4].wall_time(), 5.0);
}

TEST_F(SummaryWriterOpsTest, OneFilePerOpeningAndANewOneAfterClose) {
  const std::string dir = TestDir("reopen");
  MakeWriter(dir, /*max_queue=*/0);
  Node* write = ops::WriteScalarSummary(s_, writer_, int64_t{1}, "x", 1.0f);
  Node* close = ops::CloseSummaryWriter(s_, writer_);
  Start({create_});
  ASSERT_TRUE(RunTarget(create_).ok());  // a second creation keeps the file
  ASSERT_TRUE(RunTarget(write).ok());
  // max_queue 0: the event is in the file without a flush.
  ASSERT_THAT(EventFiles(dir), SizeIs(1));
  EXPECT_THAT(ReadEvents(EventFiles(dir)[0]), SizeIs(2));
  ASSERT_TRUE(RunTarget(close).ok());
  ASSERT_TRUE(RunTarget(close).ok());  // closing twice is harmless
  absl::Status after = RunTarget(write);
  EXPECT_EQ(after.code(), absl::StatusCode::kFailedPrecondition) << after;
  EXPECT_THAT(after.message(), HasSubstr("was closed: run its CreateSummaryFileWriter first"));
  ASSERT_TRUE(RunTarget(create_).ok());
  ASSERT_TRUE(RunTarget(write).ok());
  EXPECT_THAT(EventFiles(dir), SizeIs(2));
}

TEST_F(SummaryWriterOpsTest, BadInputsSayWhatIsWrong) {
  const std::string dir = TestDir("bad");
  MakeWriter(dir);
  Node* early = ops::WriteScalarSummary(s_, writer_, int64_t{1}, "x", 1.0f);
  Node* vector_step = ops::WriteScalarSummary(s_, writer_, ops::Const(s_, {int64_t{1}, int64_t{2}}),
                                              "x", 1.0f);
  Node* nan = ops::WriteHistogramSummary(s_, writer_, int64_t{1}, "h",
                                         ops::Const(s_, {1.0f, std::nanf("")}));
  Node* raw = ops::WriteRawProtoSummary(s_, writer_, int64_t{1},
                                        ops::Const(s_, std::string("\xff\xff", 2)));
  Node* graph = ops::WriteGraphSummary(s_, writer_, int64_t{1}, std::string("\xff", 1));
  Node* meta = ops::WriteSummary(s_, writer_, int64_t{1}, 1.0f, "m", std::string("\xff", 1));
  Node* gray = ops::WriteImageSummary(
      s_, writer_, int64_t{1}, "i", ops::Const(s_, Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))),
      ops::Const(s_, Tensor::FromVector<uint8_t>({0})));
  Node* empty_dir = ops::CreateSummaryFileWriter(s_, ops::SummaryWriter(s_, "other"), std::string());
  Start({});
  absl::Status s = RunTarget(early);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("was never opened"));
  ASSERT_TRUE(RunTarget(create_).ok());
  EXPECT_THAT(RunTarget(vector_step).message(), HasSubstr("step must be a scalar"));
  EXPECT_THAT(RunTarget(nan).message(), HasSubstr("Nan in summary histogram for: h"));
  EXPECT_THAT(RunTarget(raw).message(), HasSubstr("Bad tf.Summary binary proto"));
  EXPECT_THAT(RunTarget(graph).message(), HasSubstr("Bad tf.GraphDef binary proto"));
  EXPECT_THAT(RunTarget(meta).message(), HasSubstr("not a serialized SummaryMetadata"));
  EXPECT_THAT(RunTarget(gray).message(), HasSubstr("4-D with last dim 1, 3, or 4"));
  EXPECT_THAT(RunTarget(empty_dir).message(), HasSubstr("empty logdir"));
}

// Last: the restriction holds for the rest of the process.
TEST_F(SummaryWriterOpsTest, ALogdirOutsideTheWriteRootsIsRefused) {
  const std::string root = TestDir("root");
  ASSERT_TRUE(RestrictGraphFileWrites({root}).ok());
  MakeWriter(TestDir("outside"));
  Node* inside = ops::CreateSummaryFileWriter(s_, ops::SummaryWriter(s_, "in"), root + "/run1");
  Start({});
  absl::Status s = RunTarget(create_);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_TRUE(RunTarget(inside).ok());
  EXPECT_THAT(EventFiles(root + "/run1"), SizeIs(1));
}

}  // namespace
}  // namespace sluice
