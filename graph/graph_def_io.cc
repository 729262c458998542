// GraphDef files (binary or text, detected) and GraphDef -> Graph import.
// See graph_def_io.h.
#include "graph/graph_def_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/text_format.h"
#include "graph/algorithm.h"
#include "graph/shape_inference.h"
#include "graph/text_proto.h"

namespace sluice {
namespace {

// True when the bytes could be a text-format file: no control characters
// other than whitespace. Binary GraphDefs are full of small length bytes.
bool LooksLikeText(absl::string_view bytes) {
  for (unsigned char c : bytes) {
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') {
      return false;
    }
    if (c == 0x7f) return false;
  }
  return true;
}

// A binary parse succeeds on many byte strings that are not graphs (every
// field unknown); accept it only when something GraphDef knows was read.
bool HasKnownContent(const GraphDef& def) {
  return def.node_size() > 0 || def.has_versions() || def.has_library();
}

absl::Status ErrnoStatus(int err, absl::string_view what, const std::string& path) {
  std::string msg = absl::StrCat(std::string(what), " '", path, "': ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(msg);
    default:
      return absl::InvalidArgumentError(msg);
  }
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (f == nullptr) return ErrnoStatus(errno, "cannot open graph file", path);
  std::string bytes;
  char buf[1 << 16];
  while (true) {
    size_t n = std::fread(buf, 1, sizeof(buf), f.get());
    bytes.append(buf, n);
    if (n < sizeof(buf)) break;
  }
  if (std::ferror(f.get())) return ErrnoStatus(errno, "cannot read graph file", path);
  return bytes;
}

std::string NodeContext(const NodeDef& def) { return absl::StrCat("node '", def.name(), "'"); }

// Connects the inputs listed in `def` to `dst`.
absl::Status ConnectInputs(const NodeDef& def, Node* dst, Graph* graph) {
  int data_inputs = 0;
  bool seen_control = false;
  for (const std::string& input : def.input()) {
    absl::StatusOr<TensorId> id = ParseTensorName(input);
    if (!id.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(NodeContext(def), ": malformed input '", input,
                                                     "': ", id.status().message()));
    }
    Node* src = graph->FindNode(id->node);
    if (src == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(NodeContext(def), ": input '", input,
                                                     "' refers to unknown node '", id->node, "'"));
    }
    if (id->index == Edge::kControlSlot) {
      seen_control = true;
      graph->AddControlEdge(src, dst);
      continue;
    }
    if (seen_control) {
      return absl::InvalidArgumentError(
          absl::StrCat(NodeContext(def), ": data input '", input, "' comes after a control input"));
    }
    if (id->index < 0 || id->index >= src->num_outputs()) {
      return absl::InvalidArgumentError(
          absl::StrCat(NodeContext(def), ": input '", input, "' refers to output ", id->index,
                       " of ", src->DebugName(), ", which has ", src->num_outputs(), " output(s)"));
    }
    if (data_inputs >= dst->num_inputs()) {
      return absl::InvalidArgumentError(absl::StrCat(NodeContext(def), ": too many data inputs (",
                                                     "op ", def.op(), " takes ", dst->num_inputs(),
                                                     ")"));
    }
    absl::Status s = graph->AddEdge(src, id->index, dst, data_inputs);
    if (!s.ok()) {
      return AddContext(s,
                        absl::StrCat(NodeContext(def), ": input ", data_inputs, " '", input, "'"));
    }
    ++data_inputs;
  }
  if (data_inputs != dst->num_inputs()) {
    return absl::InvalidArgumentError(absl::StrCat(NodeContext(def), ": has ", data_inputs,
                                                   " data input(s), op ", def.op(), " takes ",
                                                   dst->num_inputs()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GraphDef> ParseGraphDef(absl::string_view bytes) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph is ", bytes.size(), " bytes; protocol buffers cannot hold more than 2 GiB"));
  }
  GraphDef def;
  std::string text_error;
  if (LooksLikeText(bytes)) {
    absl::Status parsed = ParseTextProto(bytes, &def);
    if (parsed.ok()) return def;
    text_error = std::string(parsed.message());
    def.Clear();
  }
  {
    // Invalid UTF-8 in string fields makes protobuf log; the caller gets the
    // status instead.
    google::protobuf::LogSilencer silence;
    if (def.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
        (bytes.empty() || HasKnownContent(def))) {
      return def;
    }
  }
  std::string msg = "not a GraphDef (binary or text)";
  if (!text_error.empty()) absl::StrAppend(&msg, "; as text: ", text_error);
  return absl::InvalidArgumentError(msg);
}

absl::StatusOr<GraphDef> ReadGraphDefFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  absl::StatusOr<GraphDef> def = ParseGraphDef(bytes);
  if (!def.ok()) return AddContext(def.status(), absl::StrCat("graph file '", path, "'"));
  return def;
}

absl::Status WriteGraphDefFile(const GraphDef& def, const std::string& path,
                               GraphFileFormat format) {
  std::string bytes;
  if (format == GraphFileFormat::kText) {
    if (!google::protobuf::TextFormat::PrintToString(def, &bytes)) {
      return absl::InternalError(absl::StrCat("cannot print graph for '", path, "' as text"));
    }
  } else if (!def.SerializeToString(&bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot serialize graph for '", path, "' (larger than 2 GiB?)"));
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return ErrnoStatus(errno, "cannot create graph file", path);
  size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
  int write_errno = errno;
  if (std::fclose(f) != 0 && written == bytes.size()) {
    return ErrnoStatus(errno, "cannot write graph file", path);
  }
  if (written != bytes.size()) return ErrnoStatus(write_errno, "cannot write graph file", path);
  return absl::OkStatus();
}

namespace {

// Graphs from TensorFlow producers up to 21 wrote a Placeholder of unknown
// shape as an empty `shape {}`; TensorFlow reads it back as unknown, not as a
// scalar, and so does Sluice.
constexpr int kLastProducerWithLegacyPlaceholderShape = 21;

void ApplyLegacyPlaceholderShape(int producer, NodeDef* node) {
  if (producer > kLastProducerWithLegacyPlaceholderShape || node->op() != "Placeholder") return;
  auto it = node->mutable_attr()->find("shape");
  if (it == node->mutable_attr()->end() || !it->second.has_shape()) return;
  tensorflow::TensorShapeProto* shape = it->second.mutable_shape();
  if (shape->dim_size() == 0 && !shape->unknown_rank()) shape->set_unknown_rank(true);
}

}  // namespace

// Every function a func or list(func) attr of `node` names is in the graph's
// library (or is a registered op, which TensorFlow allows as a function).
static absl::Status CheckFunctionAttrs(const Node& node, const Graph& graph) {
  auto check = [&](const std::string& attr, const NameAttrList& f) -> absl::Status {
    if (graph.FindFunction(f.name()) != nullptr || graph.registry()->Find(f.name()) != nullptr) {
      return absl::OkStatus();
    }
    return absl::NotFoundError(absl::StrCat("node ", node.DebugName(), ": attr '", attr,
                                            "' names function '", f.name(),
                                            "', which the graph's library does not have"));
  };
  for (const auto& [name, value] : node.attrs()) {
    if (value.has_func()) RETURN_IF_ERROR(check(name, value.func()));
    if (value.has_list()) {
      for (const NameAttrList& f : value.list().func()) RETURN_IF_ERROR(check(name, f));
    }
  }
  return absl::OkStatus();
}

absl::Status ImportGraphDef(const GraphDef& def, Graph* graph, const ImportOptions& options) {
  // The library first: nodes may call its functions.
  if (def.has_library()) {
    RETURN_IF_ERROR(AddContext(graph->AddFunctionLibrary(def.library()), "the graph's library"));
  }
  // Pass 1: every node, so inputs may name nodes defined later in the file.
  std::vector<Node*> added;
  added.reserve(def.node_size());
  for (const NodeDef& node_def : def.node()) {
    // Ops named "_..." are the runtime's own (_Arg, _Retval): a graph file
    // that holds them could write into another run's results. Fused kernels
    // (_FusedMatMul) say they may come from files.
    const OpDef* op_def = graph->registry()->Find(node_def.op());
    if (!options.allow_internal_ops && absl::StartsWith(node_def.op(), "_") &&
        (op_def == nullptr || !op_def->allowed_in_graph_files)) {
      return absl::InvalidArgumentError(
          absl::StrCat(NodeContext(node_def), ": op '", node_def.op(), "' is internal to Sluice"));
    }
    NodeDef copy = node_def;
    copy.clear_input();
    ApplyLegacyPlaceholderShape(def.versions().producer(), &copy);
    absl::StatusOr<Node*> node = graph->AddNode(std::move(copy));
    if (!node.ok()) {
      if (absl::StrContains(node.status().message(), absl::StrCat("'", node_def.name(), "'"))) {
        return node.status();
      }
      return AddContext(node.status(), NodeContext(node_def));
    }
    RETURN_IF_ERROR(CheckFunctionAttrs(**node, *graph));
    added.push_back(*node);
  }
  // Pass 2: edges, data inputs in slot order, then control inputs.
  for (int i = 0; i < def.node_size(); ++i) {
    RETURN_IF_ERROR(ConnectInputs(def.node(i), added[i], graph));
  }
  if (def.has_versions()) *graph->mutable_versions() = def.versions();

  ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  std::vector<bool> is_new(graph->num_node_ids(), false);
  for (Node* n : added) is_new[n->id()] = true;
  for (Node* n : order) {
    if (is_new[n->id()]) RETURN_IF_ERROR(InferShapes(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<GraphDef> PruneGraphDef(const GraphDef& def, absl::Span<const std::string> outputs) {
  absl::flat_hash_map<absl::string_view, int> index;
  for (int i = 0; i < def.node_size(); ++i) index.emplace(def.node(i).name(), i);

  std::vector<bool> keep(def.node_size(), false);
  std::deque<int> work;
  for (const std::string& name : outputs) {
    absl::StatusOr<TensorId> id = ParseTensorName(name);
    if (!id.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed tensor or node name '", name, "': ", id.status().message()));
    }
    auto it = index.find(id->node);
    if (it == index.end()) {
      return absl::NotFoundError(
          absl::StrCat("'", name, "' names no node in the graph (no node '", id->node, "')"));
    }
    if (!keep[it->second]) {
      keep[it->second] = true;
      work.push_back(it->second);
    }
  }
  while (!work.empty()) {
    const NodeDef& node = def.node(work.front());
    work.pop_front();
    for (const std::string& input : node.input()) {
      absl::StatusOr<TensorId> id = ParseTensorName(input);
      if (!id.ok()) continue;  // ImportGraphDef reports it with the node
      auto it = index.find(id->node);
      if (it == index.end() || keep[it->second]) continue;  // dangling: import reports it
      keep[it->second] = true;
      work.push_back(it->second);
    }
  }

  GraphDef pruned;
  if (def.has_versions()) *pruned.mutable_versions() = def.versions();
  if (def.has_library()) *pruned.mutable_library() = def.library();
  for (int i = 0; i < def.node_size(); ++i) {
    if (keep[i]) *pruned.add_node() = def.node(i);
  }
  return pruned;
}

}  // namespace sluice
