#include "runtime/local_devices.h"

#include <algorithm>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"

namespace sluice {
namespace {

struct Factories {
  absl::Mutex mu;
  std::map<std::string, DeviceFactory> by_type ABSL_GUARDED_BY(mu);
};

Factories& GetFactories() {
  static Factories* factories = new Factories;  // never destroyed
  return *factories;
}

}  // namespace

void RegisterDeviceFactory(const std::string& device_type, DeviceFactory factory) {
  Factories& f = GetFactories();
  absl::MutexLock lock(&f.mu);
  f.by_type[device_type] = std::move(factory);
}

absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateLocalDevices(
    const LocalDevicesOptions& options) {
  if (options.num_virtual_cpus < 0 || options.cpu_threads < 0 ||
      options.virtual_cpu_threads < 0 || options.cpu_memory_limit < 0 ||
      options.virtual_cpu_memory_limit < 0) {
    return absl::InvalidArgumentError(
        "local device options: counts, thread numbers and memory limits must be >= 0");
  }
  std::vector<std::unique_ptr<Device>> devices;
  CpuDeviceOptions cpu;
  cpu.name = absl::StrCat(options.name_prefix, "/device:CPU:0");
  cpu.num_threads = options.cpu_threads;
  cpu.memory_limit = options.cpu_memory_limit;
  devices.push_back(NewCpuDevice(cpu));
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i <= options.num_virtual_cpus; ++i) {
    CpuDeviceOptions v;
    v.name = absl::StrCat(options.name_prefix, "/device:CPU:", i);
    v.num_threads = options.virtual_cpu_threads > 0
                        ? options.virtual_cpu_threads
                        : std::max(1, hardware / (options.num_virtual_cpus + 1));
    v.memory_limit = options.virtual_cpu_memory_limit;
    devices.push_back(NewCpuDevice(v));
  }
  std::vector<DeviceFactory> factories;
  {
    Factories& f = GetFactories();
    absl::MutexLock lock(&f.mu);
    for (const auto& [type, factory] : f.by_type) factories.push_back(factory);
  }
  for (const DeviceFactory& factory : factories) {
    ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Device>> more, factory(options));
    for (auto& d : more) devices.push_back(std::move(d));
  }
  return devices;
}

}  // namespace sluice
