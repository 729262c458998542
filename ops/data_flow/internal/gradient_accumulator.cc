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

GradientAccumulator::GradientAccumulator(std::string name, DataType dtype, TensorShape shape,
                                         std::shared_ptr<DeadlineTimer> timer)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)), timer_(std::move(timer)) {}

GradientAccumulator::~GradientAccumulator() {
  std::deque<PendingTake> takes;
  {
    absl::MutexLock lock(&mu_);
    takes.swap(takes_);
  }
  for (PendingTake& t : takes) {
    if (t.waiter->Claim()) {
      t.waiter->Complete(absl::AbortedError(
          absl::StrCat("accumulator '", name_, "' was destroyed while a take waited")));
    }
  }
}

std::string GradientAccumulator::DebugString() const {
  Stats s = stats();
  return absl::StrCat("GradientAccumulator '", name_, "' (", DataTypeName(dtype_), " ",
                      shape_.DebugString(), ", global step ", s.global_step, ", ",
                      s.num_accumulated, " accumulated)");
}

absl::Status GradientAccumulator::Apply(int64_t local_step, const Tensor& gradient,
                                        Allocator* allocator) {
  if (gradient.dtype() != dtype_) {
    return absl::InvalidArgumentError(absl::StrCat("accumulator '", name_, "' holds ",
                                                   DataTypeName(dtype_), " gradients, got ",
                                                   DataTypeName(gradient.dtype())));
  }
  if (!shape_.IsCompatibleWith(gradient.shape())) {
    return absl::InvalidArgumentError(
        absl::StrCat("accumulator '", name_, "' has shape ", shape_.DebugString(),
                     ", got a gradient of shape ", gradient.shape().DebugString()));
  }
  std::vector<Served> served;
  {
    absl::MutexLock lock(&mu_);
    if (local_step < global_step_) {
      ++num_stale_;
      return absl::OkStatus();
    }
    if (count_ == 0) {
      absl::StatusOr<Tensor> sum = Tensor::Allocate(allocator, dtype_, gradient.shape());
      if (!sum.ok()) return sum.status();
      if (gradient.TotalBytes() > 0) {
        std::memcpy(sum->raw_data(), gradient.raw_data(), gradient.TotalBytes());
      }
      sum_ = *std::move(sum);
    } else {
      if (sum_.shape() != gradient.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "accumulator '", name_, "': this step's gradients have shape ",
            sum_.shape().DebugString(), ", got one of shape ", gradient.shape().DebugString()));
      }
      if (dtype_ == DT_FLOAT) {
        AddInto(sum_.data<float>(), gradient.data<float>(), sum_.NumElements());
      } else {
        AddInto(sum_.data<double>(), gradient.data<double>(), sum_.NumElements());
      }
    }
    ++count_;
    Serve(&served);
  }
  Finish(std::move(served));
  return absl::OkStatus();
}

void GradientAccumulator::Take(int num_required, absl::Duration timeout, TakeDone done) {
  auto waiter = std::make_shared<Waiter<Tensor>>(std::move(done));
  std::vector<Served> served;
  {
    absl::MutexLock lock(&mu_);
    // Takes that timed out leave their entries behind; drop them here too.
    while (!takes_.empty() && takes_.front().waiter->claimed()) takes_.pop_front();
    takes_.push_back({waiter, num_required});
    Serve(&served);
  }
  Finish(std::move(served));
  if (timeout > absl::ZeroDuration() && !waiter->claimed()) {
    if (timer_ == nullptr) {
      if (waiter->Claim()) {
        waiter->Complete(absl::InternalError(
            absl::StrCat("accumulator '", name_, "' has no timer for a take with a timeout")));
      }
      return;
    }
    std::string message =
        absl::StrCat("timed out after ", absl::FormatDuration(timeout), " waiting for ",
                     num_required, " gradients in accumulator '", name_, "'");
    timer_->Schedule(absl::Now() + timeout, [waiter, message = std::move(message)] {
      if (waiter->Claim()) waiter->Complete(absl::DeadlineExceededError(message));
    });
  }
}

void GradientAccumulator::SetGlobalStep(int64_t step) {
  absl::MutexLock lock(&mu_);
  if (step == global_step_) return;
  num_stale_ += count_;
  count_ = 0;
  sum_ = Tensor();
  global_step_ = step;
}

GradientAccumulator::Stats GradientAccumulator::stats() const {
  absl::MutexLock lock(&mu_);
  return {global_step_, count_, num_stale_, num_taken_};
}

void GradientAccumulator::Serve(std::vector<Served>* served) {
  while (!takes_.empty()) {
    PendingTake& front = takes_.front();
    if (front.waiter->claimed()) {  // timed out
      takes_.pop_front();
      continue;
    }
    if (count_ < front.num_required) return;
    std::shared_ptr<Waiter<Tensor>> waiter = std::move(front.waiter);
    takes_.pop_front();
    if (!waiter->Claim()) continue;  // its deadline won the race
    served->push_back({std::move(waiter), std::move(sum_), count_});
    sum_ = Tensor();
    count_ = 0;
    ++global_step_;
    ++num_taken_;
  }
}

void GradientAccumulator::Finish(std::vector<Served> served) {
  for (Served& s : served) {
    if (s.sum.dtype() == DT_FLOAT) {
      DivideBy(s.sum.data<float>(), s.sum.NumElements(), s.count);
    } else {
      DivideBy(s.sum.data<double>(), s.sum.NumElements(), s.count);
    }
    s.waiter->Complete(std::move(s.sum));
  }
}

}  // namespace internal
}  // namespace sluice
