#include "runtime/device.h"

#include <thread>

namespace sluice {
namespace {

class CpuDevice : public Device {
 public:
  explicit CpuDevice(const CpuDeviceOptions& options)
      : Device(options.name, kDeviceTypeCpu),
        allocator_(options.name, options.memory_limit),
        pool_(options.name, options.num_threads > 0
                                ? options.num_threads
                                : std::max(1u, std::thread::hardware_concurrency())) {}

  Allocator* allocator() override { return &allocator_; }
  ThreadPool* thread_pool() override { return &pool_; }

 private:
  CpuAllocator allocator_;
  ThreadPool pool_;
};

}  // namespace

std::unique_ptr<Device> NewCpuDevice(const CpuDeviceOptions& options) {
  return std::make_unique<CpuDevice>(options);
}

}  // namespace sluice
