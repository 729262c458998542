// Test helpers for functions in graph/: a small op registry (the ops a
// function body, its instantiation and its inlining need, with TensorFlow's
// names and attrs but no kernels) and FunctionDefs from text.
//
//   OpRegistry ops;
//   ASSERT_TRUE(RegisterFunctionTestOps(&ops).ok());
//   FunctionDef f = ParseFunctionDefOrDie(R"pb(signature { name: "f" ... })pb");
//
// Thread-compatible. Test-only.
#ifndef SLUICE_GRAPH_FUNCTION_TESTUTIL_H_
#define SLUICE_GRAPH_FUNCTION_TESTUTIL_H_

#include <string>

#include "absl/status/status.h"
#include "graph/graph.h"
#include "graph/op_registry.h"

namespace sluice {

// _Arg, _Retval, Identity, IdentityN, NoOp, Placeholder, Const, Add, Mul,
// Split (num_split outputs), AddN, OnesLike, and PartitionedCall (f: func).
// Without _Arg and _Retval when `with_frame_ops` is false (a registry that
// has runtime/frame_ops.h's).
absl::Status RegisterFunctionTestOps(OpRegistry* ops, bool with_frame_ops = true);

// Aborts the test binary on a parse error (tests only).
FunctionDef ParseFunctionDefOrDie(const std::string& text);
GraphDef ParseGraphDefOrDie(const std::string& text);

}  // namespace sluice

#endif  // SLUICE_GRAPH_FUNCTION_TESTUTIL_H_
