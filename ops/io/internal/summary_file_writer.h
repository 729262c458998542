// SummaryFileWriter: the resource behind TensorFlow's TF2 summary writer ops
// (summary_writer_ops.h): one event file in a logdir, events stamped with a
// step and the wall time, written out when more than `max_queue` wait or
// `flush_millis` passed since the last flush (TensorFlow's
// SummaryFileWriter), and on Flush, Close and destruction.
//
//   ASSIGN_OR_RETURN(auto w, SummaryFileWriter::Create());   // in the ResourceMgr
//   RETURN_IF_ERROR(w->Open({"/tmp/logs/run1", 10, 120000, ".v2"}));
//   ::tensorflow::Summary s;  ... summary::AddScalar(...)
//   RETURN_IF_ERROR(w->WriteSummary(step, std::move(s)));
//   RETURN_IF_ERROR(w->Close());  // a later Open starts a new file
//
// The file is `<logdir>/events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>`
// (n counts the files this process opened), as TensorFlow names it.
// Open obeys the process's graph file policy (file_write_policy.h).
//
// Errors: Open on an open writer does nothing (the first logdir holds, as in
// TensorFlow); writes and flushes on a writer never opened or closed are
// FailedPrecondition naming it; file errors name the path.
// Thread-safe: every method locks the writer.
#ifndef SLUICE_OPS_IO_INTERNAL_SUMMARY_FILE_WRITER_H_
#define SLUICE_OPS_IO_INTERNAL_SUMMARY_FILE_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "graph/proto/event.pb.h"
#include "graph/proto/summary.pb.h"
#include "runtime/io/event_writer.h"
#include "runtime/resource_mgr.h"

namespace sluice {

class SummaryFileWriter : public ResourceBase {
 public:
  struct Options {
    std::string logdir;
    int64_t max_queue = 10;
    int64_t flush_millis = 120000;
    std::string filename_suffix;
  };

  explicit SummaryFileWriter(std::string name) : name_(std::move(name)) {}
  ~SummaryFileWriter() override;
  std::string DebugString() const override;

  absl::Status Open(const Options& options);
  bool is_open();
  // The open file's path ("" when closed).
  std::string filename();

  // An Event{step, wall_time now, summary}.
  absl::Status WriteSummary(int64_t step, ::tensorflow::Summary summary);
  // Event{step, wall_time now, graph_def}.
  absl::Status WriteGraph(int64_t step, std::string serialized_graph);
  // As given (a zero wall_time becomes now).
  absl::Status WriteEvent(::tensorflow::Event event);
  absl::Status Flush();
  absl::Status Close();

 private:
  absl::Status WriteLocked(::tensorflow::Event event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status OpenError() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  absl::Mutex mu_;
  std::unique_ptr<EventWriter> file_ ABSL_GUARDED_BY(mu_);
  bool ever_opened_ ABSL_GUARDED_BY(mu_) = false;
  int64_t max_queue_ ABSL_GUARDED_BY(mu_) = 10;
  absl::Duration flush_every_ ABSL_GUARDED_BY(mu_);
  int64_t unflushed_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_flush_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_OPS_IO_INTERNAL_SUMMARY_FILE_WRITER_H_
