#include "runtime/resource_mgr.h"

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

std::string Key(absl::string_view container, absl::string_view name) {
  return absl::StrCat(container, "\x1f", name);
}

}  // namespace

absl::StatusOr<Var*> ResourceMgr::LookupOrCreateVar(absl::string_view container,
                                                    absl::string_view name, DataType dtype,
                                                    const TensorShape& shape) {
  absl::MutexLock lock(&mu_);
  auto& slot = vars_[Key(container, name)];
  if (slot == nullptr) {
    slot = std::make_unique<Var>(std::string(name), BaseType(dtype), shape);
  } else if (slot->dtype != BaseType(dtype)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "variable '", name, "' exists with dtype ", DataTypeName(slot->dtype),
        ", asked for ", DataTypeName(dtype)));
  }
  return slot.get();
}

Var* ResourceMgr::FindVar(absl::string_view container, absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = vars_.find(Key(container, name));
  return it == vars_.end() ? nullptr : it->second.get();
}

std::vector<Var*> ResourceMgr::ListVars() const {
  absl::MutexLock lock(&mu_);
  std::vector<Var*> out;
  for (const auto& [key, var] : vars_) out.push_back(var.get());
  return out;
}

void ResourceMgr::ClearContainer(absl::string_view container) {
  absl::MutexLock lock(&mu_);
  std::string prefix = absl::StrCat(container, "\x1f");
  for (auto it = vars_.begin(); it != vars_.end();) {
    if (it->first.compare(0, prefix.size(), prefix) == 0) {
      vars_.erase(it++);
    } else {
      ++it;
    }
  }
}

}  // namespace sluice
