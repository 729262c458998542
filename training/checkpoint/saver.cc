#include "training/checkpoint/saver.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/io/io_ops.h"
#include "ops/io/sharded_checkpoint_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_ops.h"
#include "placement/device_name.h"
#include "runtime/atomic_file.h"
#include "runtime/io/tensor_bundle.h"

namespace sluice {
namespace {

// Temporary files older than this in a checkpoint directory are orphans.
constexpr absl::Duration kOrphanAge = absl::Minutes(10);

bool IsResource(const Node& var) { return var.op() == "VarHandleOp"; }

// A ref variable (VariableV2) or a resource variable's handle (VarHandleOp).
bool IsVariable(const Node& n) { return n.op_def().is_variable || IsResource(n); }

// What the variable holds: a ref's base type, a handle's dtype attr.
DataType ValueType(const Node& var) {
  if (IsResource(var)) return var.GetAttr<DataType>("dtype").value_or(DT_INVALID);
  return BaseType(var.output_type(0));
}

// A scope on the variable's device, for its read and its restoring
// assignment (a resource variable is read and written where it lives).
Scope OnVariable(const Scope& s, Node* var) {
  return s.ClearColocation().WithDevice(var->requested_device()).ColocateWith(var);
}

// One shard's key: the canonical form of a requested device ("" stays "").
std::string ShardKey(const Node& var) {
  absl::StatusOr<DeviceName> d = DeviceName::Parse(var.requested_device());
  return d.ok() ? d->ToString() : var.requested_device();
}

Tensor StringVector(const std::vector<std::string>& v) {
  return Tensor::FromVector<std::string>(v);
}

// The CPU of the task of a device on an accelerator
// ("/job:worker/task:0/device:GPU:1" -> "/job:worker/task:0/device:CPU:0"),
// as TensorFlow's saver places its ops: file names and SaveV2/RestoreV2 have
// CPU kernels only. "" for a device that is not known to be an accelerator
// (a CPU, a bare task, or none yet: a device setter may place the variables
// later, and the saving ops follow them there by colocation).
std::string CpuOfAcceleratorTask(const std::string& device) {
  absl::StatusOr<DeviceName> d = DeviceName::Parse(device);
  if (!d.ok() || !d->type || *d->type == "CPU") return "";
  d->type = "CPU";
  d->id = 0;
  return d->ToString();
}

// The name and slice spec a variable is saved under: its own name and ""
// (the whole tensor), or a partitioned variable's full name and its part's
// slice.
std::pair<std::string, std::string> SavedAs(const Node& var) {
  absl::StatusOr<std::string> name = var.GetAttr<std::string>(kSaveSliceNameAttr);
  absl::StatusOr<std::string> spec = var.GetAttr<std::string>(kSaveSliceSpecAttr);
  if (name.ok() && spec.ok()) return {*name, *spec};
  return {var.name(), ""};
}

// Where shard k's nodes go. Variables on a GPU: their task's CPU, not
// colocated (colocation pulled the string ops onto the GPU; found on an
// H200: "GPU:0 has no GPU kernel for 'save/shard_0/filename' (StringJoin)").
// Else colocated with the first variable, wherever it is placed later.
Scope ShardScope(const Scope& scope, const std::string& device, const std::vector<Node*>& vars,
                 int k) {
  const std::string cpu =
      CpuOfAcceleratorTask(device.empty() ? vars[0]->requested_device() : device);
  Scope s = scope.NewSubScope(absl::StrCat("shard_", k)).ClearColocation();
  if (!cpu.empty()) return s.WithDevice(cpu);
  s = s.ColocateWith(vars[0]);
  return device.empty() ? s : s.WithDevice(device);
}

// Builds shard k's nodes: its SaveV2 writes "<prefix>_temp/part-<k>-of-<n>"
// (merged later), its RestoreV2 reads the merged "<prefix>". Returns the
// restoring Assigns.
absl::StatusOr<std::vector<Node*>> BuildShard(const Scope& s, const Output& prefix,
                                              const std::vector<Node*>& vars, int k, int n,
                                              Output* file, Node** save_node) {
  std::vector<std::string> names;
  std::vector<std::string> slices;
  std::vector<Output> values;
  std::vector<DataType> dtypes;
  for (Node* v : vars) {
    auto [name, spec] = SavedAs(*v);
    names.push_back(std::move(name));
    slices.push_back(std::move(spec));
    dtypes.push_back(ValueType(*v));
    if (IsResource(*v)) {
      const Scope r = OnVariable(s, v).WithOpName(absl::StrCat("read_", values.size()));
      values.push_back(ops::ReadVariableOp(r, Output(v, 0), dtypes.back()));
    } else {
      values.emplace_back(v, 0);
    }
  }
  Output temp = ops::StringJoin(s.WithOpName("temp_prefix"), {Input(prefix), Input("_temp/part")});
  *file = ops::ShardedFilename(s.WithOpName("filename"), temp, k, n);
  Output tensor_names = ops::Const(s.WithOpName("tensor_names"), StringVector(names));
  Output shape_and_slices = ops::Const(s.WithOpName("shape_and_slices"), StringVector(slices));
  *save_node = ops::SaveV2(s.WithOpName("save"), *file, tensor_names, shape_and_slices, values);
  std::vector<Output> restored =
      ops::RestoreV2(s.WithOpName("restore"), prefix, tensor_names, shape_and_slices, dtypes);
  std::vector<Node*> assigns;
  for (size_t i = 0; i < vars.size(); ++i) {
    const Scope a = OnVariable(s, vars[i]).WithOpName(absl::StrCat("assign_", i));
    assigns.push_back(IsResource(*vars[i])
                          ? ops::AssignVariableOp(a, Output(vars[i], 0), restored[i])
                          : ops::Assign(a, Output(vars[i], 0), restored[i]).node);
  }
  RETURN_IF_ERROR(s.status());
  return assigns;
}

// Every regular file in `dir`, then `dir` itself; best effort.
void RemoveDirectory(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> doomed;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') doomed.push_back(absl::StrCat(dir, "/", e->d_name));
  }
  closedir(d);
  for (const std::string& f : doomed) unlink(f.c_str());
  rmdir(dir.c_str());
}

// Deletes every file of checkpoint `prefix`: its index and data files, the
// shards of Sluice's older layout, and what a crashed save left in its
// "_temp" directory; best effort.
void DeleteCheckpointFiles(const std::string& prefix) {
  for (const std::string& f : BundleFiles(prefix)) unlink(f.c_str());
  const size_t slash = prefix.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : prefix.substr(0, slash);
  const std::string stem =
      absl::StrCat(slash == std::string::npos ? prefix : prefix.substr(slash + 1), ".shard-");
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> doomed;
  while (dirent* e = readdir(d)) {
    if (absl::StartsWith(e->d_name, stem)) doomed.push_back(absl::StrCat(dir, "/", e->d_name));
  }
  closedir(d);
  for (const std::string& f : doomed) unlink(f.c_str());
  RemoveDirectory(prefix + "_temp");
}

// The "_temp" directories of saves that died (a task killed mid-save), older
// than `age`: a save still at work touches its directory as it writes.
void RemoveOrphanedTempDirectories(const std::string& dir, absl::Duration age) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> doomed;
  const absl::Time cutoff = absl::Now() - age;
  while (dirent* e = readdir(d)) {
    if (!absl::EndsWith(e->d_name, "_temp")) continue;
    const std::string path = absl::StrCat(dir, "/", e->d_name);
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
        absl::FromTimeT(st.st_mtime) < cutoff) {
      doomed.push_back(path);
    }
  }
  closedir(d);
  for (const std::string& p : doomed) RemoveDirectory(p);
}

}  // namespace

std::string Saver::DataFilename(absl::string_view prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

absl::StatusOr<std::unique_ptr<Saver>> Saver::Build(const Scope& scope,
                                                    std::vector<Node*> variables,
                                                    SaverOptions options) {
  RETURN_IF_ERROR(scope.status());
  if (variables.empty()) {
    for (Node* n : scope.graph()->nodes()) {
      if (IsVariable(*n)) variables.push_back(n);
    }
  }
  if (variables.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Saver '", options.name, "': the graph has no variables to save"));
  }
  absl::flat_hash_set<Node*> seen;
  std::map<std::string, std::vector<Node*>> shards;  // sorted by device
  for (Node* v : variables) {
    if (v == nullptr || !IsVariable(*v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Saver '", options.name, "': ", v ? v->DebugName() : "a null node",
                       " is not a variable (VariableV2 or VarHandleOp)"));
    }
    if (!seen.insert(v).second) continue;
    shards[options.sharded ? ShardKey(*v) : std::string()].push_back(v);
  }
  for (auto& [device, vars] : shards) {
    std::sort(vars.begin(), vars.end(),
              [](const Node* a, const Node* b) { return a->name() < b->name(); });
  }

  Scope s = scope.NewSubScope(options.name);
  // The fed file name: a string, so wherever the placer finds a CPU, not
  // on the device of the caller's scope.
  Output prefix =
      ops::Placeholder(s.WithOpName("prefix").WithDevice(""), DT_STRING, {.shape = TensorShape()});
  RETURN_IF_ERROR(s.status());
  const int n = static_cast<int>(shards.size());
  std::vector<Node*> saves;
  std::vector<Output> files;
  std::vector<Node*> assigns;
  Scope last = s;
  int k = 0;
  for (const auto& [device, vars] : shards) {
    // Unsharded, the one shard is colocated with its first variable.
    last = ShardScope(s, device, vars, k);
    Node* save = nullptr;
    Output file;
    ASSIGN_OR_RETURN(std::vector<Node*> a, BuildShard(last, prefix, vars, k++, n, &file, &save));
    saves.push_back(save);
    files.push_back(file);
    assigns.insert(assigns.end(), a.begin(), a.end());
  }
  // TensorFlow's sharded V2 save: once every shard is written, the last
  // shard's task merges them into "<prefix>.index" and renames their data
  // files "<prefix>.data-<k>-of-<n>" (so the tasks share the directory).
  Scope merging = last.WithControlDependencies(saves);
  Output parts = ops::Pack(merging.WithOpName("parts"), absl::Span<const Output>(files));
  Node* merge = ops::MergeV2Checkpoints(merging.WithOpName("merge"), parts, prefix);
  Scope top = s.ClearColocation().WithDevice("");
  Node* save_all = ops::GroupDeps(top.WithOpName("save_all"), {merge});
  Output saved_prefix = ops::Identity(
      top.WithControlDependencies(std::vector<Node*>{merge}).WithOpName("saved_prefix"), prefix);
  Node* restore_all = ops::GroupDeps(top.WithOpName("restore_all"), assigns);
  RETURN_IF_ERROR(s.status());
  SaverNodeNames names;
  names.prefix_feed = absl::StrCat(prefix.node->name(), ":0");
  names.save_target = save_all->name();
  names.save_tensor = saved_prefix.name();
  names.restore_target = restore_all->name();
  names.num_shards = n;
  return std::unique_ptr<Saver>(new Saver(std::move(names), std::move(options)));
}

std::unique_ptr<Saver> Saver::FromNames(SaverNodeNames names, SaverOptions options) {
  return std::unique_ptr<Saver>(new Saver(std::move(names), std::move(options)));
}

absl::StatusOr<std::string> Saver::Save(Session* session, const std::string& dir, int64_t step,
                                        const std::string& basename) {
  if (dir.empty() || basename.empty() || absl::StrContains(basename, '/') ||
      absl::StrContains(basename, '\n')) {
    return absl::InvalidArgumentError(absl::StrCat("Saver '", options_.name,
                                                   "': bad checkpoint directory '", dir,
                                                   "' or basename '", basename, "'"));
  }
  RETURN_IF_ERROR(CreateDirectories(dir));
  const std::string name = absl::StrCat(basename, "-", step);
  const std::string prefix = absl::StrCat(dir, "/", name);
  absl::Status s = session
                       ->Run({{names_.prefix_feed, Tensor::Scalar<std::string>(prefix)}}, {},
                             {names_.save_target})
                       .status();
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("saving checkpoint '", prefix, "': ", s.message()));
  }
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(UpdateState(dir, name));
  return prefix;
}

absl::Status Saver::UpdateState(const std::string& dir, const std::string& name) {
  CheckpointState state;
  absl::StatusOr<CheckpointState> old = ReadCheckpointState(dir);
  if (old.ok()) {
    state = *std::move(old);
  } else if (!absl::IsNotFound(old.status()) && !absl::IsDataLoss(old.status())) {
    return old.status();  // a corrupt state file is replaced; its checkpoints are not pruned
  }
  // Timestamps are kept beside the names when the file had them for all.
  const bool timed = state.timestamps.size() == state.kept.size();
  if (!timed) state.timestamps.clear();
  for (size_t i = state.kept.size(); i-- > 0;) {
    if (state.kept[i] != name) continue;
    state.kept.erase(state.kept.begin() + i);
    if (timed) state.timestamps.erase(state.timestamps.begin() + i);
  }
  state.kept.push_back(name);
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  if (timed) state.timestamps.push_back(now);
  if (state.last_preserved_timestamp == 0) state.last_preserved_timestamp = now;
  std::vector<std::string> dropped;
  if (options_.max_to_keep > 0 && state.kept.size() > static_cast<size_t>(options_.max_to_keep)) {
    const size_t extra = state.kept.size() - options_.max_to_keep;
    dropped.assign(state.kept.begin(), state.kept.begin() + extra);
    state.kept.erase(state.kept.begin(), state.kept.begin() + extra);
    if (timed) state.timestamps.erase(state.timestamps.begin(), state.timestamps.begin() + extra);
  }
  RETURN_IF_ERROR(WriteCheckpointState(dir, state));
  for (const std::string& d : dropped) {
    DeleteCheckpointFiles(absl::StartsWith(d, "/") ? d : absl::StrCat(dir, "/", d));
  }
  // Files a task was writing when it died. A save takes seconds; ten
  // minutes leaves any write still at work alone.
  (void)RemoveOrphanedTempFiles(dir, kOrphanAge);
  RemoveOrphanedTempDirectories(dir, kOrphanAge);
  return absl::OkStatus();
}

absl::Status Saver::SaveTo(Session* session, const std::string& prefix) const {
  absl::Status s = session
                       ->Run({{names_.prefix_feed, Tensor::Scalar<std::string>(prefix)}}, {},
                             {names_.save_target})
                       .status();
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("saving checkpoint '", prefix, "': ", s.message()));
}

absl::Status Saver::Restore(Session* session, const std::string& prefix) {
  absl::Status s = session
                       ->Run({{names_.prefix_feed, Tensor::Scalar<std::string>(prefix)}}, {},
                             {names_.restore_target})
                       .status();
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("restoring checkpoint '", prefix, "': ", s.message()));
}

absl::StatusOr<std::string> Saver::RestoreNewest(Session* session, const std::string& dir) {
  ASSIGN_OR_RETURN(std::vector<std::string> kept, ListCheckpoints(dir));
  if (kept.empty()) {
    return absl::NotFoundError(absl::StrCat("no checkpoint in '", dir, "'"));
  }
  std::vector<std::string> failures;
  for (size_t i = kept.size(); i-- > 0;) {
    absl::Status s = Restore(session, kept[i]);
    if (s.ok()) {
      if (!failures.empty()) {
        std::fprintf(stderr, "saver: restored '%s' instead (%zu newer checkpoint(s) unusable)\n",
                     kept[i].c_str(), failures.size());
      }
      return kept[i];
    }
    if (!absl::IsDataLoss(s) && !absl::IsNotFound(s)) return s;
    std::fprintf(stderr, "saver: skipping an unusable checkpoint: %s\n",
                 std::string(s.message()).c_str());
    failures.push_back(std::string(s.message()));
  }
  return absl::DataLossError(
      absl::StrCat("no checkpoint in '", dir, "' restores: ", absl::StrJoin(failures, "; ")));
}

}  // namespace sluice
