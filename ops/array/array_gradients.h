// Gradient functions of the array ops (array_ops.h, array_layout_ops.h, index_ops.h,
// array_rearrange_ops.h), registered into an OpRegistry that already holds their definitions.
// RegisterArrayFamilyGradients (ops/array/array_family.h) calls them all; a test may call one on a
// private registry.
//
//   RETURN_IF_ERROR(RegisterArrayGradients(&ops));
//
// Each gradient builds its nodes with the typed wrappers, in the scope it is
// given (AddGradients names it "gradients/<node>_grad"). NotFound when an op
// they differentiate is not registered yet.
//
// Registration is thread-compatible (call during start-up); the registered
// functions only build nodes in the scope they are given.
#ifndef SLUICE_OPS_ARRAY_ARRAY_GRADIENTS_H_
#define SLUICE_OPS_ARRAY_ARRAY_GRADIENTS_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"

namespace sluice {

absl::Status RegisterArrayGradients(OpRegistry* ops);
absl::Status RegisterArrayLayoutGradients(OpRegistry* ops);
absl::Status RegisterIndexGradients(OpRegistry* ops);
absl::Status RegisterArrayRearrangeGradients(OpRegistry* ops);

}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_ARRAY_GRADIENTS_H_
