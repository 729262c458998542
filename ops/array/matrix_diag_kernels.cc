// CPU kernels of MatrixDiagV2/V3, MatrixDiagPartV2/V3 and MatrixSetDiag
// (V1-V3) (matrix_diag_ops.h): elements moved as bytes, for every
// fixed-size dtype. The geometry of a band follows TensorFlow's
// matrix_diag_op.cc: diagonal d has min(rows + min(d, 0), cols - max(d, 0))
// elements, and a shorter diagonal starts max_len - len later when it is
// aligned right.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/internal/array_kernel_util.h"
#include "ops/array/internal/matrix_diag_align.h"
#include "ops/array/matrix_diag_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

struct Band {
  int64_t rows = 0, cols = 0, lower = 0, upper = 0;
  bool left_super = true, left_sub = true;

  int64_t count() const { return upper - lower + 1; }
  int64_t Len(int64_t d) const {
    return std::min(rows + std::min<int64_t>(d, 0), cols - std::max<int64_t>(d, 0));
  }
  int64_t MaxLen() const {
    return std::min(rows + std::min<int64_t>(upper, 0), cols - std::max<int64_t>(lower, 0));
  }
  int64_t Offset(int64_t d) const {
    const bool left = (d >= 0 && left_super) || (d <= 0 && left_sub);
    return left ? 0 : MaxLen() - Len(d);
  }
  // Calls f(element of the band, element of the matrix) for every element
  // of every diagonal, both row-major indices within one matrix / band.
  template <typename F>
  void ForEach(F&& f) const {
    const int64_t max_len = MaxLen();
    // Only the diagonals inside the matrix: MatrixDiag takes any k, and a
    // band reaching far outside an empty matrix must not cost a loop.
    const int64_t top = std::min(upper, cols - 1), bottom = std::max(lower, 1 - rows);
    for (int64_t d = top; d >= bottom; --d) {
      const int64_t di = upper - d;
      const int64_t len = Len(d), offset = Offset(d);
      for (int64_t i = 0; i < len; ++i) {
        f(di * max_len + offset + i, (i + std::max<int64_t>(-d, 0)) * cols + i + std::max<int64_t>(d, 0));
      }
    }
  }
};

absl::Status ReadK(const Tensor& k, Band* band) {
  if (k.dims() > 1 || k.NumElements() < 1 || k.NumElements() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "diag_index must have only one or two elements, received ", k.NumElements(),
        " elements."));
  }
  const int32_t* v = k.data<int32_t>();
  band->lower = v[0];
  band->upper = k.NumElements() == 2 ? v[1] : v[0];
  if (band->lower > band->upper) {
    return absl::InvalidArgumentError(
        absl::StrCat("lower_diag_index must not be larger than upper_diag_index: ", band->lower,
                     " > ", band->upper));
  }
  return absl::OkStatus();
}

// k within (-rows, cols), or 0 (empty matrices).
absl::Status CheckBounds(const Band& b) {
  for (const auto& [name, d] : {std::pair<const char*, int64_t>{"lower_diag_index", b.lower},
                                {"upper_diag_index", b.upper}}) {
    if (d != 0 && (d <= -b.rows || d >= b.cols)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " is out of bound: ", d,
                                                     ". It must be between ", -b.rows, " and ",
                                                     b.cols));
    }
  }
  return absl::OkStatus();
}

absl::Status ReadAlign(const OpKernelConstruction& ctx, Band* band) {
  const std::string a = internal::AlignOf(ctx.node());
  const size_t sep = a.find('_');
  if (sep == std::string::npos) return absl::InvalidArgumentError("bad align '" + a + "'");
  band->left_super = a.substr(0, sep) == "LEFT";
  band->left_sub = a.substr(sep + 1) == "LEFT";
  return absl::OkStatus();
}

// The band's shape for `batch` dims: [..., count, max_len], or [..., max_len]
// for one diagonal.
TensorShape BandShape(std::vector<int64_t> batch, const Band& b) {
  if (b.count() > 1) batch.push_back(b.count());
  batch.push_back(b.MaxLen());
  return TensorShape(batch);
}

std::vector<int64_t> BatchDims(const TensorShape& s, int inner) {
  std::vector<int64_t> dims(s.dims().begin(), s.dims().end() - inner);
  return dims;
}

// Copies every element of the band between the matrices and the band
// (`to_matrices` says which way), with loads and stores of the element's
// size.
void MoveBand(const Band& b, const Tensor& from, Tensor* to, bool to_matrices) {
  const int64_t matrix = b.rows * b.cols, per = b.count() * b.MaxLen();
  const int64_t batch =
      matrix == 0 ? 0 : (to_matrices ? to->NumElements() : from.NumElements()) / matrix;
  internal::DispatchBySize(DataTypeSize(from.dtype()), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = static_cast<const U*>(from.raw_data());
    U* dst = static_cast<U*>(to->raw_data());
    for (int64_t m = 0; m < batch; ++m) {
      b.ForEach([&](int64_t at_band, int64_t at_matrix) {
        if (to_matrices) {
          dst[m * matrix + at_matrix] = src[m * per + at_band];
        } else {
          dst[m * per + at_band] = src[m * matrix + at_matrix];
        }
      });
    }
  });
}

// `out` filled with the scalar `pad`; InvalidArgument when `pad` is not one
// element.
absl::Status FillWith(const Tensor& pad, Tensor* out) {
  if (pad.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("padding_value must be a scalar, got shape ",
                                                   pad.shape().DebugString()));
  }
  internal::DispatchBySize(DataTypeSize(pad.dtype()), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* dst = static_cast<U*>(out->raw_data());
    std::fill(dst, dst + out->NumElements(), *static_cast<const U*>(pad.raw_data()));
  });
  return absl::OkStatus();
}

class MatrixDiagPartOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return ReadAlign(ctx, &band_); }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("input must be at least 2-dim, received shape: ",
                                                     x.shape().DebugString()));
    }
    Band b = band_;
    RETURN_IF_ERROR(ReadK(ctx->input(1), &b));
    b.rows = x.dim_size(x.dims() - 2);
    b.cols = x.dim_size(x.dims() - 1);
    RETURN_IF_ERROR(CheckBounds(b));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, BandShape(BatchDims(x.shape(), 2), b)));
    RETURN_IF_ERROR(FillWith(ctx->input(2), out));
    MoveBand(b, x, out, /*to_matrices=*/false);
    return absl::OkStatus();
  }

 private:
  Band band_;
};

class MatrixDiagOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return ReadAlign(ctx, &band_); }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& diag = ctx->input(0);
    Band b = band_;
    RETURN_IF_ERROR(ReadK(ctx->input(1), &b));
    const int inner = b.count() > 1 ? 2 : 1;
    if (diag.dims() < inner) {
      return absl::InvalidArgumentError(absl::StrCat("diagonal must be at least ", inner,
                                                     "-dim, received shape: ",
                                                     diag.shape().DebugString()));
    }
    if (inner == 2 && diag.dim_size(diag.dims() - 2) != b.count()) {
      return absl::InvalidArgumentError(
          "The number of diagonals provided in the input does not match the lower_diag_index "
          "and upper_diag_index range.");
    }
    int64_t rows, cols;
    RETURN_IF_ERROR(ReadCount(ctx->input(2), "num_rows", &rows));
    RETURN_IF_ERROR(ReadCount(ctx->input(3), "num_cols", &cols));
    const int64_t max_len = diag.dim_size(diag.dims() - 1);
    const int64_t min_rows = max_len - std::min<int64_t>(b.upper, 0);
    const int64_t min_cols = max_len + std::max<int64_t>(b.lower, 0);
    if (rows == -1 && cols == -1) {
      rows = cols = std::max(min_rows, min_cols);
    } else if (rows == -1) {
      rows = min_rows;
    } else if (cols == -1) {
      cols = min_cols;
    }
    if (rows < min_rows) return absl::InvalidArgumentError("The number of rows is too small.");
    if (cols < min_cols) return absl::InvalidArgumentError("The number of columns is too small.");
    if (rows != min_rows && cols != min_cols) {
      return absl::InvalidArgumentError(
          "The number of rows or columns is not consistent with the specified d_lower, d_upper, "
          "and diagonal.");
    }
    b.rows = rows;
    b.cols = cols;
    std::vector<int64_t> dims = BatchDims(diag.shape(), inner);
    dims.push_back(rows);
    dims.push_back(cols);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(dims)));
    RETURN_IF_ERROR(FillWith(ctx->input(4), out));
    MoveBand(b, diag, out, /*to_matrices=*/true);
    return absl::OkStatus();
  }

 private:
  static absl::Status ReadCount(const Tensor& t, const char* name, int64_t* value) {
    if (t.NumElements() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must be a scalar, got shape ", t.shape().DebugString()));
    }
    *value = t.data<int32_t>()[0];
    if (*value < -1) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be -1 or at least 0, got ", *value));
    }
    return absl::OkStatus();
  }

  Band band_;
};

class MatrixSetDiagOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return ReadAlign(ctx, &band_); }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& diag = ctx->input(1);
    if (x.dims() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("input must be at least 2-dim, received shape: ",
                                                     x.shape().DebugString()));
    }
    Band b = band_;
    if (ctx->num_inputs() > 2) RETURN_IF_ERROR(ReadK(ctx->input(2), &b));  // V1: k = 0
    b.rows = x.dim_size(x.dims() - 2);
    b.cols = x.dim_size(x.dims() - 1);
    RETURN_IF_ERROR(CheckBounds(b));
    if (diag.shape() != BandShape(BatchDims(x.shape(), 2), b)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Either first dimensions of diagonal don't match input.shape[:-2], or "
          "diagonal.shape[:-1] is not equal to the longests diagonal in range "
          "[lower_diag_index:upper_diag_index]. Expected diagonal of shape ",
          BandShape(BatchDims(x.shape(), 2), b).DebugString(), " for input ",
          x.shape().DebugString(), ", got ", diag.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() > 0) {
      std::memcpy(out->raw_data(), x.raw_data(), x.NumElements() * DataTypeSize(x.dtype()));
    }
    MoveBand(b, diag, out, /*to_matrices=*/true);
    return absl::OkStatus();
  }

 private:
  Band band_;
};

}  // namespace

void RegisterMatrixDiagKernels(KernelRegistry* kernels) {
  auto cpu = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", internal::AllTypes());
  };
  for (const char* op : {"MatrixDiagV2", "MatrixDiagV3"}) kernels->Register<MatrixDiagOp>(cpu(op));
  for (const char* op : {"MatrixDiagPartV2", "MatrixDiagPartV3"}) {
    kernels->Register<MatrixDiagPartOp>(cpu(op));
  }
  for (const char* op : {"MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3"}) {
    kernels->Register<MatrixSetDiagOp>(cpu(op));
  }
}

}  // namespace sluice
