#include "ops/math/internal/batch_matmul_plan.h"

#include <vector>

#include "gtest/gtest.h"

namespace sluice::internal {
namespace {

TEST(BatchMatMulPlanTest, EqualBatchesAreOneStride) {
  absl::StatusOr<BatchMatMulPlan> p =
      PlanBatchMatMul("BatchMatMulV2", TensorShape({2, 3, 4, 5}), TensorShape({2, 3, 5, 6}),
                      false, false, true);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->out_shape, TensorShape({2, 3, 4, 6}));
  EXPECT_EQ(p->m, 4);
  EXPECT_EQ(p->n, 6);
  EXPECT_EQ(p->k, 5);
  EXPECT_EQ(p->batches, 6);
  EXPECT_TRUE(p->strided);
  EXPECT_EQ(p->x_stride, 1);
  EXPECT_EQ(p->y_stride, 1);
  EXPECT_EQ(p->y_index, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(BatchMatMulPlanTest, AnUnbatchedOperandHasStrideZero) {
  // x [3, 4, 5] times a weight y [5, 6]; adjoints swap the last two dims.
  absl::StatusOr<BatchMatMulPlan> p = PlanBatchMatMul(
      "BatchMatMulV2", TensorShape({3, 5, 4}), TensorShape({6, 5}), true, true, true);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->out_shape, TensorShape({3, 4, 6}));
  EXPECT_TRUE(p->strided);
  EXPECT_EQ(p->x_stride, 1);
  EXPECT_EQ(p->y_stride, 0);
  // A batch dimension of 1 broadcasts the same way.
  p = PlanBatchMatMul("BatchMatMulV2", TensorShape({1, 4, 5}), TensorShape({3, 5, 6}), false,
                      false, true);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->strided);
  EXPECT_EQ(p->x_stride, 0);
  EXPECT_EQ(p->y_stride, 1);
}

TEST(BatchMatMulPlanTest, CrossBroadcastIsNotStrided) {
  // [2, 1] against [1, 3] batches: x repeats each of its 2 matrices 3 times,
  // y cycles through its 3.
  absl::StatusOr<BatchMatMulPlan> p = PlanBatchMatMul(
      "BatchMatMulV2", TensorShape({2, 1, 4, 5}), TensorShape({1, 3, 5, 6}), false, false, true);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->out_shape, TensorShape({2, 3, 4, 6}));
  EXPECT_FALSE(p->strided);
  EXPECT_EQ(p->x_index, (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(p->y_index, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
}

TEST(BatchMatMulPlanTest, BadShapesNameTheOp) {
  absl::StatusOr<BatchMatMulPlan> p =
      PlanBatchMatMul("BatchMatMulV2", TensorShape({4}), TensorShape({4, 5}), false, false, true);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("BatchMatMulV2: inputs must be at least 2-D"),
            absl::string_view::npos)
      << p.status();
  p = PlanBatchMatMul("BatchMatMul", TensorShape({2, 4, 5}), TensorShape({2, 6, 7}), false, false,
                      false);
  EXPECT_NE(p.status().message().find("inner dimensions"), absl::string_view::npos) << p.status();
  p = PlanBatchMatMul("BatchMatMul", TensorShape({2, 4, 5}), TensorShape({3, 5, 7}), false, false,
                      false);
  EXPECT_NE(p.status().message().find("BatchMatMul: batch dimensions"), absl::string_view::npos)
      << p.status();
  p = PlanBatchMatMul("BatchMatMulV2", TensorShape({2, 4, 5}), TensorShape({3, 5, 7}), false,
                      false, true);
  EXPECT_NE(p.status().message().find("do not broadcast"), absl::string_view::npos) << p.status();
}

// Shape inference sees unknown batch dimensions (-1): without broadcasting
// an unknown one takes the other's size; with it, a known size above 1 wins
// and a 1 leaves the result unknown. Known sizes that differ are refused.
TEST(BatchMatMulPlanTest, UnknownBatchDimensions) {
  const TensorShape x({-1, 3, 4, 5}), y({2, -1, 5, 6});
  absl::StatusOr<std::vector<int64_t>> b = BatchMatMulBatchDims(x, y, /*broadcast=*/false);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, (std::vector<int64_t>{2, 3}));
  b = BatchMatMulBatchDims(TensorShape({-1, 1, 4, 5}), TensorShape({2, -1, 5, 6}), true);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, (std::vector<int64_t>{2, -1}));
  EXPECT_FALSE(BatchMatMulBatchDims(TensorShape({3, 4, 5}), TensorShape({2, 5, 6}), false).ok());
  EXPECT_FALSE(BatchMatMulBatchDims(TensorShape({3, 4, 5}), TensorShape({2, 5, 6}), true).ok());
  EXPECT_FALSE(BatchMatMulBatchDims(TensorShape({4, 5}), TensorShape({2, 5, 6}), false).ok());
}

}  // namespace
}  // namespace sluice::internal
