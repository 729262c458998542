// NumPy broadcasting for element-wise kernels: the output shape of N operands
// and a loop plan that walks the (contiguous) output row by row with each
// operand's offset, so the innermost loop is a plain strided loop.
//
//   ASSIGN_OR_RETURN(auto plan, internal::MakeBroadcastPlan<2>({&x.shape(), &y.shape()}));
//   // plan.out_shape: the broadcast shape. Adjacent dimensions that broadcast
//   // the same way are merged, so [256,1024] + [1024] is 256 rows of 1024 with
//   // y's row stride 0, and [8,1,5] * [8,3,1] stays three dimensions.
//   internal::ForEachRow(plan, 0, plan.rows(), [&](int64_t row, const auto& off) {
//     // output elements [row*plan.inner(), (row+1)*plan.inner()),
//     // operand j starts at off[j] and steps by plan.inner_strides()[j] (0 or 1).
//   });
//
// Thread-safety: plans are immutable values; ForEachRow over disjoint row
// ranges may run concurrently. Header-only, internal to ops/.
#ifndef SLUICE_OPS_MATH_INTERNAL_BROADCAST_H_
#define SLUICE_OPS_MATH_INTERNAL_BROADCAST_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/tensor_shape.h"

namespace sluice {
namespace internal {

template <int N>
struct BroadcastPlan {
  TensorShape out_shape;
  // Merged output dimensions (at least one); their product is the number of
  // output elements.
  std::vector<int64_t> dims;
  // strides[k][j]: element stride of operand j along merged dimension k (0
  // where operand j is broadcast along it).
  std::vector<std::array<int64_t, N>> strides;

  int64_t inner() const { return dims.back(); }
  int64_t rows() const {
    int64_t r = 1;
    for (size_t k = 0; k + 1 < dims.size(); ++k) r *= dims[k];
    return r;
  }
  const std::array<int64_t, N>& inner_strides() const { return strides.back(); }
};

// The broadcast of `shapes` (fully defined runtime shapes). InvalidArgument
// naming every shape when some dimension does not broadcast.
template <int N>
absl::StatusOr<BroadcastPlan<N>> MakeBroadcastPlan(
    const std::array<const TensorShape*, N>& shapes) {
  int rank = 0;
  for (const TensorShape* s : shapes) rank = std::max(rank, s->rank());
  BroadcastPlan<N> plan;
  std::vector<unsigned> masks;  // per merged dim: bit j set when operand j is broadcast
  for (int i = 0; i < rank; ++i) {
    int64_t sizes[N];
    int64_t out = 1;
    for (int j = 0; j < N; ++j) {
      const int offset = rank - shapes[j]->rank();
      sizes[j] = i < offset ? 1 : shapes[j]->dim(i - offset);
      if (sizes[j] == 1) continue;
      if (out == 1) {
        out = sizes[j];
      } else if (sizes[j] != out) {
        std::vector<std::string> names;
        for (const TensorShape* s : shapes) names.push_back(s->DebugString());
        return absl::InvalidArgumentError(
            absl::StrCat("Incompatible shapes: ", absl::StrJoin(names, " vs. ")));
      }
    }
    plan.out_shape.AddDim(out);
    if (out == 1) continue;
    unsigned mask = 0;
    for (int j = 0; j < N; ++j) mask |= (sizes[j] == 1 ? 1u : 0u) << j;
    if (!masks.empty() && masks.back() == mask) {
      plan.dims.back() *= out;
    } else {
      masks.push_back(mask);
      plan.dims.push_back(out);
    }
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    masks.push_back((1u << N) - 1);
  }
  plan.strides.resize(plan.dims.size());
  for (int j = 0; j < N; ++j) {
    int64_t running = 1;
    for (int k = static_cast<int>(plan.dims.size()) - 1; k >= 0; --k) {
      const bool broadcast = (masks[k] >> j) & 1u;
      plan.strides[k][j] = broadcast ? 0 : running;
      if (!broadcast) running *= plan.dims[k];
    }
  }
  return plan;
}

// Calls fn(row, offsets) for each row in [begin, end) of `plan`, where
// offsets[j] is operand j's element offset at the row's first element.
template <int N, typename Fn>
void ForEachRow(const BroadcastPlan<N>& plan, int64_t begin, int64_t end, Fn&& fn) {
  const int outer = static_cast<int>(plan.dims.size()) - 1;
  std::vector<int64_t> index(outer, 0);
  std::array<int64_t, N> offsets{};
  int64_t rest = begin;
  for (int k = outer - 1; k >= 0; --k) {
    index[k] = rest % plan.dims[k];
    rest /= plan.dims[k];
    for (int j = 0; j < N; ++j) offsets[j] += index[k] * plan.strides[k][j];
  }
  for (int64_t row = begin; row < end; ++row) {
    fn(row, offsets);
    for (int k = outer - 1; k >= 0; --k) {
      for (int j = 0; j < N; ++j) offsets[j] += plan.strides[k][j];
      if (++index[k] < plan.dims[k]) break;
      for (int j = 0; j < N; ++j) offsets[j] -= plan.strides[k][j] * plan.dims[k];
      index[k] = 0;
    }
  }
}

// Binary element-wise loops, out[i] = F::Apply(x[..], y[..]) with the four
// inner-stride combinations specialised so each is a tight vectorizable loop.
template <typename F, typename T, typename Out>
inline void BinaryLoopSame(const T* x, const T* y, Out* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = F::Apply(x[i], y[i]);
}
template <typename F, typename T, typename Out>
inline void BinaryLoopScalarY(const T* x, T y, Out* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = F::Apply(x[i], y);
}
template <typename F, typename T, typename Out>
inline void BinaryLoopScalarX(T x, const T* y, Out* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = F::Apply(x, y[i]);
}

// Rows [begin, end) of a broadcast binary op.
template <typename F, typename T, typename Out>
void BinaryBroadcastRows(const BroadcastPlan<2>& plan, const T* x, const T* y, Out* out,
                         int64_t begin, int64_t end) {
  const int64_t n = plan.inner();
  const bool x_contig = plan.inner_strides()[0] != 0;
  const bool y_contig = plan.inner_strides()[1] != 0;
  ForEachRow(plan, begin, end, [&](int64_t row, const std::array<int64_t, 2>& off) {
    Out* o = out + row * n;
    const T* xr = x + off[0];
    const T* yr = y + off[1];
    if (x_contig && y_contig) {
      BinaryLoopSame<F>(xr, yr, o, n);
    } else if (x_contig) {
      BinaryLoopScalarY<F>(xr, *yr, o, n);
    } else if (y_contig) {
      BinaryLoopScalarX<F>(*xr, yr, o, n);
    } else {
      const Out v = F::Apply(*xr, *yr);
      for (int64_t i = 0; i < n; ++i) o[i] = v;
    }
  });
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_INTERNAL_BROADCAST_H_
