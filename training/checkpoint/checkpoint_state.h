// The checkpoint state file, "<dir>/checkpoint": which checkpoints in a
// directory are complete, oldest first, the last one being the latest. A
// checkpoint counts only once this file names it, so a save that dies
// between shard files (or before updating this file) leaves the previous
// checkpoint the latest, fully usable.
//
//   ASSIGN_OR_RETURN(std::string prefix, LatestCheckpoint("/ckpt"));  // "/ckpt/model.ckpt-300"
//   RETURN_IF_ERROR(saver->Restore(session, prefix));
//
// Format: TensorFlow's, a CheckpointState in protobuf's text format, so
// tf.train.latest_checkpoint and get_checkpoint_state read it (names are
// relative to the directory unless they start with '/'):
//
//   model_checkpoint_path: "model.ckpt-200"
//   all_model_checkpoint_paths: "model.ckpt-100"
//   all_model_checkpoint_paths: "model.ckpt-200"
//   all_model_checkpoint_timestamps: 1796000000.5
//   all_model_checkpoint_timestamps: 1796000060.25
//   last_preserved_timestamp: 1795999990
//   # crc32c 1a2b3c4d       <- CRC-32C (hex) of every byte before this line
//
// The checksum comment (which TensorFlow's parser skips) makes a damaged
// file DataLoss rather than another name; a file TensorFlow wrote, without
// it, is parsed as it is. Sluice's older format (a "sluice-checkpoint-state
// 1" header, "kept"/"latest" records, a "crc32c" line) is still read. The
// file is replaced atomically (runtime/atomic_file.h).
//
// Errors: NotFound when the directory has no state file; DataLoss naming the
// file when it is corrupt (bad checksum, unknown record, latest not the
// newest kept). Thread-safety: the functions are thread-compatible on one
// directory (the Saver serializes its own updates).
#ifndef SLUICE_TRAINING_CHECKPOINT_CHECKPOINT_STATE_H_
#define SLUICE_TRAINING_CHECKPOINT_CHECKPOINT_STATE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice {

inline constexpr char kCheckpointStateFile[] = "checkpoint";

struct CheckpointState {
  // Prefixes as stored (relative to the directory, or absolute), oldest
  // first; the last one is the latest. Empty: no checkpoint yet.
  std::vector<std::string> kept;
  // When each of `kept` was saved (seconds since the epoch), parallel to it;
  // empty when unknown (then none is written).
  std::vector<double> timestamps;
  double last_preserved_timestamp = 0;
};

absl::StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir);
// InvalidArgument for an empty name or one holding a newline.
absl::Status WriteCheckpointState(const std::string& dir, const CheckpointState& state);

// "<dir>/<latest>": the newest complete checkpoint's prefix. NotFound when
// there is no state file or it names none.
absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir);
// Every kept checkpoint's prefix (as "<dir>/<name>"), oldest first.
absl::StatusOr<std::vector<std::string>> ListCheckpoints(const std::string& dir);

}  // namespace sluice

#endif  // SLUICE_TRAINING_CHECKPOINT_CHECKPOINT_STATE_H_
