// Output shapes of the random kernels (see random_kernel_checks.h).
#include "ops/random/internal/random_kernel_checks.h"

#include <cstdint>

#include "graph/types.h"

namespace sluice {
namespace internal {

absl::StatusOr<TensorShape> RandomOutputShape(absl::string_view op, const Tensor& t) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": shape must be a vector, got a tensor of shape ", t.shape().DebugString()));
  }
  TensorShape shape;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    const int64_t d = t.dtype() == DT_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": shape has a negative dimension ", d, " (", t.SummarizeValue(), ")"));
    }
    shape.AddDim(d);
  }
  return shape;
}

}  // namespace internal
}  // namespace sluice
