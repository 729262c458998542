// The executor on a device with device memory, without a GPU: a fake
// accelerator whose "device memory" is host memory tagged kDevice. Checks
// that each kernel gets its inputs in the memory its KernelDef asks for
// (HostMemory args on the host, the rest on the device), that HostMemory
// outputs come from the host allocator, that copies happen only where
// the kinds differ, that a step ends with one Sync, and that host kernels
// (KernelDef::AllHostMemory) get host memory from ctx->allocator() and
// allocate_temp.
#include <atomic>
#include <cstring>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "graph/scope.h"
#include "base/status_macros.h"
#include "runtime/executor.h"
#include "runtime/fake_device_memory.h"
#include "runtime/frame_ops.h"
#include "runtime/step_stats.h"

namespace sluice {
namespace {

constexpr char kAccel[] = "ACCEL";

class FakeAccelerator : public Device {
 public:
  FakeAccelerator() : Device("/job:localhost/replica:0/task:0/device:ACCEL:0", kAccel) {}
  Allocator* allocator() override { return device_.get(); }
  ThreadPool* thread_pool() override { return &pool_; }
  bool has_device_memory() const override { return true; }
  Allocator* host_allocator() override { return host_.get(); }
  absl::StatusOr<Tensor> CopyToHost(const Tensor& t) override {
    ++to_host;
    return Copy(t, host_.get());
  }
  absl::StatusOr<Tensor> CopyFromHost(const Tensor& t) override {
    ++from_host;
    return Copy(t, device_.get());
  }
  absl::Status Sync() override {
    ++syncs;
    return absl::OkStatus();
  }

  std::atomic<int> to_host{0};
  std::atomic<int> from_host{0};
  std::atomic<int> syncs{0};

 private:
  static absl::StatusOr<Tensor> Copy(const Tensor& t, Allocator* a) {
    ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(a, t.dtype(), t.shape()));
    std::memcpy(out.raw_data(), t.raw_data(), t.TotalBytes());
    return out;
  }
  std::shared_ptr<FakeDeviceMemory> device_ = std::make_shared<FakeDeviceMemory>("fake_device");
  std::shared_ptr<CpuAllocator> host_ = std::make_shared<CpuAllocator>("fake_pinned");
  ThreadPool pool_{"accel", 1};
};

// Checks where its input is, then writes in + 1 to its output.
absl::Status IncChecking(OpKernelContext* ctx, bool input_on_device, bool output_on_device) {
  if (ctx->input(0).on_device() != input_on_device) {
    return absl::InternalError(absl::StrCat(ctx->node().name(), ": input in the wrong memory"));
  }
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, ctx->input(0).shape()));
  if (out->on_device() != output_on_device) {
    return absl::InternalError(absl::StrCat(ctx->node().name(), ": output in the wrong memory"));
  }
  for (int64_t i = 0; i < out->NumElements(); ++i) {
    out->flat<float>()[i] = ctx->input(0).flat<float>()[i] + 1;
  }
  return absl::OkStatus();
}

class DeviceIncOp : public OpKernel {  // device in, device out
 public:
  absl::Status Compute(OpKernelContext* ctx) override { return IncChecking(ctx, true, true); }
};
class HostIncOp : public OpKernel {  // HostMemory in and out
 public:
  absl::Status Compute(OpKernelContext* ctx) override { return IncChecking(ctx, false, false); }
};

// Goes through a temporary: checks that it comes from ctx->allocator(), in
// the memory the kernel runs against, then writes in + 1 to its output.
absl::Status IncThroughTemp(OpKernelContext* ctx, bool on_device) {
  Allocator* want = on_device ? ctx->device()->allocator() : ctx->device()->host_allocator();
  if (ctx->allocator() != want) {
    return absl::InternalError(absl::StrCat(ctx->node().name(), ": wrong allocator"));
  }
  ASSIGN_OR_RETURN(Tensor temp, ctx->allocate_temp(DT_FLOAT, ctx->input(0).shape()));
  if (temp.on_device() != on_device || temp.buffer_allocator() != want) {
    return absl::InternalError(absl::StrCat(ctx->node().name(), ": temporary in the wrong memory"));
  }
  // (The fake accelerator's "device memory" is host memory: this works for both.)
  for (int64_t i = 0; i < temp.NumElements(); ++i) {
    temp.flat<float>()[i] = ctx->input(0).flat<float>()[i] + 1;
  }
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, temp.shape()));
  if (out->on_device() != on_device) {
    return absl::InternalError(absl::StrCat(ctx->node().name(), ": output in the wrong memory"));
  }
  std::memcpy(out->raw_data(), temp.raw_data(), temp.TotalBytes());
  return absl::OkStatus();
}

class DeviceTempOp : public OpKernel {  // a device kernel: device temporaries
 public:
  absl::Status Compute(OpKernelContext* ctx) override { return IncThroughTemp(ctx, true); }
};
class CpuTempOp : public OpKernel {  // a CPU kernel: host temporaries wherever it runs
 public:
  absl::Status Compute(OpKernelContext* ctx) override { return IncThroughTemp(ctx, false); }
};

class DeviceMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterFrameOps(&ops_).ok());
    for (const char* op : {"DevInc", "HostInc", "DevTemp", "HostTemp"}) {
      ASSERT_TRUE(ops_.Register(OpDefBuilder(op).Input("x: float").Output("y: float")).ok());
    }
    kernels_.Register<DeviceIncOp>(KernelDef("DevInc", kAccel));
    kernels_.Register<HostIncOp>(
        KernelDef("HostInc", kAccel).HostMemory("x").HostMemory("y"));
    kernels_.Register<DeviceTempOp>(KernelDef("DevTemp", kAccel));
    // A CPU kernel copied to the accelerator as a host kernel.
    kernels_.Register<CpuTempOp>(KernelDef("HostTemp", kDeviceTypeCpu));
    ASSERT_EQ(kernels_.RegisterHostKernels("HostTemp", kAccel,
                                           [](const KernelDef&) { return true; }),
              1);
    // _Arg / _Retval: host memory on the accelerator, as the GPU registers them.
    RegisterFrameKernels(&kernels_);
    for (const char* op : {kArgOp, kRetvalOp}) {
      kernels_.RegisterHostKernels(op, kAccel, [](const KernelDef&) { return true; });
    }
  }

  absl::StatusOr<float> Run(const std::vector<std::string>& chain,
                            StepStatsCollector* stats = nullptr) {
    auto g = std::make_unique<Graph>(&ops_);
    Scope s = Scope::NewRootScope(g.get());
    Output x = s.Op(kArgOp).Attr("T", DT_FLOAT).Attr("index", int64_t{0}).Finalize1();
    for (const std::string& op : chain) x = s.Op(op).Input(x).Finalize1();
    s.Op(kRetvalOp).Input(x).Attr("index", int64_t{0}).Finalize();
    RETURN_IF_ERROR(s.status());
    ASSIGN_OR_RETURN(std::unique_ptr<Executor> ex,
                     Executor::Create(std::move(g), &device_, kernels_));
    CallFrame frame;
    frame.args = {Tensor::FromVector<float>({1, 2})};
    frame.retvals.resize(1);
    RETURN_IF_ERROR(ex->Run({.step_id = 1, .call_frame = &frame, .stats = stats}));
    if (frame.retvals[0].on_device()) return absl::InternalError("fetched a device tensor");
    return frame.retvals[0].flat<float>()[1];
  }

  OpRegistry ops_;
  KernelRegistry kernels_;
  FakeAccelerator device_;
};

TEST_F(DeviceMemoryTest, InputsMoveOnlyWhereTheKindsDiffer) {
  // host arg -> Dev -> Dev -> Host -> Host -> Dev -> host retval
  absl::StatusOr<float> r = Run({"DevInc", "DevInc", "HostInc", "HostInc", "DevInc"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, 2 + 5);
  EXPECT_EQ(device_.from_host.load(), 2);  // arg -> DevInc, HostInc -> DevInc
  EXPECT_EQ(device_.to_host.load(), 2);    // DevInc -> HostInc, DevInc -> retval
  EXPECT_EQ(device_.syncs.load(), 1);
}

// A traced step says which nodes' inputs were copied, and how many.
TEST_F(DeviceMemoryTest, TheTraceCountsEachNodesInputCopies) {
  StepStatsCollector collector;
  absl::StatusOr<float> r = Run({"DevInc", "DevInc", "HostInc", "DevInc"}, &collector);
  ASSERT_TRUE(r.ok()) << r.status();
  std::map<std::string, int> copies;  // op -> copies
  int total = 0;
  for (const NodeExecStats& n : collector.Finish().nodes) {
    copies[n.op] += n.input_copies;
    total += n.input_copies;
  }
  // arg -> DevInc, DevInc -> HostInc, HostInc -> DevInc, DevInc -> retval
  EXPECT_EQ(total, 4);
  EXPECT_EQ(copies["HostInc"], 1);
  EXPECT_EQ(copies["DevInc"], 2);
  EXPECT_EQ(copies[kRetvalOp], 1);
  EXPECT_EQ(total, device_.from_host.load() + device_.to_host.load());
}

TEST_F(DeviceMemoryTest, AllHostChainCopiesNothing) {
  absl::StatusOr<float> r = Run({"HostInc", "HostInc"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, 4);
  EXPECT_EQ(device_.from_host.load() + device_.to_host.load(), 0);
}

TEST_F(DeviceMemoryTest, HostKernelsAllocateHostMemory) {
  // host arg -> DevTemp -> HostTemp (a CPU kernel) -> DevTemp -> host retval
  absl::StatusOr<float> r = Run({"DevTemp", "HostTemp", "DevTemp"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, 2 + 3);
  EXPECT_EQ(device_.from_host.load(), 2);  // arg -> DevTemp, HostTemp -> DevTemp
  EXPECT_EQ(device_.to_host.load(), 2);    // DevTemp -> HostTemp, DevTemp -> retval
  // A kernel with only some HostMemory args runs against the device: its
  // temporaries stay device memory.
  r = Run({"HostInc", "DevTemp"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, 2 + 2);
}

TEST_F(DeviceMemoryTest, HostKernelParamPicksTheHostAllocator) {
  OpKernelContext::Params params;
  params.device = &device_;
  EXPECT_EQ(OpKernelContext(params).allocator(), device_.allocator());
  params.host_kernel = true;
  OpKernelContext ctx(params);
  EXPECT_EQ(ctx.allocator(), device_.host_allocator());
  absl::StatusOr<Tensor> t = ctx.allocate_temp(DT_FLOAT, TensorShape({4}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->on_device());
  EXPECT_EQ(t->buffer_allocator(), device_.host_allocator());
}

TEST_F(DeviceMemoryTest, HostMemoryArgsMapArgNamesToIndices) {
  ASSERT_TRUE(ops_.Register(OpDefBuilder("Mixed")
                                .Input("a: float")
                                .Input("shape: N * int32")
                                .Input("b: float")
                                .Attr("N: int")
                                .Output("y: float")
                                .Output("s: int32"))
                  .ok());
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  Output f = s.Op(kArgOp).Attr("T", DT_FLOAT).Attr("index", int64_t{0}).Finalize1();
  Output i = s.Op(kArgOp).Attr("T", DT_INT32).Attr("index", int64_t{1}).Finalize1();
  Output m = s.Op("Mixed").Input(f).InputList(std::vector<Output>{i, i}).Input(f).Attr("N", int64_t{2}).Finalize1();
  ASSERT_TRUE(s.ok()) << s.status();
  KernelDef def = KernelDef("Mixed", kAccel).HostMemory("shape").HostMemory("s");
  ArgMemoryTypes types = HostMemoryArgs(def, *m.node);
  EXPECT_EQ(types.input_on_host, (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(types.output_on_host, (std::vector<uint8_t>{0, 1}));
  KernelDef all = KernelDef("Mixed", kAccel).AllHostMemory();
  EXPECT_EQ(HostMemoryArgs(all, *m.node).input_on_host, (std::vector<uint8_t>{1, 1, 1, 1}));
}

}  // namespace
}  // namespace sluice
