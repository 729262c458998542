// The connectionist temporal classification loss of one sequence (Graves,
// "Supervised Sequence Labelling with Recurrent Neural Networks", ch. 7),
// as TensorFlow's CTCLoss computes it: softmax over the classes at each
// step, then the forward and backward variables over the label sequence
// with blanks between and around its labels (blank: the last class), in
// log space; the loss -log p(labels | inputs) and its gradient with respect
// to the unnormalized inputs, softmax minus the posterior of each class.
//
//   internal::CtcSequence seq{logits, /*steps=*/t, /*classes=*/c, /*stride=*/batch * c};
//   ASSIGN_OR_RETURN(std::vector<int> l, internal::CtcLabels(labels, c, collapse, b));
//   double loss = internal::CtcLoss(seq, l, merge_repeated, grad_or_null);
//
// Thread-safety: pure functions. Internal to ops/nn.
#ifndef SLUICE_OPS_NN_INTERNAL_CTC_LOSS_H_
#define SLUICE_OPS_NN_INTERNAL_CTC_LOSS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {
namespace internal {

// One batch element's inputs: `steps` rows of `classes` values, `stride`
// apart (time-major batches: batch * classes).
struct CtcSequence {
  const double* logits;
  int64_t steps;
  int64_t classes;
  int64_t stride;
};

// The labels of batch element `b` as the loss uses them: repeats collapsed
// when asked; values of the blank class or above end the sequence (a
// label after them is InvalidArgument, as TensorFlow); negative ones are
// InvalidArgument.
absl::StatusOr<std::vector<int>> CtcLabels(const std::vector<int>& raw, int64_t classes,
                                           bool collapse_repeated, int64_t b);

// -log p(labels | sequence); +inf when no path has any probability. When
// `grad` is not null it receives d loss / d logits, `steps` rows of
// `classes` (the softmax where no path exists). `merge_repeated` false:
// repeated labels are not merged, so a path may emit them back to back.
double CtcLoss(const CtcSequence& seq, const std::vector<int>& labels, bool merge_repeated,
               double* grad);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_CTC_LOSS_H_
