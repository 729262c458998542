#include "training/replica_device_setter.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/data_flow/data_flow_ops.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"
#include "ops/training/training_ops.h"

namespace sluice {
namespace {

// Four variables of 4000, 40, 2000 and 80 bytes, each with its initializer,
// a read, and an update; plus worker-side compute.
struct Model {
  Model() : s(Scope::NewRootScope(BuiltinOps())) {
    w1 = ops::VariableWithInit(s.WithOpName("w1"), Input(Filled(DT_FLOAT, 1000)));
    w2 = ops::VariableWithInit(s.WithOpName("w2"), Input(Filled(DT_FLOAT, 10)));
    w3 = ops::VariableWithInit(s.WithOpName("w3"), Input(Filled(DT_FLOAT, 500)));
    w4 = ops::VariableWithInit(s.WithOpName("w4"), Input(Filled(DT_DOUBLE, 10)));
    read1 = ops::Identity(s.WithOpName("w1/read"), w1.var);
    x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    y = ops::Mul(s.WithOpName("y"), x, read1);
    update1 = ops::ApplyGradientDescent(s.WithOpName("update_w1"), w1.var, 0.1f, y);
    accum2 = ops::AccumulatorApplyGradient(
        s.ColocateWith(w2.var).WithOpName("accumulate_w2"),
        {.dtype = DT_FLOAT, .shape = {10}, .shared_name = "w2/grad_accum"}, int64_t{0},
        ops::Placeholder(s.WithOpName("g2"), DT_FLOAT));
  }

  static ::tensorflow::TensorProto Filled(DataType dtype, int64_t n) {
    ::tensorflow::TensorProto p;
    p.set_dtype(dtype);
    p.mutable_tensor_shape()->add_dim()->set_size(n);
    if (dtype == DT_FLOAT) p.add_float_val(0.5f);
    if (dtype == DT_DOUBLE) p.add_double_val(0.5);
    return p;
  }
  std::string Device(absl::string_view name) const {
    Node* n = s.graph()->FindNode(name);
    EXPECT_NE(n, nullptr) << name;
    return n == nullptr ? "" : n->requested_device();
  }

  Scope s;
  ops::VariableAndInit w1, w2, w3, w4;
  Output read1, x, y, update1;
  Node* accum2 = nullptr;
};

TEST(ReplicaDeviceSetterTest, RoundRobinInGraphOrder) {
  Model m;
  ASSERT_TRUE(m.s.ok()) << m.s.status();
  ReplicaDeviceSetterOptions opts;
  opts.num_ps_tasks = 2;
  absl::StatusOr<std::map<std::string, std::string>> where =
      ApplyReplicaDeviceSetter(m.s.graph(), opts);
  ASSERT_TRUE(where.ok()) << where.status();
  EXPECT_EQ(*where, (std::map<std::string, std::string>{{"w1", "/job:ps/task:0"},
                                                        {"w2", "/job:ps/task:1"},
                                                        {"w3", "/job:ps/task:0"},
                                                        {"w4", "/job:ps/task:1"}}));
  // Everything colocated with a variable follows it.
  EXPECT_EQ(m.Device("w1/Assign"), "/job:ps/task:0");
  EXPECT_EQ(m.Device("w1/initial_value"), "/job:ps/task:0");
  EXPECT_EQ(m.Device("w1/read"), "/job:ps/task:0");
  EXPECT_EQ(m.Device("update_w1"), "/job:ps/task:0");  // a variable and its Apply
  EXPECT_EQ(m.Device("accumulate_w2"), "/job:ps/task:1");
  EXPECT_EQ(m.Device("w4/Assign"), "/job:ps/task:1");
  // The rest runs on the worker.
  EXPECT_EQ(m.Device("x"), "/job:worker/task:0");
  EXPECT_EQ(m.Device("y"), "/job:worker/task:0");
  EXPECT_EQ(m.Device("g2"), "/job:worker/task:0");
}

TEST(ReplicaDeviceSetterTest, GreedyByBytes) {
  Model m;
  ReplicaDeviceSetterOptions opts;
  opts.num_ps_tasks = 2;
  opts.strategy = ReplicaDeviceSetterOptions::Strategy::kGreedyByBytes;
  absl::StatusOr<std::map<std::string, std::string>> where =
      ApplyReplicaDeviceSetter(m.s.graph(), opts);
  ASSERT_TRUE(where.ok()) << where.status();
  // w1 (4000 B) -> 0; w2 (40) -> 1; w3 (2000) -> 1 (40 < 4000); w4 (80) -> 1 (2040 < 4000).
  EXPECT_EQ(*where, (std::map<std::string, std::string>{{"w1", "/job:ps/task:0"},
                                                        {"w2", "/job:ps/task:1"},
                                                        {"w3", "/job:ps/task:1"},
                                                        {"w4", "/job:ps/task:1"}}));
  EXPECT_EQ(m.Device("update_w1"), "/job:ps/task:0");
  EXPECT_EQ(m.Device("w3/Assign"), "/job:ps/task:1");
}

TEST(ReplicaDeviceSetterTest, GreedyCountsUnknownShapesAsZeroAndExplicitTasks) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // Pinned to ps task 1 by the user: 4000 bytes there.
  ops::Variable(s.WithOpName("pinned").WithDevice("/job:ps/task:1"), TensorShape({1000}), DT_FLOAT);
  ops::Variable(s.WithOpName("unknown"), TensorShape({-1, 4}), DT_FLOAT);  // 0 bytes
  ops::Variable(s.WithOpName("a"), TensorShape({100}), DT_FLOAT);          // 400
  ops::Variable(s.WithOpName("b"), TensorShape({100}), DT_FLOAT);
  ReplicaDeviceSetterOptions opts;
  opts.num_ps_tasks = 2;
  opts.strategy = ReplicaDeviceSetterOptions::Strategy::kGreedyByBytes;
  absl::StatusOr<std::map<std::string, std::string>> where =
      ApplyReplicaDeviceSetter(s.graph(), opts);
  ASSERT_TRUE(where.ok()) << where.status();
  EXPECT_EQ(*where, (std::map<std::string, std::string>{{"pinned", "/job:ps/task:1"},
                                                        {"unknown", "/job:ps/task:0"},
                                                        {"a", "/job:ps/task:0"},
                                                        {"b", "/job:ps/task:0"}}));
}

TEST(ReplicaDeviceSetterTest, ExplicitRequestsAreKeptAndPartialOnesMerged) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Variable(s.WithOpName("v").WithDevice("/device:CPU:0"), TensorShape({2}), DT_FLOAT);
  ops::Variable(s.WithOpName("on_worker").WithDevice("/job:worker/task:5"), TensorShape({2}),
                DT_FLOAT);
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice("/job:worker/task:7"), DT_FLOAT);
  ops::Neg(s.WithOpName("gpu").WithDevice("/device:GPU:1"), x);
  ops::Neg(s.WithOpName("cpu").WithDevice("/device:CPU:*"), x);
  ops::Neg(s.WithOpName("plain"), x);
  ASSERT_TRUE(s.ok()) << s.status();
  ReplicaDeviceSetterOptions opts;
  opts.num_ps_tasks = 3;
  opts.worker_device = "/job:worker/task:2/device:CPU:0";
  absl::StatusOr<std::map<std::string, std::string>> where =
      ApplyReplicaDeviceSetter(s.graph(), opts);
  ASSERT_TRUE(where.ok()) << where.status();
  EXPECT_EQ((*where)["v"], "/job:ps/task:0/device:CPU:0");
  EXPECT_EQ((*where)["on_worker"], "/job:worker/task:5");
  auto device = [&](const char* name) { return s.graph()->FindNode(name)->requested_device(); };
  EXPECT_EQ(device("x"), "/job:worker/task:7");
  EXPECT_EQ(device("gpu"), "/job:worker/task:2/device:GPU:1");
  EXPECT_EQ(device("cpu"), "/job:worker/task:2/device:CPU:0");
  EXPECT_EQ(device("plain"), "/job:worker/task:2/device:CPU:0");
}

TEST(ReplicaDeviceSetterTest, NoPsTasksPutsEverythingOnTheWorker) {
  Model m;
  ReplicaDeviceSetterOptions opts;
  opts.worker_device = "/job:worker/task:1";
  absl::StatusOr<std::map<std::string, std::string>> where =
      ApplyReplicaDeviceSetter(m.s.graph(), opts);
  ASSERT_TRUE(where.ok()) << where.status();
  EXPECT_EQ(where->size(), 4u);
  for (const auto& [var, device] : *where) EXPECT_EQ(device, "/job:worker/task:1") << var;
  for (Node* n : m.s.graph()->nodes()) {
    EXPECT_EQ(n->requested_device(), "/job:worker/task:1") << n->name();
  }
}

TEST(ReplicaDeviceSetterTest, Errors) {
  Model m;
  ReplicaDeviceSetterOptions opts;
  opts.num_ps_tasks = -1;
  EXPECT_EQ(ApplyReplicaDeviceSetter(m.s.graph(), opts).status().code(),
            absl::StatusCode::kInvalidArgument);
  opts.num_ps_tasks = 1;
  opts.worker_device = "/job:worker/tusk:1";
  EXPECT_EQ(ApplyReplicaDeviceSetter(m.s.graph(), opts).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Colocated nodes asking for different devices.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v =
      ops::Variable(s.WithOpName("v").WithDevice("/job:ps/task:0"), TensorShape({2}), DT_FLOAT);
  ops::Identity(s.WithOpName("read"), v);
  s.graph()->FindNode("read")->set_requested_device("/job:ps/task:1");
  absl::Status st = ApplyReplicaDeviceSetter(s.graph(), ReplicaDeviceSetterOptions{}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'read'"), std::string::npos) << st;
}

}  // namespace
}  // namespace sluice
