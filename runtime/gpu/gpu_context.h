// GpuContext: the process-wide state of one CUDA GPU (or of one logical GPU
// carved from it: runtime/gpu/logical_gpus.h), shared by every GpuDevice of
// that ordinal and logical index (TensorFlow keeps one such state per GPU too).
// It holds what is costly to make or must not be split: the compute stream
// and three copy streams, the event queue and the thread pool its callbacks
// run on, the BFC allocators over device memory and over pinned host memory,
// the cuBLAS and cuBLASLt handles with their workspace, and the device's properties. A
// GpuDevice (runtime/gpu/gpu_device.h) is a thin, cheap view of a context
// with its own name and its own variables.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<GpuContext> ctx,
//                    GpuContext::Get({.ordinal = 0, .memory_limit = int64_t{1} << 30}));
//   RETURN_IF_ERROR(ctx->Activate("my kernel"));
//   MyKernel<<<blocks, threads, 0, ctx->compute_stream()>>>(...);
//
// Options. The first successful Get for an (ordinal, logical) pair creates its context with
// that call's options (memory limit or fraction of the memory free at that
// moment, pinned limit, pool size); later calls return the same context and
// ignore theirs, so a second session asking for another limit shares the
// first one's allocator (options() tells what was used). Poisoning is the
// exception: fresh device blocks are filled with 0xFF while at least one
// RequestPoisoning is not yet matched by ReleasePoisoning, so tests can turn
// it on per session.
//
// Lifetime. A context is created on first use and never destroyed: the
// process-wide registry that holds it is deliberately leaked, so no
// destructor runs at exit and tensors freed by static destructors, callbacks
// still queued, and the CUDA runtime's own teardown never race a context
// being torn down. Its threads (the event queue's and the pool's) stay
// parked and end with the process. The destructor only runs for a context
// whose creation failed.
//
// Thread-safe: any thread may enqueue; cuBLAS calls are serialized.
#ifndef SLUICE_RUNTIME_GPU_GPU_CONTEXT_H_
#define SLUICE_RUNTIME_GPU_GPU_CONTEXT_H_

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "runtime/bfc_allocator.h"
#include "runtime/gpu/cublaslt_library.h"
#include "runtime/gpu/event_queue.h"
#include "runtime/thread_pool.h"

namespace sluice {

struct GpuContextOptions {
  int ordinal = 0;                  // the CUDA device
  // Which logical GPU of the ordinal (runtime/gpu/logical_gpus.h): each has
  // a context of its own, so its own streams and memory limit.
  int logical = 0;
  int num_threads = 2;              // the pool: launches and callbacks
  int64_t memory_limit = 0;         // bytes; 0: memory_fraction of free memory
  double memory_fraction = 0.9;
  int64_t pinned_memory_limit = 0;  // bytes of pinned host memory; 0: no limit
};

class GpuContext {
 public:
  // The process's context for options.ordinal, created by the first call
  // (see "Options" above). InvalidArgument for bad limits; Unavailable when
  // the ordinal is not a visible device; the CUDA error when creating the
  // streams, handles or memory fails (then a later call tries again).
  static absl::StatusOr<std::shared_ptr<GpuContext>> Get(const GpuContextOptions& options);

  // From the start of a step's recording (cudaStreamBeginCapture) until
  // the recording is instantiated: no allocator of a context of this
  // physical GPU (its logical GPUs') gives memory back to CUDA meanwhile
  // (cudaFree synchronizes, which a capture forbids); an allocation that
  // would need it fails instead. Each Begin needs one End.
  void BeginRecordingHold();
  void EndRecordingHold();

  // Only for a context whose creation failed: contexts handed out by Get
  // live until the process exits.
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  // The options the context was created with.
  const GpuContextOptions& options() const { return options_; }
  int ordinal() const { return options_.ordinal; }
  int logical() const { return options_.logical; }
  // "NVIDIA H100 80GB HBM3", from cudaGetDeviceProperties.
  const std::string& gpu_name() const { return gpu_name_; }
  int multiprocessor_count() const { return sm_count_; }

  cudaStream_t compute_stream() const { return compute_; }
  cudaStream_t host_to_device_stream() const { return host_to_device_; }
  cudaStream_t device_to_host_stream() const { return device_to_host_; }
  cudaStream_t device_to_device_stream() const { return device_to_device_; }
  BfcAllocator* device_allocator() const { return device_allocator_.get(); }
  BfcAllocator* pinned_allocator() const { return pinned_allocator_.get(); }
  EventQueue* events() const { return events_.get(); }
  ThreadPool* thread_pool() { return &pool_; }

  // Makes the GPU current on the calling thread; `who` names the caller in
  // the error.
  absl::Status Activate(absl::string_view who) const;
  // Calls fn with the cuBLAS handle (bound to `stream`, workspace set) under
  // the handle's lock; errors say "`what` on `who`".
  absl::Status WithBlas(cudaStream_t stream, absl::FunctionRef<cublasStatus_t(cublasHandle_t)> fn,
                        absl::string_view what, absl::string_view who);
  // What a cuBLASLt call needs: the library, the handle (made on first
  // use), the stream and the workspace it shares with cuBLAS.
  struct BlasLt {
    const CublasLtApi* api;
    cublasLtHandle_t handle;
    cudaStream_t stream;
    void* workspace;
    size_t workspace_bytes;
  };
  // Calls fn under the cuBLAS lock (the two share one workspace); errors
  // say "`what` on `who`". Unavailable when cuBLASLt cannot be opened.
  absl::Status WithBlasLt(cudaStream_t stream, absl::FunctionRef<cublasStatus_t(const BlasLt&)> fn,
                          absl::string_view what, absl::string_view who);
  // Makes `waiter` wait for the work queued so far on `waited`; `who` names
  // the caller in errors.
  absl::Status StreamWait(cudaStream_t waiter, cudaStream_t waited, absl::string_view who);
  // Waits for every stream; the first error, naming `who`.
  absl::Status Sync(absl::string_view who);

  // Poisoning of fresh device blocks is on while requests outnumber
  // releases.
  void RequestPoisoning();
  void ReleasePoisoning();

 private:
  // What the device allocator's on_allocate hook sees: shared with the
  // hook, since the allocator may outlive a context that failed to init.
  struct PoisonState;

  explicit GpuContext(const GpuContextOptions& options);
  absl::Status Init();

  const GpuContextOptions options_;
  std::string gpu_name_;
  int sm_count_ = 0;
  cudaStream_t compute_ = nullptr;
  cudaStream_t host_to_device_ = nullptr;
  cudaStream_t device_to_host_ = nullptr;
  cudaStream_t device_to_device_ = nullptr;
  std::shared_ptr<PoisonState> poison_;
  std::shared_ptr<BfcAllocator> device_allocator_;
  std::shared_ptr<BfcAllocator> pinned_allocator_;
  std::unique_ptr<EventQueue> events_;
  // Events for stream-to-stream waits; reusable as soon as the wait is
  // enqueued (the waiting stream keeps the state it saw).
  absl::Mutex wait_events_mu_;
  std::vector<cudaEvent_t> wait_events_ ABSL_GUARDED_BY(wait_events_mu_);
  absl::Mutex blas_mu_;
  cublasHandle_t blas_ ABSL_GUARDED_BY(blas_mu_) = nullptr;
  cudaStream_t blas_stream_ ABSL_GUARDED_BY(blas_mu_) = nullptr;
  cublasLtHandle_t blas_lt_ ABSL_GUARDED_BY(blas_mu_) = nullptr;
  void* blas_workspace_ = nullptr;
  // Destroyed first of the members (after ~GpuContext has drained events_),
  // running the callbacks still queued while the allocators are alive.
  ThreadPool pool_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_GPU_CONTEXT_H_
