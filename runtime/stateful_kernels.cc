#include "runtime/stateful_kernels.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/attr_map_key.h"

namespace sluice {
namespace {

bool HasFunctionAttr(const Node& node) {
  for (const auto& [name, value] : node.attrs()) {
    if (value.has_func() || (value.has_list() && value.list().func_size() > 0)) return true;
  }
  return false;
}

// Op, input count and attrs.
std::string Fingerprint(const Node& node) {
  return absl::StrCat(node.op(), "|", node.num_inputs(), AttrMapKey(node.attrs()));
}

}  // namespace

bool StatefulKernels::Shares(const Node& node) {
  return node.op_def().is_stateful && !absl::StartsWith(node.op(), "_") &&
         !absl::StartsWith(node.name(), "_") && node.control_flow() == ControlFlowRole::kNone &&
         !HasFunctionAttr(node);
}

absl::StatusOr<std::shared_ptr<OpKernel>> StatefulKernels::GetOrCreate(const Node& node,
                                                                      const Device& device,
                                                                      MakeKernel make) {
  if (!Shares(node)) {
    ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k, make());
    return std::shared_ptr<OpKernel>(std::move(k));
  }
  const std::string key = absl::StrCat(device.name(), "|", node.name());
  const std::string fingerprint = Fingerprint(node);
  absl::MutexLock lock(&mu_);
  auto it = kernels_.find(key);
  if (it != kernels_.end() && it->second.fingerprint == fingerprint) return it->second.kernel;
  ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k, make());
  std::shared_ptr<OpKernel> shared(std::move(k));
  kernels_[key] = Entry{fingerprint, shared};
  return shared;
}

int StatefulKernels::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(kernels_.size());
}

}  // namespace sluice
