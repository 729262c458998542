// CPU kernels of BroadcastTo, EnsureShape, MatrixBandPart and Roll
// (broadcast_ops.h): elements moved as bytes, for every fixed-size dtype.
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/broadcast_ops.h"
#include "ops/array/internal/array_kernel_util.h"
#include "ops/internal/index_tensors.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

char* Bytes(const Tensor& t) { return static_cast<char*>(t.raw_data()); }

// Visits every index of `dims` in row-major order, calling f(out, in) with
// the output's linear index and `in_offset(index)` kept up to date by
// per-dimension strides `in_strides` (elements; 0 for a broadcast dim).
template <typename F>
void ForEachIndex(const std::vector<int64_t>& dims, const std::vector<int64_t>& in_strides,
                  int64_t in_base, F&& f) {
  const int rank = static_cast<int>(dims.size());
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  std::vector<int64_t> at(rank, 0);
  int64_t in = in_base;
  for (int64_t out = 0; out < total; ++out) {
    f(out, in);
    for (int d = rank - 1; d >= 0; --d) {
      if (++at[d] < dims[d]) {
        in += in_strides[d];
        break;
      }
      in -= in_strides[d] * (dims[d] - 1);
      at[d] = 0;
    }
  }
}

void CopyElement(char* out, int64_t o, const char* in, int64_t i, size_t esize) {
  std::memcpy(out + o * esize, in + i * esize, esize);
}

class BroadcastToOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (ctx->input(1).dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("BroadcastTo: shape must be a vector, got shape ",
                                                     ctx->input(1).shape().DebugString()));
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> to,
                     internal::ReadInts(ctx->input(1), "BroadcastTo: shape"));
    const int rank = static_cast<int>(to.size());
    const int offset = rank - x.dims();
    bool ok = offset >= 0;
    std::vector<int64_t> strides(rank, 0);
    int64_t stride = 1;
    for (int d = x.dims() - 1; ok && d >= 0; --d) {
      const int64_t n = x.dim_size(d), t = to[offset + d];
      ok = n == t || n == 1;
      strides[offset + d] = n == 1 ? 0 : stride;
      stride *= n;
    }
    for (int64_t t : to) ok = ok && t >= 0;
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("BroadcastTo: a tensor of shape ", x.shape().DebugString(),
                       " does not broadcast to ", TensorShape(absl::MakeConstSpan(to)).DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(to))));
    const size_t esize = DataTypeSize(x.dtype());
    ForEachIndex(to, strides, 0, [&](int64_t o, int64_t i) {
      CopyElement(Bytes(*out), o, Bytes(x), i, esize);
    });
    return absl::OkStatus();
  }
};

class EnsureShapeOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(shape_, ctx.GetAttr<TensorShape>("shape"));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (!x.shape().IsCompatibleWith(shape_)) {
      return absl::InvalidArgumentError(absl::StrCat("EnsureShape: the tensor's shape ",
                                                     x.shape().DebugString(),
                                                     " is not compatible with the expected shape ",
                                                     shape_.DebugString()));
    }
    ctx->set_output(0, x);
    return absl::OkStatus();
  }

 private:
  TensorShape shape_;
};

absl::StatusOr<int64_t> ReadScalar(const Tensor& t, absl::string_view what) {
  ASSIGN_OR_RETURN(std::vector<int64_t> v, internal::ReadInts(t, what));
  if (t.dims() != 0 || v.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  return v[0];
}

class MatrixBandPartOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MatrixBandPart: input must be at least 2-D, got ", x.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(int64_t lower, ReadScalar(ctx->input(1), "MatrixBandPart: num_lower"));
    ASSIGN_OR_RETURN(int64_t upper, ReadScalar(ctx->input(2), "MatrixBandPart: num_upper"));
    const int64_t m = x.dim_size(x.dims() - 2), n = x.dim_size(x.dims() - 1);
    if (lower > m || upper > n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MatrixBandPart: num_lower (", lower, ") must be negative or at most the rows (", m,
          "), num_upper (", upper, ") negative or at most the columns (", n, ")"));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const size_t esize = DataTypeSize(x.dtype());
    const int64_t matrices = m * n == 0 ? 0 : x.NumElements() / (m * n);
    for (int64_t b = 0; b < matrices; ++b) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const int64_t k = (b * m + i) * n + j;
          const bool keep = (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper);
          if (keep) {
            CopyElement(Bytes(*out), k, Bytes(x), k, esize);
          } else {
            std::memset(Bytes(*out) + k * esize, 0, esize);
          }
        }
      }
    }
    return absl::OkStatus();
  }
};

class RollOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> shift, internal::ReadInts(ctx->input(1), "Roll: shift"));
    ASSIGN_OR_RETURN(std::vector<int64_t> axis, internal::ReadInts(ctx->input(2), "Roll: axis"));
    if (ctx->input(1).dims() > 1 || ctx->input(2).dims() > 1 || shift.size() != axis.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Roll: shift and axis must be scalars or vectors of one length, got shapes ",
          ctx->input(1).shape().DebugString(), " and ", ctx->input(2).shape().DebugString()));
    }
    const int rank = x.dims();
    std::vector<int64_t> by(rank, 0);
    for (size_t k = 0; k < axis.size(); ++k) {
      const int64_t a = axis[k] < 0 ? axis[k] + rank : axis[k];
      if (a < 0 || a >= rank) {
        return absl::InvalidArgumentError(absl::StrCat("Roll: axis ", axis[k], " is out of range for a tensor of shape ",
                                                       x.shape().DebugString()));
      }
      by[a] += shift[k];
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() == 0) return absl::OkStatus();
    // Output index i reads input index (i - shift) mod dim, per dimension.
    std::vector<int64_t> dims = x.shape().dims(), strides(rank, 1), from(rank, 0);
    for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
    int64_t in = 0;
    for (int d = 0; d < rank; ++d) {
      by[d] = ((by[d] % dims[d]) + dims[d]) % dims[d];
      from[d] = (dims[d] - by[d]) % dims[d];
      in += from[d] * strides[d];
    }
    const size_t esize = DataTypeSize(x.dtype());
    const int64_t total = x.NumElements();
    for (int64_t o = 0; o < total; ++o) {
      CopyElement(Bytes(*out), o, Bytes(x), in, esize);
      for (int d = rank - 1; d >= 0; --d) {
        if (++from[d] == dims[d]) {
          from[d] = 0;
          in -= (dims[d] - 1) * strides[d];
        } else {
          in += strides[d];
        }
        // The odometer over output indices carries when this dim wraps back
        // to where it started.
        if (from[d] != (dims[d] - by[d]) % dims[d]) break;
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterBroadcastKernels(KernelRegistry* kernels) {
  auto cpu = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", internal::AllTypes());
  };
  kernels->Register<BroadcastToOp>(cpu("BroadcastTo"));
  kernels->Register<EnsureShapeOp>(cpu("EnsureShape"));
  kernels->Register<MatrixBandPartOp>(cpu("MatrixBandPart"));
  kernels->Register<RollOp>(cpu("Roll"));
}

}  // namespace sluice
