#include "ops/cpu_backend.h"

#include "ops/op_families.h"
#include "runtime/local_devices.h"

namespace sluice {
namespace {

class CpuBackend : public Backend {
 public:
  std::string device_type() const override { return kDeviceTypeCpu; }
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      const LocalDevicesOptions& options) const override {
    return CreateLocalDevices(options);
  }
  void RegisterKernels(KernelRegistry* kernels) const override { RegisterCpuKernels(kernels); }
};

}  // namespace

void RegisterCpuKernels(KernelRegistry* kernels) {
  RegisterOpFamilyCpuKernels(BuiltinOpFamilies(), kernels);
}

std::unique_ptr<Backend> NewCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace sluice
