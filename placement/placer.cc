#include "placement/placer.h"

#include <map>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "placement/device_name.h"

namespace sluice {
namespace {

// Union-find over node ids.
class Groups {
 public:
  explicit Groups(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

struct Group {
  std::vector<Node*> members;
  DeviceName request;          // merged requests of the members
  Node* request_source = nullptr;  // a member whose request is in `request`
};

}  // namespace

absl::Status PlaceGraph(Graph* graph, absl::Span<Device* const> devices,
                        const KernelRegistry& kernels, const PlacerOptions& options) {
  if (devices.empty()) return absl::FailedPreconditionError("no devices to place on");
  std::vector<DeviceName> device_names;
  for (Device* d : devices) {
    ASSIGN_OR_RETURN(DeviceName n, DeviceName::Parse(d->name()));
    device_names.push_back(std::move(n));
  }
  Groups uf(graph->num_node_ids());
  for (Node* n : graph->nodes()) {
    for (const std::string& other : n->ColocationNames()) {
      if (Node* o = graph->FindNode(other)) uf.Union(n->id(), o->id());
    }
    for (const Edge* e : n->in_edges()) {
      if (!e->IsControl() && IsRefType(n->input_type(e->dst_input))) {
        uf.Union(n->id(), e->src->id());
      }
    }
  }
  std::map<int, Group> groups;
  for (Node* n : graph->nodes()) {
    Group& g = groups[uf.Find(n->id())];
    g.members.push_back(n);
    const std::string& want =
        n->assigned_device().empty() ? n->requested_device() : n->assigned_device();
    if (want.empty()) continue;
    absl::StatusOr<DeviceName> req = DeviceName::Parse(want);
    if (!req.ok()) return AddContext(req.status(), absl::StrCat("node ", n->DebugName()));
    if (!g.request.IsCompatibleWith(*req)) {
      if (options.allow_soft_placement) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot place node ", n->DebugName(), " on '", want, "': it is colocated with ",
          g.request_source->DebugName(), ", which asks for '",
          g.request_source->requested_device(), "'"));
    }
    auto merge = [](auto& into, const auto& from) {
      if (!into) into = from;
    };
    merge(g.request.job, req->job);
    merge(g.request.replica, req->replica);
    merge(g.request.task, req->task);
    merge(g.request.type, req->type);
    merge(g.request.id, req->id);
    if (g.request_source == nullptr) g.request_source = n;
  }
  for (auto& [root, g] : groups) {
    std::vector<std::string> reasons;
    auto fits = [&](size_t d, bool honour_request) {
      if (honour_request && !g.request.Matches(device_names[d])) return false;
      for (Node* m : g.members) {
        if (kernels.FindKernelDef(*m, devices[d]->device_type()) == nullptr) {
          if (honour_request) {
            reasons.push_back(absl::StrCat(devices[d]->name(), " has no ",
                                           devices[d]->device_type(), " kernel for ",
                                           m->DebugName()));
          }
          return false;
        }
      }
      return true;
    };
    int chosen = -1;
    for (size_t d = 0; d < devices.size() && chosen < 0; ++d) {
      if (fits(d, true)) chosen = static_cast<int>(d);
    }
    if (chosen < 0 && options.allow_soft_placement) {
      for (size_t d = 0; d < devices.size() && chosen < 0; ++d) {
        if (fits(d, false)) chosen = static_cast<int>(d);
      }
    }
    if (chosen < 0) {
      Node* who = g.request_source ? g.request_source : g.members[0];
      std::vector<std::string> names;
      for (Device* d : devices) names.push_back(d->name());
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot place node ", who->DebugName(),
          who->requested_device().empty() ? ""
                                          : absl::StrCat(" on '", who->requested_device(), "'"),
          g.members.size() > 1 ? absl::StrCat(" with its ", g.members.size() - 1,
                                              " colocated nodes")
                               : "",
          ": ",
          reasons.empty() ? absl::StrCat("no device matches; available: ",
                                         absl::StrJoin(names, ", "))
                          : absl::StrJoin(reasons, "; ")));
    }
    for (Node* m : g.members) m->set_assigned_device(devices[chosen]->name());
  }
  return absl::OkStatus();
}

}  // namespace sluice
