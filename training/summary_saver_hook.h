// SummarySaverHook: writes a summary tensor (a MergeSummary of the model's
// summaries, ops/io/summary_ops.h) to a TensorBoard event file every N global
// steps.
//
//   Output merged = ops::MergeSummary(s.WithOpName("summaries"), {loss_sum, w_hist});
//   ASSIGN_OR_RETURN(auto writer, SummaryWriter::Create("/tmp/logs/run1"));
//   SummarySaverHook summaries("summaries:0", writer.get(), "global_step:0", 100);
//   opts.hooks = {&summaries};
//
// The summary is fetched only with the steps whose summary is written: the
// hook predicts the coming step as the global step seen last plus one. The
// first step always writes. End flushes the writer.
//
// Errors: the writer's (InvalidArgument when the bytes are not a Summary);
// InvalidArgument when the summary tensor is not a DT_STRING or the global
// step not an int32/int64 scalar. Thread-compatible. Ownership: the writer
// is borrowed.
#ifndef SLUICE_TRAINING_SUMMARY_SAVER_HOOK_H_
#define SLUICE_TRAINING_SUMMARY_SAVER_HOOK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "training/summary/summary_writer.h"
#include "training/session_run_hook.h"

namespace sluice {

// Fetches a serialized-Summary string tensor every `every_steps` global
// steps (values below 1 mean 1) and writes it to an event file for
// TensorBoard.
class SummarySaverHook : public SessionRunHook {
 public:
  SummarySaverHook(std::string summary_tensor, SummaryWriter* writer,
                   std::string global_step_tensor, int64_t every_steps);
  std::vector<std::string> BeforeRun() override;
  absl::Status AfterRun(const std::vector<Tensor>& values, RunContext* context) override;
  absl::Status End(Session* session) override;

 private:
  const std::string summary_;
  SummaryWriter* const writer_;
  const std::string global_step_;
  const int64_t every_steps_;
  int64_t last_written_step_ = -1;
  int64_t next_step_ = -1;     // the global step seen last + 1
  bool fetch_summary_ = true;  // decided by BeforeRun for the coming step
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_SUMMARY_SAVER_HOOK_H_
