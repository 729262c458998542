// AllReduceGradients: every replica's gradients, summed or averaged across
// replicas with collective all-reduces (ops/collective/collective_ops.h), small ones
// fused into buckets first.
//
//   // grads[r][v]: replica r's gradient of its copy of variable v, on devices[r].
//   AllReduceOptions opts;  opts.bucket_bytes = 4 << 20;
//   ASSIGN_OR_RETURN(std::vector<std::vector<Output>> reduced,
//                    AllReduceGradients(scope, grads, devices, opts));
//
// Buckets: on each replica the gradients are taken in reverse order (the
// last layers' gradients are computed first by backprop) and packed greedily
// into buckets of at most bucket_bytes (a larger gradient gets a bucket of
// its own; 0: no fusion, one all-reduce per gradient). A bucket of several
// gradients is flattened and concatenated, all-reduced once, split and
// reshaped back. Each bucket's all-reduce depends only on its own gradients,
// so it starts as soon as they are computed and overlaps the rest of the
// backward pass. Every replica builds the same buckets (shapes must agree)
// and bucket b is instance first_instance_key + b of group group_key.
// Gradients must have fully defined shapes when fused (else they are reduced
// alone).
//
// Errors (InvalidArgument): replicas with different numbers of gradients or
// different shapes/dtypes at the same index; devices.size() != grads.size().
// Invalid (unset) gradients stay unset. Thread-compatible (adds nodes).
#ifndef SLUICE_TRAINING_ALL_REDUCE_GRADIENTS_H_
#define SLUICE_TRAINING_ALL_REDUCE_GRADIENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/indexed_slices.h"
#include "graph/scope.h"
#include "runtime/collective/collective.h"

namespace sluice {

struct AllReduceOptions {
  int64_t bucket_bytes = 4 << 20;  // 0: no fusion
  ReduceOp reduce_op = ReduceOp::kMean;
  int64_t group_key = 100;
  int64_t first_instance_key = 1000;
  std::string communication_hint = "auto";
  float timeout_seconds = 0;  // 0: the executor's default
};

// `devices[r]`: replica r's full device name (the group's members, rank
// order); replica r's nodes are placed there. For between-graph replication
// pass only this worker's gradients (grads.size() == 1) with `rank` set and
// all members in `group_devices`.
absl::StatusOr<std::vector<std::vector<Output>>> AllReduceGradients(
    const Scope& scope, const std::vector<std::vector<Output>>& grads,
    const std::vector<std::string>& devices, const AllReduceOptions& options);

// Between-graph form: this worker's gradients only, as member `rank` of
// `group_devices`; nodes go on group_devices[rank].
absl::StatusOr<std::vector<Output>> AllReduceGradientsOfMember(
    const Scope& scope, const std::vector<Output>& grads,
    const std::vector<std::string>& group_devices, int rank, const AllReduceOptions& options);

// A sparse gradient (an embedding table's rows) across the group: member
// `rank`'s IndexedSlices all-gathered, values and indices (only the touched
// rows travel; TensorFlow's MirroredStrategy gathers IndexedSlices too), the
// values scaled by 1 / group size for kMean. Repeated rows stay repeated
// (the optimizers' sparse updates sum them). Members must gather the same
// number of rows (a fixed batch of lookups); the collective refuses others,
// naming the ranks. Instances `instance_key` (values) and instance_key + 1
// (indices) of options.group_key; nodes go on group_devices[rank].
absl::StatusOr<IndexedSlices> AllGatherIndexedSlicesOfMember(
    const Scope& scope, const IndexedSlices& slices, const std::vector<std::string>& group_devices,
    int rank, const AllReduceOptions& options, int64_t instance_key);

}  // namespace sluice

#endif  // SLUICE_TRAINING_ALL_REDUCE_GRADIENTS_H_
