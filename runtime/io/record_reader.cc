#include "runtime/io/record_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/crc32c.h"

namespace sluice {
namespace {

constexpr size_t kHeaderBytes = 12;  // length (8) + its masked CRC (4)
constexpr size_t kFooterBytes = 4;   // the payload's masked CRC
constexpr size_t kChunk = 1 << 16;   // file bytes read at a time

uint64_t DecodeLittleEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

// One inflate stream over the file; a GZIP file's next member starts a new
// one where the last ended.
class RecordReader::Inflater {
 public:
  explicit Inflater(RecordCompression compression) : compression_(compression) {}
  ~Inflater() {
    if (initialized_) inflateEnd(&stream_);
  }

  absl::Status Init() {
    if (inflateInit2(&stream_, ZlibWindowBits(compression_)) != Z_OK) {
      return absl::InternalError("cannot start a zlib stream");
    }
    initialized_ = true;
    return absl::OkStatus();
  }

  // Appends to `out` what the file's next bytes decompress to. False once
  // the file has no more bytes (then truncated() tells whether it ended
  // inside a stream). An error names what is wrong; the caller adds the file.
  absl::StatusOr<bool> Inflate(std::FILE* file, std::string* out) {
    if (stream_.avail_in == 0) {
      std::clearerr(file);  // a growing file may have more now
      input_.resize(kChunk);
      const size_t got = std::fread(input_.data(), 1, input_.size(), file);
      input_.resize(got);
      if (got == 0) {
        truncated_ = started_ && !stream_ended_;
        return false;
      }
      stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
      stream_.avail_in = static_cast<uInt>(got);
    }
    if (stream_ended_) {
      // Another gzip member follows (or, for ZLIB, trailing bytes).
      if (compression_ != RecordCompression::kGzip) {
        return absl::DataLossError(absl::StrCat("bytes after the end of the ", name(), " stream"));
      }
      inflateReset(&stream_);
      stream_ended_ = false;
    }
    started_ = true;
    truncated_ = false;
    // Straight into `out`'s tail: no copy of the inflated bytes.
    const size_t old = out->size();
    out->resize(old + kChunk);
    stream_.next_out = reinterpret_cast<Bytef*>(out->data() + old);
    stream_.avail_out = kChunk;
    const uInt before = stream_.avail_in;
    const int rc = inflate(&stream_, Z_NO_FLUSH);
    consumed_ += before - stream_.avail_in;
    out->resize(old + kChunk - stream_.avail_out);
    if (rc == Z_STREAM_END) {
      stream_ended_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return absl::DataLossError(absl::StrCat("corrupt ", name(), " data (",
                                              stream_.msg != nullptr ? stream_.msg : "zlib error",
                                              ") near compressed byte ", consumed_));
    }
    return true;
  }

  absl::string_view name() const { return RecordCompressionName(compression_); }
  // The file ended inside a compressed stream.
  bool truncated() const { return truncated_; }

 private:
  const RecordCompression compression_;
  z_stream stream_{};
  bool initialized_ = false;
  bool started_ = false;
  bool stream_ended_ = false;
  bool truncated_ = false;
  uint64_t consumed_ = 0;
  std::string input_;
};

RecordReader::RecordReader(std::string path, std::FILE* file, std::unique_ptr<Inflater> inflater)
    : path_(std::move(path)), file_(file), inflater_(std::move(inflater)) {}

absl::StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path,
                                                                 RecordCompression compression) {
  std::unique_ptr<Inflater> inflater;
  if (compression != RecordCompression::kNone) {
    inflater = std::make_unique<Inflater>(compression);
    absl::Status s = inflater->Init();
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(s.message(), " for '", path, "'"));
  }
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int err = errno;
    const std::string message =
        absl::StrCat("cannot open record file '", path, "': ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
    return absl::InternalError(message);
  }
  return std::unique_ptr<RecordReader>(new RecordReader(path, file, std::move(inflater)));
}

RecordReader::~RecordReader() { std::fclose(file_); }

absl::Status RecordReader::DataLoss(absl::string_view what) const {
  return absl::DataLossError(
      absl::StrCat(what, " in the record at byte ", offset_, " of '", path_, "'"));
}

absl::Status RecordReader::Fill(uint64_t n) {
  // Grows the buffer only as bytes arrive, so a huge (if CRC-valid) length on
  // a short file ends as truncation instead of allocating it up front.
  if (pending() >= n) return absl::OkStatus();
  buffer_.erase(0, start_);  // once per refill, not once per record
  start_ = 0;
  while (buffer_.size() < n) {
    if (inflater_ != nullptr) {
      absl::StatusOr<bool> more = inflater_->Inflate(file_, &buffer_);
      if (!more.ok()) {
        return absl::DataLossError(absl::StrCat(more.status().message(), " in '", path_, "'"));
      }
      if (!*more) return absl::OkStatus();
    } else {
      std::clearerr(file_);  // a growing file may have more now
      const size_t old = buffer_.size();
      const size_t want = static_cast<size_t>(std::min<uint64_t>(n - old, kChunk));
      buffer_.resize(old + want);
      const size_t got = std::fread(buffer_.data() + old, 1, want, file_);
      buffer_.resize(old + got);
      if (got == 0) return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> RecordReader::ReadRecord() {
  RETURN_IF_ERROR(Fill(kHeaderBytes));
  if (pending() == 0) {
    if (inflater_ != nullptr && inflater_->truncated()) {
      return DataLoss(absl::StrCat("truncated ", inflater_->name(), " stream"));
    }
    return absl::OutOfRangeError(absl::StrCat("end of '", path_, "' at byte ", offset_));
  }
  if (pending() < kHeaderBytes) return DataLoss("truncated header");
  if (UnmaskCrc32c(static_cast<uint32_t>(DecodeLittleEndian(pending_data() + 8, 4))) !=
      Crc32c(pending_data(), 8)) {
    return DataLoss("length CRC mismatch");
  }
  const uint64_t length = DecodeLittleEndian(pending_data(), 8);
  RETURN_IF_ERROR(Fill(kHeaderBytes + length));
  if (pending() - kHeaderBytes < length) {
    return DataLoss(absl::StrCat("truncated payload (", length, " bytes expected)"));
  }
  RETURN_IF_ERROR(Fill(kHeaderBytes + length + kFooterBytes));
  if (pending() < kHeaderBytes + length + kFooterBytes) return DataLoss("truncated footer");
  const char* data = pending_data() + kHeaderBytes;
  if (UnmaskCrc32c(static_cast<uint32_t>(DecodeLittleEndian(data + length, 4))) !=
      Crc32c(data, length)) {
    return DataLoss("payload CRC mismatch");
  }
  std::string record(data, length);
  start_ += kHeaderBytes + length + kFooterBytes;
  offset_ += kHeaderBytes + length + kFooterBytes;
  return record;
}

absl::StatusOr<std::vector<std::string>> ReadAllRecords(const std::string& path,
                                                        RecordCompression compression) {
  ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, RecordReader::Open(path, compression));
  std::vector<std::string> records;
  while (true) {
    absl::StatusOr<std::string> record = reader->ReadRecord();
    if (absl::IsOutOfRange(record.status())) return records;
    if (!record.ok()) return record.status();
    records.push_back(*std::move(record));
  }
}

}  // namespace sluice
