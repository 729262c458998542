// Graph: nodes (op instances) joined by data edges (node:output -> node:input)
// and control edges (ordering only).
//
//   Graph g(&registry);
//   NodeDef def;  def.set_name("a");  def.set_op("Const");  ...attrs...
//   ASSIGN_OR_RETURN(Node* a, g.AddNode(std::move(def)));
//   RETURN_IF_ERROR(g.AddEdge(a, 0, b, 1));
//   g.AddControlEdge(init, train);
//
// AddNode checks the node against its OpDef — op known, attrs defined and
// valid, defaults filled in — and works out its input and output types.
// Edges are the truth about inputs: NodeDef.input of an added node is
// ignored. ToGraphDef writes inputs back from the edges.
//
// Thread-compatible: mutate from one thread; concurrent const use is safe.
// The Graph owns its Nodes and Edges; pointers stay valid until removed.
#ifndef SLUICE_GRAPH_GRAPH_H_
#define SLUICE_GRAPH_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "graph/attr_value.h"
#include "graph/op_def.h"
#include "graph/op_registry.h"
#include "graph/proto/function.pb.h"
#include "graph/proto/graph.pb.h"
#include "graph/tensor_shape.h"

namespace sluice {

using NodeDef = ::tensorflow::NodeDef;
using GraphDef = ::tensorflow::GraphDef;
using FunctionDef = ::tensorflow::FunctionDef;
using FunctionDefLibrary = ::tensorflow::FunctionDefLibrary;

class Graph;

// The input and output types of one node.
struct NodeTypes {
  std::vector<DataType> inputs;
  std::vector<DataType> outputs;
};

// A data edge has src_output >= 0 and dst_input >= 0; a control edge has
// both equal to kControlSlot.
struct Edge {
  static constexpr int kControlSlot = -1;
  int id = 0;
  Node* src = nullptr;
  int src_output = 0;
  Node* dst = nullptr;
  int dst_input = 0;
  bool IsControl() const { return src_output == kControlSlot; }
};

class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  const std::string& op() const { return def_.op(); }
  const OpDef& op_def() const { return *op_def_; }
  // The node as a NodeDef without inputs (name, op, device, attrs).
  const NodeDef& def() const { return def_; }
  const AttrMap& attrs() const { return def_.attr(); }
  template <typename T>
  absl::StatusOr<T> GetAttr(absl::string_view attr_name) const {
    return sluice::GetAttr<T>(def_.attr(), attr_name);
  }
  void SetAttr(absl::string_view attr_name, AttrValue value);

  // The device the graph asked for (possibly partial, possibly empty), and
  // the full device name the placer chose (empty before placement).
  const std::string& requested_device() const { return def_.device(); }
  void set_requested_device(absl::string_view device);
  const std::string& assigned_device() const { return assigned_device_; }
  void set_assigned_device(std::string device) { assigned_device_ = std::move(device); }

  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const std::vector<DataType>& input_types() const { return input_types_; }
  const std::vector<DataType>& output_types() const { return output_types_; }

  // Shapes inferred at build or import time (unknown until inferred).
  const TensorShape& output_shape(int i) const { return output_shapes_[i]; }
  void set_output_shape(int i, TensorShape shape) { output_shapes_[i] = std::move(shape); }

  // The data edge into input `i`, or nullptr while it is unconnected.
  const Edge* input_edge(int i) const { return input_edges_[i]; }
  // All incoming edges, data and control, in no particular order.
  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }

  bool IsStateful() const { return op_def_->is_stateful; }
  ControlFlowRole control_flow() const { return op_def_->control_flow; }
  // An edge out of a NextIteration closes a loop: the one kind of edge that
  // may form a cycle.
  bool IsNextIteration() const { return control_flow() == ControlFlowRole::kNextIteration; }

  // Names from the "_class" attr's "loc:@name" entries.
  std::vector<std::string> ColocationNames() const;

  // "'name' (Op)", for error messages.
  std::string DebugName() const;

 private:
  friend class Graph;
  Node() = default;

  int id_ = 0;
  NodeDef def_;
  const OpDef* op_def_ = nullptr;
  std::string assigned_device_;
  std::vector<DataType> input_types_;
  std::vector<DataType> output_types_;
  std::vector<TensorShape> output_shapes_;
  std::vector<const Edge*> input_edges_;
  std::vector<const Edge*> in_edges_;
  std::vector<const Edge*> out_edges_;
};

class Graph {
 public:
  explicit Graph(const OpRegistry* registry);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const OpRegistry* registry() const { return registry_; }

  // Adds a node. Errors name the node: InvalidArgument for a duplicate or
  // malformed name, an attr the op does not define or a bad attr value or
  // type; NotFound for an unknown op; InvalidArgument for a missing attr.
  // The op is one of the registry's or a function of the library.
  absl::StatusOr<Node*> AddNode(NodeDef def);

  // Gives `node` another op and attrs (from `def`; its name and inputs are
  // ignored) and keeps its name, id, devices and out-edges, so that Node
  // pointers and Outputs stay valid: the inliner turns a call into the
  // IdentityN that gathers the function's results. The node must have no
  // in-edges left. Errors: those of AddNode, and InvalidArgument when the new
  // op's output types differ from the node's.
  absl::Status ReplaceOp(Node* node, NodeDef def);

  // Sets a node's type attr (say "T") and the input and output types that
  // follow from it, keeping its name, id, devices and edges: a precision
  // rewrite retypes a node in place. Errors: those of the attr (InvalidArgument
  // naming the node when the op has no such type attr or the type is not
  // allowed) and InvalidArgument when a data edge still connected to the node
  // would then join two types; disconnect those first.
  absl::Status SetTypeAttr(Node* node, absl::string_view attr, DataType type);
  // Connects src:src_output to dst:dst_input. Errors: index out of range,
  // input already connected, or type mismatch (a ref output may feed a
  // non-ref input of the same base type; a ref input needs a ref output).
  absl::Status AddEdge(Node* src, int src_output, Node* dst, int dst_input);
  const Edge* AddControlEdge(Node* src, Node* dst);  // duplicates are skipped
  void RemoveEdge(const Edge* edge);
  void RemoveNode(Node* node);  // and all its edges

  Node* FindNode(absl::string_view name) const;
  // Node ids are dense in [0, num_node_ids()); removed ids answer nullptr.
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  Node* node(int id) const { return nodes_[id].get(); }
  int num_nodes() const { return num_nodes_; }
  // The live nodes, in id order.
  std::vector<Node*> nodes() const;

  // A name not yet used: `prefix` itself, else prefix_1, prefix_2, ...
  std::string NewName(absl::string_view prefix);

  // Writes nodes in id order with inputs from the edges: data inputs in slot
  // order, then control inputs "^src".
  void ToGraphDef(GraphDef* out) const;

  const ::tensorflow::VersionDef& versions() const { return versions_; }
  ::tensorflow::VersionDef* mutable_versions() { return &versions_; }

  // The function library (TensorFlow's FunctionDefLibrary, function.proto).
  // A node whose op names one of its functions calls that function; its
  // OpDef is made from the function's signature (OpDefFromSignature in
  // graph/op_def.h). Add a function before the nodes that call it.
  const FunctionDefLibrary& library() const { return library_; }
  // Direct access, for bulk copies: a function changed here after a node
  // called it keeps the OpDef it had for that node. Prefer AddFunction.
  FunctionDefLibrary* mutable_library() { return &library_; }
  // Adds one function, checked: its signature (OpDefFromSignature), unique
  // node names, a ret for every output and only those, control_ret only for
  // the signature's control outputs. A function equal to one of the same
  // name is skipped. InvalidArgument naming the function for a bad
  // function, a different function of the same name, or a name the op
  // registry has.
  absl::Status AddFunction(const FunctionDef& fdef);
  // Adds the functions (as AddFunction) and the gradients of `library`. A
  // body node's op is checked when the function is instantiated, so that a
  // graph whose library holds functions it never calls (with ops Sluice
  // lacks) still imports.
  absl::Status AddFunctionLibrary(const FunctionDefLibrary& library);
  // nullptr when the library has no function of that name.
  const FunctionDef* FindFunction(absl::string_view name) const;
  // The gradient function the library names for `function` (GradientDef),
  // or "" when none.
  std::string GradientFunctionOf(absl::string_view function) const;
  // The OpDef of op `op`: the registry's, else the one of the library
  // function `op`; nullptr when neither has it. Stays valid as long as the
  // graph.
  const OpDef* FindOp(absl::string_view op) const;

 private:
  const OpRegistry* registry_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Edge>> edges_;
  absl::flat_hash_map<std::string, Node*> by_name_;
  absl::flat_hash_map<std::string, int> name_counters_;
  int num_nodes_ = 0;
  ::tensorflow::VersionDef versions_;
  FunctionDefLibrary library_;
  // OpDefs of library functions, made when first asked for; never removed,
  // since nodes point at them.
  mutable absl::Mutex function_ops_mu_;
  mutable absl::flat_hash_map<std::string, std::unique_ptr<OpDef>> function_ops_
      ABSL_GUARDED_BY(function_ops_mu_);

  // The op and node types of a node about to be added, its attrs completed
  // with the op's defaults. Errors name the node.
  struct CheckedNode {
    const OpDef* op_def = nullptr;
    NodeTypes types;
  };
  absl::StatusOr<CheckedNode> CheckNode(NodeDef& def) const;
};

// Computes the input and output types of a node from its OpDef and attrs.
absl::StatusOr<NodeTypes> ComputeNodeTypes(const OpDef& op_def, const AttrMap& attrs);

// Parses "node", "node:3" or "^node" (control). Errors on a malformed name.
struct TensorId {
  std::string node;
  int index = 0;  // Edge::kControlSlot for "^node"
};
absl::StatusOr<TensorId> ParseTensorName(absl::string_view name);

}  // namespace sluice

#endif  // SLUICE_GRAPH_GRAPH_H_
