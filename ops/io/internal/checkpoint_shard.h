// Sluice's checkpoint shard file format (described in ops/io/io_ops.h; what
// SaveV2 wrote before it wrote TensorFlow's V2 format): writing one shard
// atomically, and reading one back with every checksum verified. Reading
// also takes TensorFlow's V1 checkpoint files (runtime/io/tensor_slice_file.h:
// what Save and SaveSlices write, and old TensorFlow checkpoints), told
// apart by their table footer: a whole tensor is found under its name, a
// slice under SliceEntryName (ops/io/internal/tensor_slice.h), so every
// restore that reads shards reads V1 files too. Internal to ops/ (the
// kernels and their tests).
//
//   RETURN_IF_ERROR(internal::WriteCheckpointShard(path, {{"w", w}, {"b", b}}));
//   ASSIGN_OR_RETURN(internal::CheckpointShard shard,
//                    internal::CheckpointShard::Read(path, allocator));
//   ASSIGN_OR_RETURN(Tensor w, shard.Get("w", DT_FLOAT));
//
// Errors (messages name the file; the caller adds the node): NotFound when
// the file or an entry is missing, DataLoss for anything that does not
// verify, InvalidArgument for a dtype mismatch or an unsavable tensor.
// Thread-compatible value types.
#ifndef SLUICE_OPS_IO_INTERNAL_CHECKPOINT_SHARD_H_
#define SLUICE_OPS_IO_INTERNAL_CHECKPOINT_SHARD_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

inline constexpr char kShardMagic[] = "SLUICECK";
inline constexpr char kShardEndMagic[] = "SLUICEND";
inline constexpr uint32_t kShardVersion = 1;

struct ShardEntry {
  std::string name;
  Tensor tensor;
};

// Writes `entries` (distinct names; initialized tensors of a fixed-size
// dtype or DT_STRING) to `path` atomically.
absl::Status WriteCheckpointShard(const std::string& path, absl::Span<const ShardEntry> entries);

class CheckpointShard {
 public:
  // Reads and verifies the whole file (a Sluice shard or a TensorFlow V1
  // checkpoint file); tensors are allocated from `allocator` (nullptr: the
  // default CPU allocator).
  static absl::StatusOr<CheckpointShard> Read(const std::string& path,
                                              Allocator* allocator = nullptr);
  // Read, of a file's bytes already in memory; `path` names it in errors.
  static absl::StatusOr<CheckpointShard> Parse(absl::string_view bytes, const std::string& path,
                                               Allocator* allocator = nullptr);

  // NotFound naming the file and tensor when absent; InvalidArgument when
  // the stored dtype is not `dtype`. Shares the stored tensor's buffer.
  absl::StatusOr<Tensor> Get(absl::string_view name, DataType dtype) const;
  // The stored tensor of any dtype, or nullptr when absent (MergeV2Checkpoints
  // copies entries without knowing their types).
  const Tensor* Find(absl::string_view name) const;
  // Entry names in file order.
  const std::vector<std::string>& names() const { return names_; }

 private:
  // A TensorFlow V1 checkpoint file's slices as entries.
  static absl::StatusOr<CheckpointShard> ParseTensorSlices(absl::string_view bytes,
                                                           const std::string& path,
                                                           Allocator* allocator);

  std::string path_;
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, Tensor> tensors_;
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_IO_INTERNAL_CHECKPOINT_SHARD_H_
