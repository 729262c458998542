#include "runtime/device.h"

#include <thread>

namespace sluice {
namespace {

class CpuDevice : public Device {
 public:
  explicit CpuDevice(const CpuDeviceOptions& options)
      : Device(options.name, kDeviceTypeCpu),
        allocator_(std::make_shared<CpuAllocator>(options.name, options.memory_limit)),
        pool_(options.name, options.num_threads > 0
                                ? options.num_threads
                                : std::max(1u, std::thread::hardware_concurrency())) {}

  Allocator* allocator() override { return allocator_.get(); }
  ThreadPool* thread_pool() override { return &pool_; }

 private:
  // Shared: tensors (fetched results, variables) may outlive the device.
  std::shared_ptr<CpuAllocator> allocator_;
  ThreadPool pool_;
};

}  // namespace

std::unique_ptr<Device> NewCpuDevice(const CpuDeviceOptions& options) {
  return std::make_unique<CpuDevice>(options);
}

}  // namespace sluice
