// The machinery's own cost on the main job's pipeline shape: 20,000 records
// of 794 bytes (a 28x28 image and a few bytes of label) from a TFRecord
// file -> Map (a C++ stand-in for ParseExample + DecodeRaw: bytes to 784
// floats and an int64 label, through the fake FunctionRuntime) -> Shuffle
// -> Batch(64, drop_remainder) -> Prefetch, read through IteratorGetNext.
// Prints examples/s; fails only far below any sane figure (a shared 2-core
// machine), to catch per-element pathologies.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/builtins.h"
#include "ops/data/dataset_builder.h"
#include "ops/data/internal/data_testutil.h"
#include "runtime/io/record_writer.h"

namespace sluice {
namespace data {
namespace {

TEST(DatasetThroughputTest, TFRecordMapShuffleBatchPrefetch) {
  constexpr int kRecords = 20000;
  const std::string path = ::testing::TempDir() + "/throughput.tfrecord";
  {
    auto w = RecordWriter::Create(path);
    ASSERT_TRUE(w.ok());
    std::string rec(794, '\0');
    for (int i = 0; i < kRecords; ++i) {
      rec[0] = static_cast<char>(i % 10);
      ASSERT_TRUE((*w)->WriteRecord(rec).ok());
    }
    ASSERT_TRUE((*w)->Close().ok());
  }
  std::unique_ptr<Device> device = NewCpuDevice({.num_threads = 2});
  auto fr = std::make_shared<FakeFunctionRuntime>(device.get());
  fr->Add("decode", [](std::vector<Tensor> a, std::vector<Tensor>* r) {
    const std::string& s = a[0].scalar<std::string>();
    Tensor image(DT_FLOAT, TensorShape({784}));
    float* d = image.data<float>();
    for (int i = 0; i < 784; ++i) d[i] = static_cast<uint8_t>(s[10 + i]) * (1.0f / 255);
    r->push_back(std::move(image));
    r->push_back(Tensor::Scalar<int64_t>(s[0]));
    return absl::OkStatus();
  });
  Scope s = Scope::NewRootScope(BuiltinOps());
  ::tensorflow::NameAttrList decode;
  decode.set_name("decode");
  Iterator it = TFRecordDataset(s, Input(path))
                    .Map(decode, ElementSpec{{DT_FLOAT, DT_INT64}, {TensorShape({784}), TensorShape()}})
                    .Shuffle(10000, 1)
                    .Batch(64, true)
                    .Prefetch(2)
                    .MakeInitializableIterator();
  std::vector<Output> next = it.GetNext();
  ASSERT_TRUE(s.ok()) << s.status();
  TestGraphRunner runner(s.graph(), device.get(), fr.get());
  ASSERT_TRUE(runner.Run({}, {it.initializer()}).ok());
  const auto start = std::chrono::steady_clock::now();
  int64_t examples = 0;
  while (true) {
    absl::StatusOr<std::vector<Tensor>> b = runner.Run(next);
    if (!b.ok()) {
      ASSERT_TRUE(absl::IsOutOfRange(b.status())) << b.status();
      break;
    }
    ASSERT_EQ((*b)[0].shape(), TensorShape({64, 784}));
    examples += 64;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(examples, kRecords / 64 * 64);
  std::printf("input pipeline: %lld examples in %.3f s: %.0f examples/s\n",
              static_cast<long long>(examples), secs, examples / secs);
  EXPECT_GT(examples / secs, 5000.0);
}

}  // namespace
}  // namespace data
}  // namespace sluice
