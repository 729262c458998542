// The reader ops in TensorFlow 1.x's string_input_producer pattern: a FIFO
// queue of file names, a reader, records read across two files (plain and
// GZIP) to the end, with ReaderReadV2 and ReaderReadUpToV2; the counters and
// ReaderResetV2; FixedLengthRecordReaderV2 with header, footer and hop; and
// bad files (missing, corrupt CRC, short record) giving errors that name the
// file and offset.
#include "ops/io/reader_ops.h"

#include <cstdio>

#include <zlib.h>
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/data_flow/queue_ops.h"
#include "runtime/io/record_writer.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records,
                  RecordCompression c = RecordCompression::kNone) {
  absl::StatusOr<std::unique_ptr<RecordWriter>> w = RecordWriter::Create(path, c);
  ASSERT_TRUE(w.ok()) << w.status();
  for (const std::string& r : records) ASSERT_TRUE((*w)->WriteRecord(r).ok());
  ASSERT_TRUE((*w)->Close().ok());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

class ReaderTest : public ::testing::Test {
 protected:
  // A queue of `files` (enqueued and closed by Start), and a reader.
  void Build(const std::vector<std::string>& files, Output reader) {
    files_ = ops::FIFOQueueV2(s_.WithOpName("input_producer"), {DT_STRING});
    enqueue_ = ops::QueueEnqueueManyV2(s_, files_, {ops::Const(s_, Tensor::FromVector(files))});
    close_ = ops::QueueCloseV2(s_, files_);
    reader_ = reader;
    read_ = ops::ReaderReadV2(s_, reader_, files_);
    n_ = ops::Placeholder(s_, DT_INT64);
    read_up_to_ = ops::ReaderReadUpToV2(s_, reader_, files_, n_);
    produced_ = ops::ReaderNumRecordsProducedV2(s_, reader_);
    completed_ = ops::ReaderNumWorkUnitsCompletedV2(s_, reader_);
    reset_ = ops::ReaderResetV2(s_, reader_);
  }
  void Start(bool close = true) {
    ASSERT_TRUE(s_.ok()) << s_.status();
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
    ASSERT_TRUE(sess.ok()) << sess.status();
    sess_ = std::move(*sess);
    ASSERT_TRUE(sess_->Run({}, {}, {enqueue_}).ok());
    if (close) ASSERT_TRUE(sess_->Run({}, {}, {close_}).ok());
  }
  absl::StatusOr<std::pair<std::string, std::string>> Read() {
    absl::StatusOr<std::vector<Tensor>> r = sess_->Run({}, {read_.key, read_.value}, {});
    if (!r.ok()) return r.status();
    return std::make_pair((*r)[0].scalar<std::string>(), (*r)[1].scalar<std::string>());
  }
  absl::StatusOr<std::vector<std::string>> ReadUpTo(int64_t n) {
    absl::StatusOr<std::vector<Tensor>> r =
        sess_->Run({{n_, Tensor::Scalar<int64_t>(n)}}, {read_up_to_.key, read_up_to_.value}, {});
    if (!r.ok()) return r.status();
    auto v = (*r)[1].flat<std::string>();
    EXPECT_EQ((*r)[0].NumElements(), (*r)[1].NumElements());
    return std::vector<std::string>(v.begin(), v.end());
  }
  int64_t Count(const Output& o) {
    absl::StatusOr<std::vector<Tensor>> r = sess_->Run({}, {o}, {});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? (*r)[0].scalar<int64_t>() : -1;
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
  std::unique_ptr<Session> sess_;
  Output files_, reader_, n_, produced_, completed_;
  Node* enqueue_ = nullptr;
  Node* close_ = nullptr;
  Node* reset_ = nullptr;
  ops::ReaderReadOutputs read_, read_up_to_;
};

TEST_F(ReaderTest, TFRecordsAcrossTwoFilesToTheEnd) {
  const std::string a = TempPath("a.tfrecord"), b = TempPath("b.tfrecord");
  WriteRecords(a, {"a0", "a1", "a2"});
  WriteRecords(b, {"b0", "b1"});
  Build({a, b}, ops::TFRecordReaderV2(s_));
  Start();
  std::vector<std::string> keys, values;
  while (true) {
    absl::StatusOr<std::pair<std::string, std::string>> r = Read();
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange) << r.status();
      EXPECT_THAT(std::string(r.status().message()),
                  HasSubstr("is closed and has insufficient elements"));
      break;
    }
    keys.push_back(r->first);
    values.push_back(r->second);
  }
  EXPECT_EQ(values, (std::vector<std::string>{"a0", "a1", "a2", "b0", "b1"}));
  // Keys are "<file>:<byte offset>": 16 bytes of framing + 2 of data each.
  EXPECT_EQ(keys[0], a + ":0");
  EXPECT_EQ(keys[1], a + ":18");
  EXPECT_EQ(keys[3], b + ":0");
  EXPECT_EQ(Count(produced_), 5);
  EXPECT_EQ(Count(completed_), 2);
  ASSERT_TRUE(sess_->Run({}, {}, {reset_}).ok());
  EXPECT_EQ(Count(produced_), 0);
}

TEST_F(ReaderTest, ReadUpToCrossesFilesAndEndsWithWhatItHas) {
  const std::string a = TempPath("c.tfrecord.gz"), b = TempPath("d.tfrecord.gz");
  WriteRecords(a, {"c0", "c1", "c2"}, RecordCompression::kGzip);
  WriteRecords(b, {"d0", "d1"}, RecordCompression::kGzip);
  Build({a, b}, ops::TFRecordReaderV2(s_, {.compression_type = "GZIP"}));
  Start();
  absl::StatusOr<std::vector<std::string>> r = ReadUpTo(2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<std::string>{"c0", "c1"}));
  r = ReadUpTo(2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<std::string>{"c2", "d0"}));
  r = ReadUpTo(10);  // the queue is closed: what is left
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<std::string>{"d1"}));
  r = ReadUpTo(10);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange) << r.status();
}

TEST_F(ReaderTest, BadFilesNameTheFileAndOffset) {
  const std::string good = TempPath("good.tfrecord"), bad = TempPath("bad.tfrecord");
  const std::string missing = TempPath("missing.tfrecord");
  WriteRecords(good, {"g0"});
  WriteRecords(bad, {"x0", "x1"});
  {
    std::FILE* f = std::fopen(bad.c_str(), "r+b");
    std::fseek(f, 18 + 12, SEEK_SET);  // the second record's data
    std::fputc('Z', f);
    std::fclose(f);
  }
  Build({good, missing, bad}, ops::TFRecordReaderV2(s_));
  Start();
  ASSERT_TRUE(Read().ok());
  absl::StatusOr<std::pair<std::string, std::string>> r = Read();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(missing));
  r = Read();  // the next file
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->second, "x0");
  r = Read();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(bad));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("18"));
}

// A read waiting for a file name on an open, empty queue ends with the
// step's deadline, and the reader is usable afterwards.
TEST_F(ReaderTest, WaitEndsWithTheStepDeadline) {
  const std::string a = TempPath("late.tfrecord");
  WriteRecords(a, {"late"});
  Build({a}, ops::TFRecordReaderV2(s_));
  ASSERT_TRUE(s_.ok()) << s_.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  sess_ = std::move(*sess);
  absl::StatusOr<std::vector<Tensor>> r =
      sess_->Run({}, {read_.value}, {}, {.timeout_in_ms = 200});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  ASSERT_TRUE(sess_->Run({}, {}, {enqueue_}).ok());
  absl::StatusOr<std::pair<std::string, std::string>> got = Read();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->second, "late");
}

// FixedLengthRecordReaderV2 over a GZIP file.
TEST_F(ReaderTest, FixedLengthGzip) {
  const std::string a = TempPath("fixed.gz");
  // One gzip member holding "HHabcdefF" (header, two records, footer).
  const std::string payload = "HHabcdefF";
  std::string gz;
  {
    z_stream z{};
    ASSERT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    char out[256];
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(payload.data()));
    z.avail_in = payload.size();
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = sizeof(out);
    ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    gz.assign(out, sizeof(out) - z.avail_out);
    deflateEnd(&z);
  }
  WriteBytes(a, gz);
  Build({a}, ops::FixedLengthRecordReaderV2(s_, {.header_bytes = 2,
                                                  .record_bytes = 3,
                                                  .footer_bytes = 1,
                                                  .encoding = "GZIP"}));
  Start();
  absl::StatusOr<std::vector<std::string>> r = ReadUpTo(10);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<std::string>{"abc", "def"}));
  // The same bytes not gzip-compressed: a DataLoss naming the file.
  Scope s = Scope::NewRootScope(BuiltinOps());
  s_ = s;
  const std::string plain = TempPath("fixed_not.gz");
  WriteBytes(plain, payload);
  Build({plain}, ops::FixedLengthRecordReaderV2(s_, {.record_bytes = 3, .encoding = "GZIP"}));
  Start();
  r = ReadUpTo(10);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(plain));
}

TEST_F(ReaderTest, NonStringWorkIsAnError) {
  Output q = ops::FIFOQueueV2(s_, {DT_FLOAT});
  Node* enq = ops::QueueEnqueueV2(s_, q, {ops::Const(s_, 1.0f)});
  ops::ReaderReadOutputs r = ops::ReaderReadV2(s_, ops::TFRecordReaderV2(s_), q);
  ASSERT_TRUE(s_.ok()) << s_.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
  ASSERT_TRUE(sess.ok());
  ASSERT_TRUE((*sess)->Run({}, {}, {enq}).ok());
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {r.value}, {});
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("Expected to dequeue a one-element string tensor"));
}

TEST_F(ReaderTest, FixedLengthRecords) {
  const std::string a = TempPath("fixed_a.bin"), b = TempPath("fixed_b.bin");
  WriteBytes(a, "HH" "0123" "4567" "89ab" "F");
  WriteBytes(b, "HH" "cdef" "F");
  Build({a, b}, ops::FixedLengthRecordReaderV2(
                    s_, {.header_bytes = 2, .record_bytes = 4, .footer_bytes = 1}));
  Start();
  std::vector<std::string> values;
  std::string first_key;
  while (true) {
    absl::StatusOr<std::pair<std::string, std::string>> r = Read();
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange) << r.status();
      break;
    }
    if (first_key.empty()) first_key = r->first;
    values.push_back(r->second);
  }
  EXPECT_EQ(values, (std::vector<std::string>{"0123", "4567", "89ab", "cdef"}));
  EXPECT_EQ(first_key, a + ":0");
}

TEST_F(ReaderTest, FixedLengthHopAndShortRecord) {
  const std::string hop = TempPath("hop.bin"), shortf = TempPath("short.bin");
  WriteBytes(hop, "abcdefg");
  WriteBytes(shortf, "0123456");
  Build({hop, shortf}, ops::FixedLengthRecordReaderV2(s_, {.record_bytes = 4, .hop_bytes = 2}));
  Start();
  std::vector<std::string> values;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::pair<std::string, std::string>> r = Read();
    ASSERT_TRUE(r.ok()) << r.status();
    values.push_back(r->second);
  }
  EXPECT_EQ(values, (std::vector<std::string>{"abcd", "cdef"}));
  // Without hop_bytes a tail shorter than a record is an error.
  Scope s = Scope::NewRootScope(BuiltinOps());
  s_ = s;
  Build({shortf}, ops::FixedLengthRecordReaderV2(s_, {.record_bytes = 4}));
  Start();
  ASSERT_TRUE(Read().ok());
  absl::StatusOr<std::pair<std::string, std::string>> r = Read();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(shortf + ": record 1 at offset 4"));
}

}  // namespace
}  // namespace sluice
