#include "ops/random/internal/philox_stream.h"

#include <random>

#include "base/status_macros.h"

namespace sluice {

uint32_t PhiloxStream::Uniform(uint32_t n) {
  if (n == 0) return Rand32() * n;
  if ((n & (n - 1)) == 0) return Rand32() & (n - 1);
  // Words in [0, reject) would favour the low values: 2^32 - reject is a
  // multiple of n.
  const uint32_t reject = UINT32_MAX % n + 1;
  uint32_t x;
  do {
    x = Rand32();
  } while (x < reject);
  return x % n;
}

uint64_t PhiloxStream::Uniform64(uint64_t n) {
  if (n == 0) return Rand64() * n;
  if ((n & (n - 1)) == 0) return Rand64() & (n - 1);
  const uint64_t reject = UINT64_MAX % n + 1;
  uint64_t x;
  do {
    x = Rand64();
  } while (x < reject);
  return x % n;
}

absl::Status SeededPhilox::Init(const OpKernelConstruction& ctx) {
  ASSIGN_OR_RETURN(int64_t seed, ctx.GetAttr<int64_t>("seed"));
  ASSIGN_OR_RETURN(int64_t seed2, ctx.GetAttr<int64_t>("seed2"));
  Init(seed, seed2);
  return absl::OkStatus();
}

void SeededPhilox::Init(int64_t seed, int64_t seed2) {
  uint64_t lo = static_cast<uint64_t>(seed), hi = static_cast<uint64_t>(seed2);
  if (seed == 0 && seed2 == 0) {
    std::random_device device;
    lo = (uint64_t{device()} << 32) | device();
    hi = (uint64_t{device()} << 32) | device();
  }
  // TensorFlow's PhiloxRandom(seed, seed2): the key from seed, the
  // counter's high half from seed2.
  absl::MutexLock lock(&mu_);
  next_ = stateless::KeyCounter{
      philox::Key{{static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32)}},
      philox::Counter{{0u, 0u, static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32)}}};
}

stateless::KeyCounter SeededPhilox::ReserveSamples128(uint64_t blocks) {
  absl::MutexLock lock(&mu_);
  const stateless::KeyCounter kc = next_;
  next_.counter = stateless::Advance(next_.counter, blocks);
  return kc;
}

}  // namespace sluice
