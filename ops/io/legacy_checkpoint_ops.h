// TensorFlow's V1 checkpoint ops, so that a legacy graph's saver runs:
// Save and SaveSlices (one file at `filename`), Restore and RestoreSlice
// (a tensor, or a slice of it, from the files `file_pattern` matches).
//
//   Save(filename: string, tensor_names: string, data: T)      attr T: list(type)
//   SaveSlices(filename: string, tensor_names: string, shapes_and_slices: string, data: T)
//   Restore(file_pattern: string, tensor_name: string) -> tensor: dt
//   RestoreSlice(file_pattern: string, tensor_name: string, shape_and_slice: string)
//       -> tensor: dt                                attrs dt: type, preferred_shard: int = -1
//
// Files are TensorFlow's V1 checkpoint files (runtime/io/tensor_slice_file.h):
// TensorFlow reads what Save writes, and Restore reads what TensorFlow's V1
// savers wrote (and Sluice's own shard files, which Save wrote before). A
// file pattern is a glob (a V1 sharded saver's "model-?????-of-00002"); the
// slices of one tensor may lie in several of its files, and a restore
// assembles what it needs from them (so parts saved in N slices restore
// into M). Writes and reads pass the graph file policy
// (ops/io/file_write_policy.h). RestoreV2 reads V1 files too, as
// TensorFlow's does, when its prefix has no ".index" (ops/io/io_ops.h).
//
// Errors: InvalidArgument for inputs of the wrong shapes, a malformed
// shape_and_slice (naming it), or a dtype V1 files cannot hold (bfloat16,
// uint32, uint64: TensorFlow's Save refuses them too); NotFound naming the pattern when no file
// matches or none holds the tensor, or the slices held do not cover the
// slice asked for; DataLoss for a corrupt file. Messages start with the node.
#ifndef SLUICE_OPS_IO_LEGACY_CHECKPOINT_OPS_H_
#define SLUICE_OPS_IO_LEGACY_CHECKPOINT_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterLegacyCheckpointOps(OpRegistry* ops);
void RegisterLegacyCheckpointKernels(KernelRegistry* kernels);

namespace ops {

Node* SaveSlices(const Scope& scope, Input filename, Input tensor_names, Input shapes_and_slices,
                 absl::Span<const Output> data,
                 std::source_location loc = std::source_location::current());
Output RestoreSlice(const Scope& scope, Input file_pattern, Input tensor_name,
                    Input shape_and_slice, DataType dt,
                    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IO_LEGACY_CHECKPOINT_OPS_H_
