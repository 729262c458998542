#include "ops/gpu/gpu_backend.h"

#include "ops/gpu/gpu_kernels.h"
#include "runtime/gpu/gpu_devices.h"
#include "runtime/gpu/nccl_collectives.h"

namespace sluice {
namespace {

class GpuBackend : public Backend {
 public:
  std::string device_type() const override { return kDeviceTypeGpu; }
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      const LocalDevicesOptions& options) const override {
    return CreateGpuDevices(options);
  }
  void RegisterKernels(KernelRegistry* kernels) const override { RegisterGpuKernels(kernels); }
  LocalAllReduceImpl LocalAllReduce() const override {
    return NcclAvailable() ? LocalAllReduceImpl(&NcclLocalAllReduce) : nullptr;
  }
  CrossProcessAllReduceImpl CrossProcessAllReduce() const override {
    return NcclAvailable() ? CrossProcessAllReduceImpl(&NcclCrossProcessAllReduce) : nullptr;
  }
};

}  // namespace

std::unique_ptr<Backend> NewGpuBackend() { return std::make_unique<GpuBackend>(); }

}  // namespace sluice
