// WAV files as tensors (tf.audio.encode_wav / decode_wav), under
// TensorFlow's names, inputs and attrs:
//   EncodeWav  audio: float [frames, channels], sample_rate: int32 scalar
//              -> contents: string scalar, 16-bit PCM (ops/audio/internal/wav.h)
//   DecodeWav  contents: string scalar -> audio: float [samples, channels],
//              sample_rate: int32; attrs desired_channels and
//              desired_samples (-1: as stored). More channels than stored
//              repeat the last one, fewer drop the rest; more samples than
//              stored are zeros, fewer cut the end.
// Audio summaries (ops/io/summary_ops.h) encode with the same code. No
// gradients. Errors (InvalidArgument): audio not of rank 2, a non-scalar
// sample rate or contents, what the WAV codec refuses (named), desired
// counts below -1.
//
//   Output wav = ops::EncodeWav(s, samples, ops::Const(s, 16000));
//   ops::DecodeWavOutputs d = ops::DecodeWav(s, ops::ReadFile(s, path), /*desired_channels=*/1);
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_AUDIO_AUDIO_OPS_H_
#define SLUICE_OPS_AUDIO_AUDIO_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterAudioOps(OpRegistry* ops);
void RegisterAudioKernels(KernelRegistry* kernels);

namespace ops {

Output EncodeWav(const Scope& scope, Input audio, Input sample_rate,
                 std::source_location loc = std::source_location::current());

struct DecodeWavOutputs {
  Output audio, sample_rate;
};
DecodeWavOutputs DecodeWav(const Scope& scope, Input contents, int64_t desired_channels = -1,
                           int64_t desired_samples = -1,
                           std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_AUDIO_AUDIO_OPS_H_
