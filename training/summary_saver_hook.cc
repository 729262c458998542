#include "training/summary_saver_hook.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "training/hook_values.h"
#include "base/status_macros.h"

namespace sluice {

SummarySaverHook::SummarySaverHook(std::string summary_tensor, SummaryWriter* writer,
                                   std::string global_step_tensor, int64_t every_steps)
    : summary_(std::move(summary_tensor)),
      writer_(writer),
      global_step_(std::move(global_step_tensor)),
      every_steps_(std::max<int64_t>(every_steps, 1)) {}

std::vector<std::string> SummarySaverHook::BeforeRun() {
  fetch_summary_ = last_written_step_ < 0 || next_step_ >= last_written_step_ + every_steps_;
  if (!fetch_summary_) return {global_step_};
  return {global_step_, summary_};
}

absl::Status SummarySaverHook::AfterRun(const std::vector<Tensor>& values, RunContext* context) {
  ASSIGN_OR_RETURN(int64_t step, internal::ScalarInt64(values[0], global_step_));
  next_step_ = step + 1;
  if (!fetch_summary_) return absl::OkStatus();
  const Tensor& summary = values[1];
  if (summary.dtype() != DT_STRING) {
    return absl::InvalidArgumentError(absl::StrCat("SummarySaverHook: '", summary_, "' is ",
                                                   DataTypeName(summary.dtype()),
                                                   "; want a string of serialized Summaries"));
  }
  RETURN_IF_ERROR(
      AddContext(writer_->Add(summary, step), absl::StrCat("SummarySaverHook: '", summary_, "'")));
  last_written_step_ = step;
  return absl::OkStatus();
}

absl::Status SummarySaverHook::End(Session* session) { return writer_->Flush(); }

}  // namespace sluice
