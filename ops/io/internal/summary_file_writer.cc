#include "ops/io/internal/summary_file_writer.h"

#include <unistd.h>

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/io/file_write_policy.h"

namespace sluice {
namespace {

// Files this process opened: part of each name, so writers opened in the
// same second get distinct files.
std::atomic<int64_t> files_opened{0};

// The shortest background flush: a smaller flush_millis is honoured at
// write time instead.
constexpr absl::Duration kMinBackgroundFlush = absl::Milliseconds(100);

}  // namespace

SummaryFileWriter::~SummaryFileWriter() { Close().IgnoreError(); }

std::string SummaryFileWriter::DebugString() const {
  return absl::StrCat("summary writer '", name_, "'");
}

absl::Status SummaryFileWriter::Open(const Options& options) {
  absl::MutexLock lock(&mu_);
  if (file_ != nullptr) return absl::OkStatus();
  if (options.logdir.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(DebugString(), ": empty logdir"));
  }
  RETURN_IF_ERROR(CheckGraphFileWrite(options.logdir));
  EventWriterOptions o;
  o.filename_suffix = absl::StrCat(getpid(), ".", files_opened.fetch_add(1), options.filename_suffix);
  o.flush_interval = std::max(absl::Milliseconds(options.flush_millis), kMinBackgroundFlush);
  ASSIGN_OR_RETURN(file_, EventWriter::Create(options.logdir, o));
  ever_opened_ = true;
  max_queue_ = options.max_queue;
  flush_every_ = absl::Milliseconds(options.flush_millis);
  unflushed_ = 0;
  last_flush_ = absl::Now();
  return absl::OkStatus();
}

bool SummaryFileWriter::is_open() {
  absl::MutexLock lock(&mu_);
  return file_ != nullptr;
}

std::string SummaryFileWriter::filename() {
  absl::MutexLock lock(&mu_);
  return file_ == nullptr ? "" : file_->filename();
}

absl::Status SummaryFileWriter::OpenError() const {
  return absl::FailedPreconditionError(
      absl::StrCat(DebugString(), ever_opened_ ? " was closed" : " was never opened",
                   ": run its CreateSummaryFileWriter first"));
}

absl::Status SummaryFileWriter::WriteLocked(::tensorflow::Event event) {
  if (file_ == nullptr) return OpenError();
  if (event.wall_time() == 0) event.set_wall_time(EventWallTimeNow());
  RETURN_IF_ERROR(file_->WriteEvent(event));
  ++unflushed_;
  const absl::Time now = absl::Now();
  if (unflushed_ > max_queue_ || now - last_flush_ > flush_every_) {
    RETURN_IF_ERROR(file_->Flush());
    unflushed_ = 0;
    last_flush_ = now;
  }
  return absl::OkStatus();
}

absl::Status SummaryFileWriter::WriteSummary(int64_t step, ::tensorflow::Summary summary) {
  ::tensorflow::Event event;
  event.set_step(step);
  *event.mutable_summary() = std::move(summary);
  absl::MutexLock lock(&mu_);
  return WriteLocked(std::move(event));
}

absl::Status SummaryFileWriter::WriteGraph(int64_t step, std::string serialized_graph) {
  ::tensorflow::Event event;
  event.set_step(step);
  event.set_graph_def(std::move(serialized_graph));
  absl::MutexLock lock(&mu_);
  return WriteLocked(std::move(event));
}

absl::Status SummaryFileWriter::WriteEvent(::tensorflow::Event event) {
  absl::MutexLock lock(&mu_);
  return WriteLocked(std::move(event));
}

absl::Status SummaryFileWriter::Flush() {
  absl::MutexLock lock(&mu_);
  if (file_ == nullptr) return OpenError();
  unflushed_ = 0;
  last_flush_ = absl::Now();
  return file_->Flush();
}

absl::Status SummaryFileWriter::Close() {
  std::unique_ptr<EventWriter> file;
  {
    absl::MutexLock lock(&mu_);
    file = std::move(file_);
  }
  return file == nullptr ? absl::OkStatus() : file->Close();
}

}  // namespace sluice
