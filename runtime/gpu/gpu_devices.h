// The GPU backend's devices: how many GPUs CUDA sees, and one GpuDevice per
// visible GPU (what the GPU backend, ops/gpu/gpu_backend.h, makes).
//
//   ASSIGN_OR_RETURN(auto devices, CreateGpuDevices(options));  // GPU:0..GPU:k-1
//
//   std::string why;
//   if (VisibleGpuCount(&why) == 0) std::cout << "no GPU: " << why << "\n";
//
// No GPU is not an error: on a machine without a driver or device CUDA
// reports an error, and the backend simply makes no devices. Built without
// CUDA, VisibleGpuCount is 0 ("built without CUDA") and CreateGpuDevices
// makes none. Thread-safe.
#ifndef SLUICE_RUNTIME_GPU_GPU_DEVICES_H_
#define SLUICE_RUNTIME_GPU_GPU_DEVICES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device.h"
#include "runtime/local_devices.h"

namespace sluice {

// GPUs CUDA can use; 0 on any CUDA error, with the reason in *why_none.
int VisibleGpuCount(std::string* why_none = nullptr);

// GPU:0..GPU:k-1 under options.name_prefix: min(visible, max_gpus) GPUs,
// each carved into its logical GPUs (runtime/gpu/logical_gpus.h; one by
// default). Cheap after the first call: each device is a view of its
// logical GPU's process-wide GpuContext (the first call's memory options
// make it).
// Peer access is enabled (once per process) between every pair that
// supports it.
absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateGpuDevices(
    const LocalDevicesOptions& options);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_GPU_DEVICES_H_
