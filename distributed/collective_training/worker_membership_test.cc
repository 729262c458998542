#include "distributed/collective_training/worker_membership.h"

#include <set>

#include "gtest/gtest.h"

namespace sluice {
namespace {

ScalingOptions Scaling(bool keep_global = false, bool scale_lr = false) {
  ScalingOptions s;
  s.initial_workers = 3;
  s.global_batch = 96;
  s.learning_rate = 0.1;
  s.keep_global_batch = keep_global;
  s.scale_lr_with_workers = scale_lr;
  return s;
}

TEST(WorkerMembershipTest, EveryMemberComputesTheSamePlanWhateverTheOrder) {
  const std::vector<MemberId> a = {{0, 11}, {1, 22}, {2, 33}};
  const std::vector<MemberId> b = {{2, 33}, {0, 11}, {1, 22}};
  for (int self = 0; self < 3; ++self) {
    absl::StatusOr<MemberPlan> pa = PlanMembers(a, self, 0, Scaling());
    absl::StatusOr<MemberPlan> pb = PlanMembers(b, self, 0, Scaling());
    ASSERT_TRUE(pa.ok() && pb.ok()) << pa.status() << pb.status();
    EXPECT_EQ(pa->generation, pb->generation);
    EXPECT_EQ(pa->rank, self);
    EXPECT_EQ(pa->chief, self == 0);
    EXPECT_EQ(pa->members, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(pa->per_worker_batch, 32);
    EXPECT_EQ(pa->global_batch, 96);
    EXPECT_DOUBLE_EQ(pa->learning_rate, 0.1);
  }
  EXPECT_EQ(MembersKey(a), "0:11,1:22,2:33");
  EXPECT_EQ(MembersKey(b), MembersKey(a));
}

TEST(WorkerMembershipTest, GenerationChangesWithRestartsMembersAndAttempts) {
  const std::vector<MemberId> all = {{0, 11}, {1, 22}, {2, 33}};
  const std::vector<MemberId> restarted = {{0, 11}, {1, 22}, {2, 44}};
  const std::vector<MemberId> survivors = {{0, 11}, {1, 22}};
  std::set<int64_t> seen;
  for (const auto* m : {&all, &restarted, &survivors}) {
    for (int64_t attempt = 0; attempt < 3; ++attempt) {
      const int64_t g = FormationGeneration(*m, attempt);
      EXPECT_GE(g, 1);
      EXPECT_LT(g, int64_t{1} << 40);
      // A group key base + 1000 * generation does not overflow.
      EXPECT_LT(g, (INT64_MAX - 1000000) / 1000);
      seen.insert(g);
    }
  }
  EXPECT_EQ(seen.size(), 9u);  // all distinct
  EXPECT_EQ(FormationGeneration(all, 1), FormationGeneration({{2, 33}, {1, 22}, {0, 11}}, 1));
}

TEST(WorkerMembershipTest, SurvivorsRankByIndexAndTheLowestIsChief) {
  const std::vector<MemberId> survivors = {{2, 33}, {1, 22}};  // worker 0 died
  absl::StatusOr<MemberPlan> p1 = PlanMembers(survivors, 1, 0, Scaling());
  absl::StatusOr<MemberPlan> p2 = PlanMembers(survivors, 2, 0, Scaling());
  ASSERT_TRUE(p1.ok() && p2.ok());
  EXPECT_EQ(p1->members, (std::vector<int>{1, 2}));
  EXPECT_EQ(p1->rank, 0);
  EXPECT_TRUE(p1->chief);
  EXPECT_EQ(p2->rank, 1);
  EXPECT_FALSE(p2->chief);
  EXPECT_EQ(p1->generation, p2->generation);
  // Per-worker batch kept: the global batch shrinks to 2 * 32.
  EXPECT_EQ(p2->per_worker_batch, 32);
  EXPECT_EQ(p2->global_batch, 64);
  EXPECT_EQ(SliceOffset(*p1, 5), 5 * 64);
  EXPECT_EQ(SliceOffset(*p2, 5), 5 * 64 + 32);
}

TEST(WorkerMembershipTest, ScalingFollowsTheUsersChoice) {
  const std::vector<MemberId> two = {{0, 1}, {1, 2}};
  absl::StatusOr<MemberPlan> keep = PlanMembers(two, 1, 0, Scaling(/*keep_global=*/true));
  ASSERT_TRUE(keep.ok());
  EXPECT_EQ(keep->per_worker_batch, 48);
  EXPECT_EQ(keep->global_batch, 96);
  EXPECT_DOUBLE_EQ(keep->learning_rate, 0.1);

  absl::StatusOr<MemberPlan> scaled = PlanMembers(two, 0, 0, Scaling(false, /*scale_lr=*/true));
  ASSERT_TRUE(scaled.ok());
  EXPECT_EQ(scaled->per_worker_batch, 32);
  EXPECT_DOUBLE_EQ(scaled->learning_rate, 0.2);

  // Kept global batch that the survivors do not divide: rounded down.
  ScalingOptions odd = Scaling(true);
  odd.global_batch = 99;
  absl::StatusOr<MemberPlan> rounded = PlanMembers(two, 0, 0, odd);
  ASSERT_TRUE(rounded.ok());
  EXPECT_EQ(rounded->per_worker_batch, 49);
  EXPECT_EQ(rounded->global_batch, 98);
}

TEST(WorkerMembershipTest, BadInputsAreInvalidArgument) {
  const std::vector<MemberId> two = {{0, 1}, {1, 2}};
  EXPECT_EQ(PlanMembers({}, 0, 0, Scaling()).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanMembers(two, 2, 0, Scaling()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanMembers({{0, 1}, {0, 2}}, 0, 0, Scaling()).status().code(),
            absl::StatusCode::kInvalidArgument);
  ScalingOptions bad = Scaling();
  bad.global_batch = 100;  // not a multiple of 3 workers
  absl::Status s = PlanMembers(two, 0, 0, bad).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("multiple of the 3 workers"), absl::string_view::npos) << s;
  bad = Scaling();
  bad.learning_rate = 0;
  EXPECT_EQ(PlanMembers(two, 0, 0, bad).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
