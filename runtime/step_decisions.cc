#include "runtime/step_decisions.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/frame_ops.h"

namespace sluice {
namespace {

// Ops whose output follows from their input's shape alone.
bool ReadsOnlyShapes(const std::string& op) {
  return op == "Shape" || op == "ShapeN" || op == "Size" || op == "Rank";
}

// The inputs `n`'s value derives from (into *inputs); or, when the value
// may differ between runs of the same feed shapes and values, what it is.
// A feed (_Arg) derives from nothing: the caller keys on its value.
std::string ValueSources(const Node& n, std::vector<int>* inputs) {
  inputs->clear();
  if (ReadsOnlyShapes(n.op()) || n.op() == kArgOp) return "";
  if (n.op() == "TensorArraySizeV3" || n.op() == "TensorArrayGradV3") {
    inputs->push_back(0);  // the array's size: follow its handle
    return "";
  }
  if (n.op() == "TensorArrayV3") {
    absl::StatusOr<bool> dynamic = n.GetAttr<bool>("dynamic_size");
    if (!dynamic.ok() || *dynamic) return "the size of a TensorArray of dynamic size";
    inputs->push_back(0);  // the size it is made with
    return "";
  }
  if (n.op_def().is_variable) return "a variable's value";
  if (n.IsStateful()) return "the output of a stateful op";
  for (int i = 0; i < n.num_inputs(); ++i) inputs->push_back(i);
  return "";
}

// The input of a deciding node that it reads on the host; -1 for others.
int DecisionInput(const Node& n) {
  if (n.op() == "Assert") return 0;  // whether the step fails
  switch (n.control_flow()) {
    case ControlFlowRole::kSwitch:
      return 1;  // the predicate
    case ControlFlowRole::kLoopCond:
      return 0;
    default:
      return -1;
  }
}

// Whether input `i` of `n` is a value its kernel takes in host memory (not
// a fetch, a handle or a reference). A shape op counts when its kernel
// takes its operand there (a GPU's int32 Shape, a host kernel): the
// executor copies the value over all the same.
bool ReadsValueOnHost(const Node& n, int i, HostReads reads_on_host) {
  if (n.op() == kRetvalOp) return false;
  const DataType t = n.input_type(i);
  if (IsRefType(t) || t == DT_RESOURCE || t == ::tensorflow::DT_VARIANT || t == DT_STRING) return false;
  return reads_on_host(n, i);
}

// The index of _Arg `n` (InvalidArgument when negative).
absl::StatusOr<int> FeedIndex(const Node& n) {
  absl::StatusOr<int64_t> index = n.GetAttr<int64_t>("index");
  if (!index.ok()) return index.status();
  if (*index < 0) {
    return absl::InvalidArgumentError(absl::StrCat(n.DebugName(), " has a negative index ", *index));
  }
  return static_cast<int>(*index);
}

}  // namespace

absl::StatusOr<std::vector<int>> DecidingFeeds(const Graph& graph) {
  return DecidingFeeds(graph, [](const Node&, int) { return false; });
}

absl::StatusOr<std::vector<int>> DecidingFeeds(const Graph& graph, HostReads reads_on_host) {
  std::vector<int> feeds;
  // Nodes already walked (a walk that finds a value that may change
  // returns), so the Switches of one loop, which share its LoopCond, walk it
  // once.
  absl::flat_hash_set<int> fixed;
  std::vector<const Node*> stack;
  std::vector<int> inputs;
  for (const Node* decider : graph.nodes()) {
    const int slot = DecisionInput(*decider);
    if (slot < 0 || decider->input_edge(slot) == nullptr) continue;
    const Node* first = decider->input_edge(slot)->src;
    if (!fixed.insert(first->id()).second) continue;
    stack.assign(1, first);
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (n->op() == kArgOp) {
        ASSIGN_OR_RETURN(const int index, FeedIndex(*n));
        feeds.push_back(index);
      }
      const std::string why = ValueSources(*n, &inputs);
      if (!why.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            decider->DebugName(), " decides on ", why, ", ", n->DebugName(),
            ", which may change from run to run: a recording would freeze its "
            "branches and trip counts"));
      }
      for (int i : inputs) {
        const Edge* e = n->input_edge(i);
        if (e != nullptr && fixed.insert(e->src->id()).second) stack.push_back(e->src);
      }
    }
  }
  // The feeds the host reads: whatever their values reach stops at a value
  // that may change (the recording itself refuses to copy a device value to
  // the host), and keeps no step out.
  for (const Node* reader : graph.nodes()) {
    for (int i = 0; i < reader->num_inputs(); ++i) {
      const Edge* e = reader->input_edge(i);
      if (e == nullptr || !ReadsValueOnHost(*reader, i, reads_on_host)) continue;
      if (!fixed.insert(e->src->id()).second) continue;
      stack.assign(1, e->src);
      while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        if (n->op() == kArgOp) {
          ASSIGN_OR_RETURN(const int index, FeedIndex(*n));
          feeds.push_back(index);
        }
        if (!ValueSources(*n, &inputs).empty()) continue;
        for (int k : inputs) {
          const Edge* in = n->input_edge(k);
          if (in != nullptr && fixed.insert(in->src->id()).second) stack.push_back(in->src);
        }
      }
    }
  }
  std::sort(feeds.begin(), feeds.end());
  feeds.erase(std::unique(feeds.begin(), feeds.end()), feeds.end());
  return feeds;
}

}  // namespace sluice
