// CPU kernels of the scatter ops (ops/state/scatter_ops.h): one kernel per
// (value type, index type, operation) serves the ref and the resource form
// (internal::VarInput reads either).
#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ops/state/scatter_ops.h"
#include "ops/state/state_ops.h"

namespace sluice {
namespace {

enum class ScatterKind { kUpdate, kAdd, kSub, kMul, kDiv, kMin, kMax };

// "[i]" or "[i,j,...]": position `flat` of an index tensor shaped `shape`.
std::string IndexPosition(const TensorShape& shape, int64_t flat) {
  std::vector<int64_t> pos(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    pos[d] = flat % shape.dim(d);
    flat /= shape.dim(d);
  }
  return absl::StrCat("[", absl::StrJoin(pos, ","), "]");
}

template <typename Index>
absl::Status CheckScatterIndices(OpKernelContext* ctx, const Tensor& indices, int64_t rows) {
  const Index* idx = indices.data<Index>();
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    if (idx[i] < 0 || idx[i] >= rows) {
      return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": indices",
                                                     IndexPosition(indices.shape(), i), " = ",
                                                     idx[i], " is not in [0, ", rows, ")"));
    }
  }
  return absl::OkStatus();
}

template <typename T, typename Index, ScatterKind kKind>
class ScatterOp : public internal::VariableKernel {
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
    RETURN_IF_ERROR(CheckScatterIndices<Index>(ctx, indices, rows));
    const int64_t inner = rows == 0 ? 0 : u.size() / rows;
    const bool scalar = updates.dims() == 0;
    T* out = u.data<T>();
    const T* up = updates.data<T>();
    if constexpr (kKind == ScatterKind::kDiv && std::is_integral_v<T>) {
      for (int64_t i = 0; i < updates.NumElements(); ++i) {
        if (up[i] == T(0)) {
          return absl::InvalidArgumentError(
              absl::StrCat(ctx->node().op(), ": integer division by zero (updates[", i, "])"));
        }
      }
    }
    const Index* idx = indices.data<Index>();
    for (int64_t i = 0; i < indices.NumElements(); ++i) {
      T* row = out + static_cast<int64_t>(idx[i]) * inner;
      for (int64_t j = 0; j < inner; ++j) Apply(row[j], scalar ? up[0] : up[i * inner + j]);
    }
    u.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }

 private:
  static void Apply(T& x, T v) {
    if constexpr (kKind == ScatterKind::kUpdate) {
      x = v;
    } else if constexpr (kKind == ScatterKind::kAdd) {
      x += v;
    } else if constexpr (kKind == ScatterKind::kSub) {
      x -= v;
    } else if constexpr (kKind == ScatterKind::kMul) {
      x *= v;
    } else if constexpr (kKind == ScatterKind::kDiv) {
      x /= v;
    } else if constexpr (kKind == ScatterKind::kMin) {
      x = v < x ? v : x;
    } else {
      x = v > x ? v : x;
    }
  }
};

template <typename T, typename Index, ScatterKind kKind>
void RegisterOne(KernelRegistry* kernels, const char* op) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  constexpr DataType kIndex = DataTypeToEnum<Index>::value;
  kernels->Register<ScatterOp<T, Index, kKind>>(
      KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", kType).TypeConstraint("Tindices", kIndex));
  kernels->Register<ScatterOp<T, Index, kKind>>(
      KernelDef(absl::StrCat("Resource", op), kDeviceTypeCpu)
          .TypeConstraint("dtype", kType)
          .TypeConstraint("Tindices", kIndex));
}

template <typename T>
void RegisterForType(KernelRegistry* kernels) {
  RegisterOne<T, int32_t, ScatterKind::kUpdate>(kernels, "ScatterUpdate");
  RegisterOne<T, int64_t, ScatterKind::kUpdate>(kernels, "ScatterUpdate");
  RegisterOne<T, int32_t, ScatterKind::kAdd>(kernels, "ScatterAdd");
  RegisterOne<T, int64_t, ScatterKind::kAdd>(kernels, "ScatterAdd");
  RegisterOne<T, int32_t, ScatterKind::kSub>(kernels, "ScatterSub");
  RegisterOne<T, int64_t, ScatterKind::kSub>(kernels, "ScatterSub");
  RegisterOne<T, int32_t, ScatterKind::kMul>(kernels, "ScatterMul");
  RegisterOne<T, int64_t, ScatterKind::kMul>(kernels, "ScatterMul");
  RegisterOne<T, int32_t, ScatterKind::kDiv>(kernels, "ScatterDiv");
  RegisterOne<T, int64_t, ScatterKind::kDiv>(kernels, "ScatterDiv");
  RegisterOne<T, int32_t, ScatterKind::kMin>(kernels, "ScatterMin");
  RegisterOne<T, int64_t, ScatterKind::kMin>(kernels, "ScatterMin");
  RegisterOne<T, int32_t, ScatterKind::kMax>(kernels, "ScatterMax");
  RegisterOne<T, int64_t, ScatterKind::kMax>(kernels, "ScatterMax");
}

}  // namespace

void RegisterScatterKernels(KernelRegistry* kernels) {
  RegisterForType<float>(kernels);
  RegisterForType<double>(kernels);
  RegisterForType<int32_t>(kernels);
  RegisterForType<int64_t>(kernels);
}

namespace internal {

absl::Status CheckScatterUpdatesShape(OpKernelContext* ctx, const TensorShape& var,
                                      const TensorShape& indices, const TensorShape& updates) {
  if (var.rank() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        ctx->node().op(), ": the variable must be at least 1-D, got shape ", var.DebugString()));
  }
  if (updates.rank() == 0) return absl::OkStatus();
  std::vector<int64_t> want = indices.dims();
  for (int d = 1; d < var.rank(); ++d) want.push_back(var.dim(d));
  if (updates.dims() == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      ctx->node().op(),
      ": Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], got "
      "updates.shape ",
      updates.DebugString(), ", indices.shape ", indices.DebugString(), ", params.shape ",
      var.DebugString()));
}

}  // namespace internal
}  // namespace sluice
