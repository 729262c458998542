#include "ops/functional/functional_control_flow.h"

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "graph/function_builder.h"
#include "graph/algorithm.h"
#include "graph/function_inline.h"
#include "graph/gradients.h"
#include "graph/graph_def_io.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/testutil/gradient_checker.h"
#include "ops/functional/functional_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::tensorflow::DT_VARIANT;
using Body = std::function<std::vector<Output>(Scope&, const std::vector<Output>&)>;

// Defines `name` over `types` with `body`; fails the test on error.
NameAttrList Define(const Scope& s, const std::string& name, std::vector<DataType> types,
                    const Body& body) {
  absl::StatusOr<NameAttrList> f = DefineFunction(
      s, name, types,
      [&](Scope& b, std::vector<Output> a) -> absl::StatusOr<std::vector<Output>> {
        return body(b, a);
      });
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : NameAttrList();
}

float Scalar(const Tensor& t) { return t.data<float>()[0]; }

absl::StatusOr<std::unique_ptr<Session>> Open(const Scope& s) {
  RETURN_IF_ERROR(s.status());
  return NewSession(BuiltinSessionConfig(), *s.graph());
}

// The ops of `g` after the inliner has lowered and inlined everything.
std::map<std::string, int> LoweredOps(const Graph& g) {
  GraphDef def;
  g.ToGraphDef(&def);
  Graph copy(g.registry());
  EXPECT_TRUE(ImportGraphDef(def, &copy).ok());
  absl::StatusOr<int> n = InlineFunctionCalls(&copy);
  EXPECT_TRUE(n.ok()) << n.status();
  std::map<std::string, int> ops;
  for (const Node* node : copy.nodes()) ++ops[node->op()];
  return ops;
}

// Whether a path of edges (data or control) leads from `from` to `to`.
bool Reaches(const Graph& g, const Node* from, const Node* to) {
  return ReachableBackward(g, {const_cast<Node*>(to)})[from->id()];
}

// y = x > 0 ? x * x : -x, and a side effect in the true branch only.
TEST(FunctionalControlFlowTest, IfRunsOnlyTheBranchTaken) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output counter = ops::VarHandleOp(s.WithOpName("counter"), DT_FLOAT, TensorShape({}));
  Node* init = ops::AssignVariableOp(s.WithOpName("init"), counter, ops::Const(s, 0.0f));
  const NameAttrList square = Define(s, "square", {DT_FLOAT, DT_RESOURCE},
                                     [](Scope& b, const std::vector<Output>& a) {
                                       Node* bump = ops::AssignAddVariableOp(b, a[1], 1.0f);
                                       return std::vector<Output>{ops::Mul(
                                           b.WithControlDependencies(std::vector<Node*>{bump}), a[0], a[0])};
                                     });
  const NameAttrList negate = Define(s, "negate", {DT_FLOAT, DT_RESOURCE},
                                     [](Scope& b, const std::vector<Output>& a) {
                                       return std::vector<Output>{ops::Neg(b, a[0])};
                                     });
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  std::vector<Output> y = ops::If(s.WithOpName("y"), ops::Greater(s, x, 0.0f), {x, counter},
                                  square, negate, {DT_FLOAT});
  Output count = ops::ReadVariableOp(s.WithOpName("count"), counter, DT_FLOAT);
  ASSERT_EQ(y.size(), 1u);
  absl::StatusOr<std::unique_ptr<Session>> sess = Open(s);
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init->name()}).ok());
  float expected_count = 0;
  for (float in : {3.0f, -2.0f, 0.5f, 0.0f}) {
    absl::StatusOr<std::vector<Tensor>> out =
        (*sess)->Run({{x, Tensor::Scalar<float>(in)}}, {y[0]}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Scalar((*out)[0]), in > 0 ? in * in : -in) << "x = " << in;
    if (in > 0) ++expected_count;
    absl::StatusOr<std::vector<Tensor>> c = (*sess)->Run({}, {count}, {});
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(Scalar((*c)[0]), expected_count) << "after x = " << in;
  }
  // What the session ran: TensorFlow 1.x control flow, no If, no calls.
  const std::map<std::string, int> lowered = LoweredOps(*s.graph());
  EXPECT_EQ(lowered.count("If"), 0u);
  EXPECT_EQ(lowered.count("square"), 0u);
  EXPECT_GE(lowered.at("Switch"), 3);  // the pivot, x, the handle
  EXPECT_GE(lowered.at("Merge"), 2);   // y, and the branch's done
}

// A non-bool condition is true when not zero; an If without outputs (side
// effects only) still finishes before what depends on it.
TEST(FunctionalControlFlowTest, NumericConditionAndAnIfWithoutOutputs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = ops::VarHandleOp(s.WithOpName("v"), DT_FLOAT, TensorShape({}));
  Node* init = ops::AssignVariableOp(s.WithOpName("init"), v, ops::Const(s, 0.0f));
  const NameAttrList add_ten = Define(s, "add_ten", {DT_RESOURCE},
                                      [](Scope& b, const std::vector<Output>& a) {
                                        ops::AssignAddVariableOp(b, a[0], 10.0f);
                                        return std::vector<Output>{};
                                      });
  const NameAttrList add_one = Define(s, "add_one", {DT_RESOURCE},
                                      [](Scope& b, const std::vector<Output>& a) {
                                        ops::AssignAddVariableOp(b, a[0], 1.0f);
                                        return std::vector<Output>{};
                                      });
  Output k = ops::Placeholder(s.WithOpName("k"), DT_INT32);
  std::vector<Output> none = ops::If(s.WithOpName("bump"), k, {v}, add_ten, add_one, {});
  EXPECT_TRUE(none.empty());
  Node* bump = s.graph()->FindNode("bump");
  ASSERT_NE(bump, nullptr);
  Output after = ops::ReadVariableOp(s.WithOpName("after").WithControlDependencies(std::vector<Node*>{bump}), v,
                                     DT_FLOAT);
  absl::StatusOr<std::unique_ptr<Session>> sess = Open(s);
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init->name()}).ok());
  float total = 0;
  for (int32_t in : {7, 0, -1}) {
    absl::StatusOr<std::vector<Tensor>> out =
        (*sess)->Run({{k, Tensor::Scalar<int32_t>(in)}}, {after}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    total += in != 0 ? 10 : 1;
    EXPECT_EQ(Scalar((*out)[0]), total) << "k = " << in;
  }
}

// Case: branch i for index i, the last branch for any index outside.
TEST(FunctionalControlFlowTest, CaseTakesTheIndexedBranchAndTheLastOutsideTheRange) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<NameAttrList> branches = {
      Define(s, "plus_one", {DT_FLOAT},
             [](Scope& b, const std::vector<Output>& a) {
               return std::vector<Output>{ops::Add(b, a[0], 1.0f)};
             }),
      Define(s, "times_ten", {DT_FLOAT},
             [](Scope& b, const std::vector<Output>& a) {
               return std::vector<Output>{ops::Mul(b, a[0], 10.0f)};
             }),
      Define(s, "constant", {DT_FLOAT},
             [](Scope& b, const std::vector<Output>& a) {
               return std::vector<Output>{ops::Const(b, 42.0f)};
             }),
      Define(s, "negate", {DT_FLOAT}, [](Scope& b, const std::vector<Output>& a) {
        return std::vector<Output>{ops::Neg(b, a[0])};
      })};
  Output index = ops::Placeholder(s.WithOpName("index"), DT_INT32);
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  std::vector<Output> y =
      ops::Case(s.WithOpName("y"), index, {x}, branches, {DT_FLOAT}, {.stateless = true});
  ASSERT_EQ(y.size(), 1u);
  absl::StatusOr<std::unique_ptr<Session>> sess = Open(s);
  ASSERT_TRUE(sess.ok()) << sess.status();
  const std::map<int32_t, float> want = {{0, 3}, {1, 20}, {2, 42}, {3, -2}, {4, -2}, {-1, -2}};
  for (const auto& [i, value] : want) {
    absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run(
        {{index, Tensor::Scalar<int32_t>(i)}, {x, Tensor::Scalar<float>(2)}}, {y[0]}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Scalar((*out)[0]), value) << "index " << i;
  }
}

// i = 0; acc = x; while (i < n) { acc = acc * acc + 1; ++i; }
struct Loop {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x, n;
  std::vector<Output> out;
};

void BuildLoop(Loop* l) {
  const NameAttrList cond = Define(l->s, "below_n", {DT_INT32, DT_FLOAT, DT_INT32},
                                   [](Scope& b, const std::vector<Output>& a) {
                                     return std::vector<Output>{ops::Less(b, a[0], a[2])};
                                   });
  const NameAttrList body = Define(
      l->s, "step", {DT_INT32, DT_FLOAT, DT_INT32}, [](Scope& b, const std::vector<Output>& a) {
        return std::vector<Output>{ops::Add(b, a[0], 1),
                                   ops::Add(b, ops::Mul(b, a[1], a[1]), 1.0f), a[2]};
      });
  l->x = ops::Placeholder(l->s.WithOpName("x"), DT_FLOAT);
  l->n = ops::Placeholder(l->s.WithOpName("n"), DT_INT32);
  l->out = ops::While(l->s.WithOpName("loop"), {ops::Const(l->s, 0), l->x, l->n}, cond, body);
}

float LoopByHand(float x, int n) {
  for (int i = 0; i < n; ++i) x = x * x + 1;
  return x;
}

TEST(FunctionalControlFlowTest, WhileRunsItsBodyUntilItsConditionFails) {
  Loop l;
  BuildLoop(&l);
  ASSERT_EQ(l.out.size(), 3u);
  absl::StatusOr<std::unique_ptr<Session>> sess = Open(l.s);
  ASSERT_TRUE(sess.ok()) << sess.status();
  for (int n : {0, 1, 3}) {
    absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run(
        {{l.x, Tensor::Scalar<float>(0.5f)}, {l.n, Tensor::Scalar<int32_t>(n)}},
        {l.out[0], l.out[1]}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<int32_t>()[0], n);
    EXPECT_FLOAT_EQ(Scalar((*out)[1]), LoopByHand(0.5f, n)) << "n = " << n;
  }
  const std::map<std::string, int> lowered = LoweredOps(*l.s.graph());
  EXPECT_EQ(lowered.count("While"), 0u);
  EXPECT_EQ(lowered.at("Enter"), 3);
  EXPECT_EQ(lowered.at("Exit"), 3);
  EXPECT_EQ(lowered.at("NextIteration"), 3);
  EXPECT_EQ(lowered.at("LoopCond"), 1);
}

// AddGradients lowers the While on its path and differentiates the loop:
// d/dx of the loop above against central differences.
TEST(FunctionalControlFlowTest, GradientsFlowThroughAWhileAndAnIf) {
  Loop l;
  BuildLoop(&l);
  const NameAttrList cube = Define(l.s, "cube", {DT_FLOAT},
                                   [](Scope& b, const std::vector<Output>& a) {
                                     return std::vector<Output>{ops::Mul(b, ops::Mul(b, a[0], a[0]),
                                                                         a[0])};
                                   });
  const NameAttrList tanh_f = Define(l.s, "tanh", {DT_FLOAT},
                                   [](Scope& b, const std::vector<Output>& a) {
                                     return std::vector<Output>{b.Op("Tanh").Input(a[0]).Finalize1()};
                                   });
  // z = loop(x) > 2 ? loop(x)^3 : tanh(loop(x))
  Output y = l.out[1];
  std::vector<Output> z =
      ops::If(l.s.WithOpName("z"), ops::Greater(l.s, y, 2.0f), {y}, cube, tanh_f, {DT_FLOAT});
  absl::StatusOr<std::vector<Output>> dx = AddGradients(l.s, {z[0]}, {l.x});
  ASSERT_TRUE(dx.ok()) << dx.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = Open(l.s);
  ASSERT_TRUE(sess.ok()) << sess.status();
  auto f = [](double x, int n) {
    for (int i = 0; i < n; ++i) x = x * x + 1;
    return x > 2 ? x * x * x : std::tanh(x);
  };
  for (int n : {0, 1, 2}) {
    for (float x : {0.3f, 0.9f, -1.2f}) {
      absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run(
          {{l.x, Tensor::Scalar<float>(x)}, {l.n, Tensor::Scalar<int32_t>(n)}}, {z[0], (*dx)[0]},
          {});
      ASSERT_TRUE(out.ok()) << out.status();
      const double h = 1e-4;
      const double numeric = (f(x + h, n) - f(x - h, n)) / (2 * h);
      EXPECT_NEAR(Scalar((*out)[0]), f(x, n), 1e-4 * std::abs(f(x, n)) + 1e-5);
      EXPECT_NEAR(Scalar((*out)[1]), numeric, 2e-3 * std::abs(numeric) + 1e-3)
          << "x = " << x << ", n = " << n;
    }
  }
}

// A While whose body calls a function holding an If: lowering reaches into
// the bodies the inliner brings in. Control inputs of the While gate it.
TEST(FunctionalControlFlowTest, NestedInsideFunctionsAndGatedByControlInputs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = ops::VarHandleOp(s.WithOpName("v"), DT_FLOAT, TensorShape({}));
  Node* init = ops::AssignVariableOp(s.WithOpName("init"), v, ops::Const(s, 5.0f));
  const NameAttrList halve = Define(s, "halve", {DT_FLOAT}, [](Scope& b, const std::vector<Output>& a) {
    return std::vector<Output>{ops::Mul(b, a[0], 0.5f)};
  });
  const NameAttrList triple_plus_one =
      Define(s, "triple_plus_one", {DT_FLOAT}, [](Scope& b, const std::vector<Output>& a) {
        return std::vector<Output>{ops::Add(b, ops::Mul(b, a[0], 3.0f), 1.0f)};
      });
  // Collatz on floats: one step.
  const NameAttrList collatz = Define(
      s, "collatz", {DT_FLOAT}, [&](Scope& b, const std::vector<Output>& a) {
        Output even = ops::Equal(b, ops::FloorMod(b, a[0], 2.0f), 0.0f);
        return ops::If(b, even, {a[0]}, halve, triple_plus_one, {DT_FLOAT});
      });
  // Loop variables: v's handle and a count. The condition and the body read
  // v; the body writes the next value (and hands the handle on after it).
  const NameAttrList not_one = Define(s, "not_one", {DT_RESOURCE, DT_INT32},
                                      [](Scope& b, const std::vector<Output>& a) {
                                        return std::vector<Output>{ops::Greater(
                                            b, ops::ReadVariableOp(b, a[0], DT_FLOAT), 1.0f)};
                                      });
  const NameAttrList step = Define(
      s, "step", {DT_RESOURCE, DT_INT32}, [&](Scope& b, const std::vector<Output>& a) {
        Output next = ops::CallFunction(b, collatz, {ops::ReadVariableOp(b, a[0], DT_FLOAT)})[0];
        Node* write = ops::AssignVariableOp(b, a[0], next);
        return std::vector<Output>{ops::Identity(b.WithControlDependencies(std::vector<Node*>{write}), a[0]),
                                   ops::Add(b, a[1], 1)};
      });
  // The loop waits for bump (a control input): it starts from 6, not 5.
  Node* bump = ops::AssignAddVariableOp(s.WithOpName("bump"), v, 1.0f);
  std::vector<Output> out = ops::While(s.WithControlDependencies(std::vector<Node*>{bump}).WithOpName("collatz_loop"),
                                       {v, ops::Const(s, 0)}, not_one, step);
  ASSERT_EQ(out.size(), 2u);
  Output last = ops::ReadVariableOp(s.WithOpName("last"), out[0], DT_FLOAT);
  {  // Lowered, every Enter of the loop comes after bump.
    GraphDef def;
    s.graph()->ToGraphDef(&def);
    Graph lowered(s.graph()->registry());
    ASSERT_TRUE(ImportGraphDef(def, &lowered).ok());
    ASSERT_TRUE(InlineFunctionCalls(&lowered).ok());
    int enters = 0;
    for (const Node* n : lowered.nodes()) {
      if (n->op() != "Enter") continue;
      ++enters;
      EXPECT_TRUE(Reaches(lowered, lowered.FindNode("bump"), n))
          << n->name() << " does not wait for bump";
    }
    EXPECT_GE(enters, 2);
  }
  absl::StatusOr<std::unique_ptr<Session>> sess = Open(s);
  ASSERT_TRUE(sess.ok()) << sess.status();
  for (int run = 0; run < 3; ++run) {
    ASSERT_TRUE((*sess)->Run({}, {}, {init->name()}).ok());
    absl::StatusOr<std::vector<Tensor>> r = (*sess)->Run({}, {out[1], last}, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].data<int32_t>()[0], 8);  // 6 3 10 5 16 8 4 2 1 (from 5: 5 steps)
    EXPECT_EQ(Scalar((*r)[1]), 1.0f);
  }
}

// A body whose write is not among its results (a node nothing reads, as a
// control output would be): the next iteration's condition still sees it.
// v starts at 0; while v < 5: v += 1, i += 1. i ends at 5, on every run.
TEST(FunctionalControlFlowTest, ABodysSideEffectsFinishBeforeTheNextIteration) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = ops::VarHandleOp(s.WithOpName("v"), DT_FLOAT, TensorShape({}));
  Node* init = ops::AssignVariableOp(s.WithOpName("init"), v, ops::Const(s, 0.0f));
  const NameAttrList below = Define(s, "below_five", {DT_RESOURCE, DT_INT32},
                                    [](Scope& b, const std::vector<Output>& a) {
                                      return std::vector<Output>{ops::Less(
                                          b, ops::ReadVariableOp(b, a[0], DT_FLOAT), 5.0f)};
                                    });
  const NameAttrList bump = Define(s, "bump_v", {DT_RESOURCE, DT_INT32},
                                   [](Scope& b, const std::vector<Output>& a) {
                                     ops::AssignAddVariableOp(b.WithOpName("write"), a[0], 1.0f);
                                     return std::vector<Output>{a[0], ops::Add(b, a[1], 1)};
                                   });
  std::vector<Output> out =
      ops::While(s.WithOpName("loop"), {v, ops::Const(s, 0)}, below, bump);
  ASSERT_EQ(out.size(), 2u);
  {  // Lowered: the write comes before the NextIterations and the LoopCond.
    GraphDef def;
    s.graph()->ToGraphDef(&def);
    Graph lowered(s.graph()->registry());
    ASSERT_TRUE(ImportGraphDef(def, &lowered).ok());
    ASSERT_TRUE(InlineFunctionCalls(&lowered).ok());
    const Node* write = nullptr;
    for (const Node* n : lowered.nodes()) {
      if (n->op() == "AssignAddVariableOp") write = n;
    }
    ASSERT_NE(write, nullptr);
    int next = 0;
    for (const Node* n : lowered.nodes()) {
      if (n->op() != "NextIteration") continue;
      ++next;
      EXPECT_TRUE(Reaches(lowered, write, n)) << n->name() << " does not wait for the write";
    }
    EXPECT_EQ(next, 2);
  }
  absl::StatusOr<std::unique_ptr<Session>> sess = Open(s);
  ASSERT_TRUE(sess.ok()) << sess.status();
  for (int run = 0; run < 5; ++run) {
    ASSERT_TRUE((*sess)->Run({}, {}, {init->name()}).ok());
    absl::StatusOr<std::vector<Tensor>> r = (*sess)->Run({}, {out[1]}, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].data<int32_t>()[0], 5) << "run " << run;
  }
}

// A Case of one branch without inputs, in a loop's body: it runs in the
// loop's frame, once per iteration.
TEST(FunctionalControlFlowTest, ACaseOfOneBranchRunsInTheLoopsFrame) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const NameAttrList one = Define(s, "one", {}, [](Scope& b, const std::vector<Output>&) {
    return std::vector<Output>{ops::Const(b, 1.0f)};
  });
  const NameAttrList cond = Define(s, "below_three", {DT_INT32, DT_FLOAT},
                                   [](Scope& b, const std::vector<Output>& a) {
                                     return std::vector<Output>{ops::Less(b, a[0], 3)};
                                   });
  const NameAttrList body = Define(
      s, "add_one", {DT_INT32, DT_FLOAT}, [&](Scope& b, const std::vector<Output>& a) {
        std::vector<Output> c = ops::Case(b, a[0], {}, {one}, {DT_FLOAT});
        return std::vector<Output>{ops::Add(b, a[0], 1), ops::Add(b, a[1], c[0])};
      });
  std::vector<Output> out =
      ops::While(s.WithOpName("loop"), {ops::Const(s, 0), ops::Const(s, 0.5f)}, cond, body);
  absl::StatusOr<std::unique_ptr<Session>> sess = Open(s);
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> r = (*sess)->Run({}, {out[1]}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Scalar((*r)[0]), 3.5f);
}

// A loop writing a TensorList (TF2's TensorArray), built in C++ and
// differentiated by AddGradients: each step writes h = tanh(h * w + x[t]).
TEST(FunctionalControlFlowTest, GradientsOfALoopOverATensorList) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  auto shape = [&](const Scope& b) { return ops::Const(b, int32_t{-1}); };
  const NameAttrList cond = Define(s, "more", {DT_INT32, DT_DOUBLE, DT_VARIANT, DT_VARIANT, DT_DOUBLE},
                                   [](Scope& b, const std::vector<Output>& a) {
                                     return std::vector<Output>{ops::Less(b, a[0], 3)};
                                   });
  const NameAttrList body = Define(
      s, "rnn_step", {DT_INT32, DT_DOUBLE, DT_VARIANT, DT_VARIANT, DT_DOUBLE},
      [&](Scope& b, const std::vector<Output>& a) {
        Output x_t = b.Op("TensorListGetItem").Input(a[2]).Input(a[0]).Input(shape(b))
                         .Attr("element_dtype", DT_DOUBLE).Finalize1();
        Output h = ops::Tanh(b, ops::Add(b, ops::Mul(b, a[1], a[4]), x_t));
        Output states = b.Op("TensorListSetItem").Input(a[3]).Input(a[0]).Input(h).Finalize1();
        return std::vector<Output>{ops::Add(b, a[0], 1), h, a[2], states, a[4]};
      });
  Output xs = ops::Placeholder(s.WithOpName("xs"), DT_DOUBLE);  // [3, 2]
  Output w = ops::Placeholder(s.WithOpName("w"), DT_DOUBLE);    // [2]
  Output inputs = s.Op("TensorListFromTensor").Input(xs).Input(shape(s)).Finalize1();
  Output states = s.Op("TensorListReserve").Input(ops::Const(s, std::vector<int32_t>{2}))
                      .Input(ops::Const(s, 3)).Attr("element_dtype", DT_DOUBLE).Finalize1();
  Output h0 = ops::Const(s, std::vector<double>{0.1, -0.1});
  std::vector<Output> out =
      ops::While(s.WithOpName("rnn"), {ops::Const(s, 0), h0, inputs, states, w}, cond, body);
  ASSERT_EQ(out.size(), 5u);
  Output stacked = s.Op("TensorListStack").Input(out[3]).Input(shape(s))
                       .Attr("element_dtype", DT_DOUBLE).Finalize1();
  Output y = ops::Add(s, ops::Square(s, stacked), out[1]);
  const Tensor xs_value =
      Tensor::FromVector<double>({0.5, -1.0, 2.0, 0.25, 1.5, -0.75}, TensorShape({3, 2}));
  const Tensor w_value = Tensor::FromVector<double>({0.8, -0.6});
  absl::StatusOr<double> err = MaxGradientError(s, {xs, w}, {xs_value, w_value}, y);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

TEST(FunctionalControlFlowTest, ErrorsNameTheNodeAndTheFunction) {
  {  // A body returning other types than the loop variables.
    Scope s = Scope::NewRootScope(BuiltinOps());
    const NameAttrList cond = Define(s, "c", {DT_FLOAT}, [](Scope& b, const std::vector<Output>& a) {
      return std::vector<Output>{ops::Less(b, a[0], 1.0f)};
    });
    const NameAttrList body = Define(s, "to_int", {DT_FLOAT},
                                     [](Scope& b, const std::vector<Output>& a) {
                                       return std::vector<Output>{ops::Cast(b, a[0], DT_INT32)};
                                     });
    ops::While(s.WithOpName("bad_loop"), {ops::Const(s, 0.0f)}, cond, body);
    absl::StatusOr<std::unique_ptr<Session>> sess = Open(s);
    absl::Status st = sess.ok() ? (*sess)->Run({}, {"bad_loop:0"}, {}).status() : sess.status();
    EXPECT_FALSE(st.ok());
    EXPECT_TRUE(absl::StrContains(st.message(), "bad_loop")) << st;
    EXPECT_TRUE(absl::StrContains(st.message(), "to_int")) << st;
  }
  {  // A string condition has no truth value.
    Scope s = Scope::NewRootScope(BuiltinOps());
    const NameAttrList id = Define(s, "id", {DT_FLOAT}, [](Scope& b, const std::vector<Output>& a) {
      return std::vector<Output>{ops::Identity(b, a[0])};
    });
    ops::If(s.WithOpName("bad_if"), ops::Const(s, std::string("yes")), {ops::Const(s, 1.0f)}, id,
            id, {DT_FLOAT});
    absl::StatusOr<std::unique_ptr<Session>> sess = Open(s);
    absl::Status st = sess.ok() ? (*sess)->Run({}, {"bad_if:0"}, {}).status() : sess.status();
    EXPECT_FALSE(st.ok());
    EXPECT_TRUE(absl::StrContains(st.message(), "bad_if")) << st;
    EXPECT_TRUE(absl::StrContains(st.message(), "truth value")) << st;
  }
  {  // A While without loop variables.
    Scope s = Scope::NewRootScope(BuiltinOps());
    const NameAttrList cond = Define(s, "c0", {}, [](Scope& b, const std::vector<Output>&) {
      return std::vector<Output>{ops::Const(b, false)};
    });
    const NameAttrList body = Define(s, "b0", {}, [](Scope&, const std::vector<Output>&) {
      return std::vector<Output>{};
    });
    ops::While(s.WithOpName("empty_loop"), {}, cond, body);
    Graph* g = s.graph();
    absl::StatusOr<int> n = InlineFunctionCalls(g);
    EXPECT_FALSE(n.ok());
    EXPECT_TRUE(absl::StrContains(n.status().message(), "empty_loop")) << n.status();
    EXPECT_TRUE(absl::StrContains(n.status().message(), "at least one loop variable"))
        << n.status();
  }
}

}  // namespace
}  // namespace sluice
