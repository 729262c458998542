#include "examples/click_logs.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "graph/proto/example.pb.h"
#include "runtime/atomic_file.h"
#include "runtime/io/example_shards.h"
#include "runtime/io/image_examples.h"
#include "training/auc.h"

namespace sluice {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The planted weight of value `id` of feature `f`: a normal draw fixed by
// (seed, f, id) (Box-Muller over two hashed uniforms).
double PlantedWeight(const ClickLogOptions& o, int f, int id) {
  const uint64_t h = SplitMix64(o.seed * 0x100000001b3ULL ^ (uint64_t(f) << 32) ^ uint64_t(id));
  const double u1 = ((h >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = ((SplitMix64(h) >> 11) + 0.5) / 9007199254740992.0;
  return o.weight_stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// Writes `n` examples to `paths` (round robin); returns the planted
// probabilities and the labels.
absl::Status WriteExamples(const ClickLogOptions& o, const std::vector<std::string>& names,
                           std::mt19937_64* rng, int64_t n, const std::vector<std::string>& paths,
                           std::vector<float>* probabilities, std::vector<int64_t>* labels) {
  ASSIGN_OR_RETURN(std::unique_ptr<ExampleShardWriter> writer, ExampleShardWriter::Create(paths));
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    ::tensorflow::Example e;
    auto* features = e.mutable_features()->mutable_feature();
    double logit = o.bias;
    for (int f = 0; f < o.features; ++f) {
      const double u = uniform(*rng);
      const int id = std::min(o.vocab - 1, static_cast<int>(o.vocab * u * u));
      logit += PlantedWeight(o, f, id);
      (*features)[names[f]].mutable_bytes_list()->add_value(absl::StrCat("v", id));
    }
    const double p = 1.0 / (1.0 + std::exp(-logit));
    const int64_t label = uniform(*rng) < p ? 1 : 0;
    (*features)["label"].mutable_int64_list()->add_value(label);
    probabilities->push_back(static_cast<float>(p));
    labels->push_back(label);
    RETURN_IF_ERROR(writer->Write(e));
  }
  return writer->Commit();
}

std::string Describe(const ClickLogOptions& o) {
  return absl::StrFormat(
      "features=%d vocab=%d train=%d test=%d shards=%d seed=%d stddev=%.6g bias=%.6g", o.features,
      o.vocab, o.train_examples, o.test_examples, o.train_shards, o.seed, o.weight_stddev, o.bias);
}

}  // namespace

std::vector<std::string> ClickFeatureNames(int features) {
  std::vector<std::string> names;
  for (int f = 1; f <= features; ++f) names.push_back(absl::StrCat("C", f));
  return names;
}

absl::StatusOr<ClickLogFiles> EnsureClickLogs(const ClickLogOptions& o) {
  if (o.out_dir.empty() || o.features < 1 || o.features > 1000 || o.vocab < 1 ||
      o.train_examples < 1 || o.test_examples < 1 || o.train_shards < 1 ||
      o.train_shards > o.train_examples || !(o.weight_stddev >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("bad click log options: ", Describe(o)));
  }
  ClickLogFiles files;
  files.train = ShardedFileNames(absl::StrCat(o.out_dir, "/train"), o.train_shards);
  files.test = ShardedFileNames(absl::StrCat(o.out_dir, "/test"), 1);
  files.train_examples = o.train_examples;
  const std::string meta = absl::StrCat(o.out_dir, "/planted.txt");
  // Reused when made with the same options and every file is there.
  {
    std::ifstream in(meta);
    std::string options_line, auc_line, rate_line;
    if (std::getline(in, options_line) && std::getline(in, auc_line) &&
        std::getline(in, rate_line) && options_line == Describe(o) &&
        absl::SimpleAtod(auc_line, &files.planted_test_auc) &&
        absl::SimpleAtod(rate_line, &files.click_rate)) {
      bool all = true;
      for (const auto* list : {&files.train, &files.test}) {
        for (const std::string& f : *list) all &= std::filesystem::exists(f);
      }
      if (all) return files;
    }
  }
  RETURN_IF_ERROR(CreateDirectories(o.out_dir));
  const std::vector<std::string> names = ClickFeatureNames(o.features);
  std::mt19937_64 rng(o.seed);
  std::vector<float> p;
  std::vector<int64_t> labels;
  RETURN_IF_ERROR(WriteExamples(o, names, &rng, o.train_examples, files.train, &p, &labels));
  int64_t clicks = 0;
  for (int64_t l : labels) clicks += l;
  files.click_rate = static_cast<double>(clicks) / o.train_examples;
  p.clear();
  labels.clear();
  RETURN_IF_ERROR(WriteExamples(o, names, &rng, o.test_examples, files.test, &p, &labels));
  AucAccumulator auc;
  RETURN_IF_ERROR(auc.Add(labels, p));
  files.planted_test_auc = auc.Value();
  RETURN_IF_ERROR(WriteFileAtomically(
      meta, absl::StrCat(Describe(o), "\n", absl::StrFormat("%.9f", files.planted_test_auc), "\n",
                         absl::StrFormat("%.9f", files.click_rate), "\n")));
  return files;
}

}  // namespace sluice
