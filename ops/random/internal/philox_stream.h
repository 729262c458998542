// TensorFlow's host-side Philox helpers, for kernels whose draws must be
// TensorFlow's bit for bit (Multinomial, SampleDistortedBoundingBox):
//
//   PhiloxStream  SimplePhilox over SingleSampleAdapter: Philox's 32-bit
//                 words one after another from a key and counter, with
//                 RandFloat, RandDouble and Uniform(n) / Uniform64(n) (exact, by
//                 rejection) made from them as TensorFlow makes them.
//   SeededPhilox  GuardedPhiloxRandom: a kernel's generator seeded from
//                 its seed/seed2 attrs (from std::random_device when both
//                 are 0); each run reserves a disjoint run of counters.
//
//   SeededPhilox gen;  RETURN_IF_ERROR(gen.Init(ctx));      // in Init
//   PhiloxStream rng(gen.ReserveSamples32(4 * attempts));  // in Compute
//   float u = rng.RandFloat();  uint32_t k = rng.Uniform(10);
//
// Thread-safety: a PhiloxStream is one caller's; SeededPhilox's Reserve
// calls are thread-safe.
#ifndef SLUICE_OPS_RANDOM_INTERNAL_PHILOX_STREAM_H_
#define SLUICE_OPS_RANDOM_INTERNAL_PHILOX_STREAM_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "ops/gpu/stateless_philox.h"
#include "runtime/kernel.h"

namespace sluice {

class PhiloxStream {
 public:
  explicit PhiloxStream(const stateless::KeyCounter& kc) : kc_(kc) {}

  uint32_t Rand32() {
    if (used_ == 4) {
      block_ = stateless::Words(kc_, calls_++);
      used_ = 0;
    }
    return block_.v[used_++];
  }
  // Two words, the first the low half.
  uint64_t Rand64() {
    const uint32_t lo = Rand32();
    const uint32_t hi = Rand32();
    return lo | (uint64_t{hi} << 32);
  }
  // [0, 1) from one word's low 23 bits.
  float RandFloat() { return stateless::ToFloat(Rand32()); }
  // [0, 1) from two words.
  double RandDouble() {
    const uint32_t x0 = Rand32();
    const uint32_t x1 = Rand32();
    return stateless::ToDouble(x0, x1);
  }
  // Uniform in [0, n): a power of two masks one word; otherwise words
  // below (2^32 - 1) % n + 1 are drawn again. n == 0 consumes a word and
  // gives 0.
  uint32_t Uniform(uint32_t n);
  // The same over Rand64.
  uint64_t Uniform64(uint64_t n);

 private:
  stateless::KeyCounter kc_;
  philox::Counter block_{};
  uint64_t calls_ = 0;
  int used_ = 4;
};

class SeededPhilox {
 public:
  // Reads the kernel's "seed" and "seed2" attrs.
  absl::Status Init(const OpKernelConstruction& ctx);
  void Init(int64_t seed, int64_t seed2);

  // The key and counter of the next `blocks` 128-bit blocks; later calls
  // get later blocks.
  stateless::KeyCounter ReserveSamples128(uint64_t blocks);
  // Enough blocks for `words` 32-bit words.
  stateless::KeyCounter ReserveSamples32(uint64_t words) {
    return ReserveSamples128((words + 3) / 4);
  }

 private:
  absl::Mutex mu_;
  stateless::KeyCounter next_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_INTERNAL_PHILOX_STREAM_H_
