#include "ops/audio/audio_family.h"

#include "ops/audio/audio_ops.h"

namespace sluice {

absl::Status RegisterAudioFamilyOps(OpRegistry* ops) { return RegisterAudioOps(ops); }

void RegisterAudioFamilyCpuKernels(KernelRegistry* kernels) { RegisterAudioKernels(kernels); }

}  // namespace sluice
