// GroupUpdates: the multi-tensor update rewrite. The ApplyGradientDescent
// (and ApplyAdam) nodes of a step that run on one device with the same
// hyper-parameter tensors become one _MultiApplyGradientDescent
// (_MultiApplyAdam) node (ops/training/multi_apply_ops.h); the
// ResourceApply* nodes of resource variables, one _MultiResourceApply* node
// (each group holds one form only), as PyTorch's
// multi-tensor optimizers (`foreach`) and apex's multi_tensor_apply do: on a
// GPU a step then launches one update kernel per 32 variables, not one per
// variable, which matters most to a captured step (runtime/step_replay.h).
//
//   GroupUpdatesOptions o;  o.kernels = &kernels;  o.keep = {"train"};
//   ASSIGN_OR_RETURN(GroupUpdatesStats s, GroupUpdates(placed_graph, o));
//
// CompileSignature runs it after FuseOps (session/compile_signature.h) on
// the device types SessionConfig::group_updates_on names (GPUs by default).
// A group is made of updates that:
// run on one assigned device whose type is in `device_types` and has the
// multi kernel for their T; read the same alpha (or Adam's six scalars)
// from the same tensors or from constants of equal value (the group then
// reads the first member's); agree on use_locking (and use_nesterov); have no
// data consumers (their ref outputs feed nothing; control edges are
// fine) and are not named in `keep`; do not depend on one another, either
// way, even through an earlier group; update distinct variables, told apart
// by the container and shared name they live under (two VarHandleOps, or two
// variable nodes, naming one variable count as one; an update whose
// variable comes from neither, e.g. a handle through anything but Identity
// nodes or a ref through a loop's Enter, is never grouped); and are
// not downstream of a Switch or an Enter (a node with one dead input is
// skipped whole, and a group may not span frames: such updates, e.g. the
// gated ones of training/loss_scale.h, stay separate). At least two make a
// group. The group's node takes the control edges of its
// members in and out; its name is the first member's with
// "/MultiApply..." appended.
//
// Values equal the separate updates' exactly (the same loops, run one after
// another); only the order in which a step's updates may overlap other work
// changes: all of a group's gradients are ready before its first update.
//
// Errors: Internal when rebuilding fails (a broken graph).
// Thread-compatible: mutates `graph`; borrows the registry.
#ifndef SLUICE_PLACEMENT_GROUP_UPDATES_H_
#define SLUICE_PLACEMENT_GROUP_UPDATES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "runtime/kernel_registry.h"

namespace sluice {

struct GroupUpdatesOptions {
  const KernelRegistry* kernels = nullptr;  // required
  std::vector<std::string> keep;            // node names never grouped (targets)
  // Device types where grouping pays: a GPU's launches. On a CPU each update
  // is a loop either way.
  std::vector<std::string> device_types = {"GPU"};
};

struct GroupUpdatesStats {
  int groups = 0;   // multi-tensor nodes made
  int updates = 0;  // Apply* nodes they replaced
};

absl::StatusOr<GroupUpdatesStats> GroupUpdates(Graph* graph, const GroupUpdatesOptions& options);

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_GROUP_UPDATES_H_
