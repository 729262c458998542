// RecordReader (runtime/io/record_reader.h) on arbitrary files: the first
// byte picks the compression (plain, ZLIB, GZIP), the rest is the file.
// Every record is read until the end or the first error: no crash, no
// hang, and an error is DataLoss (or InvalidArgument) naming the file.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_target.h"
#include "runtime/io/record_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string path = absl::StrCat(
      std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp", "/record_reader_fuzzer.",
      getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  const sluice::RecordCompression c = data[0] % 3 == 0   ? sluice::RecordCompression::kNone
                                      : data[0] % 3 == 1 ? sluice::RecordCompression::kZlib
                                                         : sluice::RecordCompression::kGzip;
  absl::StatusOr<std::unique_ptr<sluice::RecordReader>> r = sluice::RecordReader::Open(path, c);
  if (!r.ok()) std::abort();  // the file exists
  for (int i = 0; i < 100000; ++i) {
    absl::StatusOr<std::string> rec = (*r)->ReadRecord();
    if (rec.ok()) continue;
    if (absl::IsOutOfRange(rec.status())) break;
    if (rec.status().message().find(path) == absl::string_view::npos) std::abort();
    break;
  }
  return 0;
}
