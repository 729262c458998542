#include "ops/math/internal/batch_grad.h"

#include "ops/array/array_ops.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace internal {
namespace {

bool SameKnownBatch(const TensorShape& x, const TensorShape& y) {
  if (!x.IsFullyDefined() || !y.IsFullyDefined() || x.rank() != y.rank()) return false;
  for (int i = 0; i + 2 < x.rank(); ++i) {
    if (x.dim(i) != y.dim(i)) return false;
  }
  return true;
}

}  // namespace

void SumOverBroadcastBatch(const Scope& s, const Output& x, const Output& y, Output* gx,
                           Output* gy) {
  if (SameKnownBatch(x.shape(), y.shape())) return;
  Output sx = ops::Shape(s, x);
  Output sy = ops::Shape(s, y);
  ops::BroadcastGradientArgsOutputs r =
      ops::BroadcastGradientArgs(s, ops::StridedSlice(s, sx, {0}, {-2}, {1}),
                                 ops::StridedSlice(s, sy, {0}, {-2}, {1}));
  *gx = ops::Reshape(s, ops::Sum(s, *gx, r.r0), sx);
  *gy = ops::Reshape(s, ops::Sum(s, *gy, r.r1), sy);
}

}  // namespace internal
}  // namespace sluice
