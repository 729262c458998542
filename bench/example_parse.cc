// Example parsing speed on Fashion-MNIST-shaped records: one epoch's 60,000
// tf.train.Examples, each a 784-byte image (bytes_list, as the converter
// writes it) and an int64 label, parsed by ParseExamples (the engine of
// ParseExample / ParseSingleExample) in batches of 256 and one at a time,
// and the same with the image as 784 floats. Prints `name: value unit`.
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "graph/proto/example.pb.h"
#include "ops/parsing/example_parser.h"

namespace sluice {
namespace {

std::vector<std::string> MakeRecords(int n, bool float_image) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    tensorflow::Example ex;
    auto& f = *ex.mutable_features()->mutable_feature();
    if (float_image) {
      auto* v = f["image"].mutable_float_list();
      for (int k = 0; k < 784; ++k) v->add_value(static_cast<float>((i + k) % 256) / 255);
    } else {
      std::string pixels(784, '\0');
      for (int k = 0; k < 784; ++k) pixels[k] = static_cast<char>((i * 7 + k) % 256);
      f["image"].mutable_bytes_list()->add_value(pixels);
    }
    f["label"].mutable_int64_list()->add_value(i % 10);
    out.push_back(ex.SerializeAsString());
  }
  return out;
}

void Run(const char* name, bool float_image) {
  constexpr int kExamples = 60000, kBatch = 256;
  const std::vector<std::string> records = MakeRecords(kExamples, float_image);
  ExampleParseConfig config;
  config.dense.push_back({"image", float_image ? DT_FLOAT : DT_STRING,
                          float_image ? TensorShape({784}) : TensorShape({}), Tensor()});
  config.dense.push_back({"label", DT_INT64, TensorShape({}), Tensor()});
  if (!config.Finish().ok()) return;
  std::vector<Tensor> batches;
  for (int at = 0; at < kExamples; at += kBatch) {
    std::vector<std::string> b(records.begin() + at,
                               records.begin() + std::min(at + kBatch, kExamples));
    batches.push_back(Tensor::FromVector<std::string>(b));
  }
  std::vector<Tensor> singles;
  for (const std::string& r : records) singles.push_back(Tensor::Scalar<std::string>(r));
  std::vector<double> batched = bench::TimeRepeated(5, [&] {
    for (const Tensor& b : batches) {
      if (!ParseExamples(config, b, Tensor()).ok()) std::abort();
    }
  });
  std::vector<double> single = bench::TimeRepeated(3, [&] {
    for (const Tensor& t : singles) {
      if (!ParseExamples(config, t, Tensor()).ok()) std::abort();
    }
  });
  std::printf("example_parse_%s_batch256: %.0f examples/s\n", name,
              kExamples / (bench::Median(batched) / 1000));
  std::printf("example_parse_%s_single: %.0f examples/s\n", name,
              kExamples / (bench::Median(single) / 1000));
}

}  // namespace
}  // namespace sluice

int main() {
  sluice::Run("bytes_image", false);
  sluice::Run("float_image", true);
  return 0;
}
