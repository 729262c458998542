// The host-side half of the math kernels, shared by the CPU kernels
// (math_kernels.cc, matmul_kernels.cc, reduction_kernels.cc) and the GPU
// kernels (ops/gpu/*_kernels.cc): argument checks with the error texts both
// devices report, output shapes, and the grouping of a reduction's
// dimensions.
//
//   ASSIGN_OR_RETURN(internal::MatMulDims d,
//                    internal::CheckMatMulShapes(a, b, ta, tb, "BLAS"));
//   ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({d.m, d.n})));
//
// Errors: InvalidArgument naming the op (where the CPU kernels always did)
// and the shapes. Only shapes are read, except the axis arguments of the
// reductions and ArgMax, which must be in host memory. Thread-safety: pure
// functions. Internal to ops/.
#ifndef SLUICE_OPS_MATH_INTERNAL_MATH_KERNEL_CHECKS_H_
#define SLUICE_OPS_MATH_INTERNAL_MATH_KERNEL_CHECKS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/tensor_shape.h"
#include "runtime/kernel.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// MatMul of a and b (each transposed when asked): [m, k] x [k, n]. Every
// dimension must fit in an int; `library` ("BLAS", "cuBLAS") names the
// limit in that error.
struct MatMulDims {
  int64_t m = 0, k = 0, n = 0;
};
absl::StatusOr<MatMulDims> CheckMatMulShapes(const Tensor& a, const Tensor& b, bool transpose_a,
                                             bool transpose_b, absl::string_view library);

// AddN: every input of ctx has input 0's shape.
absl::Status CheckAddNShapes(const OpKernelContext& ctx);

// Select: t and e of one shape, and how cond picks between them.
enum class SelectCondition {
  kScalar,  // cond is a scalar
  kSame,    // cond has t's shape
  kRows,    // cond is a vector of t's first dimension
};
absl::StatusOr<SelectCondition> CheckSelectShapes(const Tensor& cond, const Tensor& t,
                                                  const Tensor& e);

// The reduction_indices of Sum, Mean, ...: a scalar or vector of int32 or
// int64 values (host memory).
absl::StatusOr<std::vector<int64_t>> ReadReductionAxes(const Tensor& axes);

// The input's dimensions merged into alternating kept / reduced groups
// (size-1 dimensions dropped), and the output shape. InvalidArgument naming
// the axis and the shape when an axis is outside [-rank, rank); repeated
// axes count once.
struct ReductionGroups {
  TensorShape out_shape;  // keep_dims applied
  std::vector<int64_t> groups;
  bool first_reduced = false;  // groups[0] is a reduced group
  int64_t reduced_count = 1;   // input elements per output element
  int64_t out_count = 1;       // elements of out_shape
};
absl::StatusOr<ReductionGroups> GroupReduction(const TensorShape& in,
                                               absl::Span<const int64_t> axes, bool keep_dims);

// ArgMax (ArgMin; `op` names it in errors) of x along `dimension` (a
// one-element int32/int64 host tensor): x viewed as [outer, n, inner], the
// output [outer, inner] in x's shape with the dimension removed.
// InvalidArgument when the dimension is out of range or empty.
struct ArgMaxPlan {
  int64_t dim = 0;
  TensorShape out_shape;
  int64_t outer = 1, n = 0, inner = 1;
};
absl::StatusOr<ArgMaxPlan> PlanArgMax(absl::string_view op, const Tensor& x,
                                      const Tensor& dimension);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_INTERNAL_MATH_KERNEL_CHECKS_H_
