#include "examples/click_logs.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/proto/example.pb.h"
#include "gtest/gtest.h"
#include "runtime/io/record_reader.h"

namespace sluice {
namespace {

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp ? tmp : "/tmp", "/click_logs_test_", getpid(), "/", name);
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ClickLogOptions Small(const std::string& dir) {
  ClickLogOptions o;
  o.out_dir = dir;
  o.vocab = 50;
  o.train_examples = 3000;
  o.test_examples = 2000;
  o.train_shards = 2;
  return o;
}

TEST(ClickLogsTest, ExamplesHaveEveryFeatureAndALabel) {
  absl::StatusOr<ClickLogFiles> logs = EnsureClickLogs(Small(TestDir("examples")));
  ASSERT_TRUE(logs.ok()) << logs.status();
  ASSERT_EQ(logs->train.size(), 2u);
  ASSERT_EQ(logs->test.size(), 1u);
  // A model that knows the planted weights ranks well, not perfectly.
  EXPECT_GT(logs->planted_test_auc, 0.7);
  EXPECT_LT(logs->planted_test_auc, 0.99);
  EXPECT_GT(logs->click_rate, 0.05);
  EXPECT_LT(logs->click_rate, 0.8);
  int64_t records = 0, clicks = 0;
  std::set<std::string> values_of_c1;
  for (const std::string& file : logs->train) {
    absl::StatusOr<std::unique_ptr<RecordReader>> reader = RecordReader::Open(file);
    ASSERT_TRUE(reader.ok()) << reader.status();
    while (true) {
      absl::StatusOr<std::string> record = (*reader)->ReadRecord();
      if (absl::IsOutOfRange(record.status())) break;  // the end of the file
      ASSERT_TRUE(record.ok()) << record.status();
      ::tensorflow::Example e;
      ASSERT_TRUE(e.ParseFromString(*record));
      const auto& f = e.features().feature();
      ASSERT_EQ(f.size(), 27u);
      for (const std::string& name : ClickFeatureNames(26)) {
        ASSERT_EQ(f.at(name).bytes_list().value_size(), 1) << name;
      }
      values_of_c1.insert(f.at("C1").bytes_list().value(0));
      ASSERT_EQ(f.at("label").int64_list().value_size(), 1);
      clicks += f.at("label").int64_list().value(0);
      ++records;
    }
  }
  EXPECT_EQ(records, 3000);
  EXPECT_NEAR(static_cast<double>(clicks) / records, logs->click_rate, 1e-9);
  EXPECT_GT(values_of_c1.size(), 30u);  // skewed, but most of the 50 values occur
  EXPECT_LE(values_of_c1.size(), 50u);
}

TEST(ClickLogsTest, TheSameOptionsGiveTheSameBytesAndAreReused) {
  absl::StatusOr<ClickLogFiles> a = EnsureClickLogs(Small(TestDir("a")));
  absl::StatusOr<ClickLogFiles> b = EnsureClickLogs(Small(TestDir("b")));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Bytes(a->train[0]), Bytes(b->train[0]));
  EXPECT_EQ(a->planted_test_auc, b->planted_test_auc);
  // Made once: a second call reads planted.txt instead of writing again.
  absl::StatusOr<ClickLogFiles> again = EnsureClickLogs(Small(TestDir("a")));
  ASSERT_TRUE(again.ok());
  EXPECT_NEAR(again->planted_test_auc, a->planted_test_auc, 1e-9);
  ClickLogOptions other = Small(TestDir("a"));
  other.seed = 2;
  absl::StatusOr<ClickLogFiles> reseeded = EnsureClickLogs(other);
  ASSERT_TRUE(reseeded.ok());
  EXPECT_NE(Bytes(reseeded->train[0]), Bytes(b->train[0]));
}

TEST(ClickLogsTest, BadOptionsAreInvalidArgument) {
  ClickLogOptions o = Small(TestDir("bad"));
  o.train_shards = 0;
  EXPECT_EQ(EnsureClickLogs(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = Small("");
  EXPECT_EQ(EnsureClickLogs(o).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
