// DatasetBase and IteratorBase through a small dataset of its own (0..n-1),
// the variant round trip, iterator state saved, encoded, decoded and
// restored, and the errors for tensors that hold no dataset or state.
#include "runtime/data/dataset.h"

#include <memory>
#include <vector>

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
  int64_t Cardinality() const override { return n_; }
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

TEST(DatasetTest, VariantRoundTripAndIteration) {
  Tensor t = DatasetTensor(std::make_shared<CountDataset>(3));
  absl::StatusOr<std::shared_ptr<const DatasetBase>> ds = DatasetFromTensor(t);
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->Cardinality(), 3);
  EXPECT_EQ((*ds)->DebugString(), "CountDataset 'count'");
  IteratorContext ctx({});
  absl::StatusOr<std::unique_ptr<IteratorBase>> it = (*ds)->MakeIterator(&ctx, "Iterator");
  ASSERT_TRUE(it.ok()) << it.status();
  EXPECT_EQ((*it)->prefix(), "Iterator::Count");
  std::vector<int64_t> got;
  std::vector<Tensor> el;
  bool end = false;
  while (true) {
    ASSERT_TRUE((*it)->GetNext(&ctx, &el, &end).ok());
    if (end) break;
    got.push_back(el[0].scalar<int64_t>());
  }
  EXPECT_EQ(got, (std::vector<int64_t>{0, 1, 2}));
  ASSERT_TRUE((*it)->GetNext(&ctx, &el, &end).ok());
  EXPECT_TRUE(end);
  EXPECT_TRUE(el.empty());
}

TEST(DatasetTest, NotADataset) {
  EXPECT_THAT(DatasetFromTensor(Tensor::Scalar<float>(1)).status().message(),
              HasSubstr("expected a dataset"));
  Tensor v(::tensorflow::DT_VARIANT, TensorShape({}));
  EXPECT_THAT(DatasetFromTensor(v).status().message(), HasSubstr("got a empty"));
  EXPECT_THAT(DatasetFromTensor(IteratorStateTensor({})).status().message(),
              HasSubstr("got a IteratorState"));
}

TEST(DatasetTest, SaveEncodeDecodeRestore) {
  auto ds = std::make_shared<CountDataset>(10);
  IteratorContext ctx({});
  auto it = *ds->MakeIterator(&ctx, "Iterator");
  std::vector<Tensor> el;
  bool end = false;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(it->GetNext(&ctx, &el, &end).ok());
  IteratorStateWriter w;
  ASSERT_TRUE(it->Save(&w).ok());
  w.WriteString("extra", "bytes\0inside");
  Tensor strings(DT_STRING, TensorShape({2}));
  strings.flat<std::string>()[0] = "a";
  strings.flat<std::string>()[1] = std::string("b\0c", 3);
  w.WriteTensor("strings", strings);
  w.WriteTensor("floats", Tensor::FromVector<float>({1.5f, -2}));
  const std::string bytes = EncodeIteratorState(w.values());
  absl::StatusOr<IteratorStateMap> decoded = DecodeIteratorState(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  IteratorStateReader r(*decoded);
  EXPECT_EQ(*r.ReadInt("Iterator::Count:next"), 4);
  EXPECT_EQ(r.ReadTensor("strings")->flat<std::string>()[1], std::string("b\0c", 3));
  EXPECT_EQ(r.ReadTensor("floats")->flat<float>()[1], -2.0f);
  auto fresh = *ds->MakeIterator(&ctx, "Iterator");
  ASSERT_TRUE(fresh->Restore(&ctx, r).ok());
  ASSERT_TRUE(fresh->GetNext(&ctx, &el, &end).ok());
  EXPECT_EQ(el[0].scalar<int64_t>(), 4);
}

TEST(DatasetTest, StateErrors) {
  IteratorStateReader empty({});
  EXPECT_TRUE(absl::IsNotFound(empty.ReadInt("x").status()));
  EXPECT_THAT(empty.ReadInt("x").status().message(), HasSubstr("no key 'x'"));
  IteratorStateWriter w;
  w.WriteString("s", "v");
  IteratorStateReader r(w.values());
  EXPECT_THAT(r.ReadInt("s").status().message(), HasSubstr("not an int64 scalar"));
  EXPECT_FALSE(DecodeIteratorState("garbage").ok());
  std::string bytes = EncodeIteratorState(w.values());
  EXPECT_FALSE(DecodeIteratorState(bytes.substr(0, bytes.size() - 1)).ok());
  EXPECT_FALSE(DecodeIteratorState(bytes + "x").ok());
  EXPECT_THAT(IteratorStateFromTensor(Tensor::Scalar<int64_t>(1)).status().message(),
              HasSubstr("expected a saved iterator state"));
  Tensor st = IteratorStateTensor(w.release());
  ASSERT_TRUE(IteratorStateFromTensor(st).ok());
  EXPECT_EQ((*IteratorStateFromTensor(st))->values().size(), 1u);
}

TEST(DatasetTest, StateFiles) {
  IteratorStateWriter w;
  w.WriteInt("Iterator::Count:next", 7);
  const std::string path = ::testing::TempDir() + "/input.state";
  ASSERT_TRUE(WriteIteratorStateFile(path, IteratorStateTensor(w.values())).ok());
  absl::StatusOr<Tensor> back = ReadIteratorStateFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  IteratorStateReader r((*IteratorStateFromTensor(*back))->values());
  EXPECT_EQ(*r.ReadInt("Iterator::Count:next"), 7);
  EXPECT_FALSE(WriteIteratorStateFile(path, Tensor::Scalar<int64_t>(1)).ok());
  EXPECT_TRUE(absl::IsNotFound(ReadIteratorStateFile(path + ".none").status()));
}

}  // namespace
}  // namespace data
}  // namespace sluice
