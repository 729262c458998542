// GpuDevice: one CUDA GPU as a Sluice device.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<GpuDevice> gpu, GpuDevice::Create(
//       {.name = "/job:localhost/replica:0/task:0/device:GPU:0", .ordinal = 0}));
//   // in a kernel:
//   RETURN_IF_ERROR(gpu->Activate());
//   MyKernel<<<blocks, threads, 0, gpu->compute_stream()>>>(...);
//
// Streams. Every kernel of the device runs on one compute stream, so kernels
// are ordered by the order their Compute calls enqueue them, and a buffer
// freed after its last kernel was enqueued may be handed to the next kernel
// at once. Copies run on their own streams (host-to-device, device-to-host,
// device-to-device from a peer) and are ordered against the compute stream
// with events: a copy into a fresh buffer first waits for the compute work
// already queued (which may still read the buffer's previous owner), and
// kernels queued after a copy wait for it.
//
// Memory. Device memory comes from a BfcAllocator over cudaMalloc (limit:
// options.memory_limit, else memory_fraction of the free memory at start);
// host memory for HostMemory args and copies comes from a BfcAllocator over
// pinned cudaHostAlloc memory. Tensors of this device with on_device() true
// are never touched by the host.
//
// Completion. Compute returns once work is enqueued; ThenExecute calls back
// (on the device's thread pool) when the work queued so far is done, via a
// thread that waits for recorded events in order. Sync waits for all of it.
//
// Thread-safe: any thread may enqueue (each entry point makes the device
// current on its thread first); cuBLAS calls are serialized per device.
#ifndef SLUICE_RUNTIME_GPU_GPU_DEVICE_H_
#define SLUICE_RUNTIME_GPU_GPU_DEVICE_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/bfc_allocator.h"
#include "runtime/device.h"
#include "runtime/gpu/event_queue.h"

namespace sluice {

struct GpuDeviceOptions {
  std::string name = "/job:localhost/replica:0/task:0/device:GPU:0";
  int ordinal = 0;                 // the CUDA device
  int num_threads = 2;             // the device's pool: launches and callbacks
  int64_t memory_limit = 0;        // bytes; 0: memory_fraction of free memory
  double memory_fraction = 0.9;
  int64_t pinned_memory_limit = 0; // bytes of pinned host memory; 0: no limit
  bool poison_allocations = false; // fill fresh blocks with 0xFF (tests)
};

class GpuDevice : public Device {
 public:
  // Unavailable when the ordinal is not a visible device; the CUDA error
  // otherwise (streams, handles, memory).
  static absl::StatusOr<std::unique_ptr<GpuDevice>> Create(const GpuDeviceOptions& options);
  // Waits for queued work, then frees streams, events and handles. Tensors of
  // this device must be gone or must not be used afterwards.
  ~GpuDevice() override;

  // --- Device ---
  Allocator* allocator() override { return device_allocator_.get(); }
  ThreadPool* thread_pool() override { return &pool_; }
  bool has_device_memory() const override { return true; }
  Allocator* host_allocator() override { return pinned_allocator_.get(); }
  absl::StatusOr<Tensor> CopyToHost(const Tensor& t) override;
  absl::StatusOr<Tensor> CopyFromHost(const Tensor& t) override;
  absl::Status CopyWithinDevice(const Tensor& src, Tensor* dst) override;
  absl::Status Sync() override;

  // --- For GPU kernels and transfers ---
  int ordinal() const { return options_.ordinal; }
  // "NVIDIA H100 80GB HBM3", from cudaGetDeviceProperties.
  const std::string& gpu_name() const { return gpu_name_; }
  int multiprocessor_count() const { return sm_count_; }
  cudaStream_t compute_stream() const { return compute_; }
  // Makes this device current on the calling thread (cudaSetDevice).
  absl::Status Activate() const;
  // Calls fn with the device's cuBLAS handle (bound to the compute stream,
  // workspace set) under the handle's lock; `what` names the caller in errors.
  absl::Status WithBlas(absl::FunctionRef<cublasStatus_t(cublasHandle_t)> fn,
                        absl::string_view what);
  // `done` runs on the pool once the work queued so far on the compute
  // stream is done, with its status.
  void ThenExecute(std::function<void(absl::Status)> done);
  // Device -> pinned host tensor; `done` (on the pool) once the copy is
  // complete. The copy waits for the compute work queued before this call.
  void CopyToHostAsync(const Tensor& t, std::function<void(absl::StatusOr<Tensor>)> done);
  // Another GPU's tensor (complete) -> a tensor of this device, ready for
  // kernels queued after this call. Peer access when the two GPUs have it,
  // else the driver stages through host memory.
  absl::StatusOr<Tensor> CopyFromPeer(const Tensor& t);
  // Bytes of device memory in use and free under this device's limit.
  AllocatorStats MemoryStats() const { return device_allocator_->GetStats(); }

 private:
  // The compute stream as the device allocator's poisoning sees it: shared,
  // since the allocator may outlive the device (then nothing is poisoned).
  struct PoisonTarget;

  explicit GpuDevice(const GpuDeviceOptions& options);
  absl::Status Init();
  // Makes `copy_stream` wait for the compute work queued so far.
  absl::Status CopyAfterCompute(cudaStream_t copy_stream);
  // Makes the compute stream wait for the work queued so far on `copy_stream`.
  absl::Status ComputeAfterCopy(cudaStream_t copy_stream);
  // Both of the above: `waiter` waits for an event recorded on `waited`.
  absl::Status StreamWait(cudaStream_t waiter, cudaStream_t waited);
  // CopyWithinDevice where one side is host memory: on the compute stream.
  absl::Status CopyMixedOnCompute(const Tensor& src, Tensor* dst);

  const GpuDeviceOptions options_;
  std::string gpu_name_;
  int sm_count_ = 0;
  cudaStream_t compute_ = nullptr;
  cudaStream_t host_to_device_ = nullptr;
  cudaStream_t device_to_host_ = nullptr;
  cudaStream_t device_to_device_ = nullptr;
  std::shared_ptr<PoisonTarget> poison_;
  std::shared_ptr<BfcAllocator> device_allocator_;
  std::shared_ptr<BfcAllocator> pinned_allocator_;
  std::unique_ptr<EventQueue> events_;
  // Events for stream-to-stream waits; reusable as soon as the wait is
  // enqueued (the waiting stream keeps the state it saw).
  absl::Mutex wait_events_mu_;
  std::vector<cudaEvent_t> wait_events_ ABSL_GUARDED_BY(wait_events_mu_);
  absl::Mutex blas_mu_;
  cublasHandle_t blas_ ABSL_GUARDED_BY(blas_mu_) = nullptr;
  void* blas_workspace_ = nullptr;
  // Destroyed first of the members (after ~GpuDevice has drained events_),
  // running the callbacks still queued while the allocators are alive.
  ThreadPool pool_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_GPU_DEVICE_H_
