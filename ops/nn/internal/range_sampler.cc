#include "ops/nn/internal/range_sampler.h"

#include <cmath>
#include <limits>
#include <unordered_set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "ops/io/file_write_policy.h"
#include "runtime/atomic_file.h"

namespace sluice {
namespace {

// The expected count of an id of probability p in a batch of n drawn in
// `tries` draws: p * n without redraws, else 1 - (1 - p)^tries (in float,
// as TensorFlow computes it).
float ExpectedCount(float p, int64_t n, int64_t tries) {
  if (tries == n) return p * static_cast<float>(n);
  return -std::expm1(static_cast<float>(tries) * std::log1p(-p));
}

}  // namespace

void RangeSampler::SampleBatch(PhiloxStream* rng, bool unique, absl::Span<int64_t> batch,
                               absl::Span<float> batch_counts, absl::Span<const int64_t> extras,
                               absl::Span<float> extra_counts) const {
  FillBatch([&] { return Sample(rng); }, [&](int64_t id) { return Probability(id); }, unique,
            batch, batch_counts, extras, extra_counts);
}

void RangeSampler::FillBatch(absl::FunctionRef<int64_t()> sample,
                             absl::FunctionRef<float(int64_t)> probability, bool unique,
                             absl::Span<int64_t> batch, absl::Span<float> batch_counts,
                             absl::Span<const int64_t> extras,
                             absl::Span<float> extra_counts) const {
  const int64_t n = static_cast<int64_t>(batch.size());
  int64_t tries = 0;
  if (unique) {
    std::unordered_set<int64_t> used;
    used.reserve(batch.size());
    for (int64_t picked = 0; picked < n;) {
      ++tries;
      const int64_t id = sample();
      if (used.insert(id).second) batch[picked++] = id;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) batch[i] = sample();
    tries = n;
  }
  for (size_t i = 0; i < batch_counts.size(); ++i) {
    batch_counts[i] = ExpectedCount(probability(batch[i]), n, tries);
  }
  for (size_t i = 0; i < extra_counts.size(); ++i) {
    extra_counts[i] = ExpectedCount(probability(extras[i]), n, tries);
  }
}

int64_t UniformRangeSampler::Sample(PhiloxStream* rng) const {
  return static_cast<int64_t>(rng->Uniform64(static_cast<uint64_t>(range_)));
}

LogUniformRangeSampler::LogUniformRangeSampler(int64_t range)
    : RangeSampler(range), log_range_(std::log1p(static_cast<double>(range))) {}

int64_t LogUniformRangeSampler::Sample(PhiloxStream* rng) const {
  const int64_t id = static_cast<int64_t>(std::exp(rng->RandDouble() * log_range_)) - 1;
  return id % range_;  // the rounding guard TensorFlow keeps
}

float LogUniformRangeSampler::Probability(int64_t id) const {
  return static_cast<float>(std::log((id + 2.0) / (id + 1.0)) / log_range_);
}

UnigramRangeSampler::UnigramRangeSampler(int64_t range)
    : RangeSampler(range), weights_(range, 1), tree_(range + 1, 0), total_(static_cast<int32_t>(range)) {
  while (top_bit_ * 2 <= range) top_bit_ *= 2;
  // Every weight 1: node i of the Fenwick tree covers i & -i ids.
  for (int64_t i = 1; i <= range; ++i) tree_[i] = static_cast<int32_t>(i & -i);
}

int64_t UnigramRangeSampler::Find(int32_t at) const {
  // The first id whose inclusive prefix sum passes `at`: the leaf
  // TensorFlow's weight tree descends to.
  int64_t pos = 0;
  for (int64_t step = top_bit_; step > 0; step >>= 1) {
    if (pos + step <= range_ && tree_[pos + step] <= at) {
      pos += step;
      at -= tree_[pos];
    }
  }
  return pos;
}

int64_t UnigramRangeSampler::SampleLocked(PhiloxStream* rng) const {
  if (total_ <= 0) return -1;
  return Find(static_cast<int32_t>(rng->Uniform(static_cast<uint32_t>(total_))));
}

int64_t UnigramRangeSampler::Sample(PhiloxStream* rng) const {
  absl::ReaderMutexLock lock(&mu_);
  return SampleLocked(rng);
}

float UnigramRangeSampler::ProbabilityLocked(int64_t id) const {
  return static_cast<float>(weights_[id]) / static_cast<float>(total_);
}

float UnigramRangeSampler::Probability(int64_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  return ProbabilityLocked(id);
}

void UnigramRangeSampler::Update(absl::Span<const int64_t> ids) {
  absl::MutexLock lock(&mu_);
  // Counts stop where the total would pass int32's range, as in TensorFlow.
  const int64_t room = std::numeric_limits<int32_t>::max() - static_cast<int64_t>(total_);
  const int64_t n = std::min<int64_t>(static_cast<int64_t>(ids.size()), room);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = ids[i];
    ++weights_[id];
    ++total_;
    for (int64_t j = id + 1; j <= range_; j += j & -j) ++tree_[j];
  }
}

void UnigramRangeSampler::SampleBatch(PhiloxStream* rng, bool unique, absl::Span<int64_t> batch,
                                      absl::Span<float> batch_counts,
                                      absl::Span<const int64_t> extras,
                                      absl::Span<float> extra_counts) const {
  // One lock for the whole batch, not one per draw.
  absl::ReaderMutexLock lock(&mu_);
  FillBatch([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return SampleLocked(rng); },
            [&](int64_t id) ABSL_NO_THREAD_SAFETY_ANALYSIS { return ProbabilityLocked(id); },
            unique, batch, batch_counts, extras, extra_counts);
}

absl::StatusOr<std::unique_ptr<FixedUnigramRangeSampler>> FixedUnigramRangeSampler::Create(
    int64_t range, float distortion, int64_t num_reserved_ids, int64_t num_shards, int64_t shard,
    const std::vector<float>& unigrams, const std::string& vocab_file) {
  if (vocab_file.empty() == unigrams.empty()) {
    return absl::InvalidArgumentError(vocab_file.empty()
                                          ? "Must provide either vocab_file or unigrams."
                                          : "Must only provide one of vocab_file and unigrams.");
  }
  if (num_shards < 1 || shard < 0 || shard >= num_shards) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard ", shard, " is not one of num_shards ", num_shards));
  }
  std::unique_ptr<FixedUnigramRangeSampler> s(new FixedUnigramRangeSampler(range));
  for (int64_t id = 0; id < num_reserved_ids; ++id) {
    if (id % num_shards == shard) s->weights_.push_back(0.0f);
  }
  // TensorFlow numbers the weighted ids from the count of this shard's
  // reserved ids (not num_reserved_ids), which decides the shard of each.
  int64_t id = static_cast<int64_t>(s->weights_.size());
  auto add = [&](float w) {
    if (id % num_shards == shard) {
      w = std::pow(w, distortion);
      s->total_ += w;
      s->weights_.push_back(w);
    }
    ++id;
  };
  if (!unigrams.empty()) {
    for (float w : unigrams) add(w);
  } else {
    // CSV lines whose last field is the id's count.
    RETURN_IF_ERROR(CheckGraphFileRead(vocab_file));
    ASSIGN_OR_RETURN(std::string text, ReadFileToString(vocab_file));
    std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    for (absl::string_view line : lines) {
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      const size_t comma = line.rfind(',');
      const absl::string_view last = comma == absl::string_view::npos ? line : line.substr(comma + 1);
      float w = 0;
      if (id % num_shards == shard && !absl::SimpleAtof(last, &w)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Wrong vocabulary format at line: ", line, " (", vocab_file, ")"));
      }
      add(w);
    }
  }
  if (static_cast<int64_t>(s->weights_.size()) != range) {
    return absl::InvalidArgumentError(absl::StrCat(
        "range is ", range, " must be equal to weights size  ", s->weights_.size()));
  }
  s->BuildAliasTable();
  return s;
}

void FixedUnigramRangeSampler::BuildAliasTable() {
  // Walker's alias method as TensorFlow's DistributionSampler builds it
  // (the same pairing order, so the same table and draws).
  const int n = static_cast<int>(weights_.size());
  alias_.assign(n, {0.0f, -1});
  double sum = 0.0;
  for (float w : weights_) sum += w;
  std::vector<double> pr(n);
  std::vector<int> high, low;
  for (int i = 0; i < n; ++i) {
    pr[i] = static_cast<double>(weights_[i] * static_cast<float>(n)) / sum;
    (pr[i] < 1.0 ? low : high).push_back(i);
  }
  while (!high.empty() && !low.empty()) {
    const int l = low.back();
    low.pop_back();
    const int h = high.back();
    high.pop_back();
    alias_[l].second = h;
    pr[h] = pr[h] - (1.0 - pr[l]);
    (pr[h] < 1.0 ? low : high).push_back(h);
  }
  for (int i = 0; i < n; ++i) alias_[i].first = static_cast<float>(pr[i]);
  // What rounding leaves in either list keeps itself.
  for (const std::vector<int>* rest : {&high, &low}) {
    for (int i : *rest) alias_[i] = {1.0f, i};
  }
}

int64_t FixedUnigramRangeSampler::Sample(PhiloxStream* rng) const {
  const float r = rng->RandFloat();
  const uint32_t i = rng->Uniform(static_cast<uint32_t>(alias_.size()));
  return r < alias_[i].first ? i : alias_[i].second;
}

float FixedUnigramRangeSampler::Probability(int64_t id) const {
  if (id < 0 || id >= static_cast<int64_t>(weights_.size())) return 0.0f;
  return weights_[id] / total_;
}

void AllRangeSampler::SampleBatch(PhiloxStream*, bool, absl::Span<int64_t> batch,
                                  absl::Span<float> batch_counts, absl::Span<const int64_t>,
                                  absl::Span<float> extra_counts) const {
  for (size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<int64_t>(i);
  for (float& c : batch_counts) c = 1.0f;
  for (float& c : extra_counts) c = 1.0f;
}

}  // namespace sluice
