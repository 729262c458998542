#include "runtime/gpu/gpu_context.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/gpu/cuda_status.h"
#include "runtime/gpu/scoped_device.h"

namespace sluice {
namespace {

constexpr int64_t kInitialDeviceRegion = int64_t{64} << 20;
constexpr int64_t kInitialPinnedRegion = int64_t{16} << 20;
constexpr size_t kBlasWorkspaceBytes = size_t{32} << 20;

// Device memory regions for the BfcAllocator. Self-contained (no pointer to
// the context): tensors keep a shared-owned allocator alive on their own.
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

// The contexts of the process, by (ordinal, logical GPU). Leaked on purpose (see the
// header): nothing here is destroyed at exit.
struct Registry {
  absl::Mutex mu;
  // By (ordinal, logical GPU).
  std::map<std::pair<int, int>, std::shared_ptr<GpuContext>> contexts ABSL_GUARDED_BY(mu);
};

Registry& GetRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

absl::Status CheckOptions(const GpuContextOptions& options) {
  if (options.logical < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GPU ordinal ", options.ordinal, ": logical GPU ", options.logical));
  }
  if (options.memory_limit < 0 || options.pinned_memory_limit < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GPU ordinal ", options.ordinal, ": memory limits must be >= 0"));
  }
  if (options.memory_limit == 0 &&
      !(options.memory_fraction > 0 && options.memory_fraction <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("GPU ordinal ", options.ordinal,
                                                   ": memory_fraction must be in (0, 1], not ",
                                                   options.memory_fraction));
  }
  return absl::OkStatus();
}

// "GPU_0", or "GPU_0.1" for a second logical GPU: names the pool and the
// allocators.
std::string Label(const GpuContextOptions& options) {
  return options.logical == 0 ? absl::StrCat("GPU_", options.ordinal)
                              : absl::StrCat("GPU_", options.ordinal, ".", options.logical);
}

// Steps being recorded per physical GPU (GpuContext::BeginRecordingHold).
// While a card has any, none of its contexts' allocators (its logical
// GPUs') gives memory back to CUDA: cudaFree and cudaFreeHost synchronize,
// which a capture in progress forbids. Other cards' allocators are free to.
constexpr int kMaxOrdinals = 64;

std::atomic<int>& StepsBeingRecorded(int ordinal) {
  static auto* counts = new std::atomic<int>[kMaxOrdinals + 1]();
  // (An ordinal past the table shares its last slot.)
  return counts[std::clamp(ordinal, 0, kMaxOrdinals)];
}

std::function<bool()> NoStepRecordedOn(int ordinal) {
  return [ordinal] { return StepsBeingRecorded(ordinal).load(std::memory_order_acquire) == 0; };
}

}  // namespace

void GpuContext::BeginRecordingHold() {
  StepsBeingRecorded(ordinal()).fetch_add(1, std::memory_order_acq_rel);
}

void GpuContext::EndRecordingHold() {
  StepsBeingRecorded(ordinal()).fetch_sub(1, std::memory_order_acq_rel);
}

struct GpuContext::PoisonState {
  int ordinal = 0;
  std::atomic<cudaStream_t> stream{nullptr};
  std::atomic<int> requests{0};
};

GpuContext::GpuContext(const GpuContextOptions& options)
    : options_(options),
      pool_(Label(options), std::max(1, options.num_threads)) {}

absl::StatusOr<std::shared_ptr<GpuContext>> GpuContext::Get(const GpuContextOptions& options) {
  RETURN_IF_ERROR(CheckOptions(options));
  Registry& registry = GetRegistry();
  absl::MutexLock lock(&registry.mu);
  const std::pair<int, int> key(options.ordinal, options.logical);
  auto it = registry.contexts.find(key);
  if (it != registry.contexts.end()) return it->second;
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("opening GPU ordinal ", options.ordinal));
  }
  if (options.ordinal < 0 || options.ordinal >= count) {
    return absl::UnavailableError(absl::StrCat("no CUDA device ", options.ordinal, " (",
                                               count, " visible)"));
  }
  std::shared_ptr<GpuContext> context(new GpuContext(options));
  absl::Status s = context->Init();
  if (!s.ok()) {
    (void)cudaGetLastError();
    return AddContext(s, absl::StrCat("opening GPU ordinal ", options.ordinal));
  }
  registry.contexts.emplace(key, context);
  return context;
}

absl::Status GpuContext::Init() {
  const int ordinal = options_.ordinal;
  RETURN_IF_ERROR(Activate("initializing"));
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
    blas_stream_ = compute_;
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

  poison_ = std::make_shared<PoisonState>();
  poison_->ordinal = ordinal;
  poison_->stream.store(compute_, std::memory_order_release);
  BfcAllocator::Options device_options;
  device_options.name = absl::StrCat(Label(options_), "_bfc");
  device_options.memory_limit = limit;
  device_options.initial_region_bytes = std::min(kInitialDeviceRegion, limit);
  device_options.device_ordinal = ordinal;
  // While poisoning is requested, fresh blocks read as 0xFF bytes (NaN for
  // floats) for the kernels queued after the allocation: the fill is queued
  // on the compute stream, which copies into the block wait for.
  device_options.on_allocate = [state = poison_](void* ptr, size_t bytes) {
    if (bytes == 0 || state->requests.load(std::memory_order_acquire) <= 0) return;
    cudaStream_t stream = state->stream.load(std::memory_order_acquire);
    if (stream == nullptr) return;
    ScopedDevice scope(state->ordinal);
    if (!scope.ok()) return;
    if (cudaMemsetAsync(ptr, 0xFF, bytes, stream) != cudaSuccess) (void)cudaGetLastError();
  };
  device_options.may_release_regions = NoStepRecordedOn(ordinal);
  device_allocator_ = std::make_shared<BfcAllocator>(
      std::make_unique<CudaMallocSubAllocator>(ordinal), std::move(device_options));

  BfcAllocator::Options pinned_options;
  pinned_options.name = absl::StrCat(Label(options_), "_pinned_host_bfc");
  pinned_options.memory_limit = options_.pinned_memory_limit;
  pinned_options.initial_region_bytes =
      options_.pinned_memory_limit > 0
          ? std::min(kInitialPinnedRegion, options_.pinned_memory_limit)
          : kInitialPinnedRegion;
  pinned_options.may_release_regions = NoStepRecordedOn(ordinal);
  pinned_allocator_ = std::make_shared<BfcAllocator>(
      std::make_unique<CudaHostSubAllocator>(ordinal), std::move(pinned_options));

  events_ = std::make_unique<EventQueue>(ordinal, &pool_);
  return absl::OkStatus();
}

GpuContext::~GpuContext() {
  // First: Sync makes the context's GPU current; the destroying thread gets
  // its own device back when this returns.
  ScopedDevice on(options_.ordinal);
  (void)Sync("a GPU context being destroyed");
  // Drains: every pending callback is handed to the pool. The queue itself
  // stays (destroyed after the pool, the first member to go): a callback
  // that queues more work while the pool drains must find it, not a null
  // pointer (unique_ptr::reset clears the pointer before it destroys).
  if (events_ != nullptr) events_->Stop();
  if (poison_ != nullptr) poison_->stream.store(nullptr, std::memory_order_release);
  if (on.ok()) {
    {
      absl::MutexLock lock(&blas_mu_);
      if (blas_ != nullptr) (void)cublasDestroy(blas_);
      blas_ = nullptr;
      if (blas_lt_ != nullptr) (void)(*LoadCublasLt())->destroy(blas_lt_);
      blas_lt_ = nullptr;
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

absl::Status GpuContext::Activate(absl::string_view who) const {
  const cudaError_t code = cudaSetDevice(options_.ordinal);
  if (code == cudaSuccess) return absl::OkStatus();
  (void)cudaGetLastError();
  return CudaStatus(code, absl::StrCat(who, ": making GPU ordinal ", options_.ordinal, " current"));
}

absl::Status GpuContext::WithBlas(cudaStream_t stream,
                                  absl::FunctionRef<cublasStatus_t(cublasHandle_t)> fn,
                                  absl::string_view what, absl::string_view who) {
  RETURN_IF_ERROR(Activate(who));
  absl::MutexLock lock(&blas_mu_);
  if (blas_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": ", who, " has no cuBLAS handle"));
  }
  if (stream != blas_stream_) {
    // cublasSetStream also drops the workspace: set it again.
    RETURN_IF_ERROR(CublasStatus(cublasSetStream(blas_, stream),
                                 absl::StrCat("binding cuBLAS to a stream on ", who)));
    blas_stream_ = stream;
    RETURN_IF_ERROR(CublasStatus(cublasSetWorkspace(blas_, blas_workspace_, kBlasWorkspaceBytes),
                                 absl::StrCat("setting the cuBLAS workspace on ", who)));
  }
  const cublasStatus_t code = fn(blas_);
  if (code == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return CublasStatus(code, absl::StrCat(what, " on ", who));
}

absl::Status GpuContext::WithBlasLt(cudaStream_t stream,
                                    absl::FunctionRef<cublasStatus_t(const BlasLt&)> fn,
                                    absl::string_view what, absl::string_view who) {
  absl::StatusOr<const CublasLtApi*> api = LoadCublasLt();
  if (!api.ok()) {
    return absl::UnavailableError(absl::StrCat(what, " on ", who, ": ", api.status().message()));
  }
  RETURN_IF_ERROR(Activate(who));
  absl::MutexLock lock(&blas_mu_);
  if (blas_workspace_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": ", who, " has no BLAS workspace"));
  }
  if (blas_lt_ == nullptr) {
    RETURN_IF_ERROR(CublasStatus((*api)->create(&blas_lt_),
                                 absl::StrCat("creating the cuBLASLt handle on ", who)));
  }
  const cublasStatus_t code =
      fn(BlasLt{*api, blas_lt_, stream, blas_workspace_, kBlasWorkspaceBytes});
  if (code == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return CublasStatus(code, absl::StrCat(what, " on ", who));
}

absl::Status GpuContext::StreamWait(cudaStream_t waiter, cudaStream_t waited,
                                    absl::string_view who) {
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
      return CudaStatus(code, absl::StrCat("creating an event for ", who));
    }
  }
  cudaError_t code = cudaEventRecord(event, waited);
  if (code == cudaSuccess) code = cudaStreamWaitEvent(waiter, event, 0);
  if (code != cudaSuccess) {
    (void)cudaEventDestroy(event);
    (void)cudaGetLastError();
    return CudaStatus(code, absl::StrCat("ordering two streams of ", who));
  }
  // The wait is enqueued with the event's current state: the event may be
  // recorded again at once.
  absl::MutexLock lock(&wait_events_mu_);
  wait_events_.push_back(event);
  return absl::OkStatus();
}

absl::Status GpuContext::Sync(absl::string_view who) {
  if (compute_ == nullptr) return absl::OkStatus();  // never initialized
  RETURN_IF_ERROR(Activate(who));
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
        first = CudaStatus(code, absl::StrCat("waiting for the ", which, " stream of ", who));
      }
    }
  }
  return first;
}

void GpuContext::RequestPoisoning() {
  poison_->requests.fetch_add(1, std::memory_order_acq_rel);
}

void GpuContext::ReleasePoisoning() {
  poison_->requests.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace sluice
