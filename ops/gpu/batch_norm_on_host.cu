// The GPU batch normalization's kernels, in launch order, on the host
// (ops/gpu/batch_norm_on_host.cu.h).
#include <cstdint>
#include <type_traits>

#include "ops/gpu/batch_norm_fns.cu.h"
#include "ops/gpu/batch_norm_on_host.cu.h"

namespace sluice::gpu {

using batch_norm::Chunks;
using batch_norm::Scratch;
using batch_norm::ScratchOf;

void RunBatchNormForwardOnHost(const BatchNormForwardArgs& a) {
  if (a.depth <= 0) return;
  const Scratch s = ScratchOf(a.scratch, a.rows, a.depth);
  (void)batch_norm::WithStorage(a.type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    if (a.training) {
      for (int64_t k = 0; k < Chunks(a.rows); ++k) {
        for (int64_t c = 0; c < a.depth; ++c) batch_norm::ForwardPartial<false, S>(a, s, k, c);
      }
      for (int64_t c = 0; c < a.depth; ++c) batch_norm::FinishMean(a, s, c);
      for (int64_t k = 0; k < Chunks(a.rows); ++k) {
        for (int64_t c = 0; c < a.depth; ++c) batch_norm::ForwardPartial<true, S>(a, s, k, c);
      }
    }
    for (int64_t c = 0; c < a.depth; ++c) batch_norm::FinishChannel(a, s, c);
    for (int64_t i = 0; i < a.rows * a.depth; ++i) batch_norm::Normalize<S>(a, s, i);
  });
}

void RunBatchNormGradOnHost(const BatchNormGradArgs& a) {
  if (a.depth <= 0) return;
  const Scratch s = ScratchOf(a.scratch, a.rows, a.depth);
  (void)batch_norm::WithStorage(a.type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    for (int64_t k = 0; k < Chunks(a.rows); ++k) {
      for (int64_t c = 0; c < a.depth; ++c) batch_norm::GradPartial<S>(a, s, k, c);
    }
    for (int64_t c = 0; c < a.depth; ++c) batch_norm::FinishGradChannel(a, s, c);
    for (int64_t i = 0; i < a.rows * a.depth; ++i) batch_norm::GradElement<S>(a, s, i);
  });
}

}  // namespace sluice::gpu
