// Trains the MLP of mlp_model.h with in-graph replication: one client builds
// one graph with one tower per device, each computing the gradients of its
// slice of the batch; the averaged gradients update the one copy of the
// variables (training/central_storage.h).
//
// On this machine, one tower per virtual CPU device (CPU:1..CPU:K), the
// variables on CPU:0:
//
//   bazel run //examples:in_graph_replication -- --towers=2 --steps=600
//
// Across a cluster, as TensorFlow 1.x's notes describe it: the variables on
// the /job:ps tasks, one tower per /job:worker task, and the chief (worker 0)
// the only client. The other tasks only serve their devices:
//
//   bazel run //tools:launch -- --ps=1 --workers=2 -- //examples:in_graph_replication
//
// --batch is the global batch of a step (a multiple of the tower count). It
// prints where the first step's nodes ran, progress lines like examples/mlp
// and the median step time, and ends with "final: loss=<x> accuracy=<y>"
// over the whole training set (computed by the unreplicated forward graph).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/server.h"
#include "examples/mlp_model.h"
#include "sluice.h"
#include "training/central_storage.h"

ABSL_FLAG(int, towers, 2,
          "local runs: towers, one per virtual CPU device (in a cluster: one per worker task)");
ABSL_FLAG(int, steps, 600, "training steps");
ABSL_FLAG(int, batch, 128, "examples per step, split evenly between the towers");
ABSL_FLAG(std::string, hidden, "256,256", "hidden layer sizes, comma separated");
ABSL_FLAG(double, learning_rate, 0.05, "learning rate");
ABSL_FLAG(std::string, optimizer, "momentum", "sgd, momentum or adam");
ABSL_FLAG(int, log_every, 50, "print progress every N steps");
ABSL_FLAG(int, examples, 8192, "size of the synthetic training set");
ABSL_FLAG(int, seed, 1, "seed of the initial weights");
ABSL_FLAG(std::string, dump_weights, "", "write every variable here as .npy at the end");

namespace sluice {
namespace {

// Where the towers and the variables go.
struct Layout {
  std::string towers_from;                    // for errors: "--towers" or "worker tasks"
  std::vector<std::string> towers;            // one tower each
  std::vector<std::string> variable_devices;  // variables round-robin over these
};

absl::StatusOr<Layout> LocalLayout() {
  const int towers = absl::GetFlag(FLAGS_towers);
  if (towers <= 0) return absl::InvalidArgumentError("--towers must be > 0");
  Layout layout;
  layout.towers_from = "--towers";
  for (int k = 1; k <= towers; ++k) layout.towers.push_back(absl::StrCat("/device:CPU:", k));
  layout.variable_devices = {"/device:CPU:0"};
  return layout;
}

// A tower on every worker task; the variables on the ps tasks (on the chief
// when the cluster has none).
Layout ClusterLayout(const ClusterSpec& cluster) {
  Layout layout;
  layout.towers_from = "worker tasks";
  for (int k = 0; k < cluster.num_tasks("worker"); ++k) {
    layout.towers.push_back(TaskName("worker", k) + "/device:CPU:0");
  }
  for (int i = 0; i < cluster.num_tasks("ps"); ++i) {
    layout.variable_devices.push_back(TaskName("ps", i) + "/device:CPU:0");
  }
  if (layout.variable_devices.empty()) layout.variable_devices = {layout.towers[0]};
  return layout;
}

absl::StatusOr<MlpConfig> ConfigFromFlags() {
  MlpConfig config;
  config.layers = {784};
  for (absl::string_view h : absl::StrSplit(absl::GetFlag(FLAGS_hidden), ',', absl::SkipEmpty())) {
    int64_t n;
    if (!absl::SimpleAtoi(h, &n) || n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("--hidden: bad layer size '", h, "'"));
    }
    config.layers.push_back(n);
  }
  config.layers.push_back(10);
  config.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  config.optimizer = absl::GetFlag(FLAGS_optimizer);
  config.seed = absl::GetFlag(FLAGS_seed);
  return config;
}

struct Model {
  Scope scope = Scope::NewRootScope(BuiltinOps());
  Output x, labels;
  std::unique_ptr<Optimizer> optimizer;
  CentralStorageModel strategy;
  std::optional<MlpModel> forward;  // the unreplicated graph, for the final evaluation
};

absl::StatusOr<std::unique_ptr<Model>> BuildModel(const Layout& layout) {
  ASSIGN_OR_RETURN(MlpConfig config, ConfigFromFlags());
  const int batch = absl::GetFlag(FLAGS_batch);
  const int towers = static_cast<int>(layout.towers.size());
  if (batch <= 0 || batch % towers != 0) {
    return absl::InvalidArgumentError(absl::StrCat("--batch (", batch, ") must be a multiple of ",
                                                   layout.towers_from, " (", towers, ")"));
  }
  auto m = std::make_unique<Model>();
  const Scope& s = m->scope;
  m->x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({-1, 784})});
  m->labels = ops::Placeholder(s.WithOpName("labels"), DT_INT32, {.shape = TensorShape({-1})});
  ASSIGN_OR_RETURN(m->optimizer, NewMlpOptimizer(config));
  ReplicaFn fn = [&](const Scope& scope, const std::vector<Output>& in)
      -> absl::StatusOr<ReplicaModel> {
    ASSIGN_OR_RETURN(MlpModel forward, BuildMlpTower(scope, config, in[0], in[1]));
    // Spread the variables over the variable devices, round-robin.
    for (size_t i = 0; i < forward.weights.size(); ++i) {
      forward.weights[i].node->set_requested_device(
          layout.variable_devices[i % layout.variable_devices.size()]);
    }
    m->forward = forward;
    return ReplicaModel{forward.loss, forward.weights, {forward.accuracy}};
  };
  CentralStorageOptions options;
  options.compute_devices = layout.towers;
  options.variable_device = layout.variable_devices[0];
  ASSIGN_OR_RETURN(m->strategy,
                   BuildCentralStorage(s, {m->x, m->labels}, fn, m->optimizer.get(), options));
  return m;
}

// Where the step's nodes ran: nodes and MatMuls per device.
void PrintPlacement(const RunMetadata& metadata) {
  for (const GraphDef& partition : metadata.partition_graphs) {
    if (partition.node().empty()) continue;
    int matmuls = 0, variables = 0;
    for (const NodeDef& n : partition.node()) {
      // Fused forward layers (placement/fuse_ops.h) count too.
      matmuls += n.op() == "MatMul" || n.op() == "_FusedMatMul";
      variables += n.op() == "VariableV2";
    }
    std::printf("placement: %s: %d nodes, %d MatMul, %d variables\n",
                partition.node(0).device().c_str(), partition.node_size(), matmuls, variables);
  }
}

absl::Status DumpWeights(Session* session, const Model& m, const std::string& dir) {
  std::vector<std::string> names;
  for (const Output& w : m.strategy.model.variables) names.push_back(w.node->name());
  ASSIGN_OR_RETURN(std::vector<Tensor> values, session->Run({}, names, {}));
  for (size_t i = 0; i < names.size(); ++i) {
    RETURN_IF_ERROR(WriteNpyFile(
        values[i], absl::StrCat(dir, "/", absl::StrReplaceAll(names[i], {{"/", "_"}}), ".npy")));
  }
  return absl::OkStatus();
}

absl::Status Train(Session* session, const Model& m, const Layout& layout) {
  const int steps = absl::GetFlag(FLAGS_steps), batch = absl::GetFlag(FLAGS_batch);
  if (steps < 0) return absl::InvalidArgumentError("--steps must be >= 0");
  const CentralStorageModel& cs = m.strategy;
  RETURN_IF_ERROR(session->Run({}, {}, {cs.init}).status());
  Dataset data = MakeSyntheticDataset({.examples = absl::GetFlag(FLAGS_examples)});
  std::printf("training MLP %s on %lld synthetic examples, batch %d over %zu towers, %s lr=%g\n",
              absl::GetFlag(FLAGS_hidden).c_str(), static_cast<long long>(data.x.dim_size(0)),
              batch, layout.towers.size(), absl::GetFlag(FLAGS_optimizer).c_str(),
              absl::GetFlag(FLAGS_learning_rate));
  auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  int last_step = 0;
  std::vector<double> step_ms;
  for (int step = 1; step <= steps; ++step) {
    Dataset b = Batch(data, static_cast<int64_t>(step - 1) * batch, batch);
    RunOptions options;
    options.output_partition_graphs = step == 1;
    RunMetadata metadata;
    auto start = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     session->Run({{m.x.node->name(), b.x}, {m.labels.node->name(), b.y}},
                                  {cs.loss.name()}, {cs.train->name()}, options, &metadata));
    auto now = std::chrono::steady_clock::now();
    step_ms.push_back(std::chrono::duration<double, std::milli>(now - start).count());
    if (step == 1) PrintPlacement(metadata);
    if (step % absl::GetFlag(FLAGS_log_every) == 0 || step == steps) {
      double secs = std::chrono::duration<double>(now - last).count();
      std::printf("step %d: loss=%.4f (%.1f steps/s)\n", step, out[0].scalar<float>(),
                  (step - last_step) / secs);
      std::fflush(stdout);
      last = now;
      last_step = step;
    }
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> final_out,
                   session->Run({{m.x, data.x}, {m.labels, data.y}},
                                {m.forward->loss, m.forward->accuracy}));
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("trained %d steps in %.1f s\n", steps, total);
  if (!step_ms.empty()) {
    std::nth_element(step_ms.begin(), step_ms.begin() + step_ms.size() / 2, step_ms.end());
    std::printf("median step: %.2f ms with %zu towers\n", step_ms[step_ms.size() / 2],
                layout.towers.size());
  }
  if (!absl::GetFlag(FLAGS_dump_weights).empty()) {
    RETURN_IF_ERROR(DumpWeights(session, m, absl::GetFlag(FLAGS_dump_weights)));
  }
  std::printf("final: loss=%.4f accuracy=%.4f\n", final_out[0].scalar<float>(),
              final_out[1].scalar<float>());
  return absl::OkStatus();
}

absl::Status RunLocal() {
  ASSIGN_OR_RETURN(Layout layout, LocalLayout());
  ASSIGN_OR_RETURN(std::unique_ptr<Model> m, BuildModel(layout));
  SessionConfig options = BuiltinSessionConfig();
  options.devices.num_virtual_cpus = static_cast<int>(layout.towers.size());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options, *m->scope.graph()));
  return Train(session.get(), *m, layout);
}

absl::Status RunInCluster(const TaskConfig& task) {
  ServerOptions server_options;
  server_options.config = task;
  ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(server_options));
  if (task.job != "ps" && task.job != "worker") {
    return absl::InvalidArgumentError(absl::StrCat("unknown job '", task.job, "' (ps, worker)"));
  }
  if (task.job == "ps" || task.task != 0) {
    // The chief's graph runs here; this task only serves its device.
    std::printf("%s: serving at %s\n", server->task().c_str(), server->target().c_str());
    std::fflush(stdout);
    server->Join();  // until the launcher stops the cluster
    return absl::OkStatus();
  }
  const Layout layout = ClusterLayout(task.cluster);
  ASSIGN_OR_RETURN(std::unique_ptr<Model> m, BuildModel(layout));
  ASSIGN_OR_RETURN(GraphDef def, m->scope.ToGraphDef());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, server->NewSession(def));
  RETURN_IF_ERROR(Train(session.get(), *m, layout));
  return session->Close();
}

absl::Status Main() {
  absl::StatusOr<TaskConfig> task = TaskConfigFromEnv();
  if (absl::IsNotFound(task.status())) return RunLocal();  // not launched: this machine
  RETURN_IF_ERROR(task.status());
  return RunInCluster(*task);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "in_graph_replication: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
