// The `visualize` tool's logic: draws a graph's placement with Graphviz's
// libraries (cgraph to build, gvc to lay out and render; no `dot` process).
// tools/visualize.cc is a thin main over it.
//
//   bazel run //tools:visualize -- --graph=model.pbtxt --devices=CPU:0,CPU:1 --auto
//       --expand=layer1 --out=placement.svg
//
// From C++ (tests, other tools):
//   VisualizeOptions opts;
//   ASSIGN_OR_RETURN(opts.devices, ParseDeviceSpecs("CPU:0{mem=1GiB},CPU:1"));
//   opts.auto_place = true;
//   ASSIGN_OR_RETURN(Rendering r, RenderGraph(&graph, opts, ImageFormat::kSvg));
//   // r.data: the SVG; r.summary: the legend as text lines
//
// The picture: one filled, coloured cluster per device, labelled with its
// name, nested in a cluster per job and per task for cluster device names
// (/job:J/replica:R/task:T/device:...). Inside, one box per node, or per name
// scope collapsed as tools/graph_view.h says (a folder shape: the scope, its
// node count and most frequent ops). Same-device data edges are plain
// arrows, control edges grey dotted ones. A data edge between devices is a
// Send/Recv: one bold dashed red edge per (tensor, destination device),
// labelled "<dtype> <shape> <bytes>" (unknown dims '?', guessed sizes '~'),
// drawn to the box of its first consumer; several such tensors between the
// same two boxes share one edge listing them. The _Send/_Recv nodes of an
// already-partitioned graph are arrow shapes, and a Send and the Recv with
// the same "tensor_name" attr are joined by a Send/Recv edge. A legend table
// lists each device's colour, op count, predicted memory (of its limit when
// the device list gives one) and FLOPs per step, and the bytes sent per step.
// Placement of an unplaced graph: tools/view_placement.h.
//
// Errors are Status values with a one-line message naming the flag, file,
// node or device at fault; VisualizeMain prints them as
// "visualize: error: <message>" on stderr and returns 1.
//
// Thread-safe: rendering is serialized by an internal lock (Graphviz keeps
// global state). VisualizeMain reads the process environment only.
#ifndef SLUICE_TOOLS_VISUALIZE_LIB_H_
#define SLUICE_TOOLS_VISUALIZE_LIB_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "placement/cost_model.h"

namespace sluice {

enum class ImageFormat { kDot, kSvg, kPng };

// From the output path's extension (.dot/.gv, .svg, .png; any case).
// InvalidArgument naming the path and the extensions accepted.
absl::StatusOr<ImageFormat> ImageFormatFromPath(absl::string_view path);

struct VisualizeOptions {
  std::vector<DeviceSpec> devices;  // place over these first; empty: draw as placed
  bool auto_place = false;          // with devices: the automatic placer
  std::vector<std::string> expand;  // name scopes to open
  CostModelOptions cost;
  std::string title;  // drawn above the picture when not empty
};

struct Rendering {
  // The file's bytes: Graphviz source for kDot (not laid out), else the
  // laid-out SVG or PNG.
  std::string data;
  // The legend as text, one line per device ("/device:CPU:0: 12 ops, 1.5 MiB,
  // 3.2 MFLOP"), then one line for the Send/Recv traffic.
  std::vector<std::string> summary;
};

// Places (when asked, changing requested devices in `graph`), collapses and
// renders. Errors: bad device list or placement, an unknown --expand scope,
// the cost model's errors, and Internal when Graphviz cannot lay out or
// render (e.g. its plugins are not installed), with Graphviz's own message.
absl::StatusOr<Rendering> RenderGraph(Graph* graph, const VisualizeOptions& options,
                                      ImageFormat format);

// Reads a GraphDef file (binary or text; a partition graph's internal ops
// such as _Send/_Recv are accepted), imports it with `ops`, renders it
// in the format `out_path`'s extension names, and writes `out_path`. The
// title defaults to the graph file's name. Errors name the file at fault.
absl::StatusOr<Rendering> VisualizeGraphFile(const std::string& graph_path, const OpRegistry* ops,
                                             const VisualizeOptions& options,
                                             const std::string& out_path);

// The parsed command line.
struct VisualizeArgs {
  std::string graph;
  std::string devices;  // the --devices spec, unparsed
  bool auto_place = false;
  std::vector<std::string> expand;  // comma list, may repeat
  std::string out;
  bool help = false;
};

// Parses arguments (argv without the program name): "--flag=value" or
// "--flag value"; --auto is a switch (also --auto=true/false). InvalidArgument
// for an unknown flag, a missing value, a positional argument, a missing
// --graph or --out, or --auto without --devices.
absl::StatusOr<VisualizeArgs> ParseVisualizeArgs(const std::vector<std::string>& args);

// The whole tool: parses `args`, resolves relative paths against the
// BUILD_WORKING_DIRECTORY environment variable (set by `bazel run`), renders
// with the built-in ops, prints "wrote <path>" and a one-line summary per
// device to `out`. Returns the exit code: 0, or 1 after one
// "visualize: error: " line on `err`.
int VisualizeMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sluice

#endif  // SLUICE_TOOLS_VISUALIZE_LIB_H_
