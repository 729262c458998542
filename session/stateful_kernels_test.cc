// runtime/stateful_kernels.h through the local session: its stateful nodes
// keep one kernel across its run signatures (a seeded draw continues its
// sequence whatever the step fetches), other sessions start afresh; and
// the cache itself: stateless nodes are not shared, a changed node gets a
// new kernel.
#include "runtime/stateful_kernels.h"

#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/random/random_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}

TEST(StatefulKernelsTest, ASeededDrawContinuesAcrossSignatures) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output draw = ops::RandomUniform(s.WithOpName("draw"), {3}, DT_FLOAT, {.seed = 7, .seed2 = 9});
  ops::Mul(s.WithOpName("twice"), draw, ops::Const(s, 2.0f));
  ASSERT_TRUE(s.ok()) << s.status();
  // One session fetching the draw three times in a row.
  absl::StatusOr<std::unique_ptr<Session>> a = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(a.ok()) << a.status();
  std::vector<std::vector<float>> seq;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::vector<Tensor>> r = (*a)->Run({}, {"draw:0"}, {});
    ASSERT_TRUE(r.ok()) << r.status();
    seq.push_back(Values((*r)[0]));
  }
  EXPECT_NE(seq[0], seq[1]);
  // Another session alternating signatures: draw, draw and twice, twice.
  absl::StatusOr<std::unique_ptr<Session>> b = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(b.ok()) << b.status();
  absl::StatusOr<std::vector<Tensor>> r1 = (*b)->Run({}, {"draw:0"}, {});
  absl::StatusOr<std::vector<Tensor>> r2 = (*b)->Run({}, std::vector<std::string>{"draw:0", "twice:0"}, {});
  absl::StatusOr<std::vector<Tensor>> r3 = (*b)->Run({}, {"twice:0"}, {});
  ASSERT_TRUE(r1.ok() && r2.ok() && r3.ok());
  EXPECT_EQ(Values((*r1)[0]), seq[0]);  // a new session starts from the seed
  EXPECT_EQ(Values((*r2)[0]), seq[1]);  // the second signature continues
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Values((*r3)[0])[i], 2 * seq[2][i]);
}

TEST(StatefulKernelsTest, SharesOnlyMatchingStatefulNodes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output draw = ops::RandomUniform(s.WithOpName("draw"), {2}, DT_FLOAT, {.seed = 1, .seed2 = 2});
  Output sum = ops::Add(s.WithOpName("sum"), draw, draw);
  ASSERT_TRUE(s.ok()) << s.status();
  const Node* draw_node = draw.node;
  const Node* sum_node = sum.node;
  EXPECT_TRUE(StatefulKernels::Shares(*draw_node));
  EXPECT_FALSE(StatefulKernels::Shares(*sum_node));

  std::unique_ptr<Device> cpu = NewCpuDevice({.num_threads = 1});
  StatefulKernels shared;
  int made = 0;
  auto make = [&]() -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    ++made;
    return BuiltinKernels()->CreateKernel(*draw_node, cpu.get(), nullptr);
  };
  absl::StatusOr<std::shared_ptr<OpKernel>> k1 = shared.GetOrCreate(*draw_node, *cpu, make);
  absl::StatusOr<std::shared_ptr<OpKernel>> k2 = shared.GetOrCreate(*draw_node, *cpu, make);
  ASSERT_TRUE(k1.ok() && k2.ok());
  EXPECT_EQ(k1->get(), k2->get());
  EXPECT_EQ(made, 1);
  // The same name with another seed: a new kernel, which replaces the old.
  Scope s2 = Scope::NewRootScope(BuiltinOps());
  Output other = ops::RandomUniform(s2.WithOpName("draw"), {2}, DT_FLOAT, {.seed = 1, .seed2 = 3});
  absl::StatusOr<std::shared_ptr<OpKernel>> k3 = shared.GetOrCreate(*other.node, *cpu, make);
  ASSERT_TRUE(k3.ok());
  EXPECT_NE(k3->get(), k1->get());
  EXPECT_EQ(made, 2);
  EXPECT_EQ(shared.size(), 1);
  // Stateless nodes are made every time and not kept.
  absl::StatusOr<std::shared_ptr<OpKernel>> k4 = shared.GetOrCreate(*sum_node, *cpu, make);
  absl::StatusOr<std::shared_ptr<OpKernel>> k5 = shared.GetOrCreate(*sum_node, *cpu, make);
  ASSERT_TRUE(k4.ok() && k5.ok());
  EXPECT_NE(k4->get(), k5->get());
  EXPECT_EQ(shared.size(), 1);
}

}  // namespace
}  // namespace sluice
