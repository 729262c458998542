// Function inlining: a call node (a node whose op is a library function, or
// an op that calls the function of one of its func attrs, such as
// PartitionedCall) replaced by the body of the function it calls,
// instantiated for that call (graph/function_instantiate.h). Sessions inline
// every call before placement (session/compile_signature.h), so that each
// call site's body is placed on its own (by default on the call's device),
// and AddGradients inlines the calls between its ys and xs, so that
// gradients flow through function bodies.
//
//   ASSIGN_OR_RETURN(int inlined, InlineFunctionCalls(&graph));
//
// What one inlined call becomes, for a call node "c" of function f:
//   - each node n of f's body as "c/n" (a fresh name if taken), asking for
//     its own device, else the call's; colocation with body nodes follows
//     the renaming;
//   - each argument tensor as an Identity "c/<arg>" of the call's input;
//   - the call's control inputs as control inputs of those Identities, and
//     a NoOp "c/input_control_node" after them that the body's nodes without
//     inputs wait for (so that nothing of the body runs before the call
//     could have, and the body sits in the call's while-loop frame);
//   - the call node itself, kept (its name, id, out-edges and every Output
//     of it stay valid) but turned into an IdentityN of the results (a NoOp
//     when there are none) that also waits for the function's control
//     outputs and for every body node nothing else waits for, so that a
//     control dependency on the call means the whole function ran.
//   - except for a call node with attr kBypassedCallAttr set (a lowering
//     makes such calls: nothing else holds them): it is removed, its
//     consumers read the function's results directly and what waited for
//     it waits for everything the gathering would have (no IdentityN sits
//     between a loop's condition and its LoopCond); its body reads the
//     call's inputs directly (no Identity per argument), and the body's
//     nodes without inputs wait for the call's control inputs.
// The registry needs Identity, IdentityN and NoOp (ops/array).
//
// InlineFunctionCalls also lowers the nodes whose op has a lowering
// (OpDef::lower_fn: TensorFlow's functional If, Case and While, which
// become Switch/Merge and Enter/Exit control flow around calls of their
// branches, condition and body: ops/functional), and inlines the calls that
// leaves, so that what it returns has neither calls nor such nodes.
//
// Errors name the call node and the function: those of instantiation, a
// call whose input or output types differ from the function's, an input
// not connected, and FailedPrecondition for calls nested deeper than
// max_depth (a function that calls itself).
//
// Thread-compatible: mutates `graph`.
#ifndef SLUICE_GRAPH_FUNCTION_INLINE_H_
#define SLUICE_GRAPH_FUNCTION_INLINE_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace sluice {

inline constexpr char kBypassedCallAttr[] = "_bypassed_call";

// The node calls a function (OpDef::is_function or call_function_attr).
bool IsFunctionCall(const Node& node);

// The function a call node calls and the attrs to instantiate it with: the
// node's op and its attrs (those not starting with "_"), or the func attr
// the op names.
absl::StatusOr<NameAttrList> CalledFunction(const Node& call);

// Inlines one call (see above) and returns the nodes it added.
absl::StatusOr<std::vector<Node*>> InlineFunctionCall(Graph* graph, Node* call);

// The node's op has a lowering (OpDef::lower_fn).
bool HasLowering(const Node& node);

// Lowers one such node and returns the nodes it added (errors name the
// node); InlineFunctionCall for a call.
absl::StatusOr<std::vector<Node*>> LowerOrInline(Graph* graph, Node* node);

struct InlineOptions {
  // Calls inside inlined bodies are inlined too, down to this depth.
  int max_depth = 32;
  // When set, only calls (and nodes to lower) it accepts, and what those
  // bring in.
  std::function<bool(const Node&)> filter;
};
// Inlines every call of `graph`, and the calls their bodies hold, lowering
// the nodes that have a lowering on the way; returns how many calls it
// inlined and nodes it lowered.
absl::StatusOr<int> InlineFunctionCalls(Graph* graph, const InlineOptions& options = {});

}  // namespace sluice

#endif  // SLUICE_GRAPH_FUNCTION_INLINE_H_
