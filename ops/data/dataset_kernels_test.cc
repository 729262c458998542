// The datasets that need no function, run through a local session: known
// values (TensorFlow's dataset tests' cases), edge cases (empty inputs,
// counts of -1 and 0, remainders), bad inputs with their errors, the
// iterator ops (initialization, restart, string handles, anonymous
// iterators) and record files (TFRecord plain and GZIP, text lines, fixed
// length records).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/data/dataset_builder.h"
#include "ops/data/internal/session_drain.h"
#include "runtime/io/record_writer.h"

namespace sluice {
namespace data {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::vector<int64_t> Iota(int64_t n, int64_t start = 0) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Every element's component 0 (int64) of `ds`.
std::vector<int64_t> Drain(const Scope& s, const Dataset& ds) {
  SessionDrain d(s, ds.MakeInitializableIterator());
  absl::Status st = d.Start();
  EXPECT_TRUE(st.ok()) << st;
  return st.ok() ? d.Ints() : std::vector<int64_t>{};
}

absl::Status DrainError(const Scope& s, const Dataset& ds) {
  SessionDrain d(s, ds.MakeInitializableIterator());
  absl::Status st = d.Start();
  if (!st.ok()) return st;
  return d.Next().status();
}

class DatasetKernelsTest : public ::testing::Test {
 protected:
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(DatasetKernelsTest, Range) {
  EXPECT_THAT(Drain(s_, Range(s_, 0, 5)), ElementsAre(0, 1, 2, 3, 4));
}

TEST_F(DatasetKernelsTest, RangeStepsAndEmpty) {
  EXPECT_THAT(Drain(s_, Range(s_, 2, 10, 3)), ElementsAre(2, 5, 8));
  EXPECT_THAT(Drain(s_, Range(s_, 5, 0, -2)), ElementsAre(5, 3, 1));
  EXPECT_THAT(Drain(s_, Range(s_, 5, 5)), ElementsAre());
  EXPECT_THAT(Drain(s_, Range(s_, 5, 0)), ElementsAre());
}

TEST_F(DatasetKernelsTest, RangeZeroStep) {
  absl::Status st = DrainError(s_, Range(s_, 0, 5, 0));
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("step must be a non-zero integer"));
}

TEST_F(DatasetKernelsTest, EndOfSequenceRepeats) {
  SessionDrain d(s_, Range(s_, 0, 1).MakeInitializableIterator());
  ASSERT_TRUE(d.Start().ok());
  ASSERT_TRUE(d.Next().ok());
  for (int i = 0; i < 2; ++i) {
    absl::Status st = d.Next().status();
    EXPECT_TRUE(absl::IsOutOfRange(st)) << st;
    EXPECT_THAT(st.message(), HasSubstr("End of sequence"));
  }
  // The initializer starts over.
  ASSERT_TRUE(d.Init().ok());
  EXPECT_THAT(d.Ints(), ElementsAre(0));
}

TEST_F(DatasetKernelsTest, GetNextBeforeInitializer) {
  Iterator it = Range(s_, 0, 3).MakeInitializableIterator();
  SessionDrain d(s_, it);
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
  ASSERT_TRUE(sess.ok());
  absl::Status st = (*sess)->Run({}, d.next(), {}).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("has not been initialized"));
}

TEST_F(DatasetKernelsTest, TensorSlicesAndTensors) {
  Output ints = ops::Const(s_, Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})));
  Tensor names(DT_STRING, TensorShape({3}));
  names.flat<std::string>()[0] = "a";
  names.flat<std::string>()[1] = "bb";
  names.flat<std::string>()[2] = "";
  Output strs = ops::Const(s_, names);
  Dataset slices = TensorSlices(s_, {ints, strs});
  EXPECT_EQ(slices.spec().shapes[0], TensorShape({2}));
  SessionDrain d(s_, slices.MakeInitializableIterator());
  Dataset whole = Tensors(s_, {ints});
  SessionDrain w(s_, whole.MakeInitializableIterator());
  ASSERT_TRUE(d.Start().ok());
  std::vector<std::vector<Tensor>> all = d.All();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_THAT(all[1][0].flat<int64_t>(), ElementsAre(3, 4));
  EXPECT_EQ(all[1][1].scalar<std::string>(), "bb");
  EXPECT_EQ(all[2][1].scalar<std::string>(), "");
  ASSERT_TRUE(w.Start().ok());
  std::vector<std::vector<Tensor>> one = w.All();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0][0].shape(), TensorShape({3, 2}));
}

TEST_F(DatasetKernelsTest, TensorSlicesMismatchedRows) {
  Output a = ops::Const(s_, Tensor::FromVector<int64_t>({1, 2, 3}));
  Output b = ops::Const(s_, Tensor::FromVector<int64_t>({1, 2}));
  absl::Status st = DrainError(s_, TensorSlices(s_, {a, b}));
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("same size in the 0th dimension"));
}

TEST_F(DatasetKernelsTest, Batch) {
  SessionDrain d(s_, Range(s_, 0, 10).Batch(4).MakeInitializableIterator());
  ASSERT_TRUE(d.Start().ok());
  std::vector<std::vector<Tensor>> all = d.All();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0][0].shape(), TensorShape({4}));
  EXPECT_THAT(all[1][0].flat<int64_t>(), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(all[2][0].flat<int64_t>(), ElementsAre(8, 9));
}

TEST_F(DatasetKernelsTest, BatchDropRemainderAndStacking) {
  EXPECT_THAT(Drain(s_, Range(s_, 0, 10).Batch(4, true)), ElementsAreArray(Iota(8)));
  EXPECT_THAT(Drain(s_, Range(s_, 0, 3).Batch(4, true)), ElementsAre());
  // Batches of batches: [2, 3] elements.
  SessionDrain d(s_, Range(s_, 0, 12).Batch(3).Batch(2).MakeInitializableIterator());
  ASSERT_TRUE(d.Start().ok());
  std::vector<std::vector<Tensor>> all = d.All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1][0].shape(), TensorShape({2, 3}));
  EXPECT_THAT(all[1][0].flat<int64_t>(), ElementsAre(6, 7, 8, 9, 10, 11));
}

TEST_F(DatasetKernelsTest, BatchSizeZero) {
  absl::Status st = DrainError(s_, Range(s_, 0, 3).Batch(0));
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("Batch size must be greater than zero"));
}

TEST_F(DatasetKernelsTest, PaddedBatchOfScalarsAndRaggedStrings) {
  // Scalars pad to themselves; the padding value fills nothing.
  SessionDrain d(s_, Range(s_, 0, 5).PaddedBatch(2, {{}}, {ops::Const(s_, Tensor::Scalar<int64_t>(-1))})
                         .MakeInitializableIterator());
  ASSERT_TRUE(d.Start().ok());
  std::vector<std::vector<Tensor>> all = d.All();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_THAT(all[2][0].flat<int64_t>(), ElementsAre(4));
}

TEST_F(DatasetKernelsTest, Shuffle) {
  std::vector<int64_t> a = Drain(s_, Range(s_, 0, 100).Shuffle(10, 7));
  std::vector<int64_t> b = Drain(s_, Range(s_, 0, 100).Shuffle(10, 7));
  std::vector<int64_t> c = Drain(s_, Range(s_, 0, 100).Shuffle(10, 8));
  EXPECT_EQ(a, b);  // same seed, same order
  EXPECT_NE(a, c);
  EXPECT_NE(a, Iota(100));
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, Iota(100));
  // A buffer of 10 moves an element at most 9 places earlier.
  for (size_t i = 0; i < a.size(); ++i) EXPECT_LE(a[i], static_cast<int64_t>(i) + 9);
  EXPECT_EQ(Drain(s_, Range(s_, 0, 20).Shuffle(1, 7)), Iota(20));
}

TEST_F(DatasetKernelsTest, ShuffleReshuffleEachIteration) {
  std::vector<int64_t> re = Drain(s_, Range(s_, 0, 50).Shuffle(50, 3).Repeat(2));
  ASSERT_EQ(re.size(), 100u);
  EXPECT_NE(std::vector<int64_t>(re.begin(), re.begin() + 50),
            std::vector<int64_t>(re.begin() + 50, re.end()));
  std::vector<int64_t> same = Drain(s_, Range(s_, 0, 50).Shuffle(50, 3, false).Repeat(2));
  ASSERT_EQ(same.size(), 100u);
  EXPECT_EQ(std::vector<int64_t>(same.begin(), same.begin() + 50),
            std::vector<int64_t>(same.begin() + 50, same.end()));
  // The first epoch of either is the same order: seeds (seed, seed2) first.
  std::vector<int64_t> again = Drain(s_, Range(s_, 0, 50).Shuffle(50, 3).Repeat(2));
  EXPECT_EQ(re, again);
}

TEST_F(DatasetKernelsTest, ShuffleUnseededDiffers) {
  std::vector<int64_t> a = Drain(s_, Range(s_, 0, 200).Shuffle(200));
  std::vector<int64_t> b = Drain(s_, Range(s_, 0, 200).Shuffle(200));
  EXPECT_NE(a, b);
}

TEST_F(DatasetKernelsTest, ShuffleBadBuffer) {
  absl::Status st = DrainError(s_, Range(s_, 0, 3).Shuffle(0, 1));
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("buffer_size must be greater than zero"));
}

TEST_F(DatasetKernelsTest, ShuffleAndRepeat) {
  std::vector<int64_t> v = Drain(s_, Range(s_, 0, 10).ShuffleAndRepeat(4, 3, 5));
  ASSERT_EQ(v.size(), 30u);
  std::multiset<int64_t> counts(v.begin(), v.end());
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(counts.count(i), 3u) << i;
  EXPECT_THAT(Drain(s_, Range(s_, 0, 10).ShuffleAndRepeat(4, 0, 5)), ElementsAre());
  EXPECT_EQ(Drain(s_, Range(s_, 0, 3).ShuffleAndRepeat(4, -1, 5).Take(10)).size(), 10u);
}

TEST_F(DatasetKernelsTest, RepeatTakeSkip) {
  EXPECT_THAT(Drain(s_, Range(s_, 0, 3).Repeat(2)), ElementsAre(0, 1, 2, 0, 1, 2));
  EXPECT_THAT(Drain(s_, Range(s_, 0, 3).Repeat().Take(7)), ElementsAre(0, 1, 2, 0, 1, 2, 0));
  EXPECT_THAT(Drain(s_, Range(s_, 0, 3).Repeat(0)), ElementsAre());
  EXPECT_THAT(Drain(s_, Range(s_, 0, 0).Repeat()), ElementsAre());  // no endless loop
  EXPECT_THAT(Drain(s_, Range(s_, 0, 5).Take(-1)), ElementsAreArray(Iota(5)));
  EXPECT_THAT(Drain(s_, Range(s_, 0, 5).Take(0)), ElementsAre());
  EXPECT_THAT(Drain(s_, Range(s_, 0, 5).Take(9)), ElementsAreArray(Iota(5)));
  EXPECT_THAT(Drain(s_, Range(s_, 0, 5).Skip(2)), ElementsAre(2, 3, 4));
  EXPECT_THAT(Drain(s_, Range(s_, 0, 5).Skip(-1)), ElementsAre());
  EXPECT_THAT(Drain(s_, Range(s_, 0, 5).Skip(9)), ElementsAre());
  EXPECT_THAT(Drain(s_, Range(s_, 0, 5).Skip(0)), ElementsAreArray(Iota(5)));
}

TEST_F(DatasetKernelsTest, BadCount) {
  absl::Status st = DrainError(s_, Range(s_, 0, 3).Take(-2));
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
}

TEST_F(DatasetKernelsTest, Shard) {
  EXPECT_THAT(Drain(s_, Range(s_, 0, 10).Shard(3, 1)), ElementsAre(1, 4, 7));
  EXPECT_THAT(Drain(s_, Range(s_, 0, 10).Shard(3, 0)), ElementsAre(0, 3, 6, 9));
  absl::Status st = DrainError(s_, Range(s_, 0, 10).Shard(3, 3));
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("Index must be between 0 and 2"));
  st = DrainError(s_, Range(s_, 0, 10).Shard(0, 0));
  EXPECT_THAT(st.message(), HasSubstr("Number of shards must be greater than zero"));
}

TEST_F(DatasetKernelsTest, ZipAndConcatenate) {
  Dataset zipped = Zip(s_, {Range(s_, 0, 5), Range(s_, 10, 13)});
  SessionDrain d(s_, zipped.MakeInitializableIterator());
  ASSERT_TRUE(d.Start().ok());
  std::vector<std::vector<Tensor>> all = d.All();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2][0].scalar<int64_t>(), 2);
  EXPECT_EQ(all[2][1].scalar<int64_t>(), 12);
  EXPECT_THAT(Drain(s_, Range(s_, 0, 2).Concatenate(Range(s_, 5, 7)).Concatenate(Range(s_, 0, 0))),
              ElementsAre(0, 1, 5, 6));
}

TEST_F(DatasetKernelsTest, Prefetch) {
  EXPECT_EQ(Drain(s_, Range(s_, 0, 1000).Prefetch(4)), Iota(1000));
  EXPECT_EQ(Drain(s_, Range(s_, 0, 100).Prefetch(-1).Batch(10).Prefetch(1)), Iota(100));
  EXPECT_EQ(Drain(s_, Range(s_, 0, 10).Prefetch(0)), Iota(10));
}

TEST_F(DatasetKernelsTest, CacheInMemoryAndFile) {
  EXPECT_THAT(Drain(s_, Range(s_, 0, 3).Cache().Repeat(3)), ElementsAre(0, 1, 2, 0, 1, 2, 0, 1, 2));
  const std::string path = ::testing::TempDir() + "/cache_test";
  std::remove((path + ".sluice-cache").c_str());
  EXPECT_THAT(Drain(s_, Range(s_, 0, 4).Cache(path)), ElementsAre(0, 1, 2, 3));
  // Another dataset with the same file reads the file, not its input.
  EXPECT_THAT(Drain(s_, Range(s_, 100, 102).Cache(path)), ElementsAre(0, 1, 2, 3));
}

TEST_F(DatasetKernelsTest, OptimizeAndModelPassThrough) {
  Dataset r = Range(s_, 0, 3);
  Output opt = s_.Op("OptimizeDataset")
                   .Input(r.handle())
                   .Input(Input(std::initializer_list<std::string>{"map_fusion"}))
                   .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                   .SetAttr("output_shapes", MakeAttr(std::vector<TensorShape>{TensorShape()}))
                   .Finalize1();
  Output model = s_.Op("ModelDataset")
                     .Input(opt)
                     .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                     .SetAttr("output_shapes", MakeAttr(std::vector<TensorShape>{TensorShape()}))
                     .Finalize1();
  Output options = s_.Op("OptionsDataset")
                       .Input(model)
                       .Attr("serialized_options", "\x08\x01")
                       .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                       .SetAttr("output_shapes", MakeAttr(std::vector<TensorShape>{TensorShape()}))
                       .Finalize1();
  EXPECT_THAT(Drain(s_, Dataset(s_, options, r.spec())), ElementsAre(0, 1, 2));
}

// ---- iterator ops --------------------------------------------------------

TEST_F(DatasetKernelsTest, StringHandleRoundTrip) {
  Iterator it = Range(s_, 0, 3).MakeInitializableIterator("shared_range");
  Output sh = it.ToStringHandle();
  Output handle = s_.Op("IteratorFromStringHandleV2")
                      .Input(sh)
                      .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                      .SetAttr("output_shapes", MakeAttr(std::vector<TensorShape>{TensorShape()}))
                      .Finalize1();
  Output next = s_.Op("IteratorGetNextSync")
                    .Input(handle)
                    .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                    .SetAttr("output_shapes", MakeAttr(std::vector<TensorShape>{TensorShape()}))
                    .Finalize1();
  ASSERT_TRUE(s_.ok()) << s_.status();
  auto sess = NewSession(BuiltinSessionConfig(), *s_.graph());
  ASSERT_TRUE(sess.ok());
  ASSERT_TRUE((*sess)->Run({}, {}, {it.initializer()}).ok());
  absl::StatusOr<std::vector<Tensor>> h = (*sess)->Run({}, {sh}, {});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_THAT((*h)[0].scalar<std::string>(), HasSubstr("shared_range"));
  for (int64_t i = 0; i < 3; ++i) {
    absl::StatusOr<std::vector<Tensor>> v = (*sess)->Run({}, {next}, {});
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ((*v)[0].scalar<int64_t>(), i);
  }
  EXPECT_TRUE(absl::IsOutOfRange((*sess)->Run({}, {next}, {}).status()));
  Output bad = s_.Op("IteratorFromStringHandle").Input(Input("nonsense")).Finalize1();
  ASSERT_TRUE(s_.ok());
  sess = NewSession(BuiltinSessionConfig(), *s_.graph());
  absl::Status st = (*sess)->Run({}, {bad}, {}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
}

TEST_F(DatasetKernelsTest, AnonymousIteratorAndDelete) {
  // As a TF 2 graph uses it: make, read and delete in one step.
  Dataset r = Range(s_, 0, 2);
  std::vector<Output> anon = s_.Op("AnonymousIteratorV2")
                                 .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                                 .SetAttr("output_shapes",
                                          MakeAttr(std::vector<TensorShape>{TensorShape()}))
                                 .FinalizeAll();
  Node* make = s_.Op("MakeIterator").Input(r.handle()).Input(anon[0]).Finalize();
  Output next = s_.WithControlDependencies(std::vector<Node*>{make})
                    .Op("IteratorGetNext")
                    .Input(anon[0])
                    .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                    .SetAttr("output_shapes", MakeAttr(std::vector<TensorShape>{TensorShape()}))
                    .Finalize1();
  Node* del = s_.WithControlDependencies(std::vector<Output>{next})
                  .Op("DeleteIterator")
                  .Input(anon[0])
                  .Input(anon[1])
                  .Finalize();
  ASSERT_TRUE(s_.ok()) << s_.status();
  auto sess = NewSession(BuiltinSessionConfig(), *s_.graph());
  ASSERT_TRUE(sess.ok());
  for (int run = 0; run < 2; ++run) {  // each run: a new iterator, from the start
    absl::StatusOr<std::vector<Tensor>> v = (*sess)->Run({}, {next, anon[0]}, {del});
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ((*v)[0].scalar<int64_t>(), 0);
    EXPECT_THAT((*v)[1].scalar<std::string>(), HasSubstr("AnonymousIterator"));
  }
}

// ---- files ---------------------------------------------------------------

std::string WriteRecords(const std::string& name, const std::vector<std::string>& records,
                         RecordCompression c = RecordCompression::kNone) {
  const std::string path = ::testing::TempDir() + "/" + name;
  auto w = RecordWriter::Create(path, c);
  EXPECT_TRUE(w.ok()) << w.status();
  for (const std::string& r : records) EXPECT_TRUE((*w)->WriteRecord(r).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

std::vector<std::string> Strings(SessionDrain& d) {
  std::vector<std::string> v;
  for (const auto& e : d.All()) v.push_back(e[0].scalar<std::string>());
  return v;
}

TEST_F(DatasetKernelsTest, TFRecordPlainAndGzipFiles) {
  const std::string a = WriteRecords("a.tfrecord", {"one", "", std::string(100000, 'x')});
  const std::string b = WriteRecords("b.tfrecord.gz", {"two", "three"}, RecordCompression::kGzip);
  SessionDrain plain(s_, TFRecordDataset(s_, Input(a)).MakeInitializableIterator());
  SessionDrain gz(s_, TFRecordDataset(s_, Input(b), "GZIP").MakeInitializableIterator());
  Dataset both = TFRecordDataset(s_, Input(std::initializer_list<std::string>{a, a}));
  SessionDrain twice(s_, both.MakeInitializableIterator());
  ASSERT_TRUE(plain.Start().ok());
  std::vector<std::string> p = Strings(plain);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], "one");
  EXPECT_EQ(p[1], "");
  EXPECT_EQ(p[2].size(), 100000u);
  ASSERT_TRUE(gz.Start().ok());
  EXPECT_THAT(Strings(gz), ElementsAre("two", "three"));
  ASSERT_TRUE(twice.Start().ok());
  EXPECT_EQ(Strings(twice).size(), 6u);
}

TEST_F(DatasetKernelsTest, TFRecordErrors) {
  const std::string a = WriteRecords("c.tfrecord", {"one"});
  absl::Status st = DrainError(s_, TFRecordDataset(s_, Input(a + ".missing")));
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("c.tfrecord.missing"));
  st = DrainError(s_, TFRecordDataset(s_, Input(a), "LZ4"));
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("LZ4"));
  // A corrupt record: DataLoss naming the file.
  std::string bytes;
  {
    std::ifstream in(a, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() - 5] ^= 0x55;
  const std::string bad = ::testing::TempDir() + "/corrupt.tfrecord";
  std::ofstream(bad, std::ios::binary) << bytes;
  st = DrainError(s_, TFRecordDataset(s_, Input(bad)));
  EXPECT_TRUE(absl::IsDataLoss(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("corrupt.tfrecord"));
}

TEST_F(DatasetKernelsTest, TextLines) {
  const std::string path = ::testing::TempDir() + "/lines.txt";
  std::ofstream(path, std::ios::binary) << "alpha\nbeta\r\n\ngamma";
  SessionDrain d(s_, TextLineDataset(s_, Input(path)).MakeInitializableIterator());
  ASSERT_TRUE(d.Start().ok());
  EXPECT_THAT(Strings(d), ElementsAre("alpha", "beta", "", "gamma"));
}

TEST_F(DatasetKernelsTest, FixedLengthRecords) {
  const std::string path = ::testing::TempDir() + "/fixed.bin";
  std::ofstream(path, std::ios::binary) << "HHabcdefghF";  // header 2, 3 records of 3, footer 1
  SessionDrain d(s_, FixedLengthRecordDataset(s_, Input(path), 3, 2, 1).MakeInitializableIterator());
  ASSERT_TRUE(d.Start().ok());
  EXPECT_THAT(Strings(d), ElementsAre("abc", "def"));  // "ghF" would eat the footer
  absl::Status st = DrainError(s_, FixedLengthRecordDataset(s_, Input(path), 0));
  EXPECT_THAT(st.message(), HasSubstr("record_bytes must be positive"));
}

TEST_F(DatasetKernelsTest, PrefetchPassesErrorsInOrder) {
  const std::string good = WriteRecords("good.tfrecord", {"a", "b", "c"});
  Dataset ds = TFRecordDataset(s_, Input(std::initializer_list<std::string>{good, good + ".gone"}))
                   .Prefetch(8);
  SessionDrain d(s_, ds.MakeInitializableIterator());
  ASSERT_TRUE(d.Start().ok());
  for (const char* want : {"a", "b", "c"}) {
    absl::StatusOr<std::vector<Tensor>> e = d.Next();
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ((*e)[0].scalar<std::string>(), want);
  }
  absl::Status st = d.Next().status();
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("good.tfrecord.gone"));
}

// TF 2's shuffle: ShuffleDatasetV3 beside a seed generator, V2 taking the
// generator's seeds.
TEST_F(DatasetKernelsTest, ShuffleV2AndV3WithSeedGenerators) {
  Dataset r = Range(s_, 0, 30);
  std::vector<Output> gen = s_.Op("AnonymousSeedGenerator")
                                .Input(Input(int64_t{4}))
                                .Input(Input(int64_t{5}))
                                .Input(Input(true))
                                .FinalizeAll();
  Output v2 = s_.Op("ShuffleDatasetV2")
                  .Input(r.handle())
                  .Input(Input(int64_t{8}))
                  .Input(gen[0])
                  .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                  .SetAttr("output_shapes", MakeAttr(std::vector<TensorShape>{TensorShape()}))
                  .Finalize1();
  Output dummy = s_.Op("DummySeedGenerator").Finalize1();
  Output v3 = s_.Op("ShuffleDatasetV3")
                  .Input(r.handle())
                  .Input(Input(int64_t{8}))
                  .Input(Input(int64_t{4}))
                  .Input(Input(int64_t{5}))
                  .Input(dummy)
                  .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                  .SetAttr("output_shapes", MakeAttr(std::vector<TensorShape>{TensorShape()}))
                  .Finalize1();
  std::vector<int64_t> a = Drain(s_, Dataset(s_, v2, r.spec()));
  std::vector<int64_t> b = Drain(s_, Dataset(s_, v3, r.spec()));
  EXPECT_EQ(a, b);  // the same seeds, the same order
  EXPECT_NE(a, Iota(30));
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, Iota(30));
}

}  // namespace
}  // namespace data
}  // namespace sluice
