#include "runtime/collective/collective.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

const char* KindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllGather:
      return "all-gather";
  }
  return "collective";
}

}  // namespace

absl::Status CollectiveParams::Validate() const {
  const int n = group_size();
  auto invalid = [&](auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(DebugString(), ": ", parts...));
  };
  if (n == 0) return invalid("empty group (no group_devices)");
  if (rank < 0 || rank >= n) return invalid("rank ", rank, " out of range [0, ", n, ")");
  if (kind == CollectiveKind::kBroadcast && (source_rank < 0 || source_rank >= n)) {
    return invalid("source rank ", source_rank, " out of range [0, ", n, ")");
  }
  if (timeout_ms < 0) return invalid("negative timeout_ms ", timeout_ms);
  if (chunk_bytes < 0) return invalid("negative chunk_bytes ", chunk_bytes);
  if (max_bytes_in_flight < 0) return invalid("negative max_bytes_in_flight ", max_bytes_in_flight);
  if (communication_hint != "auto" && communication_hint != "ring" &&
      communication_hint != "nccl") {
    return invalid("communication_hint '", communication_hint,
                   "' is none of \"auto\", \"ring\", \"nccl\"");
  }
  absl::flat_hash_set<absl::string_view> seen;
  for (const std::string& d : group_devices) {
    if (d.empty()) return invalid("an empty device name in group_devices");
    if (!seen.insert(d).second) return invalid("device ", d, " listed twice in group_devices");
  }
  return absl::OkStatus();
}

std::string CollectiveParams::DebugString() const {
  return absl::StrCat("node '", node_name, "' (", KindName(kind), ", group ", group_key,
                      ", instance ", instance_key, ", rank ", rank, " of ", group_size(), ")");
}

}  // namespace sluice
