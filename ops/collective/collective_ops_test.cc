#include "ops/collective/collective_ops.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "builtin_session.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "runtime/device.h"
#include "session/direct_session.h"
#include "runtime/executor.h"
#include "runtime/session.h"

namespace sluice {
namespace {

std::string Cpu(int k) { return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", k); }

// CPU:0 and the virtual CPU:1..CPU:3.
std::unique_ptr<Session> MakeSession(const Scope& s) {
  EXPECT_TRUE(s.ok()) << s.status();
  SessionConfig options = BuiltinSessionConfig();
  options.devices.num_virtual_cpus = 3;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(options, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

ops::CollectiveSpec Spec(int64_t group, int64_t instance, const std::vector<int>& cpus) {
  // A member that never comes fails the step in 10 s instead of 60.
  ops::CollectiveSpec spec{.group_key = group, .instance_key = instance, .timeout_seconds = 10};
  for (int k : cpus) spec.group_devices.push_back(Cpu(k));
  return spec;
}

// Integer-valued floats, so that sums are exact in any order.
Tensor RandomTensor(std::mt19937& rng, int64_t n) {
  std::uniform_int_distribution<int> dist(-1000, 1000);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(dist(rng));
  return Tensor::FromVector<float>(v);
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  absl::Span<const T> v = t.flat<T>();
  return std::vector<T>(v.begin(), v.end());
}

class AllReduceTest : public ::testing::TestWithParam<int> {};

// Sum and mean of the same inputs in one step (two instances), three steps in
// a row: the n-th execution of every member meets the n-th of the others.
TEST_P(AllReduceTest, SumAndMeanAreExactOverSteps) {
  const int n = GetParam();
  constexpr int64_t kSize = 1000;
  std::vector<int> cpus;
  for (int k = 0; k < n; ++k) cpus.push_back(k);
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> xs, sums, means;
  for (int k = 0; k < n; ++k) {
    Scope d = s.WithDevice(Cpu(k));
    xs.push_back(ops::Placeholder(d.WithOpName(absl::StrCat("x", k)), DT_FLOAT));
    sums.push_back(ops::AllReduce(d, xs.back(), ReduceOp::kSum, Spec(1, 1, cpus)));
    means.push_back(ops::AllReduce(d, xs.back(), ReduceOp::kMean, Spec(1, 2, cpus)));
  }
  EXPECT_EQ(sums[0].shape(), TensorShape::Unknown());
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_NE(sess, nullptr);
  std::mt19937 rng(42 + n);
  for (int step = 0; step < 3; ++step) {
    std::vector<std::pair<Output, Tensor>> feeds;
    std::vector<float> sum(kSize, 0.0f);
    for (int k = 0; k < n; ++k) {
      Tensor x = RandomTensor(rng, kSize);
      for (int64_t i = 0; i < kSize; ++i) sum[i] += x.flat<float>()[i];
      feeds.emplace_back(xs[k], x);
    }
    std::vector<Output> fetches = sums;
    fetches.insert(fetches.end(), means.begin(), means.end());
    absl::StatusOr<std::vector<Tensor>> out = sess->Run(feeds, fetches);
    ASSERT_TRUE(out.ok()) << out.status();
    for (int k = 0; k < n; ++k) {
      EXPECT_EQ(Values<float>((*out)[k]), sum) << "step " << step << " rank " << k;
      std::vector<float> mean = Values<float>((*out)[n + k]);
      ASSERT_EQ(mean.size(), sum.size());
      for (int64_t i = 0; i < kSize; ++i) {
        ASSERT_FLOAT_EQ(mean[i], sum[i] / n) << "step " << step << " rank " << k << " at " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GroupSizes, AllReduceTest, ::testing::Values(2, 3, 4));

TEST(CollectiveOpsTest, TwoGroupsInOneStepAndOtherTypes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> ints, doubles;
  for (int k = 0; k < 4; ++k) {
    Scope d = s.WithDevice(Cpu(k));
    ints.push_back(ops::AllReduce(d, ops::Const(d, std::vector<int64_t>{k, 10 * k}), ReduceOp::kSum,
                                  Spec(1, 7, {0, 1, 2, 3})));
  }
  for (int k : {1, 3}) {
    Scope d = s.WithDevice(Cpu(k));
    doubles.push_back(ops::AllReduce(d, ops::Const(d, std::vector<double>{1.0 * k, 0.5}),
                                     ReduceOp::kMean, Spec(2, 8, {3, 1})));
  }
  Output int32_sum0 = ops::AllReduce(s.WithDevice(Cpu(0)), ops::Const(s, std::vector<int32_t>{5}),
                                     ReduceOp::kSum, Spec(3, 9, {0, 2}));
  Output int32_sum2 = ops::AllReduce(s.WithDevice(Cpu(2)), ops::Const(s, std::vector<int32_t>{-7}),
                                     ReduceOp::kSum, Spec(3, 9, {0, 2}));
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_NE(sess, nullptr);
  absl::StatusOr<std::vector<Tensor>> out = sess->Run(
      {}, {ints[0], ints[1], ints[2], ints[3], doubles[0], doubles[1], int32_sum0, int32_sum2});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(Values<int64_t>((*out)[k]), (std::vector<int64_t>{6, 60})) << "CPU:" << k;
  }
  EXPECT_EQ(Values<double>((*out)[4]), (std::vector<double>{2.0, 0.5}));
  EXPECT_EQ(Values<double>((*out)[5]), (std::vector<double>{2.0, 0.5}));
  EXPECT_EQ(Values<int32_t>((*out)[6]), (std::vector<int32_t>{-2}));
  EXPECT_EQ(Values<int32_t>((*out)[7]), (std::vector<int32_t>{-2}));
}

TEST(CollectiveOpsTest, BroadcastFromCpu2) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::CollectiveSpec spec = Spec(1, 1, {0, 1, 2, 3});
  spec.source_rank = 2;
  const std::vector<float> value = {1, 2, 3, 4, 5, 6};
  std::vector<Output> outs;
  for (int k = 0; k < 4; ++k) {
    Scope d = s.WithDevice(Cpu(k));
    if (k == 2) {
      outs.push_back(ops::BroadcastSend(d, ops::Const(d, value, TensorShape({2, 3})), spec));
    } else {
      outs.push_back(ops::BroadcastRecv(d, DT_FLOAT, TensorShape({2, 3}), spec));
    }
  }
  EXPECT_EQ(outs[0].shape(), TensorShape({2, 3}));
  EXPECT_EQ(outs[0].dtype(), DT_FLOAT);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_NE(sess, nullptr);
  for (int step = 0; step < 2; ++step) {
    absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, outs);
    ASSERT_TRUE(out.ok()) << out.status();
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ((*out)[k].shape(), TensorShape({2, 3})) << "CPU:" << k;
      EXPECT_EQ(Values<float>((*out)[k]), value) << "CPU:" << k;
    }
  }
}

TEST(CollectiveOpsTest, AllGatherConcatenatesInRankOrder) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // Rank order CPU:2, CPU:0, CPU:1 (not device order).
  ops::CollectiveSpec spec = Spec(4, 1, {2, 0, 1});
  std::vector<Output> outs;
  for (int k = 0; k < 3; ++k) {
    Scope d = s.WithDevice(Cpu(k));
    std::vector<int64_t> v = {10 * k, 10 * k + 1, 10 * k + 2, 10 * k + 3};
    outs.push_back(ops::AllGather(d, ops::Const(d, v, TensorShape({2, 2})), spec));
  }
  EXPECT_EQ(outs[0].shape(), TensorShape({6, 2}));
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_NE(sess, nullptr);
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, outs);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<int64_t> expected = {20, 21, 22, 23, 0, 1, 2, 3, 10, 11, 12, 13};
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ((*out)[k].shape(), TensorShape({6, 2}));
    EXPECT_EQ(Values<int64_t>((*out)[k]), expected) << "CPU:" << k;
  }
}

TEST(CollectiveOpsTest, PartialDeviceNamesAreCompletedWithTheTask) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::CollectiveSpec spec{
      .group_key = 5, .instance_key = 1, .group_devices = {"/device:CPU:1", Cpu(3)}};
  Output a = ops::AllReduce(s.WithDevice(Cpu(1)), ops::Const(s, std::vector<float>{1, 2}),
                            ReduceOp::kSum, spec);
  Output b = ops::AllReduce(s.WithDevice(Cpu(3)), ops::Const(s, std::vector<float>{10, 20}),
                            ReduceOp::kSum, spec);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_NE(sess, nullptr);
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{11, 22}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{11, 22}));
}

// d(y0 + y1)/dx_j with y_k = AllReduce(sum)(x_k): the all-reduce of the
// upstream gradients, on every member.
TEST(CollectiveOpsTest, GradientIsTheAllReducedUpstreamGradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::CollectiveSpec spec = Spec(1, 3, {0, 1});
  std::vector<Output> xs, ys, gs;
  for (int k = 0; k < 2; ++k) {
    Scope d = s.WithDevice(Cpu(k));
    xs.push_back(ops::Placeholder(d.WithOpName(absl::StrCat("x", k)), DT_FLOAT));
    gs.push_back(ops::Placeholder(d.WithOpName(absl::StrCat("g", k)), DT_FLOAT));
    ys.push_back(ops::AllReduce(d, xs.back(), ReduceOp::kSum, spec));
  }
  absl::StatusOr<std::vector<Output>> dx = AddGradients(s, ys, xs, gs);
  ASSERT_TRUE(dx.ok()) << dx.status();
  ASSERT_EQ(dx->size(), 2u);
  for (const Output& d : *dx) {
    ASSERT_NE(d.node, nullptr);
    EXPECT_EQ(d.node->op(), "CollectiveReduce");
    EXPECT_EQ(*d.node->GetAttr<int64_t>("instance_key"), 3 + kGradientInstanceOffset);
  }
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_NE(sess, nullptr);
  absl::StatusOr<std::vector<Tensor>> out =
      sess->Run({{xs[0], Tensor::FromVector<float>({1, 2, 3})},
                 {xs[1], Tensor::FromVector<float>({4, 5, 6})},
                 {gs[0], Tensor::FromVector<float>({0.5f, 1, 2})},
                 {gs[1], Tensor::FromVector<float>({3, -1, 4})}},
                {ys[0], ys[1], (*dx)[0], (*dx)[1]});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(Values<float>((*out)[2]), (std::vector<float>{3.5f, 0, 6}));
  EXPECT_EQ(Values<float>((*out)[3]), (std::vector<float>{3.5f, 0, 6}));
}

TEST(CollectiveOpsTest, DeviceNotInGroupIsNamed) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::CollectiveSpec spec = Spec(1, 1, {0, 1});
  Output a = ops::AllReduce(s.WithDevice(Cpu(0)), ops::Const(s, std::vector<float>{1}),
                            ReduceOp::kSum, spec);
  Output b = ops::AllReduce(s.WithDevice(Cpu(3)).WithOpName("stray"),
                            ops::Const(s, std::vector<float>{2}), ReduceOp::kSum, spec);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_NE(sess, nullptr);
  absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {a, b});
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), Cpu(3))) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), Cpu(1))) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "stray")) << out.status();
}

TEST(CollectiveOpsTest, EmptyOrInconsistentGroupFailsAtBuildTime) {
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::AllReduce(s, ops::Const(s, std::vector<float>{1}), ReduceOp::kSum,
                   {.group_key = 1, .instance_key = 1});
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
    EXPECT_TRUE(absl::StrContains(s.status().message(), "group_devices")) << s.status();
  }
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    s.Op("CollectiveReduce")
        .Input(ops::Const(s, std::vector<float>{1}))
        .Attr("group_size", int64_t{3})
        .Attr("group_key", int64_t{1})
        .Attr("instance_key", int64_t{1})
        .Attr("group_devices", std::vector<std::string>{Cpu(0), Cpu(1)})
        .Finalize();
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
    EXPECT_TRUE(absl::StrContains(s.status().message(), "group_size")) << s.status();
  }
}

// Only one of two members is in the fetched subgraph: it fails within its
// timeout, naming the member that never came.
TEST(CollectiveOpsTest, MissingMemberFailsWithinTheTimeout) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::CollectiveSpec spec = Spec(1, 1, {0, 1});
  spec.timeout_seconds = 0.5f;
  Output a = ops::AllReduce(s.WithDevice(Cpu(0)), ops::Const(s, std::vector<float>{1}),
                            ReduceOp::kSum, spec);
  // The other member exists in the graph but is not fetched.
  Output b = ops::AllReduce(s.WithDevice(Cpu(1)), ops::Const(s, std::vector<float>{2}),
                            ReduceOp::kSum, spec);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_NE(sess, nullptr);
  absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {a});
  absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), Cpu(1))) << out.status();
  EXPECT_GE(took, absl::Milliseconds(450));
  EXPECT_LT(took, absl::Seconds(5));
  // The failed step reset the group: both members meet at the next one.
  out = sess->Run({}, {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{3}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{3}));
}

// A member whose partition fails before reaching the collective: the member
// waiting for it stops at once (not after its timeout), the step reports the
// cause, and the next step runs.
TEST(CollectiveOpsTest, FailedPartitionStopsItsPeersAndTheNextStepRuns) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::CollectiveSpec spec = Spec(1, 1, {0, 1});
  Output x0 = ops::Placeholder(s.WithDevice(Cpu(0)).WithOpName("x0"), DT_FLOAT);
  Output x1 = ops::Placeholder(s.WithDevice(Cpu(1)).WithOpName("x1"), DT_FLOAT);
  Output a = ops::AllReduce(s.WithDevice(Cpu(0)), x0, ReduceOp::kSum, spec);
  Output r = ops::Reshape(s.WithDevice(Cpu(1)).WithOpName("bad_reshape"), x1, {2});
  Output b = ops::AllReduce(s.WithDevice(Cpu(1)), r, ReduceOp::kSum, spec);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_NE(sess, nullptr);
  absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Tensor>> out = sess->Run(
      {{x0, Tensor::FromVector<float>({1, 2})}, {x1, Tensor::FromVector<float>({1, 2, 3})}},
      {a, b});
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "bad_reshape")) << out.status();
  for (int step = 0; step < 2; ++step) {
    out = sess->Run(
        {{x0, Tensor::FromVector<float>({1, 2})}, {x1, Tensor::FromVector<float>({10, 20})}},
        {a, b});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{11, 22}));
    EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{11, 22}));
  }
}

TEST(CollectiveOpsTest, WithoutACollectiveExecutorFailsWithFailedPrecondition) {
  auto graph = std::make_unique<Graph>(BuiltinOps());
  Scope s = Scope::NewRootScope(graph.get());
  ops::AllReduce(s.WithOpName("sum"), ops::Const(s, std::vector<float>{1}), ReduceOp::kSum,
                 Spec(1, 1, {0}));
  ASSERT_TRUE(s.ok()) << s.status();
  std::unique_ptr<Device> cpu = NewCpuDevice({.name = Cpu(0), .num_threads = 1});
  absl::StatusOr<std::unique_ptr<Executor>> ex =
      Executor::Create(std::move(graph), cpu.get(), *BuiltinKernels());
  ASSERT_TRUE(ex.ok()) << ex.status();
  absl::Status st = (*ex)->Run({.step_id = 1});
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "no collective executor")) << st;
}

}  // namespace
}  // namespace sluice
