// OpDef: the schema of an op — typed inputs and outputs, attrs with defaults
// and constraints, traits, a shape function and a gradient function — and
// OpDefBuilder, which writes one from TensorFlow-style spec strings.
//
//   ASSIGN_OR_RETURN(OpDef def,
//       OpDefBuilder("MatMul")
//           .Input("a: T").Input("b: T").Output("product: T")
//           .Attr("transpose_a: bool = false").Attr("transpose_b: bool = false")
//           .Attr("T: {float, double, int32, int64}")
//           .SetShapeFn(MatMulShape)
//           .Build());
//
// Argument specs:  "x: T" (type attr), "x: float" (fixed), "x: N * T"
// (N inputs of type T), "x: Tlist" (a list(type) attr), "ref: Ref(T)".
// Attr specs:      "name: kind [= default]" with kind one of int, float, bool,
// string, type, shape, tensor, list(int|float|bool|string|type|shape), a
// type set "{float, double}", a string set "{'SAME', 'VALID'}", or
// "int >= 1" / "list(type) >= 1" with a minimum.
//
// Thread-compatible; an OpDef is immutable once in a registry except for its
// gradient function, which OpRegistry sets during start-up.
#ifndef SLUICE_GRAPH_OP_DEF_H_
#define SLUICE_GRAPH_OP_DEF_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/attr_value.h"
#include "graph/proto/op_def.pb.h"
#include "graph/types.h"

namespace sluice {

class Graph;
class InferenceContext;
class Node;
class Scope;
struct Output;
struct Gradient;

struct ArgDef {
  std::string name;
  DataType type = DT_INVALID;  // set for a fixed type
  std::string type_attr;       // or: the attr holding the type
  std::string number_attr;     // "N * T": the int attr counting the inputs
  std::string type_list_attr;  // or: a list(type) attr, one type per tensor
  bool is_ref = false;
};

struct AttrDef {
  std::string name;
  std::string type;  // "int", "list(type)", "string", ...
  std::optional<AttrValue> default_value;
  // For "type"/"list(type)": allowed types; for "string": allowed strings.
  std::optional<AttrValue> allowed_values;
  bool has_minimum = false;
  int64_t minimum = 0;
};

// Fills the output shapes of one node from its input shapes and attrs.
using ShapeFn = std::function<absl::Status(InferenceContext* ctx)>;

// Builds the gradient of one node. `grad_outputs[k]` is the gradient flowing
// into output k (an Output with a null node when none flows there); returns one
// Output per data input, a null one where the input gets no gradient.
using GradFn = std::function<absl::StatusOr<std::vector<Output>>(
    const Scope& scope, const Node& node, absl::Span<const Output> grad_outputs)>;

// A gradient function that takes and gives sparse gradients too
// (graph/indexed_slices.h): `grad_outputs[k]` may be IndexedSlices, and an
// input's gradient may be returned as IndexedSlices (a gather's table).
// AddGradientsWithSlices calls it instead of the GradFn when an op has one.
using SparseGradFn = std::function<absl::StatusOr<std::vector<Gradient>>(
    const Scope& scope, const Node& node, absl::Span<const Gradient> grad_outputs)>;

// The part an op plays in TensorFlow 1.x control flow (the executor gives
// these ops their frame and deadness semantics; runtime/executor.h).
enum class ControlFlowRole {
  kNone,
  kSwitch,         // Switch, RefSwitch: forwards to one of two outputs
  kMerge,          // Merge, RefMerge: forwards its first live input
  kEnter,          // Enter, RefEnter: into a child frame
  kExit,           // Exit, RefExit: back to the parent frame
  kNextIteration,  // NextIteration, RefNextIteration: to the next iteration
  kLoopCond,       // LoopCond: the loop's predicate
  kControlTrigger, // ControlTrigger: runs even when its inputs are dead
};

// The gradient of one while loop taken as a whole (ops/control_flow/control_flow_grad.cc
// builds it: a backward loop that differentiates the body with the ops'
// GradFns). `exit_grads[k]` flows into `exits[k]` (a null Output: none);
// returns one gradient per entry of `enters` (null where none flows).
struct WhileLoopGradRequest {
  std::vector<Node*> exits;
  std::vector<Output> exit_grads;
  std::vector<Node*> enters;  // the loop's Enters: variables and invariants
};
using WhileLoopGradFn = std::function<absl::StatusOr<std::vector<Output>>(
    const Scope& scope, const WhileLoopGradRequest& loop)>;

// Rewrites one node into other ops of its graph (ops/functional lowers
// TensorFlow's functional If, Case and While into TensorFlow 1.x control
// flow around calls of their functions). The node stays, turned into the
// gathering of the results (Graph::ReplaceOp), so that its name, id and the
// Outputs of it stay valid. Returns the nodes it added.
using LowerFn = std::function<absl::StatusOr<std::vector<Node*>>(Graph* graph, Node* node)>;

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDef> attrs;
  bool is_stateful = false;
  bool is_commutative = false;
  bool allows_uninitialized_input = false;
  // Traits the runtime, placement and training layers ask about instead of
  // comparing op names: the op holds a variable's storage (Variable,
  // VariableV2), or it is a feed point (Placeholder, PlaceholderWithDefault).
  bool is_variable = false;
  bool is_placeholder = false;
  // A "_"-named op that graph files may hold: a fused kernel TensorFlow's
  // optimizer writes (_FusedMatMul), not one of the runtime's own (_Arg,
  // _Retval, _Send), which ImportGraphDef refuses.
  bool allowed_in_graph_files = false;
  ControlFlowRole control_flow = ControlFlowRole::kNone;
  // Function calls (graph/function_inline.h). A node whose op is a function
  // of its graph's library has an OpDef made from the function's signature
  // (OpDefFromSignature), with `is_function` set. An op that calls the
  // function named by one of its func attrs with its inputs and returns its
  // results (PartitionedCall: "f") names that attr here.
  bool is_function = false;
  std::string call_function_attr;
  // A function's control outputs (signature.control_output): names of nodes
  // that must run for a call to count as done.
  std::vector<std::string> control_outputs;
  ShapeFn shape_fn;  // may be empty: outputs then have unknown shapes
  GradFn grad_fn;    // may be empty: see no_gradient
  SparseGradFn sparse_grad_fn;  // may be empty: grad_fn on dense gradients
  bool no_gradient = false;  // declared not differentiable (ArgMax, Shape, ...)
  // May be empty: the op runs as a kernel. Sessions (and AddGradients, on
  // the path it differentiates) lower such nodes before placement, with the
  // function calls they inline (graph/function_inline.h).
  LowerFn lower_fn;

  const AttrDef* FindAttr(absl::string_view attr_name) const;
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string name);

  OpDefBuilder& Input(std::string spec);
  OpDefBuilder& Output(std::string spec);
  OpDefBuilder& Attr(std::string spec);
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& SetIsCommutative();
  OpDefBuilder& SetAllowsUninitializedInput();
  OpDefBuilder& SetIsVariable();
  OpDefBuilder& SetIsPlaceholder();
  OpDefBuilder& SetAllowedInGraphFiles();
  OpDefBuilder& SetControlFlowRole(ControlFlowRole role);
  // The op calls the function named by func attr `attr` (OpDef::call_function_attr).
  OpDefBuilder& SetCallsFunction(std::string attr);
  OpDefBuilder& SetShapeFn(ShapeFn fn);
  // A default the spec text cannot spell (a shape, a list, a string).
  OpDefBuilder& SetAttrDefault(std::string attr, AttrValue value);

  // Parses every spec. Errors (InvalidArgument) name the op and the spec:
  // a bad type, an arg naming an attr that is not declared, a default that
  // breaks its own constraint.
  absl::StatusOr<OpDef> Build() const;

 private:
  std::string name_;
  std::vector<std::string> input_specs_;
  std::vector<std::string> output_specs_;
  std::vector<std::string> attr_specs_;
  bool is_stateful_ = false;
  bool is_commutative_ = false;
  bool allows_uninitialized_input_ = false;
  bool is_variable_ = false;
  bool is_placeholder_ = false;
  bool allowed_in_graph_files_ = false;
  ControlFlowRole control_flow_ = ControlFlowRole::kNone;
  std::string call_function_attr_;
  ShapeFn shape_fn_;
  std::vector<std::pair<std::string, AttrValue>> attr_defaults_;
};

// The OpDef of a call to a library function, from the function's signature
// (TensorFlow's OpDef proto: args typed by fixed types, type attrs, number
// attrs or type-list attrs; attrs with defaults, allowed values and minimums).
// InvalidArgument naming the function and the arg or attr: an arg naming an
// attr that is not declared or has the wrong kind, an arg with no type, an
// unknown attr kind, a default that breaks its own constraint.
absl::StatusOr<OpDef> OpDefFromSignature(const ::tensorflow::OpDef& signature);

// Checks one attr value against its definition (kind, allowed values,
// minimum). The error names the attr; the caller adds node context.
absl::Status ValidateAttrValue(const AttrDef& def, const AttrValue& value);

}  // namespace sluice

#endif  // SLUICE_GRAPH_OP_DEF_H_
