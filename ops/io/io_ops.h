// Checkpoint ops: SaveV2 and RestoreV2 with TensorFlow's signatures, plus
// StringJoin (TensorFlow's string op, which the Saver uses to derive shard
// file names from one fed prefix). CPU kernels and graph-building wrappers.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output prefix = ops::Placeholder(s.WithOpName("prefix"), DT_STRING);
//   Node* save = ops::SaveV2(s, prefix, {"w", "b"}, {"", ""}, {w, b});
//   std::vector<Output> r = ops::RestoreV2(s, prefix, {"w", "b"}, {"", ""},
//                                          {DT_FLOAT, DT_FLOAT});
//   // sess->Run({{"prefix", Tensor::Scalar<std::string>("/ckpt/x")}}, {}, {save->name()});
//
//   SaveV2(prefix: string, tensor_names: string, shape_and_slices: string,
//          tensors: dtypes)                       attr dtypes: list(type) >= 1
//   RestoreV2(prefix: string, tensor_names: string, shape_and_slices: string)
//          -> tensors: dtypes
//   StringJoin(inputs: N * string) -> output: string   attr separator = ""
//
// prefix is a scalar, tensor_names and shape_and_slices are vectors of N
// strings (N = len(dtypes)). A shape_and_slices entry "" is the whole
// tensor; TensorFlow's "10 4 0,5:-" (the full shape, then "start,length" or
// "-" per axis) a slice of it, a partitioned variable's part: SaveV2 stores
// it as that slice of the tensor, RestoreV2 assembles the slice (or the
// whole tensor) asked for from the slices held, reading only those that
// overlap it, so N saved parts restore into M
// (ops/io/internal/bundle_restore.h).
//
// Files. SaveV2 writes TensorFlow's V2 checkpoint (runtime/io/tensor_bundle.h)
// at `prefix`: "<prefix>.index" and "<prefix>.data-00000-of-00001", each
// atomically, creating missing directories; TensorFlow reads it. RestoreV2
// reads such a checkpoint, written by TensorFlow or Sluice, and, when there
// is none at the prefix, as TensorFlow falls back: TensorFlow's V1 files
// (runtime/io/tensor_slice_file.h), the prefix being one file ("model.ckpt",
// as TF-slim's pretrained checkpoints are) or a glob of a sharded V1 save's
// files ("model.ckpt-?????-of-00002"); or Sluice's older format: one file at
// `prefix` itself (or its sibling "<p>.shard-*-of-*" files), or the older
// Saver layout "<prefix>.shard-<k>-of-<n>". That format (ops/io/internal/checkpoint_shard.h),
// all integers little-endian:
//
//   header   "SLUICECK" (8 bytes), u32 format version (1)
//   entries  per tensor: u32 name length, name bytes, i32 dtype, u32 rank,
//            i64 dims[rank], u64 data length, data, u32 masked CRC-32C of
//            the entry's bytes from the name length through the data
//   footer   u64 entry count, u32 masked CRC-32C of every byte before it,
//            "SLUICEND" (8 bytes)
//
// Errors: NotFound naming the checkpoint when nothing is at the prefix, or
// naming the tensor when the checkpoint lacks it (or its slices do not
// cover the slice asked for); DataLoss naming the file and the tensor(s) on a
// checksum mismatch, truncation or a malformed file; InvalidArgument when
// the stored dtype or full shape differs from the requested one, or a saved
// value does not have its slice's shape. Messages start with the node.
//
// Thread-safety: registration at start-up; kernels are thread-safe. Two
// SaveV2 runs writing the same prefix at once each write whole files; the
// last renames win.
#ifndef SLUICE_OPS_IO_IO_OPS_H_
#define SLUICE_OPS_IO_IO_OPS_H_

#include "base/source_location.h"
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterIoOps(OpRegistry* ops);
void RegisterIoKernels(KernelRegistry* kernels);

namespace ops {

// Returns the SaveV2 node (it has no outputs; run it as a target), or
// nullptr on error (recorded in the scope). Default name "SaveV2".
Node* SaveV2(const Scope& scope, Input prefix, Input tensor_names, Input shape_and_slices,
             absl::Span<const Output> tensors,
             std::source_location loc = std::source_location::current());

// One output per dtype (invalid Outputs on error). Default name "RestoreV2".
std::vector<Output> RestoreV2(const Scope& scope, Input prefix, Input tensor_names,
                              Input shape_and_slices, absl::Span<const DataType> dtypes,
                              std::source_location loc = std::source_location::current());

struct StringJoinAttrs {
  std::string separator;
};
// Element-wise concatenation of string tensors of one shape (scalars
// broadcast), with `separator` between the pieces.
Output StringJoin(const Scope& scope, absl::Span<const Input> inputs,
                  const StringJoinAttrs& attrs = {},
                  std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IO_IO_OPS_H_
