// Trains the MLP of mlp_model.h with asynchronous peer-to-peer data
// parallelism (training/peer_to_peer.h): no parameter server. Every worker
// process holds all the variables, sends the gradients of each of its steps
// to every other worker, and applies its own with whatever its peers have
// sent, never more than --max_staleness steps behind any of them.
//
//   bazel run //tools:launch -- --workers=3 -- //examples:p2p_mlp --max_staleness=2
//
// Each process gets its task from $SLUICE_CONFIG (the launcher sets it; the
// cluster has only a "worker" job) and trains on its CPU:0, every worker
// from the same initial weights (--seed). The update applies the sum of the
// workers' gradients, so the learning rate is divided by the number of
// workers (the update is then their mean). Every worker logs progress and,
// once every peer has finished and their last gradients are applied, its
// step rate and largest staleness; worker 0 (the chief, whose exit ends the
// launched job) then prints "final: loss=<x> accuracy=<y>" of its copy over
// the whole training set. With SGD every copy has applied every gradient
// once by then, so all copies are equal.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/server.h"
#include "examples/mlp_model.h"
#include "sluice.h"
#include "training/peer_to_peer.h"
#include "training/peer_to_peer_trainer.h"

ABSL_FLAG(int, steps, 300, "steps per worker");
ABSL_FLAG(int, batch, 64, "examples per worker and step");
ABSL_FLAG(std::string, hidden, "128", "hidden layer sizes, comma separated");
ABSL_FLAG(double, learning_rate, 0.1, "learning rate of the mean of the workers' gradients");
ABSL_FLAG(std::string, optimizer, "sgd", "sgd, momentum or adam");
ABSL_FLAG(int, max_staleness, 2, "a worker is at most this many steps ahead of any peer");
ABSL_FLAG(double, peer_timeout_s, 30, "a step waiting longer for a peer's gradients fails");
ABSL_FLAG(int, log_every, 50, "print progress every N steps");
ABSL_FLAG(int, examples, 8192, "size of the synthetic training set");
ABSL_FLAG(int, seed, 1, "seed of the initial weights (the same on every worker)");

namespace sluice {
namespace {

absl::StatusOr<MlpConfig> ConfigFromFlags(int workers) {
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
  config.learning_rate = absl::GetFlag(FLAGS_learning_rate) / workers;
  config.optimizer = absl::GetFlag(FLAGS_optimizer);
  config.seed = absl::GetFlag(FLAGS_seed);
  return config;
}

absl::Status Main() {
  absl::StatusOr<TaskConfig> task = TaskConfigFromEnv();
  if (absl::IsNotFound(task.status())) {
    return absl::FailedPreconditionError(
        "no cluster: $SLUICE_CONFIG is not set. Start the workers with the launcher:\n"
        "  bazel run //tools:launch -- --workers=3 -- //examples:p2p_mlp --max_staleness=2");
  }
  RETURN_IF_ERROR(task.status());
  if (task->job != "worker" || task->cluster.jobs().size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "p2p_mlp runs in a cluster of one \"worker\" job (no ps); this task is ",
        TaskName(task->job, task->task)));
  }
  const int workers = task->cluster.num_tasks("worker");
  ASSIGN_OR_RETURN(MlpConfig config, ConfigFromFlags(workers));
  const int steps = absl::GetFlag(FLAGS_steps), batch = absl::GetFlag(FLAGS_batch);
  const int log_every = std::max(1, absl::GetFlag(FLAGS_log_every));
  if (steps < 0 || batch <= 0) return absl::InvalidArgumentError("--steps >= 0 and --batch > 0");

  ServerOptions server_options;
  server_options.config = *task;
  server_options.rpc.connect_timeout_ms = 1000;
  ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(server_options));

  // The graph: this worker's MLP on its CPU:0, exchanging gradients with all.
  Scope root = Scope::NewRootScope(BuiltinOps());
  std::vector<std::string> devices;
  for (int k = 0; k < workers; ++k) {
    devices.push_back(absl::StrCat(TaskName("worker", k), "/device:CPU:0"));
  }
  const Scope ws = root.WithDevice(devices[task->task]);
  Output x = ops::Placeholder(ws.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({-1, 784})});
  Output labels = ops::Placeholder(ws.WithOpName("labels"), DT_INT32, {.shape = TensorShape({-1})});
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> optimizer, NewMlpOptimizer(config));
  ReplicaFn tower = [&config](const Scope& s,
                              const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {
    ASSIGN_OR_RETURN(MlpModel m, BuildMlpTower(s, config, in[0], in[1]));
    return ReplicaModel{m.loss, m.weights, {m.accuracy}};
  };
  PeerToPeerOptions p2p{devices, task->task, absl::GetFlag(FLAGS_max_staleness)};
  ASSIGN_OR_RETURN(PeerToPeerModel model,
                   BuildPeerToPeer(root, {x, labels}, tower, optimizer.get(), p2p));
  ASSIGN_OR_RETURN(GraphDef def, root.ToGraphDef());
  ClusterSessionOptions session_options;
  session_options.session.default_device = server->task();
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, server->NewSession(def, session_options));
  RETURN_IF_ERROR(session->Run({}, {}, {model.init}).status());

  const Dataset data = MakeSyntheticDataset({.examples = absl::GetFlag(FLAGS_examples)});
  const int64_t n = data.x.dim_size(0);
  std::printf("%s: peer-to-peer MLP %s on %lld synthetic examples, batch %d per worker, %d workers, "
              "max staleness %d, %s lr=%g per worker gradient\n",
              server->task().c_str(), absl::GetFlag(FLAGS_hidden).c_str(),
              static_cast<long long>(n), batch, workers, p2p.max_staleness,
              config.optimizer.c_str(), config.learning_rate);
  std::fflush(stdout);

  PeerToPeerTrainerOptions trainer_options;
  trainer_options.peer_timeout_ms =
      static_cast<int64_t>(absl::GetFlag(FLAGS_peer_timeout_s) * 1000);
  PeerToPeerTrainer trainer(session.get(), model, trainer_options);
  const absl::Time start = absl::Now();
  for (int t = 0; t < steps; ++t) {
    // Worker k's share of the data set: every worker a different slice.
    const int64_t begin = (static_cast<int64_t>(t) * workers + task->task) * batch % n;
    Dataset b = Batch(data, std::min(begin, n - batch), batch);
    ASSIGN_OR_RETURN(PeerStepStats st, trainer.Step({{x, b.x}, {labels, b.y}}));
    if (t % log_every == 0 || t + 1 == steps) {
      std::printf("%s step %d: loss=%.4f staleness=%d peer_gradients=%d\n",
                  server->task().c_str(), t, st.loss, st.staleness, st.peer_gradients);
      std::fflush(stdout);
    }
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  RETURN_IF_ERROR(trainer.Finish());
  std::printf("%s: %d steps in %.1f s (%.1f steps/s), max staleness %d (bound %d), "
              "%lld peer gradients applied\n",
              server->task().c_str(), steps, seconds, steps / std::max(seconds, 1e-9),
              trainer.max_staleness_seen(), p2p.max_staleness,
              static_cast<long long>(trainer.peer_gradients_applied()));
  std::fflush(stdout);
  if (task->task != 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<Tensor> final_out,
                   session->Run({{x, data.x}, {labels, data.y}},
                                {model.replica.loss, model.replica.metrics[0]}));
  std::printf("final: loss=%.4f accuracy=%.4f\n", final_out[0].scalar<float>(),
              final_out[1].scalar<float>());
  std::fflush(stdout);
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "p2p_mlp: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
