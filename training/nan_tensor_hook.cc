#include "training/nan_tensor_hook.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "training/hook_values.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

// The first element of `t` that is NaN or infinite, if any.
template <typename T>
bool FindNonFinite(const Tensor& t, double* bad) {
  for (T v : t.flat<T>()) {
    if (!std::isfinite(v)) {
      *bad = static_cast<double>(v);
      return true;
    }
  }
  return false;
}

}  // namespace

NanTensorHook::NanTensorHook(std::string loss_tensor, bool stop_instead,
                             std::string global_step_tensor)
    : loss_(std::move(loss_tensor)),
      stop_instead_(stop_instead),
      global_step_(std::move(global_step_tensor)) {}

std::vector<std::string> NanTensorHook::BeforeRun() {
  if (global_step_.empty()) return {loss_};
  return {loss_, global_step_};
}

absl::Status NanTensorHook::AfterRun(const std::vector<Tensor>& values, RunContext* context) {
  ++local_step_;
  const Tensor& loss = values[0];
  double bad = 0;
  bool found;
  if (loss.dtype() == DT_FLOAT) {
    found = FindNonFinite<float>(loss, &bad);
  } else if (loss.dtype() == DT_DOUBLE) {
    found = FindNonFinite<double>(loss, &bad);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("NanTensorHook: '", loss_, "' is ",
                                                   DataTypeName(loss.dtype()),
                                                   "; want float or double"));
  }
  if (!found) return absl::OkStatus();
  if (stop_instead_) {
    context->RequestStop();
    return absl::OkStatus();
  }
  std::string step = absl::StrCat("local step ", local_step_);
  if (!global_step_.empty()) {
    ASSIGN_OR_RETURN(int64_t global, internal::ScalarInt64(values[1], global_step_));
    step = absl::StrCat("global step ", global);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("NanTensorHook: '", loss_, "' is ", bad, " at ", step));
}

}  // namespace sluice
