#include "training/central_storage.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
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
using strategy_testing::OptimizerFactory;
using strategy_testing::StepData;


struct Built {
  Scope scope = Scope::NewRootScope(BuiltinOps());
  Output x, y;
  std::unique_ptr<Optimizer> optimizer;
  absl::StatusOr<CentralStorageModel> model = absl::UnknownError("not built");
};

std::unique_ptr<Built> Build(std::vector<std::string> compute, const OptimizerFactory& opt,
                             bool with_global_step = false) {
  auto b = std::make_unique<Built>();
  b->x = ops::Placeholder(b->scope.WithOpName("x"), DT_FLOAT, {.shape = {-1, kIn}});
  b->y = ops::Placeholder(b->scope.WithOpName("y"), DT_FLOAT, {.shape = {-1, kOut}});
  b->optimizer = opt();
  CentralStorageOptions o;
  o.compute_devices = std::move(compute);
  o.variable_device = Cpu(0);
  if (with_global_step) o.global_step = CreateGlobalStep(b->scope).ref;
  b->model = BuildCentralStorage(b->scope, {b->x, b->y}, MakeNet(8, nullptr), b->optimizer.get(), o);
  return b;
}

std::unique_ptr<Session> NewTestSession(const Built& b) {
  auto sess = NewSession(strategy_testing::ThreeCpuOptions(), *b.scope.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? *std::move(sess) : nullptr;
}

TEST(CentralStorageTest, EqualsOneDeviceOnTheCombinedBatch) {
  struct Case {
    const char* name;
    OptimizerFactory optimizer;
  };
  for (const Case& c : {Case{"sgd", strategy_testing::NewSgd}, Case{"momentum", NewMomentum}}) {
    const std::vector<Tensor> want = strategy_testing::TrainOnOneDevice(8, c.optimizer);
    ASSERT_EQ(want.size(), 4u) << c.name;
    for (const std::vector<std::string>& compute :
         {std::vector<std::string>{Cpu(1), Cpu(2)}, std::vector<std::string>{Cpu(0), Cpu(1), Cpu(2)}}) {
      SCOPED_TRACE(absl::StrCat(c.name, ", ", compute.size(), " towers"));
      std::unique_ptr<Built> b = Build(compute, c.optimizer);
      ASSERT_TRUE(b->model.ok()) << b->model.status();
      const CentralStorageModel& cs = *b->model;
      std::unique_ptr<Session> sess = NewTestSession(*b);
      ASSERT_NE(sess, nullptr);
      ASSERT_TRUE(sess->Run({}, {}, {cs.init}).ok());
      float first_loss = 0, last_loss = 0;
      for (int step = 0; step < kSteps; ++step) {
        Data d = StepData(step);
        auto out = sess->Run({{b->x, d.x}, {b->y, d.y}}, {cs.loss}, {cs.train});
        ASSERT_TRUE(out.ok()) << out.status();
        (step == 0 ? first_loss : last_loss) = (*out)[0].scalar<float>();
      }
      EXPECT_TRUE(std::isfinite(first_loss) && std::isfinite(last_loss));
      auto got = sess->Run({}, cs.model.variables);
      ASSERT_TRUE(got.ok()) << got.status();
      for (size_t v = 0; v < want.size(); ++v) {
        EXPECT_LT(MaxAbsDiff((*got)[v], want[v]), 1e-5f) << "variable " << v;
      }
    }
  }
}

TEST(CentralStorageTest, VariablesAndUpdatesLiveOnTheVariableDevice) {
  std::unique_ptr<Built> b = Build({Cpu(1), Cpu(2)}, NewMomentum);
  ASSERT_TRUE(b->model.ok()) << b->model.status();
  const CentralStorageModel& cs = *b->model;
  EXPECT_EQ(cs.towers.tower_losses.size(), 2u);
  std::unique_ptr<Session> sess = NewTestSession(*b);
  ASSERT_NE(sess, nullptr);
  ASSERT_TRUE(sess->Run({}, {}, {cs.init}).ok());
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata metadata;
  Data d = StepData(0);
  ASSERT_TRUE(sess->Run({{"x", d.x}, {"y", d.y}}, {}, {cs.train->name()}, options, &metadata).ok());
  int variables = 0, updates = 0, matmuls[3] = {0, 0, 0};
  for (const GraphDef& partition : metadata.partition_graphs) {
    for (const NodeDef& n : partition.node()) {
      if (n.op() == "VariableV2") {
        ++variables;
        EXPECT_EQ(n.device(), Cpu(0)) << n.name();
      }
      if (n.op() == "ApplyMomentum") {
        ++updates;
        EXPECT_EQ(n.device(), Cpu(0)) << n.name();
      }
      if (n.op() == "MatMul") {
        for (int k = 0; k < 3; ++k) matmuls[k] += n.device() == Cpu(k);
        EXPECT_TRUE(absl::StartsWith(n.name(), "tower_")) << n.name();
      }
    }
  }
  EXPECT_EQ(variables, 8);  // 4 variables and their 4 momentum slots
  EXPECT_EQ(updates, 4);
  EXPECT_EQ(matmuls[0], 0);  // no compute on the variables' device
  EXPECT_GT(matmuls[1], 0);
  EXPECT_EQ(matmuls[1], matmuls[2]);
}

TEST(CentralStorageTest, MetricsAreTheTowerMeanAndTheGlobalStepCounts) {
  std::unique_ptr<Built> b = Build({Cpu(1), Cpu(2)}, strategy_testing::NewSgd, true);
  ASSERT_TRUE(b->model.ok()) << b->model.status();
  const CentralStorageModel& cs = *b->model;
  ASSERT_EQ(cs.metrics.size(), 1u);
  std::unique_ptr<Session> sess = NewTestSession(*b);
  ASSERT_NE(sess, nullptr);
  ASSERT_TRUE(sess->Run({}, {}, {cs.init}).ok());
  Data d = StepData(3);
  // Equal slices: the towers' mean absolute errors average to the whole
  // batch's, which the unreplicated model computes.
  auto out = sess->Run({{b->x, d.x}, {b->y, d.y}},
                       {cs.metrics[0], cs.model.metrics[0], cs.loss, cs.model.loss});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].scalar<float>(), (*out)[1].scalar<float>(), 1e-6);
  EXPECT_NEAR((*out)[2].scalar<float>(), (*out)[3].scalar<float>(), 1e-6);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sess->Run({{b->x, d.x}, {b->y, d.y}}, {}, {cs.train}).ok());
  auto step = sess->Run({}, std::vector<std::string>{"global_step"}, {});
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ((*step)[0].scalar<int64_t>(), 3);
}

void ExpectInvalid(const absl::Status& s, absl::string_view needle) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), needle)) << s;
}

TEST(CentralStorageTest, BadInputsNameTheProblem) {
  ExpectInvalid(Build({}, strategy_testing::NewSgd)->model.status(), "no compute devices");

  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {10, kIn}});
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, {.shape = {10, kOut}});
  GradientDescentOptimizer sgd(0.1);
  CentralStorageOptions o;
  o.compute_devices = {Cpu(0), Cpu(1), Cpu(2)};
  ExpectInvalid(BuildCentralStorage(s, {x, y}, MakeNet(8, nullptr), &sgd, o).status(),
                "not a multiple of 3 towers");

  o.compute_devices = {Cpu(1)};
  o.variable_device = "";
  ExpectInvalid(BuildCentralStorage(s, {x, y}, MakeNet(8, nullptr), &sgd, o).status(),
                "empty variable device");

  o.variable_device = Cpu(0);
  ReplicaFn failing = [](const Scope&, const std::vector<Output>&) -> absl::StatusOr<ReplicaModel> {
    return absl::InvalidArgumentError("bad layer");
  };
  absl::Status st = BuildCentralStorage(s, {x, y}, failing, &sgd, o).status();
  ExpectInvalid(st, "building the model");
  ExpectInvalid(st, "bad layer");

  Scope s2 = Scope::NewRootScope(BuiltinOps());
  Output x2 = ops::Placeholder(s2.WithOpName("x"), DT_FLOAT, {.shape = {-1, kIn}});
  Output y2 = ops::Placeholder(s2.WithOpName("y"), DT_FLOAT, {.shape = {-1, kOut}});
  o.global_step = ops::VariableWithInit(s2.WithOpName("float_step"), 0.0f).var;
  ExpectInvalid(BuildCentralStorage(s2, {x2, y2}, MakeNet(8, nullptr), &sgd, o).status(),
                "global_step must be an int64 variable");
}

}  // namespace
}  // namespace sluice
