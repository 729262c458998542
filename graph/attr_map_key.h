// A key for a set of attrs: every attr's deterministic bytes, in name
// order, each after its name and length, so equal maps give equal keys.
// Function instantiations are cached by it, and a stateful node's kernel
// is reused only for a node whose key is the same.
//
//   std::string key = absl::StrCat(func.name(), AttrMapKey(func.attr()));
//
// Thread-safe: a pure function.
#ifndef SLUICE_GRAPH_ATTR_MAP_KEY_H_
#define SLUICE_GRAPH_ATTR_MAP_KEY_H_

#include <string>

#include "graph/attr_value.h"

namespace sluice {

std::string AttrMapKey(const AttrMap& attrs);

}  // namespace sluice

#endif  // SLUICE_GRAPH_ATTR_MAP_KEY_H_
