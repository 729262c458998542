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
    return absl::FailedPreconditionError(absl::StrCat("variable '", name, "' exists with dtype ",
                                                      DataTypeName(slot->dtype), ", asked for ",
                                                      DataTypeName(dtype)));
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

absl::StatusOr<ResourceBase*> ResourceMgr::LookupOrCreateResource(
    absl::string_view container, absl::string_view name, std::type_index type,
    absl::FunctionRef<absl::StatusOr<std::unique_ptr<ResourceBase>>()> create) {
  absl::MutexLock lock(&mu_);
  const std::string key = Key(container, name);
  auto it = resources_.find(key);
  if (it != resources_.end()) {
    if (it->second.type != type) {
      return absl::FailedPreconditionError(
          absl::StrCat("resource '", name, "' in container '", container,
                       "' exists with another type: ", it->second.resource->DebugString()));
    }
    return it->second.resource.get();
  }
  absl::StatusOr<std::unique_ptr<ResourceBase>> made = create();
  if (!made.ok()) return made.status();
  if (*made == nullptr) {
    return absl::InternalError(absl::StrCat("creating resource '", name, "' in container '",
                                            container, "' returned nothing"));
  }
  ResourceBase* out = made->get();
  resources_.emplace(key, Entry{type, *std::move(made)});
  return out;
}

ResourceBase* ResourceMgr::FindResource(absl::string_view container, absl::string_view name,
                                        std::type_index type) const {
  absl::MutexLock lock(&mu_);
  auto it = resources_.find(Key(container, name));
  if (it == resources_.end() || it->second.type != type) return nullptr;
  return it->second.resource.get();
}

bool ResourceMgr::Delete(absl::string_view container, absl::string_view name) {
  std::unique_ptr<ResourceBase> doomed;  // destroyed after the lock is released
  absl::MutexLock lock(&mu_);
  auto it = resources_.find(Key(container, name));
  if (it == resources_.end()) return false;
  doomed = std::move(it->second.resource);
  resources_.erase(it);
  return true;
}

void ResourceMgr::ClearContainer(absl::string_view container) {
  // Destroyed after the lock is released: a resource's destructor may finish
  // work (fail waiters) that must not run under this lock.
  std::vector<std::unique_ptr<ResourceBase>> doomed;
  absl::MutexLock lock(&mu_);
  std::string prefix = absl::StrCat(container, "\x1f");
  for (auto it = vars_.begin(); it != vars_.end();) {
    if (it->first.compare(0, prefix.size(), prefix) == 0) {
      vars_.erase(it++);
    } else {
      ++it;
    }
  }
  for (auto it = resources_.begin(); it != resources_.end();) {
    if (it->first.compare(0, prefix.size(), prefix) == 0) {
      doomed.push_back(std::move(it->second.resource));
      resources_.erase(it++);
    } else {
      ++it;
    }
  }
}

std::string ResourceMgr::StepContainer(int64_t step_id) { return absl::StrCat("_step_", step_id); }

std::string ResourceMgr::UseStepContainer(int64_t step_id) {
  {
    absl::MutexLock lock(&mu_);
    steps_with_resources_.insert(step_id);
  }
  any_step_resources_.store(true, std::memory_order_release);
  return StepContainer(step_id);
}

void ResourceMgr::ClearStep(int64_t step_id) {
  if (!any_step_resources_.load(std::memory_order_acquire)) return;
  {
    absl::MutexLock lock(&mu_);
    if (steps_with_resources_.erase(step_id) == 0) return;
  }
  ClearContainer(StepContainer(step_id));
}

}  // namespace sluice
