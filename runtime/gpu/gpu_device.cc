#include "runtime/gpu/gpu_device.h"

#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "runtime/gpu/cuda_status.h"

namespace sluice {

struct GpuDevice::InFlight {
  absl::Mutex mu;
  int count ABSL_GUARDED_BY(mu) = 0;

  void Add() {
    absl::MutexLock lock(&mu);
    ++count;
  }
  void Done() {
    absl::MutexLock lock(&mu);
    --count;
  }
  void AwaitNone() {
    auto none = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return count == 0; };
    absl::MutexLock lock(&mu, absl::Condition(&none));
  }
};

GpuDevice::GpuDevice(const GpuDeviceOptions& options, std::shared_ptr<GpuContext> context)
    : Device(options.name, kDeviceTypeGpu),
      options_(options),
      context_(std::move(context)),
      in_flight_(std::make_shared<InFlight>()) {
  if (options_.poison_allocations) context_->RequestPoisoning();
}

absl::StatusOr<std::unique_ptr<GpuDevice>> GpuDevice::Create(const GpuDeviceOptions& options) {
  GpuContextOptions context_options;
  context_options.ordinal = options.ordinal;
  context_options.logical = options.logical;
  context_options.num_threads = options.num_threads;
  context_options.memory_limit = options.memory_limit;
  context_options.memory_fraction = options.memory_fraction;
  context_options.pinned_memory_limit = options.pinned_memory_limit;
  absl::StatusOr<std::shared_ptr<GpuContext>> context = GpuContext::Get(context_options);
  if (!context.ok()) {
    return AddContext(context.status(), absl::StrCat("creating GPU device ", options.name));
  }
  return std::unique_ptr<GpuDevice>(new GpuDevice(options, *std::move(context)));
}

GpuDevice::~GpuDevice() {
  // The streams are shared: waiting for them also waits for other devices'
  // work, which is bounded. Then every callback this device queued has its
  // event complete and only has to be run by the pool.
  (void)Sync();
  in_flight_->AwaitNone();
  if (options_.poison_allocations) context_->ReleasePoisoning();
}

std::function<void(absl::Status)> GpuDevice::Track(std::function<void(absl::Status)> done) {
  in_flight_->Add();
  return [state = in_flight_, done = std::move(done)](absl::Status s) mutable {
    done(std::move(s));
    done = nullptr;  // what it holds goes before the device may
    state->Done();
  };
}

void GpuDevice::Schedule(std::function<void()> fn) {
  in_flight_->Add();
  context_->thread_pool()->Schedule([state = in_flight_, fn = std::move(fn)]() mutable {
    fn();
    fn = nullptr;
    state->Done();
  });
}

absl::Status GpuDevice::Activate() const { return context_->Activate(name()); }

absl::Status GpuDevice::WithBlas(absl::FunctionRef<cublasStatus_t(cublasHandle_t)> fn,
                                 absl::string_view what) {
  return context_->WithBlas(compute_stream(), fn, what, name());
}

absl::Status GpuDevice::WithBlasLt(
    absl::FunctionRef<cublasStatus_t(const GpuContext::BlasLt&)> fn, absl::string_view what) {
  return context_->WithBlasLt(compute_stream(), fn, what, name());
}

// ---- Recording a step -------------------------------------------------------

struct GpuDevice::Capture {
  cudaStream_t stream = nullptr;
  std::shared_ptr<CaptureArena> arena;
  // Host values copied in while recording (UploadWhileCapturing), which the
  // recording reads at every replay.
  std::vector<Tensor> uploads;
};

namespace {

// A recorded step: a CUDA graph replayed on the GPU's compute stream. The
// arena's blocks stay reserved until it is gone (after its last replay).
// It holds the values uploaded while recording: no kernel may take such a
// buffer over for its output (OpKernelContext::forward_input_or_allocate_output
// forwards a buffer no one else holds), or the first replay would
// overwrite what every later one reads.
class GpuCapturedWork : public CapturedWork {
 public:
  GpuCapturedWork(std::shared_ptr<GpuContext> context, std::string who, cudaGraphExec_t exec,
                  std::shared_ptr<CaptureArena> arena, std::vector<Tensor> uploads)
      : context_(std::move(context)),
        who_(std::move(who)),
        exec_(exec),
        arena_(std::move(arena)),
        uploads_(std::move(uploads)) {}
  ~GpuCapturedWork() override {
    if (context_->Activate(who_).ok()) {
      (void)cudaStreamSynchronize(context_->compute_stream());
      (void)cudaGraphExecDestroy(exec_);
      (void)cudaGetLastError();
    }
    arena_->Release();
  }

  absl::Status Replay() override {
    RETURN_IF_ERROR(context_->Activate(who_));
    const cudaError_t code = cudaGraphLaunch(exec_, context_->compute_stream());
    if (code != cudaSuccess) {
      (void)cudaGetLastError();
      return CudaStatus(code, absl::StrCat("replaying a recorded step on ", who_));
    }
    return absl::OkStatus();
  }

 private:
  const std::shared_ptr<GpuContext> context_;
  const std::string who_;
  const cudaGraphExec_t exec_;
  const std::shared_ptr<CaptureArena> arena_;
  const std::vector<Tensor> uploads_;
};

}  // namespace

absl::Status GpuDevice::BeginCapture() {
  RETURN_IF_ERROR(Activate());
  absl::MutexLock lock(&capture_mu_);
  if (capture_ != nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(name(), " is already recording a step"));
  }
  auto c = std::make_unique<Capture>();
  RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking),
                             absl::StrCat("creating a capture stream on ", name())));
  // No cudaFree (or cudaFreeHost) anywhere until EndCapture has
  // instantiated the recording.
  context_->BeginRecordingHold();
  // Relaxed: the recording thread may still allocate (cudaMalloc) and copy
  // on other streams.
  const cudaError_t code = cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeRelaxed);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    (void)cudaStreamDestroy(c->stream);
    context_->EndRecordingHold();
    return CudaStatus(code, absl::StrCat("starting to record a step on ", name()));
  }
  c->arena = std::make_shared<CaptureArena>(context_->device_allocator());
  capture_allocator_.store(c->arena.get(), std::memory_order_release);
  capture_stream_.store(c->stream, std::memory_order_release);
  capture_ = std::move(c);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CapturedWork>> GpuDevice::EndCapture() {
  std::unique_ptr<Capture> c;
  {
    absl::MutexLock lock(&capture_mu_);
    c = std::move(capture_);
  }
  if (c == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(name(), " is not recording a step"));
  }
  capture_stream_.store(nullptr, std::memory_order_release);
  capture_allocator_.store(nullptr, std::memory_order_release);
  // The capture ends even when the GPU cannot be made current (the stream
  // must not stay capturing); the hold ends after it.
  const absl::Status active = Activate();
  cudaGraph_t graph = nullptr;
  cudaError_t code = cudaStreamEndCapture(c->stream, &graph);
  cudaGraphExec_t exec = nullptr;
  if (code == cudaSuccess && active.ok()) code = cudaGraphInstantiate(&exec, graph, 0);
  if (graph != nullptr) (void)cudaGraphDestroy(graph);
  (void)cudaStreamDestroy(c->stream);
  context_->EndRecordingHold();
  if (!active.ok()) {
    (void)cudaGetLastError();
    c->arena->Release();
    return active;
  }
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    c->arena->Release();
    return CudaStatus(code, absl::StrCat("recording a step on ", name()));
  }
  return std::unique_ptr<CapturedWork>(
      new GpuCapturedWork(context_, name(), exec, std::move(c->arena), std::move(c->uploads)));
}

absl::Status GpuDevice::RefuseWhileCapturing(absl::string_view what) const {
  if (!capturing()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(what, " on ", name(), " cannot be part of a recorded step"));
}

absl::StatusOr<Tensor> GpuDevice::UploadWhileCapturing(const Tensor& t) {
  ASSIGN_OR_RETURN(Tensor dev, Tensor::Allocate(allocator(), t.dtype(), t.shape()));
  const size_t bytes = t.TotalBytes();
  if (bytes == 0) return dev;
  // On the host-to-device stream, which is not recorded, after the compute
  // work already queued (the block may have been freed by another session's
  // kernels still queued there); done before this returns, so before any
  // replay.
  const cudaStream_t h2d = context_->host_to_device_stream();
  RETURN_IF_ERROR(CopyAfterCompute(h2d));
  cudaError_t code =
      cudaMemcpyAsync(dev.raw_data(), t.raw_data(), bytes, cudaMemcpyHostToDevice, h2d);
  if (code == cudaSuccess) code = cudaStreamSynchronize(h2d);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("copying ", bytes, " bytes from host to ", name(),
                                         " while recording a step"));
  }
  absl::MutexLock lock(&capture_mu_);
  if (capture_ != nullptr) capture_->uploads.push_back(dev);  // read at every replay
  return dev;
}

absl::Status GpuDevice::CopyAfterCompute(cudaStream_t copy_stream) {
  return context_->StreamWait(copy_stream, context_->compute_stream(), name());
}

absl::Status GpuDevice::ComputeAfterCopy(cudaStream_t copy_stream) {
  return context_->StreamWait(context_->compute_stream(), copy_stream, name());
}

absl::StatusOr<Tensor> GpuDevice::CopyToHost(const Tensor& t) {
  if (!t.on_device()) return t;
  RETURN_IF_ERROR(RefuseWhileCapturing("copying to the host"));
  RETURN_IF_ERROR(Activate());
  ASSIGN_OR_RETURN(Tensor host, Tensor::Allocate(host_allocator(), t.dtype(), t.shape()));
  const size_t bytes = t.TotalBytes();
  if (bytes == 0) return host;
  const cudaStream_t d2h = context_->device_to_host_stream();
  const std::string what = absl::StrCat("copying ", bytes, " bytes from ", name(), " to host");
  RETURN_IF_ERROR(CopyAfterCompute(d2h));
  // A tensor of another GPU (rare) is found through unified addressing.
  const cudaMemcpyKind kind = t.buffer_allocator()->device_ordinal() == ordinal()
                                  ? cudaMemcpyDeviceToHost
                                  : cudaMemcpyDefault;
  cudaError_t code = cudaMemcpyAsync(host.raw_data(), t.raw_data(), bytes, kind, d2h);
  if (code == cudaSuccess) code = cudaStreamSynchronize(d2h);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, what);
  }
  return host;
}

absl::StatusOr<Tensor> GpuDevice::CopyFromHost(const Tensor& t) {
  if (t.on_device()) return CopyFromPeer(t);  // this GPU's: itself
  if (t.dtype() == DT_STRING) {
    return absl::InvalidArgumentError(
        absl::StrCat("a string tensor cannot be copied to ", name()));
  }
  RETURN_IF_ERROR(Activate());
  if (capturing()) return UploadWhileCapturing(t);
  ASSIGN_OR_RETURN(Tensor dev, Tensor::Allocate(allocator(), t.dtype(), t.shape()));
  const size_t bytes = t.TotalBytes();
  if (bytes == 0) return dev;
  const cudaStream_t h2d = context_->host_to_device_stream();
  RETURN_IF_ERROR(CopyAfterCompute(h2d));
  // From pinned memory the copy is asynchronous and the source is kept
  // until it is done. A pageable source goes to the driver as it is: it
  // stages the bytes itself, overlapping its memcpy with the DMA, and
  // returns once it has read them all (staging here first, a whole memcpy
  // before the DMA, reached 0.61-0.78 of cudaMemcpy on an H200).
  const cudaError_t code = cudaMemcpyAsync(dev.raw_data(), t.raw_data(), bytes,
                                           cudaMemcpyHostToDevice, h2d);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("copying ", bytes, " bytes from host to ", name()));
  }
  // Pinned memory (of any GPU's context) is read while the copy runs.
  context_->events()->ThenExecute(h2d, Track([keep = t](absl::Status) {}));
  absl::Status ordered = ComputeAfterCopy(h2d);
  if (!ordered.ok()) {
    // dev's block must not be handed out again while the copy writes it.
    (void)cudaStreamSynchronize(h2d);
    (void)cudaGetLastError();
    return ordered;
  }
  return dev;
}

absl::Status GpuDevice::CopyWithinDevice(const Tensor& src, Tensor* dst) {
  const size_t bytes = src.TotalBytes();
  if (bytes != dst->TotalBytes()) {
    return absl::InternalError(absl::StrCat("CopyWithinDevice on ", name(), ": ", bytes,
                                            " bytes into ", dst->TotalBytes()));
  }
  if (!src.on_device() && !dst->on_device()) return Device::CopyWithinDevice(src, dst);
  if (bytes == 0) return absl::OkStatus();
  RETURN_IF_ERROR(Activate());
  if (!src.on_device() || !dst->on_device()) {
    RETURN_IF_ERROR(RefuseWhileCapturing("a copy between host and device memory"));
    return CopyMixedOnCompute(src, dst);
  }
  const cudaStream_t compute = compute_stream();
  const cudaMemcpyKind kind = src.buffer_allocator()->device_ordinal() == ordinal()
                                  ? cudaMemcpyDeviceToDevice
                                  : cudaMemcpyDefault;
  const cudaError_t code = cudaMemcpyAsync(dst->raw_data(), src.raw_data(), bytes, kind, compute);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("copying ", bytes, " bytes within ", name()));
  }
  return absl::OkStatus();
}

absl::Status GpuDevice::CopyMixedOnCompute(const Tensor& src, Tensor* dst) {
  const size_t bytes = src.TotalBytes();
  const bool to_device = dst->on_device();
  const cudaStream_t compute = context_->compute_stream();
  const std::string what = absl::StrCat("copying ", bytes, " bytes ",
                                        to_device ? "from host to " : "to host from ", name());
  cudaError_t code =
      cudaMemcpyAsync(dst->raw_data(), src.raw_data(), bytes, cudaMemcpyDefault, compute);
  if (code == cudaSuccess && !to_device) {
    // The host may read dst as soon as this returns.
    code = cudaStreamSynchronize(compute);
  }
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, what);
  }
  if (to_device) context_->events()->ThenExecute(compute, Track([keep = src](absl::Status) {}));
  return absl::OkStatus();
}

absl::Status GpuDevice::Sync() {
  if (capturing()) return absl::OkStatus();  // nothing runs until a replay
  return context_->Sync(name());
}

void GpuDevice::ThenExecute(std::function<void(absl::Status)> done) {
  if (capturing()) {
    // Recorded work never completes as such; what it keeps alive is held
    // by the recording's arena.
    Schedule([done = std::move(done)] { done(absl::OkStatus()); });
    return;
  }
  context_->events()->ThenExecute(context_->compute_stream(), Track(std::move(done)));
}

void GpuDevice::CopyToHostAsync(const Tensor& t,
                                std::function<void(absl::StatusOr<Tensor>)> done) {
  auto fail = [this, &done](absl::Status s) {
    Schedule([done = std::move(done), s = std::move(s)] { done(s); });
  };
  if (!t.on_device()) {
    Schedule([done = std::move(done), t] { done(t); });
    return;
  }
  absl::Status s = RefuseWhileCapturing("copying to the host");
  if (s.ok()) s = Activate();
  if (!s.ok()) return fail(std::move(s));
  absl::StatusOr<Tensor> host = Tensor::Allocate(host_allocator(), t.dtype(), t.shape());
  if (!host.ok()) return fail(host.status());
  const size_t bytes = t.TotalBytes();
  if (bytes == 0) {
    Schedule([done = std::move(done), host = *std::move(host)] { done(host); });
    return;
  }
  const cudaStream_t d2h = context_->device_to_host_stream();
  s = CopyAfterCompute(d2h);
  if (!s.ok()) return fail(std::move(s));
  const cudaMemcpyKind kind = t.buffer_allocator()->device_ordinal() == ordinal()
                                  ? cudaMemcpyDeviceToHost
                                  : cudaMemcpyDefault;
  const cudaError_t code =
      cudaMemcpyAsync(host->raw_data(), t.raw_data(), bytes, kind, d2h);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(CudaStatus(code, absl::StrCat("copying ", bytes, " bytes from ", name(),
                                              " to host")));
  }
  // The source stays alive (its block unused by later kernels) until the
  // copy has read it.
  context_->events()->ThenExecute(
      d2h, Track([done = std::move(done), host = *std::move(host), src = t](absl::Status status) {
        if (!status.ok()) {
          done(std::move(status));
        } else {
          done(host);
        }
      }));
}

bool GpuDevice::HoldsInItsMemory(const Tensor& t) const {
  if (!t.on_device() || t.buffer_allocator() == nullptr) return false;
  const Allocator* a = t.buffer_allocator();
  if (const auto* arena = dynamic_cast<const CaptureArena*>(a); arena != nullptr) {
    a = arena->base();
  }
  return a == context_->device_allocator();
}

absl::StatusOr<Tensor> GpuDevice::CopyFromPeer(const Tensor& t) {
  if (!t.on_device()) return CopyFromHost(t);
  if (HoldsInItsMemory(t)) return t;
  const int src_ordinal = t.buffer_allocator()->device_ordinal();
  RETURN_IF_ERROR(RefuseWhileCapturing("copying from another GPU"));
  if (src_ordinal < 0) {
    return absl::InternalError(absl::StrCat("copying to ", name(), ": device memory of ",
                                            t.buffer_allocator()->Name(),
                                            " names no GPU ordinal"));
  }
  RETURN_IF_ERROR(Activate());
  ASSIGN_OR_RETURN(Tensor dev, Tensor::Allocate(allocator(), t.dtype(), t.shape()));
  const size_t bytes = t.TotalBytes();
  if (bytes == 0) return dev;
  const cudaStream_t d2d = context_->device_to_device_stream();
  RETURN_IF_ERROR(CopyAfterCompute(d2d));
  // Another logical GPU of this card: one memory, so a plain copy.
  const cudaError_t code =
      src_ordinal == ordinal()
          ? cudaMemcpyAsync(dev.raw_data(), t.raw_data(), bytes, cudaMemcpyDeviceToDevice, d2d)
          : cudaMemcpyPeerAsync(dev.raw_data(), ordinal(), t.raw_data(), src_ordinal, bytes,
                                d2d);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("copying ", bytes, " bytes from ",
                                         t.buffer_allocator()->Name(), " to ", name()));
  }
  context_->events()->ThenExecute(d2d, Track([keep = t](absl::Status) {}));
  absl::Status ordered = ComputeAfterCopy(d2d);
  if (!ordered.ok()) {
    (void)cudaStreamSynchronize(d2d);
    (void)cudaGetLastError();
    return ordered;
  }
  return dev;
}

}  // namespace sluice
