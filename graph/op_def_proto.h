// An OpDef as TensorFlow's OpDef proto: what a MetaGraphDef's
// stripped_op_list holds for each op its graph uses (names, typed inputs and
// outputs, attrs with their defaults and limits, flags), so that TensorFlow
// (or another Sluice) can check the graph against the ops it was built with.
//
//   ::tensorflow::OpDef proto = OpDefToProto(*registry.Find("MatMul"));
//
// Sluice-only parts of an OpDef (shape, gradient and kernel hooks, control
// flow roles) have no place in the proto and are left out. Thread-compatible.
#ifndef SLUICE_GRAPH_OP_DEF_PROTO_H_
#define SLUICE_GRAPH_OP_DEF_PROTO_H_

#include "graph/op_def.h"
#include "graph/proto/op_def.pb.h"

namespace sluice {

::tensorflow::OpDef OpDefToProto(const OpDef& def);

}  // namespace sluice

#endif  // SLUICE_GRAPH_OP_DEF_PROTO_H_
