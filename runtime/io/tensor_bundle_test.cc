// BundleReader on a checkpoint TensorFlow wrote (testdata/README.md): every
// tensor's name, dtype, shape and values; then copies of it damaged as a
// disk or a partial copy would damage them, each a clear error.
#include "runtime/io/tensor_bundle.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

constexpr char kData[] = ".data-00000-of-00001";

std::string TfPrefix() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                      "/runtime/io/testdata/tf_model.ckpt-7");
}

// A copy of the TF checkpoint under the test's temporary directory.
std::string CopyOf(const std::string& name) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  const std::string prefix = absl::StrCat(dir, "/", name);
  for (const char* suffix : {".index", kData}) {
    std::filesystem::copy_file(TfPrefix() + suffix, prefix + suffix,
                               std::filesystem::copy_options::overwrite_existing);
  }
  return prefix;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(TensorBundleTest, ReadsWhatTensorFlowWrote) {
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(TfPrefix());
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::string> names;
  for (const BundleReader::Entry& e : (*r)->entries()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "d", "s", "scope/b"}));
  EXPECT_EQ((*r)->entries()[0].dtype, DT_FLOAT);
  EXPECT_EQ((*r)->entries()[0].shape, TensorShape({2, 3}));
  EXPECT_EQ((*r)->num_shards(), 1);

  absl::StatusOr<Tensor> a = (*r)->Read("a");
  ASSERT_TRUE(a.ok()) << a.status();
  const float* pa = a->data<float>();
  EXPECT_EQ(std::vector<float>(pa, pa + 6), (std::vector<float>{1.5, 2.5, 3.5, 4, 5, 6}));
  absl::StatusOr<Tensor> b = (*r)->Read("scope/b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->dtype(), DT_INT64);
  EXPECT_EQ(b->data<int64_t>()[2], 9);
  absl::StatusOr<Tensor> d = (*r)->Read("d");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->shape(), TensorShape({}));
  EXPECT_EQ(d->data<double>()[0], 3.25);
  absl::StatusOr<Tensor> s = (*r)->Read("s");
  ASSERT_TRUE(s.ok()) << s.status();
  const std::string* ps = s->data<std::string>();
  EXPECT_EQ(std::vector<std::string>(ps, ps + 3),
            (std::vector<std::string>{"hello", "", "world!"}));
}

TEST(TensorBundleTest, MissingFilesAndNamesAreNotFound) {
  absl::StatusOr<std::unique_ptr<BundleReader>> none = BundleReader::Open("/nonexistent/ckpt");
  EXPECT_TRUE(absl::IsNotFound(none.status())) << none.status();
  EXPECT_TRUE(absl::StrContains(none.status().message(), "/nonexistent/ckpt.index"));

  const std::string prefix = CopyOf("no_data");
  std::filesystem::remove(prefix + kData);
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<Tensor> a = (*r)->Read("a");
  EXPECT_TRUE(absl::IsNotFound(a.status())) << a.status();
  EXPECT_TRUE(absl::IsNotFound((*r)->Read("nope").status()));
}

TEST(TensorBundleTest, AFlippedDataByteIsDataLossNamingTheTensor) {
  // Byte 0 is in "a"; byte 40 is in "s"'s strings.
  for (const auto& [at, tensor] : std::vector<std::pair<int, std::string>>{{0, "a"}, {40, "s"}}) {
    const std::string prefix = CopyOf(absl::StrCat("flip", at));
    std::string bytes = Slurp(prefix + kData);
    bytes[at] ^= 0x40;
    Spit(prefix + kData, bytes);
    absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
    ASSERT_TRUE(r.ok()) << r.status();
    absl::StatusOr<Tensor> t = (*r)->Read(tensor);
    EXPECT_TRUE(absl::IsDataLoss(t.status())) << t.status();
    EXPECT_TRUE(absl::StrContains(t.status().message(), absl::StrCat("'", tensor, "'")))
        << t.status();
  }
}

TEST(TensorBundleTest, TruncatedFilesAreDataLoss) {
  const std::string prefix = CopyOf("short_data");
  Spit(prefix + kData, Slurp(prefix + kData).substr(0, 30));
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<Tensor> b = (*r)->Read("scope/b");  // stored last
  EXPECT_TRUE(absl::IsDataLoss(b.status())) << b.status();
  EXPECT_TRUE(absl::StrContains(b.status().message(), "outside")) << b.status();

  const std::string index = CopyOf("short_index") + ".index";
  const std::string bytes = Slurp(index);
  for (size_t keep : {size_t{0}, size_t{20}, bytes.size() - 10}) {
    Spit(index, bytes.substr(0, keep));
    absl::StatusOr<std::unique_ptr<BundleReader>> bad =
        BundleReader::Open(index.substr(0, index.size() - 6));
    EXPECT_TRUE(absl::IsDataLoss(bad.status())) << keep << ": " << bad.status();
  }
}

TEST(TensorBundleTest, AFlippedIndexByteIsDataLoss) {
  const std::string index = CopyOf("flip_index") + ".index";
  std::string bytes = Slurp(index);
  bytes[10] ^= 0x01;  // inside the data block: its checksum no longer matches
  Spit(index, bytes);
  absl::StatusOr<std::unique_ptr<BundleReader>> r =
      BundleReader::Open(index.substr(0, index.size() - 6));
  EXPECT_TRUE(absl::IsDataLoss(r.status())) << r.status();
}

// TF's fixed_size_partitioner: emb [5, 3] in 2 row slices, cols [2, 4] in
// 3 column slices, big [300, 2] in 3 row slices; each holds arange.
TEST(TensorBundleTest, ReadsPartitionedTensorsTensorFlowSavedInSlices) {
  const std::string prefix =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                   "/runtime/io/testdata/tf_partitioned.ckpt-1");
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::string> names;
  for (const BundleReader::Entry& e : (*r)->entries()) {
    names.push_back(e.name);
    EXPECT_TRUE(e.sliced) << e.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"big", "cols", "emb"}));  // no slice keys
  absl::StatusOr<Tensor> emb = (*r)->Read("emb");
  ASSERT_TRUE(emb.ok()) << emb.status();
  ASSERT_EQ(emb->shape(), TensorShape({5, 3}));
  for (int i = 0; i < 15; ++i) EXPECT_EQ(emb->data<float>()[i], i);
  absl::StatusOr<Tensor> cols = (*r)->Read("cols");
  ASSERT_TRUE(cols.ok()) << cols.status();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(cols->data<int64_t>()[i], i);
  absl::StatusOr<Tensor> big = (*r)->Read("big");
  ASSERT_TRUE(big.ok()) << big.status();
  for (int i = 0; i < 600; ++i) EXPECT_EQ(big->data<double>()[i], i) << i;
}

TEST(TensorBundleTest, SliceKeysEncodeAsTensorFlowEncodes) {
  // Taken from the index above: "big" rows [100, 200), columns [0, 2).
  EXPECT_EQ(internal::EncodeTensorNameSlice("big", {100, 0}, {100, 2}),
            std::string("\0big\0\x01\x01\x02\xc0\x64\xc0\x64\x80\x82", 14));
  // Negative (a whole dimension, -1) and long values.
  EXPECT_EQ(internal::EncodeTensorNameSlice("a", {0}, {-1}),
            std::string("\0a\0\x01\x01\x01\x80\x7f", 8));
}

TEST(TensorBundleTest, WhatItWritesReadsBack) {
  const std::string prefix = absl::StrCat(std::getenv("TEST_TMPDIR"), "/written.ckpt-1");
  BundleWriter w(prefix);
  std::vector<float> big(5000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = 0.5f * static_cast<float>(i);
  ASSERT_TRUE(w.Add("z/big", Tensor::FromVector(big, TensorShape({50, 100}))).ok());
  ASSERT_TRUE(w.Add("a/s", Tensor::FromVector<std::string>({"x", "", "yz"})).ok());
  ASSERT_TRUE(w.Add("step", Tensor::FromVector<int64_t>({42}, TensorShape({}))).ok());
  for (int i = 0; i < 300; ++i) {  // enough names for several data blocks of the index
    ASSERT_TRUE(
        w.Add(absl::StrCat("layer_", 1000 + i, "/bias"), Tensor::FromVector<double>({1.0 * i}))
            .ok());
  }
  EXPECT_TRUE(absl::IsInvalidArgument(w.Add("step", Tensor::FromVector<int64_t>({1}))));
  ASSERT_TRUE(w.Finish().ok());

  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->entries().size(), 303u);
  absl::StatusOr<Tensor> b = (*r)->Read("z/big");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->shape(), TensorShape({50, 100}));
  EXPECT_EQ(b->data<float>()[4999], 2499.5f);
  absl::StatusOr<Tensor> s = (*r)->Read("a/s");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->data<std::string>()[2], "yz");
  absl::StatusOr<Tensor> step = (*r)->Read("step");
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->data<int64_t>()[0], 42);
  absl::StatusOr<Tensor> bias = (*r)->Read("layer_1299/bias");
  ASSERT_TRUE(bias.ok()) << bias.status();
  EXPECT_EQ(bias->data<double>()[0], 299.0);
}

// The TF checkpoint's "emb" [5, 3], saved as rows [0, 3) and [3, 5): each
// slice by itself, and a whole tensor as one slice.
TEST(TensorBundleTest, ReadsSlicesOneByOne) {
  const std::string prefix =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                   "/runtime/io/testdata/tf_partitioned.ckpt-1");
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::vector<BundleSlice>> slices = (*r)->Slices("emb");
  ASSERT_TRUE(slices.ok()) << slices.status();
  ASSERT_EQ(slices->size(), 2u);
  EXPECT_EQ((*slices)[0].start, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ((*slices)[0].length, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ((*slices)[1].start, (std::vector<int64_t>{3, 0}));
  absl::StatusOr<Tensor> second = (*r)->ReadSlice("emb", (*slices)[1]);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->shape(), TensorShape({2, 3}));
  EXPECT_EQ(second->data<float>()[0], 9.0f);
  EXPECT_TRUE(absl::IsInvalidArgument((*r)->ReadSlice("emb", {{1, 0}, {1, 3}}).status()));
  EXPECT_TRUE(absl::IsNotFound((*r)->Slices("nope").status()));
  ASSERT_NE((*r)->Find("cols"), nullptr);
  EXPECT_EQ((*r)->Find("cols")->shape, TensorShape({2, 4}));
  EXPECT_EQ((*r)->Find("col"), nullptr);

  absl::StatusOr<std::unique_ptr<BundleReader>> whole = BundleReader::Open(TfPrefix());
  ASSERT_TRUE(whole.ok()) << whole.status();
  absl::StatusOr<std::vector<BundleSlice>> one = (*whole)->Slices("a");
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].length, (std::vector<int64_t>{2, 3}));
  absl::StatusOr<Tensor> a = (*whole)->ReadSlice("a", (*one)[0]);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->data<float>()[0], 1.5f);
}

// A [6, 2] table in three row parts (one a string-free whole-width slice,
// one written by another writer), merged as MergeV2Checkpoints does.
TEST(TensorBundleTest, SlicesWrittenByShardsMergeIntoOneCheckpoint) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/merge");
  std::filesystem::create_directories(dir + "/m-1_temp");
  auto rows = [](int from, int n) {
    std::vector<float> v;
    for (int i = from * 2; i < (from + n) * 2; ++i) v.push_back(static_cast<float>(i));
    return Tensor::FromVector(v, TensorShape({n, 2}));
  };
  const std::string p0 = dir + "/m-1_temp/part-00000-of-00002";
  const std::string p1 = dir + "/m-1_temp/part-00001-of-00002";
  {
    BundleWriter w(p0);
    ASSERT_TRUE(w.AddSlice("emb", TensorShape({6, 2}), {{0, 0}, {2, 2}}, rows(0, 2)).ok());
    ASSERT_TRUE(w.AddSlice("emb", TensorShape({6, 2}), {{4, 0}, {2, 2}}, rows(4, 2)).ok());
    ASSERT_TRUE(w.Add("step", Tensor::FromVector<int64_t>({7}, TensorShape({}))).ok());
    // Bad slices: outside, of the wrong shape, with another full shape.
    EXPECT_TRUE(absl::IsInvalidArgument(
        w.AddSlice("emb", TensorShape({6, 2}), {{5, 0}, {2, 2}}, rows(0, 2))));
    EXPECT_TRUE(absl::IsInvalidArgument(
        w.AddSlice("emb", TensorShape({6, 2}), {{2, 0}, {2, 2}}, rows(0, 3))));
    EXPECT_TRUE(absl::IsInvalidArgument(
        w.AddSlice("emb", TensorShape({7, 2}), {{2, 0}, {2, 2}}, rows(2, 2))));
    EXPECT_TRUE(absl::IsInvalidArgument(
        w.AddSlice("step", TensorShape({6, 2}), {{2, 0}, {2, 2}}, rows(2, 2))));
    ASSERT_TRUE(w.Finish().ok());
    EXPECT_FALSE(w.Add("late", rows(0, 1)).ok());
  }
  {
    BundleWriter w(p1);
    ASSERT_TRUE(w.AddSlice("emb", TensorShape({6, 2}), {{2, 0}, {2, 2}}, rows(2, 2)).ok());
    ASSERT_TRUE(w.Add("w", Tensor::FromVector<std::string>({"a", "b"})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  const std::string dest = dir + "/m-1";
  absl::Status merged = MergeBundles({p0, p1}, dest);
  ASSERT_TRUE(merged.ok()) << merged;
  EXPECT_FALSE(std::filesystem::exists(p0 + ".index"));
  EXPECT_TRUE(std::filesystem::exists(dest + ".data-00001-of-00002"));
  EXPECT_EQ(BundleFiles(dest).size(), 3u);

  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(dest);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->num_shards(), 2);
  absl::StatusOr<Tensor> emb = (*r)->Read("emb");
  ASSERT_TRUE(emb.ok()) << emb.status();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(emb->data<float>()[i], i);
  absl::StatusOr<Tensor> w = (*r)->Read("w");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->data<std::string>()[1], "b");
  absl::StatusOr<Tensor> step = (*r)->Read("step");
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->data<int64_t>()[0], 7);

  // The same tensor in two sources is refused, naming both.
  for (const std::string& p : {dir + "/a", dir + "/b"}) {
    BundleWriter dup(p);
    ASSERT_TRUE(dup.Add("x", rows(0, 1)).ok());
    ASSERT_TRUE(dup.Finish().ok());
  }
  absl::Status both = MergeBundles({dir + "/a", dir + "/b"}, dir + "/ab");
  EXPECT_TRUE(absl::IsInvalidArgument(both)) << both;
  EXPECT_TRUE(absl::StrContains(both.message(), "'x'")) << both;
  EXPECT_TRUE(absl::IsNotFound(MergeBundles({dir + "/none"}, dir + "/n")));
}

}  // namespace
}  // namespace sluice
