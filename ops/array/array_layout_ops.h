// Array ops that move elements around, as TensorFlow 1.x graphs use them:
// Pad, PadV2, ReverseV2 (and TF1's Reverse, its dims one bool per
// dimension), SplitV, ShapeN, OneHot, Where, SpaceToDepth, DepthToSpace,
// MatrixDiag, MatrixDiagPart, and tf.linalg.tensor_diag's Diag (shape D ->
// D + D) and DiagPart (its inverse). Definitions with
// TensorFlow's names, attrs and defaults (RegisterArrayLayoutOps), CPU
// kernels for every fixed-size dtype (RegisterArrayLayoutKernels), and
// wrappers:
//
//   Output p = ops::Pad(s, x, ops::Const(s, Tensor::FromVector<int32_t>({1, 1, 0, 2}, {2, 2})));
//   Output r = ops::ReverseV2(s, x, {-1});
//   std::vector<Output> parts = ops::SplitV(s, x, {2, -1}, /*axis=*/0, /*num_split=*/2);
//   Output h = ops::OneHot(s, labels, 10, 1.0f, 0.0f);
//   Output where = ops::Where(s, mask);            // int64 [num_true, rank]
//
// Gradients (Pad, PadV2, ReverseV2, Reverse, SplitV, SpaceToDepth,
// DepthToSpace, MatrixDiag, MatrixDiagPart of square matrices, Diag,
// DiagPart): RegisterArrayLayoutGradients
// (ops/array/array_gradients.h); ShapeN, OneHot and Where have none. Errors are
// InvalidArgument naming the op and the bad shape or value. Thread-safety:
// as Scope; the kernels are stateless.
#ifndef SLUICE_OPS_ARRAY_ARRAY_LAYOUT_OPS_H_
#define SLUICE_OPS_ARRAY_ARRAY_LAYOUT_OPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterArrayLayoutOps(OpRegistry* ops);
void RegisterArrayLayoutKernels(KernelRegistry* kernels);

namespace ops {

// Pads with zeros (Pad) or constant_values (PadV2); paddings is an integer
// [rank, 2] matrix of (before, after) counts.
Output Pad(const Scope& scope, Input input, Input paddings,
           std::source_location loc = std::source_location::current());
Output PadV2(const Scope& scope, Input input, Input paddings, Input constant_values,
             std::source_location loc = std::source_location::current());
// Reverses the dimensions listed in `axis` (a vector; negative from the end).
Output ReverseV2(const Scope& scope, Input tensor, Input axis,
                 std::source_location loc = std::source_location::current());
// Splits along `axis` into pieces of size_splits (one may be -1: the rest).
std::vector<Output> SplitV(const Scope& scope, Input value, Input size_splits, Input axis,
                           int64_t num_split,
                           std::source_location loc = std::source_location::current());
// The shapes of several tensors (int32).
std::vector<Output> ShapeN(const Scope& scope, absl::Span<const Output> inputs,
                           std::source_location loc = std::source_location::current());
struct OneHotAttrs {
  int64_t axis = -1;  // where the depth dimension goes; -1: last
};
Output OneHot(const Scope& scope, Input indices, Input depth, Input on_value, Input off_value,
              const OneHotAttrs& attrs = {},
              std::source_location loc = std::source_location::current());
// The coordinates of the true (non-zero) elements, in row-major order.
Output Where(const Scope& scope, Input condition,
             std::source_location loc = std::source_location::current());
// NHWC: blocks of block_size x block_size pixels become channels, and back.
Output SpaceToDepth(const Scope& scope, Input input, int64_t block_size,
                    std::source_location loc = std::source_location::current());
Output DepthToSpace(const Scope& scope, Input input, int64_t block_size,
                    std::source_location loc = std::source_location::current());
// TF1's Reverse: `dims` holds one bool per dimension of `tensor`.
Output Reverse(const Scope& scope, Input tensor, Input dims,
               std::source_location loc = std::source_location::current());
// diagonal of shape D -> D + D, zero but where both halves of the index
// agree; and back.
Output Diag(const Scope& scope, Input diagonal,
            std::source_location loc = std::source_location::current());
Output DiagPart(const Scope& scope, Input input,
                std::source_location loc = std::source_location::current());
// [..., n] -> [..., n, n] with the values on the diagonal; and the diagonal
// [..., min(m, n)] of [..., m, n].
Output MatrixDiag(const Scope& scope, Input diagonal,
                  std::source_location loc = std::source_location::current());
Output MatrixDiagPart(const Scope& scope, Input input,
                      std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_ARRAY_LAYOUT_OPS_H_
