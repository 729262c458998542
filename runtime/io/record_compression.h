// How a TFRecord file is compressed, as TensorFlow names it in
// TFRecordDataset's and TFRecordWriter's `compression_type`: "" (none),
// "ZLIB" (one zlib stream, RFC 1950) or "GZIP" (gzip members, RFC 1952),
// each over the whole framed byte stream (record_writer.h), not per record.
//
//   ASSIGN_OR_RETURN(RecordCompression c, ParseRecordCompression("GZIP"));
//
// Thread-safe (pure functions).
#ifndef SLUICE_RUNTIME_IO_RECORD_COMPRESSION_H_
#define SLUICE_RUNTIME_IO_RECORD_COMPRESSION_H_

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sluice {

enum class RecordCompression { kNone, kZlib, kGzip };

// "", "ZLIB", "GZIP"; InvalidArgument naming anything else.
inline absl::StatusOr<RecordCompression> ParseRecordCompression(absl::string_view name) {
  if (name.empty()) return RecordCompression::kNone;
  if (name == "ZLIB") return RecordCompression::kZlib;
  if (name == "GZIP") return RecordCompression::kGzip;
  return absl::InvalidArgumentError(absl::StrCat(
      "compression_type '", name, "' is not one of \"\", \"ZLIB\", \"GZIP\""));
}

inline absl::string_view RecordCompressionName(RecordCompression c) {
  switch (c) {
    case RecordCompression::kZlib:
      return "ZLIB";
    case RecordCompression::kGzip:
      return "GZIP";
    case RecordCompression::kNone:
      break;
  }
  return "";
}

// zlib's windowBits for the format: 15 (the largest window) for a zlib
// stream, +16 for gzip's wrapper. Each format reads only itself.
inline int ZlibWindowBits(RecordCompression c) { return c == RecordCompression::kGzip ? 31 : 15; }

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_RECORD_COMPRESSION_H_
