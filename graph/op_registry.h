// OpRegistry: op name -> OpDef. Code that needs a registry takes it as a
// parameter, so a test can build a private one (STYLE.md §5).
//
//   OpRegistry registry;
//   RETURN_IF_ERROR(registry.Register(OpDefBuilder("Foo").Input("x: float")...));
//   RETURN_IF_ERROR(registry.SetGradient("Foo", FooGrad));
//   ASSIGN_OR_RETURN(const OpDef* def, registry.LookUp("Foo"));
//
// Thread-safe. OpDef pointers stay valid for the registry's lifetime.
#ifndef SLUICE_GRAPH_OP_REGISTRY_H_
#define SLUICE_GRAPH_OP_REGISTRY_H_

#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "graph/op_def.h"

namespace sluice {

class OpRegistry {
 public:
  OpRegistry() = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // AlreadyExists when an op of that name is registered; builder errors as is.
  absl::Status Register(const OpDefBuilder& builder);
  absl::Status Register(OpDef def);

  // NotFound when the op is unknown.
  absl::Status SetGradient(absl::string_view op, GradFn fn);
  absl::Status SetNoGradient(absl::string_view op);
  // A gradient function that keeps gathers' gradients sparse (OpDef::sparse_grad_fn).
  absl::Status SetSparseGradient(absl::string_view op, SparseGradFn fn);

  // How the op's nodes are lowered (OpDef::lower_fn). NotFound when the op
  // is unknown.
  absl::Status SetLowering(absl::string_view op, LowerFn fn);

  // How AddGradients differentiates a while loop (empty: it refuses to).
  void SetWhileLoopGradient(WhileLoopGradFn fn);
  WhileLoopGradFn while_loop_gradient() const;

  // nullptr when unknown.
  const OpDef* Find(absl::string_view op) const;
  // NotFound "unknown op 'X'" when unknown.
  absl::StatusOr<const OpDef*> LookUp(absl::string_view op) const;

  std::vector<std::string> ListOps() const;  // sorted

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<OpDef>> ops_ ABSL_GUARDED_BY(mu_);
  WhileLoopGradFn while_loop_grad_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_GRAPH_OP_REGISTRY_H_
