// SummaryWriter: what a training loop uses to feed TensorBoard — one event
// file in `logdir` (event_writer.h) taking the serialized summaries that the
// summary ops (ops/io/summary_ops.h) produce, plus scalars, histograms, the
// graph and session-log events written directly from C++.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<SummaryWriter> w, SummaryWriter::Create("/tmp/logs/run1"));
//   RETURN_IF_ERROR(w->AddGraph(graph_def));
//   RETURN_IF_ERROR(w->AddSessionLog(::tensorflow::SessionLog::START));
//   for (int64_t step = 0; ...; ++step) {
//     ASSIGN_OR_RETURN(std::vector<Tensor> out, sess->Run({...}, {merged}, {train}));
//     RETURN_IF_ERROR(w->Add(out[0], step));           // a MergeSummary result
//     RETURN_IF_ERROR(w->AddScalar("lr", lr, step));
//   }
//   RETURN_IF_ERROR(w->Close());
//   // then: tensorboard --logdir /tmp/logs
//
// Thread-safe: any method from any thread. Ownership: the writer owns its
// EventWriter (file and flush thread); destroying it closes the file.
#ifndef SLUICE_TRAINING_SUMMARY_SUMMARY_WRITER_H_
#define SLUICE_TRAINING_SUMMARY_SUMMARY_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/proto/event.pb.h"
#include "runtime/io/event_writer.h"
#include "graph/proto/graph.pb.h"
#include "graph/proto/summary.pb.h"
#include "runtime/tensor.h"

namespace sluice {

using SummaryWriterOptions = EventWriterOptions;

class SummaryWriter {
 public:
  // Errors as EventWriter::Create.
  static absl::StatusOr<std::unique_ptr<SummaryWriter>> Create(
      const std::string& logdir, const SummaryWriterOptions& options = {});
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // A serialized tensorflow.Summary (a summary op's output) at `step`.
  // InvalidArgument when the bytes do not parse.
  absl::Status Add(const std::string& serialized_summary, int64_t step);
  // A DT_STRING tensor of serialized summaries (any shape; a fetched
  // ScalarSummary / HistogramSummary / MergeSummary), one event each.
  // InvalidArgument for another dtype or an element that does not parse.
  absl::Status Add(const Tensor& summaries, int64_t step);
  absl::Status AddSummary(const ::tensorflow::Summary& summary, int64_t step);
  // One simple_value (TensorBoard stores scalars as float).
  absl::Status AddScalar(absl::string_view tag, double value, int64_t step);
  // A histogram as HistogramSummary builds it; InvalidArgument naming the
  // tag for a non-finite value.
  absl::Status AddHistogram(absl::string_view tag, absl::Span<const double> values,
                            int64_t step);
  // The graph for TensorBoard's Graphs tab.
  absl::Status AddGraph(const ::tensorflow::GraphDef& graph);
  // START / STOP / CHECKPOINT markers (TensorBoard drops later events of a
  // restarted run at START).
  absl::Status AddSessionLog(::tensorflow::SessionLog::SessionStatus status,
                             absl::string_view msg = "", absl::string_view checkpoint_path = "",
                             int64_t step = 0);

  absl::Status Flush();
  absl::Status Close();
  const std::string& filename() const { return events_->filename(); }

 private:
  explicit SummaryWriter(std::unique_ptr<EventWriter> events) : events_(std::move(events)) {}
  std::unique_ptr<EventWriter> events_;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_SUMMARY_SUMMARY_WRITER_H_
