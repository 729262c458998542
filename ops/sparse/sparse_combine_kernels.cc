// CPU kernels of the sparse tensor ops that combine sparse tensors with
// each other or with a dense one (sparse_tensor_ops.h): SparseTensorDenseAdd,
// SparseAdd(+Grad), SparseConcat, SparseSlice(+Grad).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/internal/array_util.h"
#include "ops/internal/index_tensors.h"
#include "ops/sparse/internal/sparse_kernel_util.h"
#include "runtime/kernel.h"

namespace sluice {
namespace internal {
namespace {

template <typename T>
class SparseTensorDenseAddOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& values = ctx->input(1);
    const Tensor& b = ctx->input(3);
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, internal::ReadInts(ctx->input(0), "a_indices"));
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, internal::ReadVector(ctx->input(2), "a_shape"));
    const int64_t n = values.NumElements();
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (ctx->input(0).dims() != 2 || ctx->input(0).dim_size(0) != n ||
        ctx->input(0).dim_size(1) != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a_indices must be [", n, ", ", rank, "], got ", ctx->input(0).shape().DebugString()));
    }
    if (b.shape() != TensorShape(shape)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Dimension mismatch: a_shape ", internal::IntsDebugString(shape), " and b ", b.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, b.shape()));
    std::copy_n(b.data<T>(), b.NumElements(), out->data<T>());
    std::vector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
    for (int64_t i = 0; i < n; ++i) {
      int64_t at = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t v = idx[i * rank + d];
        if (v < 0 || v >= shape[d]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Sparse tensor has an invalid index on dimension ", d, ": a_indices(", i, ",", d,
              ") = ", v, ", dense tensor shape: ", b.shape().DebugString()));
        }
        at += v * strides[d];
      }
      out->data<T>()[at] += values.data<T>()[i];
    }
    return absl::OkStatus();
  }
};

template <typename T>
class SparseAddOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a_idx = ctx->input(0);
    const Tensor& a_val = ctx->input(1);
    const Tensor& b_idx = ctx->input(3);
    const Tensor& b_val = ctx->input(4);
    RETURN_IF_ERROR(CheckMatrix(a_idx, "Input a_indices"));
    RETURN_IF_ERROR(CheckMatrix(b_idx, "Input b_indices"));
    ASSIGN_OR_RETURN(std::vector<int64_t> a_shape, internal::ReadVector(ctx->input(2), "a_shape"));
    ASSIGN_OR_RETURN(std::vector<int64_t> b_shape, internal::ReadVector(ctx->input(5), "b_shape"));
    if (a_shape != b_shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Operands do not have the same ranks or shapes: lhs shape ", internal::IntsDebugString(a_shape),
          ", rhs shape ", internal::IntsDebugString(b_shape)));
    }
    const int64_t rank = static_cast<int64_t>(a_shape.size());
    const int64_t na = a_val.NumElements(), nb = b_val.NumElements();
    if (a_idx.dim_size(0) != na || b_idx.dim_size(0) != nb || a_idx.dim_size(1) != rank ||
        b_idx.dim_size(1) != rank) {
      return absl::InvalidArgumentError("indices, values and shapes of a and b do not agree");
    }
    if (ctx->input(6).NumElements() != 1) return absl::InvalidArgumentError("thresh must be a scalar");
    const double thresh = RealScalar(ctx->input(6));
    const int64_t* ai = a_idx.data<int64_t>();
    const int64_t* bi = b_idx.data<int64_t>();
    const T* av = a_val.data<T>();
    const T* bv = b_val.data<T>();
    // (source: 0 a, 1 b, 2 both; row in a; row in b; value)
    struct Entry { const int64_t* index; T value; };
    std::vector<Entry> merged;
    int64_t i = 0, j = 0;
    const auto compare = [&](int64_t x, int64_t y) {
      for (int64_t d = 0; d < rank; ++d) {
        if (ai[x * rank + d] != bi[y * rank + d]) return ai[x * rank + d] < bi[y * rank + d] ? -1 : 1;
      }
      return 0;
    };
    while (i < na || j < nb) {
      const int c = i == na ? 1 : j == nb ? -1 : compare(i, j);
      if (c < 0) {
        merged.push_back({ai + i * rank, av[i]});
        ++i;
      } else if (c > 0) {
        merged.push_back({bi + j * rank, bv[j]});
        ++j;
      } else {
        const T sum = av[i] + bv[j];
        if (std::abs(static_cast<double>(sum)) >= thresh) merged.push_back({ai + i * rank, sum});
        ++i;
        ++j;
      }
    }
    const int64_t n = static_cast<int64_t>(merged.size());
    ASSIGN_OR_RETURN(Tensor * out_idx, ctx->allocate_output(0, TensorShape({n, rank})));
    ASSIGN_OR_RETURN(Tensor * out_val, ctx->allocate_output(1, TensorShape({n})));
    ASSIGN_OR_RETURN(Tensor * out_shape, ctx->allocate_output(2, TensorShape({rank})));
    for (int64_t k = 0; k < n; ++k) {
      std::copy_n(merged[k].index, rank, out_idx->data<int64_t>() + k * rank);
      out_val->data<T>()[k] = merged[k].value;
    }
    std::copy(a_shape.begin(), a_shape.end(), out_shape->data<int64_t>());
    return absl::OkStatus();
  }
};

template <typename T>
class SparseAddGradOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    const Tensor& a_idx = ctx->input(1);
    const Tensor& b_idx = ctx->input(2);
    const Tensor& sum_idx = ctx->input(3);
    RETURN_IF_ERROR(CheckMatrix(a_idx, "Input a_indices"));
    RETURN_IF_ERROR(CheckMatrix(b_idx, "Input b_indices"));
    RETURN_IF_ERROR(CheckMatrix(sum_idx, "Input sum_indices"));
    const int64_t rank = sum_idx.dim_size(1);
    if (a_idx.dim_size(1) != rank || b_idx.dim_size(1) != rank ||
        grad.NumElements() != sum_idx.dim_size(0)) {
      return absl::InvalidArgumentError("backprop_val_grad and the indices do not agree");
    }
    absl::flat_hash_map<std::string, int64_t> where;
    for (int64_t k = 0; k < sum_idx.dim_size(0); ++k) {
      where[RowKey(sum_idx.data<int64_t>(), rank, k)] = k;
    }
    for (int side = 0; side < 2; ++side) {
      const Tensor& idx = side == 0 ? a_idx : b_idx;
      ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(side, TensorShape({idx.dim_size(0)})));
      for (int64_t k = 0; k < idx.dim_size(0); ++k) {
        auto it = where.find(RowKey(idx.data<int64_t>(), rank, k));
        out->data<T>()[k] = it == where.end() ? T{} : grad.data<T>()[it->second];
      }
    }
    return absl::OkStatus();
  }
};

class SparseConcatOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(concat_dim_, ctx.GetAttr<int64_t>("concat_dim"));
    ASSIGN_OR_RETURN(n_, ctx.GetAttr<int64_t>("N"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<int64_t> first, internal::ReadVector(ctx->input(2 * n_), "shapes"));
    const int64_t rank = static_cast<int64_t>(first.size());
    const int64_t dim = concat_dim_ < 0 ? concat_dim_ + rank : concat_dim_;
    if (dim < 0 || dim >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Concat dimension must be in range [", -rank,
                                                     ", ", rank, "), got ", concat_dim_));
    }
    std::vector<int64_t> out_shape = first;
    out_shape[dim] = 0;
    struct Entry { std::vector<int64_t> index; int64_t input, row; };
    std::vector<Entry> entries;
    for (int64_t i = 0; i < n_; ++i) {
      const Tensor& idx = ctx->input(i);
      const Tensor& values = ctx->input(n_ + i);
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, internal::ReadVector(ctx->input(2 * n_ + i), "shapes"));
      RETURN_IF_ERROR(CheckMatrix(idx, "Input indices"));
      if (static_cast<int64_t>(shape.size()) != rank || idx.dim_size(1) != rank ||
          idx.dim_size(0) != values.NumElements()) {
        return absl::InvalidArgumentError(absl::StrCat("input ", i, ": indices ", idx.shape().DebugString(),
                                                       ", values ", values.shape().DebugString(),
                                                       " and shape of ", shape.size(),
                                                       " dims do not agree with rank ", rank));
      }
      if (values.dtype() != ctx->input(n_).dtype()) {
        return absl::InvalidArgumentError("all values must have one dtype");
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (d != dim && shape[d] != first[d]) {
          return absl::InvalidArgumentError(absl::StrCat("Input shapes must match: expected ", first[d],
                                                         " for dimension ", d, " but got ", shape[d],
                                                         " at position ", i));
        }
      }
      const int64_t* p = idx.data<int64_t>();
      for (int64_t r = 0; r < idx.dim_size(0); ++r) {
        Entry e{std::vector<int64_t>(p + r * rank, p + (r + 1) * rank), i, r};
        e.index[dim] += out_shape[dim];
        entries.push_back(std::move(e));
      }
      out_shape[dim] += shape[dim];
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) { return a.index < b.index; });
    const int64_t n = static_cast<int64_t>(entries.size());
    ASSIGN_OR_RETURN(Tensor * out_idx, ctx->allocate_output(0, TensorShape({n, rank})));
    ASSIGN_OR_RETURN(Tensor * out_val, ctx->allocate_output(1, TensorShape({n})));
    ASSIGN_OR_RETURN(Tensor * shape_out, ctx->allocate_output(2, TensorShape({rank})));
    for (int64_t k = 0; k < n; ++k) {
      std::copy(entries[k].index.begin(), entries[k].index.end(), out_idx->data<int64_t>() + k * rank);
      CopyElement(ctx->input(n_ + entries[k].input), entries[k].row, out_val, k);
    }
    std::copy(out_shape.begin(), out_shape.end(), shape_out->data<int64_t>());
    return absl::OkStatus();
  }

 private:
  int64_t concat_dim_ = 0, n_ = 0;
};

class SparseSliceOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    RETURN_IF_ERROR(CheckMatrix(indices, "Input indices"));
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, internal::ReadVector(ctx->input(2), "shape"));
    ASSIGN_OR_RETURN(std::vector<int64_t> start, internal::ReadVector(ctx->input(3), "start"));
    ASSIGN_OR_RETURN(std::vector<int64_t> size, internal::ReadVector(ctx->input(4), "size"));
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (indices.dim_size(1) != rank || static_cast<int64_t>(start.size()) != rank ||
        static_cast<int64_t>(size.size()) != rank || indices.dim_size(0) != values.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "indices ", indices.shape().DebugString(), ", values ", values.shape().DebugString(),
          ", shape, start and size must agree on the rank ", rank));
    }
    std::vector<int64_t> out_shape(rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (start[d] < 0 || size[d] < 0) {
        return absl::InvalidArgumentError("start and size must be non-negative");
      }
      out_shape[d] = std::max<int64_t>(0, std::min(start[d] + size[d], shape[d]) - start[d]);
    }
    const int64_t* idx = indices.data<int64_t>();
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < indices.dim_size(0); ++i) {
      bool inside = true;
      for (int64_t d = 0; d < rank && inside; ++d) {
        const int64_t v = idx[i * rank + d];
        inside = v >= start[d] && v < start[d] + out_shape[d];
      }
      if (inside) kept.push_back(i);
    }
    const int64_t n = static_cast<int64_t>(kept.size());
    ASSIGN_OR_RETURN(Tensor * out_idx, ctx->allocate_output(0, TensorShape({n, rank})));
    ASSIGN_OR_RETURN(Tensor * out_val, ctx->allocate_output(1, TensorShape({n})));
    ASSIGN_OR_RETURN(Tensor * shape_out, ctx->allocate_output(2, TensorShape({rank})));
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t d = 0; d < rank; ++d) {
        out_idx->data<int64_t>()[k * rank + d] = idx[kept[k] * rank + d] - start[d];
      }
      CopyElement(values, kept[k], out_val, k);
    }
    std::copy(out_shape.begin(), out_shape.end(), shape_out->data<int64_t>());
    return absl::OkStatus();
  }
};

template <typename T>
class SparseSliceGradOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    const Tensor& in_idx = ctx->input(1);
    const Tensor& out_idx = ctx->input(3);
    RETURN_IF_ERROR(CheckMatrix(in_idx, "input_indices"));
    RETURN_IF_ERROR(CheckMatrix(out_idx, "output_indices"));
    ASSIGN_OR_RETURN(std::vector<int64_t> start, internal::ReadVector(ctx->input(2), "input_start"));
    const int64_t rank = in_idx.dim_size(1);
    if (out_idx.dim_size(1) != rank || static_cast<int64_t>(start.size()) != rank ||
        grad.NumElements() != out_idx.dim_size(0)) {
      return absl::InvalidArgumentError("backprop_val_grad, the indices and input_start do not agree");
    }
    absl::flat_hash_map<std::string, int64_t> where;
    for (int64_t k = 0; k < out_idx.dim_size(0); ++k) {
      where[RowKey(out_idx.data<int64_t>(), rank, k)] = k;
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({in_idx.dim_size(0)})));
    std::vector<int64_t> shifted(rank);
    for (int64_t i = 0; i < in_idx.dim_size(0); ++i) {
      for (int64_t d = 0; d < rank; ++d) shifted[d] = in_idx.data<int64_t>()[i * rank + d] - start[d];
      auto it = where.find(RowKey(shifted.data(), rank, 0));
      out->data<T>()[i] = it == where.end() ? T{} : grad.data<T>()[it->second];
    }
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterNumeric(KernelRegistry* k) {
  const DataType t = DataTypeToEnum<T>::value;
  k->Register<SparseTensorDenseAddOp<T>>(
      KernelDef("SparseTensorDenseAdd", kDeviceTypeCpu).TypeConstraint("T", t));
  k->Register<SparseAddOp<T>>(KernelDef("SparseAdd", kDeviceTypeCpu).TypeConstraint("T", t));
  k->Register<SparseAddGradOp<T>>(KernelDef("SparseAddGrad", kDeviceTypeCpu).TypeConstraint("T", t));
  k->Register<SparseSliceGradOp<T>>(
      KernelDef("SparseSliceGrad", kDeviceTypeCpu).TypeConstraint("T", t));
}

}  // namespace

void RegisterSparseCombineKernels(KernelRegistry* k) {
  RegisterNumeric<float>(k);
  RegisterNumeric<double>(k);
  RegisterNumeric<int32_t>(k);
  RegisterNumeric<int64_t>(k);
  k->Register<SparseConcatOp>(KernelDef("SparseConcat", kDeviceTypeCpu));
  k->Register<SparseSliceOp>(KernelDef("SparseSlice", kDeviceTypeCpu));
}

}  // namespace internal
}  // namespace sluice
