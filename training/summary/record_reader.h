// RecordReader: reads TFRecord-framed records (record_writer.h) back,
// verifying the masked CRC-32C of every length and every payload. For tests
// and tools (event file dumps); TensorBoard reads the same files.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> r, RecordReader::Open(path));
//   while (true) {
//     absl::StatusOr<std::string> rec = r->ReadRecord();
//     if (absl::IsOutOfRange(rec.status())) break;      // clean end of file
//     if (!rec.ok()) return rec.status();               // DataLoss, ...
//     ... parse *rec ...
//   }
//   // or all at once:
//   ASSIGN_OR_RETURN(std::vector<std::string> records, ReadAllRecords(path));
//
// Thread-compatible. Ownership: the reader owns its open file.
#ifndef SLUICE_TRAINING_SUMMARY_RECORD_READER_H_
#define SLUICE_TRAINING_SUMMARY_RECORD_READER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice {

class RecordReader {
 public:
  // NotFound / PermissionDenied / Internal naming the path.
  static absl::StatusOr<std::unique_ptr<RecordReader>> Open(const std::string& path);
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // The next record's payload. OutOfRange at the end of the file (exactly on
  // a record boundary); DataLoss for a truncated record or a CRC mismatch,
  // naming the file and the record's byte offset. After an error the reader
  // stays at the failed record.
  absl::StatusOr<std::string> ReadRecord();

  // Byte offset of the next record.
  uint64_t offset() const { return offset_; }

 private:
  RecordReader(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  absl::Status DataLoss(absl::string_view what) const;

  std::string path_;
  std::FILE* file_;
  uint64_t offset_ = 0;
};

// Every record of the file, or the first error (OutOfRange is not one).
absl::StatusOr<std::vector<std::string>> ReadAllRecords(const std::string& path);

}  // namespace sluice

#endif  // SLUICE_TRAINING_SUMMARY_RECORD_READER_H_
