// ScatterUpdate, ScatterAdd, ScatterSub and their resource forms. Expected
// values follow TensorFlow's scatter_ops_test.py (its numpy reference: rows
// addressed by indices, duplicates adding up for Add/Sub) by hand.
#include "ops/state/scatter_ops.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_ops.h"
#include "ops/testutil/session_fixture.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

class ScatterTest : public testing_util::SessionFixture {};

TEST_F(ScatterTest, UpdateAddSubOnRows) {
  Output init = ops::Const<float>(s_, {1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  ops::VariableAndInit u = ops::VariableWithInit(s_.WithOpName("u"), init);
  ops::VariableAndInit a = ops::VariableWithInit(s_.WithOpName("a"), init);
  ops::VariableAndInit b = ops::VariableWithInit(s_.WithOpName("b"), init);
  Output rows = ops::Const<float>(s_, {10, 20, 30, 40}, TensorShape({2, 2}));
  Output upd = ops::ScatterUpdate(s_, u.var, {2, 0}, rows);
  Output add = ops::ScatterAdd(s_, a.var, {int64_t{2}, int64_t{0}}, rows);
  Output sub = ops::ScatterSub(s_, b.var, {2, 0}, rows);
  EXPECT_EQ(upd.dtype(), DT_FLOAT_REF);
  EXPECT_EQ(upd.shape(), TensorShape({3, 2}));
  Start({u.initializer, a.initializer, b.initializer});
  EXPECT_EQ(Fetch<float>(upd), (std::vector<float>{30, 40, 3, 4, 10, 20}));
  EXPECT_EQ(Fetch<float>(add), (std::vector<float>{31, 42, 3, 4, 15, 26}));
  EXPECT_EQ(Fetch<float>(sub), (std::vector<float>{-29, -38, 3, 4, -5, -14}));
}

TEST_F(ScatterTest, DuplicateIndices) {
  ops::VariableAndInit a = ops::VariableWithInit(s_.WithOpName("a"), {0, 0, 0});
  ops::VariableAndInit u = ops::VariableWithInit(s_.WithOpName("u"), {0, 0, 0});
  Output add = ops::ScatterAdd(s_, a.var, {1, 1, 1}, {1, 2, 3});
  Output upd = ops::ScatterUpdate(s_, u.var, {1, 1}, {7, 9});
  Start({a.initializer, u.initializer});
  EXPECT_EQ(Fetch<int32_t>(add), (std::vector<int32_t>{0, 6, 0}));
  EXPECT_EQ(Fetch<int32_t>(upd), (std::vector<int32_t>{0, 9, 0}));  // the last write
}

TEST_F(ScatterTest, MatrixIndicesScalarUpdatesAndInt64Values) {
  ops::VariableAndInit v = ops::VariableWithInit(
      s_.WithOpName("v"), {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}});
  Output idx = ops::Const<int32_t>(s_, {0, 3}, TensorShape({1, 2}));
  Output updates = ops::Const<int64_t>(s_, {100, 200}, TensorShape({1, 2}));
  Output add = ops::ScatterAdd(s_, v.var, idx, updates);
  ops::VariableAndInit w = ops::VariableWithInit(s_.WithOpName("w"), {1.0, 2.0, 3.0});
  Output sub = ops::ScatterSub(s_, w.var, {0, 2}, 0.5);  // a scalar update for every row
  Start({v.initializer, w.initializer});
  EXPECT_EQ(Fetch<int64_t>(add), (std::vector<int64_t>{101, 2, 3, 204}));
  EXPECT_EQ(Fetch<double>(sub), (std::vector<double>{0.5, 2.0, 2.5}));
}

TEST_F(ScatterTest, OutOfRangeMatrixIndexNamesItsPosition) {
  ops::VariableAndInit v = ops::VariableWithInit(s_.WithOpName("v"), {1.0f, 2.0f});
  Output idx = ops::Const<int64_t>(s_, {0, 1, 1, 5}, TensorShape({2, 2}));
  Output upd = ops::ScatterUpdate(s_, v.var, idx, 0.0f);
  Start({v.initializer});
  absl::Status st = RunTarget(upd.node);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("indices[1,1] = 5 is not in [0, 2)"));
}

TEST_F(ScatterTest, OutOfRangeIndexIsInvalidArgumentAndWritesNothing) {
  ops::VariableAndInit v = ops::VariableWithInit(s_.WithOpName("v"), {1.0f, 2.0f, 3.0f});
  Output add = ops::ScatterAdd(s_, v.var, {0, 3}, {1.0f, 1.0f});
  Output neg = ops::ScatterUpdate(s_, v.var, {-1}, {1.0f});
  Start({v.initializer});
  absl::Status st = RunTarget(add.node);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("indices[1] = 3 is not in [0, 3)"));
  st = RunTarget(neg.node);
  EXPECT_THAT(st.message(), HasSubstr("indices[0] = -1 is not in [0, 3)"));
  EXPECT_EQ(Fetch<float>(v.var), (std::vector<float>{1, 2, 3}));
}

TEST_F(ScatterTest, BadUpdatesShape) {
  Output v = ops::Variable(s_.WithOpName("v"), TensorShape({3, 2}), DT_FLOAT);
  ops::ScatterAdd(s_, v, {0}, {1.0f, 2.0f, 3.0f});
  EXPECT_EQ(s_.status().code(), absl::StatusCode::kInvalidArgument) << s_.status();
  EXPECT_THAT(s_.status().message(), HasSubstr("updates must have shape"));
}

TEST_F(ScatterTest, BadUpdatesShapeAtRunTime) {
  ops::VariableAndInit v = ops::VariableWithInit(s_.WithOpName("v"), {1.0f, 2.0f, 3.0f});
  Output updates = ops::Placeholder(s_.WithOpName("updates"), DT_FLOAT);
  Output add = ops::ScatterAdd(s_, v.var, {0}, updates);
  Start({v.initializer});
  absl::Status st =
      sess_->Run({{updates, Tensor::FromVector<float>({1, 2})}}, {}, {add.node}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("updates.shape [2], indices.shape [1], params.shape [3]"));
}

TEST_F(ScatterTest, UninitializedIsFailedPrecondition) {
  Output v = ops::Variable(s_.WithOpName("v"), TensorShape({2}), DT_FLOAT);
  Output add = ops::ScatterAdd(s_, v, {0}, {1.0f});
  Start({});
  absl::Status st = RunTarget(add.node);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(st.message(), HasSubstr("Attempting to use uninitialized value v"));
}

TEST_F(ScatterTest, EmptyIndicesChangeNothing) {
  ops::VariableAndInit v = ops::VariableWithInit(s_.WithOpName("v"), {1.0f, 2.0f});
  Output add = ops::ScatterAdd(s_, v.var, ops::Const<int32_t>(s_, std::vector<int32_t>{}),
                               ops::Const<float>(s_, std::vector<float>{}));
  Start({v.initializer});
  EXPECT_EQ(Fetch<float>(add), (std::vector<float>{1, 2}));
}

TEST_F(ScatterTest, ResourceForms) {
  Output h = ops::VarHandleOp(s_.WithOpName("h"), DT_FLOAT, TensorShape({3}));
  Node* init = ops::AssignVariableOp(s_, h, {1.0f, 2.0f, 3.0f});
  Node* add = ops::ResourceScatterAdd(s_, h, {0, 0}, {1.0f, 1.0f});
  Node* sub = ops::ResourceScatterSub(s_, h, {int64_t{1}}, {0.5f});
  Node* upd = ops::ResourceScatterUpdate(s_, h, {2}, {9.0f});
  Output read = ops::ReadVariableOp(s_, h, DT_FLOAT);
  Start({init});
  ASSERT_TRUE(RunTarget(add).ok());
  ASSERT_TRUE(RunTarget(sub).ok());
  ASSERT_TRUE(RunTarget(upd).ok());
  EXPECT_EQ(Fetch<float>(read), (std::vector<float>{3, 1.5f, 9}));
}

TEST_F(ScatterTest, MulDivMinMaxOnRows) {
  Output init = ops::Const<float>(s_, {1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  ops::VariableAndInit m = ops::VariableWithInit(s_.WithOpName("m"), init);
  ops::VariableAndInit d = ops::VariableWithInit(s_.WithOpName("d"), init);
  ops::VariableAndInit lo = ops::VariableWithInit(s_.WithOpName("lo"), init);
  ops::VariableAndInit hi = ops::VariableWithInit(s_.WithOpName("hi"), init);
  Output rows = ops::Const<float>(s_, {2, 2, 0.5f, 10}, TensorShape({2, 2}));
  Output mul = ops::ScatterMul(s_, m.var, {2, 0}, rows);
  Output div = ops::ScatterDiv(s_, d.var, {2, 0}, rows);
  Output min = ops::ScatterMin(s_, lo.var, {int64_t{2}, int64_t{0}}, rows);
  Output max = ops::ScatterMax(s_, hi.var, {2, 0}, rows);
  Start({m.initializer, d.initializer, lo.initializer, hi.initializer});
  EXPECT_EQ(Fetch<float>(mul), (std::vector<float>{0.5f, 20, 3, 4, 10, 12}));
  EXPECT_EQ(Fetch<float>(div), (std::vector<float>{2, 0.2f, 3, 4, 2.5f, 3}));
  EXPECT_EQ(Fetch<float>(min), (std::vector<float>{0.5f, 2, 3, 4, 2, 2}));
  EXPECT_EQ(Fetch<float>(max), (std::vector<float>{1, 10, 3, 4, 5, 6}));
}

TEST_F(ScatterTest, IntegerDivisionByZeroWritesNothing) {
  Output h = ops::VarHandleOp(s_.WithOpName("h"), DT_INT32, TensorShape({3}));
  Node* init = ops::AssignVariableOp(s_, h, {4, 8, 12});
  Node* div = ops::ResourceScatterDiv(s_, h, {0, 1}, {2, 0});
  Node* mul = ops::ResourceScatterMul(s_, h, {2, 2}, {2, 3});
  Node* max = ops::ResourceScatterMax(s_, h, {0}, {100});
  Node* min = ops::ResourceScatterMin(s_, h, {1}, {-1});
  Output read = ops::ReadVariableOp(s_, h, DT_INT32);
  Start({init});
  absl::Status st = RunTarget(div);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("integer division by zero (updates[1])"));
  EXPECT_EQ(Fetch<int32_t>(read), (std::vector<int32_t>{4, 8, 12}));
  ASSERT_TRUE(RunTarget(mul).ok());
  ASSERT_TRUE(RunTarget(max).ok());
  ASSERT_TRUE(RunTarget(min).ok());
  EXPECT_EQ(Fetch<int32_t>(read), (std::vector<int32_t>{100, -1, 72}));
}

}  // namespace
}  // namespace sluice
