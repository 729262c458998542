#include "ops/functional/functional_ops.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "graph/function_builder.h"
#include "graph/function_inline.h"
#include "graph/gradients.h"
#include "graph/graph_def_io.h"
#include "ops/testutil/tf_case.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/math/math_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "runtime/device.h"
#include "runtime/device_function_runtime.h"
#include "runtime/executor.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

absl::StatusOr<std::vector<Tensor>> RunGraph(const Graph& g,
                                             const std::vector<std::pair<std::string, Tensor>>& feeds,
                                             const std::vector<std::string>& fetches) {
  ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(BuiltinSessionConfig(), g));
  return sess->Run(feeds, fetches, {});
}

// A TensorFlow 2 tf.function called from a tf.compat.v1 graph:
// StatefulPartitionedCall of a library function.
TEST(FunctionalOpsTest, TfFunctionInV1GraphRuns) {
  absl::StatusOr<GraphDef> def = ReadGraphDefFile("ops/functional/testdata/tf_function_v1.pbtxt");
  ASSERT_TRUE(def.ok()) << def.status();
  Graph g(BuiltinOps());
  absl::Status s = ImportGraphDef(*def, &g);
  ASSERT_TRUE(s.ok()) << s;
  absl::StatusOr<std::vector<Tensor>> out =
      RunGraph(g, {{"x:0", Tensor::FromVector<float>({1, 2, 3})}}, {"y:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{3, 5, 7}));
}

// TensorFlow 1's Defun: nodes whose op is a function, one calling another.
TEST(FunctionalOpsTest, DefunGraphRuns) {
  absl::StatusOr<GraphDef> def = ReadGraphDefFile("ops/functional/testdata/defun_v1.pbtxt");
  ASSERT_TRUE(def.ok()) << def.status();
  Graph g(BuiltinOps());
  absl::Status s = ImportGraphDef(*def, &g);
  ASSERT_TRUE(s.ok()) << s;
  absl::StatusOr<std::vector<Tensor>> out =
      RunGraph(g, {{"a:0", Tensor::Scalar<float>(2)}, {"b:0", Tensor::Scalar<float>(3)}},
               {"call:0", "call:1", "twice:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], 5);
  EXPECT_EQ((*out)[1].data<float>()[0], 15);
  EXPECT_EQ((*out)[2].data<float>()[0], 30);  // AddMul(15, 15)[0]
}

// A function whose body has a bad node fails when the session compiles the
// call, naming the function and the node.
TEST(FunctionalOpsTest, BadBodyErrorNamesFunctionAndNode) {
  absl::StatusOr<GraphDef> def = ReadGraphDefFile("ops/functional/testdata/defun_v1.pbtxt");
  ASSERT_TRUE(def.ok());
  def->mutable_library()->mutable_function(0)->mutable_node_def(1)->set_input(0, "add_0:sum:0");
  Graph g(BuiltinOps());
  ASSERT_TRUE(ImportGraphDef(*def, &g).ok());
  absl::StatusOr<std::vector<Tensor>> out =
      RunGraph(g, {{"a:0", Tensor::Scalar<float>(2)}, {"b:0", Tensor::Scalar<float>(3)}},
               {"call:0"});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "function 'AddMul_4b9c3a1e'"))
      << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "node 'mul_0'")) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "'call'")) << out.status();
}

absl::StatusOr<NameAttrList> DefineAffine(const Scope& s) {
  // affine(a) = 3 a + 1
  return DefineFunction(
      s, "affine", {DT_FLOAT},
      [](Scope& b, std::vector<Output> args) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{ops::Add(b, ops::Mul(b, args[0], 3.0f), 1.0f)};
      });
}

TEST(FunctionalOpsTest, DefineFunctionThenCallItTwoWays) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<NameAttrList> f = DefineAffine(s);
  ASSERT_TRUE(f.ok()) << f.status();
  const FunctionDef* fdef = s.graph()->FindFunction("affine");
  ASSERT_NE(fdef, nullptr);
  EXPECT_EQ(fdef->signature().input_arg(0).name(), "arg0");
  EXPECT_EQ(fdef->ret().at("output0").substr(0, 4), "Add:");
  EXPECT_FALSE(fdef->signature().is_stateful());

  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  std::vector<Output> direct = ops::CallFunction(s.WithOpName("direct"), *f, {x});
  std::vector<Output> pcall =
      ops::PartitionedCall(s.WithOpName("pcall"), {direct[0]}, *f, {DT_FLOAT});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(direct[0].node->op(), "affine");
  absl::StatusOr<std::vector<Tensor>> out =
      RunGraph(*s.graph(), {{"x:0", Tensor::FromVector<float>({0, 1})}}, {"direct:0", "pcall:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{1, 4}));
  EXPECT_EQ(Values((*out)[1]), (std::vector<float>{4, 13}));

  // The graph goes out as a GraphDef with its library and comes back.
  GraphDef def;
  s.graph()->ToGraphDef(&def);
  Graph copy(BuiltinOps());
  ASSERT_TRUE(ImportGraphDef(def, &copy).ok());
  out = RunGraph(copy, {{"x:0", Tensor::FromVector<float>({2})}}, {"pcall:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{22}));  // 3 (3*2+1) + 1
}

TEST(FunctionalOpsTest, DefineFunctionErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ASSERT_TRUE(DefineAffine(s).ok());
  // The name is taken by another function, then by an op.
  absl::StatusOr<NameAttrList> again = DefineFunction(
      s, "affine", {DT_FLOAT},
      [](const Scope& b, absl::Span<const Output> a) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{a[0]};
      });
  EXPECT_FALSE(again.ok());
  EXPECT_TRUE(absl::StrContains(again.status().message(), "defining function 'affine'"));
  auto identity = [](const Scope& b, absl::Span<const Output> a)
      -> absl::StatusOr<std::vector<Output>> { return std::vector<Output>{a[0]}; };
  EXPECT_FALSE(DefineFunction(s, "MatMul", {DT_FLOAT}, identity).ok());
  // A body that uses a tensor of the outer graph.
  Output outer = ops::Const(s, 1.0f);
  absl::StatusOr<NameAttrList> capture = DefineFunction(
      s, "capture", {DT_FLOAT},
      [&](const Scope& b, absl::Span<const Output> a) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{outer};
      });
  ASSERT_FALSE(capture.ok());
  EXPECT_TRUE(absl::StrContains(capture.status().message(), "pass it as an argument"))
      << capture.status();
  // A body whose op fails to build: the scope's error, with the function.
  absl::StatusOr<NameAttrList> bad = DefineFunction(
      s, "bad", {DT_FLOAT, DT_INT32},
      [](const Scope& b, absl::Span<const Output> a) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{ops::Add(b, a[0], a[1])};
      });
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "defining function 'bad'")) << bad.status();
  // An identity function (the result is an argument) is fine.
  absl::StatusOr<NameAttrList> id = DefineFunction(s, "id", {DT_FLOAT}, identity);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(s.graph()->FindFunction("id")->ret().at("output0"), "arg0");
}

// tf.gradients through a function: AddGradients inlines the call on its
// path; the call node stays valid (as the IdentityN of the results).
TEST(FunctionalOpsTest, GradientsFlowThroughFunctions) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<NameAttrList> sq = DefineFunction(
      s, "square_plus", {DT_FLOAT, DT_FLOAT},
      [](const Scope& b, absl::Span<const Output> a) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{ops::Add(b, ops::Mul(b, a[0], a[0]), a[1])};  // x^2 + y
      });
  ASSERT_TRUE(sq.ok()) << sq.status();
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT);
  std::vector<Output> z = ops::PartitionedCall(s.WithOpName("z"), {x, y}, *sq, {DT_FLOAT});
  Output loss = ops::Sum(s.WithOpName("loss"), ops::Mul(s, z[0], 2.0f), {0});
  absl::StatusOr<std::vector<Output>> grads = AddGradients(s, {loss}, {x, y});
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_TRUE((*grads)[0].valid() && (*grads)[1].valid());
  EXPECT_EQ(z[0].node->op(), "IdentityN");
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run(
      {{x, Tensor::FromVector<float>({1, 2, 3})}, {y, Tensor::FromVector<float>({1, 1, 1})}},
      {z[0], (*grads)[0], (*grads)[1]}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{2, 5, 10}));
  EXPECT_EQ(Values((*out)[1]), (std::vector<float>{4, 8, 12}));  // 2 * 2x
  EXPECT_EQ(Values((*out)[2]), (std::vector<float>{2, 2, 2}));
}

// Where nothing inlines a call, the PartitionedCall kernel runs it through
// the executor's FunctionRuntime.
TEST(FunctionalOpsTest, PartitionedCallKernelWithoutInlining) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<NameAttrList> f = DefineAffine(s);
  ASSERT_TRUE(f.ok());
  Output x = s.WithOpName("x").Op("_Arg").Attr("T", DT_FLOAT).Attr("index", int64_t{0}).Finalize1();
  std::vector<Output> y = ops::PartitionedCall(s.WithOpName("y"), {x}, *f, {DT_FLOAT},
                                               {.stateful = true});
  s.WithOpName("ret").Op("_Retval").Input(y[0]).Attr("index", int64_t{0}).Finalize();
  ASSERT_TRUE(s.ok()) << s.status();
  std::unique_ptr<Device> cpu =
      NewCpuDevice({.name = "/job:localhost/replica:0/task:0/device:CPU:0", .num_threads = 2});
  FunctionRuntimeOptions o;
  o.device = cpu.get();
  o.ops = BuiltinOps();
  o.kernels = BuiltinKernels();
  o.library = s.graph()->library();
  absl::StatusOr<std::shared_ptr<FunctionRuntime>> fr = NewFunctionRuntime(std::move(o));
  ASSERT_TRUE(fr.ok()) << fr.status();
  GraphDef def;
  s.graph()->ToGraphDef(&def);
  auto g = std::make_unique<Graph>(BuiltinOps());
  ASSERT_TRUE(ImportGraphDef(def, g.get(), {.allow_internal_ops = true}).ok());
  for (Node* n : g->nodes()) n->set_assigned_device(cpu->name());

  // Without a runtime the kernel cannot be built.
  GraphDef def2 = def;
  auto g2 = std::make_unique<Graph>(BuiltinOps());
  ASSERT_TRUE(ImportGraphDef(def2, g2.get(), {.allow_internal_ops = true}).ok());
  absl::StatusOr<std::unique_ptr<Executor>> none =
      Executor::Create(std::move(g2), cpu.get(), *BuiltinKernels());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition) << none.status();

  absl::StatusOr<std::unique_ptr<Executor>> ex =
      Executor::Create(std::move(g), cpu.get(), *BuiltinKernels(), fr->get());
  ASSERT_TRUE(ex.ok()) << ex.status();
  for (bool run_inline : {false, true}) {
    CallFrame frame;
    frame.args = {Tensor::FromVector<float>({1, 2})};
    frame.retvals.resize(1);
    Executor::Args args;
    args.step_id = 1;
    args.call_frame = &frame;
    args.run_inline = run_inline;
    absl::Status st = (*ex)->Run(args);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(Values(frame.retvals[0]), (std::vector<float>{4, 7}));
  }
}

// A function over a resource variable (how tf.function reaches variables):
// its side effects run, in order, also when the call returns nothing.
TEST(FunctionalOpsTest, ResourceArgumentsAndSideEffects) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<NameAttrList> bump = DefineFunction(
      s, "bump", {DT_RESOURCE, DT_FLOAT},
      [](const Scope& b, absl::Span<const Output> a) -> absl::StatusOr<std::vector<Output>> {
        Node* add = ops::AssignAddVariableOp(b, a[0], a[1]);
        return std::vector<Output>{
            ops::ReadVariableOp(b.WithControlDependencies(absl::Span<Node* const>(&add, 1)), a[0],
                                DT_FLOAT)};
      });
  ASSERT_TRUE(bump.ok()) << bump.status();
  EXPECT_TRUE(s.graph()->FindFunction("bump")->signature().is_stateful());
  absl::StatusOr<NameAttrList> add_only = DefineFunction(
      s, "add_only", {DT_RESOURCE, DT_FLOAT},
      [](const Scope& b, absl::Span<const Output> a) -> absl::StatusOr<std::vector<Output>> {
        ops::AssignAddVariableOp(b, a[0], a[1]);
        return std::vector<Output>{};
      });
  ASSERT_TRUE(add_only.ok()) << add_only.status();
  Output v = ops::VarHandleOp(s.WithOpName("v"), DT_FLOAT, TensorShape({}));
  ops::AssignVariableOp(s.WithOpName("init"), v, 5.0f);
  Output two = ops::Const(s, 2.0f);
  std::vector<Output> call =
      ops::PartitionedCall(s.WithOpName("call"), {v, two}, *bump, {DT_FLOAT}, {.stateful = true});
  ops::PartitionedCall(s.WithOpName("hundred"), {v, ops::Const(s, 100.0f)}, *add_only, {},
                       {.stateful = true});
  ops::ReadVariableOp(s.WithOpName("read"), v, DT_FLOAT);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {"init"}).ok());
  for (float want : {7.0f, 9.0f}) {
    absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {"call:0"}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<float>()[0], want);
  }
  ASSERT_TRUE((*sess)->Run({}, {}, {"hundred"}).ok());
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {"read:0"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], 109);
}

// Each call site's body is placed on its own: on the call's device.
TEST(FunctionalOpsTest, BodyIsPlacedOnTheCallsDevice) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<NameAttrList> f = DefineAffine(s);
  ASSERT_TRUE(f.ok());
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice("/device:CPU:0"), DT_FLOAT);
  std::vector<Output> on1 =
      ops::CallFunction(s.WithOpName("c1").WithDevice("/device:CPU:1"), *f, {x});
  std::vector<Output> on0 =
      ops::CallFunction(s.WithOpName("c0").WithDevice("/device:CPU:0"), *f, {on1[0]});
  ASSERT_TRUE(s.ok()) << s.status();
  SessionConfig config = BuiltinSessionConfig();
  config.devices.num_virtual_cpus = 2;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(config, *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata metadata;
  absl::StatusOr<std::vector<Tensor>> out =
      (*sess)->Run({{"x:0", Tensor::Scalar<float>(1)}}, {"c0:0"}, {}, options, &metadata);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], 13);  // 3 (3 + 1) + 1
  int checked = 0;
  for (const GraphDef& part : metadata.partition_graphs) {
    for (const NodeDef& n : part.node()) {
      if (absl::StartsWith(n.name(), "c1/")) {
        EXPECT_TRUE(absl::EndsWith(n.device(), "CPU:1")) << n.name() << " on " << n.device();
        ++checked;
      }
      if (absl::StartsWith(n.name(), "c0/")) {
        EXPECT_TRUE(absl::EndsWith(n.device(), "CPU:0")) << n.name() << " on " << n.device();
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 6);
}

// Calls inside a while loop's body and a cond's branch: the inlined body
// runs in the call's frame (its constants wait for the call's inputs), once
// per iteration, and only in the branch taken.
TEST(FunctionalOpsTest, CallsInsideLoopsAndConds) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<NameAttrList> f = DefineAffine(s);  // 3 a + 1
  ASSERT_TRUE(f.ok());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  absl::StatusOr<std::vector<Output>> loop = ops::WhileLoop(
      s, {ops::Const(s, 0), x},
      [](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], 3); },
      [&](const Scope& b, absl::Span<const Output> v) {
        return std::vector<Output>{ops::Add(b, v[0], 1),
                                   ops::CallFunction(b.WithOpName("step"), *f, {v[1]})[0]};
      });
  ASSERT_TRUE(loop.ok()) << loop.status();
  absl::StatusOr<std::vector<Output>> cond = ops::Cond(
      s, ops::Greater(s, x, 0.0f),
      [&](const Scope& b) {
        return std::vector<Output>{ops::PartitionedCall(b.WithOpName("then_call"), {x}, *f,
                                                        {DT_FLOAT})[0]};
      },
      [&](const Scope& b) { return std::vector<Output>{ops::Neg(b, x)}; });
  ASSERT_TRUE(cond.ok()) << cond.status();
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  for (float in : {0.0f, 2.0f, -1.0f}) {
    absl::StatusOr<std::vector<Tensor>> out =
        (*sess)->Run({{x, Tensor::Scalar<float>(in)}}, {(*loop)[1], (*cond)[0]}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    float a = in;
    for (int i = 0; i < 3; ++i) a = 3 * a + 1;
    EXPECT_EQ((*out)[0].data<float>()[0], a) << "x = " << in;
    EXPECT_EQ((*out)[1].data<float>()[0], in > 0 ? 3 * in + 1 : -in) << "x = " << in;
  }
}

// A function with a gradient function in the library (GradientDef): the
// gradient calls it with the call's inputs and the output gradients instead
// of differentiating the body.
TEST(FunctionalOpsTest, GradientDefOverridesTheBody) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<NameAttrList> sq = DefineFunction(
      s, "sq", {DT_FLOAT},
      [](Scope& b, std::vector<Output> a) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{ops::Mul(b, a[0], a[0])};
      });
  ASSERT_TRUE(sq.ok()) << sq.status();
  // Deliberately not the true gradient: 10 * dy.
  absl::StatusOr<NameAttrList> grad = DefineFunction(
      s, "sq_grad", {DT_FLOAT, DT_FLOAT},
      [](Scope& b, std::vector<Output> a) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{ops::Mul(b, a[1], 10.0f)};
      });
  ASSERT_TRUE(grad.ok()) << grad.status();
  auto* g = s.graph()->mutable_library()->add_gradient();
  g->set_function_name("sq");
  g->set_gradient_func("sq_grad");
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  std::vector<Output> y = ops::CallFunction(s.WithOpName("y"), *sq, {x});
  absl::StatusOr<std::vector<Output>> dx = AddGradients(s, {ops::Mul(s, y[0], 2.0f)}, {x});
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_EQ(y[0].node->op(), "sq");  // not inlined by AddGradients
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> out =
      (*sess)->Run({{x, Tensor::FromVector<float>({1, 3})}}, {y[0], (*dx)[0]}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{1, 9}));
  EXPECT_EQ(Values((*out)[1]), (std::vector<float>{20, 20}));  // 10 * 2
}

// Graphs TensorFlow 2.21 wrote (testdata/make_fixtures.py), run with the
// feeds it used; every fetch must match TensorFlow's values within
// `tolerance`. The graph is <name>.pbtxt, or <name>.pb for larger ones.
void CheckTensorFlowCase(const std::string& name, float tolerance = 1e-5f) {
  SCOPED_TRACE(name);
  const std::string base = "ops/functional/testdata/" + name;
  absl::StatusOr<GraphDef> def = ReadTensorFlowCaseGraph(base);
  ASSERT_TRUE(def.ok()) << def.status();
  Graph g(BuiltinOps());
  absl::Status s = ImportGraphDef(*def, &g);
  ASSERT_TRUE(s.ok()) << s;
  absl::StatusOr<TensorFlowCase> c = ReadTensorFlowCase(g, base + ".expected.txt");
  ASSERT_TRUE(c.ok()) << c.status();
  const auto& [first_run, feeds, fetches, want] = *c;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), g);
  ASSERT_TRUE(sess.ok()) << sess.status();
  if (!first_run.empty()) {
    absl::Status ran = (*sess)->Run({}, {}, first_run).status();
    ASSERT_TRUE(ran.ok()) << ran;
  }
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run(feeds, fetches, {});
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < fetches.size(); ++i) {
    std::vector<float> got = Values((*out)[i]);
    ASSERT_EQ(got.size(), want[i].size()) << fetches[i];
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_NEAR(got[k], want[i][k], tolerance) << fetches[i] << "[" << k << "]";
    }
  }
}

// tf.function in a v1 graph, and tf.gradients through it: the forward and
// backward functions TF writes, called with PartitionedCall.
TEST(FunctionalOpsTest, TensorFlowWrittenFunctionAndItsGradient) {
  CheckTensorFlowCase("tf_function_grad");
}

// TF1's Defun: a node whose op is the function.
TEST(FunctionalOpsTest, TensorFlowWrittenDefunCall) { CheckTensorFlowCase("defun_call"); }

// TF2's functional control flow in a graph: StatelessWhile, StatelessIf and
// StatelessCase, and a tf.function whose loop writes a variable (While).
TEST(FunctionalOpsTest, TensorFlowWrittenFunctionalControlFlow) {
  CheckTensorFlowCase("control_flow_v2");
}

// An RNN over TensorArrays (TensorLists) in a StatelessWhile, and
// tf.gradients of it: a second While with TensorList accumulators.
TEST(FunctionalOpsTest, TensorFlowWrittenLoopOverTensorListsAndItsGradient) {
  CheckTensorFlowCase("control_flow_v2_grad");
}

// A Keras 3 model's training step as TF2 traces it (LSTM, GRU and Dense
// layers called with their weights as arguments; GradientTape's gradient):
// six StatelessWhiles, the gradient loops popping TensorList accumulators.
// The loss and all eight weight gradients match TensorFlow's.
TEST(FunctionalOpsTest, TensorFlowWrittenKerasLstmGruTrainingStep) {
  CheckTensorFlowCase("keras_rnn_grad", 1e-5f);
}

// A Keras 3 transformer block's training step as TF2 traces it: attention's
// products and their gradients are Einsums (lowered into BatchMatMulV2s),
// with LayerNormalization and a GELU feed-forward.
TEST(FunctionalOpsTest, TensorFlowWrittenKerasAttentionTrainingStep) {
  CheckTensorFlowCase("keras_attention_grad", 1e-5f);
}

// A Keras 3 CNN's training step with two Dropouts: the masks are stateless
// Philox draws from the seed generator's state, TensorFlow's bit for bit,
// or the loss and gradients would differ.
TEST(FunctionalOpsTest, TensorFlowWrittenKerasDropoutTrainingStep) {
  CheckTensorFlowCase("keras_dropout_grad", 1e-5f);
}

}  // namespace
}  // namespace sluice
