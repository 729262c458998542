#include "runtime/io/record_writer.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/crc32c.h"

namespace sluice {
namespace {

void AppendLittleEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

absl::Status OsError(absl::string_view what, const std::string& path) {
  const int err = errno;
  const std::string message = absl::StrCat(what, " '", path, "': ", std::strerror(err));
  if (err == EEXIST) return absl::AlreadyExistsError(message);
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  if (err == ENOSPC) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

}  // namespace

// One deflate stream over the whole file (zlib's own streaming API; no
// wrapper library is needed for a single stream).
class RecordWriter::Deflater {
 public:
  ~Deflater() {
    if (initialized_) deflateEnd(&stream_);
  }

  absl::Status Init(RecordCompression compression) {
    if (deflateInit2(&stream_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, ZlibWindowBits(compression),
                     /*memLevel=*/8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return absl::InternalError("cannot start a zlib stream");
    }
    initialized_ = true;
    return absl::OkStatus();
  }

  // Compresses `bytes` with `flush` (Z_NO_FLUSH, Z_SYNC_FLUSH, Z_FINISH) and
  // writes what zlib hands back to `file`. False when the file refuses it.
  bool Write(absl::string_view bytes, int flush, std::FILE* file) {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    stream_.avail_in = static_cast<uInt>(bytes.size());
    unsigned char out[1 << 16];
    do {
      stream_.next_out = out;
      stream_.avail_out = sizeof(out);
      const int rc = deflate(&stream_, flush);
      if (rc == Z_STREAM_ERROR) return false;
      const size_t have = sizeof(out) - stream_.avail_out;
      if (have > 0 && std::fwrite(out, 1, have, file) != have) return false;
    } while (stream_.avail_out == 0 || stream_.avail_in > 0);
    return true;
  }

 private:
  z_stream stream_{};
  bool initialized_ = false;
};

std::string EncodeRecordHeader(absl::string_view data) {
  std::string header;
  header.reserve(12);
  AppendLittleEndian(&header, data.size(), 8);
  AppendLittleEndian(&header, MaskCrc32c(Crc32c(header.data(), 8)), 4);
  return header;
}

std::string EncodeRecordFooter(absl::string_view data) {
  std::string footer;
  AppendLittleEndian(&footer, MaskCrc32c(Crc32c(data.data(), data.size())), 4);
  return footer;
}

std::string EncodeRecord(absl::string_view data) {
  return absl::StrCat(EncodeRecordHeader(data), data, EncodeRecordFooter(data));
}

RecordWriter::RecordWriter(std::string path, std::FILE* file, std::unique_ptr<Deflater> deflater)
    : path_(std::move(path)), file_(file), deflater_(std::move(deflater)) {}

absl::StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Create(const std::string& path,
                                                                   RecordCompression compression) {
  std::unique_ptr<Deflater> deflater;
  if (compression != RecordCompression::kNone) {
    deflater = std::make_unique<Deflater>();
    absl::Status s = deflater->Init(compression);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(s.message(), " for '", path, "'"));
  }
  // "x": fail rather than truncate an existing file.
  std::FILE* file = std::fopen(path.c_str(), "wbx");
  if (file == nullptr) return OsError("cannot create record file", path);
  return std::unique_ptr<RecordWriter>(new RecordWriter(path, file, std::move(deflater)));
}

absl::Status RecordWriter::Put(absl::string_view bytes) {
  const bool ok = deflater_ != nullptr
                      ? deflater_->Write(bytes, Z_NO_FLUSH, file_)
                      : std::fwrite(bytes.data(), 1, bytes.size(), file_) == bytes.size();
  return ok ? absl::OkStatus() : OsError("cannot write a record to", path_);
}

RecordWriter::~RecordWriter() { Close().IgnoreError(); }

absl::Status RecordWriter::WriteRecord(absl::string_view data) {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("writing a record to '", path_, "' after it was closed"));
  }
  const std::string header = EncodeRecordHeader(data);
  const std::string footer = EncodeRecordFooter(data);
  RETURN_IF_ERROR(Put(header));
  RETURN_IF_ERROR(Put(data));
  RETURN_IF_ERROR(Put(footer));
  bytes_written_ += header.size() + data.size() + footer.size();
  return absl::OkStatus();
}

absl::Status RecordWriter::Flush() {
  if (file_ == nullptr) return absl::OkStatus();
  if (deflater_ != nullptr && !deflater_->Write("", Z_SYNC_FLUSH, file_)) {
    return OsError("cannot flush", path_);
  }
  if (std::fflush(file_) != 0) return OsError("cannot flush", path_);
  return absl::OkStatus();
}

absl::Status RecordWriter::Close() {
  if (file_ == nullptr) return absl::OkStatus();
  std::FILE* file = file_;
  file_ = nullptr;
  const bool finished = deflater_ == nullptr || deflater_->Write("", Z_FINISH, file);
  deflater_ = nullptr;
  const bool flushed = finished && std::fflush(file) == 0;
  const bool closed = std::fclose(file) == 0;
  if (!flushed || !closed) return OsError("cannot close", path_);
  return absl::OkStatus();
}

}  // namespace sluice
