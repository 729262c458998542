// TensorFlow 1.x's wide & deep click model (DNNLinearCombinedClassifier) over
// hashed categorical ids: a linear ("wide") part with one weight per id
// bucket and a deep part that embeds every feature's id in a shared table of
// `buckets` x `dim`, concatenates the embeddings and runs them through ReLU
// layers. Both tables are partitioned along their rows (FixedSizePartitioner,
// "mod" lookups), so a replica device setter spreads them over the ps tasks.
//
//   ASSIGN_OR_RETURN(WideDeepModel m, BuildWideDeep(s, {.buckets = 1 << 22, .partitions = 2}));
//   // feed "ids" int64 [n, features] and "labels" float [n]; fetch "loss:0",
//   // "probabilities:0"; train m.wide with FTRL and m.deep with Adagrad.
//
// logits = sum_k linear[ids[:, k]] + wide_bias + dnn(concat_k embeddings[ids[:, k]]);
// each distinct id of a batch is looked up once (Unique, then a local
// gather), so a step moves each touched row once each way;
// loss = mean sigmoid cross-entropy (max(x, 0) - x z + log(1 + e^-|x|)).
// Initial values: embeddings and dense weights truncated normal (stddev
// 1/sqrt(dim) and sqrt(2/fan_in)), seeded from `seed`; linear weights and
// biases 0. Each initial value is a small graph (a shape and a random or
// fill op), not a constant of the table's size.
//
// Errors: InvalidArgument for sizes out of range; graph-building errors.
#ifndef SLUICE_EXAMPLES_WIDE_DEEP_MODEL_H_
#define SLUICE_EXAMPLES_WIDE_DEEP_MODEL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "sluice.h"
#include "training/partitioned_variables.h"

namespace sluice {

struct WideDeepConfig {
  int features = 26;
  int64_t buckets = int64_t{1} << 22;  // rows of both tables
  int64_t dim = 32;                    // embedding width
  int partitions = 2;                  // parts of each table
  std::vector<int64_t> hidden = {64};  // ReLU layers of the deep part
  int64_t seed = 1;
};

struct WideDeepModel {
  Output ids, labels;  // placeholders "ids" and "labels"
  Output logits, probabilities, loss;
  PartitionedVariable embeddings, linear;
  std::vector<Output> wide;  // the linear parts and the wide bias
  std::vector<Output> deep;  // the embedding parts and the dense layers
};

absl::StatusOr<WideDeepModel> BuildWideDeep(const Scope& scope, const WideDeepConfig& config);

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_WIDE_DEEP_MODEL_H_
