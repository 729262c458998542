// Index and shape arithmetic shared by the array ops (see array_util.h).
#include "ops/internal/array_util.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace sluice {
namespace internal {
namespace {

constexpr int kShrinkAxis = -1;
constexpr int kNewAxis = -2;

// The mask bits of one index entry, after ellipsis expansion.
struct DenseSpec {
  std::vector<int64_t> begin, end, strides;
  std::vector<bool> begin_masked, end_masked, shrink;
  // Per output dimension before shrinking: an input dimension, kNewAxis or
  // kShrinkAxis.
  std::vector<int> final_gather;
};

// TensorFlow's BuildDenseSpec: expands the ellipsis (implicit at the end
// when absent) and maps the sparse index entries onto input dimensions.
absl::StatusOr<DenseSpec> BuildDenseSpec(int rank, absl::Span<const int64_t> begin,
                                         absl::Span<const int64_t> end,
                                         absl::Span<const int64_t> strides,
                                         const StridedSliceSpec& spec) {
  const int sparse_dims = static_cast<int>(begin.size());
  if (end.size() != begin.size() || strides.size() != begin.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("StridedSlice: begin, end and strides must have the same length, got ",
                     begin.size(), ", ", end.size(), " and ", strides.size()));
  }
  if (sparse_dims > 62) {
    return absl::InvalidArgumentError("StridedSlice: too many index entries");
  }
  int64_t ellipsis_mask = spec.ellipsis_mask & ((int64_t{1} << sparse_dims) - 1);
  if ((ellipsis_mask & (ellipsis_mask - 1)) != 0) {
    return absl::InvalidArgumentError("StridedSlice: multiple ellipses in slice spec not allowed");
  }
  int num_add_axis_after_ellipsis = 0;
  bool ellipsis_seen = false;
  for (int i = 0; i < sparse_dims; ++i) {
    if (ellipsis_seen && (spec.new_axis_mask & (int64_t{1} << i))) ++num_add_axis_after_ellipsis;
    if (ellipsis_mask & (int64_t{1} << i)) ellipsis_seen = true;
  }
  int total_sparse = sparse_dims;
  if (!ellipsis_seen) {
    ellipsis_mask |= int64_t{1} << sparse_dims;
    ++total_sparse;
  }

  DenseSpec dense;
  dense.begin.assign(rank, 0);
  dense.end.assign(rank, 0);
  dense.strides.assign(rank, 1);
  dense.begin_masked.assign(rank, false);
  dense.end_masked.assign(rank, false);
  dense.shrink.assign(rank, false);
  int full_index = 0;
  for (int i = 0; i < total_sparse; ++i) {
    const int64_t bit = int64_t{1} << i;
    if (ellipsis_mask & bit) {
      const int next_index =
          std::min(rank - (total_sparse - i) + 1 + num_add_axis_after_ellipsis, rank);
      for (; full_index < next_index; ++full_index) {
        dense.begin_masked[full_index] = true;
        dense.end_masked[full_index] = true;
        dense.final_gather.push_back(full_index);
      }
    } else if (spec.new_axis_mask & bit) {
      dense.final_gather.push_back(kNewAxis);
    } else {
      if (full_index >= rank) {
        return absl::InvalidArgumentError(
            absl::StrCat("StridedSlice: index out of range using input dim ", full_index,
                         "; input has only ", rank, " dims"));
      }
      dense.begin[full_index] = begin[i];
      dense.end[full_index] = end[i];
      dense.strides[full_index] = strides[i];
      dense.begin_masked[full_index] = (spec.begin_mask & bit) != 0;
      dense.end_masked[full_index] = (spec.end_mask & bit) != 0;
      if (spec.shrink_axis_mask & bit) {
        dense.shrink[full_index] = true;
        dense.final_gather.push_back(kShrinkAxis);
      } else {
        dense.final_gather.push_back(full_index);
      }
      ++full_index;
    }
  }
  return dense;
}

}  // namespace

std::string IntsDebugString(absl::Span<const int64_t> v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
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

absl::Status CheckPermutation(absl::Span<const int64_t> perm, absl::string_view what) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) {
      return absl::InvalidArgumentError(absl::StrCat(what, " ", IntsDebugString(perm),
                                                     " is not a permutation of 0..",
                                                     static_cast<int64_t>(perm.size()) - 1));
    }
    seen[p] = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<StridedSlicePlan> PlanStridedSlice(const TensorShape& input_shape,
                                                  absl::Span<const int64_t> begin,
                                                  absl::Span<const int64_t> end,
                                                  absl::Span<const int64_t> strides,
                                                  const StridedSliceSpec& spec) {
  const int rank = input_shape.rank();
  if (rank < 0) return absl::InvalidArgumentError("StridedSlice: input rank is unknown");
  ASSIGN_OR_RETURN(DenseSpec dense, BuildDenseSpec(rank, begin, end, strides, spec));

  StridedSlicePlan plan;
  plan.begin.resize(rank);
  plan.strides.resize(rank);
  plan.processing_dims.resize(rank);
  bool identity = true;
  for (int i = 0; i < rank; ++i) {
    const int64_t dim = input_shape.dim(i);
    const int64_t stride = dense.strides[i];
    if (stride == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("StridedSlice: strides[", i, "] must be non-zero"));
    }
    plan.strides[i] = stride;
    if (dense.shrink[i]) {
      if (stride <= 0) {
        return absl::InvalidArgumentError(
            "StridedSlice: only stride 1 allowed on non-range indexing");
      }
      const int64_t b = dense.begin[i];
      if (dim >= 0) {
        const int64_t fwd = b < 0 ? dim + b : b;
        if (fwd < 0 || fwd >= dim) {
          return absl::InvalidArgumentError(absl::StrCat("StridedSlice: slice index ", b,
                                                         " of dimension ", i,
                                                         " out of bounds (size ", dim, ")"));
        }
        plan.begin[i] = fwd;
      }
      plan.strides[i] = 1;
      plan.processing_dims[i] = 1;
      identity = identity && dim == 1;  // dropping a dimension of 1 moves no data
      continue;
    }
    if (dim < 0) {
      plan.processing_dims[i] = -1;
      identity = false;
      continue;
    }
    // Canonicalizes begin (c = 0) or end (c = 1) into the valid range.
    const int64_t lo = stride > 0 ? 0 : -1;
    const int64_t hi = stride > 0 ? dim : dim - 1;
    auto canonical = [&](int64_t x, int c) -> int64_t {
      const bool masked = c == 0 ? dense.begin_masked[i] : dense.end_masked[i];
      if (masked) {
        // begin: the first element in stride direction; end: past the last.
        if (stride > 0) return c == 0 ? lo : hi;
        return c == 0 ? hi : lo;
      }
      const int64_t fwd = x < 0 ? dim + x : x;
      return fwd < lo ? lo : (fwd > hi ? hi : fwd);
    };
    const int64_t b = canonical(dense.begin[i], 0);
    const int64_t e = canonical(dense.end[i], 1);
    const int64_t interval = e - b;
    int64_t size = 0;
    if (interval != 0 && ((interval < 0) == (stride < 0))) {
      size = interval / stride + (interval % stride != 0 ? 1 : 0);
    }
    plan.begin[i] = b;
    plan.processing_dims[i] = size;
    identity = identity && stride == 1 && b == 0 && size == dim;
  }
  std::vector<int64_t> final_dims;
  for (int g : dense.final_gather) {
    if (g == kNewAxis) {
      final_dims.push_back(1);
    } else if (g >= 0) {
      final_dims.push_back(plan.processing_dims[g]);
    }
  }
  plan.final_shape = TensorShape(absl::MakeConstSpan(final_dims));
  plan.is_identity = identity;
  return plan;
}

absl::StatusOr<TensorShape> StridedSliceShapeOfRank(int input_rank, int sparse_dims,
                                                    const StridedSliceSpec& spec) {
  std::vector<int64_t> zeros(sparse_dims, 0), ones(sparse_dims, 1);
  ASSIGN_OR_RETURN(DenseSpec dense, BuildDenseSpec(input_rank, zeros, zeros, ones, spec));
  std::vector<int64_t> dims;
  for (int g : dense.final_gather) {
    if (g == kNewAxis) {
      dims.push_back(1);
    } else if (g >= 0) {
      dims.push_back(-1);
    }
  }
  return TensorShape(absl::MakeConstSpan(dims));
}

absl::StatusOr<TensorShape> ResolveReshape(const TensorShape& input_shape,
                                           absl::Span<const int64_t> requested) {
  int unknown_index = -1;
  int64_t product = 1;
  for (int i = 0; i < static_cast<int>(requested.size()); ++i) {
    const int64_t d = requested[i];
    if (d == -1) {
      if (unknown_index >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Reshape: only one input size may be -1, not both ", unknown_index,
                         " and ", i, " (requested shape ", IntsDebugString(requested), ")"));
      }
      unknown_index = i;
    } else if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Reshape: size ", i, " must be non-negative, not ", d, " (requested shape ",
                       IntsDebugString(requested), ")"));
    } else {
      product *= d;
    }
  }
  std::vector<int64_t> dims(requested.begin(), requested.end());
  const int64_t n = input_shape.num_elements();
  if (unknown_index >= 0) {
    if (n >= 0) {
      if (product == 0 || n % product != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Cannot reshape a tensor of shape ", input_shape.DebugString(), " (", n,
            " elements) to shape ", IntsDebugString(requested),
            product == 0 ? ": the -1 cannot be inferred when the other sizes multiply to 0"
                         : absl::StrCat(": ", n, " is not a multiple of ", product)));
      }
      dims[unknown_index] = n / product;
    }
  } else if (n >= 0 && n != product) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot reshape a tensor of shape ", input_shape.DebugString(), " (", n,
        " elements) to shape ", IntsDebugString(requested), " (", product, " elements)"));
  }
  return TensorShape(absl::MakeConstSpan(dims));
}

absl::Status BroadcastReductionAxes(absl::Span<const int64_t> s0, absl::Span<const int64_t> s1,
                                    std::vector<int64_t>* r0, std::vector<int64_t>* r1) {
  r0->clear();
  r1->clear();
  const int n = static_cast<int>(std::max(s0.size(), s1.size()));
  const int pad0 = n - static_cast<int>(s0.size());
  const int pad1 = n - static_cast<int>(s1.size());
  for (int i = 0; i < n; ++i) {
    const int64_t a = i < pad0 ? 1 : s0[i - pad0];
    const int64_t b = i < pad1 ? 1 : s1[i - pad1];
    if (a == b) {
      // Summing over a dimension of size 1 changes nothing but keeps the
      // reduction a pure function of the axes (TensorFlow does the same).
      if (a == 1) {
        r0->push_back(i);
        r1->push_back(i);
      }
    } else if (a == 1) {
      r0->push_back(i);
    } else if (b == 1) {
      r1->push_back(i);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("Incompatible shapes: ", IntsDebugString(s0), " vs. ", IntsDebugString(s1)));
    }
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace sluice
