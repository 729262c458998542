// GraphDef files and the Graph <-> GraphDef conversion.
//
//   ASSIGN_OR_RETURN(GraphDef def, ReadGraphDefFile("model.pb"));  // binary or text
//   Graph graph(&registry);
//   RETURN_IF_ERROR(ImportGraphDef(def, &graph));
//   RETURN_IF_ERROR(WriteGraphDefFile(def, "model.pbtxt", GraphFileFormat::kText));
//
// ImportGraphDef validates against the graph's registry; every error names
// the node: unknown op, dangling input, type mismatch, bad or missing attr,
// duplicate name, and cycles (naming the nodes on one). Thread-compatible.
#ifndef SLUICE_GRAPH_GRAPH_DEF_IO_H_
#define SLUICE_GRAPH_GRAPH_DEF_IO_H_

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace sluice {

enum class GraphFileFormat { kBinary, kText };

// Parses bytes as a GraphDef, binary or text (detected: text when the bytes
// parse as text format and not as binary). InvalidArgument when neither.
absl::StatusOr<GraphDef> ParseGraphDef(absl::string_view bytes);
// NotFound / PermissionDenied for unreadable files; parse errors name the path.
absl::StatusOr<GraphDef> ReadGraphDefFile(const std::string& path);
absl::Status WriteGraphDefFile(const GraphDef& def, const std::string& path,
                               GraphFileFormat format);

// Adds every node of `def` to `graph` (which may already hold nodes), connects
// the edges and infers shapes in topological order. Ops whose names start
// with "_" are internal (the runtime inserts them) and refused, unless
// `options.allow_internal_ops` (for partition graphs the runtime wrote) or
// their OpDef is allowed_in_graph_files (fused kernels such as _FusedMatMul).
struct ImportOptions {
  bool allow_internal_ops = false;
};
absl::Status ImportGraphDef(const GraphDef& def, Graph* graph, const ImportOptions& options = {});

// Keeps only the nodes of `def` that the named fetches and targets need
// (transitively, through data and control inputs). The names are tensor or
// node names; NotFound for one that is not in the graph.
absl::StatusOr<GraphDef> PruneGraphDef(const GraphDef& def,
                                       absl::Span<const std::string> outputs);

}  // namespace sluice

#endif  // SLUICE_GRAPH_GRAPH_DEF_IO_H_
