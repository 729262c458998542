// The multi-tensor update rewrite: through a session (SessionConfig::
// group_updates_on = {"CPU"}, so that CPU devices take part), a step's updates
// become one node per device and the variables move exactly as with the
// separate updates; and the cases where it must not group.
#include "placement/group_updates.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "graph/algorithm.h"
#include "graph/gradients.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/control_flow/control_flow_ops.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_ops.h"
#include "ops/training/optimizers.h"
#include "ops/training/training_ops.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

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

// A three-layer MLP, x [8,6] -> 5 -> 4 -> 3 classes, its last layer on
// `last_device` (the others on CPU:0), trained by `optimizer`.
struct Mlp {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x, labels, loss;
  std::vector<Output> vars;
  Node* train = nullptr;
  Node* init = nullptr;

  Mlp(Optimizer* optimizer, const std::string& last_device = kCpu0) {
    x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    labels = ops::Placeholder(s.WithOpName("labels"), DT_INT32);
    Output h = x;
    const std::vector<int64_t> sizes = {6, 5, 4, 3};
    for (size_t l = 1; l < sizes.size(); ++l) {
      Scope layer = s.NewSubScope(absl::StrCat("layer", l))
                        .WithDevice(l + 1 == sizes.size() ? last_device : kCpu0);
      ops::VariableAndInit w = ops::VariableWithInit(
          layer.WithOpName("weights"),
          ops::Const(layer, Values(TensorShape({sizes[l - 1], sizes[l]}), 10 + l)));
      ops::VariableAndInit b = ops::VariableWithInit(
          layer.WithOpName("bias"), ops::Const(layer, Values(TensorShape({sizes[l]}), 20 + l)));
      vars.push_back(w.var);
      vars.push_back(b.var);
      h = ops::BiasAdd(layer, ops::MatMul(layer, h, w.var), b.var);
      if (l + 1 < sizes.size()) h = ops::Tanh(layer, h);
    }
    loss = ops::Mean(s.WithOpName("loss"),
                     ops::SparseSoftmaxCrossEntropyWithLogits(s, h, labels)[0], {0});
    absl::StatusOr<Node*> t = optimizer->Minimize(s.WithOpName("train"), loss, vars);
    EXPECT_TRUE(t.ok()) << t.status();
    if (t.ok()) train = *t;
    init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  }

  std::vector<std::pair<Output, Tensor>> Feeds() const {
    Tensor y(DT_INT32, TensorShape({8}));
    for (int i = 0; i < 8; ++i) y.flat<int32_t>()[i] = (i * 7) % 3;
    return {{x, Values(TensorShape({8, 6}), 1)}, {labels, y}};
  }
};

std::unique_ptr<Session> MakeSession(const Scope& s, bool grouped) {
  SessionConfig config = BuiltinSessionConfig();
  config.devices.num_virtual_cpus = 1;
  // Only the grouping differs: no other fusion on either side.
  config.fuse_ops = false;
  config.group_updates_on = grouped ? std::vector<std::string>{"CPU"} : std::vector<std::string>{};
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(config, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

// Op -> nodes of it in the step, over every partition; and N of the multi
// nodes, per device.
struct Counts {
  std::map<std::string, int> ops;
  std::map<std::string, std::vector<int64_t>> multi_sizes;  // device -> N of each
};

Counts Count(const RunMetadata& metadata) {
  Counts c;
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      ++c.ops[n.op()];
      if (n.op().rfind("_Multi", 0) == 0) {
        c.multi_sizes[n.device()].push_back(n.attr().at("N").i());
      }
    }
  }
  return c;
}

// Trains a model (Mlp or ResourceMlp: s, init, train, Feeds(), vars) both
// ways for a few steps; the variables must be equal bit for bit.
template <typename Model>
Counts TrainGroupedAndPlain(Model& grouped_model, Model& plain_model) {
  std::unique_ptr<Session> grouped = MakeSession(grouped_model.s, true);
  std::unique_ptr<Session> plain = MakeSession(plain_model.s, false);
  EXPECT_TRUE(grouped && plain);
  if (!grouped || !plain) return {};
  EXPECT_TRUE(grouped->Run({}, {}, {grouped_model.init}).ok());
  EXPECT_TRUE(plain->Run({}, {}, {plain_model.init}).ok());
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata metadata;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<std::vector<Tensor>> g =
        grouped->Run(grouped_model.Feeds(), {}, {grouped_model.train}, options, &metadata);
    EXPECT_TRUE(g.ok()) << g.status();
    EXPECT_TRUE(plain->Run(plain_model.Feeds(), {}, {plain_model.train}).ok());
  }
  absl::StatusOr<std::vector<Tensor>> gv = grouped->Run({}, grouped_model.vars, {});
  absl::StatusOr<std::vector<Tensor>> pv = plain->Run({}, plain_model.vars, {});
  EXPECT_TRUE(gv.ok() && pv.ok());
  if (!gv.ok() || !pv.ok()) return {};
  EXPECT_EQ(gv->size(), 6u);
  for (size_t i = 0; i < gv->size(); ++i) {
    absl::Span<const float> x = (*gv)[i].flat<float>(), y = (*pv)[i].flat<float>();
    for (size_t j = 0; j < x.size(); ++j) EXPECT_EQ(x[j], y[j]) << "var " << i << " [" << j << "]";
  }
  return Count(metadata);
}

Counts TrainBothWays(Optimizer* a, Optimizer* b, const std::string& last_device = kCpu0) {
  Mlp grouped_model(a, last_device), plain_model(b, last_device);
  return TrainGroupedAndPlain(grouped_model, plain_model);
}

TEST(GroupUpdatesTest, SgdUpdatesOfADeviceBecomeOneNodeWithTheSameValues) {
  GradientDescentOptimizer a(0.5), b(0.5);
  Counts c = TrainBothWays(&a, &b);
  EXPECT_EQ(c.ops["ApplyGradientDescent"], 0);
  EXPECT_EQ(c.ops["_MultiApplyGradientDescent"], 1);
  EXPECT_EQ(c.multi_sizes[kCpu0], std::vector<int64_t>{6});
}

TEST(GroupUpdatesTest, AdamUpdatesToo) {
  AdamOptimizer a(0.01), b(0.01);
  Counts c = TrainBothWays(&a, &b);
  EXPECT_EQ(c.ops["ApplyAdam"], 0);
  EXPECT_EQ(c.ops["_MultiApplyAdam"], 1);
  EXPECT_EQ(c.multi_sizes[kCpu0], std::vector<int64_t>{6});
}

TEST(GroupUpdatesTest, EachDeviceGetsItsOwnGroup) {
  GradientDescentOptimizer a(0.5), b(0.5);
  Counts c = TrainBothWays(&a, &b, kCpu1);
  EXPECT_EQ(c.ops["ApplyGradientDescent"], 0);
  EXPECT_EQ(c.multi_sizes[kCpu0], std::vector<int64_t>{4});
  EXPECT_EQ(c.multi_sizes[kCpu1], std::vector<int64_t>{2});
}

// The same MLP written with resource variables (as TF graphs with
// use_resource are): ResourceApplyGradientDescent or ResourceApplyAdam, each
// update building its own constant scalars, as TF's optimizers do.
struct ResourceMlp {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x, labels;
  std::vector<Output> vars;  // reads of the model's variables
  Node* train = nullptr;
  Node* init = nullptr;

  explicit ResourceMlp(bool adam) {
    x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    labels = ops::Placeholder(s.WithOpName("labels"), DT_INT32);
    std::vector<Node*> inits;
    std::vector<Output> handles, step_reads;
    std::vector<TensorShape> shapes;
    // A variable set to `value`; the model's own are read by `vars` too.
    auto variable = [&](const Scope& at, const std::string& name, const Tensor& value,
                        bool model) {
      Output h = ops::VarHandleOp(at.WithOpName(name), DT_FLOAT, value.shape());
      inits.push_back(ops::AssignVariableOp(at, h, ops::Const(at, value)));
      if (model) vars.push_back(ops::ReadVariableOp(at.WithOpName(name + "/value"), h, DT_FLOAT));
      return h;
    };
    Output h = x;
    const std::vector<int64_t> sizes = {6, 5, 4, 3};
    for (size_t l = 1; l < sizes.size(); ++l) {
      Scope layer = s.NewSubScope(absl::StrCat("layer", l));
      for (const char* kind : {"weights", "bias"}) {
        const bool w = std::string(kind) == "weights";
        const TensorShape shape =
            w ? TensorShape({sizes[l - 1], sizes[l]}) : TensorShape({sizes[l]});
        handles.push_back(variable(layer, kind, Values(shape, (w ? 10 : 20) + l), true));
        shapes.push_back(shape);
        step_reads.push_back(ops::ReadVariableOp(layer, handles.back(), DT_FLOAT));
      }
      h = ops::BiasAdd(layer, ops::MatMul(layer, h, step_reads[step_reads.size() - 2]),
                       step_reads.back());
      if (l + 1 < sizes.size()) h = ops::Tanh(layer, h);
    }
    Output loss = ops::Mean(s.WithOpName("loss"),
                            ops::SparseSoftmaxCrossEntropyWithLogits(s, h, labels)[0], {0});
    absl::StatusOr<std::vector<Output>> grads = AddGradients(s, {loss}, step_reads);
    EXPECT_TRUE(grads.ok()) << grads.status();
    if (!grads.ok()) return;
    std::vector<Node*> updates;
    for (size_t i = 0; i < handles.size(); ++i) {
      Scope u = s.NewSubScope(absl::StrCat("update", i));
      auto c = [&](float v) { return ops::Const(u, v); };
      if (!adam) {
        updates.push_back(ops::ResourceApplyGradientDescent(u, handles[i], c(0.5f), (*grads)[i]));
        continue;
      }
      Tensor zeros(DT_FLOAT, shapes[i]);
      for (float& e : zeros.flat<float>()) e = 0;
      Output m = variable(u, "m", zeros, false);
      Output v = variable(u, "v", zeros, false);
      updates.push_back(u.Op("ResourceApplyAdam")
                            .Input(handles[i]).Input(m).Input(v)
                            .Input(c(0.9f)).Input(c(0.99f)).Input(c(0.01f))
                            .Input(c(0.9f)).Input(c(0.999f)).Input(c(1e-7f))
                            .Input((*grads)[i])
                            .Finalize());
    }
    train = ops::NoOp(s.WithOpName("train").WithControlDependencies(updates));
    init = ops::NoOp(s.WithOpName("init").WithControlDependencies(inits));
    EXPECT_TRUE(s.ok()) << s.status();
  }

  std::vector<std::pair<Output, Tensor>> Feeds() const {
    Tensor y(DT_INT32, TensorShape({8}));
    for (int i = 0; i < 8; ++i) y.flat<int32_t>()[i] = (i * 7) % 3;
    return {{x, Values(TensorShape({8, 6}), 1)}, {labels, y}};
  }
};

Counts TrainResourceMlpBothWays(bool adam) {
  ResourceMlp grouped_model(adam), plain_model(adam);
  return TrainGroupedAndPlain(grouped_model, plain_model);
}

TEST(GroupUpdatesTest, ResourceVariableUpdatesBecomeOneResourceNodeWithTheSameValues) {
  for (bool adam : {false, true}) {
    SCOPED_TRACE(adam ? "Adam" : "gradient descent");
    Counts c = TrainResourceMlpBothWays(adam);
    const std::string op = adam ? "ApplyAdam" : "ApplyGradientDescent";
    EXPECT_EQ(c.ops["Resource" + op], 0);
    EXPECT_EQ(c.ops["_MultiResource" + op], 1);
    EXPECT_EQ(c.multi_sizes[kCpu0], std::vector<int64_t>{6});
  }
}

// Handles naming one variable (two handle ops with one shared_name, or an
// Identity of a handle) stay in separate groups; a handle from anywhere else
// (here a placeholder; in a partition, a _Recv) names an unknown variable,
// so its update is never grouped.
TEST(GroupUpdatesTest, HandlesOfOneVariableStayApart) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output alpha = ops::Const(s, 0.1f);
  auto handle = [&](const char* name, const char* shared) {
    return ops::VarHandleOp(s.WithOpName(name), DT_FLOAT, TensorShape({2}),
                            {.shared_name = shared});
  };
  const std::vector<Output> handles = {
      handle("a", "a"),
      handle("b", "b"),
      handle("c", "a"),                                       // a again
      ops::Identity(s.WithOpName("b_again"), handle("b2", "b")),  // b again
      ops::Placeholder(s.WithOpName("unknown1"), DT_RESOURCE),
      ops::Placeholder(s.WithOpName("unknown2"), DT_RESOURCE)};
  for (size_t i = 0; i < handles.size(); ++i) {
    ops::ResourceApplyGradientDescent(s.WithOpName(absl::StrCat("update_", i)), handles[i], alpha,
                                      ops::Const(s, {1.0f, 2.0f}));
  }
  ASSERT_TRUE(s.ok()) << s.status();
  for (Node* n : s.graph()->nodes()) n->set_assigned_device(kCpu0);
  GroupUpdatesOptions o;
  o.kernels = BuiltinKernels();
  o.device_types = {"CPU"};
  absl::StatusOr<GroupUpdatesStats> st = GroupUpdates(s.graph(), o);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->groups, 1);
  EXPECT_EQ(st->updates, 2);  // a's and b's; c's and b_again's wait for another pass
  for (const char* name : {"update_2", "update_3", "update_4", "update_5"}) {
    EXPECT_NE(s.graph()->FindNode(name), nullptr) << name << " was grouped";
  }
}

// The pass alone on hand-made graphs: what it must leave alone.
struct Updates {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> vars;
  Output alpha = ops::Const(s.WithOpName("alpha"), 0.1f);

  Output Var(const std::string& name) {
    Output v = ops::Variable(s.WithOpName(name), TensorShape({2}), DT_FLOAT);
    vars.push_back(v);
    return v;
  }
  Output Apply(const std::string& name, const Output& var, const Output& lr, const Scope& at) {
    return ops::ApplyGradientDescent(at.WithOpName(name), var, lr, ops::Const(at, {1.0f, 2.0f}));
  }
  GroupUpdatesStats Group(std::vector<std::string> keep = {}) {
    for (Node* n : s.graph()->nodes()) n->set_assigned_device(kCpu0);
    GroupUpdatesOptions o;
    o.kernels = BuiltinKernels();
    o.keep = std::move(keep);
    o.device_types = {"CPU"};
    absl::StatusOr<GroupUpdatesStats> st = GroupUpdates(s.graph(), o);
    EXPECT_TRUE(st.ok()) << st.status();
    return st.ok() ? *st : GroupUpdatesStats{};
  }
};

TEST(GroupUpdatesTest, LeavesAloneWhatMustStaySeparate) {
  {
    // Different learning-rate tensors; a kept target; an update whose
    // output is read.
    Updates u;
    Output other_lr = ops::Const(u.s.WithOpName("other_lr"), 0.2f);
    u.Apply("a", u.Var("va"), u.alpha, u.s);
    u.Apply("b", u.Var("vb"), other_lr, u.s);
    u.Apply("kept", u.Var("vk"), u.alpha, u.s);
    Output read = u.Apply("read", u.Var("vr"), u.alpha, u.s);
    ops::Identity(u.s.WithOpName("reader"), read);
    const GroupUpdatesStats st = u.Group({"kept"});
    EXPECT_EQ(st.groups, 0);
    EXPECT_NE(u.s.graph()->FindNode("a"), nullptr);
  }
  {
    // c runs after a (a control edge): a and c may not join, b and c may.
    Updates u;
    Output a = u.Apply("a", u.Var("va"), u.alpha, u.s);
    u.Apply("b", u.Var("vb"), u.alpha, u.s);
    u.Apply("c", u.Var("vc"), u.alpha,
            u.s.WithControlDependencies(absl::Span<const Output>(&a, 1)));
    const GroupUpdatesStats st = u.Group();
    EXPECT_EQ(st.groups, 1);
    EXPECT_EQ(st.updates, 2);
    EXPECT_NE(u.s.graph()->FindNode("c"), nullptr);  // left alone
    EXPECT_EQ(u.s.graph()->FindNode("a"), nullptr);  // grouped with b
  }
  {
    // Two groups whose members order each other across them: a1 -> b1 and
    // b2 -> a2. Joining both would make a cycle; one group is made, and
    // the graph stays acyclic.
    Updates u;
    Output lr2 = ops::Const(u.s.WithOpName("lr2"), 0.3f);
    Output a1 = u.Apply("a1", u.Var("va1"), u.alpha, u.s);
    Output b2 = u.Apply("b2", u.Var("vb2"), lr2, u.s);
    u.Apply("b1", u.Var("vb1"), lr2, u.s.WithControlDependencies(absl::Span<const Output>(&a1, 1)));
    u.Apply("a2", u.Var("va2"), u.alpha,
            u.s.WithControlDependencies(absl::Span<const Output>(&b2, 1)));
    const GroupUpdatesStats st = u.Group();
    EXPECT_EQ(st.groups, 1);
    EXPECT_TRUE(TopologicalOrder(*u.s.graph()).ok());
  }
  {
    // Two updates of one variable stay separate (the kernel refuses a
    // variable given twice).
    Updates u;
    Output v = u.Var("v");
    u.Apply("a", v, u.alpha, u.s);
    u.Apply("b", v, u.alpha, u.s);
    EXPECT_EQ(u.Group().groups, 0);
  }
  {
    // So do updates of two variable nodes sharing one variable (a
    // shared_name; a container and shared name as another's node name).
    Updates u;
    auto shared = [&](const char* name, const char* shared_name) {
      return ops::Variable(u.s.WithOpName(name), TensorShape({2}), DT_FLOAT,
                           {.shared_name = shared_name});
    };
    u.Apply("a", shared("v1", "v"), u.alpha, u.s);
    u.Apply("b", shared("v2", "v"), u.alpha, u.s);
    u.Apply("c", shared("w", ""), u.alpha, u.s);
    u.Apply("d", shared("w2", "w"), u.alpha, u.s);
    const GroupUpdatesStats st = u.Group();
    EXPECT_EQ(st.groups, 1);
    EXPECT_EQ(st.updates, 2);  // one of v's, one of w's
  }
  {
    // Updates behind a Switch (loss scaling's) stay separate.
    Updates u;
    Output pred = ops::Const(u.s.WithOpName("pred"), true);
    Output g = ops::Switch(u.s, ops::Const(u.s, {1.0f, 2.0f}), pred).output_true;
    ops::ApplyGradientDescent(u.s.WithOpName("a"), u.Var("va"), u.alpha, g);
    ops::ApplyGradientDescent(u.s.WithOpName("b"), u.Var("vb"), u.alpha, g);
    EXPECT_EQ(u.Group().groups, 0);
  }
  {
    // Not on an enabled device type: nothing.
    Updates u;
    u.Apply("a", u.Var("va"), u.alpha, u.s);
    u.Apply("b", u.Var("vb"), u.alpha, u.s);
    for (Node* n : u.s.graph()->nodes()) n->set_assigned_device(kCpu0);
    GroupUpdatesOptions o;
    o.kernels = BuiltinKernels();
    absl::StatusOr<GroupUpdatesStats> st = GroupUpdates(u.s.graph(), o);  // GPU only
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(st->groups, 0);
  }
  GroupUpdatesOptions none;
  Updates u;
  EXPECT_EQ(GroupUpdates(u.s.graph(), none).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GroupUpdatesTest, AVariableGivenTwiceIsRefusedByTheKernel) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = ops::VariableWithInit(s.WithOpName("v"), ops::Const(s, {1.0f, 2.0f})).var;
  Node* init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  Output alpha = ops::Const(s, 0.5f);
  Output delta = ops::Const(s, {1.0f, 1.0f});
  const std::vector<Output> vars = {v, v}, deltas = {delta, delta};
  Node* multi = s.WithOpName("multi")
                    .Op("_MultiApplyGradientDescent", std::source_location::current())
                    .InputList(absl::MakeConstSpan(vars))
                    .Input(alpha)
                    .InputList(absl::MakeConstSpan(deltas))
                    .Attr("N", int64_t{2})
                    .Finalize();
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init}).ok());
  absl::Status st = (*sess)->Run({}, {}, {multi}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("var[0] and var[1] are the same variable v"), std::string::npos)
      << st;
}

}  // namespace
}  // namespace sluice
