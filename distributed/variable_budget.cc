#include "distributed/variable_budget.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/types.h"

namespace sluice {
namespace {

std::string MiB(int64_t bytes) { return absl::StrFormat("%.1f MiB", bytes / 1048576.0); }

// The bytes a variable node declares, or -1 when its shape or dtype does not say.
int64_t DeclaredBytes(const tensorflow::NodeDef& n) {
  auto shape = n.attr().find("shape");
  auto dtype = n.attr().find("dtype");
  if (shape == n.attr().end() || dtype == n.attr().end() || shape->second.shape().unknown_rank()) {
    return -1;
  }
  const int64_t elem = DataTypeSize(static_cast<DataType>(dtype->second.type()));
  if (elem <= 0) return -1;
  int64_t bytes = elem;
  for (const auto& d : shape->second.shape().dim()) {
    if (d.size() < 0 || (d.size() > 0 && bytes > INT64_MAX / d.size())) return -1;
    bytes *= d.size();
  }
  return bytes;
}

}  // namespace

absl::Status CheckVariableBudget(const std::map<std::string, tensorflow::GraphDef>& partitions,
                                 int64_t budget_bytes, const std::string& task) {
  if (budget_bytes <= 0) return absl::OkStatus();
  std::vector<std::pair<int64_t, std::string>> vars;
  int64_t total = 0;
  for (const auto& [device, def] : partitions) {
    for (const tensorflow::NodeDef& n : def.node()) {
      if (n.op() != "VariableV2" && n.op() != "Variable" && n.op() != "VarHandleOp") continue;
      const int64_t bytes = DeclaredBytes(n);
      if (bytes < 0) continue;
      vars.emplace_back(bytes, n.name());
      total = bytes > INT64_MAX - total ? INT64_MAX : total + bytes;
    }
  }
  if (total <= budget_bytes) return absl::OkStatus();
  std::sort(vars.begin(), vars.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> largest;
  for (size_t i = 0; i < vars.size() && i < 3; ++i) {
    largest.push_back(absl::StrCat(vars[i].second, " ", MiB(vars[i].first)));
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "task ", task, ": the graph's variables need ", MiB(total),
      " (largest: ", absl::StrJoin(largest, ", "), "), over this task's variable memory budget of ",
      MiB(budget_bytes),
      "; partition the largest over more parameter servers (training/partitioned_variables.h) "
      "or raise the budget (tools:server --variable_memory_budget_mb)"));
}

}  // namespace sluice
