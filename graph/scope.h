// The graph-building API: Scope (where new nodes go: name scope, device,
// colocation, control dependencies), Output (one tensor of a node), Input
// (an Output or a literal), and OpBuilder, which the typed wrappers in ops/
// are written with.
//
//   Scope root = Scope::NewRootScope(&registry);
//   Scope layer = root.NewSubScope("fc1").WithDevice("/device:CPU:1");
//   Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {.shape = {-1, 784}});
//   Output y = ops::MatMul(layer, x, w, {.transpose_b = true});
//   if (!root.ok()) return root.status();   // first error, with file:line
//
// Errors: a wrapper that cannot build its node (bad input types, shapes that
// do not fit, ...) records the first error in the scope — naming the node, the
// op and the source line of the call — and returns an invalid Output; later
// wrappers given an invalid Output do nothing. Check `status()` once after
// building.
//
// Thread-compatible: build a graph from one thread. Scopes are cheap values
// that share their Graph and error state with the root scope they came from.
#ifndef SLUICE_GRAPH_SCOPE_H_
#define SLUICE_GRAPH_SCOPE_H_

#include <initializer_list>
#include <memory>
#include "base/source_location.h"
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/proto/tensor.pb.h"

namespace sluice {

// One output tensor of a node: "node:index".
struct Output {
  Output() = default;
  Output(Node* n, int i = 0) : node(n), index(i) {}  // NOLINT: implicit on purpose

  bool valid() const { return node != nullptr; }
  DataType dtype() const;
  const TensorShape& shape() const;
  std::string name() const;  // "node:index" ("node" for index 0 is not used)

  Node* node = nullptr;
  int index = 0;
};

// What a wrapper accepts as an input: an Output, or a literal that becomes a
// Const node (converted to the type the op needs when that is known).
//   ops::Mul(s, x, 2.0f);  ops::Reshape(s, x, {-1, 784});
class Input {
 public:
  Input(const Output& o) : output_(o) {}  // NOLINT
  Input(Node* n) : output_(n, 0) {}       // NOLINT
  Input(float v);                         // NOLINT
  Input(double v);                        // NOLINT
  Input(int32_t v);                       // NOLINT
  Input(int64_t v);                       // NOLINT
  Input(bool v);                          // NOLINT
  Input(std::initializer_list<float> v);
  Input(std::initializer_list<double> v);
  Input(std::initializer_list<int32_t> v);
  Input(std::initializer_list<int64_t> v);
  // DT_STRING literals (without these a string literal would become a bool).
  Input(const char* v);                   // NOLINT
  Input(const std::string& v);            // NOLINT
  Input(std::initializer_list<std::string> v);
  // A literal tensor of any dtype and shape.
  explicit Input(::tensorflow::TensorProto literal);

  bool is_literal() const { return is_literal_; }
  const Output& output() const { return output_; }
  const ::tensorflow::TensorProto& literal() const { return literal_; }

 private:
  Output output_;
  bool is_literal_ = false;
  ::tensorflow::TensorProto literal_;
};

class OpBuilder;

class Scope {
 public:
  // A root scope over a new graph that the scope (and its copies) own.
  static Scope NewRootScope(const OpRegistry* registry);
  // A root scope over an existing graph, borrowed: it must outlive the scope.
  static Scope NewRootScope(Graph* graph);

  // Name scope "a/b/": nodes built in it are named "a/b/<name>".
  Scope NewSubScope(absl::string_view name) const;
  // The next node built gets exactly this name (within the name scope).
  Scope WithOpName(absl::string_view name) const;
  Scope WithDevice(absl::string_view device) const;
  // Nodes built in this scope must be placed with `node` ("_class" attr);
  // the scope's device request is dropped, since the colocation decides it.
  Scope ColocateWith(const Node* node) const;
  Scope ColocateWith(const Output& output) const { return ColocateWith(output.node); }
  Scope ClearColocation() const;
  Scope WithControlDependencies(absl::Span<const Output> deps) const;
  Scope WithControlDependencies(absl::Span<Node* const> deps) const;
  // Without the control dependencies this scope adds (TensorFlow's
  // control_dependencies(None)): for nodes built outside the context that
  // asked for them, such as a while-loop gradient's additions to the
  // forward loop.
  Scope WithNoControlDependencies() const;

  Graph* graph() const;
  const OpRegistry* registry() const;
  const std::string& device() const { return device_; }
  const std::string& name_prefix() const { return prefix_; }

  bool ok() const;
  absl::Status status() const;
  // Keeps the first error.
  void UpdateStatus(const absl::Status& status) const;

  // A unique node name under this scope: the WithOpName name when set,
  // else `default_name` (made unique with _1, _2, ...).
  std::string GetUniqueNameForOp(absl::string_view default_name) const;

  // Starts a node of op `op`; the call site is recorded for error messages.
  OpBuilder Op(absl::string_view op,
               std::source_location loc = std::source_location::current()) const;

  // The graph as a GraphDef; the first building error, if any.
  absl::StatusOr<GraphDef> ToGraphDef() const;

 private:
  friend class OpBuilder;
  struct Shared;
  explicit Scope(std::shared_ptr<Shared> shared);

  std::shared_ptr<Shared> shared_;
  std::string prefix_;     // "a/b/" or ""
  std::string op_name_;    // from WithOpName, or ""
  std::string device_;
  std::vector<std::string> colocation_;  // "loc:@name"
  std::vector<Node*> control_deps_;
};

// Builds one node in a scope. Type attrs ("T"), number attrs ("N") and type
// list attrs are filled from the inputs when not set explicitly; literal
// inputs become Const nodes of the type the op needs.
class OpBuilder {
 public:
  OpBuilder(const Scope& scope, std::string op, std::source_location loc);

  OpBuilder& Input(const sluice::Input& input);
  OpBuilder& InputList(absl::Span<const sluice::Input> inputs);
  OpBuilder& InputList(absl::Span<const Output> inputs);
  template <typename T>
  OpBuilder& Attr(absl::string_view name, const T& value) {
    return SetAttr(name, MakeAttr(value));
  }
  OpBuilder& Attr(absl::string_view name, std::initializer_list<int64_t> value) {
    return SetAttr(name, MakeAttr(absl::Span<const int64_t>(value.begin(), value.size())));
  }
  OpBuilder& SetAttr(absl::string_view name, AttrValue value);
  OpBuilder& ControlInput(Node* node);
  // The default node name (else the op name).
  OpBuilder& DefaultName(absl::string_view name);

  // Builds the node, connects its inputs and infers its shapes. On error the
  // scope records it (with node, op and source line) and nullptr is returned.
  Node* Finalize();
  // Finalize(), then its output 0 / all its outputs (invalid Outputs, as
  // many as the op declares, on error).
  Output Finalize1();
  std::vector<Output> FinalizeAll();

 private:
  absl::StatusOr<Node*> Build();

  Scope scope_;
  std::string op_;
  std::source_location loc_;
  std::string default_name_;
  std::vector<std::vector<sluice::Input>> inputs_;  // per arg; list args hold several
  std::vector<bool> is_list_;
  AttrMap attrs_;
  std::vector<Node*> control_inputs_;
  bool has_invalid_input_ = false;
};

}  // namespace sluice

#endif  // SLUICE_GRAPH_SCOPE_H_
