// FakeDeviceMemory (tests): host memory that an allocator reports as device
// memory (MemoryKind::kDevice), so the executor, copies and collectives take
// their device-memory paths without a GPU.
//
//   auto memory = std::make_shared<FakeDeviceMemory>("xpu");
//   Tensor t = *Tensor::Allocate(memory.get(), DT_FLOAT, TensorShape({4}));
//   // t.on_device() is true; its bytes are still readable by the test.
#ifndef SLUICE_RUNTIME_FAKE_DEVICE_MEMORY_H_
#define SLUICE_RUNTIME_FAKE_DEVICE_MEMORY_H_

#include <string>
#include <utility>

#include "runtime/allocator.h"

namespace sluice {

class FakeDeviceMemory : public CpuAllocator {
 public:
  // `ordinal`: the device_ordinal() it reports (-1 as host memory does).
  explicit FakeDeviceMemory(std::string name, int ordinal = 0)
      : CpuAllocator(std::move(name)), ordinal_(ordinal) {}
  MemoryKind memory_kind() const override { return MemoryKind::kDevice; }
  int device_ordinal() const override { return ordinal_; }

 private:
  const int ordinal_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_FAKE_DEVICE_MEMORY_H_
