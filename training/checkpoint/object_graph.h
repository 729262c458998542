// TF2 SavedModels are object-based. tf.saved_model.save records the objects
// it saved in the MetaGraph (SavedObjectGraph), and its checkpoint records
// the same objects (TrackableObjectGraph, stored in variables/variables as
// the string tensor "_CHECKPOINTABLE_OBJECT_GRAPH") with the key of each
// variable's value. TensorFlow's TF2 loader rebuilds the objects, restores
// them from the checkpoint, and binds each concrete function's captured
// inputs to them; it never runs the MetaGraph's saver. A Keras model saved
// this way captures handles (VarHandleOps "dense/kernel", ...) that its
// saver does not restore (the saver fills "Variable", "Variable_1", ...),
// so the saver alone leaves a signature's variables uninitialized.
//
// AddCapturedVariableRestore adds the nodes that restore, from a checkpoint
// whose prefix is fed at run time, every variable a call in the graph
// captures. A node calling function F (its "f" attr) whose
// concrete_functions[F] has bound_inputs n1..nk takes objects n1..nk as
// its last k inputs. Each of those that is a variable and comes from a
// VarHandleOp is assigned the checkpoint's value for it. The checkpoint's
// node is found by following, from the roots of both graphs, the same
// child names that lead to n_i in the SavedObjectGraph, as TensorFlow's
// loader matches them.
//
//   ASSIGN_OR_RETURN(TrackableObjectGraph saved, ReadCheckpointObjectGraph(*reader));
//   ASSIGN_OR_RETURN(CapturedVariableRestore r,
//                    AddCapturedVariableRestore(meta.object_graph_def(), saved, &graph_def));
//
// The added nodes are named under `scope`, or under a fresh one
// ("_captured_variable_restore", "..._1") that no node of the graph starts
// with when `scope` is empty (a caller that extends a session with a part of
// its graph names its own).
//   if (r.variables > 0) RETURN_IF_ERROR(session->Run({{r.prefix_tensor, prefix}}, {}, {r.target}).status());
//
// Errors: NotFound from ReadCheckpointObjectGraph for a checkpoint without
// an object graph (a name-based one); DataLoss for one that does not parse.
// FailedPrecondition from AddCapturedVariableRestore naming the call, the
// variable's object path and its handle when the checkpoint holds no value
// for a captured variable; InvalidArgument for a call with fewer inputs
// than its function's bound inputs, or a bound input outside the object
// graph.
#ifndef SLUICE_TRAINING_CHECKPOINT_OBJECT_GRAPH_H_
#define SLUICE_TRAINING_CHECKPOINT_OBJECT_GRAPH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/proto/graph.pb.h"
#include "graph/proto/saved_object_graph.pb.h"
#include "graph/proto/trackable_object_graph.pb.h"
#include "runtime/io/tensor_bundle.h"

namespace sluice {

// The checkpoint tensor holding the serialized TrackableObjectGraph.
inline constexpr char kObjectGraphKey[] = "_CHECKPOINTABLE_OBJECT_GRAPH";

absl::StatusOr<::tensorflow::TrackableObjectGraph> ReadCheckpointObjectGraph(
    const BundleReader& checkpoint);

// What a call of one of the object graph's concrete functions (its "f"
// attr) passes for each bound input: the object and the input tensor.
// Empty for a node that calls none; InvalidArgument for a call with fewer
// inputs than bound inputs, or a bound object outside the graph.
struct BoundInput {
  int object;
  std::string tensor;  // "node" or "node:k"
};
absl::StatusOr<std::vector<BoundInput>> BoundInputsOf(const ::tensorflow::SavedObjectGraph& objects,
                                                      const ::tensorflow::NodeDef& call);

struct CapturedVariableRestore {
  int variables = 0;          // handles restored; 0: nothing was added
  std::string target;         // the node to run
  std::string prefix_tensor;  // the scalar string to feed the checkpoint's prefix
};

absl::StatusOr<CapturedVariableRestore> AddCapturedVariableRestore(
    const ::tensorflow::SavedObjectGraph& objects,
    const ::tensorflow::TrackableObjectGraph& checkpoint_objects, ::tensorflow::GraphDef* graph,
    const std::string& scope = "");

}  // namespace sluice

#endif  // SLUICE_TRAINING_CHECKPOINT_OBJECT_GRAPH_H_
