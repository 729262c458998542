// The audio family (ops/audio/): WAV files as tensors (EncodeWav,
// DecodeWav; audio_ops.h). One row of the built-in list (ops/op_families.h)
// names these two functions (the family has no gradients); a new op library
// in this folder adds its calls here and nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterAudioFamilyOps(&ops));
//   RegisterAudioFamilyCpuKernels(&kernels);
//
// Errors: the first registration error. Thread-compatible: call during
// start-up, on registries the caller owns.
#ifndef SLUICE_OPS_AUDIO_AUDIO_FAMILY_H_
#define SLUICE_OPS_AUDIO_AUDIO_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterAudioFamilyOps(OpRegistry* ops);
void RegisterAudioFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_AUDIO_AUDIO_FAMILY_H_
