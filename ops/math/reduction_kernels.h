// The reductions (Sum, Mean, Prod, Max, Min) and ArgMax (ArgMin) written once for
// every device (the pattern of ops/training/training_kernels.h): the shell reads
// keep_dims and the axes, plans the groups (ops/math/internal/math_kernel_checks.h),
// forwards the input when only size-1 dimensions are reduced, and allocates;
// a device's `Impl` (a type per op and element type) reduces:
//
//   static constexpr bool kExpensive   false where Compute only enqueues work
//   static absl::Status Reduce(OpKernelContext*, const Tensor& x,
//                              const internal::ReductionGroups& groups, Tensor* out)
//       out = the reduction of x over the groups' reduced runs; x may be
//       empty (every output element then reduces nothing)
//   static absl::Status ArgMax(OpKernelContext*, const Tensor& x,
//                              const internal::ArgMaxPlan& plan, Tensor* out)
//       out = index of the first largest (ArgMin: smallest) along plan's
//       dimension, NaNs losing to every number; out non-empty
//
// The axes are read on the host (HostMemory on devices with memory of their
// own).
#ifndef SLUICE_OPS_MATH_REDUCTION_KERNELS_H_
#define SLUICE_OPS_MATH_REDUCTION_KERNELS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "ops/math/internal/math_kernel_checks.h"
#include "runtime/kernel.h"

namespace sluice {

// Whether the reduction moves no data: only size-1 dimensions are reduced of
// a non-empty input.
inline bool ReducesOnlyUnitDimensions(const internal::ReductionGroups& g) {
  const bool empty = g.out_count * g.reduced_count == 0;
  return !empty && !g.first_reduced && g.groups.size() <= 1;
}

template <typename Impl>
class ReduceOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(keep_dims_, ctx.GetAttr<bool>("keep_dims"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, internal::ReadReductionAxes(ctx->input(1)));
    ASSIGN_OR_RETURN(internal::ReductionGroups groups,
                     internal::GroupReduction(x.shape(), axes, keep_dims_));
    if (ReducesOnlyUnitDimensions(groups)) {
      ASSIGN_OR_RETURN(Tensor same, x.Reshaped(groups.out_shape));
      ctx->set_output(0, std::move(same));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, groups.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Impl::Reduce(ctx, x, groups, out);
  }
  bool IsExpensive() const override { return Impl::kExpensive; }

 private:
  bool keep_dims_ = false;
};

template <typename Impl>
class ArgMaxOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(internal::ArgMaxPlan plan, internal::PlanArgMax(ctx->node().op(), x, ctx->input(1)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Impl::ArgMax(ctx, x, plan, out);
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace sluice

#endif  // SLUICE_OPS_MATH_REDUCTION_KERNELS_H_
