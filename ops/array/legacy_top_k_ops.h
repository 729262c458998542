// TopK and InTopK, TensorFlow 1's forms of TopKV2 and InTopKV2 with k an
// attr instead of an input (graphs written by tf.nn.top_k and
// tf.nn.in_top_k before TF 1.x moved to the V2 ops, and tf.compat.v1 ones
// that still emit them). Each lowers (OpDef::lower_fn) into its V2 op with
// k as a constant, so it runs, places and differentiates as TopKV2 and
// InTopKV2 do (ops/array/index_ops.h). Shapes as TensorFlow's: TopK's
// outputs replace the last dimension by k (which must not exceed it);
// InTopK's is the batch.
//
//   ops::TopKOutputs top = ops::TopKV1(s, logits, /*k=*/5);
//
// Thread-safety: as Scope.
#ifndef SLUICE_OPS_ARRAY_LEGACY_TOP_K_OPS_H_
#define SLUICE_OPS_ARRAY_LEGACY_TOP_K_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "ops/array/index_ops.h"

namespace sluice {

absl::Status RegisterLegacyTopKOps(OpRegistry* ops);

namespace ops {

// TensorFlow's op "TopK" (named TopKV1 here beside TopKV2's wrapper).
TopKOutputs TopKV1(const Scope& scope, Input input, int64_t k, bool sorted = true,
                   std::source_location loc = std::source_location::current());
Output InTopK(const Scope& scope, Input predictions, Input targets, int64_t k,
              std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_LEGACY_TOP_K_OPS_H_
