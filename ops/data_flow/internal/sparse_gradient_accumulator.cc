#include "ops/data_flow/internal/sparse_gradient_accumulator.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice {
namespace internal {
namespace {

absl::StatusOr<std::vector<int64_t>> Int64s(const Tensor& t, absl::string_view what,
                                            const std::string& accumulator) {
  if (t.shape().rank() != 1 || (t.dtype() != DT_INT64 && t.dtype() != DT_INT32)) {
    return absl::InvalidArgumentError(
        absl::StrCat("accumulator '", accumulator, "': ", what, " must be an int64 vector, got ",
                     DataTypeName(t.dtype()), " ", t.shape().DebugString()));
  }
  std::vector<int64_t> v(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    v[i] = t.dtype() == DT_INT64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i];
  }
  return v;
}

template <typename T>
void AddRows(const T* values, const std::vector<int64_t>& slots, int64_t row_elems,
             std::vector<double>* sums) {
  for (size_t r = 0; r < slots.size(); ++r) {
    double* dst = sums->data() + slots[r] * row_elems;
    const T* src = values + r * row_elems;
    for (int64_t k = 0; k < row_elems; ++k) dst[k] += src[k];
  }
}

template <typename T>
void WriteAverages(const std::vector<double>& sums, const std::vector<int64_t>& order,
                   const std::vector<int>& counts, int64_t row_elems, T* out) {
  for (size_t r = 0; r < order.size(); ++r) {
    const double* src = sums.data() + order[r] * row_elems;
    const double c = counts[order[r]];
    for (int64_t k = 0; k < row_elems; ++k) out[r * row_elems + k] = static_cast<T>(src[k] / c);
  }
}

}  // namespace

absl::Status SparseGradientSum::Add(const std::string& accumulator, const Tensor& indices,
                                    const Tensor& values, const Tensor& dense_shape) {
  if (values.dtype() != dtype_) {
    return absl::InvalidArgumentError(absl::StrCat("accumulator '", accumulator, "' holds ",
                                                   DataTypeName(dtype_), " gradients, got ",
                                                   DataTypeName(values.dtype())));
  }
  auto ids = Int64s(indices, "gradient_indices", accumulator);
  if (!ids.ok()) return ids.status();
  auto shape = Int64s(dense_shape, "gradient_shape", accumulator);
  if (!shape.ok()) return shape.status();
  const int64_t n = static_cast<int64_t>(ids->size());
  if (values.shape().rank() < 1 || values.shape().dim(0) != n) {
    return absl::InvalidArgumentError(absl::StrCat("accumulator '", accumulator, "': ", n,
                                                   " indices but values of shape ",
                                                   values.shape().DebugString()));
  }
  if (shape->empty() || static_cast<int>(shape->size()) != values.shape().rank() ||
      !std::equal(shape->begin() + 1, shape->end(), values.shape().dims().begin() + 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "accumulator '", accumulator, "': values of shape ", values.shape().DebugString(),
        " do not fit dense shape [", absl::StrJoin(*shape, ","), "]"));
  }
  if (!shape_.IsCompatibleWith(TensorShape(*shape))) {
    return absl::InvalidArgumentError(
        absl::StrCat("accumulator '", accumulator, "' has shape ", shape_.DebugString(),
                     ", got a gradient of dense shape [", absl::StrJoin(*shape, ","), "]"));
  }
  if (!dense_shape_.empty() && dense_shape_ != *shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "accumulator '", accumulator, "': this step's gradients have dense shape [",
        absl::StrJoin(dense_shape_, ","), "], got [", absl::StrJoin(*shape, ","), "]"));
  }
  for (int64_t i : *ids) {
    if (i < 0 || i >= (*shape)[0]) {
      return absl::InvalidArgumentError(absl::StrCat("accumulator '", accumulator, "': index ", i,
                                                     " is not in [0, ", (*shape)[0], ")"));
    }
  }
  dense_shape_ = *shape;
  row_elems_ = n > 0 ? values.NumElements() / n : 1;
  for (size_t d = 1; d < shape->size() && n == 0; ++d) row_elems_ *= (*shape)[d];
  ++gradients_;
  std::vector<int64_t> slots(n);
  for (int64_t r = 0; r < n; ++r) {
    auto [it, inserted] = slot_of_row_.try_emplace((*ids)[r], static_cast<int64_t>(rows_.size()));
    if (inserted) {
      rows_.push_back((*ids)[r]);
      counts_.push_back(0);
      last_seen_.push_back(0);
      sums_.resize(sums_.size() + row_elems_, 0.0);
    }
    slots[r] = it->second;
    if (last_seen_[it->second] != gradients_) {  // a row counts once per gradient
      last_seen_[it->second] = gradients_;
      ++counts_[it->second];
    }
  }
  if (dtype_ == DT_FLOAT) {
    AddRows(values.data<float>(), slots, row_elems_, &sums_);
  } else {
    AddRows(values.data<double>(), slots, row_elems_, &sums_);
  }
  return absl::OkStatus();
}

SparseGradientSum::Partial SparseGradientSum::Release() {
  Partial out;
  const int64_t n = static_cast<int64_t>(rows_.size());
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return rows_[a] < rows_[b]; });
  std::vector<int64_t> row_shape(dense_shape_.begin() + (dense_shape_.empty() ? 0 : 1),
                                 dense_shape_.end());
  std::vector<int64_t> values_dims = {n};
  values_dims.insert(values_dims.end(), row_shape.begin(), row_shape.end());
  std::vector<int64_t> sorted(n);
  std::vector<int> counts(n);
  for (int64_t r = 0; r < n; ++r) {
    sorted[r] = rows_[order[r]];
    counts[r] = counts_[order[r]];
  }
  out.sum.indices = Tensor::FromVector<int64_t>(sorted);
  out.sum.dense_shape = Tensor::FromVector<int64_t>(dense_shape_);
  absl::StatusOr<Tensor> values =
      Tensor::Allocate(DefaultCpuAllocator(), dtype_, TensorShape(values_dims));
  if (values.ok()) {  // each row's average, in sorted order
    if (dtype_ == DT_FLOAT) {
      WriteAverages(sums_, order, counts_, row_elems_, values->data<float>());
    } else {
      WriteAverages(sums_, order, counts_, row_elems_, values->data<double>());
    }
    out.sum.values = *std::move(values);
  }
  out.counts = std::move(counts);
  Clear();
  return out;
}

void SparseGradientSum::Clear() {
  dense_shape_.clear();
  slot_of_row_.clear();
  rows_.clear();
  sums_.clear();
  counts_.clear();
  last_seen_.clear();
}

absl::StatusOr<SparseGradient> SparseGradientSum::Average(Partial partial, int count) {
  // Release divided each row by the gradients that held it (TensorFlow's
  // sparse average), not by `count`.
  if (!partial.sum.values.IsInitialized()) {
    return absl::ResourceExhaustedError("sparse accumulator: cannot allocate the average");
  }
  return std::move(partial.sum);
}

}  // namespace internal
}  // namespace sluice
