// GpuDevice, the GPU device factory and the GPU _Send/_Recv kernels. Without
// a GPU (or a build without CUDA) only NoGpuMeansNoDevices runs; the others
// skip with the reason CUDA gives.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/gpu/gpu_devices.h"
#include "runtime/local_devices.h"

#ifdef SLUICE_WITH_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "graph/scope.h"
#include "base/status_macros.h"
#include "runtime/executor.h"
#include "runtime/frame_ops.h"
#include "runtime/gpu/gpu_context.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/gpu_runtime_kernels.h"
#include "runtime/rendezvous.h"
#include "runtime/sendrecv_ops.h"
#endif

namespace sluice {
namespace {

// Every GPU device of the process shares its GPU's context, whose memory
// limit the first device made fixes: every test here asks for this one, so
// each sees it whichever test runs first.
constexpr int64_t kLimit = int64_t{256} << 20;

TEST(GpuDevicesTest, NoGpuMeansNoDevices) {
  std::string why;
  const int visible = VisibleGpuCount(&why);
  LocalDevicesOptions options;
  options.gpu_memory_limit = kLimit;
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateGpuDevices(options);
  ASSERT_TRUE(devices.ok()) << devices.status();
  if (visible == 0) {
    EXPECT_FALSE(why.empty());
    EXPECT_TRUE(devices->empty());
    return;
  }
  ASSERT_EQ(static_cast<int>(devices->size()), visible);
  EXPECT_EQ((*devices)[0]->name(), "/job:localhost/replica:0/task:0/device:GPU:0");
  EXPECT_EQ((*devices)[0]->device_type(), "GPU");
  EXPECT_TRUE((*devices)[0]->has_device_memory());
}

TEST(GpuDevicesTest, MaxGpusLimitsTheDevices) {
  LocalDevicesOptions options;
  options.max_gpus = 0;
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateGpuDevices(options);
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_TRUE(devices->empty());
  options.max_gpus = -2;
  EXPECT_EQ(CreateGpuDevices(options).status().code(), absl::StatusCode::kInvalidArgument);
}

// Runs everywhere: bad logical GPU configurations fail alike with or
// without a GPU or CUDA.
TEST(GpuDevicesTest, BadLogicalGpusAreRefused) {
  LocalDevicesOptions options;
  options.gpu_logical_memory_limits = {kLimit, -1};
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateGpuDevices(options);
  ASSERT_FALSE(devices.ok());
  EXPECT_EQ(devices.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(devices.status().message().find("gpu_logical_memory_limits[1]"), std::string::npos)
      << devices.status();
}

#ifdef SLUICE_WITH_CUDA

std::unique_ptr<GpuDevice> MakeGpu(int ordinal = 0, bool poison = false,
                                   int64_t limit = kLimit) {
  GpuDeviceOptions o;
  o.name = absl::StrCat("/job:localhost/replica:0/task:0/device:GPU:", ordinal);
  o.ordinal = ordinal;
  o.memory_limit = limit;
  o.poison_allocations = poison;
  absl::StatusOr<std::unique_ptr<GpuDevice>> gpu = GpuDevice::Create(o);
  EXPECT_TRUE(gpu.ok()) << gpu.status();
  return gpu.ok() ? *std::move(gpu) : nullptr;
}

Tensor RandomFloats(int64_t n, uint32_t seed) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  for (float& v : t.flat<float>()) v = dist(rng);
  return t;
}

// Every test of GpuDevice skips without a GPU.
class GpuDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (VisibleGpuCount(&why) == 0) GTEST_SKIP() << "no GPU: " << why;
  }
};

void ExpectSameBytes(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.TotalBytes(), b.TotalBytes());
  ASSERT_FALSE(a.on_device());
  ASSERT_FALSE(b.on_device());
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0);
}

TEST_F(GpuDeviceTest, CreateReportsTheGpu) {
  std::unique_ptr<GpuDevice> gpu = MakeGpu();
  ASSERT_NE(gpu, nullptr);
  EXPECT_FALSE(gpu->gpu_name().empty());
  EXPECT_GT(gpu->multiprocessor_count(), 0);
  EXPECT_NE(gpu->compute_stream(), nullptr);
  EXPECT_EQ(gpu->allocator()->memory_kind(), MemoryKind::kDevice);
  EXPECT_EQ(gpu->allocator()->device_ordinal(), 0);
  EXPECT_EQ(gpu->host_allocator()->memory_kind(), MemoryKind::kHost);
  EXPECT_EQ(gpu->MemoryStats().bytes_limit, kLimit);
  GpuDeviceOptions bad;
  bad.ordinal = 1000;
  EXPECT_EQ(GpuDevice::Create(bad).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(GpuDeviceTest, AllocatorStatsMove) {
  std::unique_ptr<GpuDevice> gpu = MakeGpu();
  ASSERT_NE(gpu, nullptr);
  const int64_t before = gpu->MemoryStats().bytes_in_use;
  {
    absl::StatusOr<Tensor> t =
        Tensor::Allocate(gpu->allocator(), DT_FLOAT, TensorShape({1 << 18}));  // 1 MiB
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(t->on_device());
    AllocatorStats s = gpu->MemoryStats();
    EXPECT_GE(s.bytes_in_use, before + (1 << 20));
    EXPECT_GE(s.peak_bytes_in_use, s.bytes_in_use);
    EXPECT_GE(s.bytes_reserved, s.bytes_in_use);
  }
  EXPECT_EQ(gpu->MemoryStats().bytes_in_use, before);
}

TEST_F(GpuDeviceTest, RoundTripThroughDeviceMemory) {
  std::unique_ptr<GpuDevice> gpu = MakeGpu();
  ASSERT_NE(gpu, nullptr);
  // Pageable source (staged through pinned memory) and pinned source.
  Tensor pageable = RandomFloats(100003, 1);
  Tensor pinned = pageable.DeepCopy(gpu->host_allocator());
  ASSERT_TRUE(pinned.IsInitialized());
  for (const Tensor* src : {&pageable, &pinned}) {
    absl::StatusOr<Tensor> dev = gpu->CopyFromHost(*src);
    ASSERT_TRUE(dev.ok()) << dev.status();
    EXPECT_TRUE(dev->on_device());
    absl::StatusOr<Tensor> back = gpu->CopyToHost(*dev);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->buffer_allocator(), gpu->host_allocator());
    ExpectSameBytes(*back, pageable);
  }
  // Empty tensors copy nothing.
  Tensor empty(DT_FLOAT, TensorShape({0, 3}));
  absl::StatusOr<Tensor> dev = gpu->CopyFromHost(empty);
  ASSERT_TRUE(dev.ok()) << dev.status();
  absl::StatusOr<Tensor> back = gpu->CopyToHost(*dev);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape(), empty.shape());
  EXPECT_TRUE(gpu->Sync().ok());
}

TEST_F(GpuDeviceTest, CopyWithinDevice) {
  std::unique_ptr<GpuDevice> gpu = MakeGpu();
  ASSERT_NE(gpu, nullptr);
  Tensor host = RandomFloats(4097, 2);
  absl::StatusOr<Tensor> a = gpu->CopyFromHost(host);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<Tensor> b = Tensor::Allocate(gpu->allocator(), DT_FLOAT, host.shape());
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(gpu->CopyWithinDevice(*a, &*b).ok());
  absl::StatusOr<Tensor> back = gpu->CopyToHost(*b);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameBytes(*back, host);
  // Sizes must match.
  absl::StatusOr<Tensor> small = Tensor::Allocate(gpu->allocator(), DT_FLOAT, TensorShape({3}));
  ASSERT_TRUE(small.ok());
  EXPECT_FALSE(gpu->CopyWithinDevice(*a, &*small).ok());
}

TEST_F(GpuDeviceTest, PoisonedAllocationsReadAsOnes) {
  std::unique_ptr<GpuDevice> gpu = MakeGpu(0, /*poison=*/true);
  ASSERT_NE(gpu, nullptr);
  // Dirty a block, free it, and take it again: still poisoned.
  {
    absl::StatusOr<Tensor> dirty = gpu->CopyFromHost(RandomFloats(1000, 3));
    ASSERT_TRUE(dirty.ok()) << dirty.status();
  }
  absl::StatusOr<Tensor> t = Tensor::Allocate(gpu->allocator(), DT_FLOAT, TensorShape({1000}));
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<Tensor> back = gpu->CopyToHost(*t);
  ASSERT_TRUE(back.ok()) << back.status();
  const auto* bytes = static_cast<const uint8_t*>(back->raw_data());
  for (size_t i = 0; i < back->TotalBytes(); ++i) ASSERT_EQ(bytes[i], 0xFF) << "byte " << i;
}

TEST_F(GpuDeviceTest, ThenExecuteFires) {
  std::unique_ptr<GpuDevice> gpu = MakeGpu();
  ASSERT_NE(gpu, nullptr);
  absl::StatusOr<Tensor> dev = gpu->CopyFromHost(RandomFloats(1 << 20, 4));
  ASSERT_TRUE(dev.ok()) << dev.status();
  absl::Notification fired;
  absl::Status status = absl::UnknownError("not called");
  gpu->ThenExecute([&](absl::Status s) {
    status = s;
    fired.Notify();
  });
  ASSERT_TRUE(fired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(status.ok()) << status;
}

TEST_F(GpuDeviceTest, CopyToHostAsync) {
  std::unique_ptr<GpuDevice> gpu = MakeGpu();
  ASSERT_NE(gpu, nullptr);
  Tensor host = RandomFloats(65537, 5);
  absl::StatusOr<Tensor> dev = gpu->CopyFromHost(host);
  ASSERT_TRUE(dev.ok()) << dev.status();
  absl::Notification fired;
  absl::StatusOr<Tensor> back = absl::UnknownError("not called");
  gpu->CopyToHostAsync(*dev, [&](absl::StatusOr<Tensor> t) {
    back = std::move(t);
    fired.Notify();
  });
  dev = absl::UnknownError("released");  // the copy keeps its source alive
  ASSERT_TRUE(fired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameBytes(*back, host);
}

TEST_F(GpuDeviceTest, OutOfMemoryNamesTheBytes) {
  std::unique_ptr<GpuDevice> gpu = MakeGpu();
  ASSERT_NE(gpu, nullptr);
  // More than the (shared) limit.
  const int64_t limit = gpu->MemoryStats().bytes_limit;
  ASSERT_GT(limit, 0);
  const int64_t bytes = limit + (int64_t{64} << 20);
  EXPECT_EQ(gpu->allocator()->AllocateRaw(256, static_cast<size_t>(bytes)), nullptr);
  absl::StatusOr<Tensor> t =
      Tensor::Allocate(gpu->allocator(), DT_FLOAT, TensorShape({bytes / 4}));
  ASSERT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted) << t.status();
  EXPECT_NE(t.status().message().find(std::to_string(bytes)), std::string::npos)
      << t.status();
  EXPECT_NE(t.status().message().find("free"), std::string::npos) << t.status();
  EXPECT_GE(gpu->MemoryStats().num_ooms, 1);
  // The device still works afterwards (no stale CUDA error).
  absl::StatusOr<Tensor> ok = gpu->CopyFromHost(RandomFloats(16, 6));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(GpuDeviceTest, WithBlasRunsOnTheComputeStream) {
  std::unique_ptr<GpuDevice> gpu = MakeGpu();
  ASSERT_NE(gpu, nullptr);
  // Column-major 2x2: C = A * I.
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({4}));
  Tensor eye = Tensor::FromVector<float>({1, 0, 0, 1}, TensorShape({4}));
  absl::StatusOr<Tensor> da = gpu->CopyFromHost(a);
  absl::StatusOr<Tensor> de = gpu->CopyFromHost(eye);
  absl::StatusOr<Tensor> dc = Tensor::Allocate(gpu->allocator(), DT_FLOAT, TensorShape({4}));
  ASSERT_TRUE(da.ok() && de.ok() && dc.ok());
  const float one = 1, zero = 0;
  absl::Status s = gpu->WithBlas(
      [&](cublasHandle_t h) {
        return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, da->data<float>(), 2,
                           de->data<float>(), 2, &zero, dc->data<float>(), 2);
      },
      "test sgemm");
  ASSERT_TRUE(s.ok()) << s;
  absl::StatusOr<Tensor> back = gpu->CopyToHost(*dc);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameBytes(*back, a);
}

// Two sessions' devices (CreateGpuDevices is what each session calls) share
// the GPU's state but not their variables.
TEST_F(GpuDeviceTest, DevicesOfOneGpuShareItsContext) {
  LocalDevicesOptions options;
  options.max_gpus = 1;
  options.gpu_memory_limit = kLimit;
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> first = CreateGpuDevices(options);
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> second = CreateGpuDevices(options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(first->size(), 1u);
  ASSERT_EQ(second->size(), 1u);
  auto* a = static_cast<GpuDevice*>((*first)[0].get());
  auto* b = static_cast<GpuDevice*>((*second)[0].get());
  EXPECT_EQ(a->context(), b->context());
  EXPECT_EQ(a->allocator(), b->allocator());
  EXPECT_EQ(a->host_allocator(), b->host_allocator());
  EXPECT_EQ(a->thread_pool(), b->thread_pool());
  EXPECT_EQ(a->compute_stream(), b->compute_stream());
  EXPECT_NE(a->resource_manager(), b->resource_manager());
  EXPECT_EQ(a->name(), b->name());
  // One limit, not 0.9 of what the first left free.
  EXPECT_EQ(b->MemoryStats().bytes_limit, a->MemoryStats().bytes_limit);
  // Either can use the other's tensors and Sync after the other is gone.
  absl::StatusOr<Tensor> on_a = a->CopyFromHost(RandomFloats(4096, 9));
  ASSERT_TRUE(on_a.ok()) << on_a.status();
  first->clear();
  absl::StatusOr<Tensor> back = b->CopyToHost(*on_a);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameBytes(*back, RandomFloats(4096, 9));
  EXPECT_TRUE(b->Sync().ok());
}

TEST_F(GpuDeviceTest, CreatingDevicesIsCheap) {
  std::unique_ptr<GpuDevice> first = MakeGpu();
  ASSERT_NE(first, nullptr);
  const AllocatorStats before = first->MemoryStats();
  const absl::Time start = absl::Now();
  for (int i = 0; i < 50; ++i) {
    std::unique_ptr<GpuDevice> gpu = MakeGpu();
    ASSERT_NE(gpu, nullptr);
    ASSERT_EQ(gpu->allocator(), first->allocator());
  }
  const absl::Duration took = absl::Now() - start;
  // No streams, handles, workspaces or threads per device: well under a
  // millisecond each; a fresh context costs tens of milliseconds.
  EXPECT_LT(took, absl::Milliseconds(500)) << "50 devices took " << took;
  EXPECT_EQ(first->MemoryStats().bytes_reserved, before.bytes_reserved);
}

TEST_F(GpuDeviceTest, LaterMemoryOptionsKeepTheFirstLimit) {
  std::unique_ptr<GpuDevice> gpu = MakeGpu();
  ASSERT_NE(gpu, nullptr);
  std::unique_ptr<GpuDevice> other = MakeGpu(0, false, kLimit / 2);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->MemoryStats().bytes_limit, gpu->MemoryStats().bytes_limit);
  EXPECT_EQ(other->context()->options().memory_limit, gpu->context()->options().memory_limit);
  // Bad options are still refused.
  GpuDeviceOptions bad;
  bad.memory_limit = -1;
  EXPECT_EQ(GpuDevice::Create(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(GpuDeviceTest, PoisoningCanBeTurnedOnByALaterDevice) {
  std::unique_ptr<GpuDevice> plain = MakeGpu();
  ASSERT_NE(plain, nullptr);
  std::unique_ptr<GpuDevice> poisoned = MakeGpu(0, /*poison=*/true);
  ASSERT_NE(poisoned, nullptr);
  {
    absl::StatusOr<Tensor> dirty = poisoned->CopyFromHost(RandomFloats(3000, 10));
    ASSERT_TRUE(dirty.ok()) << dirty.status();
  }
  absl::StatusOr<Tensor> t =
      Tensor::Allocate(poisoned->allocator(), DT_FLOAT, TensorShape({3000}));
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<Tensor> back = poisoned->CopyToHost(*t);
  ASSERT_TRUE(back.ok()) << back.status();
  const auto* bytes = static_cast<const uint8_t*>(back->raw_data());
  for (size_t i = 0; i < back->TotalBytes(); ++i) ASSERT_EQ(bytes[i], 0xFF) << "byte " << i;
}

TEST_F(GpuDeviceTest, DestroyingADeviceRunsItsCallbacksFirst) {
  std::unique_ptr<GpuDevice> keep = MakeGpu();  // the context stays busy
  std::unique_ptr<GpuDevice> gpu = MakeGpu();
  ASSERT_NE(keep, nullptr);
  ASSERT_NE(gpu, nullptr);
  absl::StatusOr<Tensor> dev = gpu->CopyFromHost(RandomFloats(1 << 20, 11));
  ASSERT_TRUE(dev.ok()) << dev.status();
  std::atomic<int> ran{0};
  for (int i = 0; i < 4; ++i) {
    gpu->ThenExecute([&ran](absl::Status s) {
      absl::SleepFor(absl::Milliseconds(50));
      if (s.ok()) ran.fetch_add(1);
    });
  }
  gpu.reset();
  EXPECT_EQ(ran.load(), 4);
  EXPECT_TRUE(keep->Sync().ok());
}

TEST_F(GpuDeviceTest, PeerCopyBetweenTwoGpus) {
  if (VisibleGpuCount() < 2) GTEST_SKIP() << "needs 2 GPUs";
  LocalDevicesOptions options;
  options.max_gpus = 2;
  options.gpu_memory_limit = kLimit;
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateGpuDevices(options);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 2u);
  auto* gpu0 = static_cast<GpuDevice*>((*devices)[0].get());
  auto* gpu1 = static_cast<GpuDevice*>((*devices)[1].get());
  Tensor host = RandomFloats(300001, 7);
  absl::StatusOr<Tensor> on0 = gpu0->CopyFromHost(host);
  ASSERT_TRUE(on0.ok()) << on0.status();
  ASSERT_TRUE(gpu0->Sync().ok());  // a peer's tensor must be complete
  absl::StatusOr<Tensor> on1 = gpu1->CopyFromPeer(*on0);
  ASSERT_TRUE(on1.ok()) << on1.status();
  EXPECT_EQ(on1->buffer_allocator()->device_ordinal(), 1);
  on0 = absl::UnknownError("released");
  absl::StatusOr<Tensor> back = gpu1->CopyToHost(*on1);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameBytes(*back, host);
}

// One card carved into two logical GPUs (runtime/gpu/logical_gpus.h): both
// of ordinal 0, each with its own streams and allocator; GPU:0 -> GPU:1 is a
// copy into GPU:1's memory, not the same buffer.
TEST_F(GpuDeviceTest, OneCardCarvedIntoTwoLogicalGpus) {
  LocalDevicesOptions options;
  options.max_gpus = 1;
  options.gpu_logical_memory_limits = {kLimit, kLimit / 2};
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateGpuDevices(options);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 2u);
  auto* gpu0 = static_cast<GpuDevice*>((*devices)[0].get());
  auto* gpu1 = static_cast<GpuDevice*>((*devices)[1].get());
  EXPECT_EQ(gpu1->name(), "/job:localhost/replica:0/task:0/device:GPU:1");
  EXPECT_EQ(gpu0->ordinal(), 0);
  EXPECT_EQ(gpu1->ordinal(), 0);
  EXPECT_EQ(gpu0->logical(), 0);
  EXPECT_EQ(gpu1->logical(), 1);
  EXPECT_NE(gpu0->compute_stream(), gpu1->compute_stream());
  EXPECT_NE(gpu0->allocator(), gpu1->allocator());
  EXPECT_EQ(gpu1->context()->options().memory_limit, kLimit / 2);

  Tensor host = RandomFloats(300001, 11);
  absl::StatusOr<Tensor> on0 = gpu0->CopyFromHost(host);
  ASSERT_TRUE(on0.ok()) << on0.status();
  ASSERT_TRUE(gpu0->Sync().ok());
  EXPECT_TRUE(gpu0->HoldsInItsMemory(*on0));
  EXPECT_FALSE(gpu1->HoldsInItsMemory(*on0));
  absl::StatusOr<Tensor> on1 = gpu1->CopyFromPeer(*on0);
  ASSERT_TRUE(on1.ok()) << on1.status();
  EXPECT_NE(on1->raw_data(), on0->raw_data());
  EXPECT_TRUE(gpu1->HoldsInItsMemory(*on1));
  on0 = absl::UnknownError("released");
  absl::StatusOr<Tensor> back = gpu1->CopyToHost(*on1);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameBytes(*back, host);
}

// A GPU partition: _Recv (from the CPU) -> _Send (back to the CPU), run by an
// executor with a rendezvous the test plays the CPU side of.
class GpuSendRecvTest : public ::testing::Test {
 protected:
  static constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
  static constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:GPU:0";

  void SetUp() override {
    std::string why;
    if (VisibleGpuCount(&why) == 0) GTEST_SKIP() << "no GPU: " << why;
    ASSERT_TRUE(RegisterSendRecvOps(&ops_).ok());
    ASSERT_TRUE(RegisterFrameOps(&ops_).ok());
    RegisterGpuRuntimeKernels(&kernels_);
    gpu_ = MakeGpu();
    ASSERT_NE(gpu_, nullptr);
  }

  // Sends `in` to the GPU partition, runs it and returns what it sent back.
  absl::StatusOr<Tensor> Bounce(const Tensor& in) {
    auto g = std::make_unique<Graph>(&ops_);
    Scope s = Scope::NewRootScope(g.get());
    auto transfer = [&](OpBuilder* b, const char* from, const char* to, const char* name) {
      b->Attr("T", in.dtype())
          .Attr("tensor_name", name)
          .Attr("send_device", from)
          .Attr("send_device_incarnation", int64_t{1})
          .Attr("recv_device", to);
    };
    OpBuilder recv = s.Op(kRecvOp);
    transfer(&recv, kCpu, kGpu, "in");
    Output x = recv.Finalize1();
    OpBuilder send = s.Op(kSendOp);
    send.Input(x);
    transfer(&send, kGpu, kCpu, "out");
    send.Finalize();
    RETURN_IF_ERROR(s.status());
    ASSIGN_OR_RETURN(std::unique_ptr<Executor> ex,
                     Executor::Create(std::move(g), gpu_.get(), kernels_));
    LocalRendezvous rendezvous;
    RETURN_IF_ERROR(rendezvous.Send(Rendezvous::CreateKey(7, kCpu, 1, kGpu, "in"), in));
    RETURN_IF_ERROR(ex->Run({.step_id = 7, .rendezvous = &rendezvous}));
    absl::Notification got;
    absl::StatusOr<Tensor> out;
    rendezvous.RecvAsync(Rendezvous::CreateKey(7, kGpu, 1, kCpu, "out"),
                         [&](absl::Status st, Tensor t) {
                           if (st.ok()) {
                             out = std::move(t);
                           } else {
                             out = st;
                           }
                           got.Notify();
                         });
    if (!got.WaitForNotificationWithTimeout(absl::Seconds(10))) {
      return absl::DeadlineExceededError("no tensor came back");
    }
    return out;
  }

  OpRegistry ops_;
  KernelRegistry kernels_;
  std::unique_ptr<GpuDevice> gpu_;
};

TEST_F(GpuSendRecvTest, FloatsGoThroughTheGpuAndComeBackOnTheHost) {
  Tensor in = RandomFloats(12345, 8);
  absl::StatusOr<Tensor> out = Bounce(in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->on_device());
  EXPECT_FALSE(out->SharesBufferWith(in));  // it went through device memory
  ExpectSameBytes(*out, in);
}

TEST_F(GpuSendRecvTest, Int32StaysOnTheHost) {
  Tensor in = Tensor::FromVector<int32_t>({1, 2, 3, -4});
  absl::StatusOr<Tensor> out = Bounce(in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->SharesBufferWith(in));  // HostMemory: passed through
}

#endif  // SLUICE_WITH_CUDA

}  // namespace
}  // namespace sluice
