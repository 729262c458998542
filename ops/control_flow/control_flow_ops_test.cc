// Control flow end to end: the ops, the builders and the executor's frames
// and dead tensors, through a DirectSession. Expected values are what
// TensorFlow 1.x computes for the same graphs (tf.cond / tf.while_loop
// semantics: only the taken branch runs; loop variables are updated
// together each iteration).
#include "ops/control_flow/control_flow_ops.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "graph/gradients.h"
#include "graph/graph_def_io.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/math/math_ops.h"
#include "ops/control_flow/stack_ops.h"
#include "ops/testutil/gradient_checker.h"
#include "ops/state/state_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

std::unique_ptr<Session> MakeSession(const Scope& s, SessionConfig options = BuiltinSessionConfig()) {
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(options, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

Tensor Scalar(float v) {
  Tensor t(DT_FLOAT, TensorShape());
  t.scalar<float>() = v;
  return t;
}

Tensor Bool(bool v) {
  Tensor t(DT_BOOL, TensorShape());
  t.scalar<bool>() = v;
  return t;
}

// Runs with feeds; the fetched scalars as floats (int32 converted).
std::vector<float> RunScalars(Session* sess,
                              const std::vector<std::pair<std::string, Tensor>>& feeds,
                              const std::vector<Output>& fetches) {
  std::vector<std::string> names;
  for (const Output& o : fetches) names.push_back(o.name());
  absl::StatusOr<std::vector<Tensor>> out = sess->Run(feeds, names, {});
  EXPECT_TRUE(out.ok()) << out.status();
  std::vector<float> values;
  if (!out.ok()) return values;
  for (const Tensor& t : *out) {
    values.push_back(t.dtype() == DT_INT32 ? static_cast<float>(t.scalar<int32_t>())
                                           : t.scalar<float>());
  }
  return values;
}

TEST(ControlFlowTest, SwitchAndMergeTakeOneBranch) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output p = ops::Placeholder(s.WithOpName("p"), DT_BOOL);
  ops::SwitchOutputs sw = ops::Switch(s, x, p);
  ops::MergeOutputs m =
      ops::Merge(s, {ops::Neg(s, sw.output_false), ops::Square(s, sw.output_true)});
  std::unique_ptr<Session> sess = MakeSession(s);
  EXPECT_EQ(RunScalars(sess.get(), {{"x", Scalar(3)}, {"p", Bool(true)}}, {m.output, m.value_index}),
            (std::vector<float>{9, 1}));
  EXPECT_EQ(RunScalars(sess.get(), {{"x", Scalar(3)}, {"p", Bool(false)}}, {m.output, m.value_index}),
            (std::vector<float>{-3, 0}));
}

TEST(ControlFlowTest, FetchingTheUntakenSideIsAnErrorNamingIt) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::SwitchOutputs sw = ops::Switch(s.WithOpName("sw"), x, false);
  std::unique_ptr<Session> sess = MakeSession(s);
  absl::StatusOr<std::vector<Tensor>> out =
      sess->Run({{"x", Scalar(1)}}, {sw.output_true.name()}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("sw:1"), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("not taken"), std::string::npos) << out.status();
}

TEST(ControlFlowTest, SwitchNeedsABoolScalar) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output p = ops::Placeholder(s.WithOpName("p"), DT_BOOL);
  ops::SwitchOutputs sw = ops::Switch(s, x, p);
  Output y = ops::Merge(s, {sw.output_false, sw.output_true}).output;
  std::unique_ptr<Session> sess = MakeSession(s);
  Tensor two(DT_BOOL, TensorShape({2}));
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({{"x", Scalar(1)}, {"p", two}}, {y.name()}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("pred must be a bool scalar"), std::string::npos)
      << out.status();
}

TEST(ControlFlowTest, CondRunsOnlyTheTakenBranch) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::VariableAndInit count = ops::VariableWithInit(s.WithOpName("count"), 0.0f);
  absl::StatusOr<std::vector<Output>> y = ops::Cond(
      s, ops::Greater(s, x, 0.0f),
      [&](const Scope& b) {
        // A constant and an update: both only when x > 0.
        Output bumped = ops::AssignAdd(b, count.var, 1.0f);
        return std::vector<Output>{ops::Add(b, ops::Mul(b, x, x), ops::Sub(b, bumped, bumped))};
      },
      [&](const Scope& b) { return std::vector<Output>{ops::Const(b, -1.0f)}; });
  ASSERT_TRUE(y.ok()) << y.status();
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {count.initializer->name()}).ok());
  EXPECT_EQ(RunScalars(sess.get(), {{"x", Scalar(3)}}, {(*y)[0]}), std::vector<float>{9});
  EXPECT_EQ(RunScalars(sess.get(), {{"x", Scalar(-2)}}, {(*y)[0]}), std::vector<float>{-1});
  EXPECT_EQ(RunScalars(sess.get(), {{"x", Scalar(-5)}}, {(*y)[0]}), std::vector<float>{-1});
  EXPECT_EQ(RunScalars(sess.get(), {}, {count.var}), std::vector<float>{1});
}

TEST(ControlFlowTest, CondWritesTensorFlowsLayout) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  absl::StatusOr<std::vector<Output>> y = ops::Cond(
      s, ops::Less(s, x, 1.0f), [&](const Scope& b) { return std::vector<Output>{ops::Neg(b, x)}; },
      [&](const Scope& b) { return std::vector<Output>{x}; });
  ASSERT_TRUE(y.ok()) << y.status();
  const Graph& g = *s.graph();
  for (const char* name : {"cond/Switch", "cond/switch_t", "cond/switch_f", "cond/pred_id",
                           "cond/Merge"}) {
    EXPECT_NE(g.FindNode(name), nullptr) << name;
  }
  EXPECT_EQ((*y)[0].node->name(), "cond/Merge");
  EXPECT_EQ(g.FindNode("cond/Merge")->op(), "Merge");
  std::unique_ptr<Session> sess = MakeSession(s);
  EXPECT_EQ(RunScalars(sess.get(), {{"x", Scalar(0.5f)}}, {(*y)[0]}), std::vector<float>{-0.5f});
  EXPECT_EQ(RunScalars(sess.get(), {{"x", Scalar(4)}}, {(*y)[0]}), std::vector<float>{4});
}

// i = 0; acc = 1; while i < n: acc *= 2; i += 1
absl::StatusOr<std::vector<Output>> Doubling(const Scope& s, const Input& n,
                                             const ops::WhileLoopAttrs& attrs = {}) {
  Output i0 = ops::Const(s, 0);
  Output acc0 = ops::Const(s, 1.0f);
  Output limit = ops::Identity(s, n);
  return ops::WhileLoop(
      s, {i0, acc0},
      [&](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], limit); },
      [](const Scope& b, absl::Span<const Output> v) {
        return std::vector<Output>{ops::Add(b, v[0], 1), ops::Mul(b, v[1], 2.0f)};
      },
      attrs);
}

TEST(ControlFlowTest, WhileLoopCounts) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output n = ops::Placeholder(s.WithOpName("n"), DT_INT32);
  absl::StatusOr<std::vector<Output>> out = Doubling(s, n);
  ASSERT_TRUE(out.ok()) << out.status();
  std::unique_ptr<Session> sess = MakeSession(s);
  Tensor ten(DT_INT32, TensorShape());
  ten.scalar<int32_t>() = 10;
  EXPECT_EQ(RunScalars(sess.get(), {{"n", ten}}, *out), (std::vector<float>{10, 1024}));
  Tensor zero(DT_INT32, TensorShape());
  zero.scalar<int32_t>() = 0;  // no iteration: the exits get the initial values
  EXPECT_EQ(RunScalars(sess.get(), {{"n", zero}}, *out), (std::vector<float>{0, 1}));
}

TEST(ControlFlowTest, WhileLoopWritesTensorFlowsLayout) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ASSERT_TRUE(Doubling(s, 3).ok());
  const Graph& g = *s.graph();
  for (const char* name : {"while/Enter", "while/Enter_1", "while/Merge", "while/Merge_1",
                           "while/LoopCond", "while/Switch", "while/Identity",
                           "while/NextIteration", "while/Exit", "while/Exit_1"}) {
    EXPECT_NE(g.FindNode(name), nullptr) << name;
  }
  const Node* enter = g.FindNode("while/Enter");
  EXPECT_EQ(*enter->GetAttr<std::string>("frame_name"), "while/while_context");
  EXPECT_EQ(*enter->GetAttr<int64_t>("parallel_iterations"), 10);
  // The limit is a loop invariant: a constant Enter.
  int constant_enters = 0;
  for (const Node* n : g.nodes()) {
    if (n->op() == "Enter" && *n->GetAttr<bool>("is_constant")) ++constant_enters;
  }
  EXPECT_EQ(constant_enters, 1);
  // The Merge's second input is the back edge.
  EXPECT_EQ(g.FindNode("while/Merge")->input_edge(1)->src->name(), "while/NextIteration");
}

TEST(ControlFlowTest, LongLoopsRunWithAnyParallelism) {
  for (int64_t parallel : {1, 2, 10, 32}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output i0 = ops::Const(s, 0);
    Output sum0 = ops::Const(s, 0.0f);
    absl::StatusOr<std::vector<Output>> out = ops::WhileLoop(
        s, {i0, sum0},
        [](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], 5000); },
        [](const Scope& b, absl::Span<const Output> v) {
          return std::vector<Output>{ops::Add(b, v[0], 1),
                                     ops::Add(b, v[1], ops::Cast(b, v[0], DT_FLOAT))};
        },
        {.parallel_iterations = parallel});
    ASSERT_TRUE(out.ok()) << out.status();
    std::unique_ptr<Session> sess = MakeSession(s);
    for (int run = 0; run < 3; ++run) {
      EXPECT_EQ(RunScalars(sess.get(), {}, *out), (std::vector<float>{5000, 12497500}))
          << "parallel_iterations " << parallel;
    }
  }
}

TEST(ControlFlowTest, NestedLoopsAndACondInsideABody) {
  // total = sum over i < 4, j < 5 of (i*j if i is even else 1)
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output i0 = ops::Const(s, 0);
  Output total0 = ops::Const(s, 0.0f);
  absl::StatusOr<std::vector<Output>> out = ops::WhileLoop(
      s, {i0, total0},
      [](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], 4); },
      [&](const Scope& b, absl::Span<const Output> outer) {
        Output fi = ops::Cast(b, outer[0], DT_FLOAT);
        Output even = ops::Equal(b, ops::Mul(b, ops::FloorDiv(b, outer[0], 2), 2), outer[0]);
        absl::StatusOr<std::vector<Output>> inner = ops::WhileLoop(
            b, {ops::Const(b, 0), outer[1]},
            [](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], 5); },
            [&](const Scope& ib, absl::Span<const Output> v) {
              Output fj = ops::Cast(ib, v[0], DT_FLOAT);
              absl::StatusOr<std::vector<Output>> term = ops::Cond(
                  ib, even,
                  [&](const Scope& t) { return std::vector<Output>{ops::Mul(t, fi, fj)}; },
                  [&](const Scope& e) { return std::vector<Output>{ops::Const(e, 1.0f)}; });
              EXPECT_TRUE(term.ok()) << term.status();
              return std::vector<Output>{ops::Add(ib, v[0], 1), ops::Add(ib, v[1], (*term)[0])};
            },
            {.name = "inner"});
        EXPECT_TRUE(inner.ok()) << inner.status();
        return std::vector<Output>{ops::Add(b, outer[0], 1), (*inner)[1]};
      });
  ASSERT_TRUE(out.ok()) << out.status();
  // i=0: 0; i=1: 5; i=2: 2*(0+1+2+3+4)=20; i=3: 5.
  std::unique_ptr<Session> sess = MakeSession(s);
  EXPECT_EQ(RunScalars(sess.get(), {}, *out), (std::vector<float>{4, 30}));
}

TEST(ControlFlowTest, LoopGraphsSurviveAGraphDefRoundTrip) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<std::vector<Output>> out = Doubling(s, 5);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<GraphDef> def = s.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  Graph g(BuiltinOps());
  ASSERT_TRUE(ImportGraphDef(*def, &g).ok());
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), g);
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> r = (*sess)->Run({}, {"while/Exit_1"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 32.0f);
}

TEST(ControlFlowTest, InputsFromTwoFramesAreRejected) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, 1.0f);
  Output inside = ops::Enter(s, x, "loop");
  Output mixed = ops::Add(s.WithOpName("mixed"), inside, x);  // x is outside the loop
  std::unique_ptr<Session> sess = MakeSession(s);
  absl::StatusOr<std::vector<Tensor>> r = sess->Run({}, {mixed.name()}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("has inputs from two frames"), std::string::npos)
      << r.status();
}

TEST(ControlFlowTest, ControlTriggerRunsAfterADeadInput) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("v"), 0.0f);
  ops::SwitchOutputs sw = ops::Switch(s, ops::Const(s, 1.0f), false);
  Output dead = ops::Identity(s, sw.output_true);
  Node* trigger = ops::ControlTrigger(s.WithControlDependencies({dead}));
  Output bump = ops::AssignAdd(s.WithControlDependencies(std::vector<Node*>{trigger}).WithOpName("bump"), v.var, 1.0f);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {v.initializer->name()}).ok());
  ASSERT_TRUE(sess->Run({}, {}, {"bump"}).ok());
  EXPECT_EQ(RunScalars(sess.get(), {}, {v.var}), std::vector<float>{1});
}

TEST(ControlFlowTest, CondGradientsFlowIntoTheTakenBranchOnly) {
  // y = x > 0 ? x * x * w : 3 * x;  dy/dx = 2xw or 3, dy/dw = x*x or 0.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output w = ops::Placeholder(s.WithOpName("w"), DT_FLOAT);
  absl::StatusOr<std::vector<Output>> y = ops::Cond(
      s, ops::Greater(s, x, 0.0f),
      [&](const Scope& b) { return std::vector<Output>{ops::Mul(b, ops::Square(b, x), w)}; },
      [&](const Scope& b) { return std::vector<Output>{ops::Mul(b, x, 3.0f)}; });
  ASSERT_TRUE(y.ok()) << y.status();
  absl::StatusOr<std::vector<Output>> g = AddGradients(s, {(*y)[0]}, {x, w});
  ASSERT_TRUE(g.ok()) << g.status();
  std::unique_ptr<Session> sess = MakeSession(s);
  auto run = [&](float xv, float wv, const std::vector<Output>& fetch) {
    return RunScalars(sess.get(), {{"x", Scalar(xv)}, {"w", Scalar(wv)}}, fetch);
  };
  for (float xv : {2.0f, -1.5f, 0.75f}) {
    const float wv = 1.25f;
    std::vector<float> grads = run(xv, wv, *g);
    ASSERT_EQ(grads.size(), 2u);
    EXPECT_FLOAT_EQ(grads[0], xv > 0 ? 2 * xv * wv : 3.0f) << "x " << xv;
    EXPECT_FLOAT_EQ(grads[1], xv > 0 ? xv * xv : 0.0f) << "x " << xv;
    // Central differences agree.
    const float eps = 1e-2f;
    const float fd = (run(xv + eps, wv, *y)[0] - run(xv - eps, wv, *y)[0]) / (2 * eps);
    EXPECT_NEAR(grads[0], fd, 1e-2f) << "x " << xv;
  }
}

TEST(ControlFlowTest, StacksPushAndPopInReverse) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output h = ops::StackV2(s, DT_FLOAT);
  Output a = ops::StackPushV2(s, h, 1.0f);
  Output b = ops::StackPushV2(s.WithControlDependencies({a}), h, 2.0f);
  Output top = ops::StackPopV2(s.WithControlDependencies({b}), h, DT_FLOAT);
  Output next = ops::StackPopV2(s.WithControlDependencies({top}), h, DT_FLOAT);
  Output empty = ops::StackPopV2(s.WithControlDependencies({next}), h, DT_FLOAT);
  std::unique_ptr<Session> sess = MakeSession(s);
  EXPECT_EQ(RunScalars(sess.get(), {}, {top, next}), (std::vector<float>{2, 1}));
  absl::StatusOr<std::vector<Tensor>> r = sess->Run({}, {empty.name()}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("pop from the empty Stack"), std::string::npos)
      << r.status();
}

// A stack lives for its step (TensorFlow's per-step container): one that
// no StackCloseV2 closes is gone once the step ends, not kept by the
// device, and its handle in a later step finds nothing.
TEST(ControlFlowTest, AStackLivesForOneStep) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output h = ops::StackV2(s.WithOpName("h"), DT_FLOAT);
  Output pushed = ops::StackPushV2(s.WithOpName("pushed"), h, 1.0f);
  Output old_handle = ops::Placeholder(s.WithOpName("old_handle"), DT_RESOURCE);
  Output pop = ops::StackPopV2(s.WithOpName("pop"), old_handle, DT_FLOAT);
  std::unique_ptr<Session> sess = MakeSession(s);
  absl::StatusOr<std::vector<Tensor>> first = sess->Run({}, {h.name(), pushed.name()}, {});
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::vector<Tensor>> later =
      sess->Run({{"old_handle", (*first)[0]}}, {pop.name()}, {});
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().code(), absl::StatusCode::kNotFound) << later.status();
  EXPECT_NE(later.status().message().find("does not exist in this step"), std::string::npos)
      << later.status();
}

// x squared three times in a loop: y = x^8, dy/dx = 8 x^7; with an invariant
// w: z = v * w each iteration from v0 = x, so z = x w^3, dz/dw = 3 x w^2.
TEST(ControlFlowTest, WhileLoopGradients) {
  for (int64_t parallel : {1, 10}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    Output w = ops::Placeholder(s.WithOpName("w"), DT_FLOAT);
    absl::StatusOr<std::vector<Output>> out = ops::WhileLoop(
        s, {ops::Const(s, 0), x, x},
        [](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], 3); },
        [&](const Scope& b, absl::Span<const Output> v) {
          return std::vector<Output>{ops::Add(b, v[0], 1), ops::Mul(b, v[1], v[1]),
                                     ops::Mul(b, v[2], w)};
        },
        {.parallel_iterations = parallel});
    ASSERT_TRUE(out.ok()) << out.status();
    absl::StatusOr<std::vector<Output>> gy = AddGradients(s, {(*out)[1]}, {x});
    ASSERT_TRUE(gy.ok()) << gy.status();
    absl::StatusOr<std::vector<Output>> gz = AddGradients(s, {(*out)[2]}, {x, w});
    ASSERT_TRUE(gz.ok()) << gz.status();
    std::unique_ptr<Session> sess = MakeSession(s);
    const float xv = 1.1f, wv = 0.9f;
    for (int run = 0; run < 2; ++run) {
      std::vector<float> got = RunScalars(sess.get(), {{"x", Scalar(xv)}, {"w", Scalar(wv)}},
                                          {(*gy)[0], (*gz)[0], (*gz)[1]});
      ASSERT_EQ(got.size(), 3u);
      EXPECT_NEAR(got[0], 8 * std::pow(xv, 7.0f), 1e-4) << "parallel " << parallel;
      EXPECT_NEAR(got[1], wv * wv * wv, 1e-5) << "parallel " << parallel;
      EXPECT_NEAR(got[2], 3 * xv * wv * wv, 1e-5) << "parallel " << parallel;
    }
    // Central differences of y agree.
    const float eps = 1e-3f;
    auto y_at = [&](float xx) {
      return RunScalars(sess.get(), {{"x", Scalar(xx)}, {"w", Scalar(wv)}}, {(*out)[1]})[0];
    };
    const float g = RunScalars(sess.get(), {{"x", Scalar(xv)}, {"w", Scalar(wv)}}, {(*gy)[0]})[0];
    EXPECT_NEAR(g, (y_at(xv + eps) - y_at(xv - eps)) / (2 * eps), 2e-2f);
  }
}

// A loop in a loop, differentiated: the inner loop's forward values are
// pushed onto a stack made once per outer iteration, whose handle the outer
// loop pushes and its gradient pops (TensorFlow's nested GradLoopState).
// The inner loop runs a number of iterations that depends on the outer
// iteration, and reads an outer invariant (w) and an outer value (a).
TEST(ControlFlowTest, NestedWhileLoopGradients) {
  for (int64_t parallel : {1, 10}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = ops::Placeholder(s.WithOpName("x"), DT_DOUBLE);
    Output w = ops::Placeholder(s.WithOpName("w"), DT_DOUBLE);
    absl::StatusOr<std::vector<Output>> out = ops::WhileLoop(
        s, {ops::Const(s, 0), x},
        [](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], 3); },
        [&](const Scope& b, absl::Span<const Output> v) {
          Output a = v[1];
          absl::StatusOr<std::vector<Output>> inner = ops::WhileLoop(
              b, {ops::Const(b, 0), a},
              [&](const Scope& c, absl::Span<const Output> u) {
                return ops::Less(c, u[0], ops::Add(c, v[0], 1));  // 1, 2, 3 iterations
              },
              [&](const Scope& ib, absl::Span<const Output> u) {
                Output next = ops::Add(ib, ops::Mul(ib, ops::Tanh(ib, u[1]), w), ops::Mul(ib, a, 0.1));
                return std::vector<Output>{ops::Add(ib, u[0], 1), next};
              },
              {.parallel_iterations = parallel});
          if (!inner.ok()) {
            b.UpdateStatus(inner.status());
            return std::vector<Output>{};
          }
          return std::vector<Output>{ops::Add(b, v[0], 1), ops::Mul(b, (*inner)[1], a)};
        },
        {.parallel_iterations = parallel});
    ASSERT_TRUE(out.ok()) << out.status();
    // Forward by hand.
    const double xv = 0.7, wv = 0.9;
    double av = xv;
    for (int i = 0; i < 3; ++i) {
      double bv = av;
      for (int j = 0; j < i + 1; ++j) bv = std::tanh(bv) * wv + 0.1 * av;
      av = bv * av;
    }
    auto scalar = [](double v) { return Tensor::FromVector<double>({v}, TensorShape()); };
    absl::StatusOr<Tensor> y = EvalWithFeeds(s, {x, w}, {scalar(xv), scalar(wv)}, (*out)[1]);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_NEAR(y->scalar<double>(), av, 1e-12);
    absl::StatusOr<double> err = MaxGradientError(s, {x, w}, {scalar(xv), scalar(wv)}, (*out)[1]);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-7) << "parallel " << parallel;
  }
}

TEST(ControlFlowTest, ATrainingLoopOverAWhileLoopsGradientLearns) {
  // w is trained so that x * w^3 (three loop iterations) matches a target.
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), 0.5f);
  Output wv = ops::Identity(s, w.var);
  absl::StatusOr<std::vector<Output>> out = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 2.0f)},
      [](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], 3); },
      [&](const Scope& b, absl::Span<const Output> v) {
        return std::vector<Output>{ops::Add(b, v[0], 1), ops::Mul(b, v[1], wv)};
      });
  ASSERT_TRUE(out.ok()) << out.status();
  Output loss = ops::Square(s, ops::Sub(s, (*out)[1], 2.0f * 0.729f));  // w* = 0.9
  absl::StatusOr<std::vector<Output>> g = AddGradients(s, {loss}, {wv});
  ASSERT_TRUE(g.ok()) << g.status();
  Output step = ops::AssignSub(s.WithOpName("step"), w.var, ops::Mul(s, (*g)[0], 0.01f));
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer->name()}).ok());
  const float first = RunScalars(sess.get(), {}, {loss})[0];
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(sess->Run({}, {}, {"step"}).ok());
  const float last = RunScalars(sess.get(), {}, {loss})[0];
  EXPECT_LT(last, first * 1e-3f) << first << " -> " << last;
  EXPECT_NEAR(RunScalars(sess.get(), {}, {w.var})[0], 0.9f, 1e-3f);
}

TEST(ControlFlowTest, ALoopThatNeverEndsIsStoppedByTheRunTimeout) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<std::vector<Output>> out = ops::WhileLoop(
      s, {ops::Const(s, 0)},
      [](const Scope& c, absl::Span<const Output> v) { return ops::GreaterEqual(c, v[0], 0); },
      [](const Scope& b, absl::Span<const Output> v) {
        return std::vector<Output>{ops::Maximum(b, ops::Add(b, v[0], 1), 1)};
      });
  ASSERT_TRUE(out.ok()) << out.status();
  std::unique_ptr<Session> sess = MakeSession(s);
  RunOptions options;
  options.timeout_in_ms = 200;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Tensor>> r = sess->Run({}, {(*out)[0].name()}, {}, options);
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_NE(r.status().message().find("timeout_in_ms"), std::string::npos) << r.status();
  EXPECT_LT(took, absl::Seconds(10));
}

}  // namespace
}  // namespace sluice
