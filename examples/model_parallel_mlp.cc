// Model parallelism by hand: an MLP classifier whose layers live on different
// devices, each layer's variables and computation built in a device scope.
//
//   bazel run //examples:model_parallel_mlp
//   bazel run //examples:model_parallel_mlp -- --devices=CPU:0,CPU:1,CPU:2 --hidden=512,256
//   bazel run //examples:model_parallel_mlp -- --micro_batches=4 --save_graph=/tmp/placed.pbtxt
//   bazel run //tools:launch -- --workers=2 -- //examples:model_parallel_mlp   # over two tasks
//
// Under the launcher (SLUICE_CONFIG set) each process is one cluster task:
// worker 0 builds and trains the model, its stages on the first device of
// each task (one stage per task), and the other tasks only serve their
// devices until the launcher stops them.
//
// Devices: --devices (a comma list, "CPU:1" or "/device:CPU:1"), else two
// from the session: two GPUs when there are, one GPU and CPU:0, else CPU:0
// and the virtual CPU:1. Consecutive layers are grouped into one stage per
// device, balancing their weights. Each stage's backward pass runs on its
// device too (placement/pipeline.h); --micro_batches > 1 also pipelines the
// stages. Prints where the session placed each layer, progress lines, and
// ends with "final: loss=<x> accuracy=<y>" (over the whole training set).
// --save_graph writes the graph with every node's placed device (for
// tools/visualize); --trace a Chrome trace of the last step.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "examples/mlp_model.h"
#include "placement/device_name.h"
#include "placement/pipeline.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/server.h"
#include "examples/dense_stage.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 600, "training steps");
ABSL_FLAG(int, batch, 128, "examples per step");
ABSL_FLAG(std::string, hidden, "256,256", "hidden layer sizes, comma separated");
ABSL_FLAG(double, learning_rate, 0.05, "learning rate");
ABSL_FLAG(std::string, optimizer, "momentum", "sgd, momentum or adam");
ABSL_FLAG(int, log_every, 50, "print progress every N steps");
ABSL_FLAG(int, examples, 8192, "size of the synthetic training set");
ABSL_FLAG(std::string, devices, "", "devices of the stages, comma separated (default: chosen)");
ABSL_FLAG(int, micro_batches, 1, "micro-batches per step (pipelining when > 1)");
ABSL_FLAG(std::string, save_graph, "", "write the placed graph here (.pb or .pbtxt)");
ABSL_FLAG(std::string, trace, "", "write a Chrome trace of the last training step here");

namespace sluice {
namespace {

std::string InWorkingDir(const std::string& path) {
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || wd == nullptr) return path;
  return absl::StrCat(wd, "/", path);
}

absl::StatusOr<std::vector<int64_t>> LayerSizes() {
  std::vector<int64_t> sizes = {784};
  for (absl::string_view h : absl::StrSplit(absl::GetFlag(FLAGS_hidden), ',', absl::SkipEmpty())) {
    int64_t n;
    if (!absl::SimpleAtoi(h, &n) || n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("--hidden: bad layer size '", h, "'"));
    }
    sizes.push_back(n);
  }
  sizes.push_back(10);
  return sizes;
}

// The --devices entries as device requests ("CPU:1" -> "/device:CPU:1").
absl::StatusOr<std::vector<DeviceName>> RequestedDevices() {
  std::vector<DeviceName> out;
  for (absl::string_view d : absl::StrSplit(absl::GetFlag(FLAGS_devices), ',', absl::SkipEmpty())) {
    std::string name = absl::StartsWith(d, "/") ? std::string(d) : absl::StrCat("/device:", d);
    absl::StatusOr<DeviceName> parsed = DeviceName::Parse(name);
    if (!parsed.ok()) return AddContext(parsed.status(), "--devices");
    out.push_back(*parsed);
  }
  return out;
}

// Full names of the stage devices: the requested ones, else two chosen.
absl::StatusOr<std::vector<std::string>> ChooseDevices(const std::vector<std::string>& available,
                                                       const std::vector<DeviceName>& requested) {
  std::vector<std::string> cpus, gpus, chosen;
  std::vector<DeviceName> parsed;
  for (const std::string& d : available) {
    ASSIGN_OR_RETURN(DeviceName name, DeviceName::Parse(d));
    parsed.push_back(name);
    (name.type == "GPU" ? gpus : cpus).push_back(d);
  }
  for (const DeviceName& r : requested) {
    auto match = std::find_if(parsed.begin(), parsed.end(),
                              [&](const DeviceName& d) { return r.Matches(d); });
    if (match == parsed.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--devices: no device matches '", r.ToString(),
                                                     "' (devices: ", absl::StrJoin(available, ", "),
                                                     ")"));
    }
    chosen.push_back(available[match - parsed.begin()]);
  }
  if (!chosen.empty()) return chosen;
  // Several tasks: the first device of each of the first two (a GPU if the
  // task has one), so that the stages exchange activations over the wire.
  std::map<std::string, std::string> first_of_task;
  std::vector<std::string> tasks;
  for (size_t i = 0; i < available.size(); ++i) {
    DeviceName task = parsed[i];
    task.type.reset();
    task.id.reset();
    const std::string key = task.ToString();
    if (!first_of_task.count(key)) tasks.push_back(key);
    std::string& first = first_of_task[key];
    if (first.empty() || (parsed[i].type == "GPU" && !absl::StrContains(first, "GPU"))) {
      first = available[i];
    }
  }
  if (tasks.size() >= 2) return std::vector<std::string>{first_of_task[tasks[0]], first_of_task[tasks[1]]};
  if (gpus.size() >= 2) return std::vector<std::string>{gpus[0], gpus[1]};
  if (gpus.size() == 1) return std::vector<std::string>{gpus[0], cpus[0]};
  if (cpus.size() >= 2) return std::vector<std::string>{cpus[0], cpus[1]};
  return cpus;
}

// Device index of each layer: the layers cut into min(layers, devices) runs
// of consecutive layers, device k taking run k, so that the largest run
// holds as few weights as possible (a small dynamic program).
std::vector<int> AssignLayers(const std::vector<int64_t>& sizes, int num_devices) {
  const int n = static_cast<int>(sizes.size()) - 1;
  const int groups = std::min(n, num_devices);
  std::vector<double> prefix(n + 1, 0);  // weights of layers 1..i
  for (int l = 1; l <= n; ++l) prefix[l] = prefix[l - 1] + double(sizes[l - 1]) * sizes[l];
  // cost[k][i]: the best largest run when the first i layers form k runs;
  // cut[k][i]: where the last of those runs starts.
  const double inf = 1e300;
  std::vector<std::vector<double>> cost(groups + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> cut(groups + 1, std::vector<int>(n + 1, 0));
  cost[0][0] = 0;
  for (int k = 1; k <= groups; ++k) {
    for (int i = k; i <= n; ++i) {
      for (int j = k - 1; j < i; ++j) {
        const double c = std::max(cost[k - 1][j], prefix[i] - prefix[j]);
        if (c < cost[k][i]) cost[k][i] = c, cut[k][i] = j;
      }
    }
  }
  std::vector<int> device(n);
  for (int k = groups, i = n; k > 0; i = cut[k][i], --k) {
    for (int l = cut[k][i]; l < i; ++l) device[l] = k - 1;
  }
  return device;
}

absl::StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer(const std::string& name, double lr) {
  if (name == "adam") return std::make_unique<AdamOptimizer>(lr);
  if (name == "momentum") return std::make_unique<MomentumOptimizer>(lr, 0.9);
  if (name == "sgd") return std::make_unique<GradientDescentOptimizer>(lr);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown optimizer '", name, "' (sgd, momentum, adam)"));
}

// Node name -> device, from the partition graphs of a run.
void RecordPlacement(const RunMetadata& metadata, std::map<std::string, std::string>* placed) {
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      if (n.op() != "_Send" && n.op() != "_Recv") (*placed)[n.name()] = n.device();
    }
  }
}

// One line per layer: the devices its nodes (variables, forward, backward,
// update) were placed on, with node counts.
void PrintPlacement(const std::vector<int64_t>& sizes,
                    const std::map<std::string, std::string>& placed) {
  for (size_t l = 1; l < sizes.size(); ++l) {
    const std::string tag = absl::StrCat("layer", l, "/");
    std::map<std::string, int> count;
    for (const auto& [name, device] : placed) {
      if (absl::StartsWith(name, tag) || absl::StrContains(name, absl::StrCat("/", tag))) {
        ++count[device];
      }
    }
    std::vector<std::string> where;
    for (const auto& [device, n] : count) where.push_back(absl::StrCat(device, " (", n, " nodes)"));
    std::printf("placement: layer%zu %lldx%lld on %s\n", l, static_cast<long long>(sizes[l - 1]),
                static_cast<long long>(sizes[l]), absl::StrJoin(where, ", ").c_str());
  }
}

absl::Status Main() {
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes, LayerSizes());
  const int steps = absl::GetFlag(FLAGS_steps), batch = absl::GetFlag(FLAGS_batch);
  const int micro = absl::GetFlag(FLAGS_micro_batches), examples = absl::GetFlag(FLAGS_examples);
  if (steps < 0 || batch <= 0) return absl::InvalidArgumentError("--steps >= 0 and --batch > 0");
  if (micro < 1 || batch % micro != 0 || examples % micro != 0) {
    return absl::InvalidArgumentError(
        "--micro_batches must be >= 1 and divide --batch and --examples");
  }
  ASSIGN_OR_RETURN(std::vector<DeviceName> requested, RequestedDevices());

  // The session first, to see its devices; the graph is added afterwards.
  // In a cluster: one task's server in this process, and a session whose
  // master places over every task.
  std::unique_ptr<Server> server;
  std::unique_ptr<Session> session;
  absl::StatusOr<TaskConfig> task = TaskConfigFromEnv();
  if (task.ok()) {
    ServerOptions server_options;
    server_options.config = *task;
    ASSIGN_OR_RETURN(server, Server::Create(server_options));
    if (task->job != "worker" || task->task != 0) {
      std::printf("%s: serving its devices for the chief\n", server->task().c_str());
      std::fflush(stdout);
      server->Join();  // until the launcher stops the cluster
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(session, server->NewSession(GraphDef()));
  } else if (task.status().code() != absl::StatusCode::kNotFound) {
    return task.status();
  } else {
    SessionConfig options = BuiltinSessionConfig();
    options.devices.num_virtual_cpus = 1;
    for (const DeviceName& r : requested) {
      if (r.type == "CPU" && r.id)
        options.devices.num_virtual_cpus = std::max(options.devices.num_virtual_cpus, *r.id);
    }
    ASSIGN_OR_RETURN(session, NewSession(options, GraphDef()));
  }
  ASSIGN_OR_RETURN(std::vector<std::string> devices,
                   ChooseDevices(session->ListDevices(), requested));

  // Stages: runs of consecutive layers on one device.
  const int num_layers = static_cast<int>(sizes.size()) - 1;
  std::vector<int> layer_device = AssignLayers(sizes, static_cast<int>(devices.size()));
  std::vector<PipelineStage> stages;
  for (int first = 1; first <= num_layers;) {
    int last = first;
    while (last < num_layers && layer_device[last] == layer_device[first - 1]) ++last;
    stages.push_back(DenseStage(devices[layer_device[first - 1]], sizes, first, last));
    std::printf("stage %zu: layers %d-%d on %s\n", stages.size() - 1, first, last,
                devices[layer_device[first - 1]].c_str());
    first = last + 1;
  }

  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({-1, 784})});
  Output labels =
      ops::Placeholder(root.WithOpName("labels"), DT_INT32, {.shape = TensorShape({-1})});
  auto xent = [](const Scope& s, const Output& logits,
                 absl::Span<const Output> targets) -> absl::StatusOr<Output> {
    return ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, targets[0])[0], {0});
  };
  ASSIGN_OR_RETURN(Pipeline model,
                   BuildPipeline(root, stages, x, {labels}, xent, {.num_micro_batches = micro}));
  const Scope out = root.WithDevice(stages.back().device);
  Output prediction = ops::ArgMax(out.WithOpName("prediction"), model.output, 1);
  Output correct = ops::Equal(out, prediction, ops::Cast(out, labels, DT_INT64));
  Output accuracy = ops::Mean(out.WithOpName("accuracy"), ops::Cast(out, correct, DT_FLOAT), {0});
  GlobalStep global_step = CreateGlobalStep(root);
  const std::string optimizer_name = absl::GetFlag(FLAGS_optimizer);
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> optimizer,
                   MakeOptimizer(optimizer_name, absl::GetFlag(FLAGS_learning_rate)));
  ASSIGN_OR_RETURN(Node * train, optimizer->ApplyGradients(root.WithOpName("train"),
                                                           model.grads_and_vars, &global_step.ref));
  Node* init = ops::GlobalVariablesInitializer(root.WithOpName("init"));
  ASSIGN_OR_RETURN(GraphDef def, root.ToGraphDef());
  RETURN_IF_ERROR(session->Extend(def));

  RunOptions placement_run;
  placement_run.output_partition_graphs = true;
  RunMetadata metadata;
  std::map<std::string, std::string> placed;
  RETURN_IF_ERROR(session->Run({}, {}, {init}, placement_run, &metadata).status());
  RecordPlacement(metadata, &placed);

  Dataset data = MakeSyntheticDataset({.examples = examples});
  std::printf(
      "training MLP %s on %d synthetic examples, batch %d in %d micro-batch(es), %s lr=%g\n",
      absl::GetFlag(FLAGS_hidden).c_str(), examples, batch, micro, optimizer_name.c_str(),
      absl::GetFlag(FLAGS_learning_rate));
  auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  int last_step = 0;
  for (int step = 1; step <= steps; ++step) {
    Dataset b = Batch(data, static_cast<int64_t>(step - 1) * batch, batch);
    RunOptions run_options;
    run_options.output_partition_graphs = step == 1;
    run_options.trace = step == steps && !absl::GetFlag(FLAGS_trace).empty();
    RunMetadata step_metadata;
    ASSIGN_OR_RETURN(std::vector<Tensor> loss, session->Run({{x, b.x}, {labels, b.y}}, {model.loss},
                                                            {train}, run_options, &step_metadata));
    if (step == 1) {
      RecordPlacement(step_metadata, &placed);
      PrintPlacement(sizes, placed);
    }
    if (run_options.trace) {
      FILE* f = std::fopen(InWorkingDir(absl::GetFlag(FLAGS_trace)).c_str(), "w");
      if (f == nullptr) return absl::NotFoundError("cannot write --trace file");
      std::fputs(ToChromeTraceJson(step_metadata.step_stats).c_str(), f);
      std::fclose(f);
    }
    if (step % absl::GetFlag(FLAGS_log_every) == 0 || step == steps) {
      auto now = std::chrono::steady_clock::now();
      double secs = std::chrono::duration<double>(now - last).count();
      std::printf("step %d: loss=%.4f (%.1f steps/s)\n", step, loss[0].scalar<float>(),
                  (step - last_step) / secs);
      std::fflush(stdout);
      last = now;
      last_step = step;
    }
  }
  RunMetadata eval_metadata;
  ASSIGN_OR_RETURN(std::vector<Tensor> final_out,
                   session->Run({{x, data.x}, {labels, data.y}}, {model.loss, accuracy}, {},
                                placement_run, &eval_metadata));
  RecordPlacement(eval_metadata, &placed);
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("trained %d steps in %.1f s\n", steps, total);

  if (!absl::GetFlag(FLAGS_save_graph).empty()) {
    // The built graph, each node's device the one the session placed it on
    // (nodes no run needed keep their requested device).
    for (NodeDef& n : *def.mutable_node()) {
      auto it = placed.find(n.name());
      if (it != placed.end()) n.set_device(it->second);
    }
    std::string path = InWorkingDir(absl::GetFlag(FLAGS_save_graph));
    RETURN_IF_ERROR(WriteGraphDefFile(
        def, path,
        absl::EndsWith(path, ".pbtxt") ? GraphFileFormat::kText : GraphFileFormat::kBinary));
    std::printf("saved the placed graph to %s\n", path.c_str());
  }
  std::printf("final: loss=%.4f accuracy=%.4f\n", final_out[0].scalar<float>(),
              final_out[1].scalar<float>());
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "model_parallel_mlp: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
