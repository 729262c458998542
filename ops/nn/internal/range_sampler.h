// Samplers of class ids in [0, range) for sampled softmax and NCE
// (TensorFlow's core/kernels/range_sampler.h, whose draws they reproduce
// from the same Philox words):
//
//   UniformRangeSampler     each id with probability 1 / range
//   LogUniformRangeSampler  Zipfian: P(k) = log((k + 2) / (k + 1)) / log(range + 1)
//   UnigramRangeSampler     proportional to counts learned from the true
//                           classes (each starts at 1; Update adds 1 per id)
//   FixedUnigramRangeSampler  proportional to given unigram counts (or a
//                           vocabulary file's last CSV column) raised to
//                           `distortion`, for one shard of the ids, by
//                           Walker's alias method
//   AllRangeSampler         every id once, in order
//
// SampleBatch fills `batch` with draws (unique: redraws until distinct)
// and the expected counts of the batch's and of `extras`' ids: p * n
// without redraws, 1 - (1 - p)^tries with them, in float as TensorFlow.
//
//   LogUniformRangeSampler s(50000);
//   PhiloxStream rng(kc);
//   s.SampleBatch(&rng, /*unique=*/true, absl::MakeSpan(ids), absl::MakeSpan(counts),
//                 true_ids, absl::MakeSpan(true_counts));
//
// Thread-safety: Sample and Probability are const; UnigramRangeSampler's
// Update and its reads take a mutex.
#ifndef SLUICE_OPS_NN_INTERNAL_RANGE_SAMPLER_H_
#define SLUICE_OPS_NN_INTERNAL_RANGE_SAMPLER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "ops/random/internal/philox_stream.h"

namespace sluice {

class RangeSampler {
 public:
  explicit RangeSampler(int64_t range) : range_(range) {}
  virtual ~RangeSampler() = default;

  int64_t range() const { return range_; }
  virtual int64_t Sample(PhiloxStream* rng) const = 0;
  virtual float Probability(int64_t id) const = 0;
  // Counts the ids of a batch's true classes (the learned unigram ones).
  virtual void Update(absl::Span<const int64_t> ids) {}

  // `unique` needs batch.size() <= range(). Empty count spans skip them.
  virtual void SampleBatch(PhiloxStream* rng, bool unique, absl::Span<int64_t> batch,
                           absl::Span<float> batch_counts, absl::Span<const int64_t> extras,
                           absl::Span<float> extra_counts) const;

 protected:
  // SampleBatch's loop over the given draw and probability (the unigram
  // sampler passes ones that expect its lock held).
  void FillBatch(absl::FunctionRef<int64_t()> sample,
                 absl::FunctionRef<float(int64_t)> probability, bool unique,
                 absl::Span<int64_t> batch, absl::Span<float> batch_counts,
                 absl::Span<const int64_t> extras, absl::Span<float> extra_counts) const;

  const int64_t range_;
};

class UniformRangeSampler : public RangeSampler {
 public:
  explicit UniformRangeSampler(int64_t range)
      : RangeSampler(range), inv_range_(static_cast<float>(1.0 / range)) {}
  int64_t Sample(PhiloxStream* rng) const override;
  float Probability(int64_t) const override { return inv_range_; }

 private:
  const float inv_range_;
};

class LogUniformRangeSampler : public RangeSampler {
 public:
  explicit LogUniformRangeSampler(int64_t range);
  int64_t Sample(PhiloxStream* rng) const override;
  float Probability(int64_t id) const override;

 private:
  const double log_range_;
};

class UnigramRangeSampler : public RangeSampler {
 public:
  explicit UnigramRangeSampler(int64_t range);  // range < 2^31 - 1
  int64_t Sample(PhiloxStream* rng) const override;
  float Probability(int64_t id) const override;
  void Update(absl::Span<const int64_t> ids) override;
  void SampleBatch(PhiloxStream* rng, bool unique, absl::Span<int64_t> batch,
                   absl::Span<float> batch_counts, absl::Span<const int64_t> extras,
                   absl::Span<float> extra_counts) const override;

 private:
  // The id at weight position `at` of the prefix sums (a Fenwick tree).
  int64_t Find(int32_t at) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  int64_t SampleLocked(PhiloxStream* rng) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  float ProbabilityLocked(int64_t id) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<int32_t> weights_ ABSL_GUARDED_BY(mu_);
  std::vector<int32_t> tree_ ABSL_GUARDED_BY(mu_);  // 1-based partial sums
  int32_t total_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t top_bit_ = 1;  // the largest power of two <= range
};

class FixedUnigramRangeSampler : public RangeSampler {
 public:
  // The ids of shard `shard` of `num_shards` (id % num_shards == shard),
  // the first `num_reserved_ids` with weight 0, then the given weights.
  // Errors: no weights, or other than range() of them for this shard.
  static absl::StatusOr<std::unique_ptr<FixedUnigramRangeSampler>> Create(
      int64_t range, float distortion, int64_t num_reserved_ids, int64_t num_shards,
      int64_t shard, const std::vector<float>& unigrams, const std::string& vocab_file);
  int64_t Sample(PhiloxStream* rng) const override;
  float Probability(int64_t id) const override;

 private:
  explicit FixedUnigramRangeSampler(int64_t range) : RangeSampler(range) {}
  void BuildAliasTable();

  std::vector<float> weights_;
  float total_ = 0;  // float, as TensorFlow sums it
  std::vector<std::pair<float, int>> alias_;  // (probability, alternative)
};

class AllRangeSampler : public RangeSampler {
 public:
  explicit AllRangeSampler(int64_t range) : RangeSampler(range) {}
  int64_t Sample(PhiloxStream*) const override { return 0; }
  float Probability(int64_t) const override { return 1.0f; }
  void SampleBatch(PhiloxStream* rng, bool unique, absl::Span<int64_t> batch,
                   absl::Span<float> batch_counts, absl::Span<const int64_t> extras,
                   absl::Span<float> extra_counts) const override;
};

}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_RANGE_SAMPLER_H_
