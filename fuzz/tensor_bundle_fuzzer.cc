// BundleReader (a TensorFlow V2 checkpoint) on arbitrary files: no crash, no
// unbounded allocation, whatever the index and the data file hold. The
// input is a 4-byte little-endian length, that many bytes of .index, and
// the rest as the one data file; every entry the index lists is read.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz/fuzz_target.h"
#include "runtime/io/tensor_bundle.h"

namespace {

bool WriteFile(const std::string& path, const uint8_t* data, size_t n) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = n == 0 || std::fwrite(data, 1, n, f) == n;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t index_size;
  std::memcpy(&index_size, data, 4);
  if (index_size > size - 4) return 0;
  static const std::string prefix =
      std::string(std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp") +
      "/tensor_bundle_fuzzer." + std::to_string(getpid());
  if (!WriteFile(prefix + ".index", data + 4, index_size) ||
      !WriteFile(prefix + ".data-00000-of-00001", data + 4 + index_size, size - 4 - index_size)) {
    return 0;
  }
  absl::StatusOr<std::unique_ptr<sluice::BundleReader>> r = sluice::BundleReader::Open(prefix);
  if (!r.ok()) return 0;
  for (const sluice::BundleReader::Entry& e : (*r)->entries()) {
    // A huge declared shape must fail on the sizes, not allocate first.
    (*r)->Read(e.name).IgnoreError();
  }
  return 0;
}
