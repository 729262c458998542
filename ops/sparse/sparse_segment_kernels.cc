// CPU kernels of SparseSegment{Sum,Mean,SqrtN}[WithNumSegments] and their
// Grad / GradV2 ops (sparse_segment_ops.h). Sums are accumulated in T, in
// index order, as TensorFlow's CPU kernels do.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/internal/index_tensors.h"
#include "ops/sparse/sparse_segment_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

enum class Kind { kSum, kMean, kSqrtN };

// Elements per row of `t` (its dims after the first).
int64_t RowElements(const Tensor& t) {
  int64_t n = 1;
  for (int d = 1; d < t.dims(); ++d) n *= t.dim_size(d);
  return n;
}

// The shape of `t` with `rows` as its first dimension.
TensorShape WithRows(const Tensor& t, int64_t rows) {
  std::vector<int64_t> dims = {rows};
  for (int d = 1; d < t.dims(); ++d) dims.push_back(t.dim_size(d));
  return TensorShape(dims);
}

// The validated indices and segment ids of a reduction over `rows` rows.
struct Selection {
  std::vector<int64_t> indices;
  std::vector<int64_t> segments;
  int64_t num_segments = 0;
};

absl::StatusOr<Selection> ReadSelection(const Tensor& indices, const Tensor& segment_ids,
                                        int64_t rows, const Tensor* num_segments) {
  if (indices.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("indices should be a vector, got shape ", indices.shape().DebugString()));
  }
  if (segment_ids.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("segment_ids should be a vector, got shape ",
                                                   segment_ids.shape().DebugString()));
  }
  if (indices.NumElements() != segment_ids.NumElements()) {
    return absl::InvalidArgumentError("segment_ids and indices should have same size.");
  }
  Selection sel;
  ASSIGN_OR_RETURN(sel.indices, internal::ReadInts(indices, "indices"));
  ASSIGN_OR_RETURN(sel.segments, internal::ReadInts(segment_ids, "segment_ids"));
  const size_t n = sel.segments.size();
  if (num_segments != nullptr) {
    ASSIGN_OR_RETURN(sel.num_segments, internal::ReadScalar(*num_segments, "num_segments"));
    if (sel.num_segments < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_segments must be >= 0, got ", sel.num_segments));
    }
  } else {
    sel.num_segments = n == 0 ? 0 : sel.segments[n - 1] + 1;
  }
  // Order and sign first: without num_segments the count comes from the
  // last id, which only means something for sorted ids.
  for (size_t i = 0; i < n; ++i) {
    const int64_t s = sel.segments[i];
    if (s < 0) return absl::InvalidArgumentError("segment ids must be >= 0");
    if (i > 0 && s < sel.segments[i - 1]) {
      return absl::InvalidArgumentError("segment ids are not increasing");
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t s = sel.segments[i];
    if (s >= sel.num_segments) {
      return absl::InvalidArgumentError("segment ids must be < num_segments");
    }
    const int64_t x = sel.indices[i];
    if (x < 0 || x >= rows) {
      return absl::InvalidArgumentError(
          absl::StrCat("Bad: indices[", i, "] == ", x, " out of range [0, ", rows, ")"));
    }
  }
  return sel;
}

// The weight of each segment's rows: 1, 1/count or 1/sqrt(count).
template <typename T>
std::vector<T> SegmentWeights(Kind kind, const Selection& sel) {
  std::vector<T> w(static_cast<size_t>(sel.num_segments), T(1));
  if (kind == Kind::kSum) return w;
  std::vector<int64_t> count(static_cast<size_t>(sel.num_segments), 0);
  for (int64_t s : sel.segments) ++count[s];
  for (size_t k = 0; k < w.size(); ++k) {
    if (count[k] == 0) continue;
    const double c = static_cast<double>(count[k]);
    w[k] = static_cast<T>(kind == Kind::kMean ? 1.0 / c : 1.0 / std::sqrt(c));
  }
  return w;
}

template <typename T, Kind kind>
class SparseSegmentReductionOp : public OpKernel {
 public:
  explicit SparseSegmentReductionOp(bool with_num_segments) : with_num_(with_num_segments) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    if (data.dims() < 1) {
      return absl::InvalidArgumentError("Shape must be at least rank 1: data is a scalar");
    }
    ASSIGN_OR_RETURN(Selection sel, ReadSelection(ctx->input(1), ctx->input(2), data.dim_size(0),
                                                  with_num_ ? &ctx->input(3) : nullptr));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, WithRows(data, sel.num_segments)));
    const int64_t inner = RowElements(data);
    T* o = out->data<T>();
    std::fill_n(o, out->NumElements(), T{});
    const T* d = data.data<T>();
    for (size_t i = 0; i < sel.indices.size(); ++i) {
      T* dst = o + sel.segments[i] * inner;
      const T* src = d + sel.indices[i] * inner;
      for (int64_t k = 0; k < inner; ++k) dst[k] += src[k];
    }
    if constexpr (kind != Kind::kSum) {
      const std::vector<T> w = SegmentWeights<T>(kind, sel);
      for (int64_t s = 0; s < sel.num_segments; ++s) {
        for (int64_t k = 0; k < inner; ++k) o[s * inner + k] *= w[s];
      }
    }
    return absl::OkStatus();
  }

 private:
  const bool with_num_;
};

// Grad: a dense [output_dim0, ...] gradient; GradV2: only the touched rows,
// in sorted order, with their indices.
template <typename T, Kind kind>
class SparseSegmentGradOp : public OpKernel {
 public:
  explicit SparseSegmentGradOp(bool v2) : v2_(v2) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    if (grad.dims() < 1) return absl::InvalidArgumentError("grad must be at least rank 1");
    ASSIGN_OR_RETURN(int64_t dim0, internal::ReadScalar(ctx->input(3), "output_dim0"));
    if (dim0 < 0) return absl::InvalidArgumentError(absl::StrCat("output_dim0 must be >= 0, got ", dim0));
    const Tensor& indices = ctx->input(1);
    const Tensor& segment_ids = ctx->input(2);
    if (indices.dims() != 1 || segment_ids.dims() != 1 ||
        indices.NumElements() != segment_ids.NumElements()) {
      return absl::InvalidArgumentError("segment_ids and indices should have same size.");
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, internal::ReadInts(indices, "indices"));
    ASSIGN_OR_RETURN(std::vector<int64_t> seg, internal::ReadInts(segment_ids, "segment_ids"));
    const int64_t segments = grad.dim_size(0);
    Selection sel;
    sel.num_segments = segments;
    for (size_t i = 0; i < idx.size(); ++i) {
      if (seg[i] < 0 || seg[i] >= segments) {
        return absl::InvalidArgumentError("Invalid number of segments");
      }
      if (idx[i] < 0 || idx[i] >= dim0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Index ", idx[i], " out of range [0, ", dim0, ")."));
      }
    }
    sel.indices = idx;
    sel.segments = seg;
    const std::vector<T> w = SegmentWeights<T>(kind, sel);
    const int64_t inner = RowElements(grad);
    const T* g = grad.data<T>();
    // Row of the output each index goes to: itself (Grad), or its place
    // among the sorted unique indices (GradV2).
    std::vector<int64_t> unique;
    if (v2_) {
      unique = idx;
      std::sort(unique.begin(), unique.end());
      unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    }
    const int64_t rows = v2_ ? static_cast<int64_t>(unique.size()) : dim0;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, WithRows(grad, rows)));
    T* o = out->data<T>();
    std::fill_n(o, out->NumElements(), T{});
    for (size_t i = 0; i < idx.size(); ++i) {
      const int64_t row =
          v2_ ? std::lower_bound(unique.begin(), unique.end(), idx[i]) - unique.begin() : idx[i];
      T* dst = o + row * inner;
      const T* src = g + seg[i] * inner;
      const T weight = w[seg[i]];
      for (int64_t k = 0; k < inner; ++k) dst[k] += src[k] * weight;
    }
    if (v2_) {
      ASSIGN_OR_RETURN(Tensor * u, ctx->allocate_output(1, TensorShape({rows})));
      RETURN_IF_ERROR(internal::WriteInts(unique, u));
    }
    return absl::OkStatus();
  }

 private:
  const bool v2_;
};

template <typename T, Kind kind>
void RegisterFor(KernelRegistry* k, const std::string& name, bool grads) {
  const DataType t = DataTypeToEnum<T>::value;
  k->Register(KernelDef(name, kDeviceTypeCpu).TypeConstraint("T", t),
              [] { return std::make_unique<SparseSegmentReductionOp<T, kind>>(false); });
  k->Register(KernelDef(name + "WithNumSegments", kDeviceTypeCpu).TypeConstraint("T", t),
              [] { return std::make_unique<SparseSegmentReductionOp<T, kind>>(true); });
  if (!grads) return;
  k->Register(KernelDef(name + "Grad", kDeviceTypeCpu).TypeConstraint("T", t),
              [] { return std::make_unique<SparseSegmentGradOp<T, kind>>(false); });
  k->Register(KernelDef(name + "GradV2", kDeviceTypeCpu).TypeConstraint("T", t),
              [] { return std::make_unique<SparseSegmentGradOp<T, kind>>(true); });
}

}  // namespace

void RegisterSparseSegmentKernels(KernelRegistry* k) {
  RegisterFor<float, Kind::kSum>(k, "SparseSegmentSum", true);
  RegisterFor<double, Kind::kSum>(k, "SparseSegmentSum", true);
  RegisterFor<int32_t, Kind::kSum>(k, "SparseSegmentSum", false);
  RegisterFor<int64_t, Kind::kSum>(k, "SparseSegmentSum", false);
  RegisterFor<float, Kind::kMean>(k, "SparseSegmentMean", true);
  RegisterFor<double, Kind::kMean>(k, "SparseSegmentMean", true);
  RegisterFor<float, Kind::kSqrtN>(k, "SparseSegmentSqrtN", true);
  RegisterFor<double, Kind::kSqrtN>(k, "SparseSegmentSqrtN", true);
}

}  // namespace sluice
