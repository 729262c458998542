// Restoring a tensor, or a slice of it, from what a checkpoint holds of it:
// the whole tensor, or slices of it (a partitioned variable's parts, saved
// through SaveV2's shape_and_slices), in the file read or in other files of
// the same checkpoint (Sluice's Saver layout "<prefix>.shard-<k>-of-<n>":
// SiblingShards; a legacy Restore's file pattern), read only when the file
// does not cover the slice. So a variable saved in N parts restores into M
// parts, or whole.
//
//   ASSIGN_OR_RETURN(Tensor part, internal::RestoreTensor(&shard, path, SiblingShards(path),
//                                                         "emb", &wanted, DT_FLOAT, allocator));
//
// Errors: NotFound naming the tensor and the file(s) when neither the whole
// tensor nor any slice of it is held, or the slices held do not cover the
// slice wanted; InvalidArgument for a stored dtype other than `dtype`, or
// stored slices of another full shape; a sibling file's read errors (and
// the read fence's PermissionDenied) as they are.
#ifndef SLUICE_OPS_IO_INTERNAL_SLICED_RESTORE_H_
#define SLUICE_OPS_IO_INTERNAL_SLICED_RESTORE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/io/internal/checkpoint_shard.h"
#include "ops/io/internal/tensor_slice.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// The other shard files of the checkpoint of a "<base>.shard-<k>-of-<n>"
// path: every existing "<base>.shard-*-of-*" but `path` (saved with any
// number of shards); none for another name.
std::vector<std::string> SiblingShards(const std::string& path);
// The shard files of a checkpoint Sluice's Saver wrote at `prefix` before it
// wrote TensorFlow's format: every existing "<prefix>.shard-*-of-*".
std::vector<std::string> SaverLayoutShards(const std::string& prefix);

// The files a glob pattern matches, sorted (glob's order): a V1
// checkpoint's file pattern ("model.ckpt-?????-of-00002"), or a file's own
// name. Empty when none matches.
std::vector<std::string> MatchingFiles(const std::string& pattern);

// `wanted` null: the whole tensor. `own` is the file at `path` (null when
// it does not exist); files of `others` pass the read fence
// (CheckGraphFileRead) before they are read, and missing ones are skipped.
absl::StatusOr<Tensor> RestoreTensor(const CheckpointShard* own, const std::string& path,
                                     const std::vector<std::string>& others,
                                     const std::string& name, const ShapeAndSlice* wanted,
                                     DataType dtype, Allocator* allocator);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_IO_INTERNAL_SLICED_RESTORE_H_
