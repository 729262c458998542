#include "ops/io/internal/reader.h"

#include <cstdio>
#include <utility>

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/io/record_reader.h"

namespace sluice {
namespace {

class TFRecordFormat : public RecordFormat {
 public:
  explicit TFRecordFormat(RecordCompression c) : compression_(c) {}
  absl::Status Open(const std::string& path) override {
    path_ = path;
    ASSIGN_OR_RETURN(reader_, RecordReader::Open(path, compression_));
    return absl::OkStatus();
  }
  absl::Status Next(std::string* key, std::string* value, bool* at_end) override {
    const uint64_t offset = reader_->offset();
    absl::StatusOr<std::string> rec = reader_->ReadRecord();
    if (absl::IsOutOfRange(rec.status())) {
      *at_end = true;
      return absl::OkStatus();
    }
    if (!rec.ok()) return rec.status();  // names the file and offset
    *at_end = false;
    *key = absl::StrCat(path_, ":", offset);
    *value = *std::move(rec);
    return absl::OkStatus();
  }
  void Close() override { reader_.reset(); }
  std::string Name() const override { return "TFRecordReader"; }

 private:
  const RecordCompression compression_;
  std::string path_;
  std::unique_ptr<RecordReader> reader_;
};

// Reads a whole file, inflating it for ZLIB/GZIP.
absl::StatusOr<std::string> ReadFile(const std::string& path, RecordCompression c) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open for reading"));
  std::string raw;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) raw.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::DataLossError(absl::StrCat(path, ": read error"));
  if (c == RecordCompression::kNone) return raw;
  z_stream z{};
  if (inflateInit2(&z, ZlibWindowBits(c)) != Z_OK) return absl::InternalError("inflateInit2 failed");
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(raw.data());
  z.avail_in = static_cast<uInt>(raw.size());
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
    if (rc == Z_STREAM_END && c == RecordCompression::kGzip && z.avail_in > 0) {
      inflateReset(&z);  // another gzip member follows
      continue;
    }
    if (rc != Z_OK) break;
    if (z.avail_in == 0 && z.avail_out != 0) break;
  }
  const uint64_t consumed = z.total_in;
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    return absl::DataLossError(absl::StrCat(path, ": corrupt or truncated ",
                                            RecordCompressionName(c), " data near compressed byte ",
                                            consumed));
  }
  return out;
}

class FixedLengthFormat : public RecordFormat {
 public:
  explicit FixedLengthFormat(const FixedLengthOptions& o) : o_(o) {}
  absl::Status Open(const std::string& path) override {
    path_ = path;
    ASSIGN_OR_RETURN(data_, ReadFile(path, o_.encoding));
    const int64_t size = static_cast<int64_t>(data_.size());
    if (size < o_.header_bytes + o_.footer_bytes) {
      return absl::DataLossError(absl::StrCat(path, ": ", size, " bytes, fewer than header_bytes ",
                                              o_.header_bytes, " + footer_bytes ",
                                              o_.footer_bytes));
    }
    end_ = size - o_.footer_bytes;
    record_number_ = 0;
    return absl::OkStatus();
  }
  absl::Status Next(std::string* key, std::string* value, bool* at_end) override {
    const int64_t start = o_.header_bytes + record_number_ * (o_.hop_bytes > 0 ? o_.hop_bytes
                                                                               : o_.record_bytes);
    const int64_t left = end_ - start;
    // With hop_bytes, windows overlap or skip: a tail shorter than a record
    // ends the file; back to back, it is a short record.
    if (left <= 0 || (o_.hop_bytes > 0 && left < o_.record_bytes)) {
      *at_end = true;
      return absl::OkStatus();
    }
    if (left < o_.record_bytes) {
      return absl::DataLossError(absl::StrCat(
          path_, ": record ", record_number_, " at offset ", start, " is short: ", left,
          " bytes before the footer, record_bytes is ", o_.record_bytes));
    }
    *at_end = false;
    *key = absl::StrCat(path_, ":", record_number_);
    value->assign(data_, start, o_.record_bytes);
    ++record_number_;
    return absl::OkStatus();
  }
  void Close() override {
    data_.clear();
    data_.shrink_to_fit();
  }
  std::string Name() const override { return "FixedLengthRecordReader"; }

 private:
  const FixedLengthOptions o_;
  std::string path_, data_;
  int64_t end_ = 0, record_number_ = 0;
};

}  // namespace

std::unique_ptr<RecordFormat> MakeTFRecordFormat(RecordCompression compression) {
  return std::make_unique<TFRecordFormat>(compression);
}

std::unique_ptr<RecordFormat> MakeFixedLengthFormat(const FixedLengthOptions& options) {
  return std::make_unique<FixedLengthFormat>(options);
}

void ReaderState::Read(Queue* queue, int64_t n, bool up_to, Done done,
                       std::function<void(Queue::Cancel)> on_wait) {
  auto job = std::make_shared<Job>();
  job->on_wait = std::move(on_wait);
  job->queue = queue;
  job->n = n;
  job->up_to = up_to;
  job->done = std::move(done);
  {
    absl::MutexLock lock(&mu_);
    jobs_.push_back(job);
    if (busy_) return;
    busy_ = true;
  }
  RunNext();
}

void ReaderState::RunNext() {
  std::shared_ptr<Job> job;
  {
    absl::MutexLock lock(&mu_);
    job = TakeNextLocked();
  }
  if (job != nullptr) Start(job);
}

std::shared_ptr<ReaderState::Job> ReaderState::TakeNextLocked() {
  if (jobs_.empty()) {
    busy_ = false;
    return nullptr;
  }
  std::shared_ptr<Job> job = jobs_.front();
  jobs_.pop_front();
  return job;
}

void ReaderState::Start(std::shared_ptr<Job> job) {
  if (job->n <= 0) {
    Finish(job, job->n == 0 ? absl::OkStatus()
                            : absl::InvalidArgumentError(absl::StrCat(
                                  "num_records must be positive, got ", job->n)));
    return;
  }
  Continue(job);
}

void ReaderState::Continue(std::shared_ptr<Job> job) {
  while (true) {
    absl::Status status;
    bool need_work = false, done = false;
    {
      absl::MutexLock lock(&mu_);
      if (!has_work_) {
        need_work = true;
      } else {
        std::string key, value;
        bool at_end = false;
        status = format_->Next(&key, &value, &at_end);
        if (status.ok() && at_end) {
          format_->Close();
          has_work_ = false;
          ++completed_;
          continue;
        }
        if (status.ok()) {
          job->keys.push_back(std::move(key));
          job->values.push_back(std::move(value));
          ++produced_;
          done = static_cast<int64_t>(job->keys.size()) >= job->n;
        }
      }
    }
    if (!status.ok() || done) {
      Finish(job, status);
      return;
    }
    if (need_work) {
      auto self = shared_from_this();
      Queue::Cancel cancel =
          job->queue->Dequeue(1, [self, job](absl::StatusOr<std::vector<Queue::Tuple>> got) {
            self->StartWork(job, std::move(got));
          });
      if (job->on_wait) job->on_wait(std::move(cancel));
      return;
    }
  }
}

void ReaderState::StartWork(std::shared_ptr<Job> job,
                            absl::StatusOr<std::vector<Queue::Tuple>> got) {
  if (!got.ok()) {
    Finish(job, got.status());
    return;
  }
  const Queue::Tuple& t = (*got)[0];
  if (t.size() != 1 || t[0].dtype() != DT_STRING || t[0].NumElements() != 1) {
    Finish(job, absl::InvalidArgumentError(absl::StrCat(
                    "Expected to dequeue a one-element string tensor, got a tuple of ", t.size(),
                    t.empty() ? "" : absl::StrCat(" starting with ", t[0].DebugString(3)))));
    return;
  }
  const std::string path = t[0].flat<std::string>()[0];
  absl::Status s;
  {
    absl::MutexLock lock(&mu_);
    s = format_->Open(path);
    has_work_ = s.ok();
  }
  if (!s.ok()) {
    Finish(job, s);
    return;
  }
  Continue(job);
}

void ReaderState::Finish(std::shared_ptr<Job> job, absl::Status status) {
  if (job->up_to && absl::IsOutOfRange(status) && !job->keys.empty()) status = absl::OkStatus();
  if (!status.ok() && !absl::IsOutOfRange(status)) {
    status = absl::Status(status.code(), absl::StrCat(format_name(), ": ", status.message()));
  }
  // The next job is taken (or the reader marked idle) before `done` runs, so
  // that whatever `done` lets run next sees the reader idle.
  std::shared_ptr<Job> next;
  {
    absl::MutexLock lock(&mu_);
    next = TakeNextLocked();
  }
  job->done(std::move(status), std::move(job->keys), std::move(job->values));
  if (next != nullptr) Start(next);
}

absl::Status ReaderState::Reset() {
  absl::MutexLock lock(&mu_);
  if (busy_) return absl::UnimplementedError("cannot reset a reader while a read is under way");
  if (has_work_) format_->Close();
  has_work_ = false;
  produced_ = 0;
  completed_ = 0;
  return absl::OkStatus();
}

int64_t ReaderState::num_records_produced() const {
  absl::MutexLock lock(&mu_);
  return produced_;
}

int64_t ReaderState::num_work_units_completed() const {
  absl::MutexLock lock(&mu_);
  return completed_;
}

}  // namespace sluice
