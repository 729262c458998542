// AutoMixedPrecision: TensorFlow's `auto_mixed_precision` graph rewrite. On
// the devices it is given, the float ops that gain most from a 16-bit type
// (the GEMMs: MatMul, convolutions and their gradients) run in bfloat16 (or
// float16), together with the ops around them that are safe in it, and casts
// are inserted where a tensor crosses between the two precisions:
//
//   VariableV2 (float) -> Cast(bf16) -> MatMul(bf16) -> BiasAdd(bf16) -> Relu(bf16)
//       -> Cast(float) -> SparseSoftmaxCrossEntropyWithLogits (float)
//
// Variables, their updates (Apply*) and whatever reads a loss stay float:
// the weights are float "master" copies, cast down for each step's
// products, and every gradient is cast back up before it is applied.
//
// Which ops, as TensorFlow's lists (auto_mixed_precision_lists.h) say:
//  - allow: always worth converting (MatMul, BatchMatMul, Conv2D and its two
//    gradients, ...);
//  - infer: converted when a converted node feeds one of their T-typed
//    inputs (BiasAdd, Add, Relu, ReluGrad, MaxPool, ...), so chains between
//    GEMMs stay in 16 bits;
//  - clear: converted on the same rule; they only move values (Reshape,
//    Identity, ConcatV2, ...);
//  - deny: never (Exp, Log, Softmax and the cross entropies, Sum, Mean,
//    ...), and deny carries forward: an infer or clear node fed by a denied
//    node is denied too. A node of any op whose attr
//    kMixedPrecisionDenyAttr is true is denied as well (a loss-scaled
//    gradient's unscaling, training/loss_scale.h, stays float).
// Only the inputs and outputs typed by T change; other float slots (a
// FusedBatchNorm's U-typed statistics) stay float.
// Every op in no list stays float (variables, their reads, Const, Apply*).
// A node is converted only when its device's type is one of
// `device_types`, its type attr T is float, and that device type has a
// kernel for the op with T = the 16-bit type (so a CPU without bf16
// kernels, or an op with no GPU half kernel, simply stays float).
//
//   MixedPrecisionOptions o;  o.kernels = &kernels;  o.device_types = {"GPU"};
//   ASSIGN_OR_RETURN(MixedPrecisionStats s, AutoMixedPrecision(placed_graph, o));
//
// CompileSignature runs it after placement and before FuseOps when
// SessionConfig::mixed_precision is set (session/session_config.h),
// so the partition graphs every executor receives show the casts. float16
// needs loss scaling to keep small gradients (training/loss_scale.h);
// bfloat16 has float's exponent range and needs none.
//
// Thread-compatible: mutates `graph`; borrows the registry.
#ifndef SLUICE_PLACEMENT_AUTO_MIXED_PRECISION_H_
#define SLUICE_PLACEMENT_AUTO_MIXED_PRECISION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// A bool attr: true keeps the node float, as if its op were on the deny list.
inline constexpr char kMixedPrecisionDenyAttr[] = "_mixed_precision_deny";

struct MixedPrecisionOptions {
  const KernelRegistry* kernels = nullptr;  // required
  // Device types ("GPU", "CPU") whose nodes may be converted.
  std::vector<std::string> device_types = {"GPU"};
  DataType type = DT_BFLOAT16;  // or DT_HALF
};

struct MixedPrecisionStats {
  int converted = 0;  // nodes now computing in the 16-bit type
  int casts = 0;      // Cast nodes inserted
};

absl::StatusOr<MixedPrecisionStats> AutoMixedPrecision(Graph* graph,
                                                       const MixedPrecisionOptions& options);

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_AUTO_MIXED_PRECISION_H_
