#include "runtime/backend.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {

absl::Status BackendRegistry::Add(std::unique_ptr<Backend> backend) {
  if (backend == nullptr) return absl::InvalidArgumentError("BackendRegistry::Add: no backend");
  if (Find(backend->device_type()) != nullptr) {
    return absl::AlreadyExistsError(
        absl::StrCat("a backend for device type ", backend->device_type(), " is registered"));
  }
  backends_.push_back(std::move(backend));
  return absl::OkStatus();
}

std::vector<const Backend*> BackendRegistry::backends() const {
  std::vector<const Backend*> out;
  for (const auto& b : backends_) out.push_back(b.get());
  return out;
}

const Backend* BackendRegistry::Find(absl::string_view device_type) const {
  for (const auto& b : backends_) {
    if (b->device_type() == device_type) return b.get();
  }
  return nullptr;
}

absl::StatusOr<std::vector<std::unique_ptr<Device>>> BackendRegistry::CreateDevices(
    const LocalDevicesOptions& options) const {
  std::vector<std::unique_ptr<Device>> devices;
  for (const auto& b : backends_) {
    absl::StatusOr<std::vector<std::unique_ptr<Device>>> more = b->CreateDevices(options);
    if (!more.ok()) {
      return AddContext(more.status(), absl::StrCat("the ", b->device_type(), " backend"));
    }
    for (auto& d : *more) devices.push_back(std::move(d));
  }
  return devices;
}

void BackendRegistry::RegisterKernels(KernelRegistry* kernels) const {
  for (const auto& b : backends_) b->RegisterKernels(kernels);
}

LocalAllReduceImpl BackendRegistry::LocalAllReduceFor(const std::string& device_type) const {
  const Backend* b = Find(device_type);
  return b == nullptr ? nullptr : b->LocalAllReduce();
}

CrossProcessAllReduceImpl BackendRegistry::CrossProcessAllReduceFor(
    const std::string& device_type) const {
  const Backend* b = Find(device_type);
  return b == nullptr ? nullptr : b->CrossProcessAllReduce();
}

absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
    const BackendRegistry* backends, const LocalDevicesOptions& options) {
  return backends != nullptr ? backends->CreateDevices(options) : CreateLocalDevices(options);
}

}  // namespace sluice
