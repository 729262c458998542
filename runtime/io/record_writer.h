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
// them back. With ZLIB or GZIP compression (record_compression.h) the same
// bytes go through one zlib deflate stream, as TensorFlow writes them.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<RecordWriter> w,
//                    RecordWriter::Create("/tmp/run/events.out.tfevents.1.host"));
//   // or RecordWriter::Create("/data/train-00000.tfrecord.gz", RecordCompression::kGzip)
//   RETURN_IF_ERROR(w->WriteRecord(event.SerializeAsString()));
//   RETURN_IF_ERROR(w->Flush());        // data reaches the OS (a sync point when compressed)
//   RETURN_IF_ERROR(w->Close());        // also done by the destructor
//
// Thread-compatible: callers serialize access (EventWriter holds a lock).
// Ownership: the writer owns its open file and closes it on destruction.
#ifndef SLUICE_RUNTIME_IO_RECORD_WRITER_H_
#define SLUICE_RUNTIME_IO_RECORD_WRITER_H_

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/io/record_compression.h"

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
  static absl::StatusOr<std::unique_ptr<RecordWriter>> Create(
      const std::string& path, RecordCompression compression = RecordCompression::kNone);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Buffers one framed record. FailedPrecondition after Close; errors from
  // the OS (disk full, ...) name the file.
  absl::Status WriteRecord(absl::string_view data);
  // Hands buffered records to the OS (fflush; no fsync). Compressed, it
  // first ends a deflate block (Z_SYNC_FLUSH), so a reader sees every record
  // written so far.
  absl::Status Flush();
  // Flushes and closes (ending the compressed stream); later calls of Close
  // are no-ops.
  absl::Status Close();

  const std::string& path() const { return path_; }
  // Bytes of records written so far, framing included, before compression.
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  class Deflater;  // a zlib stream (record_writer.cc)
  RecordWriter(std::string path, std::FILE* file, std::unique_ptr<Deflater> deflater);
  // Writes `bytes` to the file, through the deflater when there is one.
  absl::Status Put(absl::string_view bytes);

  std::string path_;
  std::FILE* file_;  // nullptr once closed
  std::unique_ptr<Deflater> deflater_;  // null: uncompressed
  uint64_t bytes_written_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_RECORD_WRITER_H_
