// The GPU backend of a build without the CUDA toolkit: no devices.
#include "runtime/gpu/gpu_devices.h"

#include "runtime/gpu/logical_gpus.h"

namespace sluice {

int VisibleGpuCount(std::string* why_none) {
  if (why_none != nullptr) *why_none = "built without CUDA";
  return 0;
}

absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateGpuDevices(
    const LocalDevicesOptions& options) {
  // The same option checks as the CUDA build, so a bad option fails the same
  // way with or without the toolkit.
  absl::StatusOr<std::vector<LogicalGpu>> layout =
      LayOutLogicalGpus(/*visible=*/0, options, LogicalGpusFromEnvironment());
  if (!layout.ok()) return layout.status();
  return std::vector<std::unique_ptr<Device>>();
}

}  // namespace sluice
