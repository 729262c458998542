// TensorFlow's V1 checkpoint files: one TensorFlow 2.21 wrote
// (testdata/make_v1_fixtures.py) read whole, every dtype V1 holds written and
// read back, and files damaged or made inconsistent, each a clear error.
#include "runtime/io/tensor_slice_file.h"

#include <complex>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/proto/saved_tensor_slice.pb.h"
#include "gtest/gtest.h"
#include "runtime/io/table_file.h"

namespace sluice {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Fixture(const std::string& name) {
  return Slurp(absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                            "/runtime/io/testdata/", name));
}

const TensorSliceRecord* Find(const std::vector<TensorSliceRecord>& records,
                              const std::string& name, int64_t first_row = 0) {
  for (const TensorSliceRecord& r : records) {
    if (r.name == name && (r.slice.start.empty() || r.slice.start[0] == first_row)) return &r;
  }
  return nullptr;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

TEST(TensorSliceFileTest, ReadsWhatTensorFlowWrote) {
  const std::string bytes = Fixture("tf_v1_model.ckpt");
  ASSERT_TRUE(IsTableFile(bytes));
  absl::StatusOr<std::vector<TensorSliceRecord>> r = ParseTensorSliceFile(bytes, "tf_v1_model");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->size(), 14u);  // 12 whole tensors, 2 slices of emb

  const TensorSliceRecord* a = Find(*r, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->full_shape, TensorShape({2, 3}));
  EXPECT_EQ(a->slice.start, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(a->slice.length, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<float>(a->value), (std::vector<float>{1.5, 2.5, 3.5, 4, 5, 6}));
  EXPECT_EQ(Values<int64_t>(Find(*r, "scope/b")->value), (std::vector<int64_t>{7, -8, 9}));
  EXPECT_EQ(Values<std::string>(Find(*r, "s")->value),
            (std::vector<std::string>{"hello", "", "world!"}));
  const TensorSliceRecord* d = Find(*r, "d");
  EXPECT_EQ(d->full_shape, TensorShape());
  EXPECT_EQ(Values<double>(d->value), std::vector<double>{3.25});
  const Tensor& h = Find(*r, "h")->value;
  ASSERT_EQ(h.dtype(), DT_HALF);
  EXPECT_EQ(h.data<Half>()[0].ToFloat(), 0.5f);
  EXPECT_EQ(h.data<Half>()[1].ToFloat(), -2.0f);
  EXPECT_EQ(Values<bool>(Find(*r, "flags")->value), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Values<int8_t>(Find(*r, "i8")->value), (std::vector<int8_t>{-128, 0, 127}));
  EXPECT_EQ(Values<uint8_t>(Find(*r, "u8")->value), (std::vector<uint8_t>{0, 200, 255}));
  EXPECT_EQ(Values<int16_t>(Find(*r, "i16")->value), (std::vector<int16_t>{-30000, 5}));
  EXPECT_EQ(Values<uint16_t>(Find(*r, "u16")->value), (std::vector<uint16_t>{65535, 1}));
  EXPECT_EQ(Values<int32_t>(Find(*r, "i32")->value), (std::vector<int32_t>{1, -2, 3, 4}));
  const Tensor& c = Find(*r, "c")->value;
  ASSERT_EQ(c.dtype(), ::tensorflow::DT_COMPLEX64);
  const auto* pc = static_cast<const std::complex<float>*>(c.raw_data());
  EXPECT_EQ(pc[0], std::complex<float>(1, 2));
  EXPECT_EQ(pc[1], std::complex<float>(0, -3.5));

  // The partitioned variable: rows 0..2 and 3..4 of one [5, 3] tensor.
  const TensorSliceRecord* e0 = Find(*r, "emb", 0);
  const TensorSliceRecord* e1 = Find(*r, "emb", 3);
  ASSERT_NE(e0, nullptr);
  ASSERT_NE(e1, nullptr);
  EXPECT_EQ(e0->full_shape, TensorShape({5, 3}));
  EXPECT_EQ(e0->slice.length, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(e1->slice.length, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<float>(e1->value), (std::vector<float>{9, 10, 11, 12, 13, 14}));
}

TEST(TensorSliceFileTest, ReadsTheShardsOfAShardedSave) {
  absl::StatusOr<std::vector<TensorSliceRecord>> first =
      ParseTensorSliceFile(Fixture("tf_v1_sharded.ckpt-00000-of-00002"), "shard0");
  absl::StatusOr<std::vector<TensorSliceRecord>> second =
      ParseTensorSliceFile(Fixture("tf_v1_sharded.ckpt-00001-of-00002"), "shard1");
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].name, "w");
  EXPECT_EQ(Values<float>((*first)[0].value), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(second->size(), 3u);  // bias and the two slices of part
  EXPECT_EQ(Values<float>(Find(*second, "bias")->value), (std::vector<float>{0.25, -0.5}));
  EXPECT_EQ(Values<float>(Find(*second, "part", 2)->value), (std::vector<float>{4, 5, 6, 7}));
}

TEST(TensorSliceFileTest, EveryDtypeAndSlicesRoundTrip) {
  Tensor half(DT_HALF, TensorShape({2}));
  half.data<Half>()[0] = Half::FromFloat(1.5f);
  half.data<Half>()[1] = Half::FromFloat(-0.25f);
  Tensor c128(::tensorflow::DT_COMPLEX128, TensorShape({1}));
  *static_cast<std::complex<double>*>(c128.raw_data()) = {2.5, -1};
  std::vector<TensorSliceRecord> records = {
      {"f", TensorShape({2}), {{0}, {2}}, Tensor::FromVector<float>({1.25f, -3})},
      {"i64", TensorShape({1}), {{0}, {1}}, Tensor::FromVector<int64_t>({int64_t{1} << 40})},
      {"u16", TensorShape({2}), {{0}, {2}}, Tensor::FromVector<uint16_t>({65535, 7})},
      {"half", TensorShape({2}), {{0}, {2}}, half},
      {"c128", TensorShape({1}), {{0}, {1}}, c128},
      {"str\xc3\xa9", TensorShape({2}), {{0}, {2}}, Tensor::FromVector<std::string>({"", "x"})},
      {"scalar", TensorShape(), {{}, {}}, Tensor::Scalar<double>(-7.5)},
      // A [4, 3] tensor in two slices: columns 0..1 of rows 1..2, and rows 3.
      {"m", TensorShape({4, 3}), {{1, 0}, {2, 2}},
       Tensor::FromVector<int32_t>({1, 2, 3, 4}, TensorShape({2, 2}))},
      {"m", TensorShape({4, 3}), {{3, 0}, {1, 3}},
       Tensor::FromVector<int32_t>({5, 6, 7}, TensorShape({1, 3}))},
  };
  absl::StatusOr<std::string> bytes = EncodeTensorSliceFile(records);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<std::vector<TensorSliceRecord>> back = ParseTensorSliceFile(*bytes, "mem");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const TensorSliceRecord& want = records[i];
    const TensorSliceRecord& got = (*back)[i];
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.full_shape, want.full_shape) << want.name;
    EXPECT_EQ(got.slice.start, want.slice.start) << want.name;
    EXPECT_EQ(got.slice.length, want.slice.length) << want.name;
    EXPECT_EQ(got.value.DebugString(), want.value.DebugString()) << want.name;
  }
  EXPECT_EQ(Values<uint16_t>((*back)[2].value), (std::vector<uint16_t>{65535, 7}));
  EXPECT_EQ((*back)[3].value.data<Half>()[1].bits, half.data<Half>()[1].bits);
  EXPECT_EQ(*static_cast<const std::complex<double>*>((*back)[4].value.raw_data()),
            std::complex<double>(2.5, -1));
}

TEST(TensorSliceFileTest, WritingRefusesWhatV1CannotHold) {
  auto refused = [](std::vector<TensorSliceRecord> records, absl::string_view says) {
    absl::StatusOr<std::string> bytes = EncodeTensorSliceFile(records);
    EXPECT_TRUE(absl::IsInvalidArgument(bytes.status())) << bytes.status();
    EXPECT_TRUE(absl::StrContains(bytes.status().message(), says)) << bytes.status();
  };
  refused({{"b", TensorShape({1}), {{0}, {1}}, Tensor(DT_BFLOAT16, TensorShape({1}))}},
          "cannot hold bfloat16");
  refused({{"u", TensorShape({1}), {{0}, {1}}, Tensor(::tensorflow::DT_UINT32, TensorShape({1}))}},
          "cannot hold uint32");
  refused({{"", TensorShape({1}), {{0}, {1}}, Tensor::FromVector<float>({1})}}, "needs a name");
  refused({{"a\xff", TensorShape({1}), {{0}, {1}}, Tensor::FromVector<float>({1})}}, "UTF-8");
  refused({{"\xc0\x80", TensorShape({1}), {{0}, {1}}, Tensor::FromVector<float>({1})}}, "UTF-8");
  refused({{"x", TensorShape({3}), {{0}, {2}}, Tensor::FromVector<float>({1, 2, 3})}},
          "given a tensor of shape");
  refused({{"x", TensorShape({3}), {{2}, {2}}, Tensor::FromVector<float>({1, 2})}}, "outside");
  refused({{"x", TensorShape({2}), {{0}, {1}}, Tensor::FromVector<float>({1})},
           {"x", TensorShape({2}), {{0}, {1}}, Tensor::FromVector<float>({2})}},
          "stored twice");
  refused({{"x", TensorShape({2}), {{0}, {1}}, Tensor::FromVector<float>({1})},
           {"x", TensorShape({2}), {{1}, {1}}, Tensor::FromVector<double>({2})}},
          "other dtypes");
}

// A table of the given meta and data records (keys: "" and then "k<i>").
std::string TableOf(const ::tensorflow::SavedTensorSlices& meta,
                    const std::vector<::tensorflow::SavedTensorSlices>& data) {
  std::vector<TableEntry> entries = {{"", meta.SerializeAsString()}};
  for (size_t i = 0; i < data.size(); ++i) {
    entries.push_back({absl::StrCat("k", i), data[i].SerializeAsString()});
  }
  absl::StatusOr<std::string> bytes = WriteTableFile(entries);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return *bytes;
}

TEST(TensorSliceFileTest, DamagedOrInconsistentFilesAreClearErrors) {
  const std::string good = Fixture("tf_v1_model.ckpt");
  auto fails = [](const std::string& bytes, absl::StatusCode code, absl::string_view says) {
    absl::StatusOr<std::vector<TensorSliceRecord>> r = ParseTensorSliceFile(bytes, "bad.ckpt");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), says)) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), "bad.ckpt")) << r.status();
  };
  fails(good.substr(0, good.size() / 2), absl::StatusCode::kDataLoss, "");
  std::string flipped = good;
  flipped[40] ^= 0x20;
  fails(flipped, absl::StatusCode::kDataLoss, "");

  // Records made by hand: a float [2] tensor "x" stored whole.
  ::tensorflow::SavedTensorSlices meta;
  ::tensorflow::SavedSliceMeta* m = meta.mutable_meta()->add_tensor();
  m->set_name("x");
  m->mutable_shape()->add_dim()->set_size(2);
  m->set_type(::tensorflow::DT_FLOAT);
  m->add_slice()->add_extent();
  ::tensorflow::SavedTensorSlices data;
  data.mutable_data()->set_name("x");
  data.mutable_data()->mutable_slice()->add_extent();
  data.mutable_data()->mutable_data()->add_float_val(1);
  data.mutable_data()->mutable_data()->add_float_val(2);
  ASSERT_TRUE(ParseTensorSliceFile(TableOf(meta, {data}), "ok").ok());

  fails(TableOf(meta, {}), absl::StatusCode::kDataLoss, "without its values");
  fails(TableOf(meta, {data, data}), absl::StatusCode::kDataLoss, "twice");
  ::tensorflow::SavedTensorSlices short_data = data;
  short_data.mutable_data()->mutable_data()->mutable_float_val()->RemoveLast();
  fails(TableOf(meta, {short_data}), absl::StatusCode::kDataLoss, "holds 1 values");
  ::tensorflow::SavedTensorSlices stranger = data;
  stranger.mutable_data()->set_name("y");
  fails(TableOf(meta, {data, stranger}), absl::StatusCode::kDataLoss, "meta lacks");
  ::tensorflow::SavedTensorSlices outside = data;
  outside.mutable_data()->mutable_slice()->mutable_extent(0)->set_start(1);
  outside.mutable_data()->mutable_slice()->mutable_extent(0)->set_length(2);
  fails(TableOf(meta, {outside}), absl::StatusCode::kDataLoss, "outside");

  ::tensorflow::SavedTensorSlices bf16 = meta;
  bf16.mutable_meta()->mutable_tensor(0)->set_type(::tensorflow::DT_BFLOAT16);
  fails(TableOf(bf16, {data}), absl::StatusCode::kDataLoss, "do not hold");
  ::tensorflow::SavedTensorSlices rank = meta;
  rank.mutable_meta()->mutable_tensor(0)->mutable_slice(0)->add_extent();
  fails(TableOf(rank, {data}), absl::StatusCode::kDataLoss, "another rank");
  ::tensorflow::SavedTensorSlices newer = meta;
  newer.mutable_meta()->mutable_versions()->set_min_consumer(7);
  fails(TableOf(newer, {data}), absl::StatusCode::kFailedPrecondition, "version");

  absl::StatusOr<std::string> no_meta = WriteTableFile({{"k", data.SerializeAsString()}});
  ASSERT_TRUE(no_meta.ok());
  fails(*no_meta, absl::StatusCode::kDataLoss, "no meta record");
  EXPECT_FALSE(IsTableFile("SLUICECK"));
}

}  // namespace
}  // namespace sluice
