#include "runtime/device.h"

#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"

namespace sluice {

absl::Status Device::CopyWithinDevice(const Tensor& src, Tensor* dst) {
  if (src.TotalBytes() != dst->TotalBytes()) {
    return absl::InternalError(absl::StrCat("CopyWithinDevice on ", name(), ": ",
                                            src.TotalBytes(), " bytes into ",
                                            dst->TotalBytes()));
  }
  if (src.dtype() == DT_STRING) {
    for (int64_t i = 0; i < src.NumElements(); ++i) {
      dst->flat<std::string>()[i] = src.flat<std::string>()[i];
    }
    return absl::OkStatus();
  }
  if (src.TotalBytes() > 0) std::memcpy(dst->raw_data(), src.raw_data(), src.TotalBytes());
  return absl::OkStatus();
}
absl::Status Device::BeginCapture() {
  return absl::UnimplementedError(absl::StrCat(name(), " cannot capture a step"));
}

absl::StatusOr<std::unique_ptr<CapturedWork>> Device::EndCapture() {
  return absl::FailedPreconditionError(absl::StrCat(name(), " is not capturing"));
}

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
