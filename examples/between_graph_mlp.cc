// Between-graph data parallelism with parameter servers: every worker
// process builds the same MLP graph with its variables on the ps tasks
// (ReplicaDeviceSetter) and trains on its own share of the data, either
// synchronously (gradients of a step averaged on the ps over
// --replicas_to_aggregate workers, then applied once) or asynchronously
// (each worker applies its own gradients as soon as it has them).
//
//   bazel run //tools:launch -- --ps=1 --workers=2 -- //examples:between_graph_mlp
//   bazel run //tools:launch -- --ps=2 --workers=3 -- //examples:between_graph_mlp --async
//
// Each process gets its task from $SLUICE_CONFIG (the launcher sets it). A
// ps task serves its variables until it is stopped. Worker 0 is the chief:
// it initializes the model (or restores the latest checkpoint of --logdir),
// saves checkpoints every --checkpoint_steps global steps, writes TensorBoard
// summaries to --logdir, and after --steps global steps prints
// "final: loss=<x> accuracy=<y>" over the whole training set.
//
// As a sweep trial (one sub-cluster per trial, see README "Sweep
// hyperparameters"):
//   bazel run //tools:sweep -- --space=examples/sweep_cluster_space.json --trials=8
//       --trial_cluster=ps=1,workers=2 --devices=cpu:0,cpu:1,cpu:2
//       -- bazel-bin/examples/between_graph_mlp --steps=200
// the chief reports held-out loss and accuracy (--held_out examples after the
// training set) with SweepReport every --report_every global steps and at
// the end, and --logdir defaults to train/ in the trial's directory. Every
// task uses $SLUICE_NUM_THREADS CPU threads when it is set.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "training/checkpoint/saver.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/server.h"
#include "training/summary/summary_writer.h"
#include "training/hooks.h"
#include "training/monitored_session.h"
#include "training/replica_device_setter.h"
#include "examples/mlp_model.h"
#include "examples/sync_ps_worker.h"
#include "ops/io/summary_ops.h"
#include "sluice.h"

ABSL_FLAG(bool, sync, true, "synchronous training (--nosync or --async: asynchronous)");
ABSL_FLAG(bool, async, false, "asynchronous training");
ABSL_FLAG(int, steps, 300, "global steps to train");
ABSL_FLAG(int, batch, 64, "examples per worker and step");
ABSL_FLAG(std::string, hidden, "256", "hidden layer sizes, comma separated");
ABSL_FLAG(double, learning_rate, 0.1, "learning rate");
ABSL_FLAG(std::string, optimizer, "sgd", "sgd, momentum or adam");
ABSL_FLAG(int, replicas_to_aggregate, 0, "sync: gradients averaged per step (0: every worker)");
ABSL_FLAG(std::string, logdir, "auto",
          "checkpoints and TensorBoard events; auto: train/ in the trial's directory under a "
          "sweep, else /tmp/sluice/between_graph_mlp; \"\": none");
ABSL_FLAG(int, checkpoint_steps, 100, "save a checkpoint every N global steps");
ABSL_FLAG(int, log_every, 50, "print progress every N global steps");
ABSL_FLAG(int, examples, 8192, "size of the synthetic training set");
ABSL_FLAG(int, held_out, 1024, "chief: examples after the training set it evaluates on");
ABSL_FLAG(int, report_every, 50, "chief: SweepReport held-out metrics every N global steps");
ABSL_FLAG(int, seed, 1, "seed of the initial weights");
ABSL_FLAG(std::string, dump_weights, "", "chief: write every variable here as .npy at the end");

namespace sluice {
namespace {

constexpr char kGlobalStep[] = "global_step:0";
constexpr char kLoss[] = "loss:0";
constexpr char kAccuracy[] = "accuracy:0";

std::string Logdir() {
  const std::string flag = absl::GetFlag(FLAGS_logdir);
  if (flag != "auto") return flag;
  return SweepTrialDir().empty() ? "/tmp/sluice/between_graph_mlp" : SweepTrialDir() + "/train";
}

// The chief's reports to a sweep: held-out loss and accuracy at the global
// step the variables were read at.
class HeldOutReporter {
 public:
  HeldOutReporter(Dataset held_out, int every) : held_out_(std::move(held_out)), every_(every) {}

  // Reports when the global step has passed the next multiple of --report_every.
  absl::Status MaybeReport(Session* session, int64_t global_step) {
    if (every_ <= 0 || global_step < next_) return absl::OkStatus();
    return Report(session);
  }

  absl::Status Report(Session* session) {
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     session->Run({{"x", held_out_.x}, {"labels", held_out_.y}},
                                  {kLoss, kAccuracy, kGlobalStep}, {}));
    const int64_t step = out[2].scalar<int64_t>();
    if (step == last_) return absl::OkStatus();
    SweepReport(step, {{"loss", out[0].scalar<float>()}, {"accuracy", out[1].scalar<float>()}});
    last_ = step;
    if (every_ > 0) next_ = (step / every_ + 1) * every_;
    return absl::OkStatus();
  }

 private:
  const Dataset held_out_;
  const int every_;
  int64_t next_ = 0;  // first report at the first step (a baseline)
  int64_t last_ = -1;
};

struct Model {
  explicit Model(MlpModel forward) : mlp(std::move(forward)) {}
  MlpModel mlp;
  std::vector<std::string> ready;  // IsVariableInitialized of every variable
  std::string train;  // async train op / sync apply_gradients
  SyncPsNames sync;   // sync only
  std::string summaries;
  std::unique_ptr<Saver> saver;
  GraphDef def;
};

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

// The same graph in every worker; only worker_device differs.
absl::StatusOr<std::unique_ptr<Model>> BuildModel(const TaskConfig& task, bool sync) {
  MlpConfig config;
  ASSIGN_OR_RETURN(config.layers, LayerSizes());
  config.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  config.optimizer = absl::GetFlag(FLAGS_optimizer);
  config.seed = absl::GetFlag(FLAGS_seed);
  ASSIGN_OR_RETURN(MlpModel forward, BuildMlpForward(config));
  auto model = std::make_unique<Model>(std::move(forward));
  Model& m = *model;
  const Scope& s = m.mlp.scope;
  GlobalStep global_step = CreateGlobalStep(s);
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> optimizer, NewMlpOptimizer(config));
  ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                   optimizer->ComputeGradients(s, m.mlp.loss, m.mlp.weights));
  const int workers = task.cluster.num_tasks("worker");
  if (sync) {
    ASSIGN_OR_RETURN(m.sync, BuildSyncPs(s, optimizer.get(), grads, global_step.ref,
                                         {.workers = workers,
                                          .replica_index = task.task,
                                          .replicas_to_aggregate =
                                              absl::GetFlag(FLAGS_replicas_to_aggregate)}));
    m.train = m.sync.train;
  } else {
    ASSIGN_OR_RETURN(Node * train,
                     optimizer->ApplyGradients(s.WithOpName("train"), grads, &global_step.ref));
    m.train = train->name();
  }
  m.mlp.init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  std::vector<Output> vars = m.mlp.weights;
  vars.push_back(global_step.ref);
  for (const Output& v : vars) {
    Output ready = ops::IsVariableInitialized(s.WithOpName(v.node->name() + "_ready"), v);
    m.ready.push_back(absl::StrCat(ready.node->name(), ":0"));
  }
  std::vector<Output> summaries = {ops::ScalarSummary(s, "loss", m.mlp.loss),
                                   ops::ScalarSummary(s, "accuracy", m.mlp.accuracy),
                                   ops::HistogramSummary(s, "layer1/weights", m.mlp.weights[0])};
  m.summaries = absl::StrCat(ops::MergeSummary(s.WithOpName("summaries"), summaries).node->name(), ":0");
  ASSIGN_OR_RETURN(m.saver, Saver::Build(s, {}));
  RETURN_IF_ERROR(s.status());
  ReplicaDeviceSetterOptions setter;
  setter.num_ps_tasks = task.cluster.num_tasks("ps");
  setter.worker_device = TaskName(task.job, task.task);
  setter.strategy = ReplicaDeviceSetterOptions::Strategy::kGreedyByBytes;
  RETURN_IF_ERROR(ApplyReplicaDeviceSetter(s.graph(), setter).status());
  ASSIGN_OR_RETURN(m.def, s.ToGraphDef());
  return model;
}

absl::Status DumpWeights(Session* session, const Model& m, const std::string& dir) {
  std::vector<std::string> names;
  for (const Output& w : m.mlp.weights) names.push_back(w.node->name());
  ASSIGN_OR_RETURN(std::vector<Tensor> values, session->Run({}, names, {}));
  for (size_t i = 0; i < names.size(); ++i) {
    RETURN_IF_ERROR(WriteNpyFile(
        values[i], absl::StrCat(dir, "/", absl::StrReplaceAll(names[i], {{"/", "_"}}), ".npy")));
  }
  return absl::OkStatus();
}

absl::Status RunWorker(Server* server, const TaskConfig& task) {
  const bool sync = absl::GetFlag(FLAGS_sync) && !absl::GetFlag(FLAGS_async);
  const bool chief = task.task == 0;
  const int workers = task.cluster.num_tasks("worker");
  const int batch = absl::GetFlag(FLAGS_batch), steps = absl::GetFlag(FLAGS_steps);
  const std::string logdir = Logdir();
  ASSIGN_OR_RETURN(std::unique_ptr<Model> model, BuildModel(task, sync));
  const Model& m = *model;
  // The training set is the first --examples of the dataset (the same with or
  // without a held-out part: the examples are drawn in order).
  const int examples = absl::GetFlag(FLAGS_examples), held_out = absl::GetFlag(FLAGS_held_out);
  Dataset all = MakeSyntheticDataset({.examples = examples + (chief ? held_out : 0)});
  Dataset data = chief && held_out > 0 ? Batch(all, 0, examples) : std::move(all);
  std::unique_ptr<HeldOutReporter> reporter;
  if (chief && held_out > 0) {
    reporter = std::make_unique<HeldOutReporter>(Batch(all, examples, held_out),
                                                 absl::GetFlag(FLAGS_report_every));
  }
  std::printf("%s: %s training, %d worker(s), batch %d per worker, %d global steps\n",
              server->task().c_str(), sync ? "synchronous" : "asynchronous", workers, batch, steps);

  StopAtStepHook stop_hook(steps, kGlobalStep);
  LoggingHook log_hook(kGlobalStep, kLoss, absl::GetFlag(FLAGS_log_every), &std::cout);
  NanTensorHook nan_hook(kLoss, /*stop_instead=*/false, kGlobalStep);
  SyncChiefHook sync_hook(m.sync);
  std::unique_ptr<CheckpointSaverHook> checkpoint_hook;
  std::unique_ptr<SummaryWriter> writer;
  std::unique_ptr<SummarySaverHook> summary_hook;
  MonitoredSessionOptions options;
  options.create_session = [&] { return server->NewSession(m.def); };
  options.is_chief = chief;
  options.init_op = m.mlp.init->name();
  options.ready_tensors = m.ready;
  options.hooks = {&stop_hook, &log_hook, &nan_hook};
  if (chief && !logdir.empty()) {
    options.saver = m.saver.get();
    options.checkpoint_dir = logdir;
    CheckpointSaverOptions every;
    every.every_steps = absl::GetFlag(FLAGS_checkpoint_steps);
    every.every_secs = 0;
    checkpoint_hook = std::make_unique<CheckpointSaverHook>(m.saver.get(), logdir, kGlobalStep, every);
    ASSIGN_OR_RETURN(writer, SummaryWriter::Create(logdir));
    summary_hook = std::make_unique<SummarySaverHook>(m.summaries, writer.get(), kGlobalStep,
                                                      absl::GetFlag(FLAGS_log_every));
    options.hooks.push_back(checkpoint_hook.get());
    options.hooks.push_back(summary_hook.get());
    if (absl::StatusOr<std::string> latest = LatestCheckpoint(logdir); latest.ok()) {
      std::printf("restored from %s if the model needs it\n", latest->c_str());
    }
  }
  if (chief && sync) options.hooks.push_back(&sync_hook);
  ASSIGN_OR_RETURN(std::unique_ptr<MonitoredSession> session, MonitoredSession::Create(options));

  std::unique_ptr<ChiefUpdateThread> updates;
  if (chief && sync) {
    updates = std::make_unique<ChiefUpdateThread>([&] { return server->NewSession(m.def); },
                                                  m.sync.chief_update);
  }
  int64_t local_steps = 0;
  absl::Status status;
  const absl::Time start = absl::Now();
  std::optional<Tensor> token;  // sync: the step this worker computes next
  while (status.ok() && !session->ShouldStop()) {
    int64_t step = local_steps * workers + task.task;  // async: this worker's share
    int64_t global_step = local_steps * workers;       // async: about
    if (sync) {
      if (!token.has_value()) {
        absl::StatusOr<std::optional<Tensor>> taken =
            TakeSyncToken(session.get(), m.sync, kGlobalStep, steps);
        if (!taken.ok()) {
          status = taken.status();
          break;
        }
        if (!taken->has_value()) break;  // training is over
        token = **taken;
      }
      global_step = token->scalar<int64_t>();
      step = global_step * workers + task.task;
    }
    Dataset b = Batch(data, step * batch, batch);
    std::vector<std::pair<std::string, Tensor>> feeds = {{"x", b.x}, {"labels", b.y}};
    if (sync) {
      // One run a step: this step's gradients in, the next step's token out.
      absl::StatusOr<SyncStepResult> r = RunSyncStep(session.get(), m.sync, *token, feeds, {kLoss});
      status = r.status();
      if (r.ok()) token = std::move(r->next);
    } else {
      status = session->Run(feeds, {kLoss}, {m.train}).status();
    }
    ++local_steps;
    if (reporter != nullptr && status.ok()) {
      // A report that fails (a task restarting) is not worth the run.
      absl::Status reported = reporter->MaybeReport(session->session(), global_step + 1);
      if (!reported.ok()) {
        std::fprintf(stderr, "between_graph_mlp: no report at step %lld: %s\n",
                     static_cast<long long>(global_step + 1),
                     std::string(reported.message()).c_str());
      }
    }
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (updates != nullptr) updates->Stop();  // its pending take times out within 1 s
  RETURN_IF_ERROR(status);
  if (chief) {
    ASSIGN_OR_RETURN(std::vector<Tensor> final_out,
                     session->session()->Run({{"x", data.x}, {"labels", data.y}},
                                             {kLoss, "accuracy:0", kGlobalStep}, {}));
    if (reporter != nullptr) RETURN_IF_ERROR(reporter->Report(session->session()));
    if (!absl::GetFlag(FLAGS_dump_weights).empty()) {
      RETURN_IF_ERROR(DumpWeights(session->session(), m, absl::GetFlag(FLAGS_dump_weights)));
    }
    const int64_t reached = final_out[2].scalar<int64_t>();
    std::printf("trained to global step %lld in %.2f s (%.1f steps/s, %d recoveries)\n",
                static_cast<long long>(reached), seconds, reached / seconds, session->recoveries());
    std::printf("final: loss=%.4f accuracy=%.4f\n", final_out[0].scalar<float>(),
                final_out[1].scalar<float>());
  } else {
    std::printf("%s: done after %lld local steps\n", server->task().c_str(),
                static_cast<long long>(local_steps));
  }
  std::fflush(stdout);
  return session->Close();
}

absl::Status Main() {
  absl::StatusOr<TaskConfig> task = TaskConfigFromEnv();
  if (absl::IsNotFound(task.status())) {
    return absl::FailedPreconditionError(
        "no cluster: $SLUICE_CONFIG is not set. Start the cluster with the launcher:\n"
        "  bazel run //tools:launch -- --ps=1 --workers=2 -- //examples:between_graph_mlp");
  }
  RETURN_IF_ERROR(task.status());
  ServerOptions server_options;
  server_options.config = *task;
  // The chief's checkpoints are written by the ps tasks that hold the
  // variables: graphs may write there (without a logdir, under /tmp/sluice),
  // nowhere else. $SLUICE_NUM_THREADS (a sweep's or the launcher's share
  // per task) sizes the task's CPU pool (runtime/cpu_share.h).
  if (!Logdir().empty()) {
    server_options.file_write_roots.push_back(std::filesystem::absolute(Logdir()).string());
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(server_options));
  if (task->job == "ps") {
    std::printf("%s: serving variables at %s\n", server->task().c_str(), server->target().c_str());
    std::fflush(stdout);
    server->Join();  // until the launcher stops the cluster
    return absl::OkStatus();
  }
  if (task->job != "worker") {
    return absl::InvalidArgumentError(absl::StrCat("unknown job '", task->job, "' (ps, worker)"));
  }
  return RunWorker(server.get(), *task);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "between_graph_mlp: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
