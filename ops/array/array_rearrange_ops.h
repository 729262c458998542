// Array ops that rearrange elements by blocks, mirrors and sequences, as
// TensorFlow 1.x graphs use them: MirrorPad (REFLECT and SYMMETRIC) and its
// gradient helper MirrorPadGrad, SpaceToBatchND, BatchToSpaceND,
// ReverseSequence and ParallelConcat. Definitions with TensorFlow's names,
// attrs and defaults (RegisterArrayRearrangeOps), CPU kernels
// (RegisterArrayRearrangeKernels; array_rearrange_kernels.cc and
// space_batch_kernels.cc) and wrappers:
//
//   Output m = ops::MirrorPad(s, x, paddings, "REFLECT");
//   Output b = ops::SpaceToBatchND(s, images, {2, 2}, paddings);
//   Output r = ops::ReverseSequence(s, x, lengths, /*seq_dim=*/1);
//   Output p = ops::ParallelConcat(s, {row0, row1}, TensorShape({2, 3}));
//
// The byte-moving kernels serve every fixed-size dtype; MirrorPadGrad adds
// and serves float, double, int32 and int64. Gradients
// (RegisterArrayRearrangeGradients, ops/array/array_gradients.h), after TensorFlow's
// array_grad.py: MirrorPad and MirrorPadGrad are each other's, as are
// SpaceToBatchND and BatchToSpaceND; ReverseSequence's reverses the
// gradient the same way; ParallelConcat's splits it into the rows
// (TensorFlow registers none; it rewrites the op before running). Errors
// are InvalidArgument naming the op and the bad shape or value.
// Thread-safety: as Scope; the kernels are stateless.
#ifndef SLUICE_OPS_ARRAY_ARRAY_REARRANGE_OPS_H_
#define SLUICE_OPS_ARRAY_ARRAY_REARRANGE_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterArrayRearrangeOps(OpRegistry* ops);
void RegisterArrayRearrangeKernels(KernelRegistry* kernels);

namespace internal {
// SpaceToBatchND and BatchToSpaceND, registered by RegisterArrayRearrangeKernels.
void RegisterSpaceBatchKernels(KernelRegistry* kernels);
}  // namespace internal

namespace ops {

// Pads by mirroring the input: mode "REFLECT" leaves the edge out of the
// mirror (paddings at most dim - 1), "SYMMETRIC" repeats it (at most dim).
Output MirrorPad(const Scope& scope, Input input, Input paddings, const std::string& mode,
                 std::source_location loc = std::source_location::current());
// Folds a padded tensor's mirrored parts back onto it (summing).
Output MirrorPadGrad(const Scope& scope, Input input, Input paddings, const std::string& mode,
                     std::source_location loc = std::source_location::current());

// Zero-pads the M spatial dims after the batch dim by paddings [M, 2], then
// moves block_shape [M] blocks into the batch dim; BatchToSpaceND undoes it
// and crops.
Output SpaceToBatchND(const Scope& scope, Input input, Input block_shape, Input paddings,
                      std::source_location loc = std::source_location::current());
Output BatchToSpaceND(const Scope& scope, Input input, Input block_shape, Input crops,
                      std::source_location loc = std::source_location::current());

struct ReverseSequenceAttrs {
  int64_t batch_dim = 0;
};
// Reverses the first seq_lengths[b] elements along seq_dim of each slice b
// along batch_dim.
Output ReverseSequence(const Scope& scope, Input input, Input seq_lengths, int64_t seq_dim,
                       const ReverseSequenceAttrs& attrs = {},
                       std::source_location loc = std::source_location::current());

// Stacks N values of shape [1, ...] into `shape` = [N, ...].
Output ParallelConcat(const Scope& scope, absl::Span<const Output> values,
                      const TensorShape& shape,
                      std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_ARRAY_REARRANGE_OPS_H_
