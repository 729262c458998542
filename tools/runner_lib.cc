// The `runner` tool's logic. See runner_lib.h.
#include "tools/runner_lib.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <system_error>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "graph/graph_def_io.h"
#include "ops/builtins.h"
#include "runtime/npy.h"
#include "session/direct_session.h"
#include "training/checkpoint/meta_graph.h"
#include "training/checkpoint/saved_function.h"
#include "training/checkpoint/saved_model.h"

ABSL_FLAG(std::string, graph, "", "GraphDef file to run, binary (.pb) or text (.pbtxt)");
ABSL_FLAG(std::string, meta_graph, "",
          "MetaGraphDef file to run instead of --graph (model.ckpt-N.meta, or .pbtxt for text)");
ABSL_FLAG(std::string, saved_model, "",
          "SavedModel directory: run one of its signatures on --input tensors instead of a graph");
ABSL_FLAG(std::vector<std::string>, tag, {"serve"},
          "with --saved_model: the tags of the MetaGraph to load (comma list)");
ABSL_FLAG(std::string, signature, "serving_default", "with --saved_model: the signature to run");
ABSL_FLAG(std::string, function, "",
          "with --saved_model: call the TF2 function at this object path (e.g. encoder.embed) "
          "instead of a signature; --input keys are its argument names");
ABSL_FLAG(std::vector<std::string>, input, {},
          "with --saved_model: KEY=FILE.npy, a signature input by its key; comma list, may repeat");
ABSL_FLAG(std::string, restore, "",
          "checkpoint prefix to restore before anything runs, through the --meta_graph's saver "
          "(e.g. /ckpt/model.ckpt-10)");
ABSL_FLAG(std::vector<std::string>, feed, {},
          "NAME=FILE.npy: feed the tensor NAME (e.g. x:0) from a .npy file on every run; "
          "comma list, may repeat");
ABSL_FLAG(std::vector<std::string>, init, {},
          "nodes to run once before the steps (e.g. init); comma list, may repeat");
ABSL_FLAG(std::vector<std::string>, target, {},
          "nodes to run on each step (e.g. train); comma list, may repeat");
ABSL_FLAG(int32_t, steps, 1, "how many times to run the --target nodes");
ABSL_FLAG(std::vector<std::string>, fetch, {},
          "tensors to fetch after the steps (e.g. loss,W:0); comma list, may repeat");
ABSL_FLAG(int32_t, virtual_cpus, 0,
          "virtual CPU devices CPU:1..CPU:N beside CPU:0, for graphs that pin nodes to them");
ABSL_FLAG(bool, auto_place, false,
          "place nodes without a device request with the automatic model-parallel placer");
ABSL_FLAG(bool, check, false,
          "list every op of the graph Sluice lacks, with node counts, and run nothing "
          "(exit code 3 when some are lacking)");
ABSL_FLAG(std::string, out_dir, "",
          "directory to write each fetched tensor to, as <name with ':' and '/' -> '_'>.npy");

namespace sluice {
namespace {

constexpr const char* kFlagNames[] = {"graph", "meta_graph",   "restore",    "saved_model",
                                      "tag",   "signature",    "function",   "input",      "feed",
                                      "init",  "target",       "steps",      "fetch",
                                      "check", "virtual_cpus", "auto_place", "out_dir"};

// "ScalarSummary (loss_summary), RestoreV2 (save/RestoreV2, save/RestoreV2_1)":
// nodes grouped by op in order of first appearance, a few names per op.
std::string DescribeNodesByOp(const std::vector<const NodeDef*>& nodes) {
  constexpr int kMaxNamesPerOp = 3;
  std::vector<std::string> op_order;
  absl::flat_hash_map<std::string, std::vector<std::string>> names_by_op;
  for (const NodeDef* n : nodes) {
    auto [it, inserted] = names_by_op.try_emplace(n->op());
    if (inserted) op_order.push_back(n->op());
    it->second.push_back(n->name());
  }
  std::vector<std::string> parts;
  for (const std::string& op : op_order) {
    const std::vector<std::string>& names = names_by_op[op];
    std::vector<std::string> shown(names.begin(),
                                   names.begin() + std::min<size_t>(names.size(), kMaxNamesPerOp));
    if (names.size() > kMaxNamesPerOp) {
      shown.push_back(absl::StrCat("+", names.size() - kMaxNamesPerOp, " more"));
    }
    parts.push_back(absl::StrCat(op, " (", absl::StrJoin(shown, ", "), ")"));
  }
  return absl::StrJoin(parts, ", ");
}

std::string DescribeTensorType(const Tensor& t) {
  return absl::StrCat(DataTypeName(t.dtype()), t.shape().DebugString());
}

// Finds the node and output a fetch or feed names in `graph`, checking the
// output index. `what` is "fetch" or "feed", for messages.
absl::StatusOr<std::pair<Node*, int>> FindOutput(const Graph& graph, const std::string& name,
                                                 absl::string_view what) {
  absl::StatusOr<TensorId> id = ParseTensorName(name);
  if (!id.ok() || id->index == Edge::kControlSlot) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(what), " '", name, "' is not a tensor name (node or node:index)"));
  }
  Node* node = graph.FindNode(id->node);
  if (node == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(std::string(what), " '", name, "': the graph has no node '", id->node, "'"));
  }
  if (id->index >= node->num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(what), " '", name,
                                                   "': ", node->DebugName(), " has ",
                                                   node->num_outputs(), " output(s)"));
  }
  return std::make_pair(node, id->index);
}

// The names of the file's library functions: a node whose op is one calls
// it (a TF1 Defun call), so it is not an op Sluice lacks.
absl::flat_hash_set<std::string> LibraryFunctionNames(const GraphDef& def) {
  absl::flat_hash_set<std::string> names;
  for (const auto& f : def.library().function()) names.insert(f.signature().name());
  return names;
}

// Renders a status as one line (no newlines).
std::string OneLine(const absl::Status& status) {
  return absl::StrReplaceAll(status.message(), {{"\r\n", "; "}, {"\n", "; "}});
}

}  // namespace

absl::StatusOr<RunReport> RunGraphDef(const GraphDef& def, const RunRequest& request,
                                      const SessionConfig& options) {
  if (options.ops == nullptr || options.kernels == nullptr) {
    return absl::InvalidArgumentError("RunGraphDef needs SessionConfig with ops and kernels");
  }
  if (request.fetches.empty() && request.targets.empty() && request.init_targets.empty()) {
    return absl::InvalidArgumentError("nothing to run: no fetches, targets or init targets");
  }
  if (request.steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat("steps must be >= 0, not ", request.steps));
  }

  // Every name must be in the file, before pruning decides what is needed.
  absl::flat_hash_set<std::string> node_names;
  for (const NodeDef& n : def.node()) node_names.insert(n.name());
  auto check_names = [&](const std::vector<std::string>& names, absl::string_view what,
                         std::vector<std::string>* node_only) -> absl::Status {
    for (const std::string& name : names) {
      absl::StatusOr<TensorId> id = ParseTensorName(name);
      if (!id.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(std::string(what), " '", name, "' is not a valid name"));
      }
      if (!node_names.contains(id->node)) {
        return absl::NotFoundError(absl::StrCat(std::string(what), " '", name,
                                                "': the graph has no node '", id->node, "'"));
      }
      if (node_only != nullptr) node_only->push_back(id->node);
    }
    return absl::OkStatus();
  };
  std::vector<std::string> init_nodes, target_nodes;
  RETURN_IF_ERROR(check_names(request.fetches, "fetch", nullptr));
  RETURN_IF_ERROR(check_names(request.targets, "target", &target_nodes));
  RETURN_IF_ERROR(check_names(request.init_targets, "init target", &init_nodes));
  std::vector<std::string> feed_names;
  for (const auto& [name, tensor] : request.feeds) feed_names.push_back(name);
  RETURN_IF_ERROR(check_names(feed_names, "feed", nullptr));

  std::vector<std::string> roots = request.fetches;
  roots.insert(roots.end(), target_nodes.begin(), target_nodes.end());
  roots.insert(roots.end(), init_nodes.begin(), init_nodes.end());
  ASSIGN_OR_RETURN(GraphDef pruned, PruneGraphDef(def, roots));

  RunReport report;
  const absl::flat_hash_set<std::string> functions = LibraryFunctionNames(def);
  auto lacks_op = [&](const NodeDef& n) {
    return options.ops->Find(n.op()) == nullptr && !functions.contains(n.op());
  };
  absl::flat_hash_set<std::string> kept;
  std::vector<const NodeDef*> missing_needed;
  for (const NodeDef& n : pruned.node()) {
    kept.insert(n.name());
    if (lacks_op(n)) missing_needed.push_back(&n);
  }
  if (!missing_needed.empty()) {
    return absl::NotFoundError(
        absl::StrCat("the fetches and targets need ", missing_needed.size(),
                     " node(s) with ops Sluice lacks: ", DescribeNodesByOp(missing_needed)));
  }
  std::vector<const NodeDef*> missing_ignored;
  for (const NodeDef& n : def.node()) {
    if (!kept.contains(n.name()) && lacks_op(n)) {
      missing_ignored.push_back(&n);
    }
  }
  if (!missing_ignored.empty()) {
    report.warnings.push_back(
        absl::StrCat("ignoring ", missing_ignored.size(),
                     " node(s) with ops Sluice lacks: ", DescribeNodesByOp(missing_ignored)));
  }

  Graph graph(options.ops);
  RETURN_IF_ERROR(ImportGraphDef(pruned, &graph));

  // Feeds: dtype and shape must fit the tensor they replace.
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, tensor] : request.feeds) {
    absl::StatusOr<TensorId> id = ParseTensorName(name);
    if (graph.FindNode(id->node) == nullptr) {
      report.warnings.push_back(absl::StrCat("feed '", name,
                                             "' is not needed by the fetches and targets; "
                                             "ignored"));
      continue;
    }
    ASSIGN_OR_RETURN(auto output, FindOutput(graph, name, "feed"));
    auto [node, index] = output;
    DataType want = BaseType(node->output_type(index));
    const TensorShape& want_shape = node->output_shape(index);
    if (tensor.dtype() != want || !want_shape.IsCompatibleWith(tensor.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feed '", name, "' is ", DescribeTensorType(tensor), ", but ", node->DebugName(),
          " output ", index, " is ", DataTypeName(want), want_shape.DebugString()));
    }
    feeds.emplace_back(name, tensor);
  }
  for (const std::string& name : request.fetches) {
    RETURN_IF_ERROR(FindOutput(graph, name, "fetch").status());
  }

  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options, graph));
  if (!init_nodes.empty()) {
    absl::StatusOr<std::vector<Tensor>> r = session->Run(feeds, {}, init_nodes);
    if (!r.ok()) return AddContext(r.status(), "init run");
  }
  if (!target_nodes.empty()) {
    for (int step = 1; step <= request.steps; ++step) {
      absl::StatusOr<std::vector<Tensor>> r = session->Run(feeds, {}, target_nodes);
      if (!r.ok()) {
        return AddContext(r.status(), absl::StrCat("step ", step, " of ", request.steps));
      }
    }
  }
  if (!request.fetches.empty()) {
    absl::StatusOr<std::vector<Tensor>> r = session->Run(feeds, request.fetches, {});
    if (!r.ok()) return AddContext(r.status(), "fetch run");
    report.fetched = *std::move(r);
  }
  RETURN_IF_ERROR(session->Close());
  return report;
}

absl::StatusOr<RunnerArgs> ParseRunnerArgs(const std::vector<std::string>& args) {
  // The flags are process-wide: start every parse from the defaults.
  absl::flat_hash_map<std::string, absl::CommandLineFlag*> flags;
  for (const char* name : kFlagNames) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    std::string error;
    if (flag == nullptr || !flag->ParseFrom(flag->DefaultValue(), &error)) {
      return absl::InternalError(absl::StrCat("flag --", name, " is not registered"));
    }
    flags[name] = flag;
  }

  RunnerArgs parsed;
  std::vector<std::string> feeds;
  std::vector<std::string> inputs;
  auto append = [](std::vector<std::string>* to, const std::vector<std::string>& from) {
    for (const std::string& s : from) {
      if (!s.empty()) to->push_back(s);
    }
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "--helpfull") {
      parsed.help = true;
      continue;
    }
    if (!absl::StartsWith(arg, "-") || arg == "-" || arg == "--") {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", arg, "' (flags are --name=value)"));
    }
    std::string body = arg.substr(absl::StartsWith(arg, "--") ? 2 : 1);
    std::string name = body;
    std::string value;
    size_t eq = body.find('=');
    if (eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    auto it = flags.find(name);
    if (it == flags.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    if (eq == std::string::npos && (name == "auto_place" || name == "check")) {
      value = "true";  // a bare boolean flag
    } else if (eq == std::string::npos) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
      value = args[++i];
    }
    std::string error;
    if (!it->second->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad value '", value, "' for --", name, ": ", error));
    }
    if (name == "feed") append(&feeds, absl::GetFlag(FLAGS_feed));
    if (name == "input") append(&inputs, absl::GetFlag(FLAGS_input));
    if (name == "init") append(&parsed.init_targets, absl::GetFlag(FLAGS_init));
    if (name == "target") append(&parsed.targets, absl::GetFlag(FLAGS_target));
    if (name == "fetch") append(&parsed.fetches, absl::GetFlag(FLAGS_fetch));
  }
  if (parsed.help) return parsed;

  parsed.graph = absl::GetFlag(FLAGS_graph);
  parsed.meta_graph = absl::GetFlag(FLAGS_meta_graph);
  parsed.restore = absl::GetFlag(FLAGS_restore);
  parsed.saved_model = absl::GetFlag(FLAGS_saved_model);
  parsed.tags = absl::GetFlag(FLAGS_tag);
  parsed.signature = absl::GetFlag(FLAGS_signature);
  parsed.function = absl::GetFlag(FLAGS_function);
  parsed.steps = absl::GetFlag(FLAGS_steps);
  parsed.out_dir = absl::GetFlag(FLAGS_out_dir);
  parsed.virtual_cpus = absl::GetFlag(FLAGS_virtual_cpus);
  parsed.auto_place = absl::GetFlag(FLAGS_auto_place);
  parsed.check = absl::GetFlag(FLAGS_check);
  if (parsed.virtual_cpus < 0 || parsed.virtual_cpus > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("--virtual_cpus must be in [0, 64], not ", parsed.virtual_cpus));
  }
  if (!parsed.graph.empty() + !parsed.meta_graph.empty() + !parsed.saved_model.empty() != 1) {
    return absl::InvalidArgumentError(
        "give exactly one of --graph=FILE, --meta_graph=FILE and --saved_model=DIR");
  }
  for (const std::string& input : inputs) {
    size_t eq = input.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == input.size()) {
      return absl::InvalidArgumentError(absl::StrCat("--input '", input, "' is not KEY=FILE.npy"));
    }
    parsed.inputs.emplace_back(input.substr(0, eq), input.substr(eq + 1));
  }
  if (!parsed.saved_model.empty()) {
    if (!feeds.empty() || !parsed.targets.empty() || !parsed.init_targets.empty() ||
        !parsed.fetches.empty() || !parsed.restore.empty() || parsed.check) {
      return absl::InvalidArgumentError(
          "--saved_model runs a signature: give --input KEY=FILE.npy, not --feed, --init, "
          "--target, --fetch, --restore or --check");
    }
    return parsed;
  }
  if (!parsed.function.empty()) {
    return absl::InvalidArgumentError("--function is for --saved_model");
  }
  if (!inputs.empty()) {
    return absl::InvalidArgumentError("--input is for --saved_model; graphs take --feed");
  }
  if (!parsed.restore.empty() && parsed.meta_graph.empty()) {
    return absl::InvalidArgumentError(
        "--restore needs --meta_graph: a plain GraphDef does not say how to restore");
  }
  if (parsed.steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--steps must be >= 0, not ", parsed.steps));
  }
  for (const std::string& feed : feeds) {
    size_t eq = feed.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == feed.size()) {
      return absl::InvalidArgumentError(absl::StrCat("--feed '", feed, "' is not NAME=FILE.npy"));
    }
    parsed.feeds.emplace_back(feed.substr(0, eq), feed.substr(eq + 1));
  }
  if (!parsed.check && parsed.fetches.empty() && parsed.targets.empty() &&
      parsed.init_targets.empty()) {
    return absl::InvalidArgumentError("nothing to do: give --fetch, --target or --init");
  }
  return parsed;
}

OpCheck CheckGraphOps(const GraphDef& def, const OpRegistry& ops) {
  OpCheck check;
  absl::flat_hash_map<std::string, int> count;
  std::vector<std::string> order;
  auto see = [&](const std::string& op) {
    ++check.num_nodes;
    auto [it, inserted] = count.try_emplace(op, 0);
    if (inserted) order.push_back(op);
    ++it->second;
  };
  for (const NodeDef& n : def.node()) see(n.op());
  for (const auto& f : def.library().function()) {
    for (const NodeDef& n : f.node_def()) see(n.op());
  }
  check.num_ops = static_cast<int>(order.size());
  const absl::flat_hash_set<std::string> functions = LibraryFunctionNames(def);
  for (const std::string& op : order) {
    if (ops.Find(op) != nullptr || functions.contains(op)) continue;
    check.missing.emplace_back(op, count[op]);
    check.missing_nodes += count[op];
  }
  std::stable_sort(check.missing.begin(), check.missing.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return check;
}

std::string FormatOpCheck(const OpCheck& check, absl::string_view graph_name) {
  std::string text =
      absl::StrCat(graph_name, ": ", check.num_nodes, " nodes, ", check.num_ops, " distinct ops; ");
  if (check.missing.empty()) return absl::StrCat(text, "Sluice has every one\n");
  absl::StrAppend(&text, "Sluice lacks ", check.missing.size(), " of them (", check.missing_nodes,
                  check.missing_nodes == 1 ? " node" : " nodes", "):\n");
  for (const auto& [op, n] : check.missing) {
    absl::StrAppend(&text, "  ", op, ": ", n, n == 1 ? " node\n" : " nodes\n");
  }
  return text;
}

std::string ResolvePath(absl::string_view path, absl::string_view working_dir) {
  if (path.empty() || path[0] == '/' || working_dir.empty()) return std::string(path);
  return (std::filesystem::path(std::string(working_dir)) / std::string(path)).string();
}

std::string FetchFileName(absl::string_view tensor_name) {
  return absl::StrCat(absl::StrReplaceAll(tensor_name, {{":", "_"}, {"/", "_"}}), ".npy");
}

std::string DescribeFetched(absl::string_view name, const Tensor& tensor, int max_values) {
  std::string head = absl::StrCat(name, ": ", DescribeTensorType(tensor));
  if (tensor.NumElements() <= max_values) {
    return absl::StrCat(head, " ", tensor.SummarizeValue(max_values));
  }
  return absl::StrCat(head, " (", tensor.NumElements(), " values)");
}

namespace {

std::string UsageText() {
  std::string usage =
      "usage: runner --graph=FILE [--feed=NAME=FILE.npy ...] [--init=NAME] [--target=NAME]\n"
      "              [--steps=N] [--fetch=NAME[,NAME...]] [--out_dir=DIR]\n"
      "              [--virtual_cpus=N] [--auto_place]\n"
      "       runner --meta_graph=PREFIX.meta [--restore=PREFIX] ...the same...\n"
      "       runner --saved_model=DIR [--tag=serve] [--signature=serving_default]\n"
      "              --input=KEY=FILE.npy ... [--out_dir=DIR]\n"
      "       runner --saved_model=DIR --function=PATH --input=ARG=FILE.npy ... [--out_dir=DIR]\n"
      "       runner --graph=FILE --check\n"
      "Runs a GraphDef (binary or text), or a MetaGraph's graph after restoring a\n"
      "checkpoint through its saver: the --init nodes once, --steps runs of the\n"
      "--target nodes, then fetches the --fetch tensors once.\n";
  for (const char* name : kFlagNames) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    absl::StrAppend(&usage, "  --", name, ": ", flag->Help(), " (default: '", flag->DefaultValue(),
                    "')\n");
  }
  return usage;
}

absl::StatusOr<std::string> MakeOutDir(const RunnerArgs& args, const std::string& wd) {
  if (args.out_dir.empty()) return std::string();
  const std::string out_dir = ResolvePath(args.out_dir, wd);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create --out_dir '", out_dir, "': ", ec.message()));
  }
  return out_dir;
}

// --saved_model: one signature (or --function) on the --input tensors;
// outputs by key (a function's: by their paths in what it returns).
absl::Status RunSavedModel(const RunnerArgs& args, const std::string& wd, std::ostream& out) {
  std::map<std::string, Tensor> inputs;
  for (const auto& [key, path] : args.inputs) {
    absl::StatusOr<Tensor> t = ReadNpyFile(ResolvePath(path, wd));
    if (!t.ok()) return AddContext(t.status(), absl::StrCat("--input ", key));
    inputs.emplace(key, *std::move(t));
  }
  SessionConfig options = BuiltinSessionConfig();
  options.devices.num_virtual_cpus = args.virtual_cpus;
  options.auto_place = args.auto_place;
  ASSIGN_OR_RETURN(SavedModelBundle model,
                   LoadSavedModel(options, ResolvePath(args.saved_model, wd), args.tags));
  std::vector<std::pair<std::string, Tensor>> outputs;
  if (args.function.empty()) {
    ASSIGN_OR_RETURN(auto by_key, RunSignature(model, args.signature, inputs));
    outputs.assign(by_key.begin(), by_key.end());
  } else {
    SavedFunctions functions(&model);
    ASSIGN_OR_RETURN(outputs, functions.Call(args.function, inputs));
  }
  ASSIGN_OR_RETURN(std::string out_dir, MakeOutDir(args, wd));
  for (const auto& [key, tensor] : outputs) {
    out << DescribeFetched(key, tensor) << "\n";
    if (!out_dir.empty()) {
      RETURN_IF_ERROR(
          WriteNpyFile(tensor, (std::filesystem::path(out_dir) / FetchFileName(key)).string()));
    }
  }
  out.flush();
  return model.session->Close();
}

absl::Status RunFromArgs(const RunnerArgs& args, std::ostream& out, std::ostream& err) {
  const char* wd_env = std::getenv("BUILD_WORKING_DIRECTORY");
  const std::string wd = wd_env != nullptr ? wd_env : "";
  if (!args.saved_model.empty()) return RunSavedModel(args, wd, out);

  GraphDef def;
  RunRequest request;
  if (!args.meta_graph.empty()) {
    ASSIGN_OR_RETURN(MetaGraphDef meta, ReadMetaGraph(ResolvePath(args.meta_graph, wd)));
    def = meta.graph_def();
    if (!args.restore.empty()) {
      if (!meta.has_saver_def()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--restore: ", args.meta_graph, " has no saver_def"));
      }
      // The restore runs first: one more init target, its prefix fed.
      request.feeds.emplace_back(meta.saver_def().filename_tensor_name(),
                                 Tensor::Scalar<std::string>(ResolvePath(args.restore, wd)));
      request.init_targets.push_back(meta.saver_def().restore_op_name());
    }
  } else {
    ASSIGN_OR_RETURN(def, ReadGraphDefFile(ResolvePath(args.graph, wd)));
  }
  for (const auto& [name, path] : args.feeds) {
    absl::StatusOr<Tensor> t = ReadNpyFile(ResolvePath(path, wd));
    if (!t.ok()) return AddContext(t.status(), absl::StrCat("--feed ", name));
    request.feeds.emplace_back(name, *std::move(t));
  }
  request.init_targets.insert(request.init_targets.end(), args.init_targets.begin(),
                              args.init_targets.end());
  request.targets = args.targets;
  request.steps = args.steps;
  request.fetches = args.fetches;

  SessionConfig options = BuiltinSessionConfig();
  options.devices.num_virtual_cpus = args.virtual_cpus;
  options.auto_place = args.auto_place;
  ASSIGN_OR_RETURN(RunReport report, RunGraphDef(def, request, options));
  for (const std::string& w : report.warnings) err << "runner: warning: " << w << "\n";

  ASSIGN_OR_RETURN(std::string out_dir, MakeOutDir(args, wd));
  for (size_t i = 0; i < report.fetched.size(); ++i) {
    const std::string& name = request.fetches[i];
    out << DescribeFetched(name, report.fetched[i]) << "\n";
    if (!out_dir.empty()) {
      std::string path = (std::filesystem::path(out_dir) / FetchFileName(name)).string();
      RETURN_IF_ERROR(WriteNpyFile(report.fetched[i], path));
    }
  }
  out.flush();
  return absl::OkStatus();
}

}  // namespace

int RunnerMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<RunnerArgs> parsed = ParseRunnerArgs(args);
  if (!parsed.ok()) {
    err << "runner: error: " << OneLine(parsed.status()) << "\n";
    return 1;
  }
  if (parsed->help) {
    out << UsageText();
    return 0;
  }
  if (parsed->check) {
    const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
    absl::StatusOr<GraphDef> def;
    if (parsed->meta_graph.empty()) {
      def = ReadGraphDefFile(ResolvePath(parsed->graph, wd ? wd : ""));
    } else {
      absl::StatusOr<MetaGraphDef> meta =
          ReadMetaGraph(ResolvePath(parsed->meta_graph, wd ? wd : ""));
      def = meta.ok() ? absl::StatusOr<GraphDef>(meta->graph_def()) : meta.status();
    }
    if (!def.ok()) {
      err << "runner: error: " << OneLine(def.status()) << "\n";
      return 1;
    }
    const OpCheck check = CheckGraphOps(*def, *BuiltinOps());
    out << FormatOpCheck(check, parsed->graph.empty() ? parsed->meta_graph : parsed->graph);
    return check.missing.empty() ? 0 : 3;
  }
  absl::Status s = RunFromArgs(*parsed, out, err);
  if (!s.ok()) {
    err << "runner: error: " << OneLine(s) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace sluice
