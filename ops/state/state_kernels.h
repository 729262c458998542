// AssignAdd and AssignSub, written once for every device (see
// ops/training/training_kernels.h for the pattern): the shell locks the variable,
// checks the value against it and writes copy-on-write; the device's `Impl`
// supplies the arithmetic:
//
//   struct CpuAssignImpl {
//     template <typename T>
//     static absl::Status AssignUpdate(OpKernelContext* ctx, T* var, const T* value,
//                                      int64_t n, bool add);
//   };
//   kernels->Register<AssignUpdateOp<CpuAssignImpl, float, /*kAdd=*/true>>(...);
#ifndef SLUICE_OPS_STATE_STATE_KERNELS_H_
#define SLUICE_OPS_STATE_STATE_KERNELS_H_

#include <cstdint>

#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "ops/state/state_ops.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// AssignAdd (kAdd) or AssignSub: var += value or var -= value.
template <typename Impl, typename T, bool kAdd>
class AssignUpdateOp : public internal::VariableKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInputOf<T>(ctx, 0));
    const Tensor& value = ctx->input(1);
    absl::MutexLock lock(&var->mu);
    RETURN_IF_ERROR(
        internal::CheckAssignUpdate(kAdd ? "AssignAdd" : "AssignSub", *var, value.shape()));
    ASSIGN_OR_RETURN(internal::VarUpdate u, internal::VarUpdate::Begin(var, ctx->device()));
    RETURN_IF_ERROR(
        Impl::template AssignUpdate<T>(ctx, u.data<T>(), value.data<T>(), u.size(), kAdd));
    u.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// Registers AssignAddVariableOp and AssignSubVariableOp (resource handles,
// read on the host) for T on `device_type`.
template <typename Impl, typename T>
void RegisterResourceAssignUpdateFor(KernelRegistry* kernels, const char* device_type) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  kernels->Register<AssignUpdateOp<Impl, T, true>>(
      KernelDef("AssignAddVariableOp", device_type).TypeConstraint("dtype", kType));
  kernels->Register<AssignUpdateOp<Impl, T, false>>(
      KernelDef("AssignSubVariableOp", device_type).TypeConstraint("dtype", kType));
}

// Registers AssignAdd and AssignSub for T on `device_type`.
template <typename Impl, typename T>
void RegisterAssignUpdateFor(KernelRegistry* kernels, const char* device_type) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  kernels->Register<AssignUpdateOp<Impl, T, true>>(
      KernelDef("AssignAdd", device_type).TypeConstraint("T", kType));
  kernels->Register<AssignUpdateOp<Impl, T, false>>(
      KernelDef("AssignSub", device_type).TypeConstraint("T", kType));
}

}  // namespace sluice

#endif  // SLUICE_OPS_STATE_STATE_KERNELS_H_
