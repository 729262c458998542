// InstantiateFunction: one function of a graph's library, expanded for one
// set of attrs (its type parameters) into plain nodes, as TensorFlow's
// InstantiateFunction does: an _Arg node per argument tensor, the function's
// nodes with their attr placeholders ($T) bound, a _Retval node per result.
//
//   NameAttrList f;  f.set_name("scale");  (*f.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
//   ASSIGN_OR_RETURN(FunctionInstantiation inst, InstantiateFunction(graph, f));
//   // inst.nodes: _Arg "x" (index 0), the body, _Retval "y_RetVal" (index 0)
//   ASSIGN_OR_RETURN(FunctionBody body, InstantiateFunctionBody(graph, f));
//   // body.graph: those nodes as a Graph, ready for an Executor
//
// Inside a FunctionDef a node names its inputs TensorFlow's way: "x" (every
// tensor of argument x), "x:2" (its third), "node:out" (every tensor of the
// output arg `out` of `node`), "node:out:1", and "^node" or "^x" for control
// inputs. An argument that is a list of n > 1 tensors gets n _Arg nodes
// "x_0".."x_{n-1}"; a result list gets "y_RetVal_0".. likewise. An attr of a
// body node that is a placeholder ("$T", AttrValue.placeholder) takes the
// call's value of that attr, also inside func attrs. Attrs of the signature
// the call leaves out take their defaults.
//
// Errors name the function and, inside it, the node: NotFound for a function
// the library does not have or a node of an unknown op; InvalidArgument for
// an attr the call does not set (or sets to a bad value), an input that
// names nothing or has the wrong type or count, a placeholder the call does
// not bind, a ret of the wrong type.
//
// Thread-safety: reads `library` only (const use).
#ifndef SLUICE_GRAPH_FUNCTION_INSTANTIATE_H_
#define SLUICE_GRAPH_FUNCTION_INSTANTIATE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace sluice {

inline constexpr char kFunctionArgOp[] = "_Arg";        // attrs T, index
inline constexpr char kFunctionRetvalOp[] = "_Retval";  // attrs T, index

struct FunctionInstantiation {
  std::string function;  // its name
  // _Arg nodes first (index order), then the function's nodes, then the
  // _Retval nodes; inputs written "node", "node:3" and "^node".
  std::vector<NodeDef> nodes;
  std::vector<DataType> arg_types;
  std::vector<DataType> ret_types;
  // The nodes the function's control outputs name (they run before a call
  // counts as done, even when no result depends on them).
  std::vector<std::string> control_ret_nodes;
};

// `library` gives the functions (its library) and ops (its registry and
// library); `func` names the function and gives its attrs.
absl::StatusOr<FunctionInstantiation> InstantiateFunction(const Graph& library,
                                                          const NameAttrList& func);

// An instantiation as a graph of its own, over `library`'s registry and
// with a copy of its library (so that calls inside can be inlined or run).
// The registry must have _Arg and _Retval (runtime/frame_ops.h).
struct FunctionBody {
  std::unique_ptr<Graph> graph;
  std::vector<DataType> arg_types;
  std::vector<DataType> ret_types;
};
absl::StatusOr<FunctionBody> InstantiateFunctionBody(const Graph& library,
                                                     const NameAttrList& func);

// The tensor types of one argument of `op_def` for a node with `attrs`
// (a list for "N * T" and list(type) arguments).
absl::StatusOr<std::vector<DataType>> ArgTypes(const ArgDef& arg, const AttrMap& attrs);

}  // namespace sluice

#endif  // SLUICE_GRAPH_FUNCTION_INSTANTIATE_H_
