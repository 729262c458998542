// Helpers shared by the gradient functions (ops/<family>/*_grad.cc): the tensors a
// node reads and makes, as Outputs to build on.
//
//   Output x = internal::InputOf(node, 0);    // invalid when unconnected
//   Output y = internal::OutputOf(node, 0);
//
// Thread-safety: pure functions. Internal to ops/.
#ifndef SLUICE_OPS_INTERNAL_GRAD_UTIL_H_
#define SLUICE_OPS_INTERNAL_GRAD_UTIL_H_

#include "graph/graph.h"
#include "graph/scope.h"

namespace sluice {
namespace internal {

// The tensor on data input i of `node`; invalid when the input is unconnected.
inline Output InputOf(const Node& node, int i) {
  const Edge* e = node.input_edge(i);
  return e == nullptr ? Output() : Output(e->src, e->src_output);
}

// Output i of `node` itself (Output holds a mutable pointer; gradients only
// read through it).
inline Output OutputOf(const Node& node, int i = 0) {
  return Output(const_cast<Node*>(&node), i);
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_GRAD_UTIL_H_
