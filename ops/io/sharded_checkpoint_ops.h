// The nodes tf.train.Saver(sharded=True) adds beside SaveV2/RestoreV2
// (ops/io/io_ops.h): ShardedFilename, ShardedFilespec and MergeV2Checkpoints,
// with TensorFlow's names, inputs, attrs and file-name patterns, CPU kernels
// and wrappers.
//
//   Scope s = Scope::NewRootScope(BuiltinOps()).NewSubScope("save");
//   Output prefix = ops::Placeholder(s.WithOpName("Const"), DT_STRING);
//   Output tmp = ops::StringJoin(s, {prefix, "_temp/part"});
//   Output f0 = ops::ShardedFilename(s, tmp, 0, 2);   // "<tmp>-00000-of-00002"
//   Node* save0 = ops::SaveV2(s, f0, {"w"}, {""}, {w});
//   ... the same for shard 1 ...
//   Node* merge = ops::MergeV2Checkpoints(s, ops::Pack(s, {f0, f1}), prefix);
//   // RestoreV2(prefix, ...) then reads every tensor of both shards.
//
//   ShardedFilename(basename: string, shard: int32, num_shards: int32)
//       -> filename: string    "%s-%05d-of-%05d" (basename, shard, num_shards)
//   ShardedFilespec(basename: string, num_shards: int32)
//       -> filename: string    "%s-?????-of-%05d"
//   MergeV2Checkpoints(checkpoint_prefixes: string, destination_prefix: string)
//       attrs delete_old_dirs: bool = true, allow_missing_files: bool = false
//
// Files. SaveV2 writes TensorFlow's V2 checkpoint at each prefix (an index
// and one data file); MergeV2Checkpoints merges those named in
// checkpoint_prefixes (a scalar or vector) as TensorFlow's MergeBundles
// does (runtime/io/tensor_bundle.h): the data files are renamed to
// "<destination>.data-<k>-of-<n>", the slices of a partitioned tensor saved
// by several shards are listed together, the merged index is written
// atomically (creating its directory) and the shards' indexes deleted. With
// delete_old_dirs it also removes each shard's directory when that
// directory is then empty (the "_temp" directory the Saver makes); a
// non-empty directory is left alone. With allow_missing_files, missing
// shards are skipped (it is still an error when none exists). Files in
// Sluice's older single-file format (SaveV2 before it wrote TensorFlow's)
// still merge into one such file.
//
// Errors: InvalidArgument when basename/shard/num_shards/destination_prefix
// are not scalars; NotFound naming the shard file when one is missing;
// DataLoss for a corrupt shard; InvalidArgument naming a tensor that two
// shards both hold. Messages start with the node.
// Thread-safety: kernels are thread-safe; two merges into one destination
// each write a whole file and the last rename wins. Ownership: none kept.
#ifndef SLUICE_OPS_IO_SHARDED_CHECKPOINT_OPS_H_
#define SLUICE_OPS_IO_SHARDED_CHECKPOINT_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterShardedCheckpointOps(OpRegistry* ops);
void RegisterShardedCheckpointKernels(KernelRegistry* kernels);

namespace ops {

Output ShardedFilename(const Scope& scope, Input basename, Input shard, Input num_shards,
                       std::source_location loc = std::source_location::current());
Output ShardedFilespec(const Scope& scope, Input basename, Input num_shards,
                       std::source_location loc = std::source_location::current());

struct MergeV2CheckpointsAttrs {
  bool delete_old_dirs = true;
  bool allow_missing_files = false;
};
// Returns the node (no outputs; run it as a target).
Node* MergeV2Checkpoints(const Scope& scope, Input checkpoint_prefixes, Input destination_prefix,
                         const MergeV2CheckpointsAttrs& attrs = {},
                         std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IO_SHARDED_CHECKPOINT_OPS_H_
