// The uniforms and normals of TensorFlow's samplers whose outputs take a
// variable number of draws (RandomGamma, RandomPoisson, the binomial ops
// and their stateless and stateful forms): output i starts at Philox call
// i * calls_per_output of its key and counter (the room TensorFlow
// reserves per output: 256, or 42 for a binomial drawn by inversion), so
// every output is independent of the others and of how work is split.
// Uniform and Normal are TensorFlow's UniformDistribution and
// NormalDistribution of doubles: one Philox call gives two values (two
// words each; Box-Muller for normals, sine first), handed out second
// first; each keeps its own pair and calls Philox again when it runs out.
//
//   internal::SampleDraws draws(kc, output_index);
//   double u = draws.Uniform();  double z = draws.Normal();
//
// Thread-compatible: one per output being drawn. Internal to ops/random.
#ifndef SLUICE_OPS_RANDOM_INTERNAL_SAMPLE_DRAWS_H_
#define SLUICE_OPS_RANDOM_INTERNAL_SAMPLE_DRAWS_H_

#include <cstdint>

#include "ops/gpu/stateless_philox.h"

namespace sluice {
namespace internal {

class SampleDraws {
 public:
  // Philox calls reserved per output, unless the sampler says otherwise.
  static constexpr uint64_t kCallsPerOutput = 256;

  SampleDraws(const stateless::KeyCounter& kc, uint64_t output,
              uint64_t calls_per_output = kCallsPerOutput)
      : kc_(kc), call_(output * calls_per_output) {}

  double Uniform() {
    if (uniforms_left_ == 0) {
      stateless::DoubleGroup(kc_, static_cast<int64_t>(call_++), /*normal=*/false, uniforms_);
      uniforms_left_ = 2;
    }
    return uniforms_[--uniforms_left_];
  }
  double Normal() {
    if (normals_left_ == 0) {
      stateless::DoubleGroup(kc_, static_cast<int64_t>(call_++), /*normal=*/true, normals_);
      normals_left_ = 2;
    }
    return normals_[--normals_left_];
  }

 private:
  stateless::KeyCounter kc_;
  uint64_t call_;
  double uniforms_[2];
  double normals_[2];
  int uniforms_left_ = 0;
  int normals_left_ = 0;
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_INTERNAL_SAMPLE_DRAWS_H_
