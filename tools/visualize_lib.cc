// The `visualize` tool's logic. See visualize_lib.h.
#include "tools/visualize_lib.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "graph/graph_def_io.h"
#include "base/status_macros.h"
#include "ops/builtins.h"
#include "placement/device_name.h"
#include "tools/dot_graph.h"
#include "tools/graph_view.h"
#include "tools/placement_summary.h"
#include "tools/view_placement.h"

namespace sluice {
namespace {

// Light fills, one per device in legend order, distinct side by side.
constexpr const char* kPalette[] = {"#cfe2f3", "#d9ead3", "#fff2cc", "#f4cccc",
                                    "#d9d2e9", "#fce5cd", "#d0e0e3", "#ead1dc"};
constexpr char kUnplacedFill[] = "#eeeeee";
constexpr char kTransferColor[] = "#c0392b";
constexpr char kFont[] = "Helvetica";
constexpr int kMaxTransferLines = 4;  // per merged Send/Recv edge label
constexpr int kMaxTooltipNames = 20;

// Label text for Graphviz: a backslash is an escape there.
std::string EscapeLabel(absl::string_view s) { return absl::StrReplaceAll(s, {{"\\", "\\\\"}}); }

std::string EscapeHtml(absl::string_view s) {
  return absl::StrReplaceAll(s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

std::string FillOf(const DeviceSummary& d, int index) {
  if (d.device == kUnplacedDevice) return kUnplacedFill;
  return kPalette[index % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string MemoryText(const DeviceSummary& d) {
  std::string s = FormatBytes(d.memory_bytes());
  if (d.memory_limit > 0) absl::StrAppend(&s, " of ", FormatBytes(d.memory_limit));
  return s;
}

// "layer1/\n12 nodes\nMatMul, BiasAdd, Relu, …" or "layer1/MatMul\nMatMul".
std::string BoxLabel(const ViewBox& box, const Graph& graph) {
  if (!box.collapsed) {
    const Node& n = *graph.node(box.node_ids[0]);
    return absl::StrCat(EscapeLabel(n.name()), "\\n", n.op());
  }
  std::string count = box.node_ids.size() == static_cast<size_t>(box.scope_size)
                          ? absl::StrCat(box.scope_size, " nodes")
                          : absl::StrCat(box.node_ids.size(), " of ", box.scope_size, " nodes");
  std::vector<std::string> ops;
  for (size_t i = 0; i < box.op_counts.size() && i < 3; ++i) ops.push_back(box.op_counts[i].first);
  std::string op_line = absl::StrJoin(ops, ", ");
  if (box.op_counts.size() > 3) absl::StrAppend(&op_line, ", …");
  return absl::StrCat(EscapeLabel(box.name), "/\\n", count, "\\n", EscapeLabel(op_line));
}

std::string BoxTooltip(const ViewBox& box, const Graph& graph) {
  std::vector<std::string> names;
  for (size_t i = 0; i < box.node_ids.size() && i < kMaxTooltipNames; ++i) {
    const Node& n = *graph.node(box.node_ids[i]);
    names.push_back(EscapeLabel(absl::StrCat(n.name(), " (", n.op(), ")")));
  }
  if (box.node_ids.size() > kMaxTooltipNames) {
    names.push_back(absl::StrCat("+", box.node_ids.size() - kMaxTooltipNames, " more"));
  }
  return absl::StrCat(EscapeLabel(box.device), "\\n", absl::StrJoin(names, "\\n"));
}

bool IsSendOp(absl::string_view op) { return op == "_Send" || op == "_HostSend"; }
bool IsRecvOp(absl::string_view op) { return op == "_Recv" || op == "_HostRecv"; }

// Draws the placement: clusters, boxes, edges, transfers and legend.
class PlacementDrawer {
 public:
  PlacementDrawer(const Graph& graph, const GraphView& view, const PlacementSummary& summary,
                  const CostModel& cost, DotGraph* dot)
      : graph_(graph), view_(view), summary_(summary), cost_(cost), dot_(*dot) {}

  void Draw(absl::string_view title) {
    SetGraphStyle(title);
    DrawClusters();
    DrawBoxes();
    DrawEdges();
    DrawTransfers();
    DrawPartitionTransfers();
    DrawLegend();
  }

 private:
  void SetGraphStyle(absl::string_view title) {
    DotGraph::Graph* g = dot_.root();
    dot_.Set(g, "rankdir", "TB");
    dot_.Set(g, "newrank", "true");
    dot_.Set(g, "nodesep", "0.3");
    dot_.Set(g, "ranksep", "0.5");
    dot_.Set(g, "fontname", kFont);
    if (!title.empty()) {
      dot_.Set(g, "label", EscapeLabel(title));
      dot_.Set(g, "labelloc", "t");
      dot_.Set(g, "fontsize", "18");
    }
    dot_.SetNodeDefault("fontname", kFont);
    dot_.SetNodeDefault("fontsize", "11");
    dot_.SetEdgeDefault("fontname", kFont);
    dot_.SetEdgeDefault("fontsize", "10");
    dot_.SetEdgeDefault("color", "#555555");
  }

  // One cluster per device; /job:J/replica:R/task:T devices nest in a job
  // cluster and a task cluster.
  void DrawClusters() {
    for (size_t i = 0; i < summary_.devices.size(); ++i) {
      const DeviceSummary& d = summary_.devices[i];
      device_index_[d.device] = static_cast<int>(i);
      DotGraph::Graph* parent = dot_.root();
      std::string label = d.device;
      absl::StatusOr<DeviceName> name = DeviceName::Parse(d.device);
      if (d.device != kUnplacedDevice && name.ok() && name->job.has_value()) {
        parent = JobCluster(*name);
        if (name->task.has_value()) parent = TaskCluster(*name, parent);
        DeviceName device_part;
        device_part.type = name->type;
        device_part.id = name->id;
        if (name->type.has_value()) label = device_part.ToString();
      }
      DotGraph::Graph* c = dot_.AddSubgraph(parent, absl::StrCat("cluster_", i));
      dot_.Set(c, "label", EscapeLabel(label));
      dot_.Set(c, "style", "filled,rounded");
      dot_.Set(c, "fillcolor", FillOf(d, static_cast<int>(i)));
      dot_.Set(c, "color", "#7f7f7f");
      dot_.Set(c, "fontsize", "14");
      dot_.Set(c, "margin", "12");
      device_clusters_.push_back(c);
    }
  }

  DotGraph::Graph* JobCluster(const DeviceName& name) {
    std::string key = absl::StrCat("/job:", *name.job);
    auto [it, inserted] = outer_clusters_.try_emplace(key, nullptr);
    if (inserted) {
      it->second =
          dot_.AddSubgraph(dot_.root(), absl::StrCat("cluster_job", outer_clusters_.size()));
      dot_.Set(it->second, "label", EscapeLabel(key));
      dot_.Set(it->second, "style", "rounded");
      dot_.Set(it->second, "color", "#404040");
      dot_.Set(it->second, "fontsize", "16");
    }
    return it->second;
  }

  DotGraph::Graph* TaskCluster(const DeviceName& name, DotGraph::Graph* job) {
    DeviceName task;
    task.job = name.job;
    task.replica = name.replica;
    task.task = name.task;
    std::string key = task.ToString();
    auto [it, inserted] = outer_clusters_.try_emplace(key, nullptr);
    if (inserted) {
      it->second = dot_.AddSubgraph(job, absl::StrCat("cluster_task", outer_clusters_.size()));
      task.job.reset();
      dot_.Set(it->second, "label", EscapeLabel(task.ToString()));
      dot_.Set(it->second, "style", "dashed,rounded");
      dot_.Set(it->second, "color", "#606060");
      dot_.Set(it->second, "fontsize", "14");
    }
    return it->second;
  }

  void DrawBoxes() {
    for (size_t i = 0; i < view_.boxes.size(); ++i) {
      const ViewBox& box = view_.boxes[i];
      DotGraph::Graph* cluster = device_clusters_[device_index_.at(box.device)];
      DotGraph::Node* n = dot_.AddNode(cluster, absl::StrCat("box", i));
      dot_.Set(n, "label", BoxLabel(box, graph_));
      dot_.Set(n, "tooltip", BoxTooltip(box, graph_));
      dot_.Set(n, "style", "filled");
      dot_.Set(n, "fillcolor", "white");
      const Node& first = *graph_.node(box.node_ids[0]);
      if (box.collapsed) {
        dot_.Set(n, "shape", "folder");
      } else if (IsSendOp(first.op()) || IsRecvOp(first.op())) {
        dot_.Set(n, "shape", IsSendOp(first.op()) ? "rarrow" : "larrow");
        dot_.Set(n, "fillcolor", "#f5b7b1");
        dot_.Set(n, "color", kTransferColor);
      } else if (cost_.cost(first).persistent_bytes > 0) {
        dot_.Set(n, "shape", "cylinder");
      } else {
        dot_.Set(n, "shape", "box");
        dot_.Set(n, "style", "filled,rounded");
      }
      boxes_.push_back(n);
    }
  }

  void DrawEdges() {
    for (const ViewEdge& e : view_.edges) {
      DotGraph::Edge* edge = dot_.AddEdge(boxes_[e.src_box], boxes_[e.dst_box]);
      if (e.control) {
        dot_.Set(edge, "style", "dotted");
        dot_.Set(edge, "color", "#9a9a9a");
      }
      if (e.count > 1) dot_.Set(edge, "label", absl::StrCat("×", e.count));
    }
  }

  void StyleTransfer(DotGraph::Edge* edge) {
    dot_.Set(edge, "color", kTransferColor);
    dot_.Set(edge, "fontcolor", kTransferColor);
    dot_.Set(edge, "style", "dashed,bold");
    dot_.Set(edge, "penwidth", "2");
  }

  // One edge per (source box, destination box) carrying the transfers whose
  // first consumer is in the destination box.
  void DrawTransfers() {
    std::map<std::pair<int, int>, std::vector<const Transfer*>> merged;
    for (const Transfer& t : summary_.transfers) {
      merged[{view_.box_of[t.src->id()], view_.box_of[t.consumers[0]->id()]}].push_back(&t);
    }
    for (const auto& [boxes, transfers] : merged) {
      DotGraph::Edge* edge = dot_.AddEdge(boxes_[boxes.first], boxes_[boxes.second]);
      StyleTransfer(edge);
      std::vector<std::string> lines, tips;
      int64_t total = 0;
      for (const Transfer* t : transfers) {
        if (lines.size() < kMaxTransferLines) {
          lines.push_back(EscapeLabel(DescribeTransfer(*t)));
        }
        total += t->bytes;
        std::vector<std::string> consumers;
        for (const Node* c : t->consumers) consumers.push_back(c->name());
        tips.push_back(
            EscapeLabel(absl::StrCat("Send/Recv ", t->src->name(), ":", t->src_output, " -> ",
                                     t->dst_device, " (", absl::StrJoin(consumers, ", "), ")")));
      }
      if (transfers.size() > kMaxTransferLines) {
        lines.push_back(absl::StrCat("+", transfers.size() - kMaxTransferLines, " more"));
      }
      if (transfers.size() > 1) {
        lines.push_back(absl::StrCat(transfers.size(), " tensors, ", FormatBytes(total)));
      }
      dot_.Set(edge, "label", absl::StrJoin(lines, "\\n"));
      dot_.Set(edge, "tooltip", absl::StrJoin(tips, "\\n"));
    }
  }

  // A partitioned graph's _Send and _Recv nodes, joined by tensor_name.
  void DrawPartitionTransfers() {
    absl::flat_hash_map<std::string, const Node*> sends;
    for (const Node* n : graph_.nodes()) {
      absl::StatusOr<std::string> key = n->GetAttr<std::string>("tensor_name");
      if (IsSendOp(n->op()) && key.ok()) sends[*key] = n;
    }
    for (const Node* recv : graph_.nodes()) {
      absl::StatusOr<std::string> key = recv->GetAttr<std::string>("tensor_name");
      if (!IsRecvOp(recv->op()) || !key.ok() || !sends.contains(*key)) continue;
      const Node* send = sends[*key];
      DotGraph::Edge* edge =
          dot_.AddEdge(boxes_[view_.box_of[send->id()]], boxes_[view_.box_of[recv->id()]]);
      StyleTransfer(edge);
      std::string label = EscapeLabel(*key);
      const Edge* in = send->num_inputs() > 0 ? send->input_edge(0) : nullptr;
      if (in != nullptr) {
        Transfer t;
        t.dtype = BaseType(in->src->output_type(in->src_output));
        t.shape = in->src->output_shape(in->src_output);
        const NodeCost& c = cost_.cost(*in->src);
        if (in->src_output < static_cast<int>(c.output_bytes.size())) {
          t.bytes = c.output_bytes[in->src_output];
        }
        label = absl::StrCat(label, "\\n", EscapeLabel(DescribeTransfer(t)));
      }
      dot_.Set(edge, "label", label);
    }
  }

  void DrawLegend() {
    std::string rows =
        absl::StrCat("<tr><td colspan=\"5\"><b>Devices (predicted per step)</b></td></tr>",
                     "<tr><td></td><td align=\"left\"><b>device</b></td><td><b>ops</b></td>",
                     "<td><b>memory</b></td><td><b>compute</b></td></tr>");
    for (size_t i = 0; i < summary_.devices.size(); ++i) {
      const DeviceSummary& d = summary_.devices[i];
      bool over = d.memory_limit > 0 && d.memory_bytes() > d.memory_limit;
      absl::StrAppend(&rows, "<tr><td bgcolor=\"", FillOf(d, static_cast<int>(i)),
                      "\" width=\"18\"> </td><td align=\"left\">", EscapeHtml(d.device),
                      "</td><td align=\"right\">", d.op_count, "</td><td align=\"right\"",
                      over ? " bgcolor=\"#f1948a\"" : "", ">", EscapeHtml(MemoryText(d)),
                      over ? " (over)" : "", "</td><td align=\"right\">",
                      EscapeHtml(FormatFlops(d.flops)), "</td></tr>");
    }
    absl::StrAppend(&rows, "<tr><td colspan=\"5\" align=\"left\"><font color=\"", kTransferColor,
                    "\">- - &gt; Send/Recv: ", summary_.transfers.size(), " tensor(s), ",
                    FormatBytes(summary_.transfer_bytes()), "</font></td></tr>");
    DotGraph::Node* legend = dot_.AddNode(dot_.root(), "legend");
    dot_.Set(legend, "shape", "plaintext");
    dot_.SetHtml(legend, "label",
                 absl::StrCat("<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" "
                              "cellpadding=\"4\">",
                              rows, "</table>"));
  }

  const Graph& graph_;
  const GraphView& view_;
  const PlacementSummary& summary_;
  const CostModel& cost_;
  DotGraph& dot_;
  absl::flat_hash_map<std::string, int> device_index_;
  std::vector<DotGraph::Graph*> device_clusters_;
  std::map<std::string, DotGraph::Graph*> outer_clusters_;
  std::vector<DotGraph::Node*> boxes_;
};

std::vector<std::string> SummaryLines(const PlacementSummary& summary) {
  std::vector<std::string> lines;
  for (const DeviceSummary& d : summary.devices) {
    lines.push_back(absl::StrCat(d.device, ": ", d.op_count, " ops, ", MemoryText(d), ", ",
                                 FormatFlops(d.flops)));
  }
  lines.push_back(absl::StrCat("Send/Recv: ", summary.transfers.size(), " tensor(s), ",
                               FormatBytes(summary.transfer_bytes()), " per step"));
  return lines;
}

std::string OneLine(const absl::Status& status) {
  return absl::StrReplaceAll(status.message(), {{"\r\n", "; "}, {"\n", "; "}});
}

}  // namespace

absl::StatusOr<ImageFormat> ImageFormatFromPath(absl::string_view path) {
  std::string ext =
      absl::AsciiStrToLower(std::filesystem::path(std::string(path)).extension().string());
  if (ext == ".dot" || ext == ".gv") return ImageFormat::kDot;
  if (ext == ".svg") return ImageFormat::kSvg;
  if (ext == ".png") return ImageFormat::kPng;
  return absl::InvalidArgumentError(
      absl::StrCat("--out '", path, "' must end in .svg, .png or .dot (.gv)"));
}

absl::StatusOr<Rendering> RenderGraph(Graph* graph, const VisualizeOptions& options,
                                      ImageFormat format) {
  ViewPlacementOptions placement;
  placement.devices = options.devices;
  placement.auto_place = options.auto_place;
  placement.cost = options.cost;
  ASSIGN_OR_RETURN(std::vector<std::string> device_of, PlaceForView(graph, placement));
  std::vector<std::string> listed;
  for (const DeviceSpec& spec : options.devices) {
    ASSIGN_OR_RETURN(DeviceName name, ParseSpecDeviceName(spec.name));
    listed.push_back(name.ToString());
  }
  GraphViewOptions view_options;
  view_options.expand = options.expand;
  ASSIGN_OR_RETURN(GraphView view, BuildGraphView(*graph, device_of, view_options));
  absl::StatusOr<CostModel> cost = CostModel::Build(*graph, options.cost);
  if (!cost.ok()) return AddContext(cost.status(), "cost model");
  ASSIGN_OR_RETURN(PlacementSummary summary,
                   SummarizePlacement(*graph, device_of, listed, options.devices, *cost));

  DotGraph dot("placement");
  PlacementDrawer(*graph, view, summary, *cost, &dot).Draw(options.title);
  Rendering rendering;
  rendering.summary = SummaryLines(summary);
  switch (format) {
    case ImageFormat::kDot:
      rendering.data = dot.ToSource();
      break;
    case ImageFormat::kSvg: {
      ASSIGN_OR_RETURN(rendering.data, dot.Render("svg"));
      break;
    }
    case ImageFormat::kPng: {
      ASSIGN_OR_RETURN(rendering.data, dot.Render("png"));
      break;
    }
  }
  return rendering;
}

absl::StatusOr<Rendering> VisualizeGraphFile(const std::string& graph_path, const OpRegistry* ops,
                                             const VisualizeOptions& options,
                                             const std::string& out_path) {
  ASSIGN_OR_RETURN(ImageFormat format, ImageFormatFromPath(out_path));
  ASSIGN_OR_RETURN(GraphDef def, ReadGraphDefFile(graph_path));
  Graph graph(ops);
  // Drawing runs nothing, so a partition graph's _Send/_Recv are welcome.
  absl::Status imported = ImportGraphDef(def, &graph, {.allow_internal_ops = true});
  if (!imported.ok()) return AddContext(imported, absl::StrCat("graph file '", graph_path, "'"));
  VisualizeOptions with_title = options;
  if (with_title.title.empty()) {
    with_title.title = absl::StrCat(std::filesystem::path(graph_path).filename().string(), ": ",
                                    graph.num_nodes(), " nodes");
  }
  ASSIGN_OR_RETURN(Rendering rendering, RenderGraph(&graph, with_title, format));
  std::ofstream file(out_path, std::ios::binary | std::ios::trunc);
  file.write(rendering.data.data(), static_cast<std::streamsize>(rendering.data.size()));
  file.close();
  if (!file) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write --out '", out_path, "': ", std::strerror(errno)));
  }
  return rendering;
}

absl::StatusOr<VisualizeArgs> ParseVisualizeArgs(const std::vector<std::string>& args) {
  VisualizeArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      parsed.help = true;
      continue;
    }
    if (!absl::StartsWith(arg, "-") || arg == "-" || arg == "--") {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", arg, "' (flags are --name=value)"));
    }
    std::string body = arg.substr(absl::StartsWith(arg, "--") ? 2 : 1);
    std::string name = body, value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    if (name == "auto" || name == "noauto") {
      if (!has_value || value == "true" || value == "1") {
        parsed.auto_place = name == "auto";
      } else if (value == "false" || value == "0") {
        parsed.auto_place = name != "auto";
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("bad value '", value, "' for --", name, " (true or false)"));
      }
      continue;
    }
    if (name != "graph" && name != "devices" && name != "expand" && name != "out") {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
      value = args[++i];
    }
    if (name == "graph") parsed.graph = value;
    if (name == "devices") parsed.devices = value;
    if (name == "out") parsed.out = value;
    if (name == "expand") {
      for (absl::string_view s : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
        parsed.expand.emplace_back(absl::StripAsciiWhitespace(s));
      }
    }
  }
  if (parsed.help) return parsed;
  if (parsed.graph.empty()) return absl::InvalidArgumentError("--graph=FILE is required");
  if (parsed.out.empty()) {
    return absl::InvalidArgumentError("--out=FILE.svg (or .png, .dot) is required");
  }
  if (parsed.auto_place && parsed.devices.empty()) {
    return absl::InvalidArgumentError("--auto needs --devices=LIST to place on");
  }
  return parsed;
}

namespace {

constexpr char kUsage[] =
    "usage: visualize --graph=FILE [--devices=LIST [--auto]] [--expand=SCOPE[,SCOPE...]]\n"
    "                 --out=FILE.svg|.png|.dot\n"
    "Draws a graph's placement: one coloured cluster per device, Send/Recv edges\n"
    "between devices, and a legend with each device's ops, memory and FLOPs.\n"
    "  --graph:   GraphDef file, binary (.pb) or text (.pbtxt)\n"
    "  --devices: place the graph over these devices first, e.g.\n"
    "             'CPU:0{mem=1GiB},CPU:1' or '/job:worker/task:0/device:GPU:0,...';\n"
    "             nodes that ask for a device keep it, the rest go to the first\n"
    "  --auto:    with --devices, use the automatic (cost-model) placer instead\n"
    "  --expand:  name scopes to show node by node (others are one box each);\n"
    "             comma list, may repeat; 'a/b' opens a and a/b\n"
    "  --out:     picture to write; the extension picks the format\n";

absl::Status RunFromArgs(const VisualizeArgs& args, std::ostream& out) {
  const char* wd_env = std::getenv("BUILD_WORKING_DIRECTORY");
  const std::string wd = wd_env != nullptr ? wd_env : "";
  auto resolve = [&](const std::string& path) {
    if (path.empty() || path[0] == '/' || wd.empty()) return path;
    return (std::filesystem::path(wd) / path).string();
  };
  VisualizeOptions options;
  if (!args.devices.empty()) {
    absl::StatusOr<std::vector<DeviceSpec>> specs = ParseDeviceSpecs(args.devices);
    if (!specs.ok()) return AddContext(specs.status(), "--devices");
    options.devices = *std::move(specs);
    for (const DeviceSpec& spec : options.devices) {
      absl::Status named = ParseSpecDeviceName(spec.name).status();
      if (!named.ok()) return AddContext(named, "--devices");
    }
  }
  options.auto_place = args.auto_place;
  options.expand = args.expand;
  const std::string out_path = resolve(args.out);
  RETURN_IF_ERROR(ImageFormatFromPath(out_path).status());
  ASSIGN_OR_RETURN(Rendering rendering,
                   VisualizeGraphFile(resolve(args.graph), BuiltinOps(), options, out_path));
  out << "wrote " << out_path << "\n";
  for (const std::string& line : rendering.summary) out << "  " << line << "\n";
  out.flush();
  return absl::OkStatus();
}

}  // namespace

int VisualizeMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<VisualizeArgs> parsed = ParseVisualizeArgs(args);
  if (!parsed.ok()) {
    err << "visualize: error: " << OneLine(parsed.status()) << "\n";
    return 1;
  }
  if (parsed->help) {
    out << kUsage;
    return 0;
  }
  absl::Status s = RunFromArgs(*parsed, out);
  if (!s.ok()) {
    err << "visualize: error: " << OneLine(s) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace sluice
