// The GPU backend of a build without the CUDA toolkit: no devices.
#include "runtime/gpu/gpu_devices.h"

namespace sluice {

int VisibleGpuCount(std::string* why_none) {
  if (why_none != nullptr) *why_none = "built without CUDA";
  return 0;
}

absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateGpuDevices(
    const LocalDevicesOptions& options) {
  // The same option checks as the CUDA build, so a bad option fails the same
  // way with or without the toolkit.
  if (options.max_gpus < -1 || options.gpu_memory_limit < 0) {
    return absl::InvalidArgumentError(
        "local device options: max_gpus must be >= -1 and gpu_memory_limit >= 0");
  }
  return std::vector<std::unique_ptr<Device>>();
}

}  // namespace sluice
