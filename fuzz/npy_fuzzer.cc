// ParseNpy on arbitrary bytes: no crash, no unbounded allocation; what
// parses encodes and parses back to the same tensor.
#include <cstdlib>
#include <cstring>

#include "absl/strings/string_view.h"
#include "fuzz/fuzz_target.h"
#include "runtime/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<sluice::Tensor> t =
      sluice::ParseNpy(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!t.ok()) return 0;
  absl::StatusOr<std::string> again = sluice::EncodeNpy(*t);
  if (!again.ok()) return 0;  // a dtype .npy reads but does not write
  absl::StatusOr<sluice::Tensor> back = sluice::ParseNpy(*again);
  if (!back.ok() || back->dtype() != t->dtype() || back->shape() != t->shape() ||
      back->TotalBytes() != t->TotalBytes() ||
      (t->TotalBytes() > 0 && std::memcmp(back->raw_data(), t->raw_data(), t->TotalBytes()) != 0)) {
    std::abort();  // the round trip changed the tensor
  }
  return 0;
}
