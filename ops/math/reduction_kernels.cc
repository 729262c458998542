// The CPU's part of the math reductions (Sum, Mean, Prod, Max, Min, All, Any),
// ArgMax and ArgMin (the shells: ops/math/reduction_kernels.h).
// Reductions merge adjacent reduced and kept dimensions and special-case
// reduce-all, reduce-rows and reduce-columns.
// Compiled like math_kernels.cc (see there): -O3 without FP traps, set before
// any include.
#pragma GCC optimize("O3", "no-trapping-math")

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "ops/math/internal/broadcast.h"
#include "ops/math/internal/math_kernel_checks.h"
#include "ops/math/internal/math_kernel_util.h"
#include "ops/math/math_ops.h"
#include "ops/math/reduction_kernels.h"

namespace sluice {
namespace {

using internal::Cpu;
using internal::MaybeParallelFor;

// ---------------------------------------------------------------------------
// Reductions.

template <typename T> struct SumR {
  static T Init() { return T(0); }
  static T Combine(T a, T b) { return a + b; }
};
template <typename T> struct ProdR {
  static T Init() { return T(1); }
  static T Combine(T a, T b) { return a * b; }
};
template <typename T> struct MaxR {
  static T Init() {
    if constexpr (std::numeric_limits<T>::has_infinity) {
      return -std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::lowest();
    }
  }
  // NaN wins (TensorFlow's reduce_max): a NaN a stays, a NaN b is taken.
  static T Combine(T a, T b) { return a < b || b != b ? b : a; }
};
template <typename T> struct MinR {
  static T Init() {
    if constexpr (std::numeric_limits<T>::has_infinity) {
      return std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::max();
    }
  }
  static T Combine(T a, T b) { return b < a || b != b ? b : a; }
};

struct AllR {
  static bool Init() { return true; }
  static bool Combine(bool a, bool b) { return a && b; }
};
struct AnyR {
  static bool Init() { return false; }
  static bool Combine(bool a, bool b) { return a || b; }
};

// Reduces n contiguous values with independent lanes so the loop vectorizes.
template <typename T, typename R>
T ReduceContiguous(const T* x, int64_t n) {
  constexpr int kLanes = 128 / sizeof(T);  // four AVX2 registers of partial results
  int64_t i = 0;
  T result = R::Init();
  if (n >= kLanes) {
    T acc[kLanes];
    for (int l = 0; l < kLanes; ++l) acc[l] = x[l];
    for (i = kLanes; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) acc[l] = R::Combine(acc[l], x[i + l]);
    }
    for (int l = 0; l < kLanes; ++l) result = R::Combine(result, acc[l]);
  }
  for (; i < n; ++i) result = R::Combine(result, x[i]);
  return result;
}

using ReducePlan = internal::ReductionGroups;

// The CPU's part of ReduceOp (ops/math/reduction_kernels.h): R combines, kMean
// divides by the count afterwards.
template <typename T, typename R, bool kMean>
struct CpuReduceImpl {
  static constexpr bool kExpensive = true;

  static absl::Status Reduce(OpKernelContext* ctx, const Tensor& x, const ReducePlan& plan,
                             Tensor* out) {
    T* o = out->data<T>();
    const int64_t out_n = out->NumElements();
    if (x.NumElements() == 0) {
      std::fill(o, o + out_n, R::Init());
    } else if (plan.groups.size() == 1) {
      *o = ReduceAll(ctx, x.data<T>(), x.NumElements());
    } else if (plan.groups.size() == 2 && !plan.first_reduced) {
      ReduceRows(ctx, x.data<T>(), plan.groups[0], plan.groups[1], o);
    } else if (plan.groups.size() == 2) {
      ReduceColumns(ctx, x.data<T>(), plan.groups[0], plan.groups[1], o);
    } else {
      ReduceGeneral(plan, x.data<T>(), o, out_n);
    }
    if constexpr (kMean) {
      if (std::is_floating_point_v<T> || plan.reduced_count > 0) {
        const T count = static_cast<T>(plan.reduced_count);
        for (int64_t i = 0; i < out_n; ++i) o[i] /= count;
      }
    }
    return absl::OkStatus();
  }

 private:
  static T ReduceAll(OpKernelContext* ctx, const T* x, int64_t n) {
    constexpr int64_t kBlock = int64_t{1} << 15;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    std::unique_ptr<T[]> partial(new T[blocks]);  // not std::vector: T may be bool
    MaybeParallelFor(ctx, blocks, kBlock, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        partial[k] = ReduceContiguous<T, R>(x + k * kBlock, std::min(kBlock, n - k * kBlock));
      }
    });
    return ReduceContiguous<T, R>(partial.get(), blocks);
  }

  // x is [rows, width]; o[r] = reduce of row r.
  static void ReduceRows(OpKernelContext* ctx, const T* x, int64_t rows, int64_t width, T* o) {
    MaybeParallelFor(ctx, rows, width, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) o[r] = ReduceContiguous<T, R>(x + r * width, width);
    });
  }

  // x is [rows, width]; o[j] = reduce of column j. Each worker takes a slice
  // of columns and streams through the rows.
  static void ReduceColumns(OpKernelContext* ctx, const T* x, int64_t rows, int64_t width,
                            T* o) {
    const int64_t col_block = 64;
    const int64_t units = (width + col_block - 1) / col_block;
    MaybeParallelFor(ctx, units, rows * col_block, [&](int64_t b, int64_t e) {
      const int64_t j0 = b * col_block;
      const int64_t j1 = std::min(width, e * col_block);
      T* ob = o + j0;
      const int64_t w = j1 - j0;
      std::copy(x + j0, x + j1, ob);
      for (int64_t r = 1; r < rows; ++r) {
        const T* xr = x + r * width + j0;
        for (int64_t j = 0; j < w; ++j) ob[j] = R::Combine(ob[j], xr[j]);
      }
    });
  }

  // Any alternation of kept and reduced groups: walk the input row by row
  // (the last group), accumulating into the output at the row's offset.
  static void ReduceGeneral(const ReducePlan& plan, const T* x, T* o, int64_t out_n) {
    std::fill(o, o + out_n, R::Init());
    internal::BroadcastPlan<1> walk;
    walk.dims = plan.groups;
    walk.strides.resize(plan.groups.size());
    bool reduced = plan.first_reduced;
    for (size_t k = 0; k < plan.groups.size(); ++k, reduced = !reduced) {
      walk.strides[k][0] = reduced ? 0 : 1;
    }
    int64_t running = 1;
    for (int k = static_cast<int>(plan.groups.size()) - 1; k >= 0; --k) {
      if (walk.strides[k][0] != 0) {
        walk.strides[k][0] = running;
        running *= plan.groups[k];
      }
    }
    const int64_t n = walk.inner();
    const bool inner_reduced = walk.inner_strides()[0] == 0;
    internal::ForEachRow(walk, 0, walk.rows(), [&](int64_t row, const std::array<int64_t, 1>& off) {
      const T* xr = x + row * n;
      T* orow = o + off[0];
      if (inner_reduced) {
        *orow = R::Combine(*orow, ReduceContiguous<T, R>(xr, n));
      } else {
        for (int64_t i = 0; i < n; ++i) orow[i] = R::Combine(orow[i], xr[i]);
      }
    });
  }
};

// ---------------------------------------------------------------------------
// ArgMax and ArgMin as TensorFlow's (Eigen's) reducers scan: from index 0
// with the type's lowest (ArgMin: highest) value, moving only to a strictly
// larger (smaller) value. So NaNs never win, ties keep the first index, and
// where no value beats the start (all NaN, or only -inf and NaN) the index
// is 0.

// The value the scan starts from.
template <typename T, bool kMin>
T ScanStart() {
  return kMin ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}

// Whether x beats `best`, the best so far.
template <typename T, bool kMin>
bool Beats(T x, T best) {
  return kMin ? x < best : x > best;
}

// The best value, NaNs skipped (for ReduceContiguous's vectorized lanes; a
// NaN in the accumulator gives way to any number).
template <typename T, bool kMin>
struct BestR {
  static T Init() { return ScanStart<T, kMin>(); }
  static T Combine(T a, T b) { return Beats<T, kMin>(b, a) || a != a ? b : a; }
};

// Index of the first best of n >= 1 contiguous values: a vectorized
// reduction, then a search for its value.
template <typename T, bool kMin>
int64_t ArgBestContiguous(const T* x, int64_t n) {
  const T best = ReduceContiguous<T, BestR<T, kMin>>(x, n);
  if (!Beats<T, kMin>(best, ScanStart<T, kMin>())) return 0;  // nothing beats the start
  for (int64_t r = 0; r < n; ++r) {
    if (x[r] == best) return r;
  }
  return 0;
}

// The CPU's part of ArgMaxOp (ops/math/reduction_kernels.h), for ArgMax or
// (kMin) ArgMin.
template <typename T, typename Idx, bool kMin>
struct CpuArgMaxImpl {
  static absl::Status ArgMax(OpKernelContext*, const Tensor& x, const internal::ArgMaxPlan& plan,
                             Tensor* out) {
    const int64_t outer = plan.outer, n = plan.n, inner = plan.inner;
    const T* xd = x.data<T>();
    Idx* o = out->data<Idx>();
    std::vector<T> best(inner);
    for (int64_t a = 0; a < outer; ++a) {
      const T* xa = xd + a * n * inner;
      Idx* oa = o + a * inner;
      if (inner == 1) {
        *oa = static_cast<Idx>(ArgBestContiguous<T, kMin>(xa, n));
        continue;
      }
      std::fill(best.begin(), best.end(), ScanStart<T, kMin>());
      std::fill(oa, oa + inner, Idx{0});
      for (int64_t r = 0; r < n; ++r) {
        const T* xr = xa + r * inner;
        for (int64_t j = 0; j < inner; ++j) {
          if (Beats<T, kMin>(xr[j], best[j])) {
            best[j] = xr[j];
            oa[j] = static_cast<Idx>(r);
          }
        }
      }
    }
    return absl::OkStatus();
  }
};

// ---------------------------------------------------------------------------
// Registration.

template <template <typename> class R, bool kMean, typename... Ts>
void RegisterReduction(KernelRegistry* k, const char* op) {
  (k->Register<ReduceOp<CpuReduceImpl<Ts, R<Ts>, kMean>>>(Cpu<Ts>(op)), ...);
}

template <typename T, typename... Idxs>
void RegisterArgMaxFor(KernelRegistry* k) {
  (k->Register<ArgMaxOp<CpuArgMaxImpl<T, Idxs, false>>>(
       Cpu<T>("ArgMax").TypeConstraint("output_type", DataTypeToEnum<Idxs>::value)),
   ...);
  (k->Register<ArgMaxOp<CpuArgMaxImpl<T, Idxs, true>>>(
       Cpu<T>("ArgMin").TypeConstraint("output_type", DataTypeToEnum<Idxs>::value)),
   ...);
}

}  // namespace

namespace internal {

void RegisterReductionKernels(KernelRegistry* k) {
  RegisterReduction<SumR, false, float, double, int32_t, int64_t>(k, "Sum");
  RegisterReduction<SumR, true, float, double, int32_t, int64_t>(k, "Mean");
  RegisterReduction<ProdR, false, float, double, int32_t, int64_t>(k, "Prod");
  RegisterReduction<MaxR, false, float, double, int32_t, int64_t>(k, "Max");
  RegisterReduction<MinR, false, float, double, int32_t, int64_t>(k, "Min");
  k->Register<ReduceOp<CpuReduceImpl<bool, AllR, false>>>(KernelDef("All", kDeviceTypeCpu));
  k->Register<ReduceOp<CpuReduceImpl<bool, AnyR, false>>>(KernelDef("Any", kDeviceTypeCpu));

  RegisterArgMaxFor<float, int32_t, int64_t>(k);
  RegisterArgMaxFor<double, int32_t, int64_t>(k);
  RegisterArgMaxFor<int32_t, int32_t, int64_t>(k);
  RegisterArgMaxFor<int64_t, int32_t, int64_t>(k);
}

}  // namespace internal
}  // namespace sluice
