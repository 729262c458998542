// ClientGraph: the part of a session's graph that one Run signature needs,
// with feeds and fetches rewritten into the runtime's _Arg / _Retval nodes.
// The local session and the distributed master both start every new
// signature here, then place and partition the result.
//
//   ASSIGN_OR_RETURN(ClientGraph cg,
//                    BuildClientGraph(graph, {"x:0"}, {"loss:0"}, {"train"}));
//   // cg.graph: only what loss:0 and train need; x:0's consumers read _Arg 0
//   RETURN_IF_ERROR(CheckFeeds(cg, {"x:0"}, {x_batch}));
//
// Only the nodes the fetches and targets need are kept; a fed tensor cuts
// its producer out (a fed Placeholder's control edges leave its _Arg). Each
// _Arg asks for the fed node's requested device; each _Retval is unplaced
// (the placer colocates nothing with it; it follows its input's default).
//
// Errors: InvalidArgument for a feed, fetch or target naming no node or
// output, or a tensor fed twice. Thread-compatible: reads `graph` only.
#ifndef SLUICE_RUNTIME_CLIENT_GRAPH_H_
#define SLUICE_RUNTIME_CLIENT_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "runtime/tensor.h"

namespace sluice {

struct ClientGraph {
  std::unique_ptr<Graph> graph;
  // Per feed, in order: what the fed output accepts.
  std::vector<DataType> feed_types;
  std::vector<TensorShape> feed_shapes;
};

absl::StatusOr<ClientGraph> BuildClientGraph(const Graph& graph,
                                             const std::vector<std::string>& feeds,
                                             const std::vector<std::string>& fetches,
                                             const std::vector<std::string>& targets);

// The key under which a session caches what it built for a run signature.
std::string RunSignatureKey(const std::vector<std::string>& feeds,
                            const std::vector<std::string>& fetches,
                            const std::vector<std::string>& targets);

// `graph` with the nodes of `extension` added (Session::Extend), as a new
// graph: an extension that does not import leaves `graph` as it was.
absl::StatusOr<std::unique_ptr<Graph>> ExtendGraph(const Graph& graph, const GraphDef& extension);

// InvalidArgument naming the feed when a value's dtype or shape does not fit.
absl::Status CheckFeed(const ClientGraph& client_graph, int index, const std::string& name,
                       const Tensor& value);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_CLIENT_GRAPH_H_
