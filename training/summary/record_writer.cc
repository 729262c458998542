#include "training/summary/record_writer.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
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

absl::StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Create(const std::string& path) {
  // "x": fail rather than truncate an existing file.
  std::FILE* file = std::fopen(path.c_str(), "wbx");
  if (file == nullptr) return OsError("cannot create record file", path);
  return std::unique_ptr<RecordWriter>(new RecordWriter(path, file));
}

RecordWriter::~RecordWriter() { Close().IgnoreError(); }

absl::Status RecordWriter::WriteRecord(absl::string_view data) {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("writing a record to '", path_, "' after it was closed"));
  }
  const std::string header = EncodeRecordHeader(data);
  const std::string footer = EncodeRecordFooter(data);
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size() ||
      std::fwrite(data.data(), 1, data.size(), file_) != data.size() ||
      std::fwrite(footer.data(), 1, footer.size(), file_) != footer.size()) {
    return OsError("cannot write a record to", path_);
  }
  bytes_written_ += header.size() + data.size() + footer.size();
  return absl::OkStatus();
}

absl::Status RecordWriter::Flush() {
  if (file_ == nullptr) return absl::OkStatus();
  if (std::fflush(file_) != 0) return OsError("cannot flush", path_);
  return absl::OkStatus();
}

absl::Status RecordWriter::Close() {
  if (file_ == nullptr) return absl::OkStatus();
  std::FILE* file = file_;
  file_ = nullptr;
  const bool flushed = std::fflush(file) == 0;
  const bool closed = std::fclose(file) == 0;
  if (!flushed || !closed) return OsError("cannot close", path_);
  return absl::OkStatus();
}

}  // namespace sluice
