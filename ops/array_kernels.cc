// CPU kernels of the array ops. Most move bytes without looking at them, so
// one kernel serves every fixed-size dtype; the few that compute
// (UnsortedSegmentSum, OnesLike, InvertPermutation) are typed. Kernels do not
// split work over the device's thread pool: they are memory-bound, and the
// executor already runs independent nodes in parallel.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "graph/status_macros.h"
#include "ops/array_ops.h"

namespace sluice {
namespace {

using ::tensorflow::TensorProto;

const std::vector<DataType>& AllTypes() {
  static const auto* types =
      new std::vector<DataType>{DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT8,   DT_INT8,
                                DT_INT16, DT_UINT16, DT_BOOL,  DT_HALF,  DT_BFLOAT16};
  return *types;
}

std::string IntsString(absl::Span<const int64_t> v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

// ---- Reading and writing index tensors -------------------------------------

absl::StatusOr<std::vector<int64_t>> ReadInts(const Tensor& t, absl::string_view what) {
  std::vector<int64_t> v(t.NumElements());
  if (t.dtype() == DT_INT32) {
    const int32_t* p = t.data<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else if (t.dtype() == DT_INT64) {
    const int64_t* p = t.data<int64_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be int32 or int64, got ", DataTypeName(t.dtype())));
  }
  return v;
}

absl::StatusOr<std::vector<int64_t>> ReadVector(const Tensor& t, absl::string_view what) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a vector, got shape ", t.shape().DebugString()));
  }
  return ReadInts(t, what);
}

absl::StatusOr<int64_t> ReadScalar(const Tensor& t, absl::string_view what) {
  if (t.NumElements() != 1 || t.dims() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadInts(t, what));
  return v[0];
}

absl::Status WriteInts(absl::Span<const int64_t> values, Tensor* t) {
  if (t->dtype() == DT_INT64) {
    std::copy(values.begin(), values.end(), t->data<int64_t>());
    return absl::OkStatus();
  }
  int32_t* p = t->data<int32_t>();
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] > INT32_MAX || values[i] < INT32_MIN) {
      return absl::InvalidArgumentError(
          absl::StrCat("value ", values[i], " does not fit in int32; use out_type int64"));
    }
    p[i] = static_cast<int32_t>(values[i]);
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CanonicalAxis(int64_t axis, int64_t rank, absl::string_view what,
                                      const TensorShape& shape) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", axis, " is out of range [", -rank,
                                                   ", ", rank, ") for shape ",
                                                   shape.DebugString()));
  }
  return axis < 0 ? axis + rank : axis;
}

int64_t Product(absl::Span<const int64_t> dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

// ---- Byte movers ---------------------------------------------------------

// Calls f(std::type_identity<U>{}) with an unsigned integer type U of the
// element size, so element copies compile to plain loads and stores.
template <typename F>
void DispatchBySize(size_t element_size, F&& f) {
  switch (element_size) {
    case 1:
      f(std::type_identity<uint8_t>{});
      break;
    case 2:
      f(std::type_identity<uint16_t>{});
      break;
    case 4:
      f(std::type_identity<uint32_t>{});
      break;
    default:
      f(std::type_identity<uint64_t>{});
      break;
  }
}

// Copies `n` elements from `src` (stepping `src_step` elements) to the
// contiguous `dst`, or with Scatter from the contiguous `src` to `dst`
// stepping `dst_step`.
template <bool Scatter>
void CopyRow(char* dst, const char* src, int64_t n, int64_t step, size_t esize) {
  if (step == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * esize);
    return;
  }
  DispatchBySize(esize, [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* d = reinterpret_cast<U*>(dst);
    const U* s = reinterpret_cast<const U*>(src);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (Scatter) {
        d[i * step] = s[i];
      } else {
        d[i] = s[i * step];
      }
    }
  });
}

// The box of `box_dims` elements of a tensor of `full_dims`, starting at
// `begin` and stepping `strides` (possibly negative) per dimension: gathered
// into the contiguous `compact` (Scatter = false), or written back from it.
template <bool Scatter>
void StridedBoxCopy(char* full, absl::Span<const int64_t> full_dims,
                    absl::Span<const int64_t> begin, absl::Span<const int64_t> strides,
                    absl::Span<const int64_t> box_dims, char* compact, size_t esize) {
  const int rank = static_cast<int>(full_dims.size());
  for (int64_t d : box_dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> full_strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) full_strides[i] = full_strides[i + 1] * full_dims[i + 1];
  int64_t base = 0;
  for (int i = 0; i < rank; ++i) base += begin[i] * full_strides[i];
  if (rank == 0) {
    if (Scatter) {
      std::memcpy(full, compact, esize);
    } else {
      std::memcpy(compact, full, esize);
    }
    return;
  }
  // Trailing dimensions that form one contiguous run merge into the row.
  int inner = rank - 1;  // the row's dimension
  int64_t row = box_dims[rank - 1];
  int64_t step = strides[rank - 1];
  if (step == 1) {
    while (inner > 0 && begin[inner] == 0 && box_dims[inner] == full_dims[inner] &&
           strides[inner - 1] == 1) {
      --inner;
      row *= box_dims[inner];
    }
    // Rows of dims [inner, rank) are contiguous iff every dim after `inner`
    // is whole; the loop above only merges while that holds.
  }
  std::vector<int64_t> idx(inner, 0);
  const size_t row_bytes = static_cast<size_t>(row) * esize;
  char* out = compact;
  int64_t offset = base;
  while (true) {
    char* f = full + offset * static_cast<int64_t>(esize);
    if (Scatter) {
      CopyRow<true>(f, out, row, step, esize);
    } else {
      CopyRow<false>(out, f, row, step, esize);
    }
    out += row_bytes;
    int d = inner - 1;
    for (; d >= 0; --d) {
      offset += strides[d] * full_strides[d];
      if (++idx[d] < box_dims[d]) break;
      offset -= strides[d] * full_strides[d] * box_dims[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

// Fills `n` elements at `dst` with the element at `value`.
void FillElements(char* dst, int64_t n, const char* value, size_t esize) {
  DispatchBySize(esize, [&](auto tag) {
    using U = typename decltype(tag)::type;
    U v;
    std::memcpy(&v, value, sizeof(U));
    std::fill_n(reinterpret_cast<U*>(dst), n, v);
  });
}

// ---- Constants and feeds ---------------------------------------------------

class ConstOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(TensorProto proto, ctx.GetAttr<TensorProto>("value"));
    Allocator* allocator = ctx.device() != nullptr ? ctx.device()->allocator() : nullptr;
    ASSIGN_OR_RETURN(value_, Tensor::FromProto(proto, allocator));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, value_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  Tensor value_;
};

class PlaceholderOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    absl::StatusOr<TensorShape> shape = ctx.GetAttr<TensorShape>("shape");
    shape_ = shape.ok() ? *shape : TensorShape::Unknown();
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    std::string message = absl::StrCat("You must feed a value for placeholder tensor '",
                                       ctx->node().name(), "' with dtype ", DataTypeName(dtype_));
    if (!shape_.unknown_rank()) absl::StrAppend(&message, " and shape ", shape_.DebugString());
    return absl::InvalidArgumentError(message);
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
};

// Identity, StopGradient, PreventGradient, PlaceholderWithDefault.
class IdentityOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, ctx->input(0));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class NoOpKernel : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override { return absl::OkStatus(); }
  bool IsExpensive() const override { return false; }
};

// ---- Creating ------------------------------------------------------------------

class FillOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadVector(ctx->input(0), "Fill: dims"));
    const Tensor& value = ctx->input(1);
    if (value.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Fill: value must be a scalar, got shape ", value.shape().DebugString()));
    }
    for (int64_t d : dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Fill: dims must be non-negative, got ", IntsString(dims)));
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(dims))));
    FillElements(static_cast<char*>(out->raw_data()), out->NumElements(),
                 static_cast<const char*>(value.raw_data()), DataTypeSize(value.dtype()));
    return absl::OkStatus();
  }
};

class ZerosLikeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->forward_input_or_allocate_output(0, 0, ctx->input(0).shape()));
    if (out->TotalBytes() > 0) std::memset(out->raw_data(), 0, out->TotalBytes());
    return absl::OkStatus();
  }
};

// The bytes of the value 1 in `dtype`.
uint64_t OneBits(DataType dtype) {
  uint64_t bits = 0;
  auto put = [&bits](auto v) { std::memcpy(&bits, &v, sizeof(v)); };
  switch (dtype) {
    case DT_FLOAT:
      put(1.0f);
      break;
    case DT_DOUBLE:
      put(1.0);
      break;
    case DT_HALF:
      put(Half::FromFloat(1.0f));
      break;
    case DT_BFLOAT16:
      put(BFloat16::FromFloat(1.0f));
      break;
    case DT_BOOL:
      put(true);
      break;
    case DT_INT8:
      put(int8_t{1});
      break;
    case DT_UINT8:
      put(uint8_t{1});
      break;
    case DT_INT16:
      put(int16_t{1});
      break;
    case DT_UINT16:
      put(uint16_t{1});
      break;
    case DT_INT32:
      put(int32_t{1});
      break;
    default:
      put(int64_t{1});
      break;
  }
  return bits;
}

class OnesLikeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    const uint64_t one = OneBits(x.dtype());
    FillElements(static_cast<char*>(out->raw_data()), out->NumElements(),
                 reinterpret_cast<const char*>(&one), DataTypeSize(x.dtype()));
    return absl::OkStatus();
  }
};

// ---- Shapes -----------------------------------------------------------------

class ReshapeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> requested, ReadVector(ctx->input(1), "Reshape: shape"));
    ASSIGN_OR_RETURN(TensorShape shape, array_internal::ResolveReshape(x.shape(), requested));
    ASSIGN_OR_RETURN(Tensor y, x.Reshaped(shape));
    ctx->set_output(0, std::move(y));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class ExpandDimsOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(int64_t dim, ReadScalar(ctx->input(1), "ExpandDims: dim"));
    ASSIGN_OR_RETURN(int64_t d, CanonicalAxis(dim, x.dims() + 1, "ExpandDims: dim", x.shape()));
    TensorShape shape = x.shape();
    shape.InsertDim(static_cast<int>(d), 1);
    ASSIGN_OR_RETURN(Tensor y, x.Reshaped(shape));
    ctx->set_output(0, std::move(y));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class SqueezeOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(squeeze_dims_, ctx.GetAttr<std::vector<int64_t>>("squeeze_dims"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    std::vector<bool> remove(x.dims(), false);
    for (int64_t d : squeeze_dims_) {
      ASSIGN_OR_RETURN(int64_t a,
                       CanonicalAxis(d, x.dims(), "Squeeze: squeeze_dims entry", x.shape()));
      if (x.dim_size(a) != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Can not squeeze dim[", a, "], expected a dimension of 1, got ",
                         x.dim_size(a), " (shape ", x.shape().DebugString(), ")"));
      }
      remove[a] = true;
    }
    std::vector<int64_t> dims;
    for (int i = 0; i < x.dims(); ++i) {
      if (squeeze_dims_.empty() ? x.dim_size(i) != 1 : !remove[i]) dims.push_back(x.dim_size(i));
    }
    ASSIGN_OR_RETURN(Tensor y, x.Reshaped(TensorShape(absl::MakeConstSpan(dims))));
    ctx->set_output(0, std::move(y));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  std::vector<int64_t> squeeze_dims_;
};

absl::Status CheckPermutation(absl::Span<const int64_t> perm, absl::string_view what) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) {
      return absl::InvalidArgumentError(absl::StrCat(what, " ", IntsString(perm),
                                                     " is not a permutation of 0..",
                                                     static_cast<int64_t>(perm.size()) - 1));
    }
    seen[p] = true;
  }
  return absl::OkStatus();
}

// out[i0..] = in[...] with out.dim(i) == in.dim(perm[i]); dims and perm
// already simplified (no size-1 dims, no adjacent dims that stay adjacent).
void TransposeBytes(const char* in, absl::Span<const int64_t> in_dims,
                    absl::Span<const int64_t> perm, char* out, size_t esize) {
  const int rank = static_cast<int>(perm.size());
  std::vector<int64_t> in_strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) in_strides[i] = in_strides[i + 1] * in_dims[i + 1];
  std::vector<int64_t> out_dims(rank), step(rank);
  for (int i = 0; i < rank; ++i) {
    out_dims[i] = in_dims[perm[i]];
    step[i] = in_strides[perm[i]];
  }
  DispatchBySize(esize, [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = reinterpret_cast<const U*>(in);
    U* dst = reinterpret_cast<U*>(out);
    if (rank == 2) {
      // Blocked, so that both sides stay in cache.
      constexpr int64_t kBlock = 32;
      const int64_t rows = out_dims[0], cols = out_dims[1];
      for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
        for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
          const int64_t r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
          for (int64_t r = r0; r < r1; ++r) {
            for (int64_t c = c0; c < c1; ++c) dst[r * cols + c] = src[r * step[0] + c * step[1]];
          }
        }
      }
      return;
    }
    const int64_t row = out_dims[rank - 1];
    const int64_t row_step = step[rank - 1];
    std::vector<int64_t> idx(rank - 1, 0);
    int64_t offset = 0;
    while (true) {
      const U* s = src + offset;
      for (int64_t c = 0; c < row; ++c) dst[c] = s[c * row_step];
      dst += row;
      int d = rank - 2;
      for (; d >= 0; --d) {
        offset += step[d];
        if (++idx[d] < out_dims[d]) break;
        offset -= step[d] * out_dims[d];
        idx[d] = 0;
      }
      if (d < 0) break;
    }
  });
}

class TransposeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> perm, ReadVector(ctx->input(1), "Transpose: perm"));
    if (static_cast<int>(perm.size()) != x.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("Transpose: perm ", IntsString(perm), " has ",
                                                     perm.size(), " entries but x has shape ",
                                                     x.shape().DebugString()));
    }
    RETURN_IF_ERROR(CheckPermutation(perm, "Transpose: perm"));
    TensorShape out_shape = x.shape();
    for (size_t i = 0; i < perm.size(); ++i) out_shape.set_dim(i, x.dim_size(perm[i]));

    // Drop size-1 dimensions, then merge input dims that stay adjacent.
    std::vector<int64_t> keep_index(x.dims(), -1);
    std::vector<int64_t> dims;
    for (int i = 0; i < x.dims(); ++i) {
      if (x.dim_size(i) != 1) {
        keep_index[i] = static_cast<int64_t>(dims.size());
        dims.push_back(x.dim_size(i));
      }
    }
    std::vector<int64_t> p;
    for (int64_t q : perm) {
      if (keep_index[q] >= 0) p.push_back(keep_index[q]);
    }
    // Merge runs p[i], p[i]+1, ... into one dimension.
    std::vector<std::vector<int64_t>> groups;  // in output order
    for (size_t i = 0; i < p.size(); ++i) {
      if (i > 0 && p[i] == p[i - 1] + 1) {
        groups.back().push_back(p[i]);
      } else {
        groups.push_back({p[i]});
      }
    }
    // Merged dims in input order, and the perm over them.
    std::vector<size_t> order(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) order[g] = g;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
    std::vector<int64_t> merged_dims(groups.size()), merged_perm(groups.size());
    std::vector<int64_t> rank_in_input(groups.size());
    for (size_t k = 0; k < order.size(); ++k) {
      rank_in_input[order[k]] = static_cast<int64_t>(k);
      int64_t n = 1;
      for (int64_t d : groups[order[k]]) n *= dims[d];
      merged_dims[k] = n;
    }
    for (size_t g = 0; g < groups.size(); ++g) merged_perm[g] = rank_in_input[g];

    bool identity = true;
    for (size_t g = 0; g < merged_perm.size(); ++g)
      identity = identity && merged_perm[g] == static_cast<int64_t>(g);
    if (identity) {
      ASSIGN_OR_RETURN(Tensor y, x.Reshaped(out_shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, out_shape));
    TransposeBytes(static_cast<const char*>(x.raw_data()), merged_dims, merged_perm,
                   static_cast<char*>(y->raw_data()), DataTypeSize(x.dtype()));
    return absl::OkStatus();
  }
};

template <typename T>
class InvertPermutationOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "InvertPermutation: x must be a vector, got shape ", x.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> perm, ReadInts(x, "InvertPermutation: x"));
    RETURN_IF_ERROR(CheckPermutation(perm, "InvertPermutation: x"));
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    T* out = y->data<T>();
    for (size_t i = 0; i < perm.size(); ++i) out[perm[i]] = static_cast<T>(i);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// Shape, Size, Rank.
class ShapeOp : public OpKernel {
 public:
  enum class Kind { kShape, kSize, kRank };
  explicit ShapeOp(Kind kind) : kind_(kind) {}
  absl::Status Compute(OpKernelContext* ctx) override {
    const TensorShape& s = ctx->input(0).shape();
    std::vector<int64_t> values;
    TensorShape out_shape;
    switch (kind_) {
      case Kind::kShape:
        values = s.dims();
        out_shape = TensorShape({static_cast<int64_t>(values.size())});
        break;
      case Kind::kSize:
        values = {ctx->input(0).NumElements()};
        break;
      case Kind::kRank:
        values = {s.rank()};
        break;
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    return WriteInts(values, out);
  }
  bool IsExpensive() const override { return false; }

 private:
  const Kind kind_;
};

// ---- Joining and splitting ------------------------------------------------------

// ConcatV2 (axis last) and Concat (axis first).
class ConcatOp : public OpKernel {
 public:
  explicit ConcatOp(bool axis_first) : axis_first_(axis_first) {}
  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    const int first = axis_first_ ? 1 : 0;
    ASSIGN_OR_RETURN(int64_t axis_value,
                     ReadScalar(ctx->input(axis_first_ ? 0 : n), "Concat: axis"));
    const Tensor& x0 = ctx->input(first);
    const int rank = x0.dims();
    if (rank == 0) {
      return absl::InvalidArgumentError("Concat: can't concatenate scalars (use Pack instead)");
    }
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_value, rank, "Concat: axis", x0.shape()));
    TensorShape out_shape = x0.shape();
    int64_t axis_size = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx->input(first + i);
      bool match = x.dims() == rank;
      for (int d = 0; match && d < rank; ++d) match = d == axis || x.dim_size(d) == x0.dim_size(d);
      if (!match) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Concat: dimensions of inputs should match except along axis ", axis, ": shape[0] = ",
            x0.shape().DebugString(), " vs. shape[", i, "] = ", x.shape().DebugString()));
      }
      axis_size += x.dim_size(axis);
    }
    out_shape.set_dim(static_cast<int>(axis), axis_size);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const size_t esize = DataTypeSize(x0.dtype());
    const int64_t outer = Product(x0.shape().dims(), 0, axis);
    std::vector<size_t> chunk(n);
    size_t out_row = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx->input(first + i);
      chunk[i] = static_cast<size_t>(Product(x.shape().dims(), axis, rank)) * esize;
      out_row += chunk[i];
    }
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int i = 0; i < n; ++i) {
        if (chunk[i] == 0) continue;
        std::memcpy(dst, static_cast<const char*>(ctx->input(first + i).raw_data()) + o * chunk[i],
                    chunk[i]);
        dst += chunk[i];
      }
    }
    return absl::OkStatus();
  }

 private:
  const bool axis_first_;
};

class ConcatOffsetOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    ASSIGN_OR_RETURN(int64_t axis_value, ReadScalar(ctx->input(0), "ConcatOffset: concat_dim"));
    ASSIGN_OR_RETURN(std::vector<int64_t> s0, ReadVector(ctx->input(1), "ConcatOffset: shape"));
    const int64_t rank = static_cast<int64_t>(s0.size());
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_value, rank, "ConcatOffset: concat_dim",
                                                 TensorShape(absl::MakeConstSpan(s0))));
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(std::vector<int64_t> s,
                       ReadVector(ctx->input(1 + i), "ConcatOffset: shape"));
      bool match = static_cast<int64_t>(s.size()) == rank;
      for (int64_t d = 0; match && d < rank; ++d) match = d == axis || s[d] == s0[d];
      if (!match) {
        return absl::InvalidArgumentError(absl::StrCat("ConcatOffset: shape ", i, " ",
                                                       IntsString(s), " does not match shape 0 ",
                                                       IntsString(s0), " except along ", axis));
      }
      std::vector<int64_t> value(rank, 0);
      value[axis] = offset;
      offset += s[axis];
      ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(i, TensorShape({rank})));
      RETURN_IF_ERROR(WriteInts(value, out));
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// Writes `num` outputs; output i takes, for each of `outer` rows, the i-th
// run of `chunk` bytes of the input row.
absl::Status SplitRows(OpKernelContext* ctx, const Tensor& x, int64_t num, int64_t outer,
                       size_t chunk, const TensorShape& out_shape) {
  const char* src = static_cast<const char*>(x.raw_data());
  for (int64_t i = 0; i < num; ++i) {
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(static_cast<int>(i), out_shape));
    if (chunk == 0) continue;
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + o * chunk, src + (o * num + i) * chunk, chunk);
    }
  }
  return absl::OkStatus();
}

class SplitOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(1);
    const int64_t num = ctx->num_outputs();
    ASSIGN_OR_RETURN(int64_t axis_value, ReadScalar(ctx->input(0), "Split: axis"));
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_value, x.dims(), "Split: axis", x.shape()));
    const int64_t d = x.dim_size(axis);
    if (d % num != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Number of ways to split should evenly divide the split dimension, but got split_dim ",
          axis, " (size = ", d, ") and num_split ", num));
    }
    if (num == 1) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    TensorShape out_shape = x.shape();
    out_shape.set_dim(static_cast<int>(axis), d / num);
    const size_t chunk =
        static_cast<size_t>(Product(out_shape.dims(), axis, x.dims())) * DataTypeSize(x.dtype());
    return SplitRows(ctx, x, num, Product(x.shape().dims(), 0, axis), chunk, out_shape);
  }
};

class PackOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(axis_, ctx.GetAttr<int64_t>("axis"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& x0 = ctx->input(0);
    for (int i = 1; i < n; ++i) {
      if (ctx->input(i).shape() != x0.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Pack: shapes of all inputs must match: values[0].shape = ", x0.shape().DebugString(),
            " != values[", i, "].shape = ", ctx->input(i).shape().DebugString()));
      }
    }
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_, x0.dims() + 1, "Pack: axis", x0.shape()));
    TensorShape out_shape = x0.shape();
    out_shape.InsertDim(static_cast<int>(axis), n);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const int64_t outer = Product(x0.shape().dims(), 0, axis);
    const size_t chunk =
        static_cast<size_t>(Product(x0.shape().dims(), axis, x0.dims())) * DataTypeSize(x0.dtype());
    if (chunk == 0) return absl::OkStatus();
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int i = 0; i < n; ++i) {
        std::memcpy(dst, static_cast<const char*>(ctx->input(i).raw_data()) + o * chunk, chunk);
        dst += chunk;
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 0;
};

class UnpackOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(axis_, ctx.GetAttr<int64_t>("axis"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int64_t num = ctx->num_outputs();
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_, x.dims(), "Unpack: axis", x.shape()));
    if (x.dim_size(axis) != num) {
      return absl::InvalidArgumentError(
          absl::StrCat("Unpack: input shape ", x.shape().DebugString(), " has ", x.dim_size(axis),
                       " along axis ", axis, " but num = ", num));
    }
    TensorShape out_shape = x.shape();
    out_shape.RemoveDim(static_cast<int>(axis));
    const size_t chunk = static_cast<size_t>(Product(x.shape().dims(), axis + 1, x.dims())) *
                         DataTypeSize(x.dtype());
    return SplitRows(ctx, x, num, Product(x.shape().dims(), 0, axis), chunk, out_shape);
  }

 private:
  int64_t axis_ = 0;
};

// Writes the tile of dimension d onward: the input block at `in` (dims
// in_dims[d:]) into `out` (dims out_dims[d:]).
void TileBlock(const char* in, char* out, int d, absl::Span<const int64_t> in_dims,
               absl::Span<const int64_t> multiples, absl::Span<const size_t> in_block_bytes,
               absl::Span<const size_t> out_block_bytes) {
  const int rank = static_cast<int>(in_dims.size());
  const int64_t n = in_dims[d];
  size_t one_tile;  // bytes of one copy of the input along dimension d
  if (d == rank - 1) {
    one_tile = in_block_bytes[d];
    std::memcpy(out, in, one_tile);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      TileBlock(in + i * in_block_bytes[d + 1], out + i * out_block_bytes[d + 1], d + 1, in_dims,
                multiples, in_block_bytes, out_block_bytes);
    }
    one_tile = static_cast<size_t>(n) * out_block_bytes[d + 1];
  }
  for (int64_t m = 1; m < multiples[d]; ++m) std::memcpy(out + m * one_tile, out, one_tile);
}

class TileOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> multiples, ReadVector(ctx->input(1), "Tile: multiples"));
    if (static_cast<int>(multiples.size()) != x.dims()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tile: multiples ", IntsString(multiples), " has ", multiples.size(),
                       " entries but input has shape ", x.shape().DebugString()));
    }
    TensorShape out_shape = x.shape();
    bool identity = true;
    for (int i = 0; i < x.dims(); ++i) {
      if (multiples[i] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Tile: multiples ", IntsString(multiples), " must be non-negative"));
      }
      out_shape.set_dim(i, x.dim_size(i) * multiples[i]);
      identity = identity && multiples[i] == 1;
    }
    if (identity) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    const int rank = x.dims();
    const size_t esize = DataTypeSize(x.dtype());
    // Bytes of one block of dims [d, rank), for input and output.
    std::vector<size_t> in_block(rank + 1, esize), out_block(rank + 1, esize);
    for (int d = rank - 1; d >= 0; --d) {
      in_block[d] = in_block[d + 1] * x.dim_size(d);
      out_block[d] = out_block[d + 1] * out_shape.dim(d);
    }
    TileBlock(static_cast<const char*>(x.raw_data()), static_cast<char*>(out->raw_data()), 0,
              x.shape().dims(), multiples, in_block, out_block);
    return absl::OkStatus();
  }
};

// ---- Indexing -------------------------------------------------------------------

class SliceOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> begin, ReadVector(ctx->input(1), "Slice: begin"));
    ASSIGN_OR_RETURN(std::vector<int64_t> size, ReadVector(ctx->input(2), "Slice: size"));
    const int rank = x.dims();
    if (static_cast<int>(begin.size()) != rank || static_cast<int>(size.size()) != rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Slice: expected begin and size of length ", rank, " for input shape ",
                       x.shape().DebugString(), ", got begin ", IntsString(begin), " and size ",
                       IntsString(size)));
    }
    bool identity = true;
    for (int i = 0; i < rank; ++i) {
      const int64_t d = x.dim_size(i);
      if (size[i] == -1) size[i] = d - begin[i];
      if (begin[i] < 0 || begin[i] > d || size[i] < 0 || begin[i] + size[i] > d) {
        return absl::InvalidArgumentError(
            absl::StrCat("Slice: expected begin[", i, "] in [0, ", d, "] and size[", i, "] in [0, ",
                         d - begin[i], "], but got begin ", IntsString(begin), " and size ",
                         IntsString(size), " for input shape ", x.shape().DebugString()));
      }
      identity = identity && begin[i] == 0 && size[i] == d;
    }
    if (identity) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    TensorShape out_shape(absl::MakeConstSpan(size));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    std::vector<int64_t> strides(rank, 1);
    StridedBoxCopy<false>(static_cast<char*>(x.raw_data()), x.shape().dims(), begin, strides, size,
                          static_cast<char*>(out->raw_data()), DataTypeSize(x.dtype()));
    return absl::OkStatus();
  }
};

absl::StatusOr<array_internal::StridedSliceSpec> ReadSpec(const OpKernelConstruction& ctx) {
  array_internal::StridedSliceSpec spec;
  ASSIGN_OR_RETURN(spec.begin_mask, ctx.GetAttr<int64_t>("begin_mask"));
  ASSIGN_OR_RETURN(spec.end_mask, ctx.GetAttr<int64_t>("end_mask"));
  ASSIGN_OR_RETURN(spec.ellipsis_mask, ctx.GetAttr<int64_t>("ellipsis_mask"));
  ASSIGN_OR_RETURN(spec.new_axis_mask, ctx.GetAttr<int64_t>("new_axis_mask"));
  ASSIGN_OR_RETURN(spec.shrink_axis_mask, ctx.GetAttr<int64_t>("shrink_axis_mask"));
  return spec;
}

// Reads begin/end/strides (inputs first..first+2) and plans the slice of a
// tensor of `shape`.
absl::StatusOr<array_internal::StridedSlicePlan> PlanFromInputs(
    OpKernelContext* ctx, int first, const TensorShape& shape,
    const array_internal::StridedSliceSpec& spec) {
  ASSIGN_OR_RETURN(std::vector<int64_t> begin,
                   ReadVector(ctx->input(first), "StridedSlice: begin"));
  ASSIGN_OR_RETURN(std::vector<int64_t> end,
                   ReadVector(ctx->input(first + 1), "StridedSlice: end"));
  ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                   ReadVector(ctx->input(first + 2), "StridedSlice: strides"));
  absl::StatusOr<array_internal::StridedSlicePlan> plan =
      array_internal::PlanStridedSlice(shape, begin, end, strides, spec);
  if (!plan.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        plan.status().message(), " (input shape ", shape.DebugString(), ", begin ",
        IntsString(begin), ", end ", IntsString(end), ", strides ", IntsString(strides), ")"));
  }
  return plan;
}

class StridedSliceOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(spec_, ReadSpec(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(array_internal::StridedSlicePlan plan,
                     PlanFromInputs(ctx, 1, x.shape(), spec_));
    if (plan.is_identity) {
      ASSIGN_OR_RETURN(Tensor y, x.Reshaped(plan.final_shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.final_shape));
    StridedBoxCopy<false>(static_cast<char*>(x.raw_data()), x.shape().dims(), plan.begin,
                          plan.strides, plan.processing_dims, static_cast<char*>(out->raw_data()),
                          DataTypeSize(x.dtype()));
    return absl::OkStatus();
  }

 private:
  array_internal::StridedSliceSpec spec_;
};

class StridedSliceGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(spec_, ReadSpec(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                     ReadVector(ctx->input(0), "StridedSliceGrad: shape"));
    for (int64_t d : dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("StridedSliceGrad: shape ", IntsString(dims), " must be non-negative"));
      }
    }
    const TensorShape shape(absl::MakeConstSpan(dims));
    const Tensor& dy = ctx->input(4);
    ASSIGN_OR_RETURN(array_internal::StridedSlicePlan plan, PlanFromInputs(ctx, 1, shape, spec_));
    if (dy.shape() != plan.final_shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "StridedSliceGrad: dy has shape ", dy.shape().DebugString(), " but the slice of ",
          shape.DebugString(), " has shape ", plan.final_shape.DebugString()));
    }
    if (plan.is_identity) {
      ASSIGN_OR_RETURN(Tensor y, dy.Reshaped(shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->TotalBytes() > 0) std::memset(out->raw_data(), 0, out->TotalBytes());
    StridedBoxCopy<true>(static_cast<char*>(out->raw_data()), dims, plan.begin, plan.strides,
                         plan.processing_dims, static_cast<char*>(dy.raw_data()),
                         DataTypeSize(dy.dtype()));
    return absl::OkStatus();
  }

 private:
  array_internal::StridedSliceSpec spec_;
};

// GatherV2 (axis input) and Gather (axis 0).
class GatherOp : public OpKernel {
 public:
  explicit GatherOp(bool has_axis) : has_axis_(has_axis) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    if (has_axis_) {
      ASSIGN_OR_RETURN(int64_t batch_dims, ctx.GetAttr<int64_t>("batch_dims"));
      if (batch_dims != 0) {
        return absl::UnimplementedError(
            absl::StrCat("GatherV2: batch_dims = ", batch_dims, " is not supported (only 0)"));
      }
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    int64_t axis_value = 0;
    if (has_axis_) {
      ASSIGN_OR_RETURN(axis_value, ReadScalar(ctx->input(2), "GatherV2: axis"));
    }
    if (params.dims() == 0) {
      return absl::InvalidArgumentError("Gather: params must be at least 1-D, got a scalar");
    }
    ASSIGN_OR_RETURN(int64_t axis,
                     CanonicalAxis(axis_value, params.dims(), "Gather: axis", params.shape()));
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadInts(indices, "Gather: indices"));
    const int64_t limit = params.dim_size(axis);
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0 || idx[i] >= limit) {
        return absl::InvalidArgumentError(
            absl::StrCat("Gather: indices[", i, "] = ", idx[i], " is not in [0, ", limit, ")"));
      }
    }
    const std::vector<int64_t>& pd = params.shape().dims();
    std::vector<int64_t> out_dims(pd.begin(), pd.begin() + axis);
    out_dims.insert(out_dims.end(), indices.shape().dims().begin(), indices.shape().dims().end());
    out_dims.insert(out_dims.end(), pd.begin() + axis + 1, pd.end());
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(out_dims))));
    const int64_t outer = Product(pd, 0, axis);
    const size_t inner =
        static_cast<size_t>(Product(pd, axis + 1, pd.size())) * DataTypeSize(params.dtype());
    if (inner == 0) return absl::OkStatus();
    const char* src = static_cast<const char*>(params.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    const int64_t n = static_cast<int64_t>(idx.size());
    for (int64_t o = 0; o < outer; ++o) {
      const char* block = src + o * limit * inner;
      for (int64_t j = 0; j < n; ++j) {
        std::memcpy(dst, block + idx[j] * inner, inner);
        dst += inner;
      }
    }
    return absl::OkStatus();
  }

 private:
  const bool has_axis_;
};

template <typename T>
class UnsortedSegmentSumOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    ASSIGN_OR_RETURN(int64_t num, ReadScalar(ctx->input(2), "UnsortedSegmentSum: num_segments"));
    if (num < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("UnsortedSegmentSum: num_segments must be non-negative, got ", num));
    }
    bool prefix = ids.dims() <= data.dims();
    for (int i = 0; prefix && i < ids.dims(); ++i) prefix = ids.dim_size(i) == data.dim_size(i);
    if (!prefix) {
      return absl::InvalidArgumentError(
          absl::StrCat("UnsortedSegmentSum: data.shape = ", data.shape().DebugString(),
                       " does not start with segment_ids.shape = ", ids.shape().DebugString()));
    }
    std::vector<int64_t> out_dims = {num};
    out_dims.insert(out_dims.end(), data.shape().dims().begin() + ids.dims(),
                    data.shape().dims().end());
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(out_dims))));
    T* o = out->data<T>();
    std::fill_n(o, out->NumElements(), T{});
    ASSIGN_OR_RETURN(std::vector<int64_t> seg, ReadInts(ids, "UnsortedSegmentSum: segment_ids"));
    const int64_t inner = Product(data.shape().dims(), ids.dims(), data.dims());
    const T* d = data.data<T>();
    for (size_t i = 0; i < seg.size(); ++i) {
      const int64_t s = seg[i];
      if (s < 0) continue;  // dropped, as in TensorFlow
      if (s >= num) {
        return absl::InvalidArgumentError(absl::StrCat(
            "UnsortedSegmentSum: segment_ids[", i, "] = ", s, " is out of range [0, ", num, ")"));
      }
      T* dst = o + s * inner;
      const T* src = d + static_cast<int64_t>(i) * inner;
      for (int64_t k = 0; k < inner; ++k) dst[k] += src[k];
    }
    return absl::OkStatus();
  }
};

class BroadcastGradientArgsOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<int64_t> s0,
                     ReadVector(ctx->input(0), "BroadcastGradientArgs: s0"));
    ASSIGN_OR_RETURN(std::vector<int64_t> s1,
                     ReadVector(ctx->input(1), "BroadcastGradientArgs: s1"));
    std::vector<int64_t> r0, r1;
    RETURN_IF_ERROR(array_internal::BroadcastReductionAxes(s0, s1, &r0, &r1));
    ASSIGN_OR_RETURN(Tensor * out0,
                     ctx->allocate_output(0, TensorShape({static_cast<int64_t>(r0.size())})));
    RETURN_IF_ERROR(WriteInts(r0, out0));
    ASSIGN_OR_RETURN(Tensor * out1,
                     ctx->allocate_output(1, TensorShape({static_cast<int64_t>(r1.size())})));
    return WriteInts(r1, out1);
  }
  bool IsExpensive() const override { return false; }
};

template <typename K>
KernelFactory Make() {
  return [] { return std::make_unique<K>(); };
}

}  // namespace

void RegisterArrayKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& all = AllTypes();
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };

  kernels->Register(cpu("Const").TypeConstraint("dtype", all), Make<ConstOp>());
  kernels->Register(cpu("Placeholder"), Make<PlaceholderOp>());
  kernels->Register(cpu("PlaceholderWithDefault").TypeConstraint("dtype", all), Make<IdentityOp>());
  for (const char* op : {"Identity", "StopGradient", "PreventGradient"}) {
    kernels->Register(cpu(op).TypeConstraint("T", all), Make<IdentityOp>());
  }
  kernels->Register(cpu("NoOp"), Make<NoOpKernel>());

  kernels->Register(cpu("Fill").TypeConstraint("T", all), Make<FillOp>());
  kernels->Register(cpu("ZerosLike").TypeConstraint("T", all), Make<ZerosLikeOp>());
  kernels->Register(cpu("OnesLike").TypeConstraint("T", all), Make<OnesLikeOp>());

  kernels->Register(cpu("Reshape").TypeConstraint("T", all), Make<ReshapeOp>());
  kernels->Register(cpu("Transpose").TypeConstraint("T", all), Make<TransposeOp>());
  kernels->Register(cpu("InvertPermutation").TypeConstraint("T", DT_INT32),
                    Make<InvertPermutationOp<int32_t>>());
  kernels->Register(cpu("InvertPermutation").TypeConstraint("T", DT_INT64),
                    Make<InvertPermutationOp<int64_t>>());
  kernels->Register(cpu("ExpandDims").TypeConstraint("T", all), Make<ExpandDimsOp>());
  kernels->Register(cpu("Squeeze").TypeConstraint("T", all), Make<SqueezeOp>());
  kernels->Register(cpu("Shape").TypeConstraint("T", all),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kShape); });
  kernels->Register(cpu("Size").TypeConstraint("T", all),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kSize); });
  kernels->Register(cpu("Rank").TypeConstraint("T", all),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kRank); });

  kernels->Register(cpu("ConcatV2").TypeConstraint("T", all),
                    [] { return std::make_unique<ConcatOp>(/*axis_first=*/false); });
  kernels->Register(cpu("Concat").TypeConstraint("T", all),
                    [] { return std::make_unique<ConcatOp>(/*axis_first=*/true); });
  kernels->Register(cpu("ConcatOffset"), Make<ConcatOffsetOp>());
  kernels->Register(cpu("Split").TypeConstraint("T", all), Make<SplitOp>());
  kernels->Register(cpu("Pack").TypeConstraint("T", all), Make<PackOp>());
  kernels->Register(cpu("Unpack").TypeConstraint("T", all), Make<UnpackOp>());
  kernels->Register(cpu("Tile").TypeConstraint("T", all), Make<TileOp>());

  kernels->Register(cpu("Slice").TypeConstraint("T", all), Make<SliceOp>());
  kernels->Register(cpu("StridedSlice").TypeConstraint("T", all), Make<StridedSliceOp>());
  kernels->Register(cpu("StridedSliceGrad").TypeConstraint("T", all), Make<StridedSliceGradOp>());
  kernels->Register(cpu("GatherV2").TypeConstraint("Tparams", all),
                    [] { return std::make_unique<GatherOp>(/*has_axis=*/true); });
  kernels->Register(cpu("Gather").TypeConstraint("Tparams", all),
                    [] { return std::make_unique<GatherOp>(/*has_axis=*/false); });
  kernels->Register(cpu("UnsortedSegmentSum").TypeConstraint("T", DT_FLOAT),
                    Make<UnsortedSegmentSumOp<float>>());
  kernels->Register(cpu("UnsortedSegmentSum").TypeConstraint("T", DT_DOUBLE),
                    Make<UnsortedSegmentSumOp<double>>());
  kernels->Register(cpu("UnsortedSegmentSum").TypeConstraint("T", DT_INT32),
                    Make<UnsortedSegmentSumOp<int32_t>>());
  kernels->Register(cpu("UnsortedSegmentSum").TypeConstraint("T", DT_INT64),
                    Make<UnsortedSegmentSumOp<int64_t>>());
  kernels->Register(cpu("BroadcastGradientArgs"), Make<BroadcastGradientArgsOp>());
}

}  // namespace sluice
