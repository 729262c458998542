#include "distributed/collective_training/worker_membership.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice {
namespace {

constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;
constexpr uint64_t kGenerationRange = (uint64_t{1} << 40) - 1;

void Mix(uint64_t* h, uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    *h ^= (value >> (8 * i)) & 0xff;
    *h *= kFnvPrime;
  }
}

void SortByIndex(std::vector<MemberId>* members) {
  std::sort(members->begin(), members->end(), [](const MemberId& a, const MemberId& b) {
    return a.index != b.index ? a.index < b.index : a.incarnation < b.incarnation;
  });
}

}  // namespace

std::string MembersKey(std::vector<MemberId> members) {
  SortByIndex(&members);
  return absl::StrJoin(members, ",", [](std::string* out, const MemberId& m) {
    absl::StrAppend(out, m.index, ":", m.incarnation);
  });
}

int64_t FormationGeneration(std::vector<MemberId> members, int64_t attempt) {
  SortByIndex(&members);
  uint64_t h = kFnvOffset;
  Mix(&h, members.size());
  for (const MemberId& m : members) {
    Mix(&h, static_cast<uint64_t>(m.index));
    Mix(&h, static_cast<uint64_t>(m.incarnation));
  }
  Mix(&h, static_cast<uint64_t>(attempt));
  // Fold the high bits in before reducing, so every input bit counts.
  h ^= h >> 29;
  return static_cast<int64_t>(h % kGenerationRange) + 1;
}

absl::StatusOr<MemberPlan> PlanMembers(const std::vector<MemberId>& members, int self,
                                       int64_t attempt, const ScalingOptions& scaling) {
  if (members.empty()) return absl::InvalidArgumentError("membership: no members");
  if (scaling.initial_workers < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("membership: initial_workers is ", scaling.initial_workers, "; need >= 1"));
  }
  if (scaling.global_batch <= 0 || scaling.global_batch % scaling.initial_workers != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("membership: the global batch (", scaling.global_batch,
                     ") must be a positive multiple of the ", scaling.initial_workers, " workers"));
  }
  if (!(scaling.learning_rate > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("membership: learning rate ", scaling.learning_rate, " is not positive"));
  }
  MemberPlan plan;
  plan.self = self;
  std::set<int> seen;
  for (const MemberId& m : members) {
    if (!seen.insert(m.index).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("membership: worker ", m.index, " is listed twice"));
    }
    plan.members.push_back(m.index);
  }
  std::sort(plan.members.begin(), plan.members.end());
  auto at = std::find(plan.members.begin(), plan.members.end(), self);
  if (at == plan.members.end()) {
    return absl::InvalidArgumentError(absl::StrCat("membership: worker ", self,
                                                   " is not among the members ",
                                                   absl::StrJoin(plan.members, ",")));
  }
  plan.rank = static_cast<int>(at - plan.members.begin());
  plan.chief = plan.rank == 0;
  plan.generation = FormationGeneration(members, attempt);
  const int64_t n = static_cast<int64_t>(plan.members.size());
  plan.per_worker_batch = scaling.keep_global_batch
                              ? std::max<int64_t>(1, scaling.global_batch / n)
                              : scaling.global_batch / scaling.initial_workers;
  plan.global_batch = plan.per_worker_batch * n;
  plan.learning_rate = scaling.scale_lr_with_workers ? scaling.learning_rate * static_cast<double>(n)
                                                     : scaling.learning_rate;
  return plan;
}

int64_t SliceOffset(const MemberPlan& plan, int64_t step) {
  return step * plan.global_batch + static_cast<int64_t>(plan.rank) * plan.per_worker_batch;
}

}  // namespace sluice
