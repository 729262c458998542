// CTC beam search decoding of one sequence, as TensorFlow's
// CTCBeamSearchDecoder does it (no language model): a prefix tree of
// label sequences, each with the log probability of ending in a blank and
// in its last label; every step keeps the beam_width best prefixes (by
// total probability), extends each by every non-blank label, and keeps
// the best again. Probabilities are the steps' log-softmax, computed in T
// as TensorFlow computes them (its log-sum-exp takes the correction term
// through float even for double), and the beam is kept in a container that
// orders ties as TensorFlow's TopN does, so equal-scoring paths come out
// in TensorFlow's order.
//
//   std::vector<internal::CtcPath<float>> paths;
//   RETURN_IF_ERROR(internal::CtcBeamSearch<float>(logits, steps, classes, stride, 10, 3,
//                                                  /*merge_repeated=*/true, &paths));
//
// Thread-safety: pure functions. Internal to ops/nn.
#ifndef SLUICE_OPS_NN_INTERNAL_CTC_BEAM_SEARCH_H_
#define SLUICE_OPS_NN_INTERNAL_CTC_BEAM_SEARCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace sluice {
namespace internal {

template <typename T>
struct CtcPath {
  std::vector<int64_t> labels;  // repeats merged when asked
  T log_probability;            // unnormalized: the prefix's total
};

// The `top_paths` best label sequences of `steps` rows of `classes` logits
// (rows `stride` apart; the blank is the last class), best first.
// InvalidArgument (TensorFlow's texts) when top_paths exceeds beam_width
// or the beam ends with fewer prefixes than asked for.
template <typename T>
absl::Status CtcBeamSearch(const T* logits, int64_t steps, int64_t classes, int64_t stride,
                           int beam_width, int top_paths, bool merge_repeated,
                           std::vector<CtcPath<T>>* paths);

extern template absl::Status CtcBeamSearch<float>(const float*, int64_t, int64_t, int64_t, int, int,
                                                  bool, std::vector<CtcPath<float>>*);
extern template absl::Status CtcBeamSearch<double>(const double*, int64_t, int64_t, int64_t, int,
                                                   int, bool, std::vector<CtcPath<double>>*);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_CTC_BEAM_SEARCH_H_
