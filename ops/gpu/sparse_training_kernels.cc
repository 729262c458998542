// GPU kernels of the row updates an embedding on a GPU needs: ScatterUpdate,
// ScatterAdd, ScatterSub (gradient descent's and Adam's sparse steps) and the
// Momentum, Adagrad, AdagradV2, FTRL, FtrlV2, Adadelta, RMSProp and
// CenteredRMSProp rules in their SparseApply* and ResourceSparseApply* forms
// (and Keras's momentum in ResourceSparseApplyKerasMomentum), for float and
// double with int32 or int64 indices. The same kernels update whole
// variables in the Apply* and ResourceApply* forms of those rules but the
// two momentums (registered with training_kernels.cc's shell, which calls
// the same row kernel) and of AdaMax, AddSign, PowerSign and
// AdamWithAmsgrad (ResourceApplyAdamWithAmsgrad only).
// ProximalAdagrad and ProximalGradientDescent have no GPU kernel: their
// hyper-parameters are checked by value, on the host
// (FTRL's are checked on the CPU only). The host checks shapes,
// locks, and (dense forms only) copies on write as the CPU shells do
// (ops/training/training_apply_shell.h); the indices and the
// hyper-parameters stay in device memory for the CUDA code
// (ops/gpu/sparse_training.cu.h says what it does with bad indices).
// The dedup of sparse gradients (Unique) runs as the CPU kernel on host
// memory of the GPU device, as TensorFlow 1.x registered it.
#include <array>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/row_rule_layouts.h"
#include "ops/gpu/sparse_training.cu.h"
#include "ops/state/scatter_ops.h"
#include "ops/state/state_ops.h"
#include "ops/training/training_apply_shell.h"

namespace sluice {
namespace {

using gpu::RowRule;
using gpu::ScatterKind;
using namespace gpu::row_layouts;  // NOLINT: the rules' layouts

template <typename T, typename Index, ScatterKind kKind>
class GpuScatterOp : public internal::VariableKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInputOf<T>(ctx, 0));
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    internal::VarLockSet lock({var});
    ASSIGN_OR_RETURN(internal::VarUpdate u, internal::VarUpdate::BeginInPlace(var));
    RETURN_IF_ERROR(
        internal::CheckScatterUpdatesShape(ctx, u.shape(), indices.shape(), updates.shape()));
    const int64_t rows = u.shape().dim(0);
    const int64_t inner = rows == 0 ? 0 : u.size() / rows;
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    RETURN_IF_ERROR(LaunchStatus(
        ctx, gpu::LaunchScatter<T, Index>(kKind, u.data<T>(), rows, inner, indices.data<Index>(),
                                          indices.NumElements(), updates.data<T>(),
                                          updates.dims() == 0, stream)));
    u.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }
};

// The dense (kSparse false: Apply*, ResourceApply*) or sparse (SparseApply*,
// ResourceSparseApply*) form of `Layout`'s rule.
template <typename Layout, typename T, typename Index, bool kSparse>
class GpuRowUpdateOp : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(flag_, internal::ReadFlag<Layout>(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto vars, (internal::ReadVars<Layout, T>(ctx)));
    gpu::RowUpdate<T> r;
    r.rule = Layout::kRule;
    r.flag = flag_;
    for (size_t i = 0; i < Layout::kScalars.size(); ++i) {
      const int at = Layout::kScalars[i] + (kSparse && Layout::kScalars[i] > Layout::kGrad);
      RETURN_IF_ERROR(internal::CheckScalarInput(ctx, at));
      r.hyper[i] = ctx->input(at).data<T>();
    }
    const Tensor& grad = ctx->input(Layout::kGrad);
    internal::VarLockSet lock(vars);
    std::array<internal::VarUpdate, Layout::kVars> u;
    RETURN_IF_ERROR(internal::BeginAll<Layout::kVars>(ctx, vars, &u, /*in_place=*/kSparse));
    const Index* indices = nullptr;
    int64_t n = 0;
    const int64_t rows = u[0].shape().rank() == 0 ? 1 : u[0].shape().dim(0);
    const int64_t inner = rows == 0 ? 0 : u[0].size() / rows;
    if (kSparse) {
      RETURN_IF_ERROR(internal::CheckSparseShapes(ctx, *vars[0], u[0].shape(), Layout::kGrad));
      const Tensor& idx = ctx->input(Layout::kGrad + 1);
      indices = idx.data<Index>();
      n = idx.NumElements();
    } else {
      RETURN_IF_ERROR(
          internal::CheckSameShape(ctx, *vars[0], u[0].shape(), Layout::kGrad, grad.shape()));
      n = rows;
    }
    const std::array<T*, Layout::kVars> p = internal::DataOf<T, Layout::kVars>(u);
    r.var = p[0];
    static_assert(Layout::kVars - 1 <= gpu::kMaxRowSlots);
    static_assert(Layout::kScalars.size() <= gpu::kMaxRowHyper);
    for (int i = 1; i < Layout::kVars; ++i) r.slot[i - 1] = p[i];
    r.grad = grad.data<T>();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    RETURN_IF_ERROR(
        LaunchStatus(ctx, gpu::LaunchRowUpdate<T, Index>(r, rows, inner, indices, n, stream)));
    internal::CommitAll<Layout::kVars>(&u);
    internal::SetRefOutput(ctx, 0, vars[0]);
    return absl::OkStatus();
  }

 private:
  bool flag_ = false;
};

template <typename T, typename Index>
void RegisterFor(KernelRegistry* kernels) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  constexpr DataType kIndex = DataTypeToEnum<Index>::value;
  auto scatter = [&]<ScatterKind kKind>(const char* op) {
    kernels->Register<GpuScatterOp<T, Index, kKind>>(
        GpuKernel(op).TypeConstraint("T", kType).TypeConstraint("Tindices", kIndex));
    kernels->Register<GpuScatterOp<T, Index, kKind>>(GpuKernel(absl::StrCat("Resource", op))
                                                         .TypeConstraint("dtype", kType)
                                                         .TypeConstraint("Tindices", kIndex));
  };
  scatter.template operator()<ScatterKind::kUpdate>("ScatterUpdate");
  scatter.template operator()<ScatterKind::kAdd>("ScatterAdd");
  scatter.template operator()<ScatterKind::kSub>("ScatterSub");

  auto sparse = [&]<typename Layout>(const char* op) {
    for (const char* prefix : {"SparseApply", "ResourceSparseApply"}) {
      kernels->Register<GpuRowUpdateOp<Layout, T, Index, true>>(
          GpuKernel(absl::StrCat(prefix, op))
              .TypeConstraint("T", kType)
              .TypeConstraint("Tindices", kIndex));
    }
  };
  sparse.template operator()<MomentumLayout>("Momentum");
  sparse.template operator()<AdagradLayout>("Adagrad");
  sparse.template operator()<AdagradV2Layout>("AdagradV2");
  sparse.template operator()<FtrlLayout>("Ftrl");
  sparse.template operator()<FtrlV2Layout>("FtrlV2");
  sparse.template operator()<AdadeltaLayout>("Adadelta");
  sparse.template operator()<RMSPropLayout>("RMSProp");
  sparse.template operator()<CenteredRMSPropLayout>("CenteredRMSProp");
  kernels->Register<GpuRowUpdateOp<KerasMomentumLayout, T, Index, true>>(
      GpuKernel("ResourceSparseApplyKerasMomentum")
          .TypeConstraint("T", kType)
          .TypeConstraint("Tindices", kIndex));
}

template <typename T>
void RegisterDenseFor(KernelRegistry* kernels) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  auto dense = [&]<typename Layout>(const char* op, bool resource_only = false) {
    for (const char* prefix : {"ResourceApply", "Apply"}) {
      if (resource_only && prefix[0] != 'R') continue;
      kernels->Register<GpuRowUpdateOp<Layout, T, int64_t, false>>(
          GpuKernel(absl::StrCat(prefix, op)).TypeConstraint("T", kType));
    }
  };
  dense.template operator()<AdagradLayout>("Adagrad");
  dense.template operator()<AdagradV2Layout>("AdagradV2");
  dense.template operator()<FtrlLayout>("Ftrl");
  dense.template operator()<FtrlV2Layout>("FtrlV2");
  dense.template operator()<AdadeltaLayout>("Adadelta");
  dense.template operator()<RMSPropLayout>("RMSProp");
  dense.template operator()<CenteredRMSPropLayout>("CenteredRMSProp");
  dense.template operator()<AdaMaxLayout>("AdaMax");
  dense.template operator()<AmsgradLayout>("AdamWithAmsgrad", /*resource_only=*/true);
  dense.template operator()<SignLayout<RowRule::kAddSign>>("AddSign");
  dense.template operator()<SignLayout<RowRule::kPowerSign>>("PowerSign");
}

bool IndexTypes(const KernelDef& def) {
  for (const auto& [attr, types] : def.constraints()) {
    for (DataType t : types) {
      if (t != DT_INT32 && t != DT_INT64) return false;
    }
  }
  return !def.constraints().empty();
}

}  // namespace

void RegisterGpuSparseTrainingKernels(KernelRegistry* kernels) {
  RegisterFor<float, int32_t>(kernels);
  RegisterFor<float, int64_t>(kernels);
  RegisterFor<double, int32_t>(kernels);
  RegisterFor<double, int64_t>(kernels);
  RegisterDenseFor<float>(kernels);
  RegisterDenseFor<double>(kernels);
  // The sparse optimizers' dedup of indices, colocated with the variable:
  // the CPU kernel on the GPU device's host memory (the CPU kernels are
  // registered before the GPU's).
  kernels->RegisterHostKernels("Unique", kDeviceTypeGpu, IndexTypes);
}

}  // namespace sluice
