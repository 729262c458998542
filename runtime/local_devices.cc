#include "runtime/local_devices.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/cpu_share.h"

namespace sluice {

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
  const int cores = ProcessCpuShare();
  // With virtual CPUs, every CPU device owns an equal share of the cores by
  // default, so that they compute at once without oversubscribing.
  const int share = std::max(1, cores / (options.num_virtual_cpus + 1));
  cpu.num_threads = options.cpu_threads > 0 ? options.cpu_threads : share;
  cpu.memory_limit = options.cpu_memory_limit;
  devices.push_back(NewCpuDevice(cpu));
  for (int i = 1; i <= options.num_virtual_cpus; ++i) {
    CpuDeviceOptions v;
    v.name = absl::StrCat(options.name_prefix, "/device:CPU:", i);
    v.num_threads = options.virtual_cpu_threads > 0
                        ? options.virtual_cpu_threads
                        : share;
    v.memory_limit = options.virtual_cpu_memory_limit;
    devices.push_back(NewCpuDevice(v));
  }
  return devices;
}

}  // namespace sluice
