// DotGraph: a Graphviz graph built in memory with cgraph and laid out and
// rendered with gvc, in this process (no `dot` binary is run).
//
//   DotGraph g("placement");
//   g.Set(g.root(), "rankdir", "TB");
//   DotGraph::Graph* cpu0 = g.AddSubgraph(g.root(), "cluster_0");
//   g.Set(cpu0, "label", "/device:CPU:0");
//   DotGraph::Node* a = g.AddNode(cpu0, "a");
//   DotGraph::Node* b = g.AddNode(g.root(), "b");
//   g.Set(g.AddEdge(a, b), "label", "float [2]");
//   g.SetHtml(b, "label", "<b>bold</b>");
//   std::string source = g.ToSource();                     // "digraph placement {..."
//   ASSIGN_OR_RETURN(std::string svg, g.Render("svg"));    // laid out by "dot"
//
// Attribute values are copied. Errors: Render answers Internal with
// Graphviz's own messages when the layout or the output format is not
// available (e.g. plugins missing: libgvplugin_dot_layout, libgvplugin_core,
// libgvplugin_pango for PNG) or rendering fails.
//
// Thread-safe across instances: every call into Graphviz takes one
// process-wide lock, since Graphviz keeps global state. One instance is
// thread-compatible. The handles are owned by the DotGraph and valid for its
// lifetime.
#ifndef SLUICE_TOOLS_DOT_GRAPH_H_
#define SLUICE_TOOLS_DOT_GRAPH_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct Agraph_s;
struct Agnode_s;
struct Agedge_s;

namespace sluice {

class DotGraph {
 public:
  using Graph = ::Agraph_s;  // the root graph, a subgraph or a cluster
  using Node = ::Agnode_s;
  using Edge = ::Agedge_s;

  // A directed graph named `name`.
  explicit DotGraph(absl::string_view name);
  ~DotGraph();
  DotGraph(const DotGraph&) = delete;
  DotGraph& operator=(const DotGraph&) = delete;

  Graph* root() const { return root_; }
  // Creates (or finds) a subgraph; names starting "cluster" are drawn as boxes.
  Graph* AddSubgraph(Graph* parent, absl::string_view name);
  // Creates (or finds) a node, a member of `parent` and its ancestors.
  Node* AddNode(Graph* parent, absl::string_view name);
  // Always a new edge, in the root graph.
  Edge* AddEdge(Node* from, Node* to);

  // Sets an attribute of a graph, node or edge to a plain string (Graphviz
  // escapes like "\n" keep their meaning) or to an HTML-like label.
  void Set(Graph* g, absl::string_view key, absl::string_view value);
  void Set(Node* n, absl::string_view key, absl::string_view value);
  void Set(Edge* e, absl::string_view key, absl::string_view value);
  void SetHtml(Node* n, absl::string_view key, absl::string_view html);
  // Defaults for every node / edge that does not set the attribute.
  void SetNodeDefault(absl::string_view key, absl::string_view value);
  void SetEdgeDefault(absl::string_view key, absl::string_view value);

  // The graph in the dot language, without layout.
  std::string ToSource() const;
  // Lays the graph out with the "dot" engine and renders it in `format`
  // ("svg", "png", ...). See the errors above.
  // The layout leaves its attributes (bb, pos) behind for later ToSource calls.
  absl::StatusOr<std::string> Render(absl::string_view format);

 private:
  void SetAttr(void* object, absl::string_view key, absl::string_view value);

  Graph* root_;
};

}  // namespace sluice

#endif  // SLUICE_TOOLS_DOT_GRAPH_H_
