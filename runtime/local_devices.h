// The CPU devices of this process: CPU:0 and N virtual CPU devices
// (CPU:1..CPU:N, each with its own thread pool, allocator and memory limit:
// how multi-device runs are built and tested without GPUs). Other device
// types come from their backends (runtime/backend.h); the options for
// them are here too, so that one struct configures every backend.
//
//   LocalDevicesOptions opts;  opts.num_virtual_cpus = 2;
//   ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Device>> devices, CreateLocalDevices(opts));
//   // "/job:localhost/replica:0/task:0/device:CPU:0", ".../CPU:1", ".../CPU:2"
//
// Thread-safe.
#ifndef SLUICE_RUNTIME_LOCAL_DEVICES_H_
#define SLUICE_RUNTIME_LOCAL_DEVICES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device.h"

namespace sluice {

struct LocalDevicesOptions {
  // Prefix of every device name.
  std::string name_prefix = "/job:localhost/replica:0/task:0";
  // CPU:0's pool (and its kernels' share of the cores); 0: one per core of
  // ProcessCpuShare() (runtime/cpu_share.h), or that / (N + 1) with N virtual CPUs.
  int cpu_threads = 0;
  int64_t cpu_memory_limit = 0;  // bytes; 0: none
  int num_virtual_cpus = 0;      // CPU:1..CPU:N
  // Per virtual device; 0: ProcessCpuShare() / (N + 1), at least 1.
  int virtual_cpu_threads = 0;
  int64_t virtual_cpu_memory_limit = 0;  // bytes, per virtual device; 0: none
  // GPU backend (runtime/gpu): how many of the visible GPUs (-1: all), and
  // each one's memory: a byte limit, else a fraction of its free memory.
  // The memory options count only for the first GPU devices the process
  // makes: later ones share those GPUs' allocators (runtime/gpu/gpu_context.h).
  int max_gpus = -1;
  int64_t gpu_memory_limit = 0;
  double gpu_memory_fraction = 0.9;
  // Logical GPUs (runtime/gpu/logical_gpus.h): each GPU used becomes one
  // device per entry, with its own streams and allocator and this many
  // bytes (0: an equal share of the GPU's limit or fraction). Empty: one
  // device per GPU, unless $SLUICE_LOGICAL_GPUS says otherwise.
  std::vector<int64_t> gpu_logical_memory_limits;
  // Tests: fill every fresh GPU block with 0xFF bytes (NaN for floats), so a
  // kernel that leaves an output element unwritten is caught.
  bool gpu_poison_allocations = false;
};

// CPU:0, then the virtual ones. InvalidArgument for a negative count or
// limit.
absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateLocalDevices(
    const LocalDevicesOptions& options);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_LOCAL_DEVICES_H_
