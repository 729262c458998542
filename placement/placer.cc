#include "placement/placer.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "placement/colocation.h"
#include "placement/device_name.h"

namespace sluice {
namespace {

struct Group {
  std::vector<Node*> members;
  // Members of the group in PlacerOptions::whole_graph that this graph lacks.
  std::vector<const Node*> whole_members;
  DeviceName request;              // merged requests of the members
  Node* request_source = nullptr;  // the first member whose request is in `request`
};

// What a node asks for: its assigned device, else its requested one.
const std::string& Wanted(const Node& n) {
  return n.assigned_device().empty() ? n.requested_device() : n.assigned_device();
}

// A lone node with no inputs and no state (a Const, a shape): cheap to put
// wherever its consumers are.
bool IsMovableSource(const Group& g) {
  if (g.members.size() != 1 || g.request_source != nullptr || !g.whole_members.empty()) {
    return false;
  }
  const Node* n = g.members[0];
  return n->in_edges().empty() && !n->op_def().is_stateful && !n->out_edges().empty();
}

class Placer {
 public:
  Placer(Graph* graph, absl::Span<Device* const> devices, const KernelRegistry& kernels,
         const PlacerOptions& options)
      : graph_(graph), devices_(devices), kernels_(kernels), options_(options) {}

  absl::Status Run();

 private:
  absl::Status ParseDevices();
  absl::Status BuildGroups();
  // Adds each group's members in options_.whole_graph (see PlacerOptions).
  void AddWholeGraphMembers();
  // Whether some device at hand has a kernel for n.
  bool HasAnyKernel(const Node& n) const;
  bool HasKernels(const Group& g, size_t d, std::vector<std::string>* reasons) const;
  // The first device matching `request` with kernels for the group; -1 if none.
  int FirstFit(const Group& g, const DeviceName& request, std::vector<std::string>* reasons) const;
  absl::StatusOr<int> Choose(const Group& g) const;
  absl::Status NoDeviceError(const Group& g, const std::vector<std::string>& reasons) const;

  Graph* graph_;
  absl::Span<Device* const> devices_;
  const KernelRegistry& kernels_;
  const PlacerOptions& options_;
  std::vector<DeviceName> names_;
  DeviceName default_;
  bool has_gpu_ = false;
  ColocationGroups colocation_;
  std::vector<Group> groups_;
};

absl::Status Placer::ParseDevices() {
  if (devices_.empty()) return absl::FailedPreconditionError("no devices to place on");
  for (Device* d : devices_) {
    ASSIGN_OR_RETURN(DeviceName n, DeviceName::Parse(d->name()));
    names_.push_back(std::move(n));
  }
  for (Device* d : devices_) has_gpu_ |= d->device_type() == kDeviceTypeGpu;
  if (options_.default_device.empty()) {
    // The first device's task; within it a GPU when one can take the group,
    // else the first device with kernels (CPU:0 comes first).
    default_ = names_[0];
    default_.type.reset();
    default_.id.reset();
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(default_, DeviceName::Parse(options_.default_device));
  for (const DeviceName& n : names_) {
    if (default_.Matches(n)) return absl::OkStatus();
  }
  std::vector<std::string> all;
  for (Device* d : devices_) all.push_back(d->name());
  return absl::InvalidArgumentError(absl::StrCat("default device '", options_.default_device,
                                                 "' matches none of: ", absl::StrJoin(all, ", ")));
}

absl::Status Placer::BuildGroups() {
  colocation_ = ComputeColocationGroups(*graph_);
  groups_.resize(colocation_.members.size());
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    Group& g = groups_[gi];
    for (int id : colocation_.members[gi]) {
      Node* n = graph_->node(id);
      g.members.push_back(n);
      const std::string& want = Wanted(*n);
      if (want.empty()) continue;
      absl::StatusOr<DeviceName> req = DeviceName::Parse(want);
      if (!req.ok()) return AddContext(req.status(), absl::StrCat("node ", n->DebugName()));
      if (!g.request.IsCompatibleWith(*req)) {
        if (options_.allow_soft_placement) continue;
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot place node ", n->DebugName(), " on '", want,
            "': it must be colocated with ", g.request_source->DebugName(),
            ", which asks for '", Wanted(*g.request_source), "'"));
      }
      RETURN_IF_ERROR(g.request.MergeFrom(*req));
      if (g.request_source == nullptr) g.request_source = n;
    }
  }
  return absl::OkStatus();
}

void Placer::AddWholeGraphMembers() {
  const Graph* whole = options_.whole_graph;
  if (whole == nullptr || whole == graph_) return;
  const ColocationGroups whole_groups = ComputeColocationGroups(*whole);
  for (Group& g : groups_) {
    std::set<int> seen_groups;
    std::set<std::string> here;
    for (const Node* m : g.members) here.insert(m->name());
    for (Node* m : g.members) {
      const Node* w = whole->FindNode(m->name());
      if (w == nullptr || !seen_groups.insert(whole_groups.group_of[w->id()]).second) continue;
      for (int id : whole_groups.members[whole_groups.group_of[w->id()]]) {
        const Node* other = whole->node(id);
        if (here.count(other->name()) || !HasAnyKernel(*other)) continue;
        g.whole_members.push_back(other);
        const std::string& want = Wanted(*other);
        if (want.empty()) continue;
        absl::StatusOr<DeviceName> req = DeviceName::Parse(want);
        if (!req.ok() || !g.request.IsCompatibleWith(*req)) continue;  // not this run's to judge
        if (g.request.MergeFrom(*req).ok() && g.request_source == nullptr) g.request_source = m;
      }
    }
  }
}

bool Placer::HasAnyKernel(const Node& n) const {
  for (Device* d : devices_) {
    if (kernels_.FindKernelDef(n, d->device_type()) != nullptr) return true;
  }
  return false;
}

bool Placer::HasKernels(const Group& g, size_t d, std::vector<std::string>* reasons) const {
  auto has = [&](const Node& m) {
    if (kernels_.FindKernelDef(m, devices_[d]->device_type()) != nullptr) return true;
    if (reasons != nullptr) {
      reasons->push_back(absl::StrCat(devices_[d]->name(), " has no ", devices_[d]->device_type(),
                                      " kernel for ", m.DebugName()));
    }
    return false;
  };
  for (const Node* m : g.members) {
    if (!has(*m)) return false;
  }
  for (const Node* m : g.whole_members) {
    if (!has(*m)) return false;
  }
  return true;
}

int Placer::FirstFit(const Group& g, const DeviceName& request,
                     std::vector<std::string>* reasons) const {
  if (has_gpu_ && !request.type.has_value()) {
    // Ops with a GPU kernel prefer the GPU.
    DeviceName gpu = request;
    gpu.type = kDeviceTypeGpu;
    for (size_t d = 0; d < devices_.size(); ++d) {
      if (gpu.Matches(names_[d]) && HasKernels(g, d, nullptr)) return static_cast<int>(d);
    }
  }
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (request.Matches(names_[d]) && HasKernels(g, d, reasons)) return static_cast<int>(d);
  }
  return -1;
}

absl::StatusOr<int> Placer::Choose(const Group& g) const {
  std::vector<std::string> reasons;
  if (g.request_source == nullptr) {
    int d = FirstFit(g, default_, nullptr);
    if (d < 0) d = FirstFit(g, DeviceName(), &reasons);
    if (d < 0) return NoDeviceError(g, reasons);
    return d;
  }
  int d = FirstFit(g, g.request, &reasons);
  if (d >= 0) return d;
  if (options_.allow_soft_placement) {
    // Relax the request step by step: any id of the type, then any type on
    // the same job/task, then anywhere (the default first).
    DeviceName relaxed = g.request;
    relaxed.id.reset();
    if ((d = FirstFit(g, relaxed, nullptr)) >= 0) return d;
    relaxed.type.reset();
    if ((d = FirstFit(g, relaxed, nullptr)) >= 0) return d;
    if ((d = FirstFit(g, default_, nullptr)) >= 0) return d;
    if ((d = FirstFit(g, DeviceName(), nullptr)) >= 0) return d;
  }
  return NoDeviceError(g, reasons);
}

absl::Status Placer::NoDeviceError(const Group& g, const std::vector<std::string>& reasons) const {
  Node* who = g.request_source ? g.request_source : g.members[0];
  std::vector<std::string> names;
  for (Device* d : devices_) names.push_back(d->name());
  const std::string& want = Wanted(*who);
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot place node ", who->DebugName(),
      want.empty() ? "" : absl::StrCat(" on '", want, "'"),
      g.members.size() > 1 ? absl::StrCat(" with its ", g.members.size() - 1, " colocated nodes")
                           : "",
      ": ",
      reasons.empty()
          ? absl::StrCat("no device matches; available: ", absl::StrJoin(names, ", "))
          : absl::StrJoin(reasons, "; ")));
}

absl::Status Placer::Run() {
  RETURN_IF_ERROR(ParseDevices());
  RETURN_IF_ERROR(BuildGroups());
  AddWholeGraphMembers();
  std::vector<int> chosen(groups_.size(), -1);
  std::vector<size_t> movable;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    if (IsMovableSource(groups_[gi])) {
      movable.push_back(gi);
      continue;
    }
    ASSIGN_OR_RETURN(chosen[gi], Choose(groups_[gi]));
  }
  for (size_t gi : movable) {
    const Node* n = groups_[gi].members[0];
    int common = -1;
    bool one_device = true;
    for (const Edge* e : n->out_edges()) {
      int d = chosen[colocation_.group_of[e->dst->id()]];
      if (d < 0 || (common >= 0 && d != common)) one_device = false;
      common = d;
    }
    if (one_device && common >= 0 && HasKernels(groups_[gi], common, nullptr)) {
      chosen[gi] = common;
    } else {
      ASSIGN_OR_RETURN(chosen[gi], Choose(groups_[gi]));
    }
  }
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    for (Node* m : groups_[gi].members) m->set_assigned_device(devices_[chosen[gi]]->name());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PlaceGraph(Graph* graph, absl::Span<Device* const> devices,
                        const KernelRegistry& kernels, const PlacerOptions& options) {
  return Placer(graph, devices, kernels, options).Run();
}

}  // namespace sluice
