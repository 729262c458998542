#include "ops/data_flow/internal/gradient_accumulator.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace internal {
namespace {

template <typename T>
void AddInto(T* __restrict sum, const T* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) sum[i] += x[i];
}

template <typename T>
void DivideBy(T* sum, int64_t n, int count) {
  const T c = static_cast<T>(count);
  for (int64_t i = 0; i < n; ++i) sum[i] /= c;
}

}  // namespace

absl::Status DenseGradientSum::Add(const std::string& accumulator, const Tensor& gradient,
                                   Allocator* allocator) {
  if (gradient.dtype() != dtype_) {
    return absl::InvalidArgumentError(absl::StrCat("accumulator '", accumulator, "' holds ",
                                                   DataTypeName(dtype_), " gradients, got ",
                                                   DataTypeName(gradient.dtype())));
  }
  if (!shape_.IsCompatibleWith(gradient.shape())) {
    return absl::InvalidArgumentError(
        absl::StrCat("accumulator '", accumulator, "' has shape ", shape_.DebugString(),
                     ", got a gradient of shape ", gradient.shape().DebugString()));
  }
  if (empty_) {
    absl::StatusOr<Tensor> sum = Tensor::Allocate(allocator, dtype_, gradient.shape());
    if (!sum.ok()) return sum.status();
    if (gradient.TotalBytes() > 0) {
      std::memcpy(sum->raw_data(), gradient.raw_data(), gradient.TotalBytes());
    }
    sum_ = *std::move(sum);
    empty_ = false;
    return absl::OkStatus();
  }
  if (sum_.shape() != gradient.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "accumulator '", accumulator, "': this step's gradients have shape ",
        sum_.shape().DebugString(), ", got one of shape ", gradient.shape().DebugString()));
  }
  if (dtype_ == DT_FLOAT) {
    AddInto(sum_.data<float>(), gradient.data<float>(), sum_.NumElements());
  } else {
    AddInto(sum_.data<double>(), gradient.data<double>(), sum_.NumElements());
  }
  return absl::OkStatus();
}

Tensor DenseGradientSum::Release() {
  empty_ = true;
  return std::move(sum_);
}

absl::StatusOr<Tensor> DenseGradientSum::Average(Tensor sum, int count) {
  if (sum.dtype() == DT_FLOAT) {
    DivideBy(sum.data<float>(), sum.NumElements(), count);
  } else {
    DivideBy(sum.data<double>(), sum.NumElements(), count);
  }
  return sum;
}

}  // namespace internal
}  // namespace sluice
