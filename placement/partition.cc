#include "placement/partition.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/algorithm.h"
#include "graph/attr_value.h"
#include "graph/control_flow_info.h"

namespace sluice {
namespace {

std::string TensorName(const Node& n, int index) {
  return index == 0 ? n.name() : absl::StrCat(n.name(), ":", index);
}

NodeDef ScalarFloatConst(std::string name, std::string device) {
  NodeDef def;
  def.set_name(std::move(name));
  def.set_op("Const");
  def.set_device(std::move(device));
  ::tensorflow::TensorProto zero;
  zero.set_dtype(DT_FLOAT);
  zero.mutable_tensor_shape();
  zero.add_float_val(0.0f);
  (*def.mutable_attr())["dtype"] = MakeAttr(DT_FLOAT);
  (*def.mutable_attr())["value"] = MakeAttr(zero);
  return def;
}

NodeDef ControlLoopNode(std::string name, const char* op, std::string device,
                        std::vector<std::string> inputs) {
  NodeDef def;
  def.set_name(std::move(name));
  def.set_op(op);
  def.set_device(std::move(device));
  for (std::string& in : inputs) def.add_input(std::move(in));
  (*def.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  return def;
}

class Partitioner {
 public:
  Partitioner(const Graph& graph, const PartitionOptions& options)
      : graph_(graph), options_(options) {}

  absl::StatusOr<std::map<std::string, GraphDef>> Run() {
    ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph_));
    ASSIGN_OR_RETURN(cf_, BuildControlFlowInfo(graph_, order));
    loop_cond_.assign(cf_.frames.size(), nullptr);
    for (const Node* n : order) {
      if (n->control_flow() == ControlFlowRole::kLoopCond) loop_cond_[cf_.frame_of[n->id()]] = n;
    }
    for (const Node* n : graph_.nodes()) {
      const std::string loc = Loc(*n);
      if (loc.empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot partition: node ", n->DebugName(), " has no device"));
      }
      NodeDef def = n->def();
      def.clear_input();
      def.set_device(loc);
      // Updates of a variable read here that the read must follow but that
      // may reach this node only through other devices: ordered directly.
      std::set<std::string> read_after;
      for (int k = 0; k < n->num_inputs(); ++k) {
        const Edge* e = n->input_edge(k);
        if (Loc(*e->src) == loc) {
          def.add_input(TensorName(*e->src, e->src_output));
          for (int id : UpdatesBefore(*e, *n)) read_after.insert(graph_.node(id)->name());
        } else {
          ASSIGN_OR_RETURN(std::string recv,
                           RecvFor(*e->src, e->src_output, loc, UpdatesBefore(*e, *n)));
          def.add_input(std::move(recv));
        }
      }
      // Control inputs from another device, grouped by that device and
      // their frame: each group crosses as one transfer.
      std::map<std::pair<std::string, int>, std::vector<const Node*>> remote_controls;
      for (const Edge* e : n->in_edges()) {
        if (!e->IsControl()) continue;
        if (Loc(*e->src) == loc) {
          def.add_input(absl::StrCat("^", e->src->name()));
          read_after.erase(e->src->name());
        } else {
          remote_controls[{Loc(*e->src), OutputFrame(*e->src)}].push_back(e->src);
        }
      }
      for (auto& [where, srcs] : remote_controls) {
        ASSIGN_OR_RETURN(std::string recv, ControlRecvFor(std::move(srcs), loc));
        def.add_input(absl::StrCat("^", recv));
      }
      for (const std::string& u : read_after) def.add_input(absl::StrCat("^", u));
      *Part(loc)->add_node() = std::move(def);
    }
    return std::move(parts_);
  }

 private:
  std::string Loc(const Node& n) const {
    return options_.node_to_loc ? options_.node_to_loc(n) : n.assigned_device();
  }
  GraphDef* Part(const std::string& loc) {
    auto [it, added] = parts_.try_emplace(loc);
    if (added) {
      *it->second.mutable_versions() = graph_.versions();
      // Every partition carries the library: its kernels may run functions
      // (a dataset's map function) on its device.
      if (graph_.library().function_size() > 0) *it->second.mutable_library() = graph_.library();
    }
    return &it->second;
  }
  int64_t Incarnation(const std::string& device) const {
    return static_cast<int64_t>(options_.get_incarnation ? options_.get_incarnation(device) : 1);
  }

  // For `e` reading a variable (a ref output) into a non-ref input of
  // `reader`: the ids of the variable's updates (nodes taking that output by
  // reference, on the variable's device) that the reader is ordered after,
  // through any path. On one device the executor makes such a read see those
  // updates (runtime/executor.h); across partitions the path may be cut, so
  // the read (or the _Send carrying it) is ordered after them explicitly.
  // Empty for any other edge.
  std::vector<int> UpdatesBefore(const Edge& e, const Node& reader) const {
    std::vector<int> out;
    if (!IsRefType(e.src->output_type(e.src_output)) || IsRefType(reader.input_type(e.dst_input))) {
      return out;
    }
    std::vector<bool> is_update(graph_.num_node_ids(), false);
    bool any = false;
    const std::string src_loc = Loc(*e.src);
    for (const Edge* o : e.src->out_edges()) {
      if (!o->IsControl() && o->src_output == e.src_output &&
          IsRefType(o->dst->input_type(o->dst_input)) && Loc(*o->dst) == src_loc) {
        is_update[o->dst->id()] = any = true;
      }
    }
    if (!any) return out;
    std::vector<bool> seen(graph_.num_node_ids(), false);
    std::vector<const Node*> stack = {&reader};
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      for (const Edge* in : n->in_edges()) {
        if (seen[in->src->id()]) continue;
        seen[in->src->id()] = true;
        if (is_update[in->src->id()]) out.push_back(in->src->id());
        stack.push_back(in->src);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // The _Recv on `dst_loc` for src:index, with its _Send, made once per
  // (tensor, destination, updates the read must follow).
  absl::StatusOr<std::string> RecvFor(const Node& src, int index, const std::string& dst_loc,
                                      std::vector<int> after) {
    auto key = std::make_tuple(src.id(), index, dst_loc, after);
    auto it = recv_of_.find(key);
    if (it != recv_of_.end()) return it->second;
    std::vector<std::string> send_after;
    for (int id : after) send_after.push_back(graph_.node(id)->name());
    ASSIGN_OR_RETURN(std::string recv,
                     AddTransfer(TensorName(src, index), src, Loc(src),
                                 BaseType(src.output_type(index)), src.output_shape(index),
                                 dst_loc, send_after));
    recv_of_.emplace(std::move(key), recv);
    return recv;
  }

  // Control edges crossing devices from `srcs` (one device, one frame) to
  // a node on dst_loc: srcs -> Const (on their device) -> _Send ... _Recv ->
  // the node, made once per (set of sources, destination device). One
  // transfer for the whole set: a train op waiting for a parameter server's
  // eight updates costs one RecvTensor a step, not eight.
  absl::StatusOr<std::string> ControlRecvFor(std::vector<const Node*> srcs,
                                             const std::string& dst_loc) {
    std::sort(srcs.begin(), srcs.end(), [](const Node* a, const Node* b) { return a->id() < b->id(); });
    srcs.erase(std::unique(srcs.begin(), srcs.end()), srcs.end());
    std::vector<int> ids;
    for (const Node* src : srcs) ids.push_back(src->id());
    auto key = std::make_pair(std::move(ids), dst_loc);
    auto it = control_recv_of_.find(key);
    if (it != control_recv_of_.end()) return it->second;
    const Node& first = *srcs.front();
    const std::string src_loc = Loc(first);
    const std::string label = srcs.size() == 1
                                  ? first.name()
                                  : absl::StrCat(first.name(), "_and_", srcs.size() - 1, "_more");
    NodeDef dummy = ScalarFloatConst(absl::StrCat("_ctrl_", label, "_", next_id_++), src_loc);
    for (const Node* src : srcs) dummy.add_input(absl::StrCat("^", src->name()));
    std::string dummy_name = dummy.name();
    *Part(src_loc)->add_node() = std::move(dummy);
    ASSIGN_OR_RETURN(std::string recv,
                     AddTransfer(dummy_name, first, src_loc, DT_FLOAT, TensorShape({}), dst_loc, {}));
    control_recv_of_.emplace(std::move(key), recv);
    return recv;
  }

  // Adds the _Send of `tensor` (an output of `src`, or of a node in its
  // frame) on src_loc, run after the `send_after` nodes (on src_loc too),
  // and its _Recv on dst_loc; returns the _Recv's name. Inside a loop the
  // _Recv runs in the loop's frame on dst_loc: the control loop there
  // starts it each iteration.
  absl::StatusOr<std::string> AddTransfer(const std::string& tensor, const Node& src,
                                          const std::string& src_loc, DataType dtype,
                                          const TensorShape& shape, const std::string& dst_loc,
                                          const std::vector<std::string>& send_after) {
    const std::string& src_name = src.name();
    const int frame = OutputFrame(src);
    const int64_t id = next_id_++;
    const std::string edge = absl::StrCat("edge_", id, "_", src_name);
    auto common = [&](NodeDef* def) {
      auto& attr = *def->mutable_attr();
      attr["T"] = MakeAttr(dtype);
      attr["tensor_name"] = MakeAttr(edge);
      attr["send_device"] = MakeAttr(src_loc);
      attr["send_device_incarnation"] = MakeAttr(Incarnation(src_loc));
      attr["recv_device"] = MakeAttr(dst_loc);
      attr["client_terminated"] = MakeAttr(false);
    };
    NodeDef send;
    send.set_name(absl::StrCat("_send_", src_name, "_", id));
    send.set_op("_Send");
    send.set_device(src_loc);
    send.add_input(tensor);
    for (const std::string& n : send_after) send.add_input(absl::StrCat("^", n));
    common(&send);
    *Part(src_loc)->add_node() = std::move(send);
    NodeDef recv;
    recv.set_name(absl::StrCat("_recv_", src_name, "_", id));
    recv.set_op("_Recv");
    recv.set_device(dst_loc);
    common(&recv);
    (*recv.mutable_attr())["shape"] = MakeAttr(shape);
    if (frame > 0) {
      ASSIGN_OR_RETURN(std::string merge, ControlLoop(frame, dst_loc));
      recv.add_input(absl::StrCat("^", merge));
    }
    std::string name = recv.name();
    *Part(dst_loc)->add_node() = std::move(recv);
    return name;
  }

  // The frame a node's outputs are in: an Enter's lead into its loop, an
  // Exit's out of it.
  int OutputFrame(const Node& n) const {
    const int frame = cf_.frame_of[n.id()];
    if (n.control_flow() == ControlFlowRole::kEnter) return cf_.enter_child[n.id()];
    if (n.control_flow() == ControlFlowRole::kExit) return cf_.frames[frame].parent;
    return frame;
  }

  // The control loop of loop `frame` on `loc` (TensorFlow's design, Yu et
  // al. 2018 section 4.2): Enter -> Merge -> Switch(pred: the loop's
  // LoopCond, received from its device) -> NextIteration -> Merge. It runs
  // one iteration on `loc` per iteration of the loop, so every _Recv of the
  // frame there, given a control input from its Merge, runs once per
  // iteration with that iteration's rendezvous key. A nested loop's control
  // loop is entered from its parent's; the outermost from a constant.
  // Returns the Merge's name; made once per (frame, loc).
  absl::StatusOr<std::string> ControlLoop(int frame, const std::string& loc) {
    auto key = std::make_pair(frame, loc);
    auto it = control_loop_of_.find(key);
    if (it != control_loop_of_.end()) return it->second;
    const FrameInfo& info = cf_.frames[frame];
    const Node* cond = loop_cond_[frame];
    if (cond == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot partition while loop '", info.name, "' over devices: it has no LoopCond"));
    }
    const std::string prefix = absl::StrCat("_cloop_", next_id_++, "/");
    const std::string merge_name = prefix + "merge";
    // Known before the pred's _Recv is made: that _Recv runs in this loop.
    control_loop_of_.emplace(key, merge_name);
    std::string entry;
    if (info.parent == 0) {
      entry = prefix + "start";
      *Part(loc)->add_node() = ScalarFloatConst(entry, loc);
    } else {
      ASSIGN_OR_RETURN(entry, ControlLoop(info.parent, loc));
    }
    std::string pred = cond->name();
    if (Loc(*cond) != loc) {
      ASSIGN_OR_RETURN(pred, RecvFor(*cond, 0, loc, {}));
    }
    NodeDef enter = ControlLoopNode(prefix + "enter", "Enter", loc, {entry});
    (*enter.mutable_attr())["frame_name"] = MakeAttr(info.name);
    (*enter.mutable_attr())["is_constant"] = MakeAttr(false);
    (*enter.mutable_attr())["parallel_iterations"] =
        MakeAttr(static_cast<int64_t>(info.parallel_iterations));
    NodeDef merge = ControlLoopNode(merge_name, "Merge", loc, {prefix + "enter", prefix + "next"});
    (*merge.mutable_attr())["N"] = MakeAttr(static_cast<int64_t>(2));
    NodeDef sw = ControlLoopNode(prefix + "switch", "Switch", loc, {merge_name, pred});
    NodeDef next = ControlLoopNode(prefix + "next", "NextIteration", loc, {prefix + "switch:1"});
    for (NodeDef* def : {&enter, &merge, &sw, &next}) *Part(loc)->add_node() = std::move(*def);
    return merge_name;
  }

  const Graph& graph_;
  const PartitionOptions& options_;
  ControlFlowInfo cf_;
  std::vector<const Node*> loop_cond_;  // by frame
  absl::flat_hash_map<std::pair<int, std::string>, std::string> control_loop_of_;
  std::map<std::string, GraphDef> parts_;
  absl::flat_hash_map<std::tuple<int, int, std::string, std::vector<int>>, std::string> recv_of_;
  absl::flat_hash_map<std::pair<std::vector<int>, std::string>, std::string> control_recv_of_;
  int64_t next_id_ = 0;
};

}  // namespace

absl::StatusOr<std::map<std::string, GraphDef>> Partition(const Graph& graph,
                                                          const PartitionOptions& options) {
  return Partitioner(graph, options).Run();
}

}  // namespace sluice
