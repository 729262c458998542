#include "distributed/random_id.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/escaping.h"

namespace sluice {

std::string RandomId128() {
  uint8_t bytes[16];
  size_t have = 0;
  while (have < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + have, sizeof(bytes) - have, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "RandomId128: getrandom failed (errno %d)\n", errno);
      std::abort();
    }
    have += static_cast<size_t>(n);
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

}  // namespace sluice
