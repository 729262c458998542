#include "training/one_device.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"
#include "training/strategy_testutil.h"

namespace sluice {
namespace {

using strategy_testing::Cpu;
using strategy_testing::Data;
using strategy_testing::kIn;
using strategy_testing::kOut;
using strategy_testing::kSteps;
using strategy_testing::MakeNet;
using strategy_testing::MaxAbsDiff;
using strategy_testing::NewMomentum;
using strategy_testing::StepData;


TEST(OneDeviceTest, TrainsLikeThePlainGraphWithEverythingOnItsDevice) {
  const std::vector<Tensor> want = strategy_testing::TrainOnOneDevice(8, NewMomentum);
  ASSERT_EQ(want.size(), 4u);
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1, kIn}});
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, {.shape = {-1, kOut}});
  std::unique_ptr<Optimizer> momentum = NewMomentum();
  OneDeviceOptions o;
  o.device = "/device:CPU:2";
  o.global_step = CreateGlobalStep(s.WithDevice(o.device)).ref;
  absl::StatusOr<OneDeviceModel> m = BuildOneDevice(s, {x, y}, MakeNet(8, nullptr), momentum.get(), o);
  ASSERT_TRUE(m.ok()) << m.status();
  auto sess = NewSession(strategy_testing::ThreeCpuOptions(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {m->init}).ok());
  RunOptions options;
  options.output_partition_graphs = true;
  for (int step = 0; step < kSteps; ++step) {
    Data d = StepData(step);
    RunMetadata metadata;
    auto out = (*sess)->Run({{"x", d.x}, {"y", d.y}}, {m->loss.node->name()},
                            {m->train->name()}, options, &metadata);
    ASSERT_TRUE(out.ok()) << out.status();
    if (step > 0) continue;
    // Every node of the step but the fed inputs (and the transfers of them
    // and of the fetched loss) is on CPU:2.
    int on_device = 0;
    for (const GraphDef& partition : metadata.partition_graphs) {
      for (const NodeDef& n : partition.node()) {
        if (n.device() == Cpu(2)) {
          ++on_device;
          continue;
        }
        EXPECT_TRUE(n.op() == "_Send" || n.op() == "_Recv" || n.name() == "x" ||
                    n.name() == "y" || absl::StartsWith(n.op(), "_"))
            << n.name() << " (" << n.op() << ") is on " << n.device();
      }
    }
    EXPECT_GT(on_device, 20);
  }
  auto got = (*sess)->Run({}, m->model.variables);
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t v = 0; v < want.size(); ++v) {
    EXPECT_LT(MaxAbsDiff((*got)[v], want[v]), 1e-6f) << "variable " << v;
  }
  auto step = (*sess)->Run({}, std::vector<std::string>{"global_step"}, {});
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ((*step)[0].scalar<int64_t>(), kSteps);
}

void ExpectInvalid(const absl::Status& s, absl::string_view needle) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), needle)) << s;
}

TEST(OneDeviceTest, BadInputsNameTheProblem) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1, kIn}});
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, {.shape = {-1, kOut}});
  GradientDescentOptimizer sgd(0.1);
  OneDeviceOptions o;
  ExpectInvalid(BuildOneDevice(s, {x, y}, MakeNet(8, nullptr), &sgd, o).status(), "no device");
  o.device = "/device:CPU:zero";
  ExpectInvalid(BuildOneDevice(s, {x, y}, MakeNet(8, nullptr), &sgd, o).status(),
                "bad device name '/device:CPU:zero'");
  o.device = Cpu(1);
  ReplicaFn failing = [](const Scope&, const std::vector<Output>&) -> absl::StatusOr<ReplicaModel> {
    return absl::InvalidArgumentError("bad layer");
  };
  ExpectInvalid(BuildOneDevice(s, {x, y}, failing, &sgd, o).status(), "bad layer");
  ReplicaFn vector_loss = [](const Scope& rs,
                             const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {
    ops::VariableAndInit w = ops::VariableWithInit(rs.WithOpName("w"), 1.0f);
    return ReplicaModel{ops::Mul(rs, in[0], w.var), {w.var}, {}};
  };
  ExpectInvalid(BuildOneDevice(s, {x, y}, vector_loss, &sgd, o).status(), "must be a scalar");
  ReplicaFn no_vars = [](const Scope& rs,
                         const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {
    return ReplicaModel{ops::Mean(rs, in[0], {0, 1}), {}, {}};
  };
  ExpectInvalid(BuildOneDevice(s, {x, y}, no_vars, &sgd, o).status(), "no variables");
}

}  // namespace
}  // namespace sluice
