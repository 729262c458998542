// RecordReader: reads TFRecord-framed records (record_writer.h) back,
// verifying the masked CRC-32C of every length and every payload, from a
// plain, ZLIB or GZIP file (record_compression.h; GZIP may hold several
// members one after the other, as `cat a.gz b.gz` makes). TensorBoard's
// event files and TensorFlow's .tfrecord files are such files.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> r, RecordReader::Open(path));
//   // or RecordReader::Open(path, RecordCompression::kGzip)
//   while (true) {
//     absl::StatusOr<std::string> rec = r->ReadRecord();
//     if (absl::IsOutOfRange(rec.status())) break;      // clean end of file
//     if (!rec.ok()) return rec.status();               // DataLoss, ...
//     ... parse *rec ...
//   }
//   // or all at once:
//   ASSIGN_OR_RETURN(std::vector<std::string> records, ReadAllRecords(path));
//
// Offsets count bytes of the uncompressed record stream. A file still being
// written may be read as it grows: a record not yet whole is DataLoss
// ("truncated ...") and the next ReadRecord tries it again.
//
// Thread-compatible. Ownership: the reader owns its open file.
#ifndef SLUICE_RUNTIME_IO_RECORD_READER_H_
#define SLUICE_RUNTIME_IO_RECORD_READER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/io/record_compression.h"

namespace sluice {

class RecordReader {
 public:
  // NotFound / PermissionDenied / Internal naming the path.
  static absl::StatusOr<std::unique_ptr<RecordReader>> Open(
      const std::string& path, RecordCompression compression = RecordCompression::kNone);
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // The next record's payload. OutOfRange at the end of the file (exactly on
  // a record boundary); DataLoss for a truncated record or a CRC mismatch,
  // naming the file and the record's byte offset (and, compressed, corrupt
  // compressed data). After an error the reader stays at the failed record.
  absl::StatusOr<std::string> ReadRecord();

  // Byte offset of the next record.
  uint64_t offset() const { return offset_; }

 private:
  class Inflater;  // a zlib stream (record_reader.cc)
  RecordReader(std::string path, std::FILE* file, std::unique_ptr<Inflater> inflater);
  absl::Status DataLoss(absl::string_view what) const;
  // Reads from the file until `n` bytes are pending or the file ends.
  absl::Status Fill(uint64_t n);
  size_t pending() const { return buffer_.size() - start_; }
  const char* pending_data() const { return buffer_.data() + start_; }

  std::string path_;
  std::FILE* file_;
  std::unique_ptr<Inflater> inflater_;  // null: uncompressed
  // Bytes of the record stream read but not yet returned start at
  // buffer_[start_] (stream offset offset_); a failed record stays there for
  // the next try. Returned records only advance start_: the buffer is
  // compacted when it must grow, not once per record.
  std::string buffer_;
  size_t start_ = 0;
  uint64_t offset_ = 0;
};

// Every record of the file, or the first error (OutOfRange is not one).
absl::StatusOr<std::vector<std::string>> ReadAllRecords(
    const std::string& path, RecordCompression compression = RecordCompression::kNone);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_RECORD_READER_H_
