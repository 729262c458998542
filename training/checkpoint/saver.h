// Saver: saves and restores a graph's variables as TensorFlow's sharded V2
// checkpoints, as tf.train.Saver(sharded=True) does. It adds to the graph
// one SaveV2 (and one RestoreV2 with an Assign per variable) for each device
// that holds variables, colocated with the variables (on the CPU of their
// task when they are on a GPU, as TensorFlow's saver places them: the
// string and file ops have CPU kernels only), so in a cluster every
// parameter server task writes and reads its own variables' bytes; nothing
// crosses the network but file names. Resource variables (VarHandleOp) are
// saved through a ReadVariableOp and restored by an AssignVariableOp, both
// on the variable's device, as TensorFlow's saver does for them.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Saver> saver, Saver::Build(root, {}));  // every variable
//   ASSIGN_OR_RETURN(auto sess, NewSession(opts, *root.graph()));
//   ...train...
//   ASSIGN_OR_RETURN(std::string prefix, saver->Save(sess.get(), "/ckpt", step));
//   // later, maybe in a new process with the same graph:
//   ASSIGN_OR_RETURN(std::string latest, LatestCheckpoint("/ckpt"));
//   RETURN_IF_ERROR(saver->Restore(sess.get(), latest));
//
// Files: Save(dir, step) has each shard write "<prefix>_temp/part-<k>-of-<n>"
// (prefix "<dir>/<basename>-<step>"; an index and a data file, each
// atomically), then the last shard's task merges them (MergeV2Checkpoints)
// into "<prefix>.index" and "<prefix>.data-<k>-of-<n>", the files TensorFlow
// reads (tf.train.load_checkpoint, Saver.restore): so the tasks must share
// the checkpoint directory, as TensorFlow's do. Then "<dir>/checkpoint"
// (checkpoint_state.h) is rewritten atomically to name the new checkpoint
// as the latest, and only then are the files of checkpoints beyond
// max_to_keep deleted. A crash at any point leaves the previous checkpoint
// listed and whole; the "_temp" directories of saves that died are removed
// by a later save once ten minutes old. Restore also reads checkpoints in
// Sluice's older layout, "<prefix>.shard-<k>-of-<n>" (ops/io/io_ops.h).
//
// Graph nodes (under the scope's name prefix, `name` = options.name):
//   <name>/prefix          string Placeholder: the checkpoint prefix (fed)
//   <name>/shard_<k>/...   StringJoin and ShardedFilename (the part's
//                          name), SaveV2, RestoreV2, Assigns (and, for
//                          resource variables, read_<i> and
//                          AssignVariableOps)
//   <name>/shard_<n-1>/merge  MergeV2Checkpoints of every part
//   <name>/save_all        NoOp target running every SaveV2 and the merge
//   <name>/saved_prefix    Identity of the prefix after the merge (the
//                          tensor a SaverDef fetches to save)
//   <name>/restore_all     NoOp target running every restoring Assign
// Shards are the distinct requested devices of the variables (canonical
// device names; "" is one shard), sorted; variables within a shard sorted by
// name; each is stored under its node name. With sharded = false there is one
// shard, with the first variable (by name); the others are read across
// devices.
//
// Partitioned variables (training/partitioned_variables.h): a variable node
// whose string attrs kSaveSliceNameAttr and kSaveSliceSpecAttr are set is
// saved as that slice ("10 4 0,5:-") of the tensor so named, as TensorFlow
// saves a part (its save_slice_info), and restored from whatever slices the
// checkpoint holds of that tensor, reading only those that overlap the
// part: a table saved in N parts restores into M parts, or whole into a
// variable of the full shape named after the tensor; and TensorFlow's
// partitioned checkpoints restore the same way.
//
// Errors: Build: InvalidArgument for a node that is not a variable, or no
// variables; graph-building errors name the node. Save/Restore: the
// session's error (RestoreV2 reports DataLoss / NotFound naming the
// checkpoint, the data file and the tensor); Save also fails when the state
// file cannot be written.
//
// Thread-safety: Save and Restore may be called concurrently; saves are
// serialized around the state file. Ownership: the graph owns the nodes;
// the Saver keeps only their names, so it works with any Session running a
// graph that contains them (FromNames for a graph built elsewhere).
#ifndef SLUICE_TRAINING_CHECKPOINT_SAVER_H_
#define SLUICE_TRAINING_CHECKPOINT_SAVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "graph/scope.h"
#include "runtime/session.h"
#include "training/checkpoint/checkpoint_state.h"

namespace sluice {

inline constexpr char kSaveSliceNameAttr[] = "_save_slice_info_name";
inline constexpr char kSaveSliceSpecAttr[] = "_save_slice_info_spec";

struct SaverOptions {
  int max_to_keep = 5;  // <= 0: keep every checkpoint
  bool sharded = true;
  std::string name = "save";
};

// What a Saver needs to drive a graph it did not build.
struct SaverNodeNames {
  std::string prefix_feed;     // "save/prefix:0"
  std::string save_target;     // "save/save_all"
  std::string save_tensor;     // "save/saved_prefix:0": the prefix, once saved (SaverDef's)
  std::string restore_target;  // "save/restore_all"
  int num_shards = 0;
};

class Saver {
 public:
  // Adds the save/restore nodes for `variables` (VariableV2 / Variable
  // nodes; empty: every variable in the scope's graph).
  static absl::StatusOr<std::unique_ptr<Saver>> Build(const Scope& scope,
                                                      std::vector<Node*> variables,
                                                      SaverOptions options = {});
  static std::unique_ptr<Saver> FromNames(SaverNodeNames names, SaverOptions options = {});

  Saver(const Saver&) = delete;
  Saver& operator=(const Saver&) = delete;

  // Runs the save ops; writes every shard of "<dir>/<basename>-<step>",
  // records it in "<dir>/checkpoint" and deletes checkpoints beyond
  // max_to_keep. Creates `dir` when missing. Returns the prefix.
  absl::StatusOr<std::string> Save(Session* session, const std::string& dir, int64_t step,
                                   const std::string& basename = "model.ckpt");
  // Runs the save ops writing the checkpoint at `prefix` alone: no state
  // file, nothing deleted (a SavedModel's "variables/variables").
  absl::Status SaveTo(Session* session, const std::string& prefix) const;
  // Assigns every variable from the shards of `prefix`.
  absl::Status Restore(Session* session, const std::string& prefix);
  // Restores the newest checkpoint of `dir` that restores: one whose shard
  // is corrupt (DataLoss) or missing (NotFound) is passed over, with a line
  // on stderr naming it, for the one before it. Returns the prefix restored.
  // NotFound when `dir` has no checkpoint; DataLoss naming each one when
  // every kept checkpoint fails (nothing the user saved is dropped silently).
  absl::StatusOr<std::string> RestoreNewest(Session* session, const std::string& dir);

  const SaverNodeNames& node_names() const { return names_; }
  const SaverOptions& options() const { return options_; }
  int num_shards() const { return names_.num_shards; }

  // "<prefix>.data-<k>-of-<n>" (five digits each): shard k's data file.
  static std::string DataFilename(absl::string_view prefix, int shard, int num_shards);

 private:
  Saver(SaverNodeNames names, SaverOptions options)
      : names_(std::move(names)), options_(std::move(options)) {}
  // Records `name` in dir's state file, then deletes what falls off.
  absl::Status UpdateState(const std::string& dir, const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SaverNodeNames names_;
  const SaverOptions options_;
  absl::Mutex mu_;  // serializes state-file updates
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_CHECKPOINT_SAVER_H_
