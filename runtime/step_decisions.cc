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

// Walks back from `first` through the nodes its value derives from (those
// not in *fixed yet, which it adds), appending each feed it reaches to
// *feeds. At a value that may change from run to run: FailedPrecondition
// naming `decider`, or, without one, the walk goes no further there.
absl::Status WalkSources(const Node* first, const Node* decider, absl::flat_hash_set<int>* fixed,
                         std::vector<int>* feeds) {
  if (!fixed->insert(first->id()).second) return absl::OkStatus();
  std::vector<const Node*> stack = {first};
  std::vector<int> inputs;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->op() == kArgOp) {
      ASSIGN_OR_RETURN(const int index, FeedIndex(*n));
      feeds->push_back(index);
    }
    const std::string why = ValueSources(*n, &inputs);
    if (!why.empty()) {
      if (decider == nullptr) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          decider->DebugName(), " decides on ", why, ", ", n->DebugName(),
          ", which may change from run to run: a recording would freeze its "
          "branches and trip counts"));
    }
    for (int i : inputs) {
      const Edge* e = n->input_edge(i);
      if (e != nullptr && fixed->insert(e->src->id()).second) stack.push_back(e->src);
    }
  }
  return absl::OkStatus();
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
  for (const Node* decider : graph.nodes()) {
    const int slot = DecisionInput(*decider);
    if (slot < 0 || decider->input_edge(slot) == nullptr) continue;
    RETURN_IF_ERROR(WalkSources(decider->input_edge(slot)->src, decider, &fixed, &feeds));
  }
  // The feeds the host reads. Their walks stop at a value that may change
  // instead of failing: a device value there fails the recording itself
  // (it refuses device-to-host copies); a host one (a TensorArray's size,
  // a value popped off a stack) is the step's own state, which follows from
  // what the signature fixes (its trip counts and keyed feeds).
  for (const Node* reader : graph.nodes()) {
    for (int i = 0; i < reader->num_inputs(); ++i) {
      const Edge* e = reader->input_edge(i);
      if (e == nullptr || !ReadsValueOnHost(*reader, i, reads_on_host)) continue;
      RETURN_IF_ERROR(WalkSources(e->src, /*decider=*/nullptr, &fixed, &feeds));
    }
  }
  std::sort(feeds.begin(), feeds.end());
  feeds.erase(std::unique(feeds.begin(), feeds.end()), feeds.end());
  return feeds;
}

}  // namespace sluice
