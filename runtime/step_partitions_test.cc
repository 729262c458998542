#include "runtime/step_partitions.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "graph/scope.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "runtime/frame_ops.h"
#include "runtime/rendezvous.h"
#include "runtime/sendrecv_ops.h"

namespace sluice {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

class IncOp : public OpKernel {  // y = x + 1
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, ctx->input(0).shape()));
    out->data<float>()[0] = ctx->input(0).data<float>()[0] + 1;
    return absl::OkStatus();
  }
};

class FailOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext*) override {
    return absl::InvalidArgumentError("deliberate failure");
  }
};

class StepPartitionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterFrameOps(&ops_).ok());
    ASSERT_TRUE(RegisterSendRecvOps(&ops_).ok());
    RegisterFrameKernels(&kernels_);
    RegisterSendRecvKernels(&kernels_);
    for (const char* op : {"Inc", "Fail"}) {
      ASSERT_TRUE(ops_.Register(OpDefBuilder(op).Input("x: float").Output("y: float")).ok());
    }
    ASSERT_TRUE(ops_.Register(OpDefBuilder("Grouped")
                                  .Input("x: float")
                                  .Output("y: float")
                                  .Attr("group_key: int")
                                  .Attr("instance_key: int"))
                    .ok());
    kernels_.Register<IncOp>(KernelDef("Inc", kDeviceTypeCpu));
    kernels_.Register<FailOp>(KernelDef("Fail", kDeviceTypeCpu));
    kernels_.Register<IncOp>(KernelDef("Grouped", kDeviceTypeCpu));
    cpu0_ = NewCpuDevice({.name = kCpu0, .num_threads = 2});
    cpu1_ = NewCpuDevice({.name = kCpu1, .num_threads = 2});
  }

  Output Arg(const Scope& s, int index) {
    return s.Op(kArgOp).Attr("T", DT_FLOAT).Attr("index", int64_t{index}).Finalize1();
  }
  void Retval(const Scope& s, Output o, int index) {
    s.Op(kRetvalOp).Input(o).Attr("index", int64_t{index}).Finalize();
  }
  // A partition of `device` built by `body`, as a GraphDef.
  template <typename Body>
  PartitionGraph Partition(Device* device, Body body) {
    Graph g(&ops_);
    Scope s = Scope::NewRootScope(&g);
    body(s);
    EXPECT_TRUE(s.ok()) << s.status();
    PartitionGraph p;
    p.device = device;
    g.ToGraphDef(&p.def);
    return p;
  }
  OpBuilder Transfer(const Scope& s, const char* op) {
    return s.Op(op)
        .Attr("T", DT_FLOAT)
        .Attr("tensor_name", std::string("edge_1"))
        .Attr("send_device", std::string(kCpu0))
        .Attr("send_device_incarnation", int64_t{1})
        .Attr("recv_device", std::string(kCpu1));
  }

  OpRegistry ops_;
  KernelRegistry kernels_;
  std::unique_ptr<Device> cpu0_, cpu1_;
};

TEST_F(StepPartitionsTest, TwoPartitionsExchangeATensorThroughTheStepsRendezvous) {
  std::vector<PartitionGraph> graphs;
  graphs.push_back(Partition(cpu0_.get(), [&](const Scope& s) {
    Transfer(s, kSendOp).Input(s.Op("Inc").Input(Arg(s, 0)).Finalize1()).Finalize();
  }));
  graphs.push_back(Partition(cpu1_.get(), [&](const Scope& s) {
    Retval(s, s.Op("Inc").Input(Transfer(s, kRecvOp).Finalize1()).Finalize1(), 0);
  }));
  absl::StatusOr<std::unique_ptr<StepPartitions>> parts =
      StepPartitions::Build(std::move(graphs), &ops_, kernels_);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ((*parts)->parts().size(), 2u);
  EXPECT_EQ((*parts)->parts()[1].device, cpu1_.get());
  EXPECT_FALSE((*parts)->parts()[1].def.node().empty());  // kept for RunMetadata
  for (int step = 1; step <= 3; ++step) {  // a rendezvous of its own per step
    CallFrame frame;
    frame.args = {Tensor::Scalar<float>(step * 10.0f)};
    frame.retvals.resize(1);
    absl::Status s = (*parts)->Run({.step_id = step, .call_frame = &frame});
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(frame.retvals[0].scalar<float>(), step * 10.0f + 2);
  }
}

// The first failure aborts the rendezvous: the partition waiting for a
// tensor that will not come stops, and the step's error is the failure,
// not the waiter's cancellation.
TEST_F(StepPartitionsTest, TheFirstFailureStopsTheOthersAndIsTheStepsError) {
  std::vector<PartitionGraph> graphs;
  graphs.push_back(Partition(cpu0_.get(), [&](const Scope& s) {
    Transfer(s, kSendOp).Input(s.Op("Fail").Input(Arg(s, 0)).Finalize1()).Finalize();
  }));
  graphs.push_back(Partition(cpu1_.get(), [&](const Scope& s) {
    Retval(s, Transfer(s, kRecvOp).Finalize1(), 0);
  }));
  absl::StatusOr<std::unique_ptr<StepPartitions>> parts =
      StepPartitions::Build(std::move(graphs), &ops_, kernels_);
  ASSERT_TRUE(parts.ok()) << parts.status();
  CallFrame frame;
  frame.args = {Tensor::Scalar<float>(1)};
  frame.retvals.resize(1);
  absl::Status s = (*parts)->Run({.step_id = 1, .call_frame = &frame});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("deliberate failure"), std::string::npos) << s;
}

// An abort from outside (the master's AbortStep, a deadline) is the root
// cause the step reports.
TEST_F(StepPartitionsTest, AnAbortFromOutsideIsTheStepsError) {
  std::vector<PartitionGraph> graphs;
  graphs.push_back(Partition(cpu1_.get(), [&](const Scope& s) {
    Retval(s, Transfer(s, kRecvOp).Finalize1(), 0);
  }));
  absl::StatusOr<std::unique_ptr<StepPartitions>> parts =
      StepPartitions::Build(std::move(graphs), &ops_, kernels_);
  ASSERT_TRUE(parts.ok()) << parts.status();
  LocalRendezvous rendezvous;
  CallFrame frame;
  frame.retvals.resize(1);
  absl::Notification finished;
  absl::Status result;
  (*parts)->RunAsync({.step_id = 1, .call_frame = &frame, .rendezvous = &rendezvous},
                     [&](absl::Status s) {
                       result = s;
                       finished.Notify();
                     });
  EXPECT_FALSE(finished.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  rendezvous.StartAbort(absl::DeadlineExceededError("step 1 did not finish within 50 ms"));
  ASSERT_TRUE(finished.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(result.code(), absl::StatusCode::kDeadlineExceeded) << result;
}

TEST_F(StepPartitionsTest, BuildErrorsNameThePartitionAndCollectiveGroupsAreCollected) {
  std::vector<PartitionGraph> graphs;
  graphs.push_back(Partition(cpu0_.get(), [&](const Scope& s) {
    Output x = Arg(s, 0);
    Output a = s.Op("Grouped").Input(x).Attr("group_key", int64_t{7}).Attr("instance_key", int64_t{1}).Finalize1();
    Output b = s.Op("Grouped").Input(a).Attr("group_key", int64_t{3}).Attr("instance_key", int64_t{2}).Finalize1();
    Output c = s.Op("Grouped").Input(b).Attr("group_key", int64_t{7}).Attr("instance_key", int64_t{3}).Finalize1();
    Retval(s, c, 0);
  }));
  absl::StatusOr<std::unique_ptr<StepPartitions>> parts =
      StepPartitions::Build(std::move(graphs), &ops_, kernels_);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ((*parts)->collective_groups(), (std::vector<int64_t>{3, 7}));

  std::vector<PartitionGraph> bad;
  bad.push_back(Partition(cpu1_.get(), [&](const Scope& s) { Retval(s, Arg(s, 0), 0); }));
  bad.back().def.mutable_node(0)->set_op("NoSuchOp");
  absl::StatusOr<std::unique_ptr<StepPartitions>> refused =
      StepPartitions::Build(std::move(bad), &ops_, kernels_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(std::string("partition for ") + kCpu1),
            std::string::npos)
      << refused.status();
}

}  // namespace
}  // namespace sluice
