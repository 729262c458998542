#include "runtime/io/event_writer.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

double EventWallTimeNow() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

absl::StatusOr<std::unique_ptr<EventWriter>> EventWriter::Create(
    const std::string& logdir, const EventWriterOptions& options) {
  if (logdir.empty()) return absl::InvalidArgumentError("EventWriter: empty logdir");
  if (options.flush_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("EventWriter: flush_interval must be positive, got ",
                     absl::FormatDuration(options.flush_interval)));
  }
  std::error_code ec;
  std::filesystem::create_directories(logdir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("EventWriter: cannot create logdir '", logdir, "': ", ec.message()));
  }
  const std::string& given = options.filename_suffix;
  const std::string suffix = given.empty() || given[0] == '.' ? given : absl::StrCat(".", given);
  const std::string path =
      absl::StrCat(logdir, logdir.back() == '/' ? "" : "/", "events.out.tfevents.",
                   absl::ToUnixSeconds(absl::Now()), ".", HostName(), suffix);
  ASSIGN_OR_RETURN(std::unique_ptr<RecordWriter> file, RecordWriter::Create(path));
  std::unique_ptr<EventWriter> writer(new EventWriter(std::move(file), options.flush_interval));
  ::tensorflow::Event version;
  version.set_file_version(std::string(kEventFileVersion));
  RETURN_IF_ERROR(writer->WriteEvent(version));
  RETURN_IF_ERROR(writer->Flush());
  return writer;
}

EventWriter::EventWriter(std::unique_ptr<RecordWriter> file, absl::Duration flush_interval)
    : filename_(file->path()), flush_interval_(flush_interval), file_(std::move(file)) {
  flusher_ = std::thread([this] { FlushLoop(); });
}

EventWriter::~EventWriter() { Close().IgnoreError(); }

void EventWriter::FlushLoop() {
  absl::MutexLock lock(&mu_);
  while (!closed_) {
    mu_.AwaitWithTimeout(absl::Condition(&closed_), flush_interval_);
    if (closed_ || !dirty_ || !error_.ok()) continue;
    error_ = file_->Flush();
    dirty_ = false;
  }
}

absl::Status EventWriter::WriteLocked(const ::tensorflow::Event& event) {
  if (closed_) {
    return absl::FailedPreconditionError(
        absl::StrCat("EventWriter: writing to '", filename_, "' after Close"));
  }
  RETURN_IF_ERROR(error_);
  std::string bytes;
  if (event.wall_time() == 0) {
    ::tensorflow::Event stamped = event;
    stamped.set_wall_time(EventWallTimeNow());
    bytes = stamped.SerializeAsString();
  } else {
    bytes = event.SerializeAsString();
  }
  error_ = file_->WriteRecord(bytes);
  dirty_ = true;
  return error_;
}

absl::Status EventWriter::WriteEvent(const ::tensorflow::Event& event) {
  absl::MutexLock lock(&mu_);
  return WriteLocked(event);
}

absl::Status EventWriter::WriteSummary(int64_t step, const ::tensorflow::Summary& summary) {
  ::tensorflow::Event event;
  event.set_step(step);
  *event.mutable_summary() = summary;
  return WriteEvent(event);
}

absl::Status EventWriter::WriteScalar(absl::string_view tag, int64_t step, float value) {
  ::tensorflow::Summary summary;
  ::tensorflow::Summary::Value* v = summary.add_value();
  v->set_tag(std::string(tag));
  v->set_simple_value(value);
  return WriteSummary(step, summary);
}

absl::Status EventWriter::WriteGraph(const ::tensorflow::GraphDef& graph) {
  ::tensorflow::Event event;
  if (!graph.SerializeToString(event.mutable_graph_def())) {
    return absl::InvalidArgumentError(
        absl::StrCat("EventWriter: cannot serialize the GraphDef for '", filename_, "'"));
  }
  return WriteEvent(event);
}

absl::Status EventWriter::Flush() {
  absl::MutexLock lock(&mu_);
  if (closed_) return error_;
  RETURN_IF_ERROR(error_);
  error_ = file_->Flush();
  dirty_ = false;
  return error_;
}

absl::Status EventWriter::Close() {
  bool stop_flusher = false;
  {
    absl::MutexLock lock(&mu_);
    if (!closed_) {
      closed_ = true;
      stop_flusher = true;
      absl::Status s = file_->Close();
      if (error_.ok()) error_ = s;
    }
  }
  // Only the call that closed joins, so concurrent Close calls are safe.
  if (stop_flusher) flusher_.join();
  absl::MutexLock lock(&mu_);
  return error_;
}

}  // namespace sluice
