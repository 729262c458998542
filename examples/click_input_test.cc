#include "examples/click_input.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "examples/click_logs.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

ClickLogFiles Logs() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  ClickLogOptions o;
  o.out_dir = absl::StrCat(tmp ? tmp : "/tmp", "/click_input_test_", getpid());
  o.vocab = 50;
  o.train_examples = 1000;
  o.test_examples = 100;
  o.train_shards = 2;
  absl::StatusOr<ClickLogFiles> logs = EnsureClickLogs(o);
  EXPECT_TRUE(logs.ok()) << logs.status();
  return *logs;
}

// A batch's rows as strings, to compare batches whatever their order.
std::vector<std::string> Rows(const ClickBatch& b) {
  std::vector<std::string> rows;
  const int64_t n = b.ids.shape().dim(0), f = b.ids.shape().dim(1);
  for (int64_t i = 0; i < n; ++i) {
    std::string row = absl::StrCat(b.labels.flat<float>()[i], ":");
    for (int64_t k = 0; k < f; ++k) absl::StrAppend(&row, b.ids.flat<int64_t>()[i * f + k], ",");
    rows.push_back(row);
  }
  return rows;
}

TEST(ClickInputTest, IdsAreHashedIntoTheBucketsAndLabelsAreZeroOrOne) {
  ClickInputOptions o;
  o.files = Logs().train;
  o.buckets = 1 << 10;
  o.batch = 100;
  absl::StatusOr<std::unique_ptr<ClickInput>> in = ClickInput::Create(o);
  ASSERT_TRUE(in.ok()) << in.status();
  absl::StatusOr<std::vector<ClickBatch>> all = (*in)->ReadAll();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 10u);
  for (const ClickBatch& b : *all) {
    ASSERT_EQ(b.ids.shape(), TensorShape({100, 26}));
    for (int64_t id : b.ids.flat<int64_t>()) ASSERT_TRUE(id >= 0 && id < (1 << 10)) << id;
    for (float y : b.labels.flat<float>()) ASSERT_TRUE(y == 0.0f || y == 1.0f) << y;
  }
}

// Preloaded, the same examples come back as when streamed, pass after
// pass, each pass in a new batch order.
TEST(ClickInputTest, PreloadedBatchesCycleInANewOrderEachPass) {
  ClickInputOptions o;
  o.files = Logs().train;
  o.batch = 100;
  o.shuffle = true;
  o.repeat = true;
  o.seed = 7;
  absl::StatusOr<std::unique_ptr<ClickInput>> streamed = ClickInput::Create(o);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  std::map<std::string, int> want;  // one epoch's rows, streamed
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<ClickBatch> b = (*streamed)->Next();
    ASSERT_TRUE(b.ok()) << b.status();
    for (const std::string& r : Rows(*b)) ++want[r];
  }
  o.preload = true;
  absl::StatusOr<std::unique_ptr<ClickInput>> held = ClickInput::Create(o);
  ASSERT_TRUE(held.ok()) << held.status();
  std::vector<std::vector<std::string>> firsts;  // each pass's first batch
  for (int pass = 0; pass < 3; ++pass) {
    std::map<std::string, int> got;
    for (int i = 0; i < 10; ++i) {
      absl::StatusOr<ClickBatch> b = (*held)->Next();
      ASSERT_TRUE(b.ok()) << b.status();
      ASSERT_EQ(b->ids.shape().dim(0), 100);
      if (i == 0) firsts.push_back(Rows(*b));
      for (const std::string& r : Rows(*b)) ++got[r];
    }
    EXPECT_EQ(got, want) << "pass " << pass;
  }
  EXPECT_TRUE(firsts[0] != firsts[1] || firsts[1] != firsts[2]) << "the order never changed";
  EXPECT_EQ((*held)->wait_seconds(), 0.0);
}

TEST(ClickInputTest, BadOptionsAreInvalidArgument) {
  ClickInputOptions o;
  EXPECT_EQ(ClickInput::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.files = Logs().train;
  o.batch = 0;
  EXPECT_EQ(ClickInput::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.batch = 100000;  // more than the files hold, with whole batches only
  o.repeat = true;
  o.preload = true;
  absl::Status s = ClickInput::Create(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("no whole batch"), std::string::npos) << s;
}

}  // namespace
}  // namespace sluice
