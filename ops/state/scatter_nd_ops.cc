// The N-d variable scatters: op definitions, CPU kernels and wrappers
// (ops/state/scatter_nd_ops.h). Shapes and index rows are checked by
// ops/array/internal/nd_index_plan.h, as ScatterNd's are.
#include "ops/state/scatter_nd_ops.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/internal/nd_index_plan.h"
#include "ops/internal/index_tensors.h"
#include "ops/state/state_ops.h"

namespace sluice {
namespace {

enum class Kind { kUpdate, kAdd, kSub, kMax, kMin };

constexpr const char* kNames[] = {"Update", "Add", "Sub", "Max", "Min"};

template <typename T, Kind kKind>
class ScatterNdVarOp : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(std::string policy, ctx.GetAttr<std::string>("bad_indices_policy"));
    if (policy != "" && policy != "DEFAULT" && policy != "ERROR" && policy != "IGNORE") {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad_indices_policy must be '', 'DEFAULT', 'ERROR' or 'IGNORE', got '", policy, "'"));
    }
    ignore_bad_ = policy == "IGNORE";
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    ASSIGN_OR_RETURN(Var * var, internal::VarInputOf<T>(ctx, 0));
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    internal::VarLockSet lock({var});
    ASSIGN_OR_RETURN(internal::VarUpdate u, internal::VarUpdate::BeginInPlace(var));
    Tensor shape(DT_INT64, TensorShape({u.shape().rank()}));
    for (int d = 0; d < u.shape().rank(); ++d) shape.data<int64_t>()[d] = u.shape().dim(d);
    absl::StatusOr<internal::NdIndexPlan> plan =
        internal::PlanScatterNd(indices.shape(), updates.shape(), shape);
    if (!plan.ok()) return AddContext(plan.status(), op);
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, internal::ReadInts(indices, op + ": indices"));
    const int64_t depth = plan->depth, slice = plan->slice;
    // Each row's slice number (-1: a row IGNORE skips).
    std::vector<int64_t> offsets(plan->rows, 0);
    if (depth > 0) {
      ASSIGN_OR_RETURN(offsets,
                       internal::NdIndexOffsets(idx, depth, u.shape(), op.c_str(), ignore_bad_));
    }
    T* out = u.data<T>();
    const T* up = updates.data<T>();
    for (int64_t i = 0; i < plan->rows; ++i) {
      if (offsets[i] < 0) continue;
      T* dst = out + offsets[i] * slice;
      const T* src = up + i * slice;
      for (int64_t j = 0; j < slice; ++j) {
        if constexpr (kKind == Kind::kUpdate) {
          dst[j] = src[j];
        } else if constexpr (kKind == Kind::kAdd) {
          dst[j] += src[j];
        } else if constexpr (kKind == Kind::kSub) {
          dst[j] -= src[j];
        } else if constexpr (kKind == Kind::kMax) {
          dst[j] = src[j] > dst[j] ? src[j] : dst[j];
        } else {
          dst[j] = src[j] < dst[j] ? src[j] : dst[j];
        }
      }
    }
    u.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }

 private:
  bool ignore_bad_ = false;
};

// updates = indices.shape[:-1] + ref.shape[depth:] when all are known; the
// ref form outputs ref's shape.
absl::Status ScatterNdShape(InferenceContext* c) {
  if (c->num_outputs() > 0) c->set_output(0, c->input(0));
  const TensorShape& ref = c->input(0);
  const TensorShape& indices = c->input(1);
  const TensorShape& updates = c->input(2);
  if (c->num_outputs() == 0 || ref.unknown_rank() || indices.unknown_rank() ||
      updates.unknown_rank() || !indices.IsFullyDefined() || !ref.IsFullyDefined() ||
      !updates.IsFullyDefined()) {
    return absl::OkStatus();
  }
  Tensor shape(DT_INT64, TensorShape({ref.rank()}));
  for (int d = 0; d < ref.rank(); ++d) shape.data<int64_t>()[d] = ref.dim(d);
  absl::StatusOr<internal::NdIndexPlan> plan = internal::PlanScatterNd(indices, updates, shape);
  return plan.ok() ? absl::OkStatus() : AddContext(plan.status(), c->node().op());
}

template <typename T, typename Index, Kind kKind>
void RegisterOne(KernelRegistry* k, const std::string& name) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  constexpr DataType kIndex = DataTypeToEnum<Index>::value;
  k->Register<ScatterNdVarOp<T, kKind>>(KernelDef(name, kDeviceTypeCpu)
                                            .TypeConstraint("T", kType)
                                            .TypeConstraint("Tindices", kIndex));
  k->Register<ScatterNdVarOp<T, kKind>>(KernelDef(absl::StrCat("Resource", name), kDeviceTypeCpu)
                                            .TypeConstraint("T", kType)
                                            .TypeConstraint("Tindices", kIndex));
}

template <typename T>
void RegisterForType(KernelRegistry* k) {
  auto both = [&](auto kind_tag, const char* suffix) {
    constexpr Kind kKind = decltype(kind_tag)::value;
    const std::string name = absl::StrCat("ScatterNd", suffix);
    RegisterOne<T, int32_t, kKind>(k, name);
    RegisterOne<T, int64_t, kKind>(k, name);
  };
  both(std::integral_constant<Kind, Kind::kUpdate>{}, "Update");
  both(std::integral_constant<Kind, Kind::kAdd>{}, "Add");
  both(std::integral_constant<Kind, Kind::kSub>{}, "Sub");
  both(std::integral_constant<Kind, Kind::kMax>{}, "Max");
  both(std::integral_constant<Kind, Kind::kMin>{}, "Min");
}

}  // namespace

absl::Status RegisterScatterNdOps(OpRegistry* ops) {
  for (const char* suffix : kNames) {
    const std::string name = absl::StrCat("ScatterNd", suffix);
    const bool update = std::string(suffix) == "Update";
    RETURN_IF_ERROR(ops->Register(
        OpDefBuilder(name)
            .Input("ref: Ref(T)")
            .Input("indices: Tindices")
            .Input("updates: T")
            .Output("output_ref: Ref(T)")
            .Attr("T: {float, double, int32, int64}")
            .Attr("Tindices: {int32, int64}")
            .Attr(update ? "use_locking: bool = true" : "use_locking: bool = false")
            .Attr("bad_indices_policy: string = ''")
            .SetShapeFn(ScatterNdShape)));
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(absl::StrCat("Resource", name))
                                      .Input("ref: resource")
                                      .Input("indices: Tindices")
                                      .Input("updates: T")
                                      .Attr("T: {float, double, int32, int64}")
                                      .Attr("Tindices: {int32, int64}")
                                      .Attr("use_locking: bool = true")
                                      .Attr("bad_indices_policy: string = ''")
                                      .SetIsStateful()
                                      .SetShapeFn(ScatterNdShape)));
    RETURN_IF_ERROR(ops->SetNoGradient(name));
    RETURN_IF_ERROR(ops->SetNoGradient(absl::StrCat("Resource", name)));
  }
  return absl::OkStatus();
}

void RegisterScatterNdKernels(KernelRegistry* k) {
  RegisterForType<float>(k);
  RegisterForType<double>(k);
  RegisterForType<int32_t>(k);
  RegisterForType<int64_t>(k);
}

namespace ops {
namespace {

Output RefScatterNd(const Scope& s, const char* op, Input ref, Input indices, Input updates,
                    std::source_location loc) {
  return s.Op(op, loc).Input(ref).Input(indices).Input(updates).Finalize1();
}

Node* ResourceScatterNd(const Scope& s, const char* op, Input resource, Input indices,
                        Input updates, std::source_location loc) {
  return s.Op(op, loc).Input(resource).Input(indices).Input(updates).Finalize();
}

}  // namespace

#define SLUICE_SCATTER_ND_WRAPPERS_(NAME)                                                      \
  Output ScatterNd##NAME(const Scope& s, Input ref, Input indices, Input updates,               \
                         std::source_location loc) {                                            \
    return RefScatterNd(s, "ScatterNd" #NAME, ref, indices, updates, loc);                      \
  }                                                                                             \
  Node* ResourceScatterNd##NAME(const Scope& s, Input resource, Input indices, Input updates,  \
                                std::source_location loc) {                                     \
    return ResourceScatterNd(s, "ResourceScatterNd" #NAME, resource, indices, updates, loc);    \
  }
SLUICE_SCATTER_ND_WRAPPERS_(Update)
SLUICE_SCATTER_ND_WRAPPERS_(Add)
SLUICE_SCATTER_ND_WRAPPERS_(Sub)
SLUICE_SCATTER_ND_WRAPPERS_(Max)
SLUICE_SCATTER_ND_WRAPPERS_(Min)
#undef SLUICE_SCATTER_ND_WRAPPERS_

}  // namespace ops
}  // namespace sluice
