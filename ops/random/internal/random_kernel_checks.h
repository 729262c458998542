// The host-side half of the random kernels, shared by the CPU kernels
// (random_kernels.cc) and the GPU kernels (ops/gpu/random_kernels.cc): the
// output shape from the `shape` input, RandomUniformInt's bounds and the
// stateless integer draws' bounds, with the error texts both devices report.
//
//   ASSIGN_OR_RETURN(TensorShape shape,
//                    internal::RandomOutputShape(ctx->node().op(), ctx->input(0)));
//   ASSIGN_OR_RETURN(auto bounds, internal::ReadUniformIntBounds<int64_t>(ctx->input(1),
//                                                                          ctx->input(2)));
//
// The tensors read must be in host memory (HostMemory args on a GPU).
// Errors: InvalidArgument naming the op. Thread-safety: pure functions.
// Internal to ops/.
#ifndef SLUICE_OPS_RANDOM_INTERNAL_RANDOM_KERNEL_CHECKS_H_
#define SLUICE_OPS_RANDOM_INTERNAL_RANDOM_KERNEL_CHECKS_H_

#include <cstdint>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/tensor_shape.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// The `shape` input of `op`: a vector of non-negative int32 or int64 values.
absl::StatusOr<TensorShape> RandomOutputShape(absl::string_view op, const Tensor& shape);

// RandomUniformInt's minval and maxval (T = int32_t or int64_t): scalars
// with minval < maxval.
template <typename T>
absl::StatusOr<std::pair<T, T>> ReadUniformIntBounds(const Tensor& minval, const Tensor& maxval) {
  if (minval.dims() != 0 || maxval.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("RandomUniformInt: minval and maxval must be scalars, got shapes ",
                     minval.shape().DebugString(), " and ", maxval.shape().DebugString()));
  }
  const T lo = minval.scalar<T>();
  const T hi = maxval.scalar<T>();
  if (lo >= hi) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RandomUniformInt: need minval < maxval, got minval ", lo, " and maxval ", hi));
  }
  return std::make_pair(lo, hi);
}

// The stateless integer draws' minval and maxval (T = int32_t or int64_t):
// scalars with minval < maxval, in TensorFlow's words. Returns minval and
// the range maxval - minval, which always fits the unsigned type.
template <typename T>
absl::StatusOr<std::pair<T, uint64_t>> ReadStatelessIntBounds(const Tensor& minval,
                                                              const Tensor& maxval) {
  for (const Tensor* t : {&minval, &maxval}) {
    if (t->dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(t == &minval ? "minval" : "maxval",
                                                     " must be 0-D, got shape ",
                                                     t->shape().DebugString()));
    }
  }
  const T lo = minval.scalar<T>();
  const T hi = maxval.scalar<T>();
  if (lo >= hi) {
    return absl::InvalidArgumentError(absl::StrCat("Need minval < maxval, got ", lo, " >= ", hi));
  }
  using U = std::make_unsigned_t<T>;
  return std::make_pair(lo, static_cast<uint64_t>(static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo))));
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_INTERNAL_RANDOM_KERNEL_CHECKS_H_
