#include "graph/op_registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {

absl::Status OpRegistry::Register(const OpDefBuilder& builder) {
  ASSIGN_OR_RETURN(OpDef def, builder.Build());
  return Register(std::move(def));
}

absl::Status OpRegistry::Register(OpDef def) {
  absl::MutexLock lock(&mu_);
  if (ops_.contains(def.name)) {
    return absl::AlreadyExistsError(absl::StrCat("op '", def.name, "' is already registered"));
  }
  std::string name = def.name;
  ops_.emplace(std::move(name), std::make_unique<OpDef>(std::move(def)));
  return absl::OkStatus();
}

absl::Status OpRegistry::SetGradient(absl::string_view op, GradFn fn) {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(op);
  if (it == ops_.end()) {
    return absl::NotFoundError(absl::StrCat("gradient for unknown op '", op, "'"));
  }
  it->second->grad_fn = std::move(fn);
  return absl::OkStatus();
}

absl::Status OpRegistry::SetSparseGradient(absl::string_view op, SparseGradFn fn) {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(op);
  if (it == ops_.end()) {
    return absl::NotFoundError(absl::StrCat("sparse gradient for unknown op '", op, "'"));
  }
  it->second->sparse_grad_fn = std::move(fn);
  return absl::OkStatus();
}

absl::Status OpRegistry::SetLowering(absl::string_view op, LowerFn fn) {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(op);
  if (it == ops_.end()) {
    return absl::NotFoundError(absl::StrCat("lowering for unknown op '", op, "'"));
  }
  it->second->lower_fn = std::move(fn);
  return absl::OkStatus();
}

void OpRegistry::SetWhileLoopGradient(WhileLoopGradFn fn) {
  absl::MutexLock lock(&mu_);
  while_loop_grad_ = std::move(fn);
}

WhileLoopGradFn OpRegistry::while_loop_gradient() const {
  absl::MutexLock lock(&mu_);
  return while_loop_grad_;
}

absl::Status OpRegistry::SetNoGradient(absl::string_view op) {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(op);
  if (it == ops_.end()) {
    return absl::NotFoundError(absl::StrCat("no-gradient mark for unknown op '", op, "'"));
  }
  it->second->no_gradient = true;
  return absl::OkStatus();
}

const OpDef* OpRegistry::Find(absl::string_view op) const {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(op);
  return it == ops_.end() ? nullptr : it->second.get();
}

absl::StatusOr<const OpDef*> OpRegistry::LookUp(absl::string_view op) const {
  const OpDef* def = Find(op);
  if (def == nullptr) return absl::NotFoundError(absl::StrCat("unknown op '", op, "'"));
  return def;
}

std::vector<std::string> OpRegistry::ListOps() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [name, def] : ops_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace sluice
