// Freezing: a GraphDef for inference with every variable replaced by a Const
// holding its current value in a session.
//
//   ASSIGN_OR_RETURN(GraphDef frozen,
//                    FreezeGraph(session.get(), *BuiltinOps(), train_graph_def,
//                                {"prediction", "probs"}));
//   RETURN_IF_ERROR(WriteGraphDefFile(frozen, "mlp.pb", GraphFileFormat::kBinary));
//
// Only the nodes the outputs need are kept. A variable becomes a Const of the
// same name, so consumers are unchanged; nodes that take a variable by
// reference (Assign, Apply*: ops with a ref input in `ops`) cannot be kept
// and are an error if needed. Variables are the ops `ops` marks as such.
//
// Thread-safe as far as Session::Run is; the result is a new GraphDef.
#ifndef SLUICE_RUNTIME_FREEZE_GRAPH_H_
#define SLUICE_RUNTIME_FREEZE_GRAPH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/op_registry.h"
#include "runtime/session.h"

namespace sluice {

absl::StatusOr<GraphDef> FreezeGraph(Session* session, const OpRegistry& ops,
                                     const GraphDef& graph,
                                     const std::vector<std::string>& outputs);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_FREEZE_GRAPH_H_
