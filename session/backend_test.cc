// A session runs a step on a backend handed in through its options: a fake
// "XPU" backend (host memory, its own kernel and all-reduce) beside the CPU
// devices, with no global registration anywhere.
#include "runtime/backend.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "graph/scope.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "session/direct_session.h"
#include "runtime/frame_ops.h"
#include "runtime/session.h"

namespace sluice {
namespace {

std::atomic<int> g_xpu_kernel_runs{0};

class XpuDevice : public Device {
 public:
  explicit XpuDevice(std::string name)
      : Device(std::move(name), "XPU"),
        allocator_(std::make_shared<CpuAllocator>("xpu")),
        pool_("xpu", 1) {}
  Allocator* allocator() override { return allocator_.get(); }
  ThreadPool* thread_pool() override { return &pool_; }

 private:
  std::shared_ptr<Allocator> allocator_;
  ThreadPool pool_;
};

class TimesTenOp : public OpKernel {  // y = 10 x, on an XPU
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ++g_xpu_kernel_runs;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, ctx->input(0).shape()));
    out->data<float>()[0] = 10 * ctx->input(0).data<float>()[0];
    return absl::OkStatus();
  }
};

class XpuBackend : public Backend {
 public:
  explicit XpuBackend(int devices) : devices_(devices) {}
  std::string device_type() const override { return "XPU"; }
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      const LocalDevicesOptions& options) const override {
    std::vector<std::unique_ptr<Device>> out;
    for (int i = 0; i < devices_; ++i) {
      out.push_back(std::make_unique<XpuDevice>(
          options.name_prefix + "/device:XPU:" + std::to_string(i)));
    }
    return out;
  }
  void RegisterKernels(KernelRegistry* kernels) const override {
    kernels->Register<TimesTenOp>(KernelDef("TimesTen", "XPU"));
    RegisterHostMemoryFrameKernels(kernels, "XPU", {DT_FLOAT});  // feeds and fetches
  }
  LocalAllReduceImpl LocalAllReduce() const override {
    return [](const CollectiveParams&, const std::vector<Device*>&, const std::vector<Tensor>&,
              std::function<void(absl::StatusOr<std::vector<Tensor>>)> done) {
      done(absl::UnimplementedError("not used"));
    };
  }

 private:
  const int devices_;
};

class CpuOnlyBackend : public Backend {
 public:
  std::string device_type() const override { return kDeviceTypeCpu; }
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      const LocalDevicesOptions& options) const override {
    return CreateLocalDevices(options);
  }
  void RegisterKernels(KernelRegistry* kernels) const override { RegisterFrameKernels(kernels); }
};

TEST(BackendRegistryTest, OneBackendPerTypeDevicesInOrderAndItsAllReduce) {
  BackendRegistry backends;
  ASSERT_TRUE(backends.Add(std::make_unique<CpuOnlyBackend>()).ok());
  ASSERT_TRUE(backends.Add(std::make_unique<XpuBackend>(2)).ok());
  absl::Status again = backends.Add(std::make_unique<XpuBackend>(1));
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_EQ(backends.Add(nullptr).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(backends.backends().size(), 2u);
  EXPECT_EQ(backends.Find("XPU"), backends.backends()[1]);
  EXPECT_EQ(backends.Find("GPU"), nullptr);

  LocalDevicesOptions options;
  options.name_prefix = "/job:w/replica:0/task:3";
  options.num_virtual_cpus = 1;
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = backends.CreateDevices(options);
  ASSERT_TRUE(devices.ok()) << devices.status();
  std::vector<std::string> names;
  for (const auto& d : *devices) names.push_back(d->name());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "/job:w/replica:0/task:3/device:CPU:0", "/job:w/replica:0/task:3/device:CPU:1",
                       "/job:w/replica:0/task:3/device:XPU:0", "/job:w/replica:0/task:3/device:XPU:1"}));
  EXPECT_TRUE(backends.LocalAllReduceFor("XPU") != nullptr);
  EXPECT_TRUE(backends.LocalAllReduceFor("CPU") == nullptr);
  EXPECT_TRUE(backends.CrossProcessAllReduceFor("XPU") == nullptr);

  // A backend's bad options fail naming it.
  options.num_virtual_cpus = -1;
  absl::Status bad = backends.CreateDevices(options).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("CPU backend"), std::string::npos) << bad;
}

TEST(BackendTest, ASessionRunsAStepOnABackendFromItsOptions) {
  BackendRegistry backends;
  ASSERT_TRUE(backends.Add(std::make_unique<CpuOnlyBackend>()).ok());
  ASSERT_TRUE(backends.Add(std::make_unique<XpuBackend>(1)).ok());
  OpRegistry ops;
  ASSERT_TRUE(RegisterFrameOps(&ops).ok());
  ASSERT_TRUE(ops.Register(OpDefBuilder("TimesTen").Input("x: float").Output("y: float")).ok());
  ASSERT_TRUE(ops.Register(OpDefBuilder("Input").Output("y: float")).ok());  // always fed
  KernelRegistry kernels;
  backends.RegisterKernels(&kernels);

  // in (fed) -> y = TimesTen(in), all on the XPU.
  Graph user(&ops);
  Scope u = Scope::NewRootScope(&user);
  Output in = u.WithOpName("in").Op("Input").Finalize1();
  u.WithOpName("y").Op("TimesTen").Input(in).Finalize();
  ASSERT_TRUE(u.ok()) << u.status();
  GraphDef def;
  user.ToGraphDef(&def);

  SessionConfig options;
  options.ops = &ops;
  options.kernels = &kernels;
  options.backends = &backends;
  options.default_device = "/device:XPU:0";
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options, def);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::string> devices = (*session)->ListDevices();
  EXPECT_EQ(devices.back(), "/job:localhost/replica:0/task:0/device:XPU:0");
  g_xpu_kernel_runs = 0;
  absl::StatusOr<std::vector<Tensor>> out =
      (*session)->Run({{"in", Tensor::Scalar<float>(4.5f)}}, {"y"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 45.0f);
  EXPECT_EQ(g_xpu_kernel_runs.load(), 1);

  // Without the backend in the options there is no XPU to run on.
  options.backends = nullptr;
  absl::StatusOr<std::unique_ptr<Session>> cpu_only = NewSession(options, def);
  ASSERT_TRUE(cpu_only.ok()) << cpu_only.status();
  absl::Status refused = (*cpu_only)->Run({{"in", Tensor::Scalar<float>(1)}}, {"y"}, {}).status();
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("XPU"), std::string::npos) << refused;
}

}  // namespace
}  // namespace sluice
