#include "runtime/gpu/gpu_device.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/gpu/cuda_status.h"

namespace sluice {
namespace {

constexpr int64_t kInitialDeviceRegion = int64_t{64} << 20;
constexpr int64_t kInitialPinnedRegion = int64_t{16} << 20;
constexpr size_t kBlasWorkspaceBytes = size_t{32} << 20;

// Makes `ordinal` current on this thread and puts the previous device back
// on destruction: allocator callbacks run inside other devices' work (a
// tensor of GPU:0 freed while GPU:1 launches) and must not move that thread.
class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal) : ordinal_(ordinal) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      (void)cudaGetLastError();
      previous_ = -1;
    }
    ok_ = previous_ == ordinal_ || cudaSetDevice(ordinal_) == cudaSuccess;
    if (!ok_) (void)cudaGetLastError();
  }
  ~ScopedDevice() {
    if (ok_ && previous_ >= 0 && previous_ != ordinal_) (void)cudaSetDevice(previous_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  bool ok() const { return ok_; }

 private:
  const int ordinal_;
  int previous_ = -1;
  bool ok_ = false;
};

// Device memory regions for the BfcAllocator. Self-contained (no pointer to
// the GpuDevice): tensors may free their blocks after the device is gone.
class CudaMallocSubAllocator : public SubAllocator {
 public:
  explicit CudaMallocSubAllocator(int ordinal) : ordinal_(ordinal) {}
  void* Alloc(size_t bytes) override {
    ScopedDevice scope(ordinal_);
    if (!scope.ok()) return nullptr;
    void* ptr = nullptr;
    if (cudaMalloc(&ptr, bytes) != cudaSuccess) {
      // Out of memory is not sticky; clear it so that the next launch's
      // cudaGetLastError does not report it.
      (void)cudaGetLastError();
      return nullptr;
    }
    return ptr;
  }
  void Free(void* ptr, size_t bytes) override {
    ScopedDevice scope(ordinal_);
    if (cudaFree(ptr) != cudaSuccess) (void)cudaGetLastError();
  }
  MemoryKind memory_kind() const override { return MemoryKind::kDevice; }

 private:
  const int ordinal_;
};

// Pinned (page-locked) host memory, usable by every device's copies.
class CudaHostSubAllocator : public SubAllocator {
 public:
  explicit CudaHostSubAllocator(int ordinal) : ordinal_(ordinal) {}
  void* Alloc(size_t bytes) override {
    ScopedDevice scope(ordinal_);
    if (!scope.ok()) return nullptr;
    void* ptr = nullptr;
    if (cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    return ptr;
  }
  void Free(void* ptr, size_t bytes) override {
    ScopedDevice scope(ordinal_);
    if (cudaFreeHost(ptr) != cudaSuccess) (void)cudaGetLastError();
  }
  MemoryKind memory_kind() const override { return MemoryKind::kHost; }

 private:
  const int ordinal_;
};

}  // namespace

struct GpuDevice::PoisonTarget {
  int ordinal = 0;
  std::atomic<cudaStream_t> stream{nullptr};
};

GpuDevice::GpuDevice(const GpuDeviceOptions& options)
    : Device(options.name, kDeviceTypeGpu),
      options_(options),
      pool_(options.name, std::max(1, options.num_threads)) {}

absl::StatusOr<std::unique_ptr<GpuDevice>> GpuDevice::Create(const GpuDeviceOptions& options) {
  if (options.memory_limit < 0 || options.pinned_memory_limit < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GPU device ", options.name, ": memory limits must be >= 0"));
  }
  if (options.memory_limit == 0 &&
      !(options.memory_fraction > 0 && options.memory_fraction <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("GPU device ", options.name,
                                                   ": memory_fraction must be in (0, 1], not ",
                                                   options.memory_fraction));
  }
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("creating GPU device ", options.name));
  }
  if (options.ordinal < 0 || options.ordinal >= count) {
    return absl::UnavailableError(absl::StrCat("creating GPU device ", options.name,
                                               ": no CUDA device ", options.ordinal, " (",
                                               count, " visible)"));
  }
  std::unique_ptr<GpuDevice> gpu(new GpuDevice(options));
  absl::Status s = gpu->Init();
  if (!s.ok()) {
    (void)cudaGetLastError();
    return AddContext(s, absl::StrCat("creating GPU device ", options.name));
  }
  return gpu;
}

absl::Status GpuDevice::Init() {
  const int ordinal = options_.ordinal;
  RETURN_IF_ERROR(Activate());
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof(prop));
  RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, ordinal), "reading the properties"));
  gpu_name_ = prop.name;
  sm_count_ = prop.multiProcessorCount;

  RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking),
                             "creating the compute stream"));
  RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&host_to_device_, cudaStreamNonBlocking),
                             "creating the host-to-device stream"));
  RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&device_to_host_, cudaStreamNonBlocking),
                             "creating the device-to-host stream"));
  RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&device_to_device_, cudaStreamNonBlocking),
                             "creating the device-to-device stream"));

  // cuBLAS first, so that its workspace is not counted as free memory.
  RETURN_IF_ERROR(CudaStatus(cudaMalloc(&blas_workspace_, kBlasWorkspaceBytes),
                             "allocating the cuBLAS workspace"));
  {
    absl::MutexLock lock(&blas_mu_);
    RETURN_IF_ERROR(CublasStatus(cublasCreate(&blas_), "creating the cuBLAS handle"));
    RETURN_IF_ERROR(CublasStatus(cublasSetStream(blas_, compute_), "binding cuBLAS to a stream"));
    RETURN_IF_ERROR(CublasStatus(cublasSetWorkspace(blas_, blas_workspace_, kBlasWorkspaceBytes),
                                 "setting the cuBLAS workspace"));
    RETURN_IF_ERROR(CublasStatus(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH),
                                 "setting the cuBLAS math mode"));
  }

  int64_t limit = options_.memory_limit;
  if (limit == 0) {
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    RETURN_IF_ERROR(
        CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), "reading the free memory"));
    limit = static_cast<int64_t>(options_.memory_fraction * static_cast<double>(free_bytes));
    // Whole allocator blocks.
    limit -= limit % static_cast<int64_t>(BfcAllocator::kMinBlock);
    if (limit <= 0) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "no free device memory (", free_bytes, " bytes free of ", total_bytes, ")"));
    }
  }

  poison_ = std::make_shared<PoisonTarget>();
  poison_->ordinal = ordinal;
  poison_->stream.store(compute_, std::memory_order_release);
  BfcAllocator::Options device_options;
  device_options.name = name();
  device_options.memory_limit = limit;
  device_options.initial_region_bytes = std::min(kInitialDeviceRegion, limit);
  device_options.device_ordinal = ordinal;
  if (options_.poison_allocations) {
    // Fresh blocks read as 0xFF bytes (NaN for floats) for the kernels
    // queued after the allocation: the fill is queued on the compute stream,
    // which copies into the block wait for.
    device_options.on_allocate = [target = poison_](void* ptr, size_t bytes) {
      cudaStream_t stream = target->stream.load(std::memory_order_acquire);
      if (stream == nullptr || bytes == 0) return;
      ScopedDevice scope(target->ordinal);
      if (!scope.ok()) return;
      if (cudaMemsetAsync(ptr, 0xFF, bytes, stream) != cudaSuccess) (void)cudaGetLastError();
    };
  }
  device_allocator_ = std::make_shared<BfcAllocator>(
      std::make_unique<CudaMallocSubAllocator>(ordinal), std::move(device_options));

  BfcAllocator::Options pinned_options;
  pinned_options.name = absl::StrCat(name(), " pinned host memory");
  pinned_options.memory_limit = options_.pinned_memory_limit;
  pinned_options.initial_region_bytes =
      options_.pinned_memory_limit > 0
          ? std::min(kInitialPinnedRegion, options_.pinned_memory_limit)
          : kInitialPinnedRegion;
  pinned_allocator_ = std::make_shared<BfcAllocator>(
      std::make_unique<CudaHostSubAllocator>(ordinal), std::move(pinned_options));

  events_ = std::make_unique<EventQueue>(ordinal, &pool_);
  return absl::OkStatus();
}

GpuDevice::~GpuDevice() {
  (void)Sync();
  // Drains: every pending callback is handed to the pool, which outlives it.
  events_.reset();
  if (poison_ != nullptr) poison_->stream.store(nullptr, std::memory_order_release);
  if (cudaSetDevice(options_.ordinal) == cudaSuccess) {
    {
      absl::MutexLock lock(&blas_mu_);
      if (blas_ != nullptr) (void)cublasDestroy(blas_);
      blas_ = nullptr;
    }
    if (blas_workspace_ != nullptr) (void)cudaFree(blas_workspace_);
    {
      absl::MutexLock lock(&wait_events_mu_);
      for (cudaEvent_t e : wait_events_) (void)cudaEventDestroy(e);
      wait_events_.clear();
    }
    for (cudaStream_t s : {compute_, host_to_device_, device_to_host_, device_to_device_}) {
      if (s != nullptr) (void)cudaStreamDestroy(s);
    }
  }
  (void)cudaGetLastError();
}

absl::Status GpuDevice::Activate() const {
  const cudaError_t code = cudaSetDevice(options_.ordinal);
  if (code == cudaSuccess) return absl::OkStatus();
  (void)cudaGetLastError();
  return CudaStatus(code, absl::StrCat("making ", name(), " current"));
}

absl::Status GpuDevice::WithBlas(absl::FunctionRef<cublasStatus_t(cublasHandle_t)> fn,
                                 absl::string_view what) {
  RETURN_IF_ERROR(Activate());
  absl::MutexLock lock(&blas_mu_);
  if (blas_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": ", name(), " has no cuBLAS handle"));
  }
  return CublasStatus(fn(blas_), absl::StrCat(what, " on ", name()));
}

absl::Status GpuDevice::StreamWait(cudaStream_t waiter, cudaStream_t waited) {
  cudaEvent_t event = nullptr;
  {
    absl::MutexLock lock(&wait_events_mu_);
    if (!wait_events_.empty()) {
      event = wait_events_.back();
      wait_events_.pop_back();
    }
  }
  if (event == nullptr) {
    const cudaError_t code = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    if (code != cudaSuccess) {
      (void)cudaGetLastError();
      return CudaStatus(code, absl::StrCat("creating an event on ", name()));
    }
  }
  cudaError_t code = cudaEventRecord(event, waited);
  if (code == cudaSuccess) code = cudaStreamWaitEvent(waiter, event, 0);
  if (code != cudaSuccess) {
    (void)cudaEventDestroy(event);
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("ordering two streams of ", name()));
  }
  // The wait is enqueued with the event's current state: the event may be
  // recorded again at once.
  absl::MutexLock lock(&wait_events_mu_);
  wait_events_.push_back(event);
  return absl::OkStatus();
}

absl::Status GpuDevice::CopyAfterCompute(cudaStream_t copy_stream) {
  return StreamWait(copy_stream, compute_);
}

absl::Status GpuDevice::ComputeAfterCopy(cudaStream_t copy_stream) {
  return StreamWait(compute_, copy_stream);
}

absl::StatusOr<Tensor> GpuDevice::CopyToHost(const Tensor& t) {
  if (!t.on_device()) return t;
  RETURN_IF_ERROR(Activate());
  ASSIGN_OR_RETURN(Tensor host, Tensor::Allocate(pinned_allocator_.get(), t.dtype(), t.shape()));
  const size_t bytes = t.TotalBytes();
  if (bytes == 0) return host;
  const std::string what = absl::StrCat("copying ", bytes, " bytes from ", name(), " to host");
  RETURN_IF_ERROR(CopyAfterCompute(device_to_host_));
  // A tensor of another GPU (rare) is found through unified addressing.
  const cudaMemcpyKind kind = t.buffer_allocator()->device_ordinal() == options_.ordinal
                                  ? cudaMemcpyDeviceToHost
                                  : cudaMemcpyDefault;
  cudaError_t code = cudaMemcpyAsync(host.raw_data(), t.raw_data(), bytes, kind, device_to_host_);
  if (code == cudaSuccess) code = cudaStreamSynchronize(device_to_host_);
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
  ASSIGN_OR_RETURN(Tensor dev, Tensor::Allocate(device_allocator_.get(), t.dtype(), t.shape()));
  const size_t bytes = t.TotalBytes();
  if (bytes == 0) return dev;
  // Asynchronous copies need pinned memory. Without room there, the driver
  // copies from pageable memory itself (staging it before it returns).
  Tensor src = t;
  if (t.buffer_allocator() != pinned_allocator_.get()) {
    absl::StatusOr<Tensor> staging =
        Tensor::Allocate(pinned_allocator_.get(), t.dtype(), t.shape());
    if (staging.ok()) {
      std::memcpy(staging->raw_data(), t.raw_data(), bytes);
      src = *std::move(staging);
    }
  }
  RETURN_IF_ERROR(CopyAfterCompute(host_to_device_));
  const cudaError_t code = cudaMemcpyAsync(dev.raw_data(), src.raw_data(), bytes,
                                           cudaMemcpyHostToDevice, host_to_device_);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("copying ", bytes, " bytes from host to ", name()));
  }
  // The source stays alive until the copy has read it.
  events_->ThenExecute(host_to_device_, [keep = std::move(src)](absl::Status) {});
  absl::Status ordered = ComputeAfterCopy(host_to_device_);
  if (!ordered.ok()) {
    // dev's block must not be handed out again while the copy writes it.
    (void)cudaStreamSynchronize(host_to_device_);
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
  if (!src.on_device() || !dst->on_device()) return CopyMixedOnCompute(src, dst);
  const cudaMemcpyKind kind = src.buffer_allocator()->device_ordinal() == options_.ordinal
                                  ? cudaMemcpyDeviceToDevice
                                  : cudaMemcpyDefault;
  const cudaError_t code = cudaMemcpyAsync(dst->raw_data(), src.raw_data(), bytes, kind, compute_);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("copying ", bytes, " bytes within ", name()));
  }
  return absl::OkStatus();
}

absl::Status GpuDevice::CopyMixedOnCompute(const Tensor& src, Tensor* dst) {
  const size_t bytes = src.TotalBytes();
  const bool to_device = dst->on_device();
  const std::string what = absl::StrCat("copying ", bytes, " bytes ",
                                        to_device ? "from host to " : "to host from ", name());
  cudaError_t code =
      cudaMemcpyAsync(dst->raw_data(), src.raw_data(), bytes, cudaMemcpyDefault, compute_);
  if (code == cudaSuccess && !to_device) {
    // The host may read dst as soon as this returns.
    code = cudaStreamSynchronize(compute_);
  }
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, what);
  }
  if (to_device) events_->ThenExecute(compute_, [keep = src](absl::Status) {});
  return absl::OkStatus();
}

absl::Status GpuDevice::Sync() {
  if (compute_ == nullptr) return absl::OkStatus();  // never initialized
  RETURN_IF_ERROR(Activate());
  absl::Status first;
  const std::pair<cudaStream_t, const char*> streams[] = {
      {compute_, "compute"},
      {host_to_device_, "host-to-device"},
      {device_to_host_, "device-to-host"},
      {device_to_device_, "device-to-device"}};
  for (const auto& [stream, which] : streams) {
    if (stream == nullptr) continue;
    const cudaError_t code = cudaStreamSynchronize(stream);
    if (code != cudaSuccess) {
      (void)cudaGetLastError();
      if (first.ok()) {
        first = CudaStatus(code, absl::StrCat("waiting for the ", which, " stream of ", name()));
      }
    }
  }
  return first;
}

void GpuDevice::ThenExecute(std::function<void(absl::Status)> done) {
  events_->ThenExecute(compute_, std::move(done));
}

void GpuDevice::CopyToHostAsync(const Tensor& t,
                                std::function<void(absl::StatusOr<Tensor>)> done) {
  auto fail = [this, &done](absl::Status s) {
    pool_.Schedule([done = std::move(done), s = std::move(s)] { done(s); });
  };
  if (!t.on_device()) {
    pool_.Schedule([done = std::move(done), t] { done(t); });
    return;
  }
  absl::Status s = Activate();
  if (!s.ok()) return fail(std::move(s));
  absl::StatusOr<Tensor> host = Tensor::Allocate(pinned_allocator_.get(), t.dtype(), t.shape());
  if (!host.ok()) return fail(host.status());
  const size_t bytes = t.TotalBytes();
  if (bytes == 0) {
    pool_.Schedule([done = std::move(done), host = *std::move(host)] { done(host); });
    return;
  }
  s = CopyAfterCompute(device_to_host_);
  if (!s.ok()) return fail(std::move(s));
  const cudaMemcpyKind kind = t.buffer_allocator()->device_ordinal() == options_.ordinal
                                  ? cudaMemcpyDeviceToHost
                                  : cudaMemcpyDefault;
  const cudaError_t code =
      cudaMemcpyAsync(host->raw_data(), t.raw_data(), bytes, kind, device_to_host_);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(CudaStatus(code, absl::StrCat("copying ", bytes, " bytes from ", name(),
                                              " to host")));
  }
  // The source stays alive (its block unused by later kernels) until the
  // copy has read it.
  events_->ThenExecute(device_to_host_, [done = std::move(done), host = *std::move(host),
                                         src = t](absl::Status status) {
    if (!status.ok()) {
      done(std::move(status));
    } else {
      done(host);
    }
  });
}

absl::StatusOr<Tensor> GpuDevice::CopyFromPeer(const Tensor& t) {
  if (!t.on_device()) return CopyFromHost(t);
  const int src_ordinal = t.buffer_allocator()->device_ordinal();
  if (src_ordinal == options_.ordinal) return t;
  if (src_ordinal < 0) {
    return absl::InternalError(absl::StrCat("copying to ", name(), ": device memory of ",
                                            t.buffer_allocator()->Name(),
                                            " names no GPU ordinal"));
  }
  RETURN_IF_ERROR(Activate());
  ASSIGN_OR_RETURN(Tensor dev, Tensor::Allocate(device_allocator_.get(), t.dtype(), t.shape()));
  const size_t bytes = t.TotalBytes();
  if (bytes == 0) return dev;
  RETURN_IF_ERROR(CopyAfterCompute(device_to_device_));
  const cudaError_t code = cudaMemcpyPeerAsync(dev.raw_data(), options_.ordinal, t.raw_data(),
                                               src_ordinal, bytes, device_to_device_);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("copying ", bytes, " bytes from GPU ordinal ",
                                         src_ordinal, " to ", name()));
  }
  events_->ThenExecute(device_to_device_, [keep = t](absl::Status) {});
  absl::Status ordered = ComputeAfterCopy(device_to_device_);
  if (!ordered.ok()) {
    (void)cudaStreamSynchronize(device_to_device_);
    (void)cudaGetLastError();
    return ordered;
  }
  return dev;
}

}  // namespace sluice
