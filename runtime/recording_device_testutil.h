// A fake recording device for tests of step capture (runtime/step_replay.h)
// without a GPU: "REC", whose kernels queue closures as a GPU's queue
// launches. While it records, the closures are kept instead of run (and its
// allocations come from a CaptureArena); a replay runs them again on the
// same memory. So a replay is right only if whoever runs the step hands it
// the feeds, fetches and variables the way a CUDA graph needs them.
//
//   BackendRegistry backends;
//   backends.Add(std::make_unique<testing_rec::RecBackend>()); OpRegistry ops;
//   testing_rec::RegisterRecOps(&ops); KernelRegistry kernels;
//   backends.RegisterKernels(&kernels);
//
// Ops (RegisterRecOps) and their REC kernels:
//   Mul, Scale (a, b -> y: a * b, a * scalar b), Sum, Size (the element
//   count, in host memory), Peek (x -> x, reading it on the host: a step
//   that cannot be recorded), Input (-> y, always fed), Var (a variable),
//   Assign, Sub (ref, value -> ref: ref = value, ref -= value, copying on
//   write when the buffer is shared), Tick (stateful: a host counter, never
//   recorded), DeviceTick (stateful: a counter in device memory that
//   replays right); for loops (with the control flow family's ops and
//   kernels, which a test registers), Identity (any type: float in device
//   memory, int32, bool, handles and lists in host memory) and host kernels on
//   int32 scalars: IntConst (attr value), IntAdd, IntLess, ToInt (a
//   float's first element, read on the host); Ones (n -> n ones, n read in
//   host memory, as a GPU's Fill reads its dims).
// Test-only; thread-compatible like the tests that use it.
#ifndef SLUICE_RUNTIME_RECORDING_DEVICE_TESTUTIL_H_
#define SLUICE_RUNTIME_RECORDING_DEVICE_TESTUTIL_H_

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "graph/op_registry.h"
#include "runtime/backend.h"
#include "runtime/capture_arena.h"
#include "runtime/device.h"
#include "runtime/fake_device_memory.h"
#include "runtime/kernel_registry.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace testing_rec {

inline constexpr char kRec[] = "REC";

// What the kernels count, process-wide.
struct RecCounters {
  std::atomic<int> mul_computes{0};     // Mul's Compute calls
  std::atomic<int> copies_on_write{0};  // Sub's copies of a shared buffer
  std::atomic<bool> always_copy{false}; // make Sub copy on write every time
  std::atomic<int> recordings{0};       // EndCapture calls
  std::atomic<bool> fail_replays{false}; // make every replay fail
  // Device memory the live recordings hold, and its limit (0: none).
  std::atomic<int64_t> capture_bytes{0};
  std::atomic<int64_t> capture_bytes_limit{0};
};
RecCounters &RecStats();

// What a recording allocates, within RecStats().capture_bytes_limit: the
// device memory recordings hold, as they fill a GPU's.
class CaptureBudget : public Allocator {
public:
  explicit CaptureBudget(Allocator *base) : base_(base) {}
  std::string Name() const override { return base_->Name() + "/budget"; }
  void *AllocateRaw(size_t alignment, size_t bytes) override {
    const int64_t limit = RecStats().capture_bytes_limit;
    if (limit > 0 &&
        RecStats().capture_bytes + static_cast<int64_t>(bytes) > limit) {
      return nullptr;
    }
    void *p = base_->AllocateRaw(alignment, bytes);
    if (p != nullptr)
      RecStats().capture_bytes += static_cast<int64_t>(bytes);
    return p;
  }
  void DeallocateRaw(void *ptr, size_t bytes) override {
    base_->DeallocateRaw(ptr, bytes);
    if (ptr != nullptr)
      RecStats().capture_bytes -= static_cast<int64_t>(bytes);
  }
  AllocatorStats GetStats() const override { return base_->GetStats(); }
  MemoryKind memory_kind() const override { return base_->memory_kind(); }
  int device_ordinal() const override { return base_->device_ordinal(); }

private:
  Allocator *const base_;
};

class RecordedWork : public CapturedWork {
public:
  RecordedWork(std::vector<std::function<void()>> queue,
               std::shared_ptr<CaptureArena> arena, std::vector<Tensor> uploads)
      : queue_(std::move(queue)), arena_(std::move(arena)),
        uploads_(std::move(uploads)) {}
  ~RecordedWork() override { arena_->Release(); }
  absl::Status Replay() override {
    if (RecStats().fail_replays)
      return absl::InternalError("replay failed (RecStats().fail_replays)");
    for (const auto &fn : queue_)
      fn();
    return absl::OkStatus();
  }

private:
  std::vector<std::function<void()>> queue_;
  std::shared_ptr<CaptureArena> arena_;
  std::vector<Tensor> uploads_; // read at every replay, held as a GPU holds them
};

class RecordingDevice : public Device {
public:
  explicit RecordingDevice(
      const std::string &prefix = "/job:localhost/replica:0/task:0")
      : Device(prefix + "/device:REC:0", kRec) {}
  Allocator *allocator() override {
    if (arena_ != nullptr)
      return arena_.get();
    return device_.get();
  }
  ThreadPool *thread_pool() override { return &pool_; }
  bool has_device_memory() const override { return true; }
  Allocator *host_allocator() override { return host_.get(); }
  absl::StatusOr<Tensor> CopyToHost(const Tensor &t) override {
    if (!t.on_device())
      return t;
    if (recording_)
      return absl::FailedPreconditionError(
          "copying to the host while recording");
    return Copy(t, host_.get());
  }
  absl::StatusOr<Tensor> CopyFromHost(const Tensor &t) override {
    if (t.on_device())
      return t;
    ASSIGN_OR_RETURN(Tensor copy, Copy(t, allocator()));
    if (recording_)
      uploads_.push_back(copy); // an upload the recording reads
    return copy;
  }
  absl::Status CopyWithinDevice(const Tensor &src, Tensor *dst) override {
    if (recording_ && !(src.on_device() && dst->on_device())) {
      return absl::FailedPreconditionError("a host copy while recording");
    }
    const void *from = src.raw_data();
    void *to = dst->raw_data();
    const size_t bytes = src.TotalBytes();
    Enqueue([=] { std::memcpy(to, from, bytes); });
    return absl::OkStatus();
  }
  bool can_capture() const override { return true; }
  absl::Status BeginCapture() override {
    if (recording_)
      return absl::FailedPreconditionError("already recording");
    recording_ = true;
    arena_ = std::make_shared<CaptureArena>(&budget_);
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() override {
    recording_ = false;
    auto work = std::make_unique<RecordedWork>(
        std::move(recorded_), std::move(arena_), std::move(uploads_));
    recorded_.clear();
    uploads_.clear();
    arena_ = nullptr;
    ++RecStats().recordings;
    return std::unique_ptr<CapturedWork>(std::move(work));
  }

  // What a kernel queues: run now, or kept while recording.
  void Enqueue(std::function<void()> fn) {
    if (recording_) {
      recorded_.push_back(std::move(fn));
    } else {
      fn();
    }
  }

private:
  static absl::StatusOr<Tensor> Copy(const Tensor &t, Allocator *a) {
    ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(a, t.dtype(), t.shape()));
    std::memcpy(out.raw_data(), t.raw_data(), t.TotalBytes());
    return out;
  }

  std::shared_ptr<FakeDeviceMemory> device_ =
      std::make_shared<FakeDeviceMemory>("rec_device");
  CaptureBudget budget_{device_.get()};
  std::shared_ptr<CpuAllocator> host_ =
      std::make_shared<CpuAllocator>("rec_host");
  ThreadPool pool_{"rec", 1};
  // Touched by the one thread that runs a recorded step.
  bool recording_ = false;
  std::shared_ptr<CaptureArena> arena_;
  std::vector<std::function<void()>> recorded_;
  std::vector<Tensor> uploads_;
};

// One RecordingDevice per process, and the kernels above.
class RecBackend : public Backend {
public:
  std::string device_type() const override;
  absl::StatusOr<std::vector<std::unique_ptr<Device>>>
  CreateDevices(const LocalDevicesOptions &options) const override;
  void RegisterKernels(KernelRegistry *kernels) const override;
};

// The ops above, and the frame ops (_Arg, _Retval).
absl::Status RegisterRecOps(OpRegistry *ops);


} // namespace testing_rec
} // namespace sluice

#endif // SLUICE_RUNTIME_RECORDING_DEVICE_TESTUTIL_H_
