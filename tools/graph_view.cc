// Collapsing name scopes into boxes. See graph_view.h.
#include "tools/graph_view.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace sluice {
namespace {

// "a/b/c" -> "a", "a/b" (the proper prefixes, shortest first).
std::vector<std::string> ScopesOf(absl::string_view name) {
  std::vector<std::string> scopes;
  for (size_t slash = name.find('/'); slash != absl::string_view::npos;
       slash = name.find('/', slash + 1)) {
    scopes.emplace_back(name.substr(0, slash));
  }
  return scopes;
}

// The shortest prefix of `name` that is not an opened scope.
std::string BoxNameOf(absl::string_view name, const absl::flat_hash_set<std::string>& opened) {
  for (const std::string& scope : ScopesOf(name)) {
    if (!opened.contains(scope)) return scope;
  }
  return std::string(name);
}

absl::Status UnknownScope(absl::string_view scope,
                          const absl::flat_hash_set<std::string>& all_scopes) {
  std::vector<std::string> top;
  for (const std::string& s : all_scopes) {
    if (s.find('/') == std::string::npos) top.push_back(s);
  }
  std::sort(top.begin(), top.end());
  constexpr size_t kShown = 8;
  std::string shown = absl::StrJoin(top.begin(), top.begin() + std::min(kShown, top.size()), ", ");
  if (top.size() > kShown) absl::StrAppend(&shown, ", ...");
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot expand '", scope, "': the graph has no such name scope",
      top.empty() ? " (it has no name scopes)" : absl::StrCat(" (top-level: ", shown, ")")));
}

}  // namespace

absl::StatusOr<GraphView> BuildGraphView(const Graph& graph,
                                         absl::Span<const std::string> device_of,
                                         const GraphViewOptions& options) {
  const std::vector<Node*> nodes = graph.nodes();
  absl::flat_hash_set<std::string> all_scopes;
  for (const Node* n : nodes) {
    for (std::string& s : ScopesOf(n->name())) all_scopes.insert(std::move(s));
  }
  absl::flat_hash_set<std::string> opened;
  for (const std::string& e : options.expand) {
    std::string scope(absl::StripSuffix(e, "/"));
    if (!all_scopes.contains(scope)) return UnknownScope(e, all_scopes);
    for (std::string& parent : ScopesOf(scope)) opened.insert(std::move(parent));
    opened.insert(scope);
  }
  const absl::flat_hash_set<std::string> singular(options.singular_ops.begin(),
                                                  options.singular_ops.end());

  GraphView view;
  view.box_of.assign(graph.num_node_ids(), -1);
  absl::flat_hash_map<std::pair<std::string, std::string>, int> box_index;  // (name, device)
  absl::flat_hash_map<std::string, int> scope_size;
  for (const Node* n : nodes) {
    std::string name = singular.contains(n->op()) ? n->name() : BoxNameOf(n->name(), opened);
    const std::string& device = device_of[n->id()];
    auto [it, inserted] = box_index.try_emplace(std::make_pair(name, device), 0);
    if (inserted) {
      it->second = static_cast<int>(view.boxes.size());
      view.boxes.push_back(ViewBox{name, device});
    }
    ViewBox& box = view.boxes[it->second];
    box.node_ids.push_back(n->id());
    if (n->name() != name) box.collapsed = true;
    view.box_of[n->id()] = it->second;
    ++scope_size[name];
  }
  for (ViewBox& box : view.boxes) {
    box.scope_size = scope_size[box.name];
    if (box.scope_size > 1) box.collapsed = true;
    absl::flat_hash_map<std::string, int> counts;
    for (int id : box.node_ids) ++counts[graph.node(id)->op()];
    box.op_counts.assign(counts.begin(), counts.end());
    std::sort(box.op_counts.begin(), box.op_counts.end(), [](const auto& a, const auto& b) {
      return std::tie(b.second, a.first) < std::tie(a.second, b.first);
    });
  }

  // Merged edges, in a deterministic order.
  std::map<std::tuple<int, int, bool>, int> merged;
  for (const Node* n : nodes) {
    for (const Edge* e : n->out_edges()) {
      int src = view.box_of[e->src->id()], dst = view.box_of[e->dst->id()];
      if (src == dst) continue;
      if (!e->IsControl() && view.boxes[src].device != view.boxes[dst].device) continue;
      ++merged[{src, dst, e->IsControl()}];
    }
  }
  for (const auto& [key, count] : merged) {
    auto [src, dst, control] = key;
    // Order is already implied by a data edge between the same boxes.
    if (control && merged.contains({src, dst, false})) continue;
    view.edges.push_back(ViewEdge{src, dst, control, count});
  }
  return view;
}

}  // namespace sluice
