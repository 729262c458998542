#include "training/replica_device_setter.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "placement/colocation.h"
#include "placement/device_name.h"

namespace sluice {
namespace {

bool IsVariable(const Node& n) { return n.op_def().is_variable; }

// Bytes of a variable from its attrs; 0 when its shape is not fully defined.
int64_t VariableBytes(const Node& n) {
  absl::StatusOr<TensorShape> shape = n.GetAttr<TensorShape>("shape");
  absl::StatusOr<DataType> dtype = n.GetAttr<DataType>("dtype");
  if (!shape.ok() || !dtype.ok() || !shape->IsFullyDefined()) return 0;
  return shape->num_elements() * DataTypeSize(*dtype);
}

// `over`'s parts laid over `base` (TensorFlow's merged device spec): a part
// set in `over` wins; a device type other than base's drops base's id.
DeviceName Overlay(const DeviceName& base, const DeviceName& over) {
  DeviceName out = base;
  if (over.job) out.job = over.job;
  if (over.replica) out.replica = over.replica;
  if (over.task) out.task = over.task;
  if (over.type) {
    if (out.type != over.type) out.id.reset();
    out.type = over.type;
  }
  if (over.id) out.id = over.id;
  return out;
}

// The merge of the group members' requests.
absl::StatusOr<DeviceName> GroupRequest(const Graph& graph, const std::vector<int>& members) {
  DeviceName merged;
  const Node* first = nullptr;
  for (int id : members) {
    const Node* n = graph.node(id);
    if (n->requested_device().empty()) continue;
    absl::StatusOr<DeviceName> req = DeviceName::Parse(n->requested_device());
    if (!req.ok()) {
      return AddContext(req.status(), absl::StrCat("replica device setter: node ", n->DebugName()));
    }
    if (!merged.IsCompatibleWith(*req)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replica device setter: ", n->DebugName(), " requests '", n->requested_device(), "' but ",
          first->DebugName(), ", colocated with it, requests '", first->requested_device(), "'"));
    }
    RETURN_IF_ERROR(merged.MergeFrom(*req));
    if (first == nullptr) first = n;
  }
  return merged;
}

// Chooses ps tasks for variable groups.
class PsChooser {
 public:
  explicit PsChooser(const ReplicaDeviceSetterOptions& options)
      : strategy_(options.strategy), bytes_(options.num_ps_tasks, 0) {}

  int Choose(int64_t bytes) {
    int task = 0;
    if (strategy_ == ReplicaDeviceSetterOptions::Strategy::kRoundRobin) {
      task = next_;
      next_ = (next_ + 1) % static_cast<int>(bytes_.size());
    } else {
      for (int t = 1; t < static_cast<int>(bytes_.size()); ++t) {
        if (bytes_[t] < bytes_[task]) task = t;
      }
    }
    bytes_[task] += bytes;
    return task;
  }
  // A group that names its task.
  void Account(int task, int64_t bytes) {
    if (task >= 0 && task < static_cast<int>(bytes_.size())) bytes_[task] += bytes;
  }

 private:
  const ReplicaDeviceSetterOptions::Strategy strategy_;
  std::vector<int64_t> bytes_;
  int next_ = 0;
};

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ApplyReplicaDeviceSetter(
    Graph* graph, const ReplicaDeviceSetterOptions& options) {
  if (options.num_ps_tasks < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "replica device setter: num_ps_tasks must be >= 0, got ", options.num_ps_tasks));
  }
  if (options.num_ps_tasks > 0 && options.ps_job.empty()) {
    return absl::InvalidArgumentError("replica device setter: ps_job is empty");
  }
  absl::StatusOr<DeviceName> worker = DeviceName::Parse(options.worker_device);
  if (!worker.ok()) return AddContext(worker.status(), "replica device setter: worker_device");

  const ColocationGroups groups = ComputeColocationGroups(*graph);
  PsChooser chooser(options);
  std::map<std::string, std::string> placed;
  for (const std::vector<int>& members : groups.members) {
    ASSIGN_OR_RETURN(DeviceName request, GroupRequest(*graph, members));
    bool has_variable = false;
    int64_t bytes = 0;
    for (int id : members) {
      const Node* n = graph->node(id);
      if (!IsVariable(*n)) continue;
      has_variable = true;
      bytes += VariableBytes(*n);
    }
    DeviceName target;
    if (has_variable && options.num_ps_tasks > 0 &&
        (!request.job || *request.job == options.ps_job)) {
      target = request;
      target.job = options.ps_job;
      if (target.task) {
        chooser.Account(*target.task, bytes);
      } else {
        target.task = chooser.Choose(bytes);
      }
    } else if (request.job) {
      target = request;
    } else {
      target = Overlay(*worker, request);
    }
    const std::string device = target.ToString();
    for (int id : members) {
      Node* n = graph->node(id);
      const std::string& current = n->requested_device();
      if (!current.empty()) {
        ASSIGN_OR_RETURN(DeviceName req, DeviceName::Parse(current));
        if (req.job) {
          if (IsVariable(*n)) placed[n->name()] = current;
          continue;
        }
      }
      n->set_requested_device(device);
      if (IsVariable(*n)) placed[n->name()] = device;
    }
  }
  return placed;
}

}  // namespace sluice
