#include "placement/fuse_ops.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "placement/device_name.h"

namespace sluice {
namespace {

// One end of a data edge that survives the rewrite (outside the chain).
struct Endpoint {
  Node* node;
  int index;
};

// The data input `i`'s producer when it is a node of type `op`.
Node* InputOfType(const Node& n, int i, absl::string_view op) {
  const Edge* e = n.input_edge(i);
  if (e == nullptr || e->src_output != 0 || e->src->op() != op) return nullptr;
  return e->src;
}

Endpoint InputEnd(const Node& n, int i) {
  const Edge* e = n.input_edge(i);
  return {e->src, e->src_output};
}

class Fuser {
 public:
  Fuser(Graph* graph, const FuseOptions& options)
      : graph_(graph), kernels_(options.kernels), keep_(options.keep.begin(), options.keep.end()) {}

  absl::StatusOr<FuseStats> Run() {
    FuseStats stats;
    const int num_ids = graph_->num_node_ids();
    for (int id = 0; id < num_ids; ++id) {
      Node* n = graph_->node(id);
      if (n == nullptr || n->op() != "BiasAdd") continue;
      ASSIGN_OR_RETURN(int fused, FuseMatMulBias(n));
      if (fused == 2) ++stats.matmul_bias;
      if (fused == 3) ++stats.matmul_bias_relu;
    }
    // Before the update pattern, so that a summed weight gradient, once one
    // MatMul, can go straight into its update.
    for (int id = 0; id < num_ids; ++id) {
      Node* n = graph_->node(id);
      if (n == nullptr || n->op() != "AddN") continue;
      ASSIGN_OR_RETURN(bool fused, FuseMatMulSum(n));
      if (fused) ++stats.matmul_sum;
    }
    for (int id = 0; id < graph_->num_node_ids(); ++id) {
      Node* n = graph_->node(id);
      if (n == nullptr || n->op() != "ApplyGradientDescent") continue;
      ASSIGN_OR_RETURN(bool fused, FuseMatMulApply(n));
      if (fused) ++stats.matmul_apply_gradient_descent;
    }
    for (int id = 0; id < graph_->num_node_ids(); ++id) {
      Node* n = graph_->node(id);
      if (n == nullptr || n->op() != "BiasAddGrad") continue;
      ASSIGN_OR_RETURN(bool fused, FuseMatMulBiasGrad(n));
      if (fused) ++stats.matmul_bias_grad;
    }
    return stats;
  }

 private:
  // `inner` may disappear into a fused node: its one consumer is `next`,
  // by a data edge from output 0, and nobody names it.
  bool Absorbable(const Node& inner, const Node& next) const {
    if (keep_.contains(inner.name()) || inner.out_edges().size() != 1) return false;
    const Edge* e = inner.out_edges()[0];
    return !e->IsControl() && e->src_output == 0 && e->dst == &next;
  }

  // Every node of `chain` is float and on one device whose type runs `op`;
  // with `sixteen`, the chain may instead be all half or all bfloat16 (a
  // mixed-precision step) where that device type has `op` for that type.
  bool Fusible(const std::vector<Node*>& chain, const char* op, bool sixteen = false) const {
    const std::string& device = chain.front()->assigned_device();
    const DataType type = chain.front()->GetAttr<DataType>("T").value_or(DT_INVALID);
    const bool allowed =
        type == DT_FLOAT || (sixteen && (type == DT_BFLOAT16 || type == DT_HALF));
    if (!allowed) return false;
    for (const Node* n : chain) {
      if (n->GetAttr<DataType>("T").value_or(DT_INVALID) != type ||
          n->assigned_device() != device) {
        return false;
      }
    }
    if (device.empty() || graph_->registry()->Find(op) == nullptr) return false;
    absl::StatusOr<DeviceName> name = DeviceName::Parse(device);
    if (!name.ok() || !name->type) return false;
    if (type == DT_FLOAT) return kernels_->HasKernelsFor(op, *name->type);
    AttrMap attrs;
    attrs["T"] = MakeAttr(type);
    return kernels_->FindKernelDef(op, attrs, *name->type) != nullptr;
  }

  // MatMul -> BiasAdd [-> Relu]: returns the chain's length when fused, 0
  // when not.
  absl::StatusOr<int> FuseMatMulBias(Node* bias_add) {
    Node* matmul = InputOfType(*bias_add, 0, "MatMul");
    if (matmul == nullptr || !Absorbable(*matmul, *bias_add)) return 0;
    absl::StatusOr<std::string> format = bias_add->GetAttr<std::string>("data_format");
    if (!format.ok() || *format != "NHWC") return 0;
    std::vector<Node*> chain = {matmul, bias_add};
    if (bias_add->out_edges().size() == 1) {
      Node* next = bias_add->out_edges()[0]->dst;
      if (next->op() == "Relu" && Absorbable(*bias_add, *next)) chain.push_back(next);
    }
    if (!Fusible(chain, "_FusedMatMul", /*sixteen=*/true)) {
      if (chain.size() == 2) return 0;
      chain.pop_back();  // fuse the bias alone when the Relu cannot join
      if (!Fusible(chain, "_FusedMatMul", /*sixteen=*/true)) return 0;
    }
    NodeDef def = Head(*chain.back(), "_FusedMatMul");
    CopyAttr(*matmul, "transpose_a", &def);
    CopyAttr(*matmul, "transpose_b", &def);
    CopyAttr(*matmul, "T", &def);
    CopyAttr(*matmul, "_gpu_precision", &def);
    (*def.mutable_attr())["num_args"] = MakeAttr(int64_t{1});
    std::vector<std::string> ops = {"BiasAdd"};
    if (chain.size() == 3) ops.push_back("Relu");
    (*def.mutable_attr())["fused_ops"] = MakeAttr(ops);
    RETURN_IF_ERROR(Replace(chain, std::move(def),
                            {InputEnd(*matmul, 0), InputEnd(*matmul, 1), InputEnd(*bias_add, 1)})
                        .status());
    return static_cast<int>(chain.size());
  }

  // MatMul -> ApplyGradientDescent (its delta).
  absl::StatusOr<bool> FuseMatMulApply(Node* apply) {
    Node* matmul = InputOfType(*apply, 2, "MatMul");
    if (matmul == nullptr || !Absorbable(*matmul, *apply)) return false;
    const std::vector<Node*> chain = {matmul, apply};
    if (!Fusible(chain, "_MatMulApplyGradientDescent")) return false;
    NodeDef def = Head(*apply, "_MatMulApplyGradientDescent");
    CopyAttr(*apply, "T", &def);
    CopyAttr(*apply, "use_locking", &def);
    CopyAttr(*matmul, "transpose_a", &def);
    CopyAttr(*matmul, "transpose_b", &def);
    RETURN_IF_ERROR(Replace(chain, std::move(def),
                            {InputEnd(*apply, 0), InputEnd(*apply, 1), InputEnd(*matmul, 0),
                             InputEnd(*matmul, 1)})
                        .status());
    return true;
  }

  // MatMul(a, dy) and BiasAddGrad(dy) => _MatMulBiasAddGrad(a, dy): a dense
  // layer's weight and bias gradients, the latter computed in the GEMM's
  // epilogue. Not on CPU devices, whose GEMM has no epilogue to put it in.
  absl::StatusOr<bool> FuseMatMulBiasGrad(Node* bias_grad) {
    if (keep_.contains(bias_grad->name())) return false;
    absl::StatusOr<std::string> format = bias_grad->GetAttr<std::string>("data_format");
    if (!format.ok() || *format != "NHWC") return false;
    const Edge* dy = bias_grad->input_edge(0);
    if (dy == nullptr) return false;
    // A MatMul whose b, not transposed, is the same tensor: its column sums
    // are the bias gradient.
    Node* matmul = nullptr;
    for (const Edge* e : dy->src->out_edges()) {
      if (e->IsControl() || e->src_output != dy->src_output || e->dst_input != 1) continue;
      Node* m = e->dst;
      if (m->op() != "MatMul" || keep_.contains(m->name()) ||
          m->GetAttr<bool>("transpose_b").value_or(true)) {
        continue;
      }
      matmul = m;
      break;
    }
    if (matmul == nullptr) return false;
    const std::vector<Node*> pair = {matmul, bias_grad};
    if (!Fusible(pair, "_MatMulBiasAddGrad", /*sixteen=*/true)) return false;
    absl::StatusOr<DeviceName> device = DeviceName::Parse(matmul->assigned_device());
    if (!device.ok() || device->type == "CPU") return false;
    const TensorShape product_shape = matmul->output_shape(0);
    const TensorShape bias_shape = bias_grad->output_shape(0);
    NodeDef def = Head(*matmul, "_MatMulBiasAddGrad");
    CopyAttr(*matmul, "transpose_a", &def);
    CopyAttr(*matmul, "transpose_b", &def);
    CopyAttr(*matmul, "T", &def);
    CopyAttr(*matmul, "_gpu_precision", &def);
    ASSIGN_OR_RETURN(Node * fused, Replace(pair, std::move(def),
                                           {InputEnd(*matmul, 0), InputEnd(*matmul, 1)},
                                           /*outputs=*/pair));
    fused->set_output_shape(0, product_shape);
    fused->set_output_shape(1, bias_shape);
    return true;
  }

  // AddN(MatMul(a_1, b_1), ..., MatMul(a_N, b_N)) => MatMul(Concat(a_i),
  // Concat(b_i)): the sum of products over a shared contraction is one
  // product over the operands stacked along it. Fires where stacking moves
  // fewer bytes than the N products would (small contractions: the
  // per-micro-batch weight gradients of a pipeline, K = B/M), on CPU devices.
  absl::StatusOr<bool> FuseMatMulSum(Node* add_n) {
    const int n = add_n->num_inputs();
    if (n < 2 || keep_.contains(add_n->name())) return false;
    std::vector<Node*> chain;
    for (int i = 0; i < n; ++i) {
      Node* matmul = InputOfType(*add_n, i, "MatMul");
      if (matmul == nullptr || !Absorbable(*matmul, *add_n)) return false;
      chain.push_back(matmul);
    }
    chain.push_back(add_n);
    if (!Fusible(chain, "MatMul") || !Fusible(chain, "ConcatV2")) return false;
    absl::StatusOr<DeviceName> device = DeviceName::Parse(add_n->assigned_device());
    if (!device.ok() || device->type != "CPU") return false;
    const Node& first = *chain.front();
    const absl::StatusOr<bool> ta = first.GetAttr<bool>("transpose_a");
    const absl::StatusOr<bool> tb = first.GetAttr<bool>("transpose_b");
    if (!ta.ok() || !tb.ok()) return false;
    // The axis of each operand that the product contracts.
    const int axis_a = *ta ? 0 : 1, axis_b = *tb ? 1 : 0;
    // The other axes must be known and equal; the contraction may be left
    // open (a batch of unknown size), and is then taken to be small.
    TensorShape shape_a, shape_b;
    int64_t contraction = 0;  // summed over the products; -1 when unknown
    for (int i = 0; i < n; ++i) {
      const Node& m = *chain[i];
      if (m.GetAttr<bool>("transpose_a").value_or(!*ta) != *ta ||
          m.GetAttr<bool>("transpose_b").value_or(!*tb) != *tb) {
        return false;
      }
      const TensorShape& a = InputShape(m, 0);
      const TensorShape& b = InputShape(m, 1);
      if (a.rank() != 2 || b.rank() != 2 || a.dim(1 - axis_a) < 0 || b.dim(1 - axis_b) < 0) {
        return false;
      }
      const int64_t k = a.dim(axis_a) >= 0 ? a.dim(axis_a) : b.dim(axis_b);
      contraction = contraction < 0 || k < 0 ? -1 : contraction + k;
      if (i == 0) {
        shape_a = a;
        shape_b = b;
      } else if (a.dim(1 - axis_a) != shape_a.dim(1 - axis_a) ||
                 b.dim(1 - axis_b) != shape_b.dim(1 - axis_b)) {
        return false;
      }
    }
    shape_a.set_dim(axis_a, contraction);
    shape_b.set_dim(axis_b, contraction);
    // Stacking copies K x (rows + cols) floats; the N products write and
    // AddN reads N x rows x cols.
    const int64_t rows = shape_a.dim(1 - axis_a), cols = shape_b.dim(1 - axis_b);
    if (contraction >= 0 && contraction * (rows + cols) > int64_t{n} * rows * cols) return false;

    ASSIGN_OR_RETURN(Endpoint stacked_a, AddConcat(*add_n, "a", chain, 0, axis_a, shape_a));
    ASSIGN_OR_RETURN(Endpoint stacked_b, AddConcat(*add_n, "b", chain, 1, axis_b, shape_b));
    NodeDef def = Head(*add_n, "MatMul");
    CopyAttr(first, "transpose_a", &def);
    CopyAttr(first, "transpose_b", &def);
    CopyAttr(first, "T", &def);
    RETURN_IF_ERROR(Replace(chain, std::move(def), {stacked_a, stacked_b}).status());
    return true;
  }

  static const TensorShape& InputShape(const Node& n, int i) {
    const Edge* e = n.input_edge(i);
    return e->src->output_shape(e->src_output);
  }

  // ConcatV2 of input `input` of each MatMul in `chain` (all but its last
  // node) along `axis`, on the AddN's device, named under the AddN.
  absl::StatusOr<Endpoint> AddConcat(const Node& add_n, const char* operand,
                                     const std::vector<Node*>& chain, int input, int axis,
                                     const TensorShape& shape) {
    // Fresh names: a graph may already use these.
    const std::string prefix = graph_->NewName(absl::StrCat(add_n.name(), "/stacked_", operand));
    NodeDef axis_def;
    axis_def.set_name(graph_->NewName(prefix + "_axis"));
    axis_def.set_op("Const");
    axis_def.set_device(add_n.requested_device());
    ::tensorflow::TensorProto value;
    value.set_dtype(DT_INT32);
    value.mutable_tensor_shape();
    value.add_int_val(axis);
    (*axis_def.mutable_attr())["dtype"] = MakeAttr(DT_INT32);
    (*axis_def.mutable_attr())["value"] = MakeAttr(value);
    NodeDef concat_def;
    concat_def.set_name(prefix);
    concat_def.set_op("ConcatV2");
    concat_def.set_device(add_n.requested_device());
    const int n = static_cast<int>(chain.size()) - 1;
    (*concat_def.mutable_attr())["N"] = MakeAttr(int64_t{n});
    (*concat_def.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
    (*concat_def.mutable_attr())["Tidx"] = MakeAttr(DT_INT32);
    const std::string what = absl::StrCat("stacking the products of ", add_n.DebugName(), ": ");
    absl::StatusOr<Node*> axis_node = graph_->AddNode(std::move(axis_def));
    if (!axis_node.ok()) return absl::InternalError(what + axis_node.status().ToString());
    absl::StatusOr<Node*> concat = graph_->AddNode(std::move(concat_def));
    if (!concat.ok()) return absl::InternalError(what + concat.status().ToString());
    (*axis_node)->set_assigned_device(add_n.assigned_device());
    (*axis_node)->set_output_shape(0, TensorShape());
    (*concat)->set_assigned_device(add_n.assigned_device());
    (*concat)->set_output_shape(0, shape);
    for (int i = 0; i < n; ++i) {
      const Endpoint in = InputEnd(*chain[i], input);
      absl::Status s = graph_->AddEdge(in.node, in.index, *concat, i);
      if (!s.ok()) return absl::InternalError(what + s.ToString());
    }
    absl::Status s = graph_->AddEdge(*axis_node, 0, *concat, n);
    if (!s.ok()) return absl::InternalError(what + s.ToString());
    return Endpoint{*concat, 0};
  }

  // The fused node's NodeDef: `last`'s name, requested device and
  // colocation, op `op`; attrs follow.
  static NodeDef Head(const Node& last, const char* op) {
    NodeDef def;
    def.set_name(last.name());
    def.set_op(op);
    def.set_device(last.requested_device());
    CopyAttr(last, "_class", &def);
    return def;
  }

  static void CopyAttr(const Node& from, const std::string& name, NodeDef* def) {
    auto it = from.attrs().find(name);
    if (it != from.attrs().end()) (*def->mutable_attr())[name] = it->second;
  }

  // Removes `chain` and adds `def` in its place, with data inputs `inputs`
  // (outside the chain) and every control edge into and out of the chain.
  // Output i of the new node feeds the consumers of `outputs[i]` (by
  // default the chain's last node); its shape is the chain's last node's.
  absl::StatusOr<Node*> Replace(const std::vector<Node*>& chain, NodeDef def,
                                const std::vector<Endpoint>& inputs,
                                std::vector<Node*> outputs = {}) {
    if (outputs.empty()) outputs.push_back(chain.back());
    const absl::flat_hash_set<const Node*> members(chain.begin(), chain.end());
    struct Consumer {
      int output;
      Endpoint end;
    };
    std::vector<Consumer> consumers;
    std::vector<Node*> control_out;
    for (size_t i = 0; i < outputs.size(); ++i) {
      for (const Edge* e : outputs[i]->out_edges()) {
        if (members.contains(e->dst)) continue;
        if (e->IsControl()) {
          control_out.push_back(e->dst);
        } else {
          consumers.push_back({static_cast<int>(i), {e->dst, e->dst_input}});
        }
      }
    }
    std::vector<Node*> control_in;
    for (const Node* n : chain) {
      for (const Edge* e : n->in_edges()) {
        if (e->IsControl() && !members.contains(e->src)) control_in.push_back(e->src);
      }
    }
    Node* last = chain.back();
    const std::string device = last->assigned_device();
    const TensorShape shape = last->output_shape(0);
    const std::string what = absl::StrCat("fusing into ", last->DebugName(), ": ");
    for (Node* n : chain) graph_->RemoveNode(n);
    absl::StatusOr<Node*> added = graph_->AddNode(std::move(def));
    if (!added.ok()) return absl::InternalError(what + added.status().ToString());
    Node* fused = *added;
    fused->set_assigned_device(device);
    fused->set_output_shape(0, shape);
    for (size_t i = 0; i < inputs.size(); ++i) {
      absl::Status s = graph_->AddEdge(inputs[i].node, inputs[i].index, fused, static_cast<int>(i));
      if (!s.ok()) return absl::InternalError(what + s.ToString());
    }
    for (const Consumer& c : consumers) {
      absl::Status s = graph_->AddEdge(fused, c.output, c.end.node, c.end.index);
      if (!s.ok()) return absl::InternalError(what + s.ToString());
    }
    for (Node* src : control_in) graph_->AddControlEdge(src, fused);
    for (Node* dst : control_out) graph_->AddControlEdge(fused, dst);
    return fused;
  }

  Graph* graph_;
  const KernelRegistry* kernels_;
  absl::flat_hash_set<std::string> keep_;
};

}  // namespace

absl::StatusOr<FuseStats> FuseOps(Graph* graph, const FuseOptions& options) {
  if (options.kernels == nullptr) return absl::InvalidArgumentError("FuseOps: no kernel registry");
  return Fuser(graph, options).Run();
}

}  // namespace sluice
