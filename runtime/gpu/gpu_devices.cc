#include "runtime/gpu/gpu_devices.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/logical_gpus.h"

namespace sluice {

int VisibleGpuCount(std::string* why_none) {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();  // leave no error for the next CUDA call to report
    if (why_none != nullptr) {
      *why_none = absl::StrCat("cudaGetDeviceCount: ", cudaGetErrorName(code), " (",
                               cudaGetErrorString(code), ")");
    }
    return 0;
  }
  if (count <= 0) {
    if (why_none != nullptr) *why_none = "CUDA sees no device";
    return 0;
  }
  return count;
}

namespace {

// Peer access makes copies between two GPUs direct. Without it (or when
// enabling fails, e.g. past the driver's peer limit) cudaMemcpyPeerAsync
// still works, staged through host memory, so failures are not errors.
// Process-wide state, like the GPU contexts: done once per pair.
ABSL_CONST_INIT absl::Mutex peer_mu(absl::kConstInit);
int peers_enabled_for ABSL_GUARDED_BY(peer_mu) = 0;  // GPUs 0..peers_enabled_for-1 done

void EnablePeerAccess(int count) {
  absl::MutexLock lock(&peer_mu);
  const int enabled_for = peers_enabled_for;
  if (count <= enabled_for) return;
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) {
    (void)cudaGetLastError();
    previous = -1;
  }
  for (int a = 0; a < count; ++a) {
    for (int b = 0; b < count; ++b) {
      if (a == b || (a < enabled_for && b < enabled_for)) continue;
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess) {
        (void)cudaGetLastError();
        continue;
      }
      if (can == 0 || cudaSetDevice(a) != cudaSuccess) {
        (void)cudaGetLastError();
        continue;
      }
      const cudaError_t code = cudaDeviceEnablePeerAccess(b, 0);
      if (code != cudaSuccess) (void)cudaGetLastError();  // incl. already enabled
    }
  }
  if (previous >= 0 && cudaSetDevice(previous) != cudaSuccess) (void)cudaGetLastError();
  peers_enabled_for = count;
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateGpuDevices(
    const LocalDevicesOptions& options) {
  ASSIGN_OR_RETURN(
      std::vector<LogicalGpu> layout,
      LayOutLogicalGpus(VisibleGpuCount(), options, LogicalGpusFromEnvironment()));
  std::vector<std::unique_ptr<Device>> devices;
  int physical = 0;
  for (size_t k = 0; k < layout.size(); ++k) {
    GpuDeviceOptions o;
    o.name = absl::StrCat(options.name_prefix, "/device:GPU:", k);
    o.ordinal = layout[k].ordinal;
    o.logical = layout[k].logical;
    o.memory_limit = layout[k].memory_limit;
    o.memory_fraction = layout[k].memory_fraction;
    o.poison_allocations = options.gpu_poison_allocations;
    ASSIGN_OR_RETURN(std::unique_ptr<GpuDevice> gpu, GpuDevice::Create(o));
    devices.push_back(std::move(gpu));
    physical = std::max(physical, o.ordinal + 1);
  }
  EnablePeerAccess(physical);
  return devices;
}

}  // namespace sluice
