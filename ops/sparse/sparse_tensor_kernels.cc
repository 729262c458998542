// CPU kernels of the sparse tensor ops (sparse_tensor_ops.h). Values are
// moved element by element whatever their type (strings as objects, the
// rest as bytes); SparseFillEmptyRowsGrad and the product compute in float
// or double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ops/internal/index_tensors.h"
#include "ops/sparse/sparse_tensor_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// dst[j] = src[i], for any dtype.
void CopyElement(const Tensor& src, int64_t i, Tensor* dst, int64_t j) {
  if (src.dtype() == DT_STRING) {
    dst->data<std::string>()[j] = src.data<std::string>()[i];
    return;
  }
  const size_t size = static_cast<size_t>(DataTypeSize(src.dtype()));
  std::memcpy(static_cast<char*>(dst->raw_data()) + j * size,
              static_cast<const char*>(src.raw_data()) + i * size, size);
}

absl::Status CheckMatrix(const Tensor& t, const char* what) {
  if (t.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a matrix, got shape ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::Status CheckVector(const Tensor& t, const char* what) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a vector, got shape ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

std::string Join(const int64_t* v, size_t n) {
  return absl::StrCat("[", absl::StrJoin(std::vector<int64_t>(v, v + n), ","), "]");
}

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
            "Input shape ", Join(in, rank), " is negative or has more than 2^63 elements"));
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
            ". input_shape=", Join(in, rank), " output_shape=", Join(out.data(), out_rank)));
      }
    } else if (product != dense) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input to reshape is a tensor with ", dense, " dense values, but the requested shape has ",
          product, ". input_shape=", Join(in, rank), " output_shape=", Join(out.data(), out_rank)));
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
              "input index ", i, " is out of bounds of the input shape ", Join(in, rank)));
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

// Lexicographic comparison of rows a and b of an [n, rank] index matrix.
int CompareRows(const int64_t* idx, int64_t rank, int64_t a, int64_t b) {
  for (int64_t d = 0; d < rank; ++d) {
    if (idx[a * rank + d] != idx[b * rank + d]) return idx[a * rank + d] < idx[b * rank + d] ? -1 : 1;
  }
  return 0;
}

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
    const auto index_text = [&](int64_t i) { return Join(idx.data() + i * rank, rank); };
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t v = idx[i * rank + d];
        if (v < 0 || v >= shape[d]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "indices[", i, "] = ", index_text(i), " is out of bounds: need 0 <= index < ",
              Join(shape.data(), rank)));
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

// Row i of an [n, rank] index matrix, as a hash key.
std::string RowKey(const int64_t* idx, int64_t rank, int64_t i) {
  return std::string(reinterpret_cast<const char*>(idx + i * rank),
                     static_cast<size_t>(rank) * sizeof(int64_t));
}

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
          "Dimension mismatch: a_shape ", Join(shape.data(), rank), " and b ", b.shape().DebugString()));
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

// A scalar of any real type, as double.
double RealScalar(const Tensor& t) {
  switch (t.dtype()) {
    case DT_FLOAT: return t.data<float>()[0];
    case DT_DOUBLE: return t.data<double>()[0];
    case DT_INT32: return t.data<int32_t>()[0];
    case DT_INT64: return static_cast<double>(t.data<int64_t>()[0]);
    default: return 0;
  }
}

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
          "Operands do not have the same ranks or shapes: lhs shape ", Join(a_shape.data(), a_shape.size()),
          ", rhs shape ", Join(b_shape.data(), b_shape.size())));
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

void RegisterSparseTensorKernels(KernelRegistry* k) {
  RegisterNumeric<float>(k);
  RegisterNumeric<double>(k);
  RegisterNumeric<int32_t>(k);
  RegisterNumeric<int64_t>(k);
  k->Register<SparseConcatOp>(KernelDef("SparseConcat", kDeviceTypeCpu));
  k->Register<SparseSliceOp>(KernelDef("SparseSlice", kDeviceTypeCpu));
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
}

}  // namespace sluice
