// Device: where kernels run — an allocator, a thread pool for its executor and
// kernels, and a container of variables.
//
//   std::unique_ptr<Device> cpu = NewCpuDevice(
//       {.name = "/job:localhost/replica:0/task:0/device:CPU:0", .num_threads = 2});
//   Tensor t = ...;  cpu->allocator()->GetStats();
//
// Thread-safe.
#ifndef SLUICE_RUNTIME_DEVICE_H_
#define SLUICE_RUNTIME_DEVICE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/allocator.h"
#include "runtime/resource_mgr.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace sluice {

// The work of one step recorded by Device::BeginCapture/EndCapture (a CUDA
// graph on a GPU). Replay queues it again, on the same memory, ordered like
// a kernel; the device's Sync waits for it.
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
  virtual absl::Status Replay() = 0;
};

inline constexpr char kDeviceTypeCpu[] = "CPU";
inline constexpr char kDeviceTypeGpu[] = "GPU";

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // Full name: /job:J/replica:R/task:T/device:TYPE:ID.
  const std::string& name() const { return name_; }
  const std::string& device_type() const { return device_type_; }
  virtual Allocator* allocator() = 0;
  virtual ThreadPool* thread_pool() = 0;
  ResourceMgr* resource_manager() { return &resources_; }
  // The bytes its allocator may hand out (0: no limit); what the automatic
  // placer plans with. A device of another task overrides it.
  virtual int64_t memory_limit() { return allocator()->GetStats().bytes_limit; }

  // Devices whose tensors live in memory the host cannot touch (GPUs)
  // override the rest. The executor uses them to give each kernel its
  // arguments where its KernelDef wants them (HostMemory args on the host,
  // the others in device memory).
  virtual bool has_device_memory() const { return false; }
  // Host memory for the HostMemory arguments of this device's kernels
  // (pinned on a GPU, for fast copies).
  virtual Allocator* host_allocator() { return allocator(); }
  // A host copy of `t` (this device's memory), once the work queued before
  // that writes it is done. Blocks the caller. Default: `t` itself.
  virtual absl::StatusOr<Tensor> CopyToHost(const Tensor& t) { return t; }
  // `t` (host memory) copied into this device's memory, ready for kernels
  // queued after this call; `t` may be released at once. Default: `t`.
  virtual absl::StatusOr<Tensor> CopyFromHost(const Tensor& t) { return t; }
  // Copies src's bytes into *dst (same size, both allocated by this device),
  // ordered after the work already queued, like a kernel. Default: memcpy.
  virtual absl::Status CopyWithinDevice(const Tensor& src, Tensor* dst);
  // Waits until every queued kernel and copy is done; their first error.
  virtual absl::Status Sync() { return absl::OkStatus(); }

  // Step capture (runtime/step_replay.h): whether BeginCapture can work.
  virtual bool can_capture() const { return false; }
  // Between BeginCapture and
  // EndCapture the work this device's kernels and device-to-device copies
  // queue is recorded instead of run, host<->device copies fail, and Sync
  // returns at once; every block allocated meanwhile stays reserved for the
  // recording until the CapturedWork is gone. The caller keeps every other
  // user of the device out for the duration. Unimplemented by default.
  virtual absl::Status BeginCapture();
  // Ends the recording. A failure (a copy or call that cannot be recorded)
  // ends it too.
  virtual absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture();

 protected:
  Device(std::string name, std::string device_type)
      : name_(std::move(name)), device_type_(std::move(device_type)) {}

 private:
  const std::string name_;
  const std::string device_type_;
  ResourceMgr resources_;
};

struct CpuDeviceOptions {
  std::string name = "/job:localhost/replica:0/task:0/device:CPU:0";
  int num_threads = 0;      // 0: one per hardware thread
  int64_t memory_limit = 0;  // bytes; 0: none
};

std::unique_ptr<Device> NewCpuDevice(const CpuDeviceOptions& options);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_DEVICE_H_
