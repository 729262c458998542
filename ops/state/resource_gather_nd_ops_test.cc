// ResourceGatherNd: values from a variable, slices and scalars, its
// gradient to the variable, and an index out of range.
#include "ops/state/resource_gather_nd_ops.h"

#include <memory>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::ExpectTensor;

TEST(ResourceGatherNdTest, GathersAndDifferentiates) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = ops::VarHandleOp(s, DT_FLOAT, TensorShape({3, 2}));
  Node* init = ops::AssignVariableOp(s, v, ops::Const(s, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}))));
  const Scope after = s.WithControlDependencies(std::vector<Node*>{init});
  Output points = ops::ResourceGatherNd(after, v, ops::Const(s, Tensor::FromVector<int32_t>({1, 0, 2, 1}, TensorShape({2, 2}))), DT_FLOAT);
  Output rows = ops::ResourceGatherNd(after, v, ops::Const(s, Tensor::FromVector<int64_t>({2, 0}, TensorShape({2, 1}))), DT_FLOAT);
  Output loss = ops::Add(s, ops::Sum(s, ops::Mul(s, points, ops::Const(s, Tensor::FromVector<float>({10, 20}))), ops::Const(s, 0)),
                         ops::Sum(s, rows, ops::Const(s, Tensor::FromVector<int32_t>({0, 1}))));
  absl::StatusOr<std::vector<Output>> g = AddGradients(s, {loss}, {v});
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run({}, {points.name(), rows.name(), (*g)[0].name()}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<float>((*out)[0], TensorShape({2}), {3, 6});
  ExpectTensor<float>((*out)[1], TensorShape({2, 2}), {5, 6, 1, 2});
  // d loss / d v: 10 at [1, 0], 20 at [2, 1], 1 on rows 2 and 0.
  ExpectTensor<float>((*out)[2], TensorShape({3, 2}), {1, 1, 10, 0, 1, 21});
}

TEST(ResourceGatherNdTest, IndexOutOfRange) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = ops::VarHandleOp(s, DT_FLOAT, TensorShape({2}));
  Node* init = ops::AssignVariableOp(s, v, ops::Const(s, Tensor::FromVector<float>({1, 2})));
  Output bad = ops::ResourceGatherNd(s.WithControlDependencies(std::vector<Node*>{init}), v,
                                     ops::Const(s, Tensor::FromVector<int32_t>({5}, TensorShape({1, 1}))), DT_FLOAT);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run({}, {bad.name()}, {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
}

}  // namespace
}  // namespace sluice
