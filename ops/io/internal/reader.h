// The state behind TensorFlow 1.x's reader ops (ops/io/reader_ops.h): a
// reader takes file names one at a time from a queue (ops/data_flow/queue.h)
// and returns the records of each file in turn as (key, value) pairs.
// Formats: TFRecord files (plain, ZLIB or GZIP; runtime/io/record_reader.h)
// and fixed-length records (header, records every hop_bytes, footer; the
// file plain, ZLIB or GZIP).
//
//   auto reader = std::make_shared<ReaderState>(MakeTFRecordFormat(RecordCompression::kNone));
//   reader->Read(queue, /*n=*/10, /*up_to=*/true,
//                [](absl::Status s, std::vector<std::string> keys,
//                   std::vector<std::string> values) { ... });
//
// Semantics (TensorFlow's ReaderBase): a read that needs a file dequeues
// one (a tuple of one string scalar) and waits while the queue is empty; a
// file's end finishes that work unit and the read goes on with the next
// file. Read(n, up_to = false) ends once it has n records; with up_to a
// closed, drained queue ends it with the records it has, OutOfRange only
// when it has none. Keys are "<file>:<offset>" (TFRecord, the record's byte
// offset) or "<file>:<record number>" (fixed length). Errors name the file
// and offset: DataLoss for a bad record (truncated, CRC mismatch, a short
// fixed-length record), NotFound for a file that cannot be opened,
// InvalidArgument for a work item that is no string scalar. After an error
// the reader stays on the failing file.
//
// Thread-safe: reads on one reader run one after another in arrival order
// (a read waiting on the queue holds no thread and no lock); `done` runs on
// the thread that completed the read. Ownership: callbacks hold the state
// through shared_ptr, so a pending read outlives the resource that made it.
#ifndef SLUICE_OPS_IO_INTERNAL_READER_H_
#define SLUICE_OPS_IO_INTERNAL_READER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "ops/data_flow/queue.h"
#include "runtime/io/record_compression.h"

namespace sluice {

// One file format: opens a file and returns its records.
class RecordFormat {
 public:
  virtual ~RecordFormat() = default;
  // Opens `path` (the previous file, if any, is closed).
  virtual absl::Status Open(const std::string& path) = 0;
  // The next record; *at_end at the file's end (key and value unset).
  virtual absl::Status Next(std::string* key, std::string* value, bool* at_end) = 0;
  virtual void Close() = 0;
  virtual std::string Name() const = 0;  // "TFRecordReader"
};

std::unique_ptr<RecordFormat> MakeTFRecordFormat(RecordCompression compression);

struct FixedLengthOptions {
  int64_t header_bytes = 0;
  int64_t record_bytes = 0;  // > 0
  int64_t footer_bytes = 0;
  int64_t hop_bytes = 0;  // 0: records back to back
  RecordCompression encoding = RecordCompression::kNone;
};
std::unique_ptr<RecordFormat> MakeFixedLengthFormat(const FixedLengthOptions& options);

class ReaderState : public std::enable_shared_from_this<ReaderState> {
 public:
  using Done = std::function<void(absl::Status, std::vector<std::string> keys,
                                  std::vector<std::string> values)>;
  explicit ReaderState(std::unique_ptr<RecordFormat> format)
      : name_(format->Name()), format_(std::move(format)) {}

  // `on_wait`, when set, is handed the cancel function of each dequeue the
  // read waits on (a kernel arms its step's abort watch with it).
  void Read(Queue* queue, int64_t n, bool up_to, Done done,
            std::function<void(Queue::Cancel)> on_wait = nullptr);
  // Forgets the current file and the counters (Unimplemented while a read
  // is under way, as nothing could be reset consistently).
  absl::Status Reset();
  int64_t num_records_produced() const;
  int64_t num_work_units_completed() const;

 private:
  struct Job {
    Queue* queue;
    int64_t n;
    bool up_to;
    Done done;
    std::function<void(Queue::Cancel)> on_wait;
    std::vector<std::string> keys, values;
  };
  void RunNext();
  std::shared_ptr<Job> TakeNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Start(std::shared_ptr<Job> job);
  void Continue(std::shared_ptr<Job> job);
  void Finish(std::shared_ptr<Job> job, absl::Status status);
  void StartWork(std::shared_ptr<Job> job, absl::StatusOr<std::vector<Queue::Tuple>> got);
  std::string format_name() const { return name_; }

  const std::string name_;
  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  // Touched only by the one running job (busy_), under mu_ for readers of
  // the counters.
  std::unique_ptr<RecordFormat> format_ ABSL_GUARDED_BY(mu_);
  bool has_work_ ABSL_GUARDED_BY(mu_) = false;
  int64_t produced_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sluice

#endif  // SLUICE_OPS_IO_INTERNAL_READER_H_
