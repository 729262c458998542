// Candidate sampling for sampled softmax and NCE over large vocabularies
// (tf.nn.sampled_softmax_loss, tf.nn.nce_loss, tf.random.*_candidate_sampler),
// under TensorFlow's names, inputs and attrs:
//   UniformCandidateSampler, LogUniformCandidateSampler,
//   LearnedUnigramCandidateSampler, ThreadUnsafeUnigramCandidateSampler,
//   FixedUnigramCandidateSampler, AllCandidateSampler
//       true_classes int64 [batch, num_true] -> sampled_candidates int64
//       [num_sampled], true_expected_count float [batch, num_true],
//       sampled_expected_count float [num_sampled]
//       (the distributions: ops/nn/internal/range_sampler.h; unique draws
//       without repeats; the learned unigram ones count each run's true
//       classes after drawing)
//   ComputeAccidentalHits
//       true_classes [batch, num_true], sampled_candidates [num_sampled] ->
//       indices int32, ids int64 (the sampled position), weights float
//       (-FLT_MAX): each true class that was also sampled, row by row
// The draws are TensorFlow's bit for bit: its generator of the seed and
// seed2 attrs (both 0: a random seed; each run reserves 2048 x num_sampled
// words) read as its SimplePhilox reads them. Stateful; no gradients.
// Errors (InvalidArgument, TensorFlow's texts): true_classes not a matrix
// of num_true columns, a true class outside [0, range_max), unique with
// num_sampled > range_max, range_max < 1; FixedUnigram: both or neither
// of unigrams and vocab_file, a weight count other than range_max, a
// vocabulary line without a number (its file read under the graph file
// policy, ops/io/file_write_policy.h).
//
//   ops::CandidateSample s = ops::LogUniformCandidateSampler(
//       scope, labels, {.num_true = 1, .num_sampled = 64, .unique = true, .range_max = 50000});
//
// Thread-safety: as Scope; a kernel's generator is reserved under a mutex,
// learned counts under the sampler's.
#ifndef SLUICE_OPS_NN_CANDIDATE_SAMPLING_OPS_H_
#define SLUICE_OPS_NN_CANDIDATE_SAMPLING_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterCandidateSamplingOps(OpRegistry* ops);
void RegisterCandidateSamplingKernels(KernelRegistry* kernels);

namespace ops {

struct CandidateSample {
  Output sampled_candidates, true_expected_count, sampled_expected_count;
};

struct CandidateSamplerAttrs {
  int64_t num_true = 1;
  int64_t num_sampled = 1;
  bool unique = true;
  int64_t range_max = 1;
  int64_t seed = 0;
  int64_t seed2 = 0;
};

CandidateSample UniformCandidateSampler(const Scope& scope, Input true_classes,
                                        const CandidateSamplerAttrs& attrs,
                                        std::source_location loc = std::source_location::current());
CandidateSample LogUniformCandidateSampler(
    const Scope& scope, Input true_classes, const CandidateSamplerAttrs& attrs,
    std::source_location loc = std::source_location::current());
CandidateSample LearnedUnigramCandidateSampler(
    const Scope& scope, Input true_classes, const CandidateSamplerAttrs& attrs,
    std::source_location loc = std::source_location::current());

struct FixedUnigramAttrs {
  std::string vocab_file;
  float distortion = 1.0f;
  int64_t num_reserved_ids = 0;
  int64_t num_shards = 1;
  int64_t shard = 0;
  std::vector<float> unigrams;
};
CandidateSample FixedUnigramCandidateSampler(
    const Scope& scope, Input true_classes, const CandidateSamplerAttrs& attrs,
    const FixedUnigramAttrs& fixed, std::source_location loc = std::source_location::current());

struct AccidentalHits {
  Output indices, ids, weights;
};
AccidentalHits ComputeAccidentalHits(const Scope& scope, Input true_classes,
                                     Input sampled_candidates, int64_t num_true,
                                     std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_CANDIDATE_SAMPLING_OPS_H_
