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
// memory_limit, else memory_fraction of the memory free when the context
// was made);
// host memory for HostMemory args and copies comes from a BfcAllocator over
// pinned cudaHostAlloc memory. Tensors of this device with on_device() true
// are never touched by the host.
//
// Sharing. The streams, allocators, event queue, thread pool and cuBLAS
// handle belong to the process-wide GpuContext of the ordinal and logical
// GPU (runtime/gpu/gpu_context.h), made by the first GpuDevice of that pair;
// a GpuDevice only adds its name and its own ResourceMgr (sessions never
// share variables), so creating one is cheap. All devices of one (ordinal,
// logical GPU) therefore share one memory limit: the first creation's
// memory_limit / memory_fraction / pinned_memory_limit / num_threads are
// kept and later ones ignored. poison_allocations is honoured per device:
// fresh blocks are poisoned while any live device of the pair asked for it.
// Sync waits for the shared streams, so it also waits for other devices'
// work on that (logical) GPU; logical GPUs of one card have streams and
// allocators of their own.
//
// Completion. Compute returns once work is enqueued; ThenExecute calls back
// (on the context's thread pool) when the work queued so far is done, via a
// thread that waits for recorded events in order. Sync waits for all of it.
//
// Thread-safe: any thread may enqueue (each entry point makes the device
// current on its thread first); cuBLAS calls are serialized per GPU.
// Ownership: the caller owns the GpuDevice; the context outlives it.
#ifndef SLUICE_RUNTIME_GPU_GPU_DEVICE_H_
#define SLUICE_RUNTIME_GPU_GPU_DEVICE_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/capture_arena.h"
#include "runtime/device.h"
#include "runtime/gpu/gpu_context.h"

namespace sluice {

struct GpuDeviceOptions {
  std::string name = "/job:localhost/replica:0/task:0/device:GPU:0";
  int ordinal = 0;                 // the CUDA device
  int logical = 0;                 // which logical GPU of it (runtime/gpu/logical_gpus.h)
  // The GPU's context (see "Sharing"): used by the first device of the
  // ordinal in the process, ignored afterwards.
  int num_threads = 2;             // the pool: launches and callbacks
  int64_t memory_limit = 0;        // bytes; 0: memory_fraction of free memory
  double memory_fraction = 0.9;
  int64_t pinned_memory_limit = 0; // bytes of pinned host memory; 0: no limit
  // Per device: fill fresh blocks with 0xFF (tests) while this device lives.
  bool poison_allocations = false;
};

class GpuDevice : public Device {
 public:
  // Unavailable when the ordinal is not a visible device; InvalidArgument for
  // bad limits; the CUDA error when the GPU's context cannot be made
  // (streams, handles, memory). Cheap once the ordinal's context exists.
  static absl::StatusOr<std::unique_ptr<GpuDevice>> Create(const GpuDeviceOptions& options);
  // Waits for the GPU's queued work and for the callbacks this device
  // queued, so none runs after it is gone. Leaves the shared context alone.
  // Not to be destroyed on the context's thread pool.
  ~GpuDevice() override;

  // --- Device ---
  Allocator* allocator() override {
    Allocator* recording = capture_allocator_.load(std::memory_order_acquire);
    return recording != nullptr ? recording : context_->device_allocator();
  }
  ThreadPool* thread_pool() override { return context_->thread_pool(); }
  bool has_device_memory() const override { return true; }
  Allocator* host_allocator() override { return context_->pinned_allocator(); }
  absl::StatusOr<Tensor> CopyToHost(const Tensor& t) override;
  absl::StatusOr<Tensor> CopyFromHost(const Tensor& t) override;
  absl::Status CopyWithinDevice(const Tensor& src, Tensor* dst) override;
  absl::Status Sync() override;
  // Recording a step is a CUDA stream capture: while it lasts this device's
  // kernels queue onto a capture stream of its own (compute_stream()),
  // allocate from a CaptureArena, and CopyFromHost uploads at once (the
  // value is part of the recording: a recorded step's host values depend
  // only on its feed shapes). CopyToHost and host-side copies fail. Other
  // devices of the GPU are unaffected. The recording replays as a CUDA graph
  // on the compute stream.
  bool can_capture() const override { return true; }
  absl::Status BeginCapture() override;
  absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() override;

  // --- For GPU kernels and transfers ---
  int ordinal() const { return context_->ordinal(); }
  // Which logical GPU of the ordinal this device is (0 unless carved).
  int logical() const { return context_->logical(); }
  // Whether `t` lies in this device's memory (its context's allocator): a
  // tensor of another logical GPU of the same card does not, and is copied
  // (the two allocators reuse blocks in their own streams' order).
  bool HoldsInItsMemory(const Tensor& t) const;
  // "NVIDIA H100 80GB HBM3", from cudaGetDeviceProperties.
  const std::string& gpu_name() const { return context_->gpu_name(); }
  int multiprocessor_count() const { return context_->multiprocessor_count(); }
  // The stream kernels queue on: the GPU's compute stream, or the capture
  // stream while this device records a step.
  cudaStream_t compute_stream() const {
    cudaStream_t recording = capture_stream_.load(std::memory_order_acquire);
    return recording != nullptr ? recording : context_->compute_stream();
  }
  // Makes this device current on the calling thread (cudaSetDevice).
  absl::Status Activate() const;
  // Calls fn with the GPU's cuBLAS handle (bound to the compute stream,
  // workspace set) under the handle's lock; `what` names the caller in errors.
  absl::Status WithBlas(absl::FunctionRef<cublasStatus_t(cublasHandle_t)> fn,
                        absl::string_view what);
  // Calls fn with cuBLASLt, its handle, the compute stream and the shared
  // BLAS workspace, under the same lock (GpuContext::WithBlasLt).
  absl::Status WithBlasLt(absl::FunctionRef<cublasStatus_t(const GpuContext::BlasLt&)> fn,
                          absl::string_view what);
  // `done` runs on the pool once the work queued so far on the compute
  // stream is done, with its status.
  void ThenExecute(std::function<void(absl::Status)> done);
  // Device -> pinned host tensor; `done` (on the pool) once the copy is
  // complete. The copy waits for the compute work queued before this call.
  void CopyToHostAsync(const Tensor& t, std::function<void(absl::StatusOr<Tensor>)> done);
  // Another GPU's tensor (complete) -> a tensor of this device, ready for
  // kernels queued after this call. Peer access when the two GPUs have it,
  // else the driver stages through host memory; between two logical GPUs of
  // one card, a device-to-device copy.
  absl::StatusOr<Tensor> CopyFromPeer(const Tensor& t);
  // Bytes of device memory in use and free under the GPU's limit (shared by
  // every device of this ordinal and logical GPU).
  AllocatorStats MemoryStats() const { return context_->device_allocator()->GetStats(); }
  // The shared per-GPU state.
  GpuContext* context() const { return context_.get(); }

 private:
  // Callbacks this device has queued on the shared event queue or pool and
  // that have not finished: the destructor waits for them. Shared with the
  // callbacks, so the count outlives the device.
  struct InFlight;
  // A recording under way.
  struct Capture;

  GpuDevice(const GpuDeviceOptions& options, std::shared_ptr<GpuContext> context);
  // `done` wrapped to count as in flight until it has run.
  std::function<void(absl::Status)> Track(std::function<void(absl::Status)> done);
  // Runs `fn` on the pool, counted as in flight.
  void Schedule(std::function<void()> fn);
  // Makes `copy_stream` wait for the compute work queued so far.
  absl::Status CopyAfterCompute(cudaStream_t copy_stream);
  // Makes the compute stream wait for the work queued so far on `copy_stream`.
  absl::Status ComputeAfterCopy(cudaStream_t copy_stream);
  // CopyWithinDevice where one side is host memory: on the compute stream.
  absl::Status CopyMixedOnCompute(const Tensor& src, Tensor* dst);
  bool capturing() const { return capture_stream_.load(std::memory_order_acquire) != nullptr; }
  // FailedPrecondition naming `what` while recording.
  absl::Status RefuseWhileCapturing(absl::string_view what) const;
  // CopyFromHost while recording: a synchronous upload into arena memory.
  absl::StatusOr<Tensor> UploadWhileCapturing(const Tensor& t);

  const GpuDeviceOptions options_;
  const std::shared_ptr<GpuContext> context_;
  const std::shared_ptr<InFlight> in_flight_;
  absl::Mutex capture_mu_;
  std::unique_ptr<Capture> capture_ ABSL_GUARDED_BY(capture_mu_);
  // Set while recording (read by kernels' threads without the lock).
  std::atomic<cudaStream_t> capture_stream_{nullptr};
  std::atomic<Allocator*> capture_allocator_{nullptr};
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_GPU_DEVICE_H_
