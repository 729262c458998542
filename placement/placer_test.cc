// PlaceGraph: requests (full, partial, legacy), the default device, soft
// placement, colocation groups, kernel availability per device type, bad
// names, and constants following their consumers.
#include "placement/placer.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_ops.h"
#include "runtime/local_devices.h"

namespace sluice {
namespace {

constexpr char kPrefix[] = "/job:localhost/replica:0/task:0";

std::string Cpu(int id) { return absl::StrCat(kPrefix, "/device:CPU:", id); }
std::string Gpu(int id) { return absl::StrCat(kPrefix, "/device:GPU:", id); }

bool Contains(const absl::Status& s, const std::string& needle) {
  return std::string(s.message()).find(needle) != std::string::npos;
}

// A device of type GPU with no kernels behind it: the placer only reads its
// name and type, so it has neither allocator nor threads.
class FakeGpuDevice : public Device {
 public:
  explicit FakeGpuDevice(int id) : Device(Gpu(id), kDeviceTypeGpu) {}
  Allocator* allocator() override { return nullptr; }
  ThreadPool* thread_pool() override { return nullptr; }
};

class PlacerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LocalDevicesOptions opts;
    opts.num_virtual_cpus = 2;
    opts.cpu_threads = 1;
    opts.virtual_cpu_threads = 1;
    absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateLocalDevices(opts);
    ASSERT_TRUE(devices.ok()) << devices.status();
    owned_ = *std::move(devices);
    for (const auto& d : owned_) devices_.push_back(d.get());
    ASSERT_EQ(devices_.size(), 3u);
  }

  absl::Status Place(const Scope& s, const PlacerOptions& options = {}) {
    if (!s.ok()) return s.status();
    return PlaceGraph(s.graph(), devices_, *BuiltinKernels(), options);
  }

  static std::string DeviceOf(const Scope& s, const std::string& node) {
    const Node* n = s.graph()->FindNode(node);
    return n == nullptr ? "<no node " + node + ">" : n->assigned_device();
  }

  std::vector<std::unique_ptr<Device>> owned_;
  std::vector<Device*> devices_;
};

TEST_F(PlacerTest, ExplicitFullPartialAndLegacyRequests) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::Square(s.WithOpName("full").WithDevice(Cpu(2)), x);
  ops::Square(s.WithOpName("partial").WithDevice("/device:CPU:1"), x);
  ops::Square(s.WithOpName("legacy").WithDevice("/cpu:2"), x);
  ops::Square(s.WithOpName("job_only").WithDevice("/job:localhost"), x);
  ops::Square(s.WithOpName("any_cpu").WithDevice("/device:CPU:*"), x);
  ops::Square(s.WithOpName("lower_case").WithDevice("/device:cpu:1"), x);
  ops::Square(s.WithOpName("none"), x);
  ASSERT_TRUE(Place(s).ok()) << Place(s);
  EXPECT_EQ(DeviceOf(s, "full"), Cpu(2));
  EXPECT_EQ(DeviceOf(s, "partial"), Cpu(1));
  EXPECT_EQ(DeviceOf(s, "legacy"), Cpu(2));
  EXPECT_EQ(DeviceOf(s, "job_only"), Cpu(0));
  EXPECT_EQ(DeviceOf(s, "any_cpu"), Cpu(0));
  EXPECT_EQ(DeviceOf(s, "lower_case"), Cpu(1));
  EXPECT_EQ(DeviceOf(s, "none"), Cpu(0));
  EXPECT_EQ(DeviceOf(s, "x"),
            Cpu(0));  // consumers on several devices: the default
  for (const Node* n : s.graph()->nodes()) EXPECT_FALSE(n->assigned_device().empty()) << n->name();
}

TEST_F(PlacerTest, AnAssignedNodeKeepsItsDevice) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice("/device:CPU:0"), DT_FLOAT);
  Output y = ops::Square(s.WithOpName("y").WithDevice("/device:CPU:1"), x);
  y.node->set_assigned_device(Cpu(2));  // e.g. placed by an earlier pass
  ASSERT_TRUE(Place(s).ok());
  EXPECT_EQ(DeviceOf(s, "y"), Cpu(2));
  EXPECT_EQ(DeviceOf(s, "x"), Cpu(0));
}

TEST_F(PlacerTest, DefaultDeviceTakesNodesThatAskForNothing) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::Neg(s.WithOpName("free"), x);
  ops::Neg(s.WithOpName("pinned").WithDevice("/device:CPU:1"), x);
  PlacerOptions opts;
  opts.default_device = "/device:CPU:2";
  ASSERT_TRUE(Place(s, opts).ok()) << Place(s, opts);
  EXPECT_EQ(DeviceOf(s, "free"), Cpu(2));
  EXPECT_EQ(DeviceOf(s, "pinned"), Cpu(1));
  EXPECT_EQ(DeviceOf(s, "x"), Cpu(2));
}

TEST_F(PlacerTest, DefaultDeviceMatchingNoDeviceIsAnError) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Neg(s.WithOpName("n"), ops::Placeholder(s.WithOpName("x"), DT_FLOAT));
  PlacerOptions opts;
  opts.default_device = "/device:CPU:5";
  absl::Status st = Place(s, opts);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st, "'/device:CPU:5'")) << st;
  EXPECT_TRUE(Contains(st, "matches none")) << st;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Contains(st, Cpu(i))) << st;
  // Soft placement does not excuse a bad option.
  opts.allow_soft_placement = true;
  EXPECT_FALSE(Place(s, opts).ok());
  opts.default_device = "/device:CPU";
  st = Place(s, opts);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st, "'device:CPU'")) << st;
}

TEST_F(PlacerTest, NoDevicesIsFailedPrecondition) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Const(s.WithOpName("c"), 1.0f);
  ASSERT_TRUE(s.ok());
  absl::Status st = PlaceGraph(s.graph(), {}, *BuiltinKernels(), {});
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_TRUE(Contains(st, "no devices")) << st;
}

TEST_F(PlacerTest, SoftPlacementRelaxesARequestForAMissingDevice) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::Square(s.WithOpName("sq").WithDevice("/device:CPU:7"), x);
  ops::Square(s.WithOpName("on_gpu").WithDevice("/device:GPU:0"), x);
  ops::Square(s.WithOpName("other_task").WithDevice("/job:localhost/task:3/device:CPU:1"), x);
  PlacerOptions opts;
  opts.allow_soft_placement = true;
  ASSERT_TRUE(Place(s, opts).ok()) << Place(s, opts);
  // The id goes first: CPU:7 becomes the first CPU.
  EXPECT_EQ(DeviceOf(s, "sq"), Cpu(0));
  // No GPU at all: the type goes too.
  EXPECT_EQ(DeviceOf(s, "on_gpu").rfind(kPrefix, 0), 0u) << DeviceOf(s, "on_gpu");
  EXPECT_NE(DeviceOf(s, "on_gpu").find("/device:CPU:"), std::string::npos);
  // A task that does not exist: relaxed to some device of this task.
  EXPECT_EQ(DeviceOf(s, "other_task").rfind(kPrefix, 0), 0u) << DeviceOf(s, "other_task");
}

TEST_F(PlacerTest, WithoutSoftPlacementAMissingDeviceIsAnError) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Square(s.WithOpName("sq").WithDevice("/device:CPU:7"),
              ops::Placeholder(s.WithOpName("x"), DT_FLOAT));
  absl::Status st = Place(s);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st, "'sq' (Square)")) << st;
  EXPECT_TRUE(Contains(st, "'/device:CPU:7'")) << st;
  EXPECT_TRUE(Contains(st, "available")) << st;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Contains(st, Cpu(i))) << st;
}

TEST_F(PlacerTest, VariableItsAssignAndItsReadShareADevice) {
  {
    // The variable asks for CPU:1; its initializer and read follow it.
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("v").WithDevice("/device:CPU:1"),
                                                   ops::Const(s.WithOpName("init_value"), 1.0f));
    ops::Identity(s.WithOpName("v_read"), v.var);
    ops::AssignAdd(s.WithOpName("bump"), v.var, ops::Const(s.WithOpName("one"), 1.0f));
    ASSERT_TRUE(Place(s).ok()) << Place(s);
    EXPECT_EQ(DeviceOf(s, "v"), Cpu(1));
    EXPECT_EQ(DeviceOf(s, v.initializer->name()), Cpu(1));
    EXPECT_EQ(DeviceOf(s, "v_read"), Cpu(1));
    EXPECT_EQ(DeviceOf(s, "bump"), Cpu(1));
    EXPECT_EQ(DeviceOf(s, "one"), Cpu(1));  // a lone constant joins its consumer
  }
  {
    // Only the read asks (for CPU:2): the whole group goes there.
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("v"), 1.0f);
    ops::Identity(s.WithOpName("v_read").WithDevice("/device:CPU:2"), v.var);
    ops::AssignAdd(s.WithOpName("bump"), v.var, 1.0f);
    ASSERT_TRUE(Place(s).ok()) << Place(s);
    EXPECT_EQ(DeviceOf(s, "v"), Cpu(2));
    EXPECT_EQ(DeviceOf(s, v.initializer->name()), Cpu(2));
    EXPECT_EQ(DeviceOf(s, "bump"), Cpu(2));
  }
  {
    // Parts of requests merge: the job from one member, the device from
    // another.
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::VariableAndInit v =
        ops::VariableWithInit(s.WithOpName("v").WithDevice("/job:localhost"), 1.0f);
    ops::AssignAdd(s.WithOpName("bump").WithDevice("/device:CPU:2"), v.var, 1.0f);
    ASSERT_TRUE(Place(s).ok()) << Place(s);
    EXPECT_EQ(DeviceOf(s, "v"), Cpu(2));
    EXPECT_EQ(DeviceOf(s, "bump"), Cpu(2));
  }
}

// A resource variable's handle and every op taking it share a device: the
// variable lives in that device's resource manager.
TEST_F(PlacerTest, AResourceHandleAndItsUsersShareADevice) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = ops::VarHandleOp(s.WithOpName("v"), DT_FLOAT, TensorShape({}));
  ops::AssignVariableOp(s.WithOpName("init"), v, ops::Const(s.WithOpName("zero"), 0.0f));
  ops::ReadVariableOp(s.WithOpName("read").WithDevice("/device:CPU:2"), v, DT_FLOAT);
  ops::AssignAddVariableOp(s.WithOpName("bump"), v, ops::Const(s.WithOpName("one"), 1.0f));
  ASSERT_TRUE(Place(s).ok()) << Place(s);
  for (const char* name : {"v", "init", "read", "bump"}) EXPECT_EQ(DeviceOf(s, name), Cpu(2)) << name;
}

TEST_F(PlacerTest, ColocateWithFollowsThePinnedNode) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output a = ops::Neg(s.WithOpName("a").WithDevice("/device:CPU:2"), x);
  ops::Neg(s.WithOpName("b").ColocateWith(a), x);
  ops::Neg(s.WithOpName("c"), x);
  ASSERT_TRUE(Place(s).ok()) << Place(s);
  EXPECT_EQ(DeviceOf(s, "b"), Cpu(2));
  EXPECT_EQ(DeviceOf(s, "c"), Cpu(0));
}

TEST_F(PlacerTest, ColocatedNodesPinnedToDifferentDevicesIsAnError) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output a = ops::Neg(s.WithOpName("a").WithDevice("/device:CPU:1"), x);
  // The device comes after the colocation: ColocateWith drops an earlier one.
  ops::Neg(s.WithOpName("b").ColocateWith(a).WithDevice("/device:CPU:2"), x);
  absl::Status st = Place(s);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st, "'a' (Neg)")) << st;
  EXPECT_TRUE(Contains(st, "'b' (Neg)")) << st;
  EXPECT_TRUE(Contains(st, "/device:CPU:1")) << st;
  EXPECT_TRUE(Contains(st, "/device:CPU:2")) << st;
  EXPECT_TRUE(Contains(st, "colocated")) << st;
  // Soft placement keeps the first request for the whole group.
  PlacerOptions soft;
  soft.allow_soft_placement = true;
  ASSERT_TRUE(Place(s, soft).ok()) << Place(s, soft);
  EXPECT_EQ(DeviceOf(s, "a"), Cpu(1));
  EXPECT_EQ(DeviceOf(s, "b"), Cpu(1));
}

TEST_F(PlacerTest, VariableAndUpdatePinnedApartIsAnError) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit v =
      ops::VariableWithInit(s.WithOpName("w").WithDevice("/device:CPU:0"), 1.0f);
  ops::AssignAdd(s.WithOpName("w_update").WithDevice("/device:CPU:1"), v.var, 1.0f);
  absl::Status st = Place(s);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "'w' (VariableV2)")) << st;
  EXPECT_TRUE(Contains(st, "'w_update' (AssignAdd)")) << st;
  EXPECT_TRUE(Contains(st, "/device:CPU:0")) << st;
  EXPECT_TRUE(Contains(st, "/device:CPU:1")) << st;
}

TEST_F(PlacerTest, MalformedDeviceNameNamesTheNodeAndThePart) {
  for (const char* bad : {"/device:CPU:x", "/gpu:zero", "device:CPU:0", "/replica:one"}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::Neg(s.WithOpName("bad").WithDevice(bad), ops::Placeholder(s.WithOpName("x"), DT_FLOAT));
    PlacerOptions soft;
    soft.allow_soft_placement = true;  // a malformed name is not relaxed
    absl::Status st = Place(s, soft);
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_TRUE(Contains(st, "'bad' (Neg)")) << st;
    EXPECT_TRUE(Contains(st, "malformed device name")) << st;
    EXPECT_TRUE(Contains(st, bad)) << st;
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Neg(s.WithOpName("bad").WithDevice("/job:localhost/device:CPU:x"),
           ops::Placeholder(s.WithOpName("x"), DT_FLOAT));
  absl::Status st = Place(s);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "'device:CPU:x'")) << st;  // the bad part, quoted
}

TEST_F(PlacerTest, LoneConstantFollowsItsConsumers) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output c = ops::Const(s.WithOpName("c"), 2.0f);
  ops::Square(s.WithOpName("sq1").WithDevice("/device:CPU:2"), c);
  ops::Neg(s.WithOpName("sq2").WithDevice("/device:CPU:2"), c);
  // Consumers on two devices: the constant goes to the default device.
  Output split = ops::Const(s.WithOpName("split"), 3.0f);
  ops::Square(s.WithOpName("u1").WithDevice("/device:CPU:1"), split);
  ops::Square(s.WithOpName("u2").WithDevice("/device:CPU:2"), split);
  // A constant that asks for a device keeps it.
  Output pinned = ops::Const(s.WithOpName("pinned").WithDevice("/device:CPU:1"), 4.0f);
  ops::Square(s.WithOpName("u3").WithDevice("/device:CPU:2"), pinned);
  // A constant feeding a node that goes to the default device.
  Output d = ops::Const(s.WithOpName("d"), 5.0f);
  ops::Square(s.WithOpName("u4"), d);
  PlacerOptions opts;
  opts.default_device = "/device:CPU:1";
  ASSERT_TRUE(Place(s, opts).ok()) << Place(s, opts);
  EXPECT_EQ(DeviceOf(s, "c"), Cpu(2));
  EXPECT_EQ(DeviceOf(s, "split"), Cpu(1));
  EXPECT_EQ(DeviceOf(s, "pinned"), Cpu(1));
  EXPECT_EQ(DeviceOf(s, "d"), Cpu(1));
  EXPECT_EQ(DeviceOf(s, "u4"), Cpu(1));
}

// A private op and kernel registry, and a GPU device with no kernels behind
// it: only "Anywhere" and "Source" have GPU kernels.
class NeverRunKernel : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    return absl::UnimplementedError("placement tests never run kernels");
  }
};

class KernelAvailabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ops_.Register(OpDefBuilder("Source").Output("y: float")).ok());
    ASSERT_TRUE(ops_.Register(OpDefBuilder("CpuOnly").Input("x: float").Output("y: float")).ok());
    ASSERT_TRUE(ops_.Register(OpDefBuilder("Anywhere").Input("x: float").Output("y: float")).ok());
    // An op of a graph file with no kernel anywhere (a summary, say).
    ASSERT_TRUE(ops_.Register(OpDefBuilder("Nowhere").Input("x: float").Output("y: float")).ok());
    for (const char* type : {kDeviceTypeCpu, kDeviceTypeGpu}) {
      kernels_.Register<NeverRunKernel>(KernelDef("Source", type));
      kernels_.Register<NeverRunKernel>(KernelDef("Anywhere", type));
    }
    kernels_.Register<NeverRunKernel>(KernelDef("CpuOnly", kDeviceTypeCpu));
    LocalDevicesOptions opts;
    opts.cpu_threads = 1;
    absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateLocalDevices(opts);
    ASSERT_TRUE(devices.ok()) << devices.status();
    cpu_ = std::move((*devices)[0]);
    gpu_ = std::make_unique<FakeGpuDevice>(0);
  }

  Output Build(const Scope& s, const std::string& op, const std::string& name, Input input) {
    return s.WithOpName(name).Op(op).Input(input).Finalize1();
  }

  OpRegistry ops_;
  KernelRegistry kernels_;
  std::unique_ptr<Device> cpu_;
  std::unique_ptr<Device> gpu_;
};

TEST_F(KernelAvailabilityTest, MissingKernelOnTheRequestedDeviceIsAnError) {
  Scope s = Scope::NewRootScope(&ops_);
  Output src = s.WithOpName("src").Op("Source").Finalize1();
  Build(s.WithDevice("/device:GPU:0"), "CpuOnly", "cpu_only", src);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<Device*> devices = {cpu_.get(), gpu_.get()};
  absl::Status st = PlaceGraph(s.graph(), devices, kernels_, {});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st, "'cpu_only' (CpuOnly)")) << st;
  EXPECT_TRUE(Contains(st, "/device:GPU:0")) << st;
  EXPECT_TRUE(Contains(st, "no GPU kernel")) << st;
  // Soft placement moves it to the device that has the kernel.
  PlacerOptions soft;
  soft.allow_soft_placement = true;
  ASSERT_TRUE(PlaceGraph(s.graph(), devices, kernels_, soft).ok());
  EXPECT_EQ(s.graph()->FindNode("cpu_only")->assigned_device(), Cpu(0));
}

TEST_F(KernelAvailabilityTest, UnrequestedNodesGoToTheFirstDeviceWithTheirKernel) {
  Scope s = Scope::NewRootScope(&ops_);
  Output src = s.WithOpName("src").Op("Source").Finalize1();
  Build(s, "CpuOnly", "cpu_only", src);
  Build(s, "Anywhere", "anywhere", src);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<Device*> gpu_first = {gpu_.get(), cpu_.get()};
  absl::Status st = PlaceGraph(s.graph(), gpu_first, kernels_, {});
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(s.graph()->FindNode("cpu_only")->assigned_device(), Cpu(0));
  EXPECT_EQ(s.graph()->FindNode("anywhere")->assigned_device(), Gpu(0));
  EXPECT_EQ(s.graph()->FindNode("src")->assigned_device(), Gpu(0));
}

TEST_F(KernelAvailabilityTest, AColocatedMemberWithoutAKernelRulesTheDeviceOut) {
  Scope s = Scope::NewRootScope(&ops_);
  Output src = s.WithOpName("src").Op("Source").Finalize1();
  Output any = Build(s.WithDevice("/device:GPU:0"), "Anywhere", "anywhere", src);
  Build(s.ColocateWith(any), "CpuOnly", "cpu_only", src);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<Device*> devices = {cpu_.get(), gpu_.get()};
  absl::Status st = PlaceGraph(s.graph(), devices, kernels_, {});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st, "'anywhere' (Anywhere)")) << st;  // the group's request
  EXPECT_TRUE(Contains(st, "'cpu_only' (CpuOnly)")) << st;   // the member lacking a kernel
  EXPECT_TRUE(Contains(st, "no GPU kernel")) << st;
  // Unpinned, the group goes where every member has a kernel.
  Scope s2 = Scope::NewRootScope(&ops_);
  Output src2 = s2.WithOpName("src").Op("Source").Finalize1();
  Output any2 = Build(s2, "Anywhere", "anywhere", src2);
  Build(s2.ColocateWith(any2), "CpuOnly", "cpu_only", src2);
  ASSERT_TRUE(s2.ok()) << s2.status();
  std::vector<Device*> gpu_first = {gpu_.get(), cpu_.get()};
  ASSERT_TRUE(PlaceGraph(s2.graph(), gpu_first, kernels_, {}).ok());
  EXPECT_EQ(s2.graph()->FindNode("anywhere")->assigned_device(), Cpu(0));
  EXPECT_EQ(s2.graph()->FindNode("cpu_only")->assigned_device(), Cpu(0));
}

TEST_F(KernelAvailabilityTest, OpsWithAGpuKernelPreferTheGpu) {
  Scope s = Scope::NewRootScope(&ops_);
  Output src = s.WithOpName("src").Op("Source").Finalize1();
  Build(s, "Anywhere", "anywhere", src);
  Build(s, "CpuOnly", "cpu_only", src);
  Build(s.WithDevice("/device:CPU:0"), "Anywhere", "pinned_cpu", src);
  Build(s.WithDevice("/job:localhost/task:0"), "Anywhere", "task_only", src);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<Device*> cpu_first = {cpu_.get(), gpu_.get()};
  absl::Status st = PlaceGraph(s.graph(), cpu_first, kernels_, {});
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(s.graph()->FindNode("anywhere")->assigned_device(), Gpu(0));
  EXPECT_EQ(s.graph()->FindNode("task_only")->assigned_device(), Gpu(0));
  EXPECT_EQ(s.graph()->FindNode("cpu_only")->assigned_device(), Cpu(0));
  EXPECT_EQ(s.graph()->FindNode("pinned_cpu")->assigned_device(), Cpu(0));
  // A default device set by the user wins over the preference.
  Scope s2 = Scope::NewRootScope(&ops_);
  Build(s2, "Anywhere", "anywhere", s2.WithOpName("src").Op("Source").Finalize1());
  ASSERT_TRUE(s2.ok()) << s2.status();
  PlacerOptions cpu_default;
  cpu_default.default_device = "/device:CPU:0";
  ASSERT_TRUE(PlaceGraph(s2.graph(), cpu_first, kernels_, cpu_default).ok());
  EXPECT_EQ(s2.graph()->FindNode("anywhere")->assigned_device(), Cpu(0));
}

TEST_F(KernelAvailabilityTest, NoDeviceWithTheKernelAtAllIsAnError) {
  Scope s = Scope::NewRootScope(&ops_);
  Output src = s.WithOpName("src").Op("Source").Finalize1();
  Build(s, "CpuOnly", "cpu_only", src);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<Device*> gpu_only = {gpu_.get()};
  PlacerOptions soft;
  soft.allow_soft_placement = true;
  absl::Status st = PlaceGraph(s.graph(), gpu_only, kernels_, soft);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st, "'cpu_only' (CpuOnly)")) << st;
  EXPECT_TRUE(Contains(st, "no GPU kernel")) << st;
}

// A run signature keeps only some members of a colocation group (a variable
// and the ops using it): with the whole graph at hand, the members it pruned
// still rule devices out, so the group lands where it would in any other
// signature. (between_graph_mlp --sync on a GPU machine: global_step was put
// on the GPU by the init run and on the CPU by the run whose CPU-only token
// enqueue is colocated with it: two variables, one never initialized.)
TEST_F(KernelAvailabilityTest, PrunedColocationMembersStillRuleDevicesOut) {
  auto build = [&](bool with_cpu_only) {
    auto s = std::make_unique<Scope>(Scope::NewRootScope(&ops_));
    Output src = s->WithOpName("src").Op("Source").Finalize1();
    Output var = Build(*s, "Anywhere", "var", src);
    Build(s->ColocateWith(var), "Anywhere", "init", src);
    if (with_cpu_only) {
      Build(s->ColocateWith(var), "CpuOnly", "enqueue", src);
      Build(s->ColocateWith(var), "Nowhere", "summary", src);  // no kernel: left out
    }
    return s;
  };
  std::unique_ptr<Scope> whole = build(true);
  std::unique_ptr<Scope> pruned = build(false);  // the init run's graph
  ASSERT_TRUE(whole->ok() && pruned->ok());
  std::vector<Device*> devices = {cpu_.get(), gpu_.get()};

  ASSERT_TRUE(PlaceGraph(pruned->graph(), devices, kernels_, {}).ok());
  EXPECT_EQ(pruned->graph()->FindNode("var")->assigned_device(), Gpu(0));  // alone: the GPU

  std::unique_ptr<Scope> again = build(false);
  PlacerOptions opts;
  opts.whole_graph = whole->graph();
  absl::Status st = PlaceGraph(again->graph(), devices, kernels_, opts);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(again->graph()->FindNode("var")->assigned_device(), Cpu(0));
  EXPECT_EQ(again->graph()->FindNode("init")->assigned_device(), Cpu(0));
}

// Pinned members of the whole group pin the pruned group too.
TEST_F(KernelAvailabilityTest, PrunedColocationMembersRequestsCount) {
  auto build = [&](bool with_pinned) {
    auto s = std::make_unique<Scope>(Scope::NewRootScope(&ops_));
    Output src = s->WithOpName("src").Op("Source").Finalize1();
    Output var = Build(*s, "Anywhere", "var", src);
    if (with_pinned) Build(s->ColocateWith(var).WithDevice("/device:CPU:0"), "Anywhere", "pin", src);
    return s;
  };
  std::unique_ptr<Scope> whole = build(true);
  std::unique_ptr<Scope> pruned = build(false);
  PlacerOptions opts;
  opts.whole_graph = whole->graph();
  std::vector<Device*> devices = {cpu_.get(), gpu_.get()};
  ASSERT_TRUE(PlaceGraph(pruned->graph(), devices, kernels_, opts).ok());
  EXPECT_EQ(pruned->graph()->FindNode("var")->assigned_device(), Cpu(0));
}

}  // namespace
}  // namespace sluice
