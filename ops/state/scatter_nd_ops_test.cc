// The N-d variable scatters on ref and resource variables, with values
// from TensorFlow's scatter_nd_ops_test.py (its numpy reference) worked by
// hand: slices and elements, repeated indices, IGNORE, and the errors.
#include "ops/state/scatter_nd_ops.h"

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

class ScatterNdTest : public testing_util::SessionFixture {};

TEST_F(ScatterNdTest, RefSlicesAndElements) {
  // A [4, 2] variable; rows 3 and 1 (indices [2, 1]); then elements ([2, 2]).
  Output init = ops::Const<float>(s_, {1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({4, 2}));
  ops::VariableAndInit u = ops::VariableWithInit(s_.WithOpName("u"), init);
  ops::VariableAndInit a = ops::VariableWithInit(s_.WithOpName("a"), init);
  ops::VariableAndInit mx = ops::VariableWithInit(s_.WithOpName("mx"), init);
  Output rows = ops::Const<int32_t>(s_, {3, 1}, TensorShape({2, 1}));
  Output vals = ops::Const<float>(s_, {10, 0, 20, 30}, TensorShape({2, 2}));
  Output upd = ops::ScatterNdUpdate(s_, u.var, rows, vals);
  // Elements [0, 1] twice and [2, 0]: the repeated one adds twice.
  Output elems = ops::Const<int64_t>(s_, {0, 1, 0, 1, 2, 0}, TensorShape({3, 2}));
  Output add = ops::ScatterNdAdd(s_, a.var, elems, ops::Const<float>(s_, {1, 2, 3}, TensorShape({3})));
  Output max = ops::ScatterNdMax(s_, mx.var, rows, vals);
  EXPECT_EQ(upd.dtype(), DT_FLOAT_REF);
  EXPECT_EQ(upd.shape(), TensorShape({4, 2}));
  Start({u.initializer, a.initializer, mx.initializer});
  EXPECT_EQ(Fetch<float>(upd), (std::vector<float>{1, 2, 20, 30, 5, 6, 10, 0}));
  EXPECT_EQ(Fetch<float>(add), (std::vector<float>{1, 5, 3, 4, 8, 6, 7, 8}));
  EXPECT_EQ(Fetch<float>(max), (std::vector<float>{1, 2, 20, 30, 5, 6, 10, 8}));
}

TEST_F(ScatterNdTest, ResourceFormsAndIgnoredIndices) {
  Output h = ops::VarHandleOp(s_.WithOpName("h"), DT_INT32, TensorShape({2, 3}));
  Node* init = ops::AssignVariableOp(s_, h, ops::Const<int32_t>(s_, {1, 2, 3, 4, 5, 6}, TensorShape({2, 3})));
  Output idx = ops::Const<int32_t>(s_, {1, 2, 0, 0}, TensorShape({2, 2}));
  Node* sub = ops::ResourceScatterNdSub(s_, h, idx, ops::Const<int32_t>(s_, {10, 1}, TensorShape({2})));
  Node* min = ops::ResourceScatterNdMin(s_, h, ops::Const<int32_t>(s_, {1}, TensorShape({1, 1})),
                                        ops::Const<int32_t>(s_, {9, 0, 9}, TensorShape({1, 3})));
  // An index row past the variable: skipped under IGNORE, else an error.
  Output bad = ops::Const<int32_t>(s_, {5, 0, 0, 2}, TensorShape({2, 2}));
  Output two = ops::Const<int32_t>(s_, {7, 8}, TensorShape({2}));
  Node* ignored = s_.Op("ResourceScatterNdUpdate")
                      .Input(h)
                      .Input(bad)
                      .Input(two)
                      .Attr("bad_indices_policy", std::string("IGNORE"))
                      .Finalize();
  Node* refused = ops::ResourceScatterNdUpdate(s_, h, bad, two);
  Output read = ops::ReadVariableOp(s_, h, DT_INT32);
  Start({init});
  ASSERT_TRUE(RunTarget(sub).ok());
  EXPECT_EQ(Fetch<int32_t>(read), (std::vector<int32_t>{0, 2, 3, 4, 5, -4}));
  ASSERT_TRUE(RunTarget(min).ok());
  EXPECT_EQ(Fetch<int32_t>(read), (std::vector<int32_t>{0, 2, 3, 4, 0, -4}));
  ASSERT_TRUE(RunTarget(ignored).ok());
  EXPECT_EQ(Fetch<int32_t>(read), (std::vector<int32_t>{0, 2, 8, 4, 0, -4}));
  absl::Status st = RunTarget(refused);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("indices[0] = [5, 0] does not index into shape [2,3]"));
  EXPECT_EQ(Fetch<int32_t>(read), (std::vector<int32_t>{0, 2, 8, 4, 0, -4}));  // untouched
}

TEST_F(ScatterNdTest, ShapeErrors) {
  Output h = ops::VarHandleOp(s_.WithOpName("h"), DT_FLOAT, TensorShape({2, 3}));
  Node* init = ops::AssignVariableOp(s_, h, ops::Const<float>(s_, {1, 2, 3, 4, 5, 6}, TensorShape({2, 3})));
  // updates must be [1, 3] for one row index.
  Node* wrong = ops::ResourceScatterNdAdd(s_, h, ops::Const<int32_t>(s_, {1}, TensorShape({1, 1})),
                                          ops::Const<float>(s_, {1, 2}, TensorShape({1, 2})));
  // Deeper indices than the variable's rank.
  Node* deep = ops::ResourceScatterNdAdd(s_, h, ops::Const<int32_t>(s_, {0, 0, 0}, TensorShape({1, 3})),
                                         ops::Const<float>(s_, {1}, TensorShape({1})));
  Start({init});
  EXPECT_EQ(RunTarget(wrong).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(RunTarget(wrong).message()), HasSubstr("ResourceScatterNdAdd"));
  EXPECT_EQ(RunTarget(deep).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
