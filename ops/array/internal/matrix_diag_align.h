// The alignment of a MatrixDiag* node's band, shared by its kernel and its
// gradient: the V3 ops' `align` attr (RIGHT_LEFT when absent, its default);
// the V1 and V2 ops have none and align LEFT_LEFT.
#ifndef SLUICE_OPS_ARRAY_INTERNAL_MATRIX_DIAG_ALIGN_H_
#define SLUICE_OPS_ARRAY_INTERNAL_MATRIX_DIAG_ALIGN_H_

#include <string>

#include "absl/strings/match.h"
#include "graph/graph.h"

namespace sluice {
namespace internal {

inline std::string AlignOf(const Node& node) {
  absl::StatusOr<std::string> align = node.GetAttr<std::string>("align");
  if (align.ok()) return *align;
  return absl::EndsWith(node.op(), "V3") ? "RIGHT_LEFT" : "LEFT_LEFT";
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_INTERNAL_MATRIX_DIAG_ALIGN_H_
