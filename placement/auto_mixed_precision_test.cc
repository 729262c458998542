// The mixed-precision rewrite: which nodes it converts (allow, infer, clear
// and deny lists; device types; kernels), where the casts go, and that
// training with it through a session (SessionConfig::mixed_precision) follows
// float training within bfloat16's rounding, with float master weights.
#include "placement/auto_mixed_precision.h"

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/nn/batch_norm_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/state/state_ops.h"
#include "ops/training/optimizers.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu0[] = "/job:localhost/replica:0/task:0/device:GPU:0";

class NeverRun : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext*) override {
    return absl::UnimplementedError("the rewrite's tests never run kernels");
  }
};

// A registry where `device` has bfloat16 kernels for `ops` and the casts.
std::unique_ptr<KernelRegistry> Bf16Kernels(const std::string& device,
                                            const std::vector<std::string>& ops) {
  auto k = std::make_unique<KernelRegistry>();
  for (const std::string& op : ops) {
    k->Register<NeverRun>(KernelDef(op, device).TypeConstraint("T", DT_BFLOAT16));
  }
  k->Register<NeverRun>(KernelDef("Cast", device)
                            .TypeConstraint("SrcT", DT_FLOAT)
                            .TypeConstraint("DstT", DT_BFLOAT16));
  k->Register<NeverRun>(KernelDef("Cast", device)
                            .TypeConstraint("SrcT", DT_BFLOAT16)
                            .TypeConstraint("DstT", DT_FLOAT));
  return k;
}

void PlaceAllOn(Graph* g, const std::string& device) {
  for (Node* n : g->nodes()) n->set_assigned_device(device);
}

DataType TypeOf(const Graph& g, const std::string& name) {
  const Node* n = g.FindNode(name);
  EXPECT_NE(n, nullptr) << name;
  return n == nullptr ? DT_INVALID : n->attrs().at("T").type();
}

// The name and op of the node feeding `name`'s input `i` ("" when none).
std::string InputName(const Graph& g, const std::string& name, int i) {
  const Node* n = g.FindNode(name);
  if (n == nullptr || n->input_edge(i) == nullptr) return "";
  return n->input_edge(i)->src->name();
}
std::string InputOp(const Graph& g, const std::string& name, int i) {
  const Node* n = g.FindNode(name);
  if (n == nullptr || n->input_edge(i) == nullptr) return "";
  return n->input_edge(i)->src->op();
}

// The node feeding `name`'s input `i`.
const Node* InputOf(const Graph& g, const std::string& name, int i) {
  const Node* n = g.FindNode(name);
  return n == nullptr || n->input_edge(i) == nullptr ? nullptr : n->input_edge(i)->src;
}

// x -> MatMul(w) -> BiasAdd(b) -> Relu -> MatMul(w2) -> Exp -> Add(Exp, MatMul2)
struct Chain {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Chain() {
    Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    Output w = ops::Placeholder(s.WithOpName("w"), DT_FLOAT);
    Output b = ops::Placeholder(s.WithOpName("b"), DT_FLOAT);
    Output h = ops::MatMul(s.WithOpName("mm1"), x, w);
    h = ops::BiasAdd(s.WithOpName("bias"), h, b);
    h = ops::Relu(s.WithOpName("relu"), h);
    Output y = ops::MatMul(s.WithOpName("mm2"), h, w);
    Output e = ops::Exp(s.WithOpName("exp"), y);
    ops::AddV2(s.WithOpName("sum"), e, y);
    ops::Identity(s.WithOpName("after_exp"), e);
    EXPECT_TRUE(s.ok()) << s.status();
  }
  Graph* g() const { return s.graph(); }
};

TEST(AutoMixedPrecisionTest, GemmsAndTheOpsBetweenThemConvertWithCastsAtTheEdges) {
  Chain c;
  PlaceAllOn(c.g(), kGpu0);
  auto k = Bf16Kernels("GPU", {"MatMul", "BiasAdd", "Relu", "Exp", "AddV2", "Identity"});
  MixedPrecisionOptions o;
  o.kernels = k.get();
  absl::StatusOr<MixedPrecisionStats> st = AutoMixedPrecision(c.g(), o);
  ASSERT_TRUE(st.ok()) << st.status();
  // Allow: both MatMuls. Infer: BiasAdd (fed by mm1). Clear: Relu. Deny:
  // Exp stays float, so does AddV2 (an input from a deny node), and the
  // Identity after Exp (fed by nothing converted).
  EXPECT_EQ(TypeOf(*c.g(), "mm1"), DT_BFLOAT16);
  EXPECT_EQ(TypeOf(*c.g(), "bias"), DT_BFLOAT16);
  EXPECT_EQ(TypeOf(*c.g(), "relu"), DT_BFLOAT16);
  EXPECT_EQ(TypeOf(*c.g(), "mm2"), DT_BFLOAT16);
  EXPECT_EQ(TypeOf(*c.g(), "exp"), DT_FLOAT);
  EXPECT_EQ(TypeOf(*c.g(), "sum"), DT_FLOAT);
  EXPECT_EQ(TypeOf(*c.g(), "after_exp"), DT_FLOAT);
  EXPECT_EQ(st->converted, 4);
  // Converted nodes feed each other directly; float meets bfloat16 through
  // a cast. w feeds both MatMuls through one shared cast.
  EXPECT_EQ(InputName(*c.g(), "bias", 0), "mm1");
  EXPECT_EQ(InputName(*c.g(), "relu", 0), "bias");
  const Node* wcast = InputOf(*c.g(), "mm1", 1);
  ASSERT_NE(wcast, nullptr);
  EXPECT_EQ(wcast->op(), "Cast");
  EXPECT_EQ(wcast->attrs().at("DstT").type(), DT_BFLOAT16);
  EXPECT_EQ(InputOf(*c.g(), "mm2", 1), wcast);
  EXPECT_EQ(InputOp(*c.g(), "bias", 1), "Cast");  // the bias vector
  // mm2's result goes up to float once, for both of its float consumers.
  const Node* up = InputOf(*c.g(), "exp", 0);
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->op(), "Cast");
  EXPECT_EQ(up->attrs().at("SrcT").type(), DT_BFLOAT16);
  EXPECT_EQ(up->attrs().at("DstT").type(), DT_FLOAT);
  EXPECT_EQ(InputOf(*c.g(), "sum", 1), up);
  // x, w, b down; mm2 up.
  EXPECT_EQ(st->casts, 4);
  // Casts sit on the device of the node they serve.
  EXPECT_EQ(wcast->assigned_device(), kGpu0);
  EXPECT_EQ(up->assigned_device(), kGpu0);
}

TEST(AutoMixedPrecisionTest, OnlyEnabledDeviceTypesWithTheKernelConvert) {
  {
    Chain c;
    PlaceAllOn(c.g(), kCpu0);
    auto k = Bf16Kernels("CPU", {"MatMul"});
    MixedPrecisionOptions o;  // GPU only
    o.kernels = k.get();
    absl::StatusOr<MixedPrecisionStats> st = AutoMixedPrecision(c.g(), o);
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(st->converted, 0);
    EXPECT_EQ(TypeOf(*c.g(), "mm1"), DT_FLOAT);
  }
  {
    // CPU enabled, but only MatMul has a bf16 kernel: BiasAdd and Relu stay
    // float, and each MatMul is wrapped in casts.
    Chain c;
    PlaceAllOn(c.g(), kCpu0);
    auto k = Bf16Kernels("CPU", {"MatMul"});
    MixedPrecisionOptions o;
    o.kernels = k.get();
    o.device_types = {"CPU"};
    absl::StatusOr<MixedPrecisionStats> st = AutoMixedPrecision(c.g(), o);
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(st->converted, 2);
    EXPECT_EQ(TypeOf(*c.g(), "mm1"), DT_BFLOAT16);
    EXPECT_EQ(TypeOf(*c.g(), "bias"), DT_FLOAT);
    EXPECT_EQ(InputOp(*c.g(), "bias", 0), "Cast");
    EXPECT_EQ(InputOp(*c.g(), "mm2", 0), "Cast");
  }
  {
    // No cast kernels on the device: nothing converts.
    Chain c;
    PlaceAllOn(c.g(), kGpu0);
    KernelRegistry k;
    k.Register<NeverRun>(KernelDef("MatMul", "GPU").TypeConstraint("T", DT_BFLOAT16));
    MixedPrecisionOptions o;
    o.kernels = &k;
    absl::StatusOr<MixedPrecisionStats> st = AutoMixedPrecision(c.g(), o);
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(st->converted, 0);
  }
}

// Deny carries forward: Exp -> Identity -> AddV2(., MatMul) stays float
// though the MatMul converts.
TEST(AutoMixedPrecisionTest, DenyCarriesForwardThroughClearAndInferOps) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output mm = ops::MatMul(s.WithOpName("mm"), x, x);
  Output e = ops::Identity(s.WithOpName("id"), ops::Exp(s.WithOpName("exp"), x));
  ops::AddV2(s.WithOpName("sum"), e, mm);
  ASSERT_TRUE(s.ok()) << s.status();
  PlaceAllOn(s.graph(), kGpu0);
  auto k = Bf16Kernels("GPU", {"MatMul", "Identity", "AddV2", "Exp"});
  MixedPrecisionOptions o;
  o.kernels = k.get();
  ASSERT_TRUE(AutoMixedPrecision(s.graph(), o).ok());
  EXPECT_EQ(TypeOf(*s.graph(), "mm"), DT_BFLOAT16);
  EXPECT_EQ(TypeOf(*s.graph(), "id"), DT_FLOAT);
  EXPECT_EQ(TypeOf(*s.graph(), "sum"), DT_FLOAT);
}

// A node whose kMixedPrecisionDenyAttr is true stays float like a deny-list
// op, whatever feeds it, and denies the infer and clear nodes it feeds.
TEST(AutoMixedPrecisionTest, TheDenyAttrKeepsANodeFloat) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output mm = ops::MatMul(s.WithOpName("mm"), x, x);
  Output kept = s.WithOpName("kept")
                    .Op("Mul")
                    .Input(mm)
                    .Input(x)
                    .Attr(kMixedPrecisionDenyAttr, true)
                    .Finalize1();
  ops::Identity(s.WithOpName("after"), kept);
  ops::Mul(s.WithOpName("converted"), mm, x);
  s.WithOpName("not_kept")
      .Op("Mul")
      .Input(mm)
      .Input(x)
      .Attr(kMixedPrecisionDenyAttr, false)
      .Finalize();
  ASSERT_TRUE(s.ok()) << s.status();
  PlaceAllOn(s.graph(), kGpu0);
  auto k = Bf16Kernels("GPU", {"MatMul", "Mul", "Identity"});
  MixedPrecisionOptions o;
  o.kernels = k.get();
  ASSERT_TRUE(AutoMixedPrecision(s.graph(), o).ok());
  EXPECT_EQ(TypeOf(*s.graph(), "mm"), DT_BFLOAT16);
  EXPECT_EQ(TypeOf(*s.graph(), "kept"), DT_FLOAT);
  EXPECT_EQ(InputOp(*s.graph(), "kept", 0), "Cast");  // mm's product, cast up
  EXPECT_EQ(TypeOf(*s.graph(), "after"), DT_FLOAT);
  EXPECT_EQ(TypeOf(*s.graph(), "converted"), DT_BFLOAT16);
  EXPECT_EQ(TypeOf(*s.graph(), "not_kept"), DT_BFLOAT16);
}

// Only T's slots change: a FusedBatchNormV3 after a converted Conv2D takes
// its input and gives y in bfloat16, while its U-typed scale, offset and
// statistics stay float, uncast.
TEST(AutoMixedPrecisionTest, OnlyTheSlotsOfTChange) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output f = ops::Placeholder(s.WithOpName("f"), DT_FLOAT);
  Output conv = ops::Conv2D(s.WithOpName("conv"), x, f, {1, 1, 1, 1}, "SAME");
  Output gamma = ops::Placeholder(s.WithOpName("gamma"), DT_FLOAT);
  ops::FusedBatchNormOutputs bn =
      ops::FusedBatchNormV3(s.WithOpName("bn"), conv, gamma, gamma, gamma, gamma);
  ops::Identity(s.WithOpName("y"), bn.y);
  ops::Identity(s.WithOpName("mean"), bn.batch_mean);
  ASSERT_TRUE(s.ok()) << s.status();
  PlaceAllOn(s.graph(), kGpu0);
  auto k = Bf16Kernels("GPU", {"Conv2D", "FusedBatchNormV3"});
  MixedPrecisionOptions o;
  o.kernels = k.get();
  absl::StatusOr<MixedPrecisionStats> st = AutoMixedPrecision(s.graph(), o);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(TypeOf(*s.graph(), "bn"), DT_BFLOAT16);
  EXPECT_EQ(InputName(*s.graph(), "bn", 0), "conv");
  EXPECT_EQ(InputName(*s.graph(), "bn", 1), "gamma");  // U: no cast
  EXPECT_EQ(InputName(*s.graph(), "mean", 0), "bn");   // a U output: no cast
  EXPECT_EQ(InputOp(*s.graph(), "y", 0), "Cast");      // y, bfloat16, up to float
  // x and f down; y up.
  EXPECT_EQ(st->casts, 3);
}

TEST(AutoMixedPrecisionTest, BadOptionsAreInvalidArgument) {
  Chain c;
  MixedPrecisionOptions o;
  EXPECT_EQ(AutoMixedPrecision(c.g(), o).status().code(), absl::StatusCode::kInvalidArgument);
  auto k = Bf16Kernels("GPU", {});
  o.kernels = k.get();
  o.type = DT_DOUBLE;
  absl::Status s = AutoMixedPrecision(c.g(), o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bfloat16 or half"), std::string::npos) << s;
}

TEST(AutoMixedPrecisionTest, RetypingAConnectedNodeIsRefused) {
  Chain c;
  absl::Status s = c.g()->SetTypeAttr(c.g()->FindNode("relu"), "T", DT_BFLOAT16);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("still connected"), std::string::npos) << s;
  s = c.g()->SetTypeAttr(c.g()->FindNode("relu"), "Tidx", DT_BFLOAT16);
  EXPECT_NE(s.message().find("no type attr"), std::string::npos) << s;
}

// Deterministic values in [-1, 1).
Tensor Values(const TensorShape& shape, uint32_t seed) {
  Tensor t(DT_FLOAT, shape);
  uint32_t state = seed * 2654435761u + 1;
  for (float& v : t.flat<float>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return t;
}

// A small CNN trained by SGD: x [4,6,6,2] -> 3x3 conv 4 (ReLU) -> dense 3.
struct Cnn {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x, labels, logits, loss, conv;
  std::vector<Output> vars;
  Node* train = nullptr;
  Node* init = nullptr;

  Cnn() {
    x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    labels = ops::Placeholder(s.WithOpName("labels"), DT_INT32);
    ops::VariableAndInit f = ops::VariableWithInit(
        s.WithOpName("filter"), ops::Const(s, Values(TensorShape({3, 3, 2, 4}), 7)));
    ops::VariableAndInit w = ops::VariableWithInit(
        s.WithOpName("dense"), ops::Const(s, Values(TensorShape({4 * 4 * 4, 3}), 8)));
    ops::VariableAndInit b =
        ops::VariableWithInit(s.WithOpName("bias"), ops::Const(s, Values(TensorShape({3}), 9)));
    vars = {f.var, w.var, b.var};
    conv = ops::Conv2D(s.WithOpName("conv"), x, f.var, {1, 1, 1, 1}, "VALID");
    Output h = ops::Relu(s, conv);
    h = ops::Reshape(s, h, ops::Const(s, std::vector<int32_t>{-1, 4 * 4 * 4}));
    logits = ops::BiasAdd(s.WithOpName("logits"), ops::MatMul(s.WithOpName("mm"), h, w.var), b.var);
    loss = ops::Mean(s.WithOpName("loss"),
                     ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels)[0], {0});
    GradientDescentOptimizer sgd(0.1);
    absl::StatusOr<Node*> t = sgd.Minimize(s.WithOpName("train"), loss, vars);
    EXPECT_TRUE(t.ok()) << t.status();
    if (t.ok()) train = *t;
    init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  }

  std::vector<std::pair<Output, Tensor>> Feeds() const {
    Tensor y(DT_INT32, TensorShape({4}));
    for (int i = 0; i < 4; ++i) y.flat<int32_t>()[i] = i % 3;
    return {{x, Values(TensorShape({4, 6, 6, 2}), 1)}, {labels, y}};
  }
};

std::unique_ptr<Session> MakeSession(const Scope& s, bool mixed) {
  SessionConfig config = BuiltinSessionConfig();
  if (mixed) {
    config.mixed_precision = SessionConfig::MixedPrecision::kBfloat16;
    config.mixed_precision_on_any_cpu = true;  // whatever this CPU has
  }
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(config, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

// Op (with its T when it has one) -> nodes of the step, over every partition.
std::map<std::string, int> OpCounts(const RunMetadata& metadata) {
  std::map<std::string, int> counts;
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      auto t = n.attr().find("T");
      ++counts[t == n.attr().end() ? n.op()
                                   : absl::StrCat(n.op(), ":", DataTypeName(t->second.type()))];
    }
  }
  return counts;
}

TEST(AutoMixedPrecisionTest, TrainingInBfloat16FollowsFloatWithFloatMasterWeights) {
  Cnn m;
  std::unique_ptr<Session> mixed = MakeSession(m.s, true), full = MakeSession(m.s, false);
  ASSERT_TRUE(mixed && full);
  ASSERT_TRUE(mixed->Run({}, {}, {m.init}).ok());
  ASSERT_TRUE(full->Run({}, {}, {m.init}).ok());
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata metadata;
  std::vector<float> mixed_losses, full_losses;
  for (int i = 0; i < 8; ++i) {
    absl::StatusOr<std::vector<Tensor>> a =
        mixed->Run(m.Feeds(), {m.loss, m.conv}, {m.train}, options, &metadata);
    absl::StatusOr<std::vector<Tensor>> b = full->Run(m.Feeds(), {m.loss}, {m.train});
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    // A converted node's value is fetched as float.
    EXPECT_EQ((*a)[1].dtype(), DT_FLOAT);
    mixed_losses.push_back((*a)[0].scalar<float>());
    full_losses.push_back((*b)[0].scalar<float>());
  }
  for (size_t i = 0; i < full_losses.size(); ++i) {
    // bfloat16 keeps 8 bits: the losses agree to about 1 %.
    EXPECT_NEAR(mixed_losses[i], full_losses[i], 0.02f * std::abs(full_losses[i])) << "step " << i;
  }
  EXPECT_LT(mixed_losses.back(), mixed_losses.front() * 0.9f);  // it trains
  // The partition graphs show the rewrite: the convolution, its filter
  // gradient and the three MatMuls in bfloat16 (the conv's input gradient is
  // not needed: x is fed), the updates in float on float variables.
  std::map<std::string, int> counts = OpCounts(metadata);
  EXPECT_EQ(counts["Conv2D:bfloat16"], 1);
  EXPECT_EQ(counts["Conv2DBackpropFilter:bfloat16"], 1);
  EXPECT_EQ(counts["MatMul:bfloat16"], 3);
  EXPECT_EQ(counts["MatMul:float"], 0);
  EXPECT_EQ(counts["ApplyGradientDescent:float"], 3);
  EXPECT_GT(counts["Cast"], 0);
  // The variables stayed float and moved like the float model's.
  std::vector<Output> fetch(m.vars.begin(), m.vars.end());
  absl::StatusOr<std::vector<Tensor>> va = mixed->Run({}, fetch, {});
  absl::StatusOr<std::vector<Tensor>> vb = full->Run({}, fetch, {});
  ASSERT_TRUE(va.ok() && vb.ok());
  for (size_t i = 0; i < fetch.size(); ++i) {
    ASSERT_EQ((*va)[i].dtype(), DT_FLOAT);
    absl::Span<const float> a = (*va)[i].flat<float>(), b = (*vb)[i].flat<float>();
    for (size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(a[j], b[j], 0.02f) << i << "/" << j;
  }
}

}  // namespace
}  // namespace sluice
