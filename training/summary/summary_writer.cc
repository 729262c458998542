#include "training/summary/summary_writer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/io/histogram.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<SummaryWriter>> SummaryWriter::Create(
    const std::string& logdir, const SummaryWriterOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<EventWriter> events, EventWriter::Create(logdir, options));
  return std::unique_ptr<SummaryWriter>(new SummaryWriter(std::move(events)));
}

absl::Status SummaryWriter::Add(const std::string& serialized_summary, int64_t step) {
  ::tensorflow::Event event;
  event.set_step(step);
  if (!event.mutable_summary()->ParseFromString(serialized_summary)) {
    return absl::InvalidArgumentError(
        absl::StrCat("SummaryWriter: ", serialized_summary.size(),
                     " bytes at step ", step, " are not a serialized Summary"));
  }
  return events_->WriteEvent(event);
}

absl::Status SummaryWriter::Add(const Tensor& summaries, int64_t step) {
  if (summaries.dtype() != DT_STRING) {
    return absl::InvalidArgumentError(
        absl::StrCat("SummaryWriter: summaries must be a string tensor, got ",
                     summaries.DebugString(3)));
  }
  for (const std::string& serialized : summaries.flat<std::string>()) {
    RETURN_IF_ERROR(Add(serialized, step));
  }
  return absl::OkStatus();
}

absl::Status SummaryWriter::AddSummary(const ::tensorflow::Summary& summary, int64_t step) {
  return events_->WriteSummary(step, summary);
}

absl::Status SummaryWriter::AddScalar(absl::string_view tag, double value, int64_t step) {
  return events_->WriteScalar(tag, step, static_cast<float>(value));
}

absl::Status SummaryWriter::AddHistogram(absl::string_view tag, absl::Span<const double> values,
                                         int64_t step) {
  Histogram histogram;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      return absl::InvalidArgumentError(absl::StrCat("SummaryWriter: non-finite value ",
                                                     values[i], " at index ", i,
                                                     " of histogram '", tag, "'"));
    }
    histogram.Add(values[i]);
  }
  ::tensorflow::Summary summary;
  ::tensorflow::Summary::Value* value = summary.add_value();
  value->set_tag(std::string(tag));
  histogram.EncodeToProto(value->mutable_histo());
  return events_->WriteSummary(step, summary);
}

absl::Status SummaryWriter::AddGraph(const ::tensorflow::GraphDef& graph) {
  return events_->WriteGraph(graph);
}

absl::Status SummaryWriter::AddSessionLog(::tensorflow::SessionLog::SessionStatus status,
                                          absl::string_view msg,
                                          absl::string_view checkpoint_path, int64_t step) {
  ::tensorflow::Event event;
  event.set_step(step);
  ::tensorflow::SessionLog* log = event.mutable_session_log();
  log->set_status(status);
  log->set_msg(std::string(msg));
  log->set_checkpoint_path(std::string(checkpoint_path));
  return events_->WriteEvent(event);
}

absl::Status SummaryWriter::Flush() { return events_->Flush(); }

absl::Status SummaryWriter::Close() { return events_->Close(); }

}  // namespace sluice
