#include "placement/auto_placer.h"

#include <time.h>

#include <chrono>
#include <iostream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "graph/scope.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/training/optimizers.h"
#include "ops/state/state_ops.h"
#include "ops/training/training_ops.h"
#include "placement/colocation.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::vector<DeviceSpec> Devices(absl::string_view spec) {
  absl::StatusOr<std::vector<DeviceSpec>> devices = ParseDeviceSpecs(spec);
  EXPECT_TRUE(devices.ok()) << devices.status();
  return devices.ok() ? *devices : std::vector<DeviceSpec>{};
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// x[batch, width] -> `layers` x (MatMul with a width x width variable, Relu).
struct Chain {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x;
  std::vector<Output> weights, matmuls, relus;
};

void BuildChain(Chain* c, int layers, int64_t width, int64_t batch) {
  c->x = ops::Placeholder(c->root.WithOpName("x"), DT_FLOAT, {.shape = {batch, width}});
  Output h = c->x;
  for (int l = 0; l < layers; ++l) {
    Scope s = c->root.NewSubScope(absl::StrCat("layer", l));
    Output w = ops::Variable(s.WithOpName("w"), TensorShape({width, width}), DT_FLOAT);
    Output mm = ops::MatMul(s.WithOpName("mm"), h, w);
    h = ops::Relu(s.WithOpName("relu"), mm);
    c->weights.push_back(w);
    c->matmuls.push_back(mm);
    c->relus.push_back(h);
  }
  ASSERT_TRUE(c->root.ok()) << c->root.status();
}

// `count` parallel stacks of `layers` MatMul -> Relu layers, width x width,
// all reading `x`, named "<name><i>/layer<l>". Each weight is initialized
// from a Fill, as a session would need.
struct Stack {
  std::vector<ops::VariableAndInit> weights;
  std::vector<Output> matmuls, relus;
};

std::vector<Stack> BuildStacks(const Scope& root, Output x, absl::string_view name, int count,
                               int layers, int64_t width) {
  std::vector<Stack> stacks(count);
  for (int i = 0; i < count; ++i) {
    Output h = x;
    for (int l = 0; l < layers; ++l) {
      Scope s = root.NewSubScope(absl::StrCat(name, i, "/layer", l));
      ops::VariableAndInit w =
          ops::VariableWithInit(s.WithOpName("w"), ops::Fill(s, {width, width}, 0.f));
      Output mm = ops::MatMul(s.WithOpName("mm"), h, w.var);
      h = ops::Relu(s.WithOpName("relu"), mm);
      stacks[i].weights.push_back(w);
      stacks[i].matmuls.push_back(mm);
      stacks[i].relus.push_back(h);
    }
  }
  return stacks;
}

int DeviceIndex(const PlacementReport& r, const Node* node) {
  for (size_t d = 0; d < r.devices.size(); ++d) {
    if (node->requested_device() == r.devices[d]) return static_cast<int>(d);
  }
  ADD_FAILURE() << node->name() << " requests '" << node->requested_device()
                << "', which is none of the devices";
  return -1;
}

TEST(AutoPlaceTest, SplitsChainWhoseWeightsDoNotFitOneDevice) {
  Chain c;
  BuildChain(&c, 4, 1024, 32);  // 4 MiB of weights per layer, 16 MiB in all
  std::vector<DeviceSpec> devices = Devices("CPU:0{mem=10MiB},CPU:1{mem=10MiB}");
  absl::StatusOr<PlacementReport> r = AutoPlace(c.root.graph(), {.devices = devices});
  ASSERT_TRUE(r.ok()) << r.status();
  SCOPED_TRACE(r->ToString());
  for (int d = 0; d < 2; ++d) {
    EXPECT_GT(r->node_counts[d], 0);
    EXPECT_LE(r->memory_bytes[d], 10 << 20);
  }
  EXPECT_EQ(r->memory_bytes[0] + r->memory_bytes[1],
            4 * (4 << 20) + 9 * 32 * 1024 * 4);  // weights + x + 8 activations
  // The weights are split; a chain runs one op at a time, and weights can be
  // sent ahead of their use, so the step is the chain's compute time.
  EXPECT_NE(DeviceIndex(*r, c.weights[0].node), DeviceIndex(*r, c.weights[3].node));
  const double chain_seconds = r->busy_seconds[0] + r->busy_seconds[1];
  EXPECT_NEAR(chain_seconds, 4 * (2.0 * 32 * 1024 * 1024 + 32 * 1024) / 20e9, 1e-9);
  EXPECT_GE(r->predicted_step_seconds, chain_seconds);
  EXPECT_LT(r->predicted_step_seconds, chain_seconds * 1.05);
  EXPECT_GT(r->predicted_step_seconds, 0);
}

TEST(AutoPlaceTest, PutsTwoTowersOnDifferentDevicesAndBeatsOneDevice) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {.shape = {64, 512}});
  std::vector<Stack> towers = BuildStacks(root, x, "tower", 2, 4, 512);
  ops::Add(root.WithOpName("sum"), towers[0].relus.back(), towers[1].relus.back());
  ASSERT_TRUE(root.ok()) << root.status();
  std::vector<DeviceSpec> devices = Devices("CPU:0,CPU:1");

  absl::StatusOr<PlacementReport> single = PredictPlacement(*root.graph(), {devices[0]});
  ASSERT_TRUE(single.ok()) << single.status();
  absl::StatusOr<PlacementReport> r = AutoPlace(root.graph(), {.devices = devices});
  ASSERT_TRUE(r.ok()) << r.status();
  SCOPED_TRACE(r->ToString());
  const int a = DeviceIndex(*r, towers[0].matmuls[0].node);
  const int b = DeviceIndex(*r, towers[1].matmuls[0].node);
  EXPECT_NE(a, b);
  for (int t = 0; t < 2; ++t) {
    for (int l = 0; l < 4; ++l) {
      const int d = t == 0 ? a : b;
      EXPECT_EQ(DeviceIndex(*r, towers[t].matmuls[l].node), d) << t << " " << l;
      // Weights live with their reader, not with where their initializer
      // could have started first.
      EXPECT_EQ(DeviceIndex(*r, towers[t].weights[l].var.node), d) << t << " " << l;
      EXPECT_EQ(DeviceIndex(*r, towers[t].weights[l].initializer), d) << t << " " << l;
    }
  }
  // Eight 33.5 MFLOP MatMuls at 20 GFLOP/s: about 13.4 ms on one device, about
  // half of it on two.
  EXPECT_NEAR(single->predicted_step_seconds, 8 * 2.0 * 64 * 512 * 512 / 20e9, 1e-3);
  EXPECT_LT(r->predicted_step_seconds, 0.6 * single->predicted_step_seconds);
  EXPECT_NEAR(r->busy_seconds[0] + r->busy_seconds[1], single->busy_seconds[0], 1e-9);
}

// Eight branches of MatMul -> Relu -> MatMul -> Relu from one input: each
// branch stays whole on one device (a chain is one placement unit), four
// branches per device, so only the input and the branch outputs cross.
TEST(AutoPlaceTest, KeepsEachBranchOfAWideGraphOnOneDevice) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {.shape = {64, 256}});
  std::vector<Stack> stacks = BuildStacks(root, x, "branch", 8, 2, 256);
  std::vector<std::vector<Node*>> branches(8);
  std::vector<Output> outs;
  for (int b = 0; b < 8; ++b) {
    for (int l = 0; l < 2; ++l) {
      branches[b].push_back(stacks[b].matmuls[l].node);
      branches[b].push_back(stacks[b].relus[l].node);
      branches[b].push_back(stacks[b].weights[l].var.node);
    }
    outs.push_back(stacks[b].relus.back());
  }
  ops::AddN(root.WithOpName("sum"), outs);
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<PlacementReport> r = AutoPlace(root.graph(), {.devices = Devices("CPU:0,CPU:1")});
  ASSERT_TRUE(r.ok()) << r.status();
  SCOPED_TRACE(r->ToString());
  int per_device[2] = {0, 0};
  for (int b = 0; b < 8; ++b) {
    const int d = DeviceIndex(*r, branches[b][0]);
    ++per_device[d];
    for (Node* n : branches[b]) EXPECT_EQ(DeviceIndex(*r, n), d) << n->name();
  }
  EXPECT_EQ(per_device[0], 4);
  EXPECT_EQ(per_device[1], 4);
}

TEST(AutoPlaceTest, PinnedNodesStayPinned) {
  Chain c;
  BuildChain(&c, 4, 256, 16);
  c.matmuls[2].node->set_requested_device("/device:CPU:1");
  c.relus[0].node->set_requested_device("/job:localhost/device:CPU:1");
  c.relus[3].node->set_requested_device("/device:CPU:*");  // any CPU
  std::vector<DeviceSpec> devices = Devices("CPU:0,CPU:1,GPU:0{gflops=1000}");
  absl::StatusOr<PlacementReport> r = AutoPlace(c.root.graph(), {.devices = devices});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(c.matmuls[2].node->requested_device(), "/device:CPU:1");
  // A more specific request keeps its parts.
  EXPECT_EQ(c.relus[0].node->requested_device(), "/job:localhost/device:CPU:1");
  const std::string& any_cpu = c.relus[3].node->requested_device();
  EXPECT_TRUE(any_cpu == "/device:CPU:0" || any_cpu == "/device:CPU:1") << any_cpu;
  // The free MatMuls go to the fast GPU.
  EXPECT_EQ(c.matmuls[0].node->requested_device(), "/device:GPU:0");
}

TEST(AutoPlaceTest, ColocatedVariableAssignAndApplyStayTogether) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(root.WithOpName("x").WithDevice("/device:CPU:1"), DT_FLOAT,
                              {.shape = {128, 128}});
  ops::VariableAndInit w =
      ops::VariableWithInit(root.WithOpName("w"), ops::Fill(root, {128, 128}, 0.5f));
  Output h = ops::MatMul(root.WithOpName("h"), x, w.var);
  Output grad = ops::MatMul(root.WithOpName("grad"), x, h, {.transpose_a = true});
  Output apply = ops::ApplyGradientDescent(root.WithOpName("apply"), w.var, 0.1f, grad);
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<PlacementReport> r =
      AutoPlace(root.graph(), {.devices = Devices("CPU:0,CPU:1")});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string& dev = w.var.node->requested_device();
  EXPECT_FALSE(dev.empty());
  EXPECT_EQ(w.initializer->requested_device(), dev);
  EXPECT_EQ(apply.node->requested_device(), dev);
  EXPECT_EQ(x.node->requested_device(), "/device:CPU:1");
}

TEST(AutoPlaceTest, VariablesGoWithTheirReaderNotTheirInitializer) {
  // A chain keeps one device busy; its weights' initializers could start at
  // once on the idle one, but the weights belong with the MatMuls reading them.
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output h = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {.shape = {64, 256}});
  std::vector<ops::VariableAndInit> weights;
  std::vector<Node*> matmuls;
  for (int l = 0; l < 4; ++l) {
    Scope s = root.NewSubScope(absl::StrCat("layer", l));
    weights.push_back(ops::VariableWithInit(s.WithOpName("w"), ops::Fill(s, {256, 256}, 0.f)));
    Output mm = ops::MatMul(s.WithOpName("mm"), h, weights.back().var);
    matmuls.push_back(mm.node);
    h = ops::Relu(s, mm);
  }
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<PlacementReport> r =
      AutoPlace(root.graph(), {.devices = Devices("CPU:0,CPU:1")});
  ASSERT_TRUE(r.ok()) << r.status();
  for (int l = 0; l < 4; ++l) {
    EXPECT_EQ(weights[l].var.node->requested_device(), matmuls[l]->requested_device()) << l;
    EXPECT_EQ(weights[l].initializer->requested_device(), matmuls[l]->requested_device()) << l;
  }
}

// An initial value read only by its Assign costs no memory of its own (the
// variable adopts its buffer), which holds only on the variable's device: it
// goes there, unless it asks for a device of its own.
TEST(AutoPlaceTest, InitialValuesGoWithTheirVariables) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output h = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {.shape = {4, 512}});
  const std::vector<int64_t> widths = {512, 768, 768, 10};
  std::vector<ops::VariableAndInit> weights;
  std::vector<Output> fills;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    Scope s = root.NewSubScope(absl::StrCat("layer", i));
    fills.push_back(ops::Fill(s.WithOpName("fill"), {widths[i], widths[i + 1]}, 0.001f));
    weights.push_back(ops::VariableWithInit(s.WithOpName("w"), fills.back()));
    h = ops::MatMul(s, h, weights.back().var);
  }
  Scope pinned = root.WithDevice("/device:CPU:0");
  Output far_fill = ops::Fill(pinned.WithOpName("far_fill"), {4, 4}, 1.0f);
  ops::VariableAndInit far =
      ops::VariableWithInit(root.WithOpName("far").WithDevice("/device:CPU:1"), far_fill);
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<PlacementReport> r =
      AutoPlace(root.graph(), {.devices = Devices("CPU:0{mem=3MiB},CPU:1{mem=3MiB}")});
  ASSERT_TRUE(r.ok()) << r.status();
  SCOPED_TRACE(r->ToString());
  for (size_t i = 0; i < fills.size(); ++i) {
    EXPECT_EQ(fills[i].node->requested_device(), weights[i].var.node->requested_device()) << i;
  }
  EXPECT_EQ(far_fill.node->requested_device(), "/device:CPU:0");
  EXPECT_EQ(far.var.node->requested_device(), "/device:CPU:1");
}

// A training graph (Adam) placed on two memory-limited devices keeps every
// colocation group together, and a session with two CPU devices runs it.
TEST(AutoPlaceTest, PlacedTrainingGraphRunsInASession) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {.shape = {8, 256}});
  Output h = x;
  std::vector<Output> vars;
  for (int l = 0; l < 3; ++l) {
    Scope s = root.NewSubScope(absl::StrCat("layer", l));
    ops::VariableAndInit w =
        ops::VariableWithInit(s.WithOpName("w"), ops::Fill(s, {256, 256}, 0.01f));
    vars.push_back(w.var);
    h = ops::Relu(s, ops::MatMul(s, h, w.var));
  }
  Output loss = ops::Sum(root.WithOpName("loss"), ops::Square(root, h), {0, 1});
  GlobalStep step = CreateGlobalStep(root);
  AdamOptimizer adam(0.01);
  absl::StatusOr<Node*> train = adam.Minimize(root.WithOpName("train"), loss, vars, &step.ref);
  ASSERT_TRUE(train.ok()) << train.status();
  Node* init = ops::GlobalVariablesInitializer(root.WithOpName("init"));
  ASSERT_TRUE(root.ok()) << root.status();

  // Each layer holds w, m, v (768 KiB) plus gradients and Fill outputs.
  absl::StatusOr<PlacementReport> r =
      AutoPlace(root.graph(), {.devices = Devices("CPU:0{mem=3MiB},CPU:1{mem=3MiB}")});
  ASSERT_TRUE(r.ok()) << r.status();
  SCOPED_TRACE(r->ToString());
  EXPECT_GT(r->node_counts[0], 0);
  EXPECT_GT(r->node_counts[1], 0);
  for (int d = 0; d < 2; ++d) EXPECT_LE(r->memory_bytes[d], 3 << 20);
  ColocationGroups groups = ComputeColocationGroups(*root.graph());
  for (const std::vector<int>& members : groups.members) {
    for (int id : members) {
      EXPECT_EQ(root.graph()->node(id)->requested_device(),
                root.graph()->node(members[0])->requested_device())
          << root.graph()->node(id)->name();
    }
  }

  SessionConfig options = BuiltinSessionConfig();
  options.devices.num_virtual_cpus = 1;
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options, *root.graph());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Run({}, {}, {init}).ok());
  Tensor feed(DT_FLOAT, TensorShape({8, 256}));
  for (int64_t i = 0; i < feed.NumElements(); ++i) feed.data<float>()[i] = 0.5f;
  float first = 0, last = 0;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::vector<Tensor>> out = (*session)->Run({{x, feed}}, {loss}, {*train});
    ASSERT_TRUE(out.ok()) << out.status();
    (i == 0 ? first : last) = (*out)[0].scalar<float>();
  }
  EXPECT_LT(last, first);
}

TEST(AutoPlaceTest, ReportMatchesPredictionOfThePlacedGraph) {
  Chain c;
  BuildChain(&c, 6, 512, 64);
  std::vector<DeviceSpec> devices = Devices("CPU:0{mem=3MiB},CPU:1{mem=3MiB},CPU:2{mem=3MiB}");
  absl::StatusOr<PlacementReport> r = AutoPlace(c.root.graph(), {.devices = devices});
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<PlacementReport> p = PredictPlacement(*c.root.graph(), devices);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_DOUBLE_EQ(r->predicted_step_seconds, p->predicted_step_seconds);
  EXPECT_EQ(r->memory_bytes, p->memory_bytes);
  EXPECT_EQ(r->node_counts, p->node_counts);
  EXPECT_EQ(r->transfer_bytes, p->transfer_bytes);
  for (int64_t bytes : r->memory_bytes) EXPECT_LE(bytes, 3 << 20);
  EXPECT_THAT(r->ToString(), HasSubstr("/device:CPU:2: "));
  EXPECT_THAT(r->ToString(), HasSubstr("predicted step "));
}

TEST(AutoPlaceTest, RefusesModelLargerThanAllDevices) {
  Chain c;
  BuildChain(&c, 1, 1024, 8);  // 4 MiB of weights
  absl::StatusOr<CostModel> cost = CostModel::Build(*c.root.graph());
  ASSERT_TRUE(cost.ok());
  int64_t total = 0;
  for (const Node* n : c.root.graph()->nodes()) total += cost->cost(*n).memory_bytes();
  absl::StatusOr<PlacementReport> r =
      AutoPlace(c.root.graph(), {.devices = Devices("CPU:0{mem=1MiB},CPU:1{mem=1MiB}")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Message(r.status()), HasSubstr(absl::StrCat("needs ", total, " bytes")));
  EXPECT_THAT(Message(r.status()), HasSubstr("the 2 devices hold only 2097152 bytes"));
  EXPECT_TRUE(c.x.node->requested_device().empty());  // the graph is untouched
}

TEST(AutoPlaceTest, RefusesGroupThatFitsNoDeviceLeft) {
  // 10.5 MB of variables on two 6 MB devices: enough in total, but each device
  // holds only one 3.5 MB variable.
  Scope root = Scope::NewRootScope(BuiltinOps());
  for (int i = 0; i < 3; ++i) {
    Output v = ops::Variable(root.WithOpName(absl::StrCat("v", i)), TensorShape({875000}),
                             DT_FLOAT);
    ops::Sum(root.WithOpName(absl::StrCat("sum", i)), v, {0});
  }
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<PlacementReport> r =
      AutoPlace(root.graph(), {.devices = Devices("CPU:0{mem=6M},CPU:1{mem=6M}")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Message(r.status()), HasSubstr("'v2' (VariableV2)"));
  EXPECT_THAT(Message(r.status()), HasSubstr("3500000 bytes"));
}

TEST(AutoPlaceTest, BadRequestsAndDevices) {
  Chain c;
  BuildChain(&c, 2, 64, 4);
  absl::StatusOr<PlacementReport> r = AutoPlace(c.root.graph(), {.devices = {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(r.status()), HasSubstr("no devices"));

  c.matmuls[1].node->set_requested_device("/device:GPU:0");
  r = AutoPlace(c.root.graph(), {.devices = Devices("CPU:0,CPU:1")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(r.status()), HasSubstr("'layer1/mm' (MatMul)"));
  EXPECT_THAT(Message(r.status()), HasSubstr("'/device:GPU:0'"));
  EXPECT_THAT(Message(r.status()), HasSubstr("/device:CPU:0, /device:CPU:1"));
}

TEST(AutoPlaceTest, ConflictingAndOversizedPins) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output v = ops::Variable(root.WithOpName("v").WithDevice("/device:CPU:0"),
                           TensorShape({1024, 1024}), DT_FLOAT);
  Output g = ops::Placeholder(root.WithOpName("g"), DT_FLOAT, {.shape = {1024, 1024}});
  Output apply = ops::ApplyGradientDescent(root.WithOpName("apply"), v, 0.1f, g);
  ASSERT_TRUE(root.ok()) << root.status();

  absl::StatusOr<PlacementReport> r =
      AutoPlace(root.graph(), {.devices = Devices("CPU:0{mem=1MiB},CPU:1{mem=64MiB}")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Message(r.status()), HasSubstr("'v' (VariableV2) is pinned to /device:CPU:0"));
  EXPECT_THAT(Message(r.status()), HasSubstr("4194304 bytes"));

  apply.node->set_requested_device("/device:CPU:1");
  r = AutoPlace(root.graph(), {.devices = Devices("CPU:0,CPU:1")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(r.status()), HasSubstr("'apply' (ApplyGradientDescent)"));
  EXPECT_THAT(Message(r.status()), HasSubstr("'v' (VariableV2)"));
}

TEST(PredictPlacementTest, OneDeviceChainTakesTheSumOfComputeTimes) {
  Chain c;
  BuildChain(&c, 5, 256, 32);
  std::vector<DeviceSpec> devices = Devices("CPU:0{gflops=10},CPU:1{gflops=40}");
  for (Node* n : c.root.graph()->nodes()) n->set_requested_device("/device:CPU:1");
  absl::StatusOr<CostModel> cost = CostModel::Build(*c.root.graph());
  ASSERT_TRUE(cost.ok());
  double sum = 0;
  for (const Node* n : c.root.graph()->nodes()) sum += cost->ComputeSeconds(*n, devices[1]);
  absl::StatusOr<PlacementReport> r = PredictPlacement(*c.root.graph(), devices);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->predicted_step_seconds, sum, 1e-12);
  EXPECT_NEAR(r->busy_seconds[1], sum, 1e-12);
  EXPECT_EQ(r->node_counts[0], 0);
  EXPECT_EQ(r->transfer_bytes, 0);

  // Alternate layers: each layer's input crosses, so the step gets longer.
  for (int l = 0; l < 5; l += 2) {
    c.matmuls[l].node->set_requested_device("/device:CPU:0");
    c.weights[l].node->set_requested_device("/device:CPU:0");
    c.relus[l].node->set_requested_device("/device:CPU:0");
  }
  r = PredictPlacement(*c.root.graph(), devices);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->predicted_step_seconds, sum);
  EXPECT_EQ(r->transfer_bytes, 5 * 32 * 256 * 4);  // x and four activations

  c.relus[1].node->set_requested_device("/device:GPU:7");
  r = PredictPlacement(*c.root.graph(), devices);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(r.status()), HasSubstr("'layer1/relu' (Relu)"));
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A random layered DAG of 10,000 MatMul / Add / Relu nodes over 64x64 tensors.
TEST(AutoPlaceTest, PlacesTenThousandNodesInUnderASecond) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  std::mt19937 rng(7);
  const int kWidth = 50, kLayers = 200;
  std::vector<Output> prev;
  for (int i = 0; i < kWidth; ++i) {
    Scope s = root.WithOpName(absl::StrCat("in", i));
    prev.push_back(i % 5 == 0 ? ops::Variable(s, TensorShape({64, 64}), DT_FLOAT)
                              : ops::Placeholder(s, DT_FLOAT, {.shape = {64, 64}}));
  }
  for (int l = 1; l < kLayers; ++l) {
    std::vector<Output> next;
    for (int i = 0; i < kWidth; ++i) {
      const Output& a = prev[rng() % kWidth];
      const Output& b = prev[rng() % kWidth];
      switch (rng() % 3) {
        case 0: next.push_back(ops::MatMul(root, a, b)); break;
        case 1: next.push_back(ops::Add(root, a, b)); break;
        default: next.push_back(ops::Relu(root, a)); break;
      }
    }
    prev = std::move(next);
  }
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_EQ(root.graph()->num_nodes(), kWidth * kLayers);
  // 156 MiB needed, 176 MiB held.
  std::vector<DeviceSpec> devices =
      Devices("CPU:0{mem=64MiB},CPU:1{mem=64MiB},GPU:0{mem=48MiB;gflops=100}");;
  // CPU time of this thread: other work on a shared machine does not count.
  const double cpu_start = ThreadCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<PlacementReport> r = AutoPlace(root.graph(), {.devices = devices});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_seconds = ThreadCpuSeconds() - cpu_start;
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << "AutoPlace of " << kWidth * kLayers << " nodes on 3 devices: " << cpu_seconds * 1e3
            << " ms CPU, " << seconds * 1e3 << " ms wall\n" << r->ToString();
  EXPECT_LT(cpu_seconds, 1.0);
  for (size_t d = 0; d < devices.size(); ++d) {
    EXPECT_LE(r->memory_bytes[d], devices[d].memory_bytes);
  }
}

}  // namespace
}  // namespace sluice
