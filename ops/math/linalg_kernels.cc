// CPU kernels of the linear algebra ops (linalg_ops.h), float and double,
// through LAPACK (ops/internal/lapack.h). Each matrix is copied into a
// column-major scratch (its transpose in memory), so LAPACK works on the
// matrix itself, as TensorFlow's Eigen kernels do, and the result is copied
// out transposed. Batches of matrices are split over the device's threads.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "ops/internal/lapack.h"
#include "ops/math/internal/batch_matmul_plan.h"
#include "ops/math/linalg_ops.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace {

// Below this many multiply-adds (batches * n^3) the matrices run inline.
constexpr int64_t kParallelMinWork = int64_t{1} << 18;

// Runs fn(b) for every matrix b of the batch, over the device's threads when
// there is enough work; the first error wins.
absl::Status ForEachMatrix(OpKernelContext* ctx, int64_t batches, int64_t n,
                           const std::function<absl::Status(int64_t)>& fn) {
  ThreadPool* pool = ctx->device() != nullptr ? ctx->thread_pool() : nullptr;
  if (pool == nullptr || pool->num_threads() < 2 || batches < 2 ||
      batches * n * n * n < kParallelMinWork) {
    for (int64_t b = 0; b < batches; ++b) RETURN_IF_ERROR(fn(b));
    return absl::OkStatus();
  }
  absl::Mutex mu;
  absl::Status first;
  pool->ParallelFor(batches, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      absl::Status s = fn(b);
      if (s.ok()) continue;
      absl::MutexLock lock(&mu);
      if (first.ok()) first = std::move(s);
      return;
    }
  });
  return first;
}

// The row-major rows x cols matrix `src` as column-major `dst` (and back:
// a column-major matrix is read as row-major cols x rows).
template <typename T>
void Transpose(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[j * rows + i] = src[i * cols + j];
  }
}

// An input of square matrices: rank >= 2, the last two dimensions equal.
absl::Status CheckSquare(OpKernelContext* ctx, int input) {
  const TensorShape& s = ctx->input(input).shape();
  const std::string& op = ctx->node().op();
  if (s.rank() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": Input tensor ", input, " must have rank >= 2, got ", s.rank()));
  }
  if (s.dim(s.rank() - 1) != s.dim(s.rank() - 2)) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": Input matrix must be square, got shape ", s.DebugString()));
  }
  return absl::OkStatus();
}

int64_t Side(const Tensor& t) { return t.dim_size(t.dims() - 1); }

// LAPACK (OpenBLAS's LP64 build) indexes a matrix with 32-bit ints.
absl::Status CheckLapackSize(OpKernelContext* ctx, int64_t rows, int64_t cols) {
  if (rows <= INT_MAX && cols <= INT_MAX && rows * cols <= INT_MAX) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": a ", rows, " x ", cols,
                                                 " matrix is beyond LAPACK's 32-bit indices"));
}

// A negative `info`: LAPACK refused an argument, a bug here.
absl::Status LapackRefused(OpKernelContext* ctx, const char* routine, int info) {
  return absl::InternalError(
      absl::StrCat(ctx->node().op(), ": LAPACK's ", routine, " refused argument ", -info));
}

// An LU factorization with partial pivoting of one matrix (column-major).
template <typename T>
struct Lu {
  std::vector<T> a;
  std::vector<int> pivots;

  Lu(const T* row_major, int64_t n) : a(n * n), pivots(n) {
    Transpose(row_major, n, n, a.data());
    info = internal::LuFactor(static_cast<int>(n), a.data(), pivots.data());
  }
  int info = 0;  // < 0: LAPACK refused an argument
  // TensorFlow's test: no pivot is exactly zero (nor NaN).
  bool Invertible() const {
    const int64_t n = pivots.size();
    for (int64_t i = 0; i < n; ++i) {
      if (!(std::fabs(a[i * n + i]) > T(0))) return false;
    }
    return true;
  }
  // b (column-major, n x k) := A^-1 b, or A^-T b.
  void Solve(bool transpose, int64_t k, T* b) const {
    internal::LuSolve(transpose, static_cast<int>(pivots.size()), static_cast<int>(k), a.data(),
                      pivots.data(), b);
  }
  // TensorFlow's SLogDet: log|det| as the sum of the pivots' logs, the sign
  // from the permutation and the pivots' signs; a log that is not finite
  // gives sign 0 and a log of +-inf.
  void SignAndLogAbs(T* sign, T* log_abs) const {
    const int64_t n = pivots.size();
    *sign = 1;
    *log_abs = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (pivots[i] != i + 1) *sign = -*sign;
      const T d = a[i * n + i];
      const T abs = std::fabs(d);
      *log_abs += std::log(abs);
      *sign *= d / abs;
    }
    if (!std::isfinite(*log_abs)) {
      *sign = 0;
      *log_abs = *log_abs > 0 ? std::numeric_limits<T>::infinity()
                              : -std::numeric_limits<T>::infinity();
    }
  }
};

template <typename T>
class MatrixInverseOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(adjoint_, ctx.GetAttr<bool>("adjoint"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(CheckSquare(ctx, 0));
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const int64_t n = Side(x);
    if (n == 0) return absl::OkStatus();
    const T* in = x.data<T>();
    T* o = out->data<T>();
    RETURN_IF_ERROR(CheckLapackSize(ctx, n, n));
    return ForEachMatrix(ctx, x.NumElements() / (n * n), n, [&](int64_t b) {
      const Lu<T> lu(in + b * n * n, n);
      if (lu.info < 0) return LapackRefused(ctx, "getrf", lu.info);
      if (!lu.Invertible()) {
        return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": Input is not invertible."));
      }
      std::vector<T> inv(n * n, T(0));
      for (int64_t i = 0; i < n; ++i) inv[i * n + i] = 1;
      lu.Solve(adjoint_, n, inv.data());
      Transpose(inv.data(), n, n, o + b * n * n);
      return absl::OkStatus();
    });
  }

 private:
  bool adjoint_ = false;
};

// MatrixDeterminant (sign * exp(log|det|), as TensorFlow) and
// LogMatrixDeterminant (sign, log|det|).
template <typename T, bool kLog>
class DeterminantOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(CheckSquare(ctx, 0));
    const Tensor& x = ctx->input(0);
    const TensorShape& s = x.shape();
    const TensorShape batch_shape(absl::MakeConstSpan(s.dims()).subspan(0, s.rank() - 2));
    ASSIGN_OR_RETURN(Tensor * first, ctx->allocate_output(0, batch_shape));
    Tensor* second = nullptr;
    if (kLog) {
      ASSIGN_OR_RETURN(second, ctx->allocate_output(1, batch_shape));
    }
    const int64_t n = Side(x);
    RETURN_IF_ERROR(CheckLapackSize(ctx, n, n));
    const T* in = x.data<T>();
    return ForEachMatrix(ctx, batch_shape.num_elements(), n, [&](int64_t b) {
      T sign = 1, log_abs = 0;
      if (n > 0) {
        const Lu<T> lu(in + b * n * n, n);
        if (lu.info < 0) return LapackRefused(ctx, "getrf", lu.info);
        lu.SignAndLogAbs(&sign, &log_abs);
      }
      if (kLog) {
        first->data<T>()[b] = sign;
        second->data<T>()[b] = log_abs;
      } else {
        first->data<T>()[b] = sign * std::exp(log_abs);
      }
      return absl::OkStatus();
    });
  }
};

template <typename T>
class MatrixSolveOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(adjoint_, ctx.GetAttr<bool>("adjoint"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(CheckSquare(ctx, 0));
    const Tensor& a = ctx->input(0);
    const Tensor& rhs = ctx->input(1);
    const std::string& op = ctx->node().op();
    if (rhs.dims() != a.dims()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": All input tensors must have the same outer dimensions, got shapes ",
          a.shape().DebugString(), " and ", rhs.shape().DebugString()));
    }
    for (int i = 0; i + 2 < a.dims(); ++i) {
      if (a.dim_size(i) != rhs.dim_size(i)) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, ": All input tensors must have the same outer dimensions, got shapes ",
            a.shape().DebugString(), " and ", rhs.shape().DebugString()));
      }
    }
    const int64_t n = Side(a);
    if (rhs.dim_size(rhs.dims() - 2) != n) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": Input matrix and rhs are incompatible: ",
                                                     a.shape().DebugString(), " and ",
                                                     rhs.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, rhs.shape()));
    const int64_t k = Side(rhs);
    if (n == 0 || k == 0) return absl::OkStatus();
    RETURN_IF_ERROR(CheckLapackSize(ctx, n, std::max(n, k)));
    const T* am = a.data<T>();
    const T* bm = rhs.data<T>();
    T* o = out->data<T>();
    return ForEachMatrix(ctx, a.NumElements() / (n * n), n, [&](int64_t b) {
      const Lu<T> lu(am + b * n * n, n);
      if (lu.info < 0) return LapackRefused(ctx, "getrf", lu.info);
      if (!lu.Invertible()) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": Input matrix is not invertible."));
      }
      std::vector<T> x(n * k);
      Transpose(bm + b * n * k, n, k, x.data());
      lu.Solve(adjoint_, k, x.data());
      Transpose(x.data(), k, n, o + b * n * k);
      return absl::OkStatus();
    });
  }

 private:
  bool adjoint_ = false;
};

template <typename T>
class MatrixTriangularSolveOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(lower_, ctx.GetAttr<bool>("lower"));
    ASSIGN_OR_RETURN(adjoint_, ctx.GetAttr<bool>("adjoint"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(CheckSquare(ctx, 0));
    const Tensor& a = ctx->input(0);
    const Tensor& rhs = ctx->input(1);
    // out[i] = op(a[x_index[i]])^-1 rhs[y_index[i]], batches broadcast as a
    // product's.
    ASSIGN_OR_RETURN(internal::BatchMatMulPlan p,
                     internal::PlanBatchMatMul(ctx->node().op(), a.shape(), rhs.shape(),
                                               adjoint_, false, /*broadcast=*/true));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.out_shape));
    const int64_t n = p.m, k = p.n;
    if (n == 0 || k == 0) return absl::OkStatus();
    RETURN_IF_ERROR(CheckLapackSize(ctx, n, std::max(n, k)));
    const T* am = a.data<T>();
    const T* bm = rhs.data<T>();
    T* o = out->data<T>();
    return ForEachMatrix(ctx, p.batches, n, [&](int64_t b) {
      std::vector<T> lhs(n * n), x(n * k);
      Transpose(am + p.x_index[b] * n * n, n, n, lhs.data());
      Transpose(bm + p.y_index[b] * n * k, n, k, x.data());
      internal::TriangularSolve(lower_, adjoint_, static_cast<int>(n), static_cast<int>(k),
                                lhs.data(), x.data());
      Transpose(x.data(), k, n, o + b * n * k);
      return absl::OkStatus();
    });
  }

 private:
  bool lower_ = true;
  bool adjoint_ = false;
};

template <typename T>
class CholeskyOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(CheckSquare(ctx, 0));
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const int64_t n = Side(x);
    if (n == 0) return absl::OkStatus();
    RETURN_IF_ERROR(CheckLapackSize(ctx, n, n));
    const T* in = x.data<T>();
    T* o = out->data<T>();
    return ForEachMatrix(ctx, x.NumElements() / (n * n), n, [&](int64_t b) {
      std::vector<T> l(n * n);
      Transpose(in + b * n * n, n, n, l.data());
      const int info = internal::CholeskyLower(static_cast<int>(n), l.data());
      if (info < 0) return LapackRefused(ctx, "potrf", info);
      const bool ok = info == 0;
      T* m = o + b * n * n;
      // As TensorFlow, a matrix that is not positive definite gives NaN in
      // the lower triangle (its upper triangle was left unwritten there).
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          m[i * n + j] = j > i ? T(0) : ok ? l[j * n + i] : std::numeric_limits<T>::quiet_NaN();
        }
      }
      return absl::OkStatus();
    });
  }
};

// The matrices of a [..., M, N] input (rank >= 2): how many, of what size.
struct MatrixStack {
  int64_t batches = 1, m = 0, n = 0;
  explicit MatrixStack(const Tensor& t)
      : m(t.dim_size(t.dims() - 2)), n(t.dim_size(t.dims() - 1)) {
    for (int i = 0; i + 2 < t.dims(); ++i) batches *= t.dim_size(i);
  }
};

absl::Status CheckRank2(OpKernelContext* ctx) {
  const TensorShape& s = ctx->input(0).shape();
  if (s.rank() >= 2) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      ctx->node().op(), ": Input tensor 0 must have rank >= 2, got ", s.rank()));
}

// The batch dimensions of input 0 followed by `inner`.
TensorShape BatchAnd(const Tensor& t, std::initializer_list<int64_t> inner) {
  std::vector<int64_t> dims(t.shape().dims().begin(), t.shape().dims().end() - 2);
  dims.insert(dims.end(), inner);
  return TensorShape(dims);
}

// An identity (rows x cols, row-major) into out.
template <typename T>
void Identity(int64_t rows, int64_t cols, T* out) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = i == j ? T(1) : T(0);
  }
}

template <typename T>
class QrOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(full_, ctx.GetAttr<bool>("full_matrices"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(CheckRank2(ctx));
    const Tensor& x = ctx->input(0);
    const MatrixStack st(x);
    const int64_t m = st.m, n = st.n, k = std::min(m, n);
    const int64_t q_cols = full_ ? m : k, r_rows = full_ ? m : k;
    ASSIGN_OR_RETURN(Tensor * q, ctx->allocate_output(0, BatchAnd(x, {m, q_cols})));
    ASSIGN_OR_RETURN(Tensor * r, ctx->allocate_output(1, BatchAnd(x, {r_rows, n})));
    RETURN_IF_ERROR(CheckLapackSize(ctx, m, std::max(n, q_cols)));
    const T* in = x.data<T>();
    return ForEachMatrix(ctx, st.batches, std::max(m, n), [&](int64_t b) {
      T* qo = q->data<T>() + b * m * q_cols;
      T* ro = r->data<T>() + b * r_rows * n;
      std::vector<T> a(m * n), qc(m * q_cols);
      Transpose(in + b * m * n, m, n, a.data());
      const int info = internal::Qr(static_cast<int>(m), static_cast<int>(n), a.data(),
                                    static_cast<int>(q_cols), qc.data());
      if (info != 0) return LapackRefused(ctx, "geqrf/orgqr", info);
      if (k == 0) {
        Identity(m, q_cols, qo);  // the full Q of an empty matrix
      } else {
        Transpose(qc.data(), q_cols, m, qo);
      }
      for (int64_t i = 0; i < r_rows; ++i) {
        for (int64_t j = 0; j < n; ++j) ro[i * n + j] = j >= i ? a[j * m + i] : T(0);
      }
      return absl::OkStatus();
    });
  }

 private:
  bool full_ = false;
};

template <typename T>
class SelfAdjointEigOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(vectors_, ctx.GetAttr<bool>("compute_v"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(CheckSquare(ctx, 0));
    const Tensor& x = ctx->input(0);
    const MatrixStack st(x);
    const int64_t n = st.n;
    ASSIGN_OR_RETURN(Tensor * e, ctx->allocate_output(0, BatchAnd(x, {n})));
    ASSIGN_OR_RETURN(Tensor * v, ctx->allocate_output(
                                     1, vectors_ ? x.shape() : TensorShape({0})));
    RETURN_IF_ERROR(CheckLapackSize(ctx, n, n));
    const T* in = x.data<T>();
    return ForEachMatrix(ctx, st.batches, n, [&](int64_t b) {
      std::vector<T> a(n * n);
      Transpose(in + b * n * n, n, n, a.data());
      T* w = e->data<T>() + b * n;
      const int info = internal::SymmetricEigen(vectors_, static_cast<int>(n), a.data(), w);
      if (info < 0) return LapackRefused(ctx, "syevd", info);
      bool finite = info == 0;
      for (int64_t i = 0; i < n && finite; ++i) finite = std::isfinite(w[i]);
      if (!finite) {
        return absl::InvalidArgumentError(absl::StrCat(
            ctx->node().op(),
            ": Self-adjoint eigen decomposition was not successful. The input might not be "
            "valid."));
      }
      if (vectors_) Transpose(a.data(), n, n, v->data<T>() + b * n * n);
      return absl::OkStatus();
    });
  }

 private:
  bool vectors_ = true;
};

template <typename T>
class SvdOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(vectors_, ctx.GetAttr<bool>("compute_uv"));
    ASSIGN_OR_RETURN(full_, ctx.GetAttr<bool>("full_matrices"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(CheckRank2(ctx));
    const Tensor& x = ctx->input(0);
    const MatrixStack st(x);
    const int64_t m = st.m, n = st.n, k = std::min(m, n);
    const int64_t u_cols = full_ ? m : k, v_cols = full_ ? n : k;
    ASSIGN_OR_RETURN(Tensor * s, ctx->allocate_output(0, BatchAnd(x, {k})));
    ASSIGN_OR_RETURN(Tensor * u, ctx->allocate_output(
                                     1, vectors_ ? BatchAnd(x, {m, u_cols}) : TensorShape({0})));
    ASSIGN_OR_RETURN(Tensor * v, ctx->allocate_output(
                                     2, vectors_ ? BatchAnd(x, {n, v_cols}) : TensorShape({0})));
    RETURN_IF_ERROR(CheckLapackSize(ctx, std::max(m, n), std::max(m, n)));
    const T* in = x.data<T>();
    return ForEachMatrix(ctx, st.batches, std::max(m, n), [&](int64_t b) {
      T* so = s->data<T>() + b * k;
      T* uo = vectors_ ? u->data<T>() + b * m * u_cols : nullptr;
      T* vo = vectors_ ? v->data<T>() + b * n * v_cols : nullptr;
      if (k == 0) {  // no singular values; the full U and V are identities
        if (vectors_) {
          Identity(m, u_cols, uo);
          Identity(n, v_cols, vo);
        }
        return absl::OkStatus();
      }
      std::vector<T> a(m * n), uc(vectors_ ? m * u_cols : 0), vt(vectors_ ? v_cols * n : 0);
      Transpose(in + b * m * n, m, n, a.data());
      const int info = internal::Svd(vectors_, full_, static_cast<int>(m), static_cast<int>(n),
                                     a.data(), so, uc.data(), vt.data());
      if (info < 0) return LapackRefused(ctx, "gesdd", info);
      if (info > 0) {
        // As TensorFlow (Eigen's BDCSVD failing): NaN everywhere.
        const T nan = std::numeric_limits<T>::quiet_NaN();
        std::fill(so, so + k, nan);
        if (vectors_) {
          std::fill(uo, uo + m * u_cols, nan);
          std::fill(vo, vo + n * v_cols, nan);
        }
        return absl::OkStatus();
      }
      if (vectors_) {
        Transpose(uc.data(), u_cols, m, uo);
        // V^T column-major (v_cols x n) is V row-major (n x v_cols).
        std::copy(vt.begin(), vt.end(), vo);
      }
      return absl::OkStatus();
    });
  }

 private:
  bool vectors_ = true;
  bool full_ = false;
};

template <typename T>
void RegisterFor(KernelRegistry* k) {
  auto cpu = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DataTypeToEnum<T>::value);
  };
  k->Register<MatrixInverseOp<T>>(cpu("MatrixInverse"));
  k->Register<DeterminantOp<T, false>>(cpu("MatrixDeterminant"));
  k->Register<DeterminantOp<T, true>>(cpu("LogMatrixDeterminant"));
  k->Register<MatrixSolveOp<T>>(cpu("MatrixSolve"));
  k->Register<MatrixTriangularSolveOp<T>>(cpu("MatrixTriangularSolve"));
  k->Register<CholeskyOp<T>>(cpu("Cholesky"));
  k->Register<QrOp<T>>(cpu("Qr"));
  k->Register<SelfAdjointEigOp<T>>(cpu("SelfAdjointEigV2"));
  k->Register<SvdOp<T>>(cpu("Svd"));
}

}  // namespace

void RegisterLinalgKernels(KernelRegistry* kernels) {
  RegisterFor<float>(kernels);
  RegisterFor<double>(kernels);
}

}  // namespace sluice
