// Saver: saves and restores a graph's variables as sharded checkpoints. It
// adds to the graph one SaveV2 (and one RestoreV2 with an Assign per
// variable) for each device that holds variables, colocated with the
// variables (on the CPU of their task when they are on a GPU, as
// TensorFlow's saver places them: the string and file ops have CPU kernels
// only), so in a cluster every parameter server task writes and reads its
// own shard; nothing crosses the network.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Saver> saver, Saver::Build(root, {}));  // every variable
//   ASSIGN_OR_RETURN(auto sess, NewSession(opts, *root.graph()));
//   ...train...
//   ASSIGN_OR_RETURN(std::string prefix, saver->Save(sess.get(), "/ckpt", step));
//   // later, maybe in a new process with the same graph:
//   ASSIGN_OR_RETURN(std::string latest, LatestCheckpoint("/ckpt"));
//   RETURN_IF_ERROR(saver->Restore(sess.get(), latest));
//
// Files: Save(dir, step) writes "<dir>/<basename>-<step>.shard-<k>-of-<n>"
// (ops/io/io_ops.h format, each atomically), then atomically rewrites
// "<dir>/checkpoint" (checkpoint_state.h) to name the new checkpoint as the
// latest, and only then deletes the files of checkpoints beyond max_to_keep.
// A crash at any point leaves the previous checkpoint listed and whole.
//
// Graph nodes (under the scope's name prefix, `name` = options.name):
//   <name>/prefix          string Placeholder: the checkpoint prefix (fed)
//   <name>/shard_<k>/...   StringJoin (file name), SaveV2, RestoreV2, Assigns
//   <name>/save_all        NoOp target running every SaveV2
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
// saves a part (its save_slice_info), and restored from whatever parts the
// checkpoint holds of that tensor, in any shard file: a table saved in N
// parts restores into M parts, or whole into a variable of the full shape
// named after the tensor.
//
// Errors: Build: InvalidArgument for a node that is not a variable, or no
// variables; graph-building errors name the node. Save/Restore: the
// session's error (RestoreV2 reports DataLoss / NotFound naming the shard file
// and tensors); Save also fails when the state file cannot be written.
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
#include "training/checkpoint/checkpoint_state.h"
#include "graph/scope.h"
#include "runtime/session.h"

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
  // Assigns every variable from the shards of `prefix`.
  absl::Status Restore(Session* session, const std::string& prefix);
  // Restores the newest checkpoint of `dir` that restores: one whose shard
  // is corrupt (DataLoss) or missing (NotFound) is passed over, with a line
  // on stderr naming it, for the one before it. Returns the prefix restored.
  // NotFound when `dir` has no checkpoint; DataLoss naming each one when
  // every kept checkpoint fails (nothing the user saved is dropped silently).
  absl::StatusOr<std::string> RestoreNewest(Session* session, const std::string& dir);

  const SaverNodeNames& node_names() const { return names_; }
  int num_shards() const { return names_.num_shards; }

  // "<prefix>.shard-<k>-of-<n>".
  static std::string ShardFilename(absl::string_view prefix, int shard, int num_shards);

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
