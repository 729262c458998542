#include "ops/gpu/reduction_plan.h"

#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace internal {
namespace {

using Kind = GpuReducePlan::Kind;

GpuReducePlan Plan(const TensorShape& in, std::vector<int64_t> axes, bool keep_dims = false) {
  absl::StatusOr<GpuReducePlan> plan = MakeGpuReducePlan(in, axes, keep_dims);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : GpuReducePlan{};
}

TEST(GpuReducePlanTest, LastAxisIsARowReduction) {
  const GpuReducePlan p = Plan(TensorShape({4, 5, 6}), {2});
  EXPECT_EQ(p.kind, Kind::kThreeD);
  EXPECT_EQ(p.outer, 20);
  EXPECT_EQ(p.reduced, 6);
  EXPECT_EQ(p.inner, 1);
  EXPECT_EQ(p.out_shape, TensorShape({4, 5}));
  EXPECT_EQ(p.out_count, 20);
  EXPECT_EQ(p.reduced_count, 6);
}

TEST(GpuReducePlanTest, LeadingAxesAreAColumnReduction) {
  const GpuReducePlan p = Plan(TensorShape({4, 5, 6}), {0, -2}, /*keep_dims=*/true);
  EXPECT_EQ(p.kind, Kind::kThreeD);
  EXPECT_EQ(p.outer, 1);
  EXPECT_EQ(p.reduced, 20);
  EXPECT_EQ(p.inner, 6);
  EXPECT_EQ(p.out_shape, TensorShape({1, 1, 6}));
}

TEST(GpuReducePlanTest, MiddleAxisIsThreeD) {
  const GpuReducePlan p = Plan(TensorShape({3, 7, 2, 5}), {1, 2});
  EXPECT_EQ(p.kind, Kind::kThreeD);
  EXPECT_EQ(p.outer, 3);
  EXPECT_EQ(p.reduced, 14);
  EXPECT_EQ(p.inner, 5);
  EXPECT_EQ(p.out_shape, TensorShape({3, 5}));
}

TEST(GpuReducePlanTest, AllAxesAndRepeatedAxes) {
  const GpuReducePlan p = Plan(TensorShape({3, 4}), {1, 0, -1});
  EXPECT_EQ(p.kind, Kind::kThreeD);
  EXPECT_EQ(p.outer, 1);
  EXPECT_EQ(p.reduced, 12);
  EXPECT_EQ(p.inner, 1);
  EXPECT_EQ(p.out_shape, TensorShape({}));
  EXPECT_EQ(p.out_count, 1);
}

TEST(GpuReducePlanTest, SizeOneAxesAreDropped) {
  // Reducing [4, 1, 6] over {1, 2}: rows of 6.
  GpuReducePlan p = Plan(TensorShape({4, 1, 6}), {1, 2});
  EXPECT_EQ(p.kind, Kind::kThreeD);
  EXPECT_EQ(p.outer, 4);
  EXPECT_EQ(p.reduced, 6);
  EXPECT_EQ(p.inner, 1);
  // Only a size-1 axis reduced: the data stay as they are.
  p = Plan(TensorShape({4, 1, 6}), {1}, /*keep_dims=*/false);
  EXPECT_EQ(p.kind, Kind::kIdentity);
  EXPECT_EQ(p.out_shape, TensorShape({4, 6}));
  EXPECT_EQ(Plan(TensorShape({4, 6}), {}).kind, Kind::kIdentity);
  EXPECT_EQ(Plan(TensorShape({}), {}).kind, Kind::kIdentity);
}

TEST(GpuReducePlanTest, AlternatingAxesAreGeneral) {
  const GpuReducePlan p = Plan(TensorShape({2, 3, 4, 5}), {0, 2});
  EXPECT_EQ(p.kind, Kind::kGeneral);
  EXPECT_EQ(p.groups, (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_TRUE(p.first_reduced);
  EXPECT_EQ(p.reduced_count, 8);
  EXPECT_EQ(p.out_shape, TensorShape({3, 5}));
  const GpuReducePlan q = Plan(TensorShape({2, 3, 1, 4, 5}), {1, 2, 4});
  EXPECT_EQ(q.kind, Kind::kGeneral);
  EXPECT_EQ(q.groups, (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_FALSE(q.first_reduced);
}

TEST(GpuReducePlanTest, EmptyInputs) {
  GpuReducePlan p = Plan(TensorShape({3, 0}), {1});
  EXPECT_EQ(p.kind, Kind::kEmpty);
  EXPECT_EQ(p.out_count, 3);
  EXPECT_EQ(p.reduced_count, 0);
  p = Plan(TensorShape({0, 3}), {1});
  EXPECT_EQ(p.kind, Kind::kEmpty);
  EXPECT_EQ(p.out_count, 0);
  EXPECT_EQ(p.out_shape, TensorShape({0}));
}

TEST(GpuReducePlanTest, AxisOutOfRange) {
  absl::StatusOr<GpuReducePlan> p = MakeGpuReducePlan(TensorShape({2, 3}), {2}, false);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("Invalid reduction dimension 2"), std::string::npos);
  EXPECT_FALSE(MakeGpuReducePlan(TensorShape({2, 3}), {-3}, false).ok());
  EXPECT_FALSE(MakeGpuReducePlan(TensorShape({}), {0}, false).ok());
}

}  // namespace
}  // namespace internal
}  // namespace sluice
