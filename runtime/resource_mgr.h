// Variables and other resources (accumulators, queues, ...): the per-device
// container that keeps state across steps.
//
//   ResourceMgr rm;
//   Var* v = rm.LookupOrCreateVar("", "w1", DT_FLOAT, TensorShape({784, 1024}));
//   {
//     absl::MutexLock l(&v->mu);
//     v->tensor = ...;  v->initialized = true;
//   }
//   // Any other resource derives from ResourceBase:
//   ASSIGN_OR_RETURN(Counter* c, rm.LookupOrCreate<Counter>("", "hits", [] {
//     return absl::StatusOr<std::unique_ptr<Counter>>(std::make_unique<Counter>());
//   }));
//
// Variables and other resources have separate name spaces: a Var and a
// resource may share a name. Within the resources, one name holds one type.
//
// Thread-safe. Var and resource pointers stay valid until the container is
// cleared or the ResourceMgr is destroyed; the ResourceMgr owns them.
#ifndef SLUICE_RUNTIME_RESOURCE_MGR_H_
#define SLUICE_RUNTIME_RESOURCE_MGR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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

// A resource kept by a ResourceMgr. Implementations do their own locking.
class ResourceBase {
 public:
  ResourceBase() = default;
  virtual ~ResourceBase() = default;
  ResourceBase(const ResourceBase&) = delete;
  ResourceBase& operator=(const ResourceBase&) = delete;

  // What it is, for error messages: "GradientAccumulator 'w/grad_accum' ...".
  virtual std::string DebugString() const = 0;
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

  // The resource `name` in `container`, made by `create` on first use (under
  // this manager's lock: `create` must not call back into it; its error is
  // returned and nothing is stored). FailedPrecondition naming the name when
  // a resource of another type holds it.
  template <typename T>
  absl::StatusOr<T*> LookupOrCreate(absl::string_view container, absl::string_view name,
                                    std::function<absl::StatusOr<std::unique_ptr<T>>()> create) {
    static_assert(std::is_base_of_v<ResourceBase, T>, "resources derive from ResourceBase");
    absl::StatusOr<ResourceBase*> r =
        LookupOrCreateResource(container, name, typeid(T), [&create]() {
          absl::StatusOr<std::unique_ptr<T>> made = create();
          if (!made.ok()) return absl::StatusOr<std::unique_ptr<ResourceBase>>(made.status());
          return absl::StatusOr<std::unique_ptr<ResourceBase>>(*std::move(made));
        });
    if (!r.ok()) return r.status();
    return static_cast<T*>(*r);
  }
  // The resource, or nullptr when there is none of type T under that name.
  template <typename T>
  T* Find(absl::string_view container, absl::string_view name) const {
    return static_cast<T*>(FindResource(container, name, typeid(T)));
  }

  // Removes one resource of any type (destroying it); false when none.
  bool Delete(absl::string_view container, absl::string_view name);

  // Removes the container's variables and resources (destroying them).
  void ClearContainer(absl::string_view container);

  // Resources that live for one step (TensorArrays, as TensorFlow's
  // per-step container keeps them): the container of step `step_id`,
  // which ClearStep empties when the step ends on this device (the
  // executor calls it). UseStepContainer marks the step as having some;
  // ClearStep is cheap when the step made none.
  static std::string StepContainer(int64_t step_id);
  std::string UseStepContainer(int64_t step_id);
  void ClearStep(int64_t step_id);

 private:
  struct Entry {
    std::type_index type;
    std::unique_ptr<ResourceBase> resource;
  };
  absl::StatusOr<ResourceBase*> LookupOrCreateResource(
      absl::string_view container, absl::string_view name, std::type_index type,
      absl::FunctionRef<absl::StatusOr<std::unique_ptr<ResourceBase>>()> create);
  ResourceBase* FindResource(absl::string_view container, absl::string_view name,
                             std::type_index type) const;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<Var>> vars_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Entry> resources_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<int64_t> steps_with_resources_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> any_step_resources_{false};  // ClearStep's fast path
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_RESOURCE_MGR_H_
