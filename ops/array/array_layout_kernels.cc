// CPU kernels of ops/array/array_layout_ops.h. Elements move as bytes (any
// fixed-size dtype), except Where, which reads values.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/array_layout_ops.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "ops/array/internal/array_kernel_util.h"
#include "ops/array/internal/shape_kernels.h"
#include "ops/internal/index_tensors.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::Make;

char* Bytes(const Tensor& t) { return static_cast<char*>(t.raw_data()); }

// The product of dims [begin, end) of s.
int64_t Product(const TensorShape& s, int begin, int end) {
  return internal::Product(s.dims(), static_cast<size_t>(begin), static_cast<size_t>(end));
}

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, const char* op) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": axis ", axis,
                                                   " is out of range for a rank-", rank, " tensor"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// Pad (zeros) and PadV2 (constant_values, input 2).
class PadOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int rank = x.dims();
    ASSIGN_OR_RETURN(internal::PadPlan plan, internal::PlanPad(ctx->node().op(), x, ctx->input(1)));
    const TensorShape& out_shape = plan.out_shape;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const size_t esize = DataTypeSize(x.dtype());
    const int64_t n_out = out->NumElements();
    if (ctx->num_inputs() == 3) {
      const Tensor& value = ctx->input(2);
      RETURN_IF_ERROR(internal::CheckPadValue(value));
      for (int64_t i = 0; i < n_out; ++i) std::memcpy(Bytes(*out) + i * esize, Bytes(value), esize);
    } else if (n_out > 0) {
      std::memset(Bytes(*out), 0, n_out * esize);
    }
    if (x.NumElements() == 0) return absl::OkStatus();
    if (rank == 0) {
      std::memcpy(Bytes(*out), Bytes(x), esize);
      return absl::OkStatus();
    }
    // Copy each innermost row of x into place.
    const int64_t row = x.dim_size(rank - 1);
    const int64_t rows = x.NumElements() / row;
    std::vector<int64_t> index(rank, 0);  // of the row's first element in x
    for (int64_t r = 0; r < rows; ++r) {
      int64_t offset = 0;
      for (int i = 0; i < rank; ++i) offset = offset * out_shape.dim(i) + index[i] + plan.before[i];
      std::memcpy(Bytes(*out) + offset * esize, Bytes(x) + r * row * esize, row * esize);
      for (int i = rank - 2; i >= 0; --i) {
        if (++index[i] < x.dim_size(i)) break;
        index[i] = 0;
      }
    }
    return absl::OkStatus();
  }
};

// The dimensions ReverseV2 (axis: a vector of axes) or TF1's Reverse (dims:
// one bool per dimension) flips.
absl::StatusOr<std::vector<bool>> FlippedDims(const Tensor& x, const Tensor& which) {
  const int rank = x.dims();
  if (which.dtype() == DT_BOOL) {
    if (which.dims() != 1 || which.dim_size(0) != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Reverse: 'dims' must have the same number of values as 'input' has dimensions (", rank,
          "), got shape ", which.shape().DebugString()));
    }
    return std::vector<bool>(which.data<bool>(), which.data<bool>() + rank);
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> axes, internal::ReadVector(which, "ReverseV2: axis"));
  std::vector<bool> flip(rank, false);
  for (int64_t a : axes) {
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, rank, "ReverseV2"));
    if (flip[axis]) {
      return absl::InvalidArgumentError(
          absl::StrCat("ReverseV2: axis ", axis, " is specified more than once"));
    }
    flip[axis] = true;
  }
  return flip;
}

// ReverseV2 and Reverse.
class ReverseOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int rank = x.dims();
    ASSIGN_OR_RETURN(std::vector<bool> flip, FlippedDims(x, ctx->input(1)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const size_t esize = DataTypeSize(x.dtype());
    const int64_t n = x.NumElements();
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t src = 0;
      for (int d = 0; d < rank; ++d) {
        src = src * x.dim_size(d) + (flip[d] ? x.dim_size(d) - 1 - index[d] : index[d]);
      }
      std::memcpy(Bytes(*out) + i * esize, Bytes(x) + src * esize, esize);
      for (int d = rank - 1; d >= 0; --d) {
        if (++index[d] < x.dim_size(d)) break;
        index[d] = 0;
      }
    }
    return absl::OkStatus();
  }
};

class SplitVOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                     internal::ReadVector(ctx->input(1), "SplitV: size_splits"));
    ASSIGN_OR_RETURN(int64_t a, internal::ReadScalar(ctx->input(2), "SplitV: split_dim"));
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, x.dims(), "SplitV"));
    if (static_cast<int>(sizes.size()) != ctx->num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat("SplitV: ", sizes.size(),
                                                     " size_splits for num_split ",
                                                     ctx->num_outputs()));
    }
    const int64_t dim = x.dim_size(axis);
    int inferred = -1;
    int64_t known = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == -1) {
        if (inferred >= 0) {
          return absl::InvalidArgumentError("SplitV: only one size_splits entry may be -1");
        }
        inferred = static_cast<int>(i);
      } else if (sizes[i] < 0) {
        return absl::InvalidArgumentError(absl::StrCat("SplitV: size ", sizes[i], " < 0"));
      } else {
        known += sizes[i];
      }
    }
    if (inferred >= 0 && known <= dim) sizes[inferred] = dim - known;
    if ((inferred >= 0 && known > dim) || (inferred < 0 && known != dim)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SplitV: the sizes of the splits (", known, ") must add up to dimension ", axis,
          " of the value, ", dim, " (shape ", x.shape().DebugString(), ")"));
    }
    const size_t esize = DataTypeSize(x.dtype());
    const int64_t outer = Product(x.shape(), 0, axis);
    const int64_t inner = Product(x.shape(), axis + 1, x.dims());
    int64_t at = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      TensorShape shape = x.shape();
      shape.set_dim(axis, sizes[k]);
      ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(static_cast<int>(k), shape));
      const int64_t chunk = sizes[k] * inner;
      for (int64_t o = 0; o < outer && chunk > 0; ++o) {
        std::memcpy(Bytes(*out) + o * chunk * esize, Bytes(x) + (o * dim + at) * inner * esize,
                    chunk * esize);
      }
      at += sizes[k];
    }
    return absl::OkStatus();
  }
};

class OneHotOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(axis_, ctx.GetAttr<int64_t>("axis"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& on = ctx->input(2);
    const Tensor& off = ctx->input(3);
    ASSIGN_OR_RETURN(const internal::OneHotPlan plan,
                     internal::PlanOneHot(axis_, indices, ctx->input(1), on, off));
    const int64_t depth = plan.depth, prefix = plan.prefix, suffix = plan.suffix;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, internal::ReadInts(indices, "OneHot: indices"));
    const size_t esize = DataTypeSize(out->dtype());
    int64_t at = 0;
    for (int64_t p = 0; p < prefix; ++p) {
      for (int64_t d = 0; d < depth; ++d) {
        for (int64_t s = 0; s < suffix; ++s, ++at) {
          const Tensor& v = idx[p * suffix + s] == d ? on : off;
          std::memcpy(Bytes(*out) + at * esize, Bytes(v), esize);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = -1;
};

template <typename T>
class WhereOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const T* v = x.data<T>();
    const int rank = x.dims();
    std::vector<int64_t> hits;
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      if (v[i] != T(0)) hits.push_back(i);
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(
                                       0, TensorShape({static_cast<int64_t>(hits.size()), rank})));
    int64_t* o = out->data<int64_t>();
    for (size_t h = 0; h < hits.size(); ++h) {
      int64_t rest = hits[h];
      for (int d = rank - 1; d >= 0; --d) {
        o[h * rank + d] = rest % x.dim_size(d);
        rest /= x.dim_size(d);
      }
    }
    return absl::OkStatus();
  }
};

// SpaceToDepth and DepthToSpace on NHWC: depth index (di * bs + dj) * c + k
// of a block holds pixel (i * bs + di, j * bs + dj), channel k.
class BlockOp : public OpKernel {
 public:
  explicit BlockOp(bool to_depth) : to_depth_(to_depth) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(bs_, ctx.GetAttr<int64_t>("block_size"));
    ASSIGN_OR_RETURN(std::string format, ctx.GetAttr<std::string>("data_format"));
    if (format != "NHWC") {
      return absl::UnimplementedError(absl::StrCat(ctx.node().op(), ": data_format ", format,
                                                   " (only NHWC runs on the CPU)"));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const char* op = to_depth_ ? "SpaceToDepth" : "DepthToSpace";
    if (x.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": input must be 4-D, got ",
                                                     x.shape().DebugString()));
    }
    // The space side [b, h, w, c] and the depth side [b, h/bs, w/bs, c*bs*bs].
    int64_t b = x.dim_size(0), h, w, c;
    if (to_depth_) {
      h = x.dim_size(1), w = x.dim_size(2), c = x.dim_size(3);
      if (h % bs_ != 0 || w % bs_ != 0) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": image height ", h, " and width ", w,
                                                       " must be divisible by block_size ", bs_));
      }
    } else {
      if (x.dim_size(3) % (bs_ * bs_) != 0) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": input depth ", x.dim_size(3),
                                                       " must be divisible by block_size^2 = ",
                                                       bs_ * bs_));
      }
      h = x.dim_size(1) * bs_, w = x.dim_size(2) * bs_, c = x.dim_size(3) / (bs_ * bs_);
    }
    const TensorShape out_shape = to_depth_ ? TensorShape({b, h / bs_, w / bs_, c * bs_ * bs_})
                                            : TensorShape({b, h, w, c});
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const size_t row = static_cast<size_t>(c) * DataTypeSize(x.dtype());  // c channels move together
    const char* in = Bytes(x);
    char* o = Bytes(*out);
    for (int64_t n = 0; n < b; ++n) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t xx = 0; xx < w; ++xx) {
          const int64_t space = ((n * h + y) * w + xx);
          const int64_t depth = ((n * (h / bs_) + y / bs_) * (w / bs_) + xx / bs_) * bs_ * bs_ +
                                (y % bs_) * bs_ + (xx % bs_);
          const int64_t src = to_depth_ ? space : depth, dst = to_depth_ ? depth : space;
          std::memcpy(o + dst * row, in + src * row, row);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  const bool to_depth_;
  int64_t bs_ = 2;
};

class MatrixDiagOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& d = ctx->input(0);
    if (d.dims() < 1) {
      return absl::InvalidArgumentError("MatrixDiag: diagonal must be at least 1-D, got a scalar");
    }
    const int64_t n = d.dim_size(d.dims() - 1);
    TensorShape shape = d.shape();
    shape.AddDim(n);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const size_t esize = DataTypeSize(d.dtype());
    if (out->NumElements() > 0) std::memset(Bytes(*out), 0, out->NumElements() * esize);
    const int64_t batches = n == 0 ? 0 : d.NumElements() / n;
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(Bytes(*out) + ((b * n + i) * n + i) * esize, Bytes(d) + (b * n + i) * esize, esize);
      }
    }
    return absl::OkStatus();
  }
};

// Diag: a tensor of shape D + D holding `diagonal` (shape D) where the two
// halves of the index agree; DiagPart: the inverse.
class DiagOp : public OpKernel {
 public:
  explicit DiagOp(bool part) : part_(part) {}
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    std::vector<int64_t> half;
    if (part_) {
      const int rank = x.dims();
      if (rank == 0 || rank % 2 != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "DiagPart: the rank of the tensor should be even and positive, got shape ",
            x.shape().DebugString()));
      }
      for (int i = 0; i < rank / 2; ++i) {
        if (x.dim_size(i) != x.dim_size(i + rank / 2)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "DiagPart: invalid shape ", x.shape().DebugString(), ": dimensions ", i, " and ",
              i + rank / 2, " do not match"));
        }
        half.push_back(x.dim_size(i));
      }
    } else {
      if (x.dims() < 1) return absl::InvalidArgumentError("Diag: input must be at least 1-D");
      half = x.shape().dims();
    }
    std::vector<int64_t> full = half;
    full.insert(full.end(), half.begin(), half.end());
    int64_t n = 1;
    for (int64_t d : half) n *= d;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(part_ ? half : full)));
    const size_t esize = DataTypeSize(x.dtype());
    if (!part_) std::memset(Bytes(*out), 0, out->TotalBytes());
    // Element i of the diagonal sits at flat position i * (n + 1) of the full tensor.
    for (int64_t i = 0; i < n; ++i) {
      if (part_) {
        std::memcpy(Bytes(*out) + i * esize, Bytes(x) + i * (n + 1) * esize, esize);
      } else {
        std::memcpy(Bytes(*out) + i * (n + 1) * esize, Bytes(x) + i * esize, esize);
      }
    }
    return absl::OkStatus();
  }

 private:
  const bool part_;
};

class MatrixDiagPartOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MatrixDiagPart: input must be at least 2-D, got ", x.shape().DebugString()));
    }
    const int64_t m = x.dim_size(x.dims() - 2), n = x.dim_size(x.dims() - 1);
    const int64_t k = std::min(m, n);
    TensorShape shape = x.shape();
    shape.RemoveDim(shape.rank() - 1);
    shape.set_dim(shape.rank() - 1, k);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const size_t esize = DataTypeSize(x.dtype());
    const int64_t batches = m * n == 0 ? 0 : x.NumElements() / (m * n);
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < k; ++i) {
        std::memcpy(Bytes(*out) + (b * k + i) * esize, Bytes(x) + ((b * m + i) * n + i) * esize, esize);
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterArrayLayoutKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& all = internal::AllTypes();
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  kernels->Register(cpu("Pad").TypeConstraint("T", all), Make<PadOp>());
  kernels->Register(cpu("PadV2").TypeConstraint("T", all), Make<PadOp>());
  kernels->Register(cpu("ReverseV2").TypeConstraint("T", all), Make<ReverseOp>());
  kernels->Register(cpu("Reverse").TypeConstraint("T", all), Make<ReverseOp>());
  kernels->Register(cpu("Diag").TypeConstraint("T", all), [] { return std::make_unique<DiagOp>(false); });
  kernels->Register(cpu("DiagPart").TypeConstraint("T", all),
                    [] { return std::make_unique<DiagOp>(true); });
  kernels->Register(cpu("SplitV").TypeConstraint("T", all), Make<SplitVOp>());
  kernels->Register(cpu("ShapeN"), Make<internal::ShapeNOp>());
  kernels->Register(cpu("SpaceToDepth").TypeConstraint("T", all),
                    [] { return std::make_unique<BlockOp>(/*to_depth=*/true); });
  kernels->Register(cpu("DepthToSpace").TypeConstraint("T", all),
                    [] { return std::make_unique<BlockOp>(/*to_depth=*/false); });
  kernels->Register(cpu("MatrixDiag").TypeConstraint("T", all), Make<MatrixDiagOp>());
  kernels->Register(cpu("MatrixDiagPart").TypeConstraint("T", all), Make<MatrixDiagPartOp>());
  kernels->Register(cpu("OneHot").TypeConstraint("T", all).TypeConstraint("TI", {DT_INT32, DT_INT64}),
                    Make<OneHotOp>());
  kernels->Register<WhereOp<bool>>(cpu("Where").TypeConstraint("T", DT_BOOL));
  kernels->Register<WhereOp<float>>(cpu("Where").TypeConstraint("T", DT_FLOAT));
  kernels->Register<WhereOp<double>>(cpu("Where").TypeConstraint("T", DT_DOUBLE));
  kernels->Register<WhereOp<int32_t>>(cpu("Where").TypeConstraint("T", DT_INT32));
  kernels->Register<WhereOp<int64_t>>(cpu("Where").TypeConstraint("T", DT_INT64));
}

}  // namespace sluice
