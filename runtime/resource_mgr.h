// Variables and the per-device container that keeps them across steps.
//
//   ResourceMgr rm;
//   Var* v = rm.LookupOrCreateVar("", "w1", DT_FLOAT, TensorShape({784, 1024}));
//   {
//     absl::MutexLock l(&v->mu);
//     v->tensor = ...;  v->initialized = true;
//   }
//
// Thread-safe. Var pointers stay valid until the container is cleared or the
// ResourceMgr is destroyed.
#ifndef SLUICE_RUNTIME_RESOURCE_MGR_H_
#define SLUICE_RUNTIME_RESOURCE_MGR_H_

#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "runtime/tensor.h"

namespace sluice {

// A variable: a tensor that outlives steps, updated in place under `mu`.
struct Var {
  Var(std::string n, DataType t, TensorShape s)
      : name(std::move(n)), dtype(t), declared_shape(std::move(s)) {}
  const std::string name;
  const DataType dtype;
  const TensorShape declared_shape;  // may be partly unknown

  absl::Mutex mu;
  Tensor tensor ABSL_GUARDED_BY(mu);
  bool initialized ABSL_GUARDED_BY(mu) = false;
};

class ResourceMgr {
 public:
  ResourceMgr() = default;
  ResourceMgr(const ResourceMgr&) = delete;
  ResourceMgr& operator=(const ResourceMgr&) = delete;

  // The variable `name` in `container` ("" is the default container),
  // created on first use. FailedPrecondition when it exists with another
  // dtype.
  absl::StatusOr<Var*> LookupOrCreateVar(absl::string_view container, absl::string_view name,
                                         DataType dtype, const TensorShape& shape);
  Var* FindVar(absl::string_view container, absl::string_view name) const;  // or nullptr
  std::vector<Var*> ListVars() const;
  void ClearContainer(absl::string_view container);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<Var>> vars_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_RESOURCE_MGR_H_
