// CompileSignature on its own, over two local CPU devices: partitions with
// their transfers, the placement group of SessionConfig (default device,
// soft placement, auto placement) and fuse_ops each changing what the
// partitions hold, and its errors.
#include "session/compile_signature.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "ops/builtins.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "runtime/local_devices.h"

namespace sluice {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

class CompileSignatureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LocalDevicesOptions local;
    local.num_virtual_cpus = 1;
    local.cpu_threads = 1;
    local.virtual_cpu_threads = 1;
    absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateLocalDevices(local);
    ASSERT_TRUE(devices.ok()) << devices.status();
    owned_ = *std::move(devices);
    config_ = BuiltinSessionConfig();
  }

  absl::StatusOr<CompiledSignature> Compile(const Scope& s, std::vector<std::string> feeds,
                                            std::vector<std::string> fetches,
                                            std::vector<std::string> targets = {}) {
    EXPECT_TRUE(s.ok()) << s.status();
    SignatureCompileOptions o;
    for (const auto& d : owned_) o.devices.push_back(d.get());
    o.config = &config_;
    return CompileSignature(*s.graph(), feeds, fetches, targets, o);
  }

  static std::map<std::string, int> OpCounts(const tensorflow::GraphDef& g) {
    std::map<std::string, int> counts;
    for (const tensorflow::NodeDef& n : g.node()) ++counts[n.op()];
    return counts;
  }

  static const tensorflow::NodeDef* Find(const tensorflow::GraphDef& g, const std::string& name) {
    for (const tensorflow::NodeDef& n : g.node()) {
      if (n.name() == name) return &n;
    }
    return nullptr;
  }

  std::vector<std::unique_ptr<Device>> owned_;
  SessionConfig config_;
};

TEST_F(CompileSignatureTest, CrossDeviceEdgeBecomesASendRecvPair) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice("/device:CPU:0"), DT_FLOAT);
  ops::Square(s.WithOpName("y").WithDevice("/device:CPU:1"), x);
  ops::Neg(s.WithOpName("unused"), x);  // pruned: not in the signature
  absl::StatusOr<CompiledSignature> c = Compile(s, {"x:0"}, {"y:0"});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->partitions.size(), 2u);
  EXPECT_EQ(c->single_partition, nullptr);  // two partitions: none kept whole
  EXPECT_EQ(OpCounts(c->partitions.at(kCpu0))["_Send"], 1);
  EXPECT_EQ(OpCounts(c->partitions.at(kCpu1))["_Recv"], 1);
  EXPECT_NE(Find(c->partitions.at(kCpu1), "y"), nullptr);
  EXPECT_EQ(Find(c->partitions.at(kCpu0), "unused"), nullptr);
  EXPECT_EQ(Find(c->partitions.at(kCpu1), "unused"), nullptr);
  EXPECT_TRUE(c->collective_groups.empty());
}

TEST_F(CompileSignatureTest, DefaultDevicePlacesUnrequestedNodes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Square(s.WithOpName("y"), ops::Const(s.WithOpName("c"), 3.0f));
  config_.default_device = "/device:CPU:1";
  absl::StatusOr<CompiledSignature> c = Compile(s, {}, {"y:0"});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->partitions.size(), 1u);
  EXPECT_EQ(c->partitions.begin()->first, kCpu1);
  EXPECT_NE(c->single_partition, nullptr);  // one partition: the placed graph itself
  EXPECT_EQ(Find(c->partitions.at(kCpu1), "y")->device(), kCpu1);
}

TEST_F(CompileSignatureTest, SoftPlacementRelaxesAMissingDevice) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Square(s.WithOpName("sq").WithDevice("/device:GPU:0"), ops::Const(s, 3.0f));
  absl::StatusOr<CompiledSignature> hard = Compile(s, {}, {"sq:0"});
  ASSERT_FALSE(hard.ok());
  EXPECT_NE(hard.status().message().find("'sq'"), std::string::npos) << hard.status();
  EXPECT_NE(hard.status().message().find("GPU:0"), std::string::npos) << hard.status();
  config_.allow_soft_placement = true;
  absl::StatusOr<CompiledSignature> soft = Compile(s, {}, {"sq:0"});
  ASSERT_TRUE(soft.ok()) << soft.status();
  EXPECT_EQ(Find(soft->partitions.begin()->second, "sq")->device(), kCpu0);
}

TEST_F(CompileSignatureTest, FuseOpsFollowsTheConfig) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output w = ops::Const(s.WithOpName("w"), {1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}));
  Output b = ops::Const(s.WithOpName("b"), {0.5f, -0.5f});
  ops::Relu(s.WithOpName("relu"), ops::BiasAdd(s.WithOpName("bias"), ops::MatMul(s, x, w), b));

  config_.fuse_ops = true;
  absl::StatusOr<CompiledSignature> fused = Compile(s, {"x:0"}, {"relu:0"});
  ASSERT_TRUE(fused.ok()) << fused.status();
  std::map<std::string, int> f = OpCounts(fused->partitions.at(kCpu0));
  EXPECT_EQ(f["_FusedMatMul"], 1);
  EXPECT_EQ(f["MatMul"] + f["BiasAdd"] + f["Relu"], 0);

  config_.fuse_ops = false;
  absl::StatusOr<CompiledSignature> plain = Compile(s, {"x:0"}, {"relu:0"});
  ASSERT_TRUE(plain.ok()) << plain.status();
  std::map<std::string, int> p = OpCounts(plain->partitions.at(kCpu0));
  EXPECT_EQ(p["_FusedMatMul"], 0);
  EXPECT_EQ(p["MatMul"], 1);
  EXPECT_EQ(p["BiasAdd"], 1);
  EXPECT_EQ(p["Relu"], 1);
}

TEST_F(CompileSignatureTest, AutoPlaceKeepsExplicitRequestsAndPlacesTheRest) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Const(s.WithOpName("a").WithDevice("/device:CPU:1"), 2.0f);
  Output b = ops::Square(s.WithOpName("b"), a);
  ops::Neg(s.WithOpName("c"), b);
  config_.auto_place = true;
  absl::StatusOr<CompiledSignature> c = Compile(s, {}, {"c:0"});
  ASSERT_TRUE(c.ok()) << c.status();
  int placed = 0;
  for (const auto& [device, def] : c->partitions) {
    EXPECT_TRUE(device == kCpu0 || device == kCpu1) << device;
    for (const tensorflow::NodeDef& n : def.node()) {
      EXPECT_EQ(n.device(), device) << n.name();
      if (n.name() == "a") EXPECT_EQ(device, kCpu1);
      if (n.name() == "a" || n.name() == "b" || n.name() == "c") ++placed;
    }
  }
  EXPECT_EQ(placed, 3);
}

TEST_F(CompileSignatureTest, ErrorsNameWhatIsMissing) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Square(s.WithOpName("y"), ops::Const(s, 3.0f));
  absl::StatusOr<CompiledSignature> unknown = Compile(s, {}, {"nope:0"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("nope"), std::string::npos) << unknown.status();

  config_.kernels = nullptr;
  absl::StatusOr<CompiledSignature> no_kernels = Compile(s, {}, {"y:0"});
  ASSERT_FALSE(no_kernels.ok());
  EXPECT_EQ(no_kernels.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(no_kernels.status().message().find("kernel registry"), std::string::npos);

  SignatureCompileOptions no_config;
  EXPECT_FALSE(CompileSignature(*s.graph(), {}, {"y:0"}, {}, no_config).ok());
}

}  // namespace
}  // namespace sluice
