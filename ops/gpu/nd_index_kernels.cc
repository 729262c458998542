// GatherNd and ScatterNd on the GPU (CUDA code: nd_index.cu) for float,
// double, half, bfloat16 and int64 values, int32 or int64 indices: the
// shapes checked as on the CPU (ops/array/internal/nd_index_plan.h), the
// indices read only by the kernels (an index out of range: zeros from
// GatherNd, skipped by ScatterNd, as in TensorFlow's GPU kernels), at most
// 8 indexed dimensions.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/internal/nd_index_plan.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/nd_index.cu.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace {

absl::StatusOr<gpu::NdIndexGeometry> GeometryOf(const internal::NdIndexPlan& p, const char* op) {
  if (p.depth > gpu::kMaxNdIndexDepth) {
    return absl::UnimplementedError(absl::StrCat(op, ": indices.shape[-1] = ", p.depth,
                                                 "; the GPU kernel indexes at most ",
                                                 gpu::kMaxNdIndexDepth, " dimensions"));
  }
  gpu::NdIndexGeometry g;
  g.depth = static_cast<int>(p.depth);
  for (int d = 0; d < g.depth; ++d) g.dims[d] = p.indexed.dim(d);
  g.rows = p.rows;
  g.slice = p.slice;
  return g;
}

template <typename Index>
class GpuGatherNdOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(std::string policy, ctx.GetAttr<std::string>("bad_indices_policy"));
    if (!policy.empty() && policy != "DEFAULT" && policy != "IGNORE") {
      return absl::InvalidArgumentError(absl::StrCat(
          "GatherNd: bad_indices_policy '", policy,
          "' is not supported on the GPU (\"\", DEFAULT, IGNORE: zeros for a bad index)"));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    ASSIGN_OR_RETURN(const internal::NdIndexPlan p,
                     internal::PlanGatherNd(params.shape(), indices.shape()));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(const gpu::NdIndexGeometry g, GeometryOf(p, "GatherNd"));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchGatherNd<Index>(
                                 params.raw_data(), indices.data<Index>(), out->raw_data(),
                                 static_cast<int>(DataTypeSize(params.dtype())), g, stream));
  }
};

absl::StatusOr<gpu::ScatterNdType> ScatterTypeOf(DataType t) {
  switch (t) {
    case DT_FLOAT:
      return gpu::ScatterNdType::kFloat;
    case DT_DOUBLE:
      return gpu::ScatterNdType::kDouble;
    case DT_HALF:
      return gpu::ScatterNdType::kHalf;
    case DT_BFLOAT16:
      return gpu::ScatterNdType::kBFloat16;
    case DT_INT64:
      return gpu::ScatterNdType::kInt64;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("ScatterNd: no GPU kernel for ", DataTypeName(t)));
  }
}

template <typename Index>
class GpuScatterNdOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& updates = ctx->input(1);
    ASSIGN_OR_RETURN(const internal::NdIndexPlan p,
                     internal::PlanScatterNd(indices.shape(), updates.shape(), ctx->input(2)));
    ASSIGN_OR_RETURN(const gpu::ScatterNdType type, ScatterTypeOf(updates.dtype()));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(const gpu::NdIndexGeometry g, GeometryOf(p, "ScatterNd"));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchScatterNd<Index>(type, indices.data<Index>(),
                                                         updates.raw_data(), out->raw_data(),
                                                         out->NumElements(), g, stream));
  }
};

template <typename Index>
void RegisterFor(KernelRegistry* kernels) {
  constexpr DataType kIndex = DataTypeToEnum<Index>::value;
  const std::vector<DataType> values = {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT64};
  kernels->Register<GpuGatherNdOp<Index>>(GpuKernel("GatherNd")
                                              .TypeConstraint("Tparams", values)
                                              .TypeConstraint("Tindices", kIndex));
  kernels->Register<GpuScatterNdOp<Index>>(GpuKernel("ScatterNd")
                                               .TypeConstraint("T", values)
                                               .TypeConstraint("Tindices", kIndex)
                                               .HostMemory("shape"));
}

}  // namespace

void RegisterGpuNdIndexKernels(KernelRegistry* kernels) {
  RegisterFor<int32_t>(kernels);
  RegisterFor<int64_t>(kernels);
}

}  // namespace sluice
