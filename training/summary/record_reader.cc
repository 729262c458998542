#include "training/summary/record_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/crc32c.h"

namespace sluice {
namespace {

uint64_t DecodeLittleEndian(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int err = errno;
    const std::string message =
        absl::StrCat("cannot open record file '", path, "': ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
    return absl::InternalError(message);
  }
  return std::unique_ptr<RecordReader>(new RecordReader(path, file));
}

RecordReader::~RecordReader() { std::fclose(file_); }

absl::Status RecordReader::DataLoss(absl::string_view what) const {
  return absl::DataLossError(
      absl::StrCat(what, " in the record at byte ", offset_, " of '", path_, "'"));
}

absl::StatusOr<std::string> RecordReader::ReadRecord() {
  if (std::fseek(file_, static_cast<long>(offset_), SEEK_SET) != 0) {
    return absl::InternalError(absl::StrCat("cannot seek in '", path_, "'"));
  }
  unsigned char header[12];
  const size_t got = std::fread(header, 1, sizeof(header), file_);
  if (got == 0 && std::feof(file_)) {
    return absl::OutOfRangeError(absl::StrCat("end of '", path_, "' at byte ", offset_));
  }
  if (got != sizeof(header)) return DataLoss("truncated header");
  if (UnmaskCrc32c(static_cast<uint32_t>(DecodeLittleEndian(header + 8, 4))) !=
      Crc32c(header, 8)) {
    return DataLoss("length CRC mismatch");
  }
  const uint64_t length = DecodeLittleEndian(header, 8);
  // Read in bounded chunks so a huge (if CRC-valid) length on a short file
  // fails as truncation instead of allocating it all up front.
  std::string data;
  while (data.size() < length) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(length - data.size(), 1 << 20));
    const size_t old = data.size();
    data.resize(old + chunk);
    if (std::fread(data.data() + old, 1, chunk, file_) != chunk) {
      return DataLoss(absl::StrCat("truncated payload (", length, " bytes expected)"));
    }
  }
  unsigned char footer[4];
  if (std::fread(footer, 1, sizeof(footer), file_) != sizeof(footer)) {
    return DataLoss("truncated footer");
  }
  if (UnmaskCrc32c(static_cast<uint32_t>(DecodeLittleEndian(footer, 4))) !=
      Crc32c(data.data(), data.size())) {
    return DataLoss("payload CRC mismatch");
  }
  offset_ += sizeof(header) + length + sizeof(footer);
  return data;
}

absl::StatusOr<std::vector<std::string>> ReadAllRecords(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, RecordReader::Open(path));
  std::vector<std::string> records;
  while (true) {
    absl::StatusOr<std::string> record = reader->ReadRecord();
    if (absl::IsOutOfRange(record.status())) return records;
    if (!record.ok()) return record.status();
    records.push_back(*std::move(record));
  }
}

}  // namespace sluice
