#include "placement/cost_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "graph/scope.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/state/state_ops.h"
#include "ops/training/training_ops.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// ParseDeviceSpecs.

TEST(ParseDeviceSpecsTest, ShortPartialAndFullNamesWithOptions) {
  absl::StatusOr<std::vector<DeviceSpec>> specs = ParseDeviceSpecs(
      "CPU:0{mem=1GiB}, /device:GPU:1{mem=512M;gflops=100;gbps=12.5;latency_us=5},"
      "/job:w/replica:0/task:1/device:CPU:0");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[0].name, "/device:CPU:0");
  EXPECT_EQ((*specs)[0].memory_bytes, int64_t{1} << 30);
  EXPECT_DOUBLE_EQ((*specs)[0].flops_per_second, 20e9);  // default
  EXPECT_EQ((*specs)[1].name, "/device:GPU:1");
  EXPECT_EQ((*specs)[1].memory_bytes, 512000000);
  EXPECT_DOUBLE_EQ((*specs)[1].flops_per_second, 100e9);
  EXPECT_DOUBLE_EQ((*specs)[1].link_bytes_per_second, 12.5e9);
  EXPECT_DOUBLE_EQ((*specs)[1].link_latency_seconds, 5e-6);
  EXPECT_EQ((*specs)[2].name, "/job:w/replica:0/task:1/device:CPU:0");
  EXPECT_EQ((*specs)[2].memory_bytes, 0);  // unlimited
}

TEST(ParseDeviceSpecsTest, SizeSuffixes) {
  for (const auto& [text, bytes] : std::vector<std::pair<std::string, int64_t>>{
           {"1000", 1000}, {"2K", 2000}, {"2KiB", 2048}, {"3MiB", 3 << 20},
           {"1.5G", 1500000000}, {"1GB", 1000000000}}) {
    absl::StatusOr<std::vector<DeviceSpec>> specs =
        ParseDeviceSpecs(absl::StrCat("CPU:0{mem=", text, "}"));
    ASSERT_TRUE(specs.ok()) << text << ": " << specs.status();
    EXPECT_EQ((*specs)[0].memory_bytes, bytes) << text;
  }
}

void ExpectBad(absl::string_view spec, std::vector<std::string> facts) {
  absl::StatusOr<std::vector<DeviceSpec>> specs = ParseDeviceSpecs(spec);
  ASSERT_FALSE(specs.ok()) << spec;
  EXPECT_EQ(specs.status().code(), absl::StatusCode::kInvalidArgument) << spec;
  for (const std::string& fact : facts) {
    EXPECT_THAT(std::string(specs.status().message()), HasSubstr(fact)) << spec;
  }
}

TEST(ParseDeviceSpecsTest, BadInputsNameTheItemAndWhy) {
  ExpectBad("CPU:0{speed=3}", {"CPU:0{speed=3}", "unknown key 'speed'"});
  ExpectBad("CPU:0{mem=lots}", {"mem 'lots'", "not a size"});
  ExpectBad("CPU:0{mem=5XB}", {"mem '5XB'"});
  ExpectBad("CPU:0{gflops=fast}", {"gflops 'fast'", "positive number"});
  ExpectBad("CPU:0{gbps=-1}", {"gbps '-1'"});
  ExpectBad("CPU:0{latency_us=-3}", {"latency_us '-3'"});
  ExpectBad("CPU:0,,CPU:1", {"item 2 is empty"});
  ExpectBad("", {"item 1 is empty"});
  ExpectBad("TPU", {"'TPU'", "malformed device name"});
  ExpectBad("/job:w", {"no device type"});
  ExpectBad("CPU:0{mem=1G", {"must end with '}'"});
  ExpectBad("CPU:0{mem}", {"'mem' is not key=value"});
  ExpectBad("CPU:0,/device:CPU:0", {"listed twice"});
}

// ---------------------------------------------------------------------------
// Node costs.

class CostModelTest : public ::testing::Test {
 protected:
  CostModel Build(const CostModelOptions& options = {}) {
    EXPECT_TRUE(root_.ok()) << root_.status();
    absl::StatusOr<CostModel> model = CostModel::Build(*root_.graph(), options);
    EXPECT_TRUE(model.ok()) << model.status();
    return *std::move(model);
  }
  Scope root_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(CostModelTest, MatMulFlopsAndBytes) {
  Output a = ops::Placeholder(root_.WithOpName("a"), DT_FLOAT, {.shape = {8, 16}});
  Output b = ops::Placeholder(root_.WithOpName("b"), DT_FLOAT, {.shape = {16, 4}});
  Output bt = ops::Placeholder(root_.WithOpName("bt"), DT_FLOAT, {.shape = {4, 16}});
  Output mm = ops::MatMul(root_.WithOpName("mm"), a, b);
  Output mmt = ops::MatMul(root_.WithOpName("mmt"), a, bt, {.transpose_b = true});
  Output at = ops::Placeholder(root_.WithOpName("at"), DT_FLOAT, {.shape = {16, 8}});
  Output mta = ops::MatMul(root_.WithOpName("mta"), at, b, {.transpose_a = true});
  CostModel cost = Build();
  for (const Output& o : {mm, mmt, mta}) {
    const NodeCost& c = cost.cost(*o.node);
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * 8 * 4 * 16) << o.node->name();
    ASSERT_EQ(c.output_bytes.size(), 1u);
    EXPECT_EQ(c.output_bytes[0], 8 * 4 * 4);
    EXPECT_EQ(c.total_output_bytes(), 128);
    EXPECT_EQ(c.persistent_bytes, 0);
    EXPECT_TRUE(c.shapes_known);
  }
  EXPECT_DOUBLE_EQ(cost.cost(*a.node).flops, 0);  // a Placeholder computes nothing
  EXPECT_EQ(cost.cost(*a.node).output_bytes[0], 8 * 16 * 4);
}

TEST_F(CostModelTest, Conv2DAndBackpropFlops) {
  // 1x8x8x3 input, 3x3x3x16 filter, SAME, stride 1: 8*8*16 outputs, 27 MACs each.
  Output x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT, {.shape = {1, 8, 8, 3}});
  Output f = ops::Placeholder(root_.WithOpName("f"), DT_FLOAT, {.shape = {3, 3, 3, 16}});
  Output y = ops::Conv2D(root_.WithOpName("conv"), x, f, {1, 1, 1, 1}, "SAME");
  Output dy = ops::Placeholder(root_.WithOpName("dy"), DT_FLOAT, {.shape = {1, 8, 8, 16}});
  Output dx = ops::Conv2DBackpropInput(root_.WithOpName("dx"), ops::Shape(root_, x), f, dy,
                                       {1, 1, 1, 1}, "SAME");
  Output df = ops::Conv2DBackpropFilter(root_.WithOpName("df"), x, ops::Shape(root_, f), dy,
                                        {1, 1, 1, 1}, "SAME");
  CostModel cost = Build();
  const double forward = 2.0 * (8 * 8 * 16) * (3 * 3 * 3);
  EXPECT_DOUBLE_EQ(cost.cost(*y.node).flops, forward);
  EXPECT_EQ(cost.cost(*y.node).output_bytes[0], 8 * 8 * 16 * 4);
  EXPECT_DOUBLE_EQ(cost.cost(*dx.node).flops, forward);
  EXPECT_DOUBLE_EQ(cost.cost(*df.node).flops, forward);
  EXPECT_EQ(cost.cost(*df.node).output_bytes[0], 3 * 3 * 3 * 16 * 4);
}

TEST_F(CostModelTest, ElementwiseTranscendentalReductionAndShapeOps) {
  Output a = ops::Placeholder(root_.WithOpName("a"), DT_FLOAT, {.shape = {10, 20}});
  Output b = ops::Placeholder(root_.WithOpName("b"), DT_FLOAT, {.shape = {20}});
  Output add = ops::Add(root_.WithOpName("add"), a, b);  // broadcast: 200 outputs
  Output e = ops::Exp(root_.WithOpName("exp"), a);
  Output sum = ops::Sum(root_.WithOpName("sum"), a, {1});
  Output r = ops::Reshape(root_.WithOpName("reshape"), a, {200});
  Output i64 = ops::Placeholder(root_.WithOpName("i64"), DT_INT64, {.shape = {3, 5}});
  Output neg = ops::Neg(root_.WithOpName("neg"), i64);
  CostModel cost = Build();
  EXPECT_DOUBLE_EQ(cost.cost(*add.node).flops, 200);
  EXPECT_EQ(cost.cost(*add.node).output_bytes[0], 800);
  EXPECT_GT(cost.cost(*e.node).flops, 200);  // a few per element
  EXPECT_LE(cost.cost(*e.node).flops, 200 * 10);
  EXPECT_DOUBLE_EQ(cost.cost(*sum.node).flops, 200);  // one per input element
  EXPECT_EQ(cost.cost(*sum.node).output_bytes[0], 40);
  EXPECT_DOUBLE_EQ(cost.cost(*r.node).flops, 0);
  EXPECT_EQ(cost.cost(*neg.node).output_bytes[0], 15 * 8);
}

TEST_F(CostModelTest, UnknownBatchUsesUnknownDim) {
  Output x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT, {.shape = {-1, 16}});
  Output w = ops::Placeholder(root_.WithOpName("w"), DT_FLOAT, {.shape = {16, 4}});
  Output mm = ops::MatMul(root_.WithOpName("mm"), x, w);
  Output u = ops::Placeholder(root_.WithOpName("u"), DT_FLOAT);  // unknown rank
  CostModel cost = Build({.unknown_dim = 64});
  EXPECT_DOUBLE_EQ(cost.cost(*mm.node).flops, 2.0 * 64 * 4 * 16);
  EXPECT_EQ(cost.cost(*mm.node).output_bytes[0], 64 * 4 * 4);
  EXPECT_FALSE(cost.cost(*mm.node).shapes_known);
  EXPECT_TRUE(cost.cost(*w.node).shapes_known);
  EXPECT_EQ(cost.cost(*u.node).output_bytes[0], 64 * 4);
  EXPECT_FALSE(cost.cost(*u.node).shapes_known);

  absl::StatusOr<CostModel> bad = CostModel::Build(*root_.graph(), {.unknown_dim = 0});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("unknown_dim"));
}

TEST_F(CostModelTest, VariablesArePersistentAndRefOutputsAlias) {
  Output v = ops::Variable(root_.WithOpName("v"), TensorShape({100, 10}), DT_FLOAT);
  Output g = ops::Placeholder(root_.WithOpName("g"), DT_FLOAT, {.shape = {100, 10}});
  Output apply = ops::ApplyGradientDescent(root_.WithOpName("apply"), v, 0.1f, g);
  CostModel cost = Build();
  const NodeCost& var = cost.cost(*v.node);
  EXPECT_EQ(var.persistent_bytes, 4000);
  EXPECT_EQ(var.output_bytes[0], 4000);  // the ref output: the variable's size
  EXPECT_EQ(var.ref_output_bytes, 4000);
  EXPECT_EQ(var.memory_bytes(), 4000);   // counted once
  EXPECT_DOUBLE_EQ(var.flops, 0);
  EXPECT_DOUBLE_EQ(cost.cost(*apply.node).flops, 2 * 1000);
  EXPECT_EQ(cost.cost(*apply.node).memory_bytes(), 0);
  EXPECT_EQ(cost.cost(*g.node).memory_bytes(), 4000);
}

// An initial value read only by its Assign becomes the variable's buffer
// (Assign adopts it), so only the variable counts; a value with a second
// reader is its own buffer.
TEST_F(CostModelTest, InitialValueOnlyAssignedIsCountedAsTheVariable) {
  Output v = ops::Variable(root_.WithOpName("v"), TensorShape({100, 10}), DT_FLOAT);
  Output fill = ops::Fill(root_.WithOpName("fill"), {100, 10}, 1.0f);
  ops::Assign(root_.WithOpName("init"), v, fill);
  Output w = ops::Variable(root_.WithOpName("w"), TensorShape({100, 10}), DT_FLOAT);
  Output shared = ops::Fill(root_.WithOpName("shared"), {100, 10}, 2.0f);
  ops::Assign(root_.WithOpName("init_w"), w, shared);
  ops::Identity(root_.WithOpName("read"), shared);
  CostModel cost = Build();
  EXPECT_EQ(cost.cost(*fill.node).output_bytes[0], 4000);
  EXPECT_EQ(cost.cost(*fill.node).memory_bytes(), 0);
  EXPECT_EQ(cost.cost(*v.node).memory_bytes(), 4000);
  EXPECT_EQ(cost.cost(*shared.node).memory_bytes(), 4000);
}

TEST(CostModelTimeTest, ComputeAndTransferSeconds) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Placeholder(root.WithOpName("a"), DT_FLOAT, {.shape = {100, 100}});
  Output mm = ops::MatMul(root.WithOpName("mm"), a, a);
  Output tiny = ops::Neg(root.WithOpName("tiny"), ops::Const(root, 1.0f));
  absl::StatusOr<CostModel> cost = CostModel::Build(*root.graph());
  ASSERT_TRUE(cost.ok()) << cost.status();
  DeviceSpec fast{.name = "/device:GPU:0", .flops_per_second = 2e12};
  DeviceSpec slow{.name = "/device:CPU:0", .flops_per_second = 2e9, .link_bytes_per_second = 1e9,
                  .link_latency_seconds = 1e-5};
  EXPECT_DOUBLE_EQ(cost->ComputeSeconds(*mm.node, slow), 2e6 / 2e9);
  EXPECT_DOUBLE_EQ(cost->ComputeSeconds(*mm.node, fast), 1e-6);   // floor of 1 us
  EXPECT_DOUBLE_EQ(cost->ComputeSeconds(*tiny.node, slow), 1e-6);
  EXPECT_DOUBLE_EQ(cost->ComputeSeconds(*a.node, slow), 0);       // no FLOPs
  EXPECT_DOUBLE_EQ(CostModel::TransferSeconds(1000000, slow, slow), 0);
  // The slower link and the larger latency govern.
  EXPECT_DOUBLE_EQ(CostModel::TransferSeconds(1000000, fast, slow), 20e-6 + 1e-3);
}

}  // namespace
}  // namespace sluice
