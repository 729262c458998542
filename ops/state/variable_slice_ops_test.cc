// Slice assignments on resource and ref variables (broadcast values, shrunk
// axes, negative strides, a read before the write keeping its values) and
// CountUpTo to its limit; the errors name what is wrong.
#include "ops/state/variable_slice_ops.h"

#include <string>
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

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class VariableSliceOpsTest : public testing_util::SessionFixture {
 protected:
  std::string Error(Node* n) { return std::string(RunTarget(n).message()); }
};

TEST_F(VariableSliceOpsTest, ResourceSlicesTakeBroadcastValues) {
  Output v = ops::VarHandleOp(s_.WithOpName("v"), DT_FLOAT, TensorShape({2, 3}));
  Node* init = ops::AssignVariableOp(s_, v, ops::Const(s_, Tensor::FromVector<float>(
                                                               {1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))));
  Output before = ops::ReadVariableOp(s_, v, DT_FLOAT);
  // v[:, ::2] = [9, 8]; v[1, ::-1] = [30, 20, 10]; v[0, 1] = -1.
  Node* cols = ops::ResourceStridedSliceAssign(s_, v, {0, 0}, {0, 3}, {1, 2}, {9.0f, 8.0f},
                                               {.begin_mask = 1, .end_mask = 1});
  Node* reversed = ops::ResourceStridedSliceAssign(s_, v, {1, -1}, {2, 0}, {1, -1},
                                                   {30.0f, 20.0f, 10.0f},
                                                   {.end_mask = 2, .shrink_axis_mask = 1});
  Node* one = ops::ResourceStridedSliceAssign(s_, v, {0, 1}, {1, 2}, {1, 1}, -1.0f,
                                              {.shrink_axis_mask = 3});
  Output after = ops::ReadVariableOp(s_, v, DT_FLOAT);
  Start({init});
  std::vector<Tensor> held = *sess_->Run({}, {before}, {});  // read, and kept
  ASSERT_TRUE(RunTarget(cols).ok());
  EXPECT_THAT(Fetch<float>(after), ElementsAre(9, 2, 8, 9, 5, 8));
  ASSERT_TRUE(RunTarget(reversed).ok());
  ASSERT_TRUE(RunTarget(one).ok());
  EXPECT_THAT(Fetch<float>(after), ElementsAre(9, -1, 8, 10, 20, 30));
  EXPECT_THAT(std::vector<float>(held[0].flat<float>().begin(), held[0].flat<float>().end()),
              ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST_F(VariableSliceOpsTest, RefVariablesAndTheirOutputRef) {
  ops::VariableAndInit w = ops::VariableWithInit(s_.WithOpName("w"), {1, 2, 3, 4});
  Output assigned = ops::StridedSliceAssign(s_, w.var, {1}, {3}, {1}, {7, 7});
  Start({w.initializer});
  EXPECT_THAT(Fetch<int32_t>(assigned), ElementsAre(1, 7, 7, 4));
  EXPECT_THAT(Fetch<int32_t>(w.var), ElementsAre(1, 7, 7, 4));
}

TEST_F(VariableSliceOpsTest, BadSlicesAndValuesSayWhatIsWrong) {
  Output v = ops::VarHandleOp(s_.WithOpName("v"), DT_FLOAT, TensorShape({2, 3}));
  Output never = ops::VarHandleOp(s_.WithOpName("never"), DT_FLOAT, TensorShape({2}));
  Node* init = ops::AssignVariableOp(s_, v, ops::Const(s_, Tensor(DT_FLOAT, TensorShape({2, 3}))));
  Node* wide = ops::ResourceStridedSliceAssign(s_, v, {0, 0}, {2, 2}, {1, 1}, {1.0f, 2.0f, 3.0f});
  Node* zero_stride = ops::ResourceStridedSliceAssign(s_, v, {0}, {1}, {0}, 1.0f);
  Node* wrong_type = ops::ResourceStridedSliceAssign(s_, v, {0}, {1}, {1}, 1);
  Node* uninit = ops::ResourceStridedSliceAssign(s_, never, {0}, {1}, {1}, 1.0f);
  Start({init});
  EXPECT_THAT(Error(wide), HasSubstr("cannot broadcast a value of shape [3] to the slice's "
                                     "shape [2,2]"));
  EXPECT_THAT(Error(zero_stride), HasSubstr("stride"));
  EXPECT_THAT(Error(wrong_type), HasSubstr("holds float, the value is int32"));
  EXPECT_THAT(Error(uninit), HasSubstr("uninitialized"));
}

TEST_F(VariableSliceOpsTest, CountUpToStopsAtItsLimit) {
  ops::VariableAndInit epochs = ops::VariableWithInit(s_.WithOpName("epochs"), int64_t{0});
  Output count = ops::CountUpTo(s_, epochs.var, 2);
  Output r = ops::VarHandleOp(s_.WithOpName("r"), DT_INT32, TensorShape());
  Node* r_init = ops::AssignVariableOp(s_, r, 5);
  Output rcount = ops::ResourceCountUpTo(s_, r, 6, DT_INT32);
  Start({epochs.initializer, r_init});
  EXPECT_THAT(Fetch<int64_t>(count), ElementsAre(0));
  EXPECT_THAT(Fetch<int64_t>(count), ElementsAre(1));
  absl::Status done = sess_->Run({}, {count}, {}).status();
  EXPECT_EQ(done.code(), absl::StatusCode::kOutOfRange) << done;
  EXPECT_THAT(done.message(), HasSubstr("Reached limit of 2"));
  EXPECT_THAT(Fetch<int64_t>(epochs.var), ElementsAre(2));
  EXPECT_THAT(Fetch<int32_t>(rcount), ElementsAre(5));
  EXPECT_EQ(sess_->Run({}, {rcount}, {}).status().code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace sluice
