// GraphDefs in the layout TensorFlow 1.x writes for tf.while_loop and
// tf.cond (node names, frame_name, the `^pivot` control inputs of
// constants, `_class` colocation attrs), read with ParseGraphDef and run.
// The graphs are what these Python lines write:
//   i = tf.constant(0); r = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i])
//   x = tf.placeholder(tf.float32); c = tf.cond(x > 0, lambda: x * 2., lambda: x - 1.)
// and the expected values are TensorFlow's for them.
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "graph/graph_def_io.h"
#include "gtest/gtest.h"
#include "ops/builtins.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

constexpr char kWhileLoop[] = R"pb(
node { name: "Const" op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
node { name: "while/Enter" op: "Enter" input: "Const"
  attr { key: "T" value { type: DT_INT32 } }
  attr { key: "frame_name" value { s: "while/while_context" } }
  attr { key: "is_constant" value { b: false } }
  attr { key: "parallel_iterations" value { i: 10 } } }
node { name: "while/Merge" op: "Merge" input: "while/Enter" input: "while/NextIteration"
  attr { key: "N" value { i: 2 } }
  attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/Less/y" op: "Const" input: "^while/Merge"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 10 } } } }
node { name: "while/Less" op: "Less" input: "while/Merge" input: "while/Less/y"
  attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/LoopCond" op: "LoopCond" input: "while/Less" }
node { name: "while/Switch" op: "Switch" input: "while/Merge" input: "while/LoopCond"
  attr { key: "T" value { type: DT_INT32 } }
  attr { key: "_class" value { list { s: "loc:@while/Merge" } } } }
node { name: "while/Identity" op: "Identity" input: "while/Switch:1"
  attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/add/y" op: "Const" input: "^while/Identity"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
node { name: "while/add" op: "Add" input: "while/Identity" input: "while/add/y"
  attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/NextIteration" op: "NextIteration" input: "while/add"
  attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/Exit" op: "Exit" input: "while/Switch"
  attr { key: "T" value { type: DT_INT32 } } }
versions { producer: 27 }
)pb";

constexpr char kCond[] = R"pb(
node { name: "x" op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { unknown_rank: true } } } }
node { name: "Greater/y" op: "Const"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0 } } } }
node { name: "Greater" op: "Greater" input: "x" input: "Greater/y"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond/Switch" op: "Switch" input: "Greater" input: "Greater"
  attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/switch_t" op: "Identity" input: "cond/Switch:1"
  attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/switch_f" op: "Identity" input: "cond/Switch"
  attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/pred_id" op: "Identity" input: "Greater"
  attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/mul/y" op: "Const" input: "^cond/switch_t"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
node { name: "cond/mul/Switch" op: "Switch" input: "x" input: "cond/pred_id"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "_class" value { list { s: "loc:@x" } } } }
node { name: "cond/mul" op: "Mul" input: "cond/mul/Switch:1" input: "cond/mul/y"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond/sub/y" op: "Const" input: "^cond/switch_f"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
node { name: "cond/sub/Switch" op: "Switch" input: "x" input: "cond/pred_id"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "_class" value { list { s: "loc:@x" } } } }
node { name: "cond/sub" op: "Sub" input: "cond/sub/Switch" input: "cond/sub/y"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond/Merge" op: "Merge" input: "cond/sub" input: "cond/mul"
  attr { key: "N" value { i: 2 } }
  attr { key: "T" value { type: DT_FLOAT } } }
versions { producer: 27 }
)pb";

std::unique_ptr<Session> Load(const char* text) {
  absl::StatusOr<GraphDef> def = ParseGraphDef(text);
  EXPECT_TRUE(def.ok()) << def.status();
  if (!def.ok()) return nullptr;
  auto graph = std::make_unique<Graph>(BuiltinOps());
  absl::Status s = ImportGraphDef(*def, graph.get());
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *graph);
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

TEST(ControlFlowGraphDefTest, TensorFlowsWhileLoopRuns) {
  std::unique_ptr<Session> sess = Load(kWhileLoop);
  ASSERT_NE(sess, nullptr);
  absl::StatusOr<std::vector<Tensor>> r = sess->Run({}, {"while/Exit"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<int32_t>(), 10);
  // The shape TensorFlow infers for the loop's output: a scalar.
  EXPECT_EQ((*r)[0].shape(), TensorShape());
}

TEST(ControlFlowGraphDefTest, TensorFlowsCondRuns) {
  std::unique_ptr<Session> sess = Load(kCond);
  ASSERT_NE(sess, nullptr);
  for (float x : {3.0f, -2.0f, 0.0f}) {
    Tensor t(DT_FLOAT, TensorShape());
    t.scalar<float>() = x;
    absl::StatusOr<std::vector<Tensor>> r =
        sess->Run({{"x", t}}, {"cond/Merge", "cond/Merge:1"}, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].scalar<float>(), x > 0 ? x * 2 : x - 1) << x;
    EXPECT_EQ((*r)[1].scalar<int32_t>(), x > 0 ? 1 : 0) << x;
  }
}

}  // namespace
}  // namespace sluice
