// The `runner` tool's logic: run a GraphDef file with .npy feeds and write
// the fetched tensors as .npy files. tools/runner.cc is a thin main over it.
//
//   bazel run //tools:runner -- --graph=model.pbtxt --feed=x=batch.npy
//       --init=init --target=train --steps=100 --fetch=loss,W --out_dir=out
//   // Resume a TF1 training run from its MetaGraph and checkpoint:
//   bazel run //tools:runner -- --meta_graph=/ckpt/model.ckpt-10.meta
//       --restore=/ckpt/model.ckpt-10 --target=train --steps=10 --fetch=loss:0
//   // Run a SavedModel's signature (outputs printed and written by key):
//   bazel run //tools:runner -- --saved_model=/models/cnn/1 [--tag=serve]
//       [--signature=serving_default] --input=images=batch.npy --out_dir=out
//
// From C++ (tests, other tools):
//   RunRequest req;
//   req.feeds = {{"x", x}};  req.init_targets = {"init"};
//   req.targets = {"train"};  req.steps = 3;  req.fetches = {"loss", "W"};
//   ASSIGN_OR_RETURN(RunReport report, RunGraphDef(def, req, BuiltinSessionConfig()));
//   // report.fetched[i] answers req.fetches[i]; report.warnings for stderr.
//
// Behaviour: the graph is pruned to what the fetches, targets and init
// targets need (through data and control inputs); pruned-away nodes whose op
// Sluice lacks (summaries, savers, ...) are reported as one warning, needed
// ones are an error. The init targets run once, then `steps` runs of the
// targets, then one run for the fetches; every run gets the feeds.
//
// Errors are Status values whose message is one line naming the flag, file,
// node or tensor at fault; RunnerMain turns them into
// "runner: error: <message>" on stderr and exit code 1.
//
// Thread-compatible. RunnerMain reads and sets the process's absl flags, so
// call it from one thread at a time.
#ifndef SLUICE_TOOLS_RUNNER_LIB_H_
#define SLUICE_TOOLS_RUNNER_LIB_H_

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "session/session_config.h"

namespace sluice {

// What to run, with feeds already loaded.
struct RunRequest {
  std::vector<std::pair<std::string, Tensor>> feeds;  // tensor name -> value
  std::vector<std::string> init_targets;              // run once, first
  std::vector<std::string> targets;                   // run `steps` times
  int steps = 1;
  std::vector<std::string> fetches;  // fetched once, last
};

struct RunReport {
  std::vector<Tensor> fetched;        // one per RunRequest::fetches
  std::vector<std::string> warnings;  // one line each, without a prefix
};

// Prunes, validates (unknown ops among the needed nodes, feeds of the wrong
// dtype or shape, names that are not in the graph), then runs. The graph's
// ops must be in `options.ops`. Errors are InvalidArgument / NotFound with a
// one-line message.
absl::StatusOr<RunReport> RunGraphDef(const GraphDef& def, const RunRequest& request,
                                      const SessionConfig& options);

// --check: every op of `def` (its nodes and its function library) that
// `ops` lacks, with how many nodes use it, most used first.
struct OpCheck {
  int num_nodes = 0;
  int num_ops = 0;                                   // distinct ops
  std::vector<std::pair<std::string, int>> missing;  // op, nodes
  int missing_nodes = 0;
};
OpCheck CheckGraphOps(const GraphDef& def, const OpRegistry& ops);
// "model.pb: 120 nodes, 31 distinct ops; Sluice lacks 2 of them (5 nodes):"
// and one "  Op: N nodes" line each (or "...; Sluice has every one").
std::string FormatOpCheck(const OpCheck& check, absl::string_view graph_name);

// The parsed command line.
struct RunnerArgs {
  std::string graph;
  std::string meta_graph;   // instead of graph: a MetaGraphDef file
  std::string restore;      // a checkpoint prefix restored through meta_graph's saver
  std::string saved_model;  // instead of a graph: a SavedModel directory, one signature run
  std::vector<std::string> tags = {"serve"};
  std::string signature = "serving_default";
  std::string function;  // instead of the signature: a TF2 function by object path
  std::vector<std::pair<std::string, std::string>> inputs;  // signature input key -> .npy path
  std::vector<std::pair<std::string, std::string>> feeds;   // tensor name -> .npy path
  std::vector<std::string> init_targets;
  std::vector<std::string> targets;
  int steps = 1;
  std::vector<std::string> fetches;
  std::string out_dir;
  int virtual_cpus = 0;     // CPU:1..CPU:N beside CPU:0
  bool auto_place = false;  // SessionConfig::auto_place
  bool check = false;       // --check: list the ops Sluice lacks, run nothing
  bool help = false;
};

// Parses arguments (argv without the program name): "--flag=value" or
// "--flag value"; --feed, --init, --target and --fetch take comma lists and
// may repeat. InvalidArgument for an unknown flag, a bad value, a positional
// argument, not exactly one of --graph, --meta_graph and --saved_model,
// --restore without --meta_graph, or --saved_model with graph flags.
absl::StatusOr<RunnerArgs> ParseRunnerArgs(const std::vector<std::string>& args);

// `path` unchanged when absolute or `working_dir` is empty, else joined.
std::string ResolvePath(absl::string_view path, absl::string_view working_dir);

// "layer1/W:0" -> "layer1_W_0.npy".
std::string FetchFileName(absl::string_view tensor_name);

// "loss: float[] 0.25" for tensors of at most `max_values` elements, else
// "loss: float[100,10] (1000 values)".
std::string DescribeFetched(absl::string_view name, const Tensor& tensor, int max_values = 20);

// The whole tool: parses `args`, resolves relative paths against the
// BUILD_WORKING_DIRECTORY environment variable (set by `bazel run`), reads
// the graph and feeds, runs with the built-in ops, prints fetched tensors to
// `out` and writes them under --out_dir, warnings and errors to `err`.
// Returns the process exit code: 0, or 1 after one "runner: error: " line;
// with --check, 0 when Sluice has every op of the graph and 3 when not.
int RunnerMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sluice

#endif  // SLUICE_TOOLS_RUNNER_LIB_H_
