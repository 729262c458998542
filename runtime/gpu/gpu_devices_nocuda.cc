// The GPU backend of a build without the CUDA toolkit: no devices.
#include "runtime/gpu/gpu_devices.h"

namespace sluice {

int VisibleGpuCount(std::string* why_none) {
  if (why_none != nullptr) *why_none = "built without CUDA";
  return 0;
}

absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateGpuDevices(
    const LocalDevicesOptions& options) {
  return std::vector<std::unique_ptr<Device>>();
}

void RegisterGpuDevices() {}

}  // namespace sluice
