// EventWriter: one TensorBoard event file,
// `<logdir>/events.out.tfevents.<unix seconds>.<hostname>[.<suffix>]`, as a
// sequence of TFRecord-framed tensorflow.Event protos (event.proto). The
// first record is always the version event (file_version "brain.Event:2").
//
//   ASSIGN_OR_RETURN(std::unique_ptr<EventWriter> w, EventWriter::Create("/tmp/run1"));
//   RETURN_IF_ERROR(w->WriteGraph(graph_def));
//   RETURN_IF_ERROR(w->WriteScalar("loss", step, 0.25f));
//   RETURN_IF_ERROR(w->WriteSummary(step, summary));      // e.g. a MergeSummary result
//   RETURN_IF_ERROR(w->Flush());
//   RETURN_IF_ERROR(w->Close());                          // or let it go out of scope
//
// Buffered events reach the file on Flush, on Close, and at least every
// `flush_interval` (a background thread). Thread-safe: every method may be
// called from any thread. Ownership: the writer owns its file and thread;
// the destructor closes (errors are then dropped: call Close to see them).
#ifndef SLUICE_RUNTIME_IO_EVENT_WRITER_H_
#define SLUICE_RUNTIME_IO_EVENT_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "graph/proto/event.pb.h"
#include "runtime/io/record_writer.h"
#include "graph/proto/graph.pb.h"

namespace sluice {

// The file_version of the first event of every file.
inline constexpr absl::string_view kEventFileVersion = "brain.Event:2";

struct EventWriterOptions {
  // Appended to the file name as ".<suffix>" ("" for none; a leading '.' is
  // not doubled). Use one to tell apart writers started in the same second.
  std::string filename_suffix;
  // Longest time a written event may stay buffered (TensorFlow's flush_secs).
  absl::Duration flush_interval = absl::Seconds(120);
};

class EventWriter {
 public:
  // Creates `logdir` (and its parents) when missing, then the event file, and
  // writes the version event. InvalidArgument for an empty logdir;
  // AlreadyExists when the file name is taken (another writer of this host in
  // the same second: pass a filename_suffix); OS errors name the path.
  static absl::StatusOr<std::unique_ptr<EventWriter>> Create(
      const std::string& logdir, const EventWriterOptions& options = {});
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // The event file's full path.
  const std::string& filename() const { return filename_; }

  // Appends `event`; a wall_time of 0 becomes the current time.
  // FailedPrecondition after Close; an earlier write or background flush
  // error is returned by every later call.
  absl::Status WriteEvent(const ::tensorflow::Event& event);
  absl::Status WriteSummary(int64_t step, const ::tensorflow::Summary& summary);
  // One Summary with one simple_value.
  absl::Status WriteScalar(absl::string_view tag, int64_t step, float value);
  // The graph as Event.graph_def (serialized), at step 0.
  absl::Status WriteGraph(const ::tensorflow::GraphDef& graph);

  // Hands every written event to the OS.
  absl::Status Flush();
  // Flushes, closes the file and stops the flush thread; idempotent.
  absl::Status Close();

 private:
  EventWriter(std::unique_ptr<RecordWriter> file, absl::Duration flush_interval);
  absl::Status WriteLocked(const ::tensorflow::Event& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlushLoop();

  const std::string filename_;
  const absl::Duration flush_interval_;
  absl::Mutex mu_;
  std::unique_ptr<RecordWriter> file_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool dirty_ ABSL_GUARDED_BY(mu_) = false;  // written since the last flush
  absl::Status error_ ABSL_GUARDED_BY(mu_);   // first write/flush failure
  std::thread flusher_;
};

// Seconds since the Unix epoch, with sub-second precision (Event.wall_time).
double EventWallTimeNow();

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_EVENT_WRITER_H_
