// Resource variables through a DirectSession: a variable outlives steps,
// reads are snapshots, TensorFlow's errors (uninitialized reads, dtypes,
// shapes), ResourceGather, AssignAdd/SubVariableOp, and a training loop
// with ResourceApplyGradientDescent as tf.compat.v1 with use_resource
// writes it (ReadVariableOp's gradient reaches the handle's update).
#include "ops/state/resource_variable_ops.h"

#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/scatter_ops.h"
#include "ops/training/training_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

class ResourceVariableTest : public ::testing::Test {
 protected:
  void Start() {
    ASSERT_TRUE(s_.ok()) << s_.status();
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
    ASSERT_TRUE(sess.ok()) << sess.status();
    sess_ = std::move(*sess);
  }
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Output>& fetches,
                                          const std::vector<Node*>& targets = {}) {
    std::vector<std::string> names, target_names;
    for (const Output& o : fetches) names.push_back(o.name());
    for (const Node* n : targets) target_names.push_back(n->name());
    return sess_->Run({}, names, target_names);
  }
  std::vector<float> Floats(const Output& o) {
    absl::StatusOr<std::vector<Tensor>> r = Run({o});
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    absl::Span<const float> v = (*r)[0].flat<float>();
    return std::vector<float>(v.begin(), v.end());
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
  std::unique_ptr<Session> sess_;
};

TEST_F(ResourceVariableTest, AssignReadAndUpdateAcrossSteps) {
  Output w = ops::VarHandleOp(s_.WithOpName("w"), DT_FLOAT, TensorShape({3}));
  Output initialized = ops::VarIsInitializedOp(s_, w);
  Node* init = ops::AssignVariableOp(s_, w, {1.0f, 2.0f, 3.0f});
  Node* add = ops::AssignAddVariableOp(s_, w, {0.5f, 0.5f, 0.5f});
  Node* sub = ops::AssignSubVariableOp(s_, w, {1.0f, 0.0f, 0.0f});
  Output read = ops::ReadVariableOp(s_, w, DT_FLOAT);
  Output rows = ops::ResourceGather(s_, w, {2, 0}, DT_FLOAT);
  Start();
  absl::StatusOr<std::vector<Tensor>> before = Run({initialized});
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_FALSE((*before)[0].scalar<bool>());
  absl::Status uninit = Run({read}).status();
  EXPECT_EQ(uninit.code(), absl::StatusCode::kFailedPrecondition) << uninit;
  EXPECT_NE(uninit.message().find("w"), std::string::npos) << uninit;

  ASSERT_TRUE(Run({}, {init}).ok());
  EXPECT_TRUE((*Run({initialized}))[0].scalar<bool>());
  EXPECT_EQ(Floats(read), std::vector<float>({1, 2, 3}));
  ASSERT_TRUE(Run({}, {add}).ok());
  ASSERT_TRUE(Run({}, {sub}).ok());
  EXPECT_EQ(Floats(read), std::vector<float>({0.5f, 2.5f, 3.5f}));
  EXPECT_EQ(Floats(rows), std::vector<float>({3.5f, 0.5f}));
}

// VariableShape gives the value's shape in int32 or int64; before the
// variable is set it fails naming it.
TEST_F(ResourceVariableTest, VariableShapeGivesTheValuesShape) {
  Output w = ops::VarHandleOp(s_.WithOpName("w"), DT_FLOAT, TensorShape({2, 3}));
  Node* init = ops::AssignVariableOp(s_, w, ops::Const(s_, std::vector<float>(6, 1.0f),
                                                       TensorShape({2, 3})));
  Output shape32 = s_.Op("VariableShape").Input(w).Finalize1();
  Output shape64 = s_.Op("VariableShape").Input(w).Attr("out_type", DT_INT64).Finalize1();
  Start();
  absl::Status uninit = Run({shape32}).status();
  EXPECT_EQ(uninit.code(), absl::StatusCode::kFailedPrecondition) << uninit;
  EXPECT_NE(uninit.message().find("w"), std::string::npos) << uninit;
  ASSERT_TRUE(Run({}, {init}).ok());
  absl::StatusOr<std::vector<Tensor>> r = Run({shape32, shape64});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dtype(), DT_INT32);
  EXPECT_EQ((std::vector<int32_t>((*r)[0].data<int32_t>(), (*r)[0].data<int32_t>() + 2)),
            (std::vector<int32_t>{2, 3}));
  EXPECT_EQ((*r)[1].dtype(), DT_INT64);
  EXPECT_EQ((*r)[1].data<int64_t>()[1], 3);
}

// c := w gives c its own buffer: a later in-place update of w (a scatter
// writes into w's buffer even while others hold it) leaves c as it was.
TEST_F(ResourceVariableTest, AnAssignmentCopiesAValueOthersHold) {
  Output w = ops::VarHandleOp(s_.WithOpName("w"), DT_FLOAT, TensorShape({3}));
  Output c = ops::VarHandleOp(s_.WithOpName("c"), DT_FLOAT, TensorShape({3}));
  Node* init = ops::AssignVariableOp(s_, w, {1.0f, 2.0f, 3.0f});
  Node* copy = ops::AssignVariableOp(s_, c, ops::ReadVariableOp(s_, w, DT_FLOAT));
  Node* scatter = ops::ResourceScatterAdd(s_, w, {1}, {10.0f});
  Output w_value = ops::ReadVariableOp(s_, w, DT_FLOAT);
  Output c_value = ops::ReadVariableOp(s_, c, DT_FLOAT);
  Start();
  ASSERT_TRUE(Run({}, {init}).ok());
  ASSERT_TRUE(Run({}, {copy}).ok());
  absl::Status scattered = Run({}, {scatter}).status();
  ASSERT_TRUE(scattered.ok()) << scattered;
  EXPECT_EQ(Floats(w_value), std::vector<float>({1, 12, 3}));
  EXPECT_EQ(Floats(c_value), std::vector<float>({1, 2, 3}));
}

TEST_F(ResourceVariableTest, BadAssignsAndGathersAreErrors) {
  Output w = ops::VarHandleOp(s_.WithOpName("w"), DT_FLOAT, TensorShape({2}));
  Node* init = ops::AssignVariableOp(s_, w, {1.0f, 2.0f});
  Node* wrong_type = ops::AssignVariableOp(s_, w, {1, 2});
  Node* wrong_shape = ops::AssignVariableOp(s_, w, {1.0f, 2.0f, 3.0f});
  Output out_of_range = ops::ResourceGather(s_, w, {2}, DT_FLOAT);
  Output read_as_int = ops::ReadVariableOp(s_, w, DT_INT32);
  Start();
  ASSERT_TRUE(Run({}, {init}).ok());
  absl::Status s = Run({}, {wrong_type}).status();
  EXPECT_NE(s.message().find("of type float"), std::string::npos) << s;
  s = Run({}, {wrong_shape}).status();
  EXPECT_NE(s.message().find("has shape [2]"), std::string::npos) << s;
  s = Run({out_of_range}).status();
  EXPECT_NE(s.message().find("not in [0, 2)"), std::string::npos) << s;
  s = Run({read_as_int}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

// A handle carries no type: an update kernel typed for another dtype than
// the variable's must refuse it, not read its buffer as that type (a double
// update of a float variable would write past the end of it).
TEST_F(ResourceVariableTest, UpdatesOfAnotherTypeAreErrors) {
  Output w = ops::VarHandleOp(s_.WithOpName("w"), DT_FLOAT, TensorShape({2}));
  Output m = ops::VarHandleOp(s_.WithOpName("m"), DT_FLOAT, TensorShape({2}));
  Node* init = ops::AssignVariableOp(s_, w, {1.0f, 2.0f});
  Node* init_m = ops::AssignVariableOp(s_, m, {0.0f, 0.0f});
  Output d = ops::Const(s_, {1.0, 1.0});
  Output lr = ops::Const(s_, 0.5);
  const std::vector<Input> ws = {w}, ds = {d};
  std::vector<Node*> updates = {
      ops::ResourceApplyGradientDescent(s_.WithOpName("gd"), w, lr, d),
      ops::AssignAddVariableOp(s_.WithOpName("add"), w, d),
      ops::ResourceScatterAdd(s_.WithOpName("scatter"), w, {0}, {1.0}),
      s_.WithOpName("momentum").Op("ResourceApplyMomentum")
          .Input(w).Input(m).Input(lr).Input(d).Input(lr).Finalize(),
      s_.WithOpName("adagrad").Op("ResourceApplyAdagrad")
          .Input(w).Input(m).Input(lr).Input(d).Finalize(),
      s_.WithOpName("multi").Op("_MultiResourceApplyGradientDescent")
          .InputList(ws).Input(lr).InputList(ds).Finalize(),
  };
  Output read = ops::ReadVariableOp(s_, w, DT_FLOAT);
  Start();
  ASSERT_TRUE(Run({}, {init, init_m}).ok());
  for (Node* update : updates) {
    SCOPED_TRACE(update->name());
    absl::Status s = Run({}, {update}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("variable w holds float, not the double"), std::string::npos)
        << s;
    EXPECT_NE(s.message().find(update->name()), std::string::npos) << s;
  }
  EXPECT_EQ(Floats(read), std::vector<float>({1, 2}));
}

TEST_F(ResourceVariableTest, ResourceApplyGradientDescentTrains) {
  // loss = sum((w - target)^2); w is a resource variable.
  Output w = ops::VarHandleOp(s_.WithOpName("w"), DT_FLOAT, TensorShape({2}));
  Node* init = ops::AssignVariableOp(s_, w, {0.0f, 0.0f});
  Output value = ops::ReadVariableOp(s_.WithOpName("w/Read/ReadVariableOp"), w, DT_FLOAT);
  Output loss = ops::Sum(s_, ops::Square(s_, ops::Sub(s_, value, {3.0f, -1.0f})), {0});
  absl::StatusOr<std::vector<Output>> g = AddGradients(s_, {loss}, {value});
  ASSERT_TRUE(g.ok()) << g.status();
  Node* step = ops::ResourceApplyGradientDescent(s_.WithOpName("train"), w, 0.1f, (*g)[0]);
  Start();
  ASSERT_TRUE(Run({}, {init}).ok());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(Run({}, {step}).ok()) << i;
  std::vector<float> got = Floats(value);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NEAR(got[0], 3.0f, 1e-4f);
  EXPECT_NEAR(got[1], -1.0f, 1e-4f);
}

}  // namespace
}  // namespace sluice
