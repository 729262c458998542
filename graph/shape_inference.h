// Shape inference: what each op's ShapeFn sees, and the pass that runs them.
//
//   absl::Status MatMulShape(InferenceContext* c) {
//     RETURN_IF_ERROR(c->WithRank(0, 2));
//     ASSIGN_OR_RETURN(bool ta, c->GetAttr<bool>("transpose_a"));
//     ...
//     c->set_output(0, TensorShape({m, n}));
//     return absl::OkStatus();
//   }
//
// Errors from a ShapeFn are InvalidArgument and name the inputs' shapes;
// InferShapes adds the node's name. Thread-compatible.
#ifndef SLUICE_GRAPH_SHAPE_INFERENCE_H_
#define SLUICE_GRAPH_SHAPE_INFERENCE_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace sluice {

class InferenceContext {
 public:
  explicit InferenceContext(const Node& node);

  const Node& node() const { return node_; }
  int num_inputs() const { return node_.num_inputs(); }
  int num_outputs() const { return node_.num_outputs(); }
  // The shape flowing into input i (unknown while unconnected).
  const TensorShape& input(int i) const { return inputs_[i]; }
  DataType input_type(int i) const { return node_.input_type(i); }
  template <typename T>
  absl::StatusOr<T> GetAttr(absl::string_view name) const {
    return node_.GetAttr<T>(name);
  }

  // The integer value flowing into input i when it is known at build time:
  // produced by a Const, or by a Shape/Size of an input with a fully defined
  // shape. nullopt otherwise; an error only for a malformed constant.
  absl::StatusOr<std::optional<std::vector<int64_t>>> InputAsInts(int i) const;
  // The TensorProto of a Const feeding input i, or nullptr.
  const ::tensorflow::TensorProto* InputConstant(int i) const;

  void set_output(int i, TensorShape shape) { outputs_[i] = std::move(shape); }
  const std::vector<TensorShape>& outputs() const { return outputs_; }

  // InvalidArgument unless input i has that rank (or an unknown rank).
  absl::Status WithRank(int i, int rank) const;
  absl::Status WithRankAtLeast(int i, int rank) const;

 private:
  const Node& node_;
  std::vector<TensorShape> inputs_;
  std::vector<TensorShape> outputs_;
};

// Runs the node's ShapeFn and stores its output shapes on the node; without
// a ShapeFn the outputs are unknown. Errors name the node.
absl::Status InferShapes(Node* node);

// NumPy broadcasting of two shapes (unknown dims stay unknown where they
// could decide the result). InvalidArgument naming both on a mismatch.
absl::StatusOr<TensorShape> BroadcastShapes(const TensorShape& a, const TensorShape& b);

// Reads an integer (int32 or int64) TensorProto as int64 values.
absl::StatusOr<std::vector<int64_t>> TensorProtoToInts(const ::tensorflow::TensorProto& proto);

}  // namespace sluice

#endif  // SLUICE_GRAPH_SHAPE_INFERENCE_H_
