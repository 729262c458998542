// ShardedFilename, ShardedFilespec, MergeV2Checkpoints: op definitions,
// shape functions and wrappers (kernels: sharded_checkpoint_kernels.cc).
#include "ops/io/sharded_checkpoint_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

// Inputs `scalars` must be scalars (or of unknown shape).
absl::Status CheckScalars(InferenceContext* c, const std::vector<int>& scalars) {
  for (int i : scalars) {
    if (c->input(i).rank() > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          c->node().op(), ": ", c->node().op_def().inputs[i].name, " must be a scalar, got shape ",
          c->input(i).DebugString()));
    }
  }
  return absl::OkStatus();
}

absl::Status ScalarFilenameShape(InferenceContext* c) {
  std::vector<int> all;
  for (int i = 0; i < c->num_inputs(); ++i) all.push_back(i);
  RETURN_IF_ERROR(CheckScalars(c, all));
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

absl::Status MergeShape(InferenceContext* c) {
  if (c->input(0).rank() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": checkpoint_prefixes must be a scalar or a vector, got shape ",
                     c->input(0).DebugString()));
  }
  return CheckScalars(c, {1});
}

}  // namespace

absl::Status RegisterShardedCheckpointOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ShardedFilename")
                                    .Input("basename: string")
                                    .Input("shard: int32")
                                    .Input("num_shards: int32")
                                    .Output("filename: string")
                                    .SetShapeFn(ScalarFilenameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ShardedFilespec")
                                    .Input("basename: string")
                                    .Input("num_shards: int32")
                                    .Output("filename: string")
                                    .SetShapeFn(ScalarFilenameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MergeV2Checkpoints")
                                    .Input("checkpoint_prefixes: string")
                                    .Input("destination_prefix: string")
                                    .Attr("delete_old_dirs: bool = true")
                                    .Attr("allow_missing_files: bool = false")
                                    .SetIsStateful()
                                    .SetShapeFn(MergeShape)));
  for (const char* op : {"ShardedFilename", "ShardedFilespec", "MergeV2Checkpoints"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output ShardedFilename(const Scope& s, Input basename, Input shard, Input num_shards,
                       std::source_location loc) {
  return s.Op("ShardedFilename", loc).Input(basename).Input(shard).Input(num_shards).Finalize1();
}

Output ShardedFilespec(const Scope& s, Input basename, Input num_shards,
                       std::source_location loc) {
  return s.Op("ShardedFilespec", loc).Input(basename).Input(num_shards).Finalize1();
}

Node* MergeV2Checkpoints(const Scope& s, Input checkpoint_prefixes, Input destination_prefix,
                         const MergeV2CheckpointsAttrs& attrs, std::source_location loc) {
  return s.Op("MergeV2Checkpoints", loc)
      .Input(checkpoint_prefixes)
      .Input(destination_prefix)
      .Attr("delete_old_dirs", attrs.delete_old_dirs)
      .Attr("allow_missing_files", attrs.allow_missing_files)
      .Finalize();
}

}  // namespace ops
}  // namespace sluice
