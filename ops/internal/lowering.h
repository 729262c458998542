// Building a lowering (OpDef::lower_fn): the ops a node is replaced by, in
// its graph. BeginLowering takes the node's inputs (gated by its control
// inputs, so nothing the lowering adds runs before them, in their frame)
// and a scope on the node's device under its name; FinishLowering turns the
// node into the IdentityN of the results (a NoOp without results), so that
// consumers and fetches by name keep working, and returns the nodes added.
//
//   absl::StatusOr<std::vector<Node*>> LowerFoo(Graph* graph, Node* node) {
//     ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
//     Output y = ops::Neg(l.scope, l.inputs[0]);
//     return FinishLowering(l, {y}, /*done=*/nullptr);
//   }
//
// Errors: InvalidArgument for an input not connected; the scope's errors.
// Thread-compatible: mutates the graph.
#ifndef SLUICE_OPS_INTERNAL_LOWERING_H_
#define SLUICE_OPS_INTERNAL_LOWERING_H_

#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/scope.h"

namespace sluice {

struct Lowering {
  Graph* graph = nullptr;
  Node* node = nullptr;
  int first_id = 0;  // nodes from here on are the lowering's
  Scope scope;
  std::vector<Output> inputs;
};

absl::StatusOr<Lowering> BeginLowering(Graph* graph, Node* node);

// The node waits for `done` too when it is given.
absl::StatusOr<std::vector<Node*>> FinishLowering(Lowering& l, const std::vector<Output>& results,
                                                  Node* done);

}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_LOWERING_H_
