// CPU kernels of TopKV2 and InTopKV2 (ops/array/index_ops.h), for float, double,
// int32 and int64 values.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/index_ops.h"
#include "ops/internal/index_tensors.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

template <typename T>
class TopKOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(int64_t k, ReadK(ctx->input(1)));
    if (x.dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat("TopKV2: input must be at least 1-D, got ",
                                                     x.shape().DebugString()));
    }
    const int64_t cols = x.dim_size(x.dims() - 1);
    if (cols < k) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TopKV2: input ", x.shape().DebugString(), " must have at least k = ", k, " columns"));
    }
    TensorShape out_shape = x.shape();
    out_shape.set_dim(out_shape.rank() - 1, k);
    ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(0, out_shape));
    ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(1, out_shape));
    const int64_t rows = cols == 0 ? 0 : x.NumElements() / cols;
    std::vector<int32_t> order(cols);
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x.data<T>() + r * cols;
      std::iota(order.begin(), order.end(), 0);
      // Larger first; among equals, the lower index first.
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [row](int32_t a, int32_t b) {
        return row[a] > row[b] || (row[a] == row[b] && a < b);
      });
      for (int64_t j = 0; j < k; ++j) {
        values->data<T>()[r * k + j] = row[order[j]];
        if (indices->dtype() == DT_INT64) {
          indices->data<int64_t>()[r * k + j] = order[j];
        } else {
          indices->data<int32_t>()[r * k + j] = order[j];
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  static absl::StatusOr<int64_t> ReadK(const Tensor& k_tensor) {
    if (k_tensor.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("TopKV2: k must be a scalar, got shape ", k_tensor.shape().DebugString()));
    }
    const int64_t k = k_tensor.dtype() == DT_INT64 ? k_tensor.scalar<int64_t>()
                                                   : int64_t{k_tensor.scalar<int32_t>()};
    if (k < 0) return absl::InvalidArgumentError(absl::StrCat("TopKV2: k = ", k, " < 0"));
    return k;
  }
};

// Whether row b's target class is among its k largest predictions: fewer
// than k classes predict more. Ties count in the target's favour; an
// out-of-range target or a non-finite prediction in the row gives false.
class InTopKOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& predictions = ctx->input(0);
    const Tensor& targets = ctx->input(1);
    if (predictions.dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "InTopKV2: predictions must be 2-D, got ", predictions.shape().DebugString()));
    }
    if (targets.dims() != 1 || targets.dim_size(0) != predictions.dim_size(0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "InTopKV2: targets must be a vector of the batch size ", predictions.dim_size(0),
          ", got shape ", targets.shape().DebugString()));
    }
    if (ctx->input(2).dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("InTopKV2: k must be a scalar, got shape ",
                                                     ctx->input(2).shape().DebugString()));
    }
    ASSIGN_OR_RETURN(int64_t k, internal::ReadScalar(ctx->input(2), "InTopKV2: k"));
    ASSIGN_OR_RETURN(std::vector<int64_t> target, internal::ReadInts(targets, "InTopKV2: targets"));
    const int64_t batch = predictions.dim_size(0), classes = predictions.dim_size(1);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({batch})));
    for (int64_t b = 0; b < batch; ++b) {
      out->data<bool>()[b] = InTopK(predictions.data<float>() + b * classes, classes, target[b], k);
    }
    return absl::OkStatus();
  }

 private:
  static bool InTopK(const float* row, int64_t classes, int64_t target, int64_t k) {
    if (target < 0 || target >= classes || !std::isfinite(row[target])) return false;
    int64_t more = 0;
    for (int64_t i = 0; i < classes; ++i) {
      if (!std::isfinite(row[i])) return false;
      if (row[i] > row[target]) ++more;
    }
    return more < k;
  }
};

}  // namespace

namespace internal {

void RegisterTopKKernels(KernelRegistry* kernels) {
  auto top_k = [](DataType t) { return KernelDef("TopKV2", kDeviceTypeCpu).TypeConstraint("T", t); };
  kernels->Register<TopKOp<float>>(top_k(DT_FLOAT));
  kernels->Register<TopKOp<double>>(top_k(DT_DOUBLE));
  kernels->Register<TopKOp<int32_t>>(top_k(DT_INT32));
  kernels->Register<TopKOp<int64_t>>(top_k(DT_INT64));
  kernels->Register<InTopKOp>(
      KernelDef("InTopKV2", kDeviceTypeCpu).TypeConstraint("T", {DT_INT32, DT_INT64}));
}

}  // namespace internal
}  // namespace sluice
