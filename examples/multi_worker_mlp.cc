// Trains the MLP of mlp_model.h with the MultiWorkerMirrored strategy:
// between-graph synchronous data parallelism without parameter servers.
// Every worker process holds all the variables, computes the gradients of
// its slice of each global batch, and the gradients are averaged across the
// processes with ring all-reduce (fused into buckets); the chief broadcasts
// the initial values and alone writes checkpoints.
//
//   bazel run //tools:launch -- --workers=3 -- //examples:multi_worker_mlp
//   bazel run //tools:launch -- --workers=3 -- //examples:multi_worker_mlp --elastic
//
// Each process gets its task from $SLUICE_CONFIG (the launcher sets it; the
// cluster has only a "worker" job) and trains on its GPU:0 when it has one,
// else its CPU:0. A worker whose peer dies does not exit: it waits for the
// peer to come back (--recovery_timeout_s), then every worker starts again
// from the latest checkpoint in --checkpoint_dir, which they all share;
// with --elastic the survivors go on without it after --elastic_grace_s,
// and take it back when it is restarted (they look for it every
// --rejoin_check_every steps; distributed/collective_training/collective_trainer.h).
// Worker 0 (with --elastic,
// the lowest surviving worker) logs progress and, after --steps global
// steps, prints "final: loss=<x> accuracy=<y>" over the whole training set.
#include <cstdio>
#include <filesystem>
#include <memory>
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
#include "distributed/collective_training/collective_trainer.h"
#include "examples/mlp_model.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 300, "global steps to train");
ABSL_FLAG(int, batch, 96, "global batch: examples per step over all workers (a multiple of them)");
ABSL_FLAG(std::string, hidden, "256", "hidden layer sizes, comma separated");
ABSL_FLAG(double, learning_rate, 0.1, "learning rate");
ABSL_FLAG(std::string, optimizer, "sgd", "sgd, momentum or adam");
ABSL_FLAG(int64_t, bucket_bytes, 4 << 20, "gradient fusion bucket size in bytes (0: no fusion)");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "checkpoints, shared by every worker (default: /tmp/sluice/multi_worker_mlp/<cluster hash>, "
          "one per launch: `rm -rf /tmp/sluice` clears them)");
ABSL_FLAG(int, checkpoint_every, 100, "the chief saves a checkpoint every N global steps");
ABSL_FLAG(double, collective_timeout_s, 10, "a collective whose peer does not answer fails after this");
ABSL_FLAG(double, recovery_timeout_s, 120, "after a failure, give up when not training again within this");
ABSL_FLAG(bool, elastic, false, "go on without dead workers instead of waiting for them");
ABSL_FLAG(double, elastic_grace_s, 3, "--elastic: how long to wait for every worker after a failure");
ABSL_FLAG(int64_t, rejoin_check_every, 50,
          "--elastic: with a worker missing, look for it every this many steps and take it back "
          "(0: never)");
ABSL_FLAG(bool, elastic_keep_global_batch, false,
          "--elastic: keep the global batch (per-worker batches grow); else keep each worker's");
ABSL_FLAG(bool, scale_lr_with_workers, false,
          "learning rate = --learning_rate * workers (it follows the member count with --elastic)");
ABSL_FLAG(int, log_every, 50, "print progress every N global steps");
ABSL_FLAG(int, examples, 8192, "size of the synthetic training set");
ABSL_FLAG(int, seed, 1, "seed of the initial weights");
ABSL_FLAG(std::string, dump_weights, "", "chief: write every trained variable here as .npy");

namespace sluice {
namespace {

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

// The same directory for every worker of a cluster: named after a hash of
// the cluster's addresses (the launcher picks fresh ports for each run, so
// each launch starts afresh), beside the other examples' under /tmp/sluice.
std::string DefaultCheckpointDir(const ClusterSpec& cluster) {
  uint64_t h = 14695981039346656037ull;
  for (char c : cluster.ToJson()) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return absl::StrCat("/tmp/sluice/multi_worker_mlp/", absl::Hex(h, absl::kZeroPad16));
}

absl::Status DumpWeights(Session* session, const std::vector<Output>& variables,
                         const std::string& dir) {
  std::filesystem::create_directories(dir);
  ASSIGN_OR_RETURN(std::vector<Tensor> values, session->Run({}, variables));
  for (size_t i = 0; i < variables.size(); ++i) {
    const std::string name = absl::StrReplaceAll(variables[i].node->name(), {{"/", "_"}});
    RETURN_IF_ERROR(WriteNpyFile(values[i], absl::StrCat(dir, "/", name, ".npy")));
  }
  return absl::OkStatus();
}

absl::Status Main() {
  absl::StatusOr<TaskConfig> task = TaskConfigFromEnv();
  if (absl::IsNotFound(task.status())) {
    return absl::FailedPreconditionError(
        "no cluster: $SLUICE_CONFIG is not set. Start the workers with the launcher:\n"
        "  bazel run //tools:launch -- --workers=3 -- //examples:multi_worker_mlp");
  }
  RETURN_IF_ERROR(task.status());
  if (task->job != "worker" || task->cluster.jobs().size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "multi_worker_mlp runs in a cluster of one \"worker\" job (no ps); this task is ",
        TaskName(task->job, task->task)));
  }
  ASSIGN_OR_RETURN(MlpConfig config, ConfigFromFlags());
  const int steps = absl::GetFlag(FLAGS_steps), batch = absl::GetFlag(FLAGS_batch);
  if (steps < 0 || batch <= 0) return absl::InvalidArgumentError("--steps >= 0 and --batch > 0");
  std::string checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  if (checkpoint_dir.empty()) checkpoint_dir = DefaultCheckpointDir(task->cluster);

  ServerOptions server_options;
  server_options.config = *task;
  server_options.rpc.connect_timeout_ms = 1000;
  server_options.file_write_roots.push_back(
      std::filesystem::absolute(checkpoint_dir).string());
  ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(server_options));

  const Dataset data = MakeSyntheticDataset({.examples = absl::GetFlag(FLAGS_examples)});
  CollectiveTrainerOptions o;
  o.server = server.get();
  o.inputs = {{"x", DT_FLOAT, TensorShape({-1, config.layers[0]})},
              {"labels", DT_INT32, TensorShape({-1})}};
  o.replica = [&config](const Scope& s,
                        const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {
    ASSIGN_OR_RETURN(MlpModel m, BuildMlpTower(s, config, in[0], in[1]));
    return ReplicaModel{m.loss, m.weights, {m.accuracy}};
  };
  o.optimizer = [config](double lr) mutable {
    config.learning_rate = lr;
    return NewMlpOptimizer(config);
  };
  o.batch = [&data](int64_t step, const MemberPlan& plan) -> absl::StatusOr<std::vector<Tensor>> {
    Dataset b = Batch(data, SliceOffset(plan, step), plan.per_worker_batch);
    return std::vector<Tensor>{b.x, b.y};
  };
  o.steps = steps;
  o.scaling.global_batch = batch;
  o.scaling.learning_rate = config.learning_rate;
  o.scaling.keep_global_batch = absl::GetFlag(FLAGS_elastic_keep_global_batch);
  o.scaling.scale_lr_with_workers = absl::GetFlag(FLAGS_scale_lr_with_workers);
  o.all_reduce.bucket_bytes = absl::GetFlag(FLAGS_bucket_bytes);
  o.all_reduce.timeout_seconds = static_cast<float>(absl::GetFlag(FLAGS_collective_timeout_s));
  o.checkpoint_dir = checkpoint_dir;
  o.checkpoint_every = absl::GetFlag(FLAGS_checkpoint_every);
  o.elastic = absl::GetFlag(FLAGS_elastic);
  o.elastic_grace_s = absl::GetFlag(FLAGS_elastic_grace_s);
  o.rejoin_check_every = absl::GetFlag(FLAGS_rejoin_check_every);
  o.recovery_timeout_s = absl::GetFlag(FLAGS_recovery_timeout_s);
  o.log_every = absl::GetFlag(FLAGS_log_every);
  ASSIGN_OR_RETURN(std::unique_ptr<CollectiveTrainer> trainer, CollectiveTrainer::Create(o));

  std::printf("%s: training MLP %s on %lld synthetic examples, global batch %d over %d workers, "
              "%s lr=%g, checkpoints in %s%s\n",
              server->task().c_str(), absl::GetFlag(FLAGS_hidden).c_str(),
              static_cast<long long>(data.x.dim_size(0)), batch,
              task->cluster.num_tasks("worker"), config.optimizer.c_str(), config.learning_rate,
              checkpoint_dir.c_str(), o.elastic ? " (elastic)" : "");
  std::fflush(stdout);
  ASSIGN_OR_RETURN(TrainResult result, trainer->Train());
  if (!result.plan.chief) {
    std::printf("%s: done at global step %lld (%d recoveries, %d rejoins)\n",
                server->task().c_str(), static_cast<long long>(result.global_step),
                result.recoveries, result.rejoins);
    std::fflush(stdout);
    return absl::OkStatus();
  }
  std::printf(
      "trained to global step %lld in %.1f s (%.1f steps/s, %d recoveries, %zu workers, %d "
      "rejoins)\n",
      static_cast<long long>(result.global_step), result.seconds,
      result.global_step / std::max(result.seconds, 1e-9), result.recoveries,
      result.plan.members.size(), result.rejoins);
  // This worker's copy of the model over the whole training set: its own
  // loss and accuracy (not the all-reduced ones, which need every worker).
  const ReplicaModel& replica = trainer->model().replica;
  const std::vector<Output>& inputs = trainer->inputs();
  ASSIGN_OR_RETURN(std::vector<Tensor> final_out,
                   trainer->session()->Run({{inputs[0], data.x}, {inputs[1], data.y}},
                                           {replica.loss, replica.metrics[0]}));
  if (!absl::GetFlag(FLAGS_dump_weights).empty()) {
    RETURN_IF_ERROR(DumpWeights(trainer->session(), replica.variables,
                                absl::GetFlag(FLAGS_dump_weights)));
  }
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
    std::fprintf(stderr, "multi_worker_mlp: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
