// DefineFunction: a library function written with the Scope API, the way
// the tf.data builder and examples define map/filter functions in C++. The
// body is built in a graph of its own, from one Output per argument; the
// FunctionDef (TensorFlow's function.proto, inputs named "node:out_arg:i")
// goes into the scope's graph's library, and the result names it.
//
//   ASSIGN_OR_RETURN(NameAttrList parse_fn, DefineFunction(
//       root, "parse_fn", {DT_STRING},
//       [](Scope& s, std::vector<Output> args) -> absl::StatusOr<std::vector<Output>> {
//         return std::vector<Output>{ops::StringToNumber(s, args[0], DT_FLOAT)};
//       }));
//   // a call node:  ops::CallFunction(root, parse_fn, {x})  (ops/functional)
//   // a func attr:  b.Attr("f", parse_fn)                   (MapDataset, ...)
//
// The function is stateful when a node of its body is. Its body may call
// functions already in the library (they are visible inside), but may not
// use tensors of the outer graph: pass them as arguments.
//
// Errors (InvalidArgument unless the body says otherwise), with "defining
// function 'name'": the body's own error or its scope's first error, an
// invalid result, a result or a node input from the outer graph, and
// AddFunction's (a name taken by another function or by an op).
//
// Thread-compatible: adds to the scope's graph.
#ifndef SLUICE_GRAPH_FUNCTION_BUILDER_H_
#define SLUICE_GRAPH_FUNCTION_BUILDER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/scope.h"

namespace sluice {

// Called once with the body's scope and one Output per argument. A lambda
// taking (const Scope&, absl::Span<const Output>) fits as well.
using FunctionBodyFn =
    std::function<absl::StatusOr<std::vector<Output>>(Scope& scope, std::vector<Output> args)>;

struct DefineFunctionOptions {
  // Argument names (default "arg0", "arg1", ...) and result names (default
  // "output0", ...), as the signature shows them.
  std::vector<std::string> arg_names;
  std::vector<std::string> ret_names;
};

absl::StatusOr<NameAttrList> DefineFunction(const Scope& scope, absl::string_view name,
                                            absl::Span<const DataType> arg_types,
                                            const FunctionBodyFn& body,
                                            const DefineFunctionOptions& options = {});

// The FunctionDef of a graph built as a function body: `args` are its _Arg
// nodes' outputs in order, `rets` its results (a body built by hand).
absl::StatusOr<FunctionDef> GraphToFunctionDef(const Graph& body, absl::string_view name,
                                               absl::Span<const Output> args,
                                               absl::Span<const Output> rets,
                                               const DefineFunctionOptions& options = {});

}  // namespace sluice

#endif  // SLUICE_GRAPH_FUNCTION_BUILDER_H_
