// ParseNpy on arbitrary bytes: no crash, no unbounded allocation; what
// parses encodes and parses back to the same tensor.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"
#include "fuzz/fuzz_target.h"
#include "runtime/npy.h"

namespace {

// Element by element: a string tensor's buffer holds std::string objects,
// whose bytes (pointers, capacities) differ between equal values.
bool SameElements(const sluice::Tensor& a, const sluice::Tensor& b) {
  if (a.dtype() == sluice::DT_STRING) {
    auto x = a.flat<std::string>();
    auto y = b.flat<std::string>();
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  }
  return a.TotalBytes() == b.TotalBytes() &&
         (a.TotalBytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<sluice::Tensor> t =
      sluice::ParseNpy(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!t.ok()) return 0;
  absl::StatusOr<std::string> again = sluice::EncodeNpy(*t);
  if (!again.ok()) return 0;  // a dtype .npy reads but does not write
  absl::StatusOr<sluice::Tensor> back = sluice::ParseNpy(*again);
  if (!back.ok() || back->dtype() != t->dtype() || back->shape() != t->shape() ||
      !SameElements(*back, *t)) {
    std::abort();  // the round trip changed the tensor
  }
  return 0;
}
