#include "placement/colocation.h"

#include <numeric>

namespace sluice {
namespace {

// Union-find over node ids.
class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

}  // namespace

ColocationGroups ComputeColocationGroups(const Graph& graph) {
  UnionFind uf(graph.num_node_ids());
  for (const Node* n : graph.nodes()) {
    for (const std::string& other : n->ColocationNames()) {
      if (const Node* o = graph.FindNode(other)) uf.Union(n->id(), o->id());
    }
    for (const Edge* e : n->in_edges()) {
      if (e->IsControl()) continue;
      const bool ref_in = IsRefType(n->input_type(e->dst_input));
      const bool reads_var = n->op() == "Identity" && IsRefType(e->src->output_type(e->src_output));
      // A resource lives in its device's resource manager: whoever takes
      // its handle runs there (TensorFlow's placer joins them too).
      const bool resource_in = n->input_type(e->dst_input) == DT_RESOURCE;
      if (ref_in || reads_var || resource_in) uf.Union(n->id(), e->src->id());
    }
  }
  ColocationGroups out;
  out.group_of.assign(graph.num_node_ids(), -1);
  std::vector<int> index_of_root(graph.num_node_ids(), -1);
  for (int id = 0; id < graph.num_node_ids(); ++id) {
    const Node* n = graph.node(id);
    if (n == nullptr) continue;
    const int root = uf.Find(id);
    if (index_of_root[root] < 0) {
      index_of_root[root] = static_cast<int>(out.members.size());
      out.members.emplace_back();
    }
    out.group_of[id] = index_of_root[root];
    out.members[index_of_root[root]].push_back(id);
  }
  return out;
}

}  // namespace sluice
