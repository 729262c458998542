// Graph algorithms: Kahn's topological sort (smallest ready id first) and
// backward reachability. See algorithm.h.
#include "graph/algorithm.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice {
namespace {

// Finds one cycle among the nodes marked `pending` (every pending node has at
// least one in-edge from another pending node, which is what remains after
// Kahn's algorithm stalls) and describes it "a -> b -> a" in edge direction.
std::string DescribeCycle(const Graph& graph, const std::vector<bool>& pending) {
  Node* start = nullptr;
  for (int id = 0; id < graph.num_node_ids(); ++id) {
    if (pending[id] && graph.node(id) != nullptr) {
      start = graph.node(id);
      break;
    }
  }
  if (start == nullptr) return "";

  // Walk backwards through pending producers until a node repeats.
  std::vector<int> position(graph.num_node_ids(), -1);
  std::vector<Node*> path;
  Node* cur = start;
  while (position[cur->id()] < 0) {
    position[cur->id()] = static_cast<int>(path.size());
    path.push_back(cur);
    Node* pred = nullptr;
    for (const Edge* e : cur->in_edges()) {
      if (!pending[e->src->id()] || e->src->IsNextIteration()) continue;
      if (pred == nullptr || e->src->id() < pred->id()) pred = e->src;
    }
    if (pred == nullptr) return "";  // cannot happen when `pending` stalled
    cur = pred;
  }
  // path[position[cur]..] is the cycle, each element fed by the next one.
  std::vector<Node*> cycle(path.begin() + position[cur->id()], path.end());
  std::reverse(cycle.begin(), cycle.end());  // now in edge direction
  // Start at the smallest id so the message is stable.
  auto smallest = std::min_element(cycle.begin(), cycle.end(),
                                   [](Node* a, Node* b) { return a->id() < b->id(); });
  std::rotate(cycle.begin(), smallest, cycle.end());
  std::vector<std::string> names;
  names.reserve(cycle.size() + 1);
  for (Node* n : cycle) names.push_back(n->name());
  names.push_back(cycle.front()->name());
  return absl::StrJoin(names, " -> ");
}

}  // namespace

absl::StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& graph) {
  const int n = graph.num_node_ids();
  std::vector<int> pending_inputs(n, 0);
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  int live = 0;
  for (int id = 0; id < n; ++id) {
    Node* node = graph.node(id);
    if (node == nullptr) continue;
    ++live;
    for (const Edge* e : node->in_edges()) {
      if (!e->src->IsNextIteration()) ++pending_inputs[id];
    }
    if (pending_inputs[id] == 0) ready.push(id);
  }

  std::vector<Node*> order;
  order.reserve(live);
  while (!ready.empty()) {
    Node* node = graph.node(ready.top());
    ready.pop();
    order.push_back(node);
    if (node->IsNextIteration()) continue;  // back edges
    for (const Edge* e : node->out_edges()) {
      if (--pending_inputs[e->dst->id()] == 0) ready.push(e->dst->id());
    }
  }

  if (static_cast<int>(order.size()) < live) {
    std::vector<bool> pending(n, false);
    for (int id = 0; id < n; ++id) {
      pending[id] = graph.node(id) != nullptr && pending_inputs[id] > 0;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("graph has a cycle: ", DescribeCycle(graph, pending)));
  }
  return order;
}

std::vector<bool> ReachableBackward(const Graph& graph, absl::Span<Node* const> roots) {
  std::vector<bool> reached(graph.num_node_ids(), false);
  std::vector<Node*> stack;
  for (Node* root : roots) {
    if (root != nullptr && !reached[root->id()]) {
      reached[root->id()] = true;
      stack.push_back(root);
    }
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const Edge* e : node->in_edges()) {
      if (!reached[e->src->id()]) {
        reached[e->src->id()] = true;
        stack.push_back(e->src);
      }
    }
  }
  return reached;
}

}  // namespace sluice
