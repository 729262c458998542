// CPU kernels of the sparse tensor ops (sparse_tensor_ops.h) on one sparse
// tensor: SparseReshape, SparseFillEmptyRows(+Grad), SparseToDense,
// SparseTensorDenseMatMul and SparseReorder; those that combine two or more
// are in sparse_combine_kernels.cc. Values are moved element by element
// whatever their type; SparseFillEmptyRowsGrad and the product compute in
// float or double.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/internal/array_util.h"
#include "ops/internal/index_tensors.h"
#include "ops/sparse/internal/sparse_kernel_util.h"
#include "ops/sparse/sparse_tensor_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::CheckMatrix;
using internal::CheckVector;
using internal::CompareRows;
using internal::CopyElement;
using internal::Ints;

class SparseReshapeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& in_shape = ctx->input(1);
    const Tensor& new_shape = ctx->input(2);
    RETURN_IF_ERROR(CheckMatrix(indices, "Input indices"));
    RETURN_IF_ERROR(CheckVector(in_shape, "Input shape"));
    RETURN_IF_ERROR(CheckVector(new_shape, "Target shape"));
    const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
    if (in_shape.NumElements() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input tensor rank must match input shape length: ", rank, " vs ", in_shape.NumElements()));
    }
    const int64_t* in = in_shape.data<int64_t>();
    int64_t dense = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (in[d] < 0 || __builtin_mul_overflow(dense, in[d], &dense)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Input shape ", Ints(in, rank), " is negative or has more than 2^63 elements"));
      }
    }
    const int64_t out_rank = new_shape.NumElements();
    std::vector<int64_t> out(new_shape.data<int64_t>(), new_shape.data<int64_t>() + out_rank);
    int64_t unknown = -1, product = 1;
    for (int64_t d = 0; d < out_rank; ++d) {
      if (out[d] == -1) {
        if (unknown != -1) {
          return absl::InvalidArgumentError(absl::StrCat(
              "only one output dimension may be -1, not both ", unknown, " and ", d));
        }
        unknown = d;
      } else if (out[d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("size ", d, " must be non-negative, not ", out[d]));
      } else if (__builtin_mul_overflow(product, out[d], &product)) {
        return absl::InvalidArgumentError("the requested shape has more than 2^63 elements");
      }
    }
    if (unknown != -1) {
      const int64_t missing = product > 0 ? dense / product : 0;
      out[unknown] = missing;
      if (product == 0 || dense % product != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Input to reshape is a SparseTensor with ", dense,
            " dense values, but the requested shape requires a multiple of ", product,
            ". input_shape=", Ints(in, rank), " output_shape=", internal::IntsDebugString(out)));
      }
    } else if (product != dense) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input to reshape is a tensor with ", dense, " dense values, but the requested shape has ",
          product, ". input_shape=", Ints(in, rank), " output_shape=", internal::IntsDebugString(out)));
    }
    ASSIGN_OR_RETURN(Tensor * out_indices, ctx->allocate_output(0, TensorShape({n, out_rank})));
    ASSIGN_OR_RETURN(Tensor * out_shape, ctx->allocate_output(1, TensorShape({out_rank})));
    std::copy(out.begin(), out.end(), out_shape->data<int64_t>());
    std::vector<int64_t> in_strides(rank, 1), out_strides(out_rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in[d + 1];
    for (int64_t d = out_rank - 2; d >= 0; --d) out_strides[d] = out_strides[d + 1] * out[d + 1];
    const int64_t* idx = indices.data<int64_t>();
    int64_t* o = out_indices->data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t linear = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t v = idx[i * rank + d];
        if (v < 0 || v >= in[d]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "input index ", i, " is out of bounds of the input shape ", Ints(in, rank)));
        }
        linear += v * in_strides[d];
      }
      for (int64_t d = 0; d < out_rank; ++d) {
        o[i * out_rank + d] = linear / out_strides[d];
        linear %= out_strides[d];
      }
    }
    return absl::OkStatus();
  }
};

class SparseFillEmptyRowsOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& dense_shape = ctx->input(2);
    const Tensor& default_value = ctx->input(3);
    RETURN_IF_ERROR(CheckVector(dense_shape, "dense_shape"));
    RETURN_IF_ERROR(CheckMatrix(indices, "indices"));
    RETURN_IF_ERROR(CheckVector(values, "values"));
    if (default_value.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("default_value must be a scalar, got shape ",
                                                     default_value.shape().DebugString()));
    }
    const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
    if (values.NumElements() != n || dense_shape.NumElements() != rank || rank < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "indices ", indices.shape().DebugString(), ", values ", values.shape().DebugString(),
          " and dense_shape ", dense_shape.shape().DebugString(), " do not agree"));
    }
    const int64_t rows = dense_shape.data<int64_t>()[0];
    if (rows < 0) {
      return absl::InvalidArgumentError(absl::StrCat("dense_shape[0] must be >= 0, got ", rows));
    }
    // The row indicator first: the device's allocator bounds what a
    // dense_shape may ask for before this kernel sizes anything by it.
    ASSIGN_OR_RETURN(Tensor * indicator, ctx->allocate_output(2, TensorShape({rows})));
    const int64_t* idx = indices.data<int64_t>();
    std::vector<int64_t> count(static_cast<size_t>(rows), 0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = idx[i * rank];
      if (r < 0 || r >= rows) {
        return absl::InvalidArgumentError(absl::StrCat("indices(", i, ", 0) is invalid: ", r,
                                                       r < 0 ? " < 0" : absl::StrCat(" >= ", rows)));
      }
      ++count[r];
    }
    std::vector<int64_t> start(count.size() + 1, 0);
    int64_t empty = 0;
    for (size_t r = 0; r < count.size(); ++r) {
      empty += count[r] == 0;
      start[r + 1] = start[r] + std::max<int64_t>(count[r], 1);
    }
    const int64_t total = n + empty;
    ASSIGN_OR_RETURN(Tensor * out_idx, ctx->allocate_output(0, TensorShape({total, rank})));
    ASSIGN_OR_RETURN(Tensor * out_vals, ctx->allocate_output(1, TensorShape({total})));
    ASSIGN_OR_RETURN(Tensor * reverse, ctx->allocate_output(3, TensorShape({n})));
    int64_t* oi = out_idx->data<int64_t>();
    std::vector<int64_t> placed(count.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = idx[i * rank];
      const int64_t pos = start[r] + placed[r]++;
      std::copy_n(idx + i * rank, rank, oi + pos * rank);
      CopyElement(values, i, out_vals, pos);
      reverse->data<int64_t>()[i] = pos;
    }
    for (size_t r = 0; r < count.size(); ++r) {
      indicator->data<bool>()[r] = count[r] == 0;
      if (count[r] != 0) continue;
      const int64_t pos = start[r];
      std::fill_n(oi + pos * rank, rank, 0);
      oi[pos * rank] = static_cast<int64_t>(r);
      CopyElement(default_value, 0, out_vals, pos);
    }
    return absl::OkStatus();
  }
};

template <typename T>
class SparseFillEmptyRowsGradOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& reverse = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    RETURN_IF_ERROR(CheckVector(reverse, "reverse_index_map"));
    RETURN_IF_ERROR(CheckVector(grad, "grad_values"));
    const int64_t n = reverse.NumElements(), m = grad.NumElements();
    ASSIGN_OR_RETURN(Tensor * d_values, ctx->allocate_output(0, TensorShape({n})));
    ASSIGN_OR_RETURN(Tensor * d_default, ctx->allocate_output(1, TensorShape({})));
    std::vector<bool> used(static_cast<size_t>(m), false);
    const T* g = grad.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = reverse.data<int64_t>()[i];
      if (j < 0 || j >= m) {
        return absl::InvalidArgumentError(
            absl::StrCat("Invalid reverse_index_map[", i, "] = ", j, ": not in [0, ", m, ")"));
      }
      d_values->data<T>()[i] = g[j];
      used[j] = true;
    }
    T rest{};
    for (int64_t j = 0; j < m; ++j) {
      if (!used[j]) rest += g[j];
    }
    d_default->data<T>()[0] = rest;
    return absl::OkStatus();
  }
};

class SparseToDenseOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(validate_, ctx.GetAttr<bool>("validate_indices"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& sparse_indices = ctx->input(0);
    const Tensor& values = ctx->input(2);
    const Tensor& default_value = ctx->input(3);
    if (sparse_indices.dims() > 2) {
      return absl::InvalidArgumentError(absl::StrCat("sparse_indices should be a scalar, vector, or matrix, got shape ",
                                                     sparse_indices.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, internal::ReadVector(ctx->input(1), "output_shape"));
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, internal::ReadInts(sparse_indices, "sparse_indices"));
    const int64_t n = sparse_indices.dims() > 0 ? sparse_indices.dim_size(0) : 1;
    const int64_t rank = sparse_indices.dims() > 1 ? sparse_indices.dim_size(1) : 1;
    if (rank != static_cast<int64_t>(shape.size())) {
      return absl::InvalidArgumentError(absl::StrCat("sparse_indices has rank ", rank,
                                                     " entries, output_shape has ", shape.size()));
    }
    if (!(values.dims() == 0 || (values.dims() == 1 && values.NumElements() == n))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sparse_values has incorrect shape ", values.shape().DebugString(),
          ", should be [] or [", n, "]"));
    }
    if (default_value.dims() != 0) return absl::InvalidArgumentError("default_value should be a scalar.");
    for (int64_t d : shape) {
      if (d < 0) return absl::InvalidArgumentError("output_shape has negative dimensions");
    }
    const auto index_text = [&](int64_t i) { return Ints(idx.data() + i * rank, rank); };
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t v = idx[i * rank + d];
        if (v < 0 || v >= shape[d]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "indices[", i, "] = ", index_text(i), " is out of bounds: need 0 <= index < ",
              internal::IntsDebugString(shape)));
        }
      }
      if (validate_ && i > 0) {
        const int c = CompareRows(idx.data(), rank, i - 1, i);
        if (c > 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "indices[", i, "] = ", index_text(i),
              " is out of order. Many sparse ops require sorted indices.\n"
              "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n"));
        }
        if (c == 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("indices[", i, "] = ", index_text(i), " is repeated"));
        }
      }
    }
    ASSIGN_OR_RETURN(Tensor * dense, ctx->allocate_output(0, TensorShape(shape)));
    for (int64_t j = 0; j < dense->NumElements(); ++j) CopyElement(default_value, 0, dense, j);
    std::vector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
    for (int64_t i = 0; i < n; ++i) {
      int64_t at = 0;
      for (int64_t d = 0; d < rank; ++d) at += idx[i * rank + d] * strides[d];
      CopyElement(values, values.dims() == 0 ? 0 : i, dense, at);
    }
    return absl::OkStatus();
  }

 private:
  bool validate_ = true;
};

template <typename T>
class SparseTensorDenseMatMulOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(adj_a_, ctx.GetAttr<bool>("adjoint_a"));
    ASSIGN_OR_RETURN(adj_b_, ctx.GetAttr<bool>("adjoint_b"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a_indices = ctx->input(0);
    const Tensor& a_values = ctx->input(1);
    const Tensor& b = ctx->input(3);
    RETURN_IF_ERROR(CheckMatrix(a_indices, "Tensor 'a_indices'"));
    RETURN_IF_ERROR(CheckVector(a_values, "Tensor 'a_values'"));
    RETURN_IF_ERROR(CheckMatrix(b, "Tensor 'b'"));
    ASSIGN_OR_RETURN(std::vector<int64_t> a_shape, internal::ReadVector(ctx->input(2), "a_shape"));
    if (a_shape.size() != 2 || a_indices.dim_size(1) != 2 ||
        a_indices.dim_size(0) != a_values.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a must be a sparse matrix: a_indices ", a_indices.shape().DebugString(), ", a_values ",
          a_values.shape().DebugString(), ", a_shape of ", a_shape.size(), " elements"));
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, internal::ReadInts(a_indices, "a_indices"));
    const int64_t rows = a_shape[adj_a_ ? 1 : 0], inner = a_shape[adj_a_ ? 0 : 1];
    const int64_t b_inner = b.dim_size(adj_b_ ? 1 : 0), cols = b.dim_size(adj_b_ ? 0 : 1);
    if (inner != b_inner) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Cannot multiply A and B because inner dimension does not match: ", inner, " vs. ",
          b_inner, ".  Did you forget a transpose?  Dimensions of A: [", a_shape[0], ", ",
          a_shape[1], ").  Dimensions of B: ", b.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({rows, cols})));
    T* o = out->data<T>();
    std::fill_n(o, out->NumElements(), T{});
    const T* bv = b.data<T>();
    const T* av = a_values.data<T>();
    const int row_col = adj_a_ ? 1 : 0, k_col = adj_a_ ? 0 : 1;
    for (int64_t n = 0; n < a_values.NumElements(); ++n) {
      const int64_t i = idx[n * 2 + row_col], k = idx[n * 2 + k_col];
      if (i < 0 || i >= rows) {
        return absl::InvalidArgumentError(absl::StrCat("i (", i, ") from index[", n, ",", row_col,
                                                       "] out of bounds (>=", rows, ")"));
      }
      if (k < 0 || k >= inner) {
        return absl::InvalidArgumentError(absl::StrCat("k (", k, ") from index[", n, ",", k_col,
                                                       "] out of bounds (>=", inner, ")"));
      }
      for (int64_t j = 0; j < cols; ++j) {
        o[i * cols + j] += av[n] * (adj_b_ ? bv[j * b_inner + k] : bv[k * cols + j]);
      }
    }
    return absl::OkStatus();
  }

 private:
  bool adj_a_ = false, adj_b_ = false;
};

class SparseReorderOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    RETURN_IF_ERROR(CheckMatrix(indices, "Input indices"));
    RETURN_IF_ERROR(CheckVector(values, "Input values"));
    const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
    if (values.NumElements() != n) {
      return absl::InvalidArgumentError(absl::StrCat("Input indices has ", n, " entries, values ",
                                                     values.NumElements()));
    }
    const int64_t* idx = indices.data<int64_t>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return CompareRows(idx, rank, a, b) < 0; });
    ASSIGN_OR_RETURN(Tensor * out_idx, ctx->allocate_output(0, indices.shape()));
    ASSIGN_OR_RETURN(Tensor * out_vals, ctx->allocate_output(1, values.shape()));
    for (int64_t i = 0; i < n; ++i) {
      std::copy_n(idx + order[i] * rank, rank, out_idx->data<int64_t>() + i * rank);
      CopyElement(values, order[i], out_vals, i);
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterSparseTensorKernels(KernelRegistry* k) {
  const auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  k->Register<SparseReshapeOp>(cpu("SparseReshape"));
  k->Register<SparseFillEmptyRowsOp>(cpu("SparseFillEmptyRows"));
  k->Register<SparseFillEmptyRowsGradOp<float>>(
      cpu("SparseFillEmptyRowsGrad").TypeConstraint("T", DT_FLOAT));
  k->Register<SparseFillEmptyRowsGradOp<double>>(
      cpu("SparseFillEmptyRowsGrad").TypeConstraint("T", DT_DOUBLE));
  k->Register<SparseToDenseOp>(cpu("SparseToDense"));
  k->Register<SparseTensorDenseMatMulOp<float>>(
      cpu("SparseTensorDenseMatMul").TypeConstraint("T", DT_FLOAT));
  k->Register<SparseTensorDenseMatMulOp<double>>(
      cpu("SparseTensorDenseMatMul").TypeConstraint("T", DT_DOUBLE));
  k->Register<SparseReorderOp>(cpu("SparseReorder"));
  internal::RegisterSparseCombineKernels(k);
}

}  // namespace sluice
