// WAV in memory: 16-bit little-endian PCM, the one form TensorFlow's audio
// ops and audio summaries read and write (its core/lib/wav/wav_io.cc).
// Why not a library: Debian's (libsndfile) would add a dependency for a
// 44-byte header TensorFlow pins down exactly, including which chunks a
// reader skips.
//
//   ASSIGN_OR_RETURN(std::string wav, wav::EncodeS16(samples, 16000, 2, frames));
//   ASSIGN_OR_RETURN(wav::Decoded d, wav::DecodeS16(wav));  // d.samples: frames * channels
//
// Samples are floats in [-1, 1), interleaved by frame (frame-major, channel
// fastest). Encoding scales by 2^15, rounds half away from zero and clamps
// to int16; decoding divides by 2^15.
//
// Errors (InvalidArgument): EncodeS16 with a sample rate outside (0, 2^32),
// channels outside (0, 2^16) or a file over 4 GiB. DecodeS16 names what is
// wrong: a header mismatch ("expected RIFF, found ..."), data too short, an
// unexpected chunk before "fmt ", a format other than PCM, a sample width
// other than 16 bits, inconsistent rates, a second data chunk or none.
// Thread-safe: no state.
#ifndef SLUICE_OPS_AUDIO_INTERNAL_WAV_H_
#define SLUICE_OPS_AUDIO_INTERNAL_WAV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace wav {

absl::StatusOr<std::string> EncodeS16(const float* samples, uint64_t sample_rate,
                                      uint64_t channels, uint64_t frames);

struct Decoded {
  std::vector<float> samples;  // frames * channels
  uint32_t frames = 0;
  uint16_t channels = 0;
  uint32_t sample_rate = 0;
};
absl::StatusOr<Decoded> DecodeS16(absl::string_view data);

}  // namespace wav
}  // namespace sluice

#endif  // SLUICE_OPS_AUDIO_INTERNAL_WAV_H_
