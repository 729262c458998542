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

bool IsFloat(const Node& n) {
  absl::StatusOr<DataType> t = n.GetAttr<DataType>("T");
  return t.ok() && *t == DT_FLOAT;
}

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
    for (int id = 0; id < num_ids; ++id) {
      Node* n = graph_->node(id);
      if (n == nullptr || n->op() != "ApplyGradientDescent") continue;
      ASSIGN_OR_RETURN(bool fused, FuseMatMulApply(n));
      if (fused) ++stats.matmul_apply_gradient_descent;
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

  // Every node of `chain` is float and on one device whose type runs `op`.
  bool Fusible(const std::vector<Node*>& chain, const char* op) const {
    const std::string& device = chain.front()->assigned_device();
    for (const Node* n : chain) {
      if (!IsFloat(*n) || n->assigned_device() != device) return false;
    }
    if (device.empty() || graph_->registry()->Find(op) == nullptr) return false;
    absl::StatusOr<DeviceName> name = DeviceName::Parse(device);
    return name.ok() && name->type && kernels_->HasKernelsFor(op, *name->type);
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
    if (!Fusible(chain, "_FusedMatMul")) {
      if (chain.size() == 2) return 0;
      chain.pop_back();  // fuse the bias alone when the Relu cannot join
      if (!Fusible(chain, "_FusedMatMul")) return 0;
    }
    NodeDef def = Head(*chain.back(), "_FusedMatMul");
    CopyAttr(*matmul, "transpose_a", &def);
    CopyAttr(*matmul, "transpose_b", &def);
    CopyAttr(*matmul, "T", &def);
    (*def.mutable_attr())["num_args"] = MakeAttr(int64_t{1});
    std::vector<std::string> ops = {"BiasAdd"};
    if (chain.size() == 3) ops.push_back("Relu");
    (*def.mutable_attr())["fused_ops"] = MakeAttr(ops);
    RETURN_IF_ERROR(Replace(chain, std::move(def),
                            {InputEnd(*matmul, 0), InputEnd(*matmul, 1), InputEnd(*bias_add, 1)}));
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
                             InputEnd(*matmul, 1)}));
    return true;
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
  // (outside the chain), the last node's consumers and every control edge
  // into the chain.
  absl::Status Replace(const std::vector<Node*>& chain, NodeDef def,
                       const std::vector<Endpoint>& inputs) {
    Node* last = chain.back();
    std::vector<Endpoint> consumers;
    std::vector<Node*> control_out;
    for (const Edge* e : last->out_edges()) {
      if (e->IsControl()) {
        control_out.push_back(e->dst);
      } else {
        consumers.push_back({e->dst, e->dst_input});
      }
    }
    std::vector<Node*> control_in;
    for (const Node* n : chain) {
      for (const Edge* e : n->in_edges()) {
        if (e->IsControl()) control_in.push_back(e->src);
      }
    }
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
    for (const Endpoint& c : consumers) {
      absl::Status s = graph_->AddEdge(fused, 0, c.node, c.index);
      if (!s.ok()) return absl::InternalError(what + s.ToString());
    }
    for (Node* src : control_in) graph_->AddControlEdge(src, fused);
    for (Node* dst : control_out) graph_->AddControlEdge(fused, dst);
    return absl::OkStatus();
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
