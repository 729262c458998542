// Makes a GPU ordinal current on the calling thread for a scope and puts
// the thread's previous device back at its end. Code that runs on threads it
// does not own (allocator callbacks inside another device's work, an
// executor thread enqueuing for several GPUs) must not leave them moved:
// a later runtime call there would silently target the wrong GPU.
//
//   ScopedDevice on(ordinal);
//   if (!on.ok()) return CudaStatus(on.error(), "selecting GPU ordinal ...");
//
// A failed switch leaves the thread where it was and no CUDA error pending.
// Not thread-safe by nature: it changes the calling thread's state only.
#ifndef SLUICE_RUNTIME_GPU_SCOPED_DEVICE_H_
#define SLUICE_RUNTIME_GPU_SCOPED_DEVICE_H_

#include <cuda_runtime_api.h>

namespace sluice {

class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal) : ordinal_(ordinal) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      (void)cudaGetLastError();
      previous_ = -1;
    }
    if (previous_ != ordinal_) error_ = cudaSetDevice(ordinal_);
    if (error_ != cudaSuccess) (void)cudaGetLastError();
  }
  ~ScopedDevice() {
    if (ok() && previous_ >= 0 && previous_ != ordinal_) (void)cudaSetDevice(previous_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

  bool ok() const { return error_ == cudaSuccess; }
  // Why the switch failed (cudaSuccess when it did not).
  cudaError_t error() const { return error_; }

 private:
  const int ordinal_;
  int previous_ = -1;
  cudaError_t error_ = cudaSuccess;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_SCOPED_DEVICE_H_
