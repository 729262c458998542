#include "placement/auto_mixed_precision.h"

#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/algorithm.h"
#include "placement/device_name.h"

namespace sluice {
namespace {

// TensorFlow's lists (grappler/optimizers/auto_mixed_precision_lists.h),
// for the ops Sluice has.
const absl::flat_hash_set<std::string>& AllowList() {
  static const auto* const kList =
      new absl::flat_hash_set<std::string>{"BatchMatMul",
                                           "BatchMatMulV2",
                                           "Conv2D",
                                           "Conv2DBackpropFilter",
                                           "Conv2DBackpropInput",
                                           "Conv3D",
                                           "Conv3DBackpropFilterV2",
                                           "Conv3DBackpropInputV2",
                                           "MatMul",
                                           "DepthwiseConv2dNative",
                                           "DepthwiseConv2dNativeBackpropFilter",
                                           "DepthwiseConv2dNativeBackpropInput"};
  return *kList;
}

const absl::flat_hash_set<std::string>& InferList() {
  static const auto* const kList = new absl::flat_hash_set<std::string>{"Add",
                                                                        "AddN",
                                                                        "AddV2",
                                                                        "AvgPool",
                                                                        "AvgPoolGrad",
                                                                        "BiasAdd",
                                                                        "BiasAddGrad",
                                                                        "BiasAddV1",
                                                                        "Elu",
                                                                        "EluGrad",
                                                                        "Erf",
                                                                        "Erfc",
                                                                        "FloorDiv",
                                                                        "FusedBatchNormV2",
                                                                        "FusedBatchNormV3",
                                                                        "FusedBatchNormGradV2",
                                                                        "FusedBatchNormGradV3",
                                                                        "LeakyRelu",
                                                                        "LeakyReluGrad",
                                                                        "Mul",
                                                                        "Prod",
                                                                        "RealDiv",
                                                                        "Reciprocal",
                                                                        "Selu",
                                                                        "SeluGrad",
                                                                        "Sigmoid",
                                                                        "SigmoidGrad",
                                                                        "Softplus",
                                                                        "SoftplusGrad",
                                                                        "Sqrt",
                                                                        "Sub",
                                                                        "Tanh",
                                                                        "TanhGrad"};
  return *kList;
}

const absl::flat_hash_set<std::string>& ClearList() {
  static const auto* const kList =
      new absl::flat_hash_set<std::string>{"Abs",          "ConcatV2",     "DepthToSpace",
                                           "ExpandDims",   "Fill",         "Floor",
                                           "Gather",       "GatherNd",     "GatherV2",
                                           "Identity",     "IdentityN",    "Max",
                                           "MaxPool",      "MaxPoolGrad",  "Maximum",
                                           "Min",          "Minimum",      "Neg",
                                           "OnesLike",     "Pack",         "Pad",
                                           "PadV2",        "Relu",         "Relu6",
                                           "Relu6Grad",    "ReluGrad",     "Reshape",
                                           "Select",       "SelectV2",     "Sign",
                                           "Slice",        "Snapshot",     "SpaceToDepth",
                                           "Split",        "SplitV",       "Squeeze",
                                           "StopGradient", "StridedSlice", "StridedSliceGrad",
                                           "Tile",         "Transpose",    "Unpack",
                                           "ZerosLike"};
  return *kList;
}

// Ops whose results must stay float whatever feeds them (large or
// accumulated values): a node fed by one is not converted by inference.
const absl::flat_hash_set<std::string>& DenyList() {
  static const auto* const kList =
      new absl::flat_hash_set<std::string>{"Exp",
                                           "Expm1",
                                           "L2Loss",
                                           "Log",
                                           "Log1p",
                                           "LogSoftmax",
                                           "Mean",
                                           "Pow",
                                           "SaveV2",
                                           "Softmax",
                                           "SoftmaxCrossEntropyWithLogits",
                                           "SparseSoftmaxCrossEntropyWithLogits",
                                           "Sum"};
  return *kList;
}

class Rewriter {
 public:
  Rewriter(Graph* graph, const MixedPrecisionOptions& options) : graph_(graph), options_(options) {}

  absl::StatusOr<MixedPrecisionStats> Run() {
    ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph_));
    // One pass in dataflow order. Deny nodes, and infer or clear nodes any of
    // whose inputs comes from a denied one, are denied (TensorFlow carries
    // deny forward through those lists); allow nodes convert on their own;
    // infer and clear nodes when not denied and a converted node feeds one
    // of their converting inputs.
    for (Node* n : order) {
      const bool listed = InferList().contains(n->op()) || ClearList().contains(n->op());
      const bool kept_float = n->GetAttr<bool>(kMixedPrecisionDenyAttr).value_or(false);
      if (DenyList().contains(n->op()) || kept_float) {
        denied_.insert(n);
        continue;
      }
      if (listed) {
        bool fed_by_denied = false;
        for (const Edge* e : n->in_edges())
          fed_by_denied |= !e->IsControl() && denied_.contains(e->src);
        if (fed_by_denied) {
          denied_.insert(n);
          continue;
        }
      }
      if (!Convertible(*n)) continue;
      if (AllowList().contains(n->op())) {
        converted_.insert(n);
        continue;
      }
      if (!listed) continue;
      const Slots& slots = slots_.at(n);
      for (const Edge* e : n->in_edges()) {
        if (!e->IsControl() && slots.in[e->dst_input] && converted_.contains(e->src)) {
          converted_.insert(n);
          break;
        }
      }
    }
    RETURN_IF_ERROR(Convert(order));
    stats_.converted = static_cast<int>(converted_.size());
    return stats_;
  }

 private:
  // Which inputs and outputs of a node turn from float to the 16-bit type
  // when its T does (an op may have other float slots typed by another attr,
  // as FusedBatchNorm's U).
  struct Slots {
    std::vector<bool> in, out;
  };

  // A node of a list's op whose T is float, on an enabled device type that
  // has the op's kernel with T = the 16-bit type.
  bool Convertible(const Node& n) {
    const auto t = n.attrs().find("T");
    if (t == n.attrs().end() || t->second.type() != DT_FLOAT) return false;
    absl::StatusOr<DeviceName> device = DeviceName::Parse(n.assigned_device());
    if (!device.ok() || !device->type) return false;
    bool enabled = false;
    for (const std::string& type : options_.device_types) enabled |= type == *device->type;
    if (!enabled) return false;
    AttrMap attrs = n.attrs();
    attrs["T"].set_type(options_.type);
    const AttrDef* def = n.op_def().FindAttr("T");
    if (def == nullptr || !ValidateAttrValue(*def, attrs["T"]).ok()) return false;
    if (options_.kernels->FindKernelDef(n.op(), attrs, *device->type) == nullptr ||
        !HasCasts(*device->type)) {
      return false;
    }
    absl::StatusOr<NodeTypes> after = ComputeNodeTypes(n.op_def(), attrs);
    if (!after.ok()) return false;
    Slots slots;
    for (int i = 0; i < n.num_inputs(); ++i) {
      slots.in.push_back(n.input_type(i) == DT_FLOAT && after->inputs[i] == options_.type);
    }
    for (int i = 0; i < n.num_outputs(); ++i) {
      slots.out.push_back(n.output_type(i) == DT_FLOAT && after->outputs[i] == options_.type);
    }
    slots_[&n] = std::move(slots);
    return true;
  }

  // Both casts between float and the 16-bit type run on `device_type`.
  bool HasCasts(const std::string& device_type) const {
    for (const auto& [from, to] :
         {std::pair(DT_FLOAT, options_.type), std::pair(options_.type, DT_FLOAT)}) {
      AttrMap attrs;
      attrs["SrcT"].set_type(from);
      attrs["DstT"].set_type(to);
      attrs["Truncate"].set_b(false);
      if (options_.kernels->FindKernelDef("Cast", attrs, device_type) == nullptr) return false;
    }
    return true;
  }

  // Retypes the converted nodes and puts a cast on every edge where one
  // meets float: every float edge touching them is cut first (so no edge
  // ever joins two types), then each is joined again, directly between two
  // converted nodes, through a cast otherwise.
  absl::Status Convert(const std::vector<Node*>& order) {
    struct Link {
      Node* src;
      int src_output;
      Node* dst;
      int dst_input;
      bool up;  // a converted src feeding a float dst
    };
    std::vector<Link> links;
    std::vector<const Edge*> cut;
    for (Node* n : order) {
      if (!converted_.contains(n)) continue;
      const Slots& slots = slots_.at(n);
      for (const Edge* e : n->in_edges()) {
        if (!e->IsControl() && slots.in[e->dst_input]) {
          links.push_back({e->src, e->src_output, n, e->dst_input, false});
          cut.push_back(e);
        }
      }
      for (const Edge* e : n->out_edges()) {
        // An edge into another converted node's converting input is that
        // node's in-link.
        if (e->IsControl() || !slots.out[e->src_output] ||
            (converted_.contains(e->dst) && slots_.at(e->dst).in[e->dst_input])) {
          continue;
        }
        links.push_back({n, e->src_output, e->dst, e->dst_input, true});
        cut.push_back(e);
      }
    }
    for (const Edge* e : cut) graph_->RemoveEdge(e);
    for (Node* n : order) {
      if (converted_.contains(n)) RETURN_IF_ERROR(graph_->SetTypeAttr(n, "T", options_.type));
    }
    for (const Link& l : links) {
      Node* src = l.src;
      int output = l.src_output;
      if (l.up) {
        ASSIGN_OR_RETURN(src, CastOf(l.src, l.src_output, options_.type, DT_FLOAT, *l.src));
        output = 0;
      } else if (!converted_.contains(src) || src->output_type(output) != options_.type) {
        ASSIGN_OR_RETURN(src, CastOf(l.src, l.src_output, DT_FLOAT, options_.type, *l.dst));
        output = 0;
      }
      RETURN_IF_ERROR(graph_->AddEdge(src, output, l.dst, l.dst_input));
    }
    return absl::OkStatus();
  }

  // One Cast of src:output to `to` per device, on `beside`'s device.
  absl::StatusOr<Node*> CastOf(Node* src, int output, DataType from, DataType to,
                               const Node& beside) {
    const auto key = std::make_tuple(src->id(), output, to, beside.assigned_device());
    if (auto it = casts_.find(key); it != casts_.end()) return it->second;
    const char* suffix = to == DT_FLOAT ? "Fp32" : to == DT_HALF ? "Fp16" : "Bf16";
    const std::string base = output == 0 ? src->name() : absl::StrCat(src->name(), "_", output);
    NodeDef def;
    def.set_name(graph_->NewName(absl::StrCat(base, "/CastTo", suffix, "-AutoMixedPrecision")));
    def.set_op("Cast");
    def.set_device(beside.requested_device());
    (*def.mutable_attr())["SrcT"].set_type(from);
    (*def.mutable_attr())["DstT"].set_type(to);
    ASSIGN_OR_RETURN(Node * cast, graph_->AddNode(std::move(def)));
    cast->set_assigned_device(beside.assigned_device());
    cast->set_output_shape(0, src->output_shape(output));
    RETURN_IF_ERROR(graph_->AddEdge(src, output, cast, 0));
    casts_[key] = cast;
    ++stats_.casts;
    return cast;
  }

  Graph* const graph_;
  const MixedPrecisionOptions& options_;
  absl::flat_hash_set<Node*> converted_;
  absl::flat_hash_set<const Node*> denied_;
  absl::flat_hash_map<const Node*, Slots> slots_;  // of the convertible nodes
  std::map<std::tuple<int, int, DataType, std::string>, Node*> casts_;
  MixedPrecisionStats stats_;
};

}  // namespace

absl::StatusOr<MixedPrecisionStats> AutoMixedPrecision(Graph* graph,
                                                       const MixedPrecisionOptions& options) {
  if (options.kernels == nullptr) {
    return absl::InvalidArgumentError("AutoMixedPrecision: no kernel registry");
  }
  if (options.type != DT_BFLOAT16 && options.type != DT_HALF) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AutoMixedPrecision: the type must be bfloat16 or half, not ", DataTypeName(options.type)));
  }
  return Rewriter(graph, options).Run();
}

}  // namespace sluice
