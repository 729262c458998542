// IteratorResource: before and after MakeIterator, a new pass per
// SetIteratorFromDataset, save and restore, type checks, GetNext on its
// own thread.
#include "runtime/data/iterator_resource.h"

#include <memory>
#include <vector>

#include "absl/synchronization/notification.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace data {
namespace {

using ::testing::HasSubstr;

class CountDataset : public DatasetBase {
 public:
  explicit CountDataset(int64_t n) : DatasetBase("count", {DT_INT64}, {TensorShape({})}), n_(n) {}
  std::string Name() const override { return "Count"; }
  int64_t n() const { return n_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  int64_t n_;
};

class CountIterator : public DatasetIterator<CountDataset> {
 public:
  using DatasetIterator::DatasetIterator;
  absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
    out->clear();
    *end = next_ >= dataset()->n();
    if (!*end) out->push_back(Tensor::Scalar<int64_t>(next_++));
    return absl::OkStatus();
  }
  absl::Status Save(IteratorStateWriter* w) override {
    w->WriteInt(Key("next"), next_);
    return absl::OkStatus();
  }
  absl::Status Restore(IteratorContext*, const IteratorStateReader& r) override {
    ASSIGN_OR_RETURN(next_, r.ReadInt(Key("next")));
    return absl::OkStatus();
  }

 private:
  int64_t next_ = 0;
};

std::unique_ptr<IteratorBase> CountDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<CountIterator>(SharedAs<CountDataset>(), std::move(prefix));
}

int64_t Next(IteratorResource& r) {
  std::vector<Tensor> out;
  bool end = false;
  absl::Status s = r.GetNext(&out, &end);
  EXPECT_TRUE(s.ok()) << s;
  return end ? -1 : out[0].scalar<int64_t>();
}

TEST(IteratorResourceTest, PassesSaveAndRestore) {
  IteratorResource r("it", {DT_INT64}, {TensorShape({})}, {});
  std::vector<Tensor> out;
  bool end = false;
  absl::Status s = r.GetNext(&out, &end);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("has not been initialized"));
  EXPECT_TRUE(absl::IsFailedPrecondition(r.Save().status()));

  ASSERT_TRUE(r.SetIteratorFromDataset(std::make_shared<CountDataset>(5)).ok());
  EXPECT_EQ(Next(r), 0);
  EXPECT_EQ(Next(r), 1);
  absl::StatusOr<IteratorStateMap> saved = r.Save();
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(Next(r), 2);
  ASSERT_TRUE(r.SetIteratorFromDataset(std::make_shared<CountDataset>(5)).ok());  // a new pass
  EXPECT_EQ(Next(r), 0);
  ASSERT_TRUE(r.Restore(*saved).ok());
  EXPECT_EQ(Next(r), 2);
  for (int i = 3; i < 5; ++i) EXPECT_EQ(Next(r), i);
  EXPECT_EQ(Next(r), -1);
  EXPECT_EQ(Next(r), -1);
}

// An iterator with elements ready (as a prefetch buffer has) hands them out
// through TryGetNext; one without says so and changes nothing.
class ReadyIterator : public CountIterator {
 public:
  using CountIterator::CountIterator;
  bool TryGetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end,
                  absl::Status* status) override {
    *status = GetNext(ctx, out, end);
    return true;
  }
};
class ReadyDataset : public CountDataset {
 public:
  using CountDataset::CountDataset;

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override {
    return std::make_unique<ReadyIterator>(SharedAs<CountDataset>(), std::move(prefix));
  }
};

TEST(IteratorResourceTest, TryGetNextTakesOnlyWhatIsReady) {
  IteratorResource r("it", {DT_INT64}, {TensorShape({})}, {});
  std::vector<Tensor> out;
  bool end = false;
  absl::Status s;
  EXPECT_FALSE(r.TryGetNext(&out, &end, &s));  // not initialized: GetNext says why
  ASSERT_TRUE(r.SetIteratorFromDataset(std::make_shared<CountDataset>(3)).ok());
  EXPECT_FALSE(r.TryGetNext(&out, &end, &s));  // would compute
  EXPECT_EQ(Next(r), 0);                       // nothing was taken
  ASSERT_TRUE(r.SetIteratorFromDataset(std::make_shared<ReadyDataset>(2)).ok());
  for (int64_t want : {0, 1}) {
    ASSERT_TRUE(r.TryGetNext(&out, &end, &s));
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_FALSE(end);
    EXPECT_EQ(out[0].scalar<int64_t>(), want);
  }
  ASSERT_TRUE(r.TryGetNext(&out, &end, &s));
  EXPECT_TRUE(end);
}

TEST(IteratorResourceTest, TypeMismatchAndBackgroundThread) {
  IteratorResource r("it", {DT_FLOAT}, {TensorShape({})}, {});
  absl::Status s = r.SetIteratorFromDataset(std::make_shared<CountDataset>(1));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("[int64]"));
  EXPECT_THAT(r.DebugString(), HasSubstr("[float]"));
  absl::Notification ran;
  r.background_pool()->Schedule([&] { ran.Notify(); });
  ran.WaitForNotification();
}

}  // namespace
}  // namespace data
}  // namespace sluice
