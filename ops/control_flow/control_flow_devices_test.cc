// Control flow split over devices: conds and while loops whose branches,
// bodies or conditions run on another device than their Switch, Merge and
// LoopCond. The partitioner gives each device a control loop driven by the
// LoopCond it receives (placement/partition.h); dead tensors and loop
// iterations cross through the rendezvous (runtime/rendezvous.h). Every
// result must equal the same graph on one device, which TensorFlow 1.x
// computes as tf.cond / tf.while_loop do.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "builtin_session.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/math/math_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

// CPU:0 and the virtual CPU:1.
std::unique_ptr<Session> TwoDeviceSession(const Scope& s) {
  EXPECT_TRUE(s.ok()) << s.status();
  SessionConfig options = BuiltinSessionConfig();
  options.devices.num_virtual_cpus = 1;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(options, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

Tensor Scalar(float v) { return Tensor::Scalar<float>(v); }

std::vector<float> RunFetches(Session* sess, const std::vector<std::pair<std::string, Tensor>>& feeds,
                              const std::vector<Output>& fetches, const RunOptions& options = {},
                              RunMetadata* metadata = nullptr) {
  std::vector<std::string> names;
  for (const Output& o : fetches) names.push_back(o.name());
  absl::StatusOr<std::vector<Tensor>> out = sess->Run(feeds, names, {}, options, metadata);
  EXPECT_TRUE(out.ok()) << out.status();
  std::vector<float> values;
  if (!out.ok()) return values;
  for (const Tensor& t : *out) {
    values.push_back(t.dtype() == DT_INT32 ? static_cast<float>(t.scalar<int32_t>())
                                           : t.scalar<float>());
  }
  return values;
}

// Which devices ran a node whose name contains `part`.
bool PartitionHas(const RunMetadata& metadata, const std::string& device, const std::string& part) {
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      if (n.device() == device && absl::StrContains(n.name(), part)) return true;
    }
  }
  return false;
}

// tf.cond(x > 0, lambda: x * 3, lambda: x - 1) with both branches on CPU:1:
// the branch not taken gets a dead tensor from CPU:0's Switch, and its dead
// result goes back to CPU:0's Merge.
TEST(ControlFlowDevicesTest, CondBranchesOnAnotherDevice) {
  Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kCpu0);
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  absl::StatusOr<std::vector<Output>> y = ops::Cond(
      s, ops::Greater(s, x, 0.0f),
      [&](const Scope& b) { return std::vector<Output>{ops::Mul(b.WithDevice(kCpu1), x, 3.0f)}; },
      [&](const Scope& b) { return std::vector<Output>{ops::Sub(b.WithDevice(kCpu1), x, 1.0f)}; });
  ASSERT_TRUE(y.ok()) << y.status();
  std::unique_ptr<Session> sess = TwoDeviceSession(s);
  for (int run = 0; run < 2; ++run) {
    EXPECT_EQ(RunFetches(sess.get(), {{"x", Scalar(2)}}, {(*y)[0]}), std::vector<float>{6});
    EXPECT_EQ(RunFetches(sess.get(), {{"x", Scalar(-2)}}, {(*y)[0]}), std::vector<float>{-3});
  }
  RunMetadata metadata;
  RunFetches(sess.get(), {{"x", Scalar(1)}}, {(*y)[0]}, {.output_partition_graphs = true}, &metadata);
  EXPECT_TRUE(PartitionHas(metadata, kCpu1, "cond/Mul")) << "the branch should run on CPU:1";
}

// i = 0; acc = 1; while (i < n) { acc = acc * 2 + i; ++i } with the body's
// arithmetic on CPU:1 and the loop's Enter/Merge/Switch/LoopCond on CPU:0.
absl::StatusOr<std::vector<Output>> BodyElsewhere(const Scope& s, const Output& n,
                                                  int64_t parallel) {
  return ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 1.0f)},
      [&](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], n); },
      [](const Scope& b, absl::Span<const Output> v) {
        Scope d = b.WithDevice(kCpu1);
        Output acc = ops::Add(d, ops::Mul(d, v[1], 2.0f), ops::Cast(d, v[0], DT_FLOAT));
        return std::vector<Output>{ops::Add(b, v[0], 1), acc};
      },
      {.parallel_iterations = parallel});
}

float BodyElsewhereWant(int n) {
  float acc = 1;
  for (int i = 0; i < n; ++i) acc = acc * 2 + static_cast<float>(i);
  return acc;
}

TEST(ControlFlowDevicesTest, LoopBodyOnAnotherDevice) {
  for (int64_t parallel : {1, 10}) {
    Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kCpu0);
    Output n = ops::Placeholder(s.WithOpName("n"), DT_INT32);
    absl::StatusOr<std::vector<Output>> out = BodyElsewhere(s, n, parallel);
    ASSERT_TRUE(out.ok()) << out.status();
    std::unique_ptr<Session> sess = TwoDeviceSession(s);
    for (int iterations : {0, 1, 7, 20}) {
      EXPECT_EQ(RunFetches(sess.get(), {{"n", Tensor::Scalar<int32_t>(iterations)}}, *out),
                (std::vector<float>{static_cast<float>(iterations), BodyElsewhereWant(iterations)}))
          << "n " << iterations << ", parallel_iterations " << parallel;
    }
    RunMetadata metadata;
    RunFetches(sess.get(), {{"n", Tensor::Scalar<int32_t>(3)}}, *out, {.output_partition_graphs = true},
        &metadata);
    // Each device that receives a tensor inside the loop gets a control loop:
    // CPU:1 the body's inputs, CPU:0 the body's result.
    EXPECT_TRUE(PartitionHas(metadata, kCpu1, "_cloop_")) << "CPU:1 should get a control loop";
  }
}

// The loop condition computed on CPU:1 (Less there, LoopCond on CPU:0), and
// a long loop, so that iterations overlap across the two devices.
TEST(ControlFlowDevicesTest, LoopConditionOnAnotherDevice) {
  Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kCpu0);
  absl::StatusOr<std::vector<Output>> out = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 0.0f)},
      [](const Scope& c, absl::Span<const Output> v) {
        return ops::Less(c.WithDevice(kCpu1), v[0], 1000);
      },
      [](const Scope& b, absl::Span<const Output> v) {
        return std::vector<Output>{ops::Add(b, v[0], 1),
                                   ops::Add(b, v[1], ops::Cast(b, v[0], DT_FLOAT))};
      });
  ASSERT_TRUE(out.ok()) << out.status();
  std::unique_ptr<Session> sess = TwoDeviceSession(s);
  for (int run = 0; run < 3; ++run) {
    EXPECT_EQ(RunFetches(sess.get(), {}, *out), (std::vector<float>{1000, 499500}));
  }
}

// A whole inner loop on CPU:1 inside an outer loop on CPU:0: CPU:1 gets a
// control loop for the outer frame, and the inner loop runs in it once per
// outer iteration. total = sum over i < 4 of sum over j < i + 1 of (i + j).
TEST(ControlFlowDevicesTest, InnerLoopOnAnotherDevice) {
  Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kCpu0);
  absl::StatusOr<std::vector<Output>> out = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 0.0f)},
      [](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], 4); },
      [](const Scope& b, absl::Span<const Output> outer) {
        Scope d = b.WithDevice(kCpu1);
        Output limit = ops::Add(d, outer[0], 1);
        Output fi = ops::Cast(d, outer[0], DT_FLOAT);
        absl::StatusOr<std::vector<Output>> inner = ops::WhileLoop(
            d, {ops::Const(d, 0), outer[1]},
            [&](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], limit); },
            [&](const Scope& ib, absl::Span<const Output> v) {
              return std::vector<Output>{
                  ops::Add(ib, v[0], 1),
                  ops::Add(ib, v[1], ops::Add(ib, fi, ops::Cast(ib, v[0], DT_FLOAT)))};
            },
            {.name = "inner"});
        EXPECT_TRUE(inner.ok()) << inner.status();
        return std::vector<Output>{ops::Add(b, outer[0], 1), (*inner)[1]};
      });
  ASSERT_TRUE(out.ok()) << out.status();
  float want = 0;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < i + 1; ++j) want += static_cast<float>(i + j);
  }
  std::unique_ptr<Session> sess = TwoDeviceSession(s);
  for (int run = 0; run < 2; ++run) {
    // A bound, so that a hang fails the test instead of timing it out.
    EXPECT_EQ(RunFetches(sess.get(), {}, *out, {.timeout_in_ms = 20000}),
              (std::vector<float>{4, want}));
  }
}

// Gradients through a loop whose body runs on CPU:1: y = x^8 by squaring
// three times; dy/dx = 8 x^7 as on one device.
TEST(ControlFlowDevicesTest, GradientOfALoopWithItsBodyElsewhere) {
  Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kCpu0);
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  absl::StatusOr<std::vector<Output>> out = ops::WhileLoop(
      s, {ops::Const(s, 0), x},
      [](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], 3); },
      [](const Scope& b, absl::Span<const Output> v) {
        return std::vector<Output>{ops::Add(b, v[0], 1),
                                   ops::Mul(b.WithDevice(kCpu1), v[1], v[1])};
      });
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<std::vector<Output>> g = AddGradients(s, {(*out)[1]}, {x});
  ASSERT_TRUE(g.ok()) << g.status();
  std::unique_ptr<Session> sess = TwoDeviceSession(s);
  const float xv = 1.1f;
  std::vector<float> got = RunFetches(sess.get(), {{"x", Scalar(xv)}}, {(*out)[1], (*g)[0]});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NEAR(got[0], std::pow(xv, 8.0f), 1e-5);
  EXPECT_NEAR(got[1], 8 * std::pow(xv, 7.0f), 1e-4);
}

// A loop that never ends, split over two devices, is stopped by the run's
// timeout on both.
TEST(ControlFlowDevicesTest, ASplitLoopThatNeverEndsIsStoppedByTheTimeout) {
  Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kCpu0);
  absl::StatusOr<std::vector<Output>> out = ops::WhileLoop(
      s, {ops::Const(s, 0)},
      [](const Scope& c, absl::Span<const Output> v) { return ops::GreaterEqual(c, v[0], 0); },
      [](const Scope& b, absl::Span<const Output> v) {
        return std::vector<Output>{ops::Maximum(b.WithDevice(kCpu1), ops::Add(b, v[0], 1), 1)};
      });
  ASSERT_TRUE(out.ok()) << out.status();
  std::unique_ptr<Session> sess = TwoDeviceSession(s);
  absl::StatusOr<std::vector<Tensor>> r =
      sess->Run({}, {(*out)[0].name()}, {}, RunOptions{.timeout_in_ms = 300});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
}

}  // namespace
}  // namespace sluice
