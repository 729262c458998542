// Input pipeline throughput: the main job's tf.data pipeline
// (examples/fashion_mnist_input.h: TFRecord -> shuffle -> batch -> parse ->
// decode -> prefetch) over the Fashion-MNIST train records, one pass,
// examples per second. The PyTorch DataLoader over the same files is
// bench/torch_fashion_mnist.py --mode=pipeline; bench/fashion_mnist_vs_pytorch.sh
// runs both.
//
//   bazel run //bench:input_pipeline -- --data_dir=/tmp/sluice/fashion_mnist
//
// Prints "sluice_pipeline_<threads>threads: N examples/s" per --threads
// value, median of --rounds passes.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "examples/fashion_mnist_data.h"
#include "examples/fashion_mnist_input.h"
#include "base/status_macros.h"

ABSL_FLAG(std::string, data_dir, "/tmp/sluice/fashion_mnist", "the records (made if missing)");
ABSL_FLAG(int, train_shards, 4, "train files");
ABSL_FLAG(int, batch, 64, "examples per batch");
ABSL_FLAG(std::string, threads, "1,2", "pipeline session CPU threads to try, comma separated");
ABSL_FLAG(int, parallel_calls, 2, "Map's parallel calls");
ABSL_FLAG(int, rounds, 3, "passes per setting (the median is printed)");

namespace sluice {
namespace {

absl::StatusOr<double> OnePass(const std::vector<std::string>& files, int threads) {
  ImageInputOptions o;
  o.files = files;
  o.batch = absl::GetFlag(FLAGS_batch);
  o.shuffle = true;
  o.parallel_calls = absl::GetFlag(FLAGS_parallel_calls);
  o.cpu_threads = threads;
  ASSIGN_OR_RETURN(std::unique_ptr<ImageInput> in, ImageInput::Create(o));
  const absl::Time start = absl::Now();
  int64_t n = 0;
  while (true) {
    absl::StatusOr<ImageBatch> b = in->Next();
    if (absl::IsOutOfRange(b.status())) break;
    RETURN_IF_ERROR(b.status());
    n += b->labels.NumElements();
  }
  return n / absl::ToDoubleSeconds(absl::Now() - start);
}

absl::Status Main() {
  FashionMnistOptions data;
  data.out_dir = absl::GetFlag(FLAGS_data_dir);
  data.train_shards = absl::GetFlag(FLAGS_train_shards);
  ASSIGN_OR_RETURN(FashionMnistFiles files, EnsureFashionMnistRecords(data));
  for (absl::string_view t : absl::StrSplit(absl::GetFlag(FLAGS_threads), ',', absl::SkipEmpty())) {
    int threads = 0;
    if (!absl::SimpleAtoi(t, &threads) || threads < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--threads: bad count '", t, "'"));
    }
    std::vector<double> rates;
    for (int r = 0; r < std::max(1, absl::GetFlag(FLAGS_rounds)); ++r) {
      ASSIGN_OR_RETURN(double rate, OnePass(files.train, threads));
      rates.push_back(rate);
    }
    std::sort(rates.begin(), rates.end());
    std::printf("sluice_pipeline_%dthreads: %.0f examples/s\n", threads, rates[rates.size() / 2]);
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "input_pipeline: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
