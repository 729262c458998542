// RecordWriter: appends TFRecord-framed records to a file, the container
// format of TensorBoard event files (and of TensorFlow's .tfrecord files).
// Each record is
//
//   uint64  length            little-endian
//   uint32  masked crc32c of the 8 length bytes
//   byte    data[length]
//   uint32  masked crc32c of data
//
// with MaskCrc32c from runtime/crc32c.h. RecordReader (record_reader.h) reads
// them back.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<RecordWriter> w,
//                    RecordWriter::Create("/tmp/run/events.out.tfevents.1.host"));
//   RETURN_IF_ERROR(w->WriteRecord(event.SerializeAsString()));
//   RETURN_IF_ERROR(w->Flush());        // data reaches the OS
//   RETURN_IF_ERROR(w->Close());        // also done by the destructor
//
// Thread-compatible: callers serialize access (EventWriter holds a lock).
// Ownership: the writer owns its open file and closes it on destruction.
#ifndef SLUICE_TRAINING_SUMMARY_RECORD_WRITER_H_
#define SLUICE_TRAINING_SUMMARY_RECORD_WRITER_H_

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {

// The 12-byte header (length + its masked CRC) and the 4-byte footer (masked
// CRC of the data) framing `data`.
std::string EncodeRecordHeader(absl::string_view data);
std::string EncodeRecordFooter(absl::string_view data);
// Header + data + footer.
std::string EncodeRecord(absl::string_view data);

class RecordWriter {
 public:
  // Creates `path` for writing. AlreadyExists when the file exists (a writer
  // never overwrites), other errors name the path and the OS's reason.
  static absl::StatusOr<std::unique_ptr<RecordWriter>> Create(const std::string& path);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Buffers one framed record. FailedPrecondition after Close; errors from
  // the OS (disk full, ...) name the file.
  absl::Status WriteRecord(absl::string_view data);
  // Hands buffered records to the OS (fflush; no fsync).
  absl::Status Flush();
  // Flushes and closes; later calls of Close are no-ops.
  absl::Status Close();

  const std::string& path() const { return path_; }
  // Bytes written so far, framing included.
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  RecordWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}

  std::string path_;
  std::FILE* file_;  // nullptr once closed
  uint64_t bytes_written_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_SUMMARY_RECORD_WRITER_H_
