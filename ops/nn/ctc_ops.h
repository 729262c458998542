// Connectionist temporal classification (tf.nn.ctc_loss with sparse labels,
// tf.compat.v1.nn.ctc_loss, Keras's ctc_batch_cost and ctc_decode with
// greedy decoding), under TensorFlow's names, inputs and attrs:
//   CTCLoss(inputs [max_time, batch, classes], labels_indices int64 [n, 2],
//           labels_values int32 [n], sequence_length int32 [batch])
//       -> loss [batch], gradient [max_time, batch, classes]
//       attrs preprocess_collapse_repeated (false), ctc_merge_repeated
//       (true), ignore_longer_outputs_than_inputs (false); the blank is the
//       last class
//   CTCGreedyDecoder(inputs, sequence_length) -> decoded_indices int64
//       [n, 2], decoded_values int64 [n], decoded_shape int64 [2],
//       log_probability [batch, 1] (minus the sum of each step's largest
//       logit); attrs merge_repeated (false), blank_index (-1: the last)
//   CTCBeamSearchDecoder(inputs, sequence_length) -> top_paths each of
//       decoded_indices, decoded_values, decoded_shape, and log_probability
//       [batch, top_paths]; attrs beam_width, top_paths (>= 1),
//       merge_repeated (true): TensorFlow's beam search without a language
//       model (ops/nn/internal/ctc_beam_search.h), equal-scoring paths in
//       TensorFlow's order
// The loss is TensorFlow's (ops/nn/internal/ctc_loss.h, in double), its
// gradient the kernel's second output times the loss's incoming gradient
// (no second derivative, as TensorFlow). CPU kernels for float and double.
//
//   ops::CTCLossOutputs l = ops::CTCLoss(s, logits, indices, values, lengths);
//
// Errors (InvalidArgument, TensorFlow's texts): inputs not 3-D, lengths
// not a vector of batch values within max_time, labels not a matrix and a
// vector of one length, a batch index out of range, an empty label
// sequence, a label after a blank-or-above label, fewer steps than labels
// (unless ignore_longer_outputs_than_inputs: loss and gradient 0), a
// blank_index outside [-classes, classes), top_paths above beam_width or
// above the prefixes the beam ends with. The decoders' length checks are
// FailedPrecondition, as TensorFlow's, and they take a negative length as 0.
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_NN_CTC_OPS_H_
#define SLUICE_OPS_NN_CTC_OPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterCtcOps(OpRegistry* ops);
void RegisterCtcKernels(KernelRegistry* kernels);

namespace ops {

struct CTCLossAttrs {
  bool preprocess_collapse_repeated = false;
  bool ctc_merge_repeated = true;
  bool ignore_longer_outputs_than_inputs = false;
};
struct CTCLossOutputs {
  Output loss;
  Output gradient;
};
CTCLossOutputs CTCLoss(const Scope& scope, Input inputs, Input labels_indices, Input labels_values,
                       Input sequence_length, const CTCLossAttrs& attrs = {},
                       std::source_location loc = std::source_location::current());

struct CTCGreedyDecoderOutputs {
  Output decoded_indices;
  Output decoded_values;
  Output decoded_shape;
  Output log_probability;
};
CTCGreedyDecoderOutputs CTCGreedyDecoder(const Scope& scope, Input inputs, Input sequence_length,
                                         bool merge_repeated = false, int64_t blank_index = -1,
                                         std::source_location loc = std::source_location::current());

struct CTCBeamSearchDecoderOutputs {
  std::vector<Output> decoded_indices;  // top_paths of each
  std::vector<Output> decoded_values;
  std::vector<Output> decoded_shape;
  Output log_probability;
};
CTCBeamSearchDecoderOutputs CTCBeamSearchDecoder(
    const Scope& scope, Input inputs, Input sequence_length, int64_t beam_width, int64_t top_paths,
    bool merge_repeated = true, std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_CTC_OPS_H_
