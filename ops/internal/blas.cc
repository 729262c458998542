#include "ops/internal/blas.h"

namespace sluice {
namespace internal {

absl::Mutex& BlasMutex() {
  static absl::Mutex* const kMutex = new absl::Mutex();
  return *kMutex;
}

}  // namespace internal
}  // namespace sluice
