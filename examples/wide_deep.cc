// Wide & deep click prediction on parameter servers, TensorFlow 1.x's
// recommendation workload: click logs from a planted model
// (examples/click_logs.h) read as TFRecords through tf.data
// (examples/click_input.h), 26 hashed categorical features, an embedding
// table of 2^22 x 32 floats (512 MiB) and a linear table of 2^22 weights,
// each partitioned over the ps tasks, the linear part trained with FTRL and
// the deep part with Adagrad, by sparse gradients: a step moves only the
// rows its batch touches.
//
//   bazel run //tools:launch -- --ps=2 --workers=2 -- //examples:wide_deep
//   bazel run //tools:launch -- --ps=2 --workers=2 -- //examples:wide_deep --async
//
// Synchronous (the default): each global step averages one batch of every
// worker on the ps (sparse accumulators for the tables), then applies it
// once; --async: every worker applies its own. Worker 0 is the chief: it
// initializes the model, evaluates the test AUC (tf.metrics.auc) every
// --eval_every_s seconds of training and at the end, and prints it beside
// the planted model's own test AUC, the best any model can reach:
//
//   step   1400  test AUC 0.7641  (80.2 s of training, epoch 1.8)
//   final: test AUC 0.7652 after 90.3 s of training (2.0 epochs, 1562 global steps)
//   planted optimum: test AUC 0.7713 (gap 0.0061)
//
// The click logs are written to --data_dir on first use (every worker may
// write at once: files are renamed into place whole). A ps whose variable
// memory budget (tools:launch --ps_memory_budget_mb) is smaller than its
// share refuses the graph with an error naming the largest variables.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/server.h"
#include "examples/click_input.h"
#include "examples/click_logs.h"
#include "examples/sync_ps_worker.h"
#include "examples/train_progress.h"
#include "examples/wide_deep_model.h"
#include "ops/training/optimizers.h"
#include "sluice.h"
#include "training/auc.h"
#include "training/monitored_session.h"
#include "training/replica_device_setter.h"

ABSL_FLAG(std::string, data_dir, "/tmp/sluice/click_logs", "where the click logs are (written)");
ABSL_FLAG(int64_t, train_examples, 200000, "click-log training examples");
ABSL_FLAG(int64_t, test_examples, 20000, "click-log test examples");
ABSL_FLAG(int, vocab, 100, "values per categorical feature");
ABSL_FLAG(int, train_shards, 4, "train files (shard k goes to worker k % workers)");
ABSL_FLAG(int, buckets_log2, 22, "rows of the tables: 2^N");
ABSL_FLAG(int, dim, 32, "embedding width");
ABSL_FLAG(int, partitions, 0, "parts of each table (0: one per ps task)");
ABSL_FLAG(std::string, hidden, "64", "the deep part's ReLU layers, comma separated");
ABSL_FLAG(bool, async, false, "asynchronous training (default: synchronous)");
ABSL_FLAG(int, batch, 256, "examples per worker and step");
ABSL_FLAG(double, epochs, 4, "passes over the training set");
ABSL_FLAG(double, max_train_s, 600, "stop after this many seconds of training");
ABSL_FLAG(double, ftrl_learning_rate, 0.5, "the wide part's FTRL learning rate");
ABSL_FLAG(double, adagrad_learning_rate, 0.05, "the deep part's Adagrad learning rate");
ABSL_FLAG(int, log_every, 100, "print progress every N global steps");
ABSL_FLAG(double, eval_every_s, 60, "chief: evaluate the test AUC every N s of training");
ABSL_FLAG(int, seed, 1, "seed of the initial weights and the shuffles");
ABSL_FLAG(int, threads, 0, "CPU threads of each task's session (0: the machine's)");
ABSL_FLAG(bool, preload, false,
          "read (parse, hash) every batch of this worker's shards before training and serve "
          "them from memory, as bench/torch_wide_deep.py does: the figure is then the step's "
          "alone");
ABSL_FLAG(bool, dense_gradients, false,
          "make the tables' gradients dense before applying them (for comparison: every step "
          "then moves whole tables)");

namespace sluice {
namespace {

constexpr char kGlobalStep[] = "global_step:0";
constexpr char kLoss[] = "loss:0";
constexpr char kProbabilities[] = "probabilities:0";

struct Graph {
  Scope scope = Scope::NewRootScope(BuiltinOps());
  WideDeepModel model;
  std::string train;  // async: the optimizer's step; sync: this worker's contribution
  SyncPsNames sync;
  Node* init = nullptr;
  std::vector<std::string> ready;
  GraphDef def;
};

absl::StatusOr<WideDeepConfig> ModelConfig(int ps_tasks) {
  WideDeepConfig c;
  c.buckets = int64_t{1} << absl::GetFlag(FLAGS_buckets_log2);
  c.dim = absl::GetFlag(FLAGS_dim);
  c.partitions = absl::GetFlag(FLAGS_partitions) > 0 ? absl::GetFlag(FLAGS_partitions) : ps_tasks;
  c.seed = absl::GetFlag(FLAGS_seed);
  c.hidden.clear();
  for (absl::string_view h : absl::StrSplit(absl::GetFlag(FLAGS_hidden), ',', absl::SkipEmpty())) {
    int64_t n;
    if (!absl::SimpleAtoi(h, &n) || n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("--hidden: bad layer size '", h, "'"));
    }
    c.hidden.push_back(n);
  }
  return c;
}

absl::StatusOr<std::unique_ptr<Graph>> BuildGraph(const TaskConfig& task, bool sync) {
  auto g = std::make_unique<Graph>();
  const Scope& s = g->scope;
  ASSIGN_OR_RETURN(WideDeepConfig config, ModelConfig(task.cluster.num_tasks("ps")));
  ASSIGN_OR_RETURN(g->model, BuildWideDeep(s, config));
  GlobalStep global_step = CreateGlobalStep(s);
  FtrlOptimizer ftrl(absl::GetFlag(FLAGS_ftrl_learning_rate));
  AdagradOptimizer adagrad(absl::GetFlag(FLAGS_adagrad_learning_rate));
  PerVariableOptimizer optimizer({{&ftrl, g->model.wide}}, &adagrad, "WideDeep");
  std::vector<Output> vars = g->model.wide;
  vars.insert(vars.end(), g->model.deep.begin(), g->model.deep.end());
  ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                   optimizer.ComputeGradients(s, g->model.loss, vars));
  if (absl::GetFlag(FLAGS_dense_gradients)) grads = DenseGradients(s, grads);
  if (sync) {
    ASSIGN_OR_RETURN(g->sync, BuildSyncPs(s, &optimizer, grads, global_step.ref,
                                          {.workers = task.cluster.num_tasks("worker"),
                                           .replica_index = task.task}));
    g->train = g->sync.train;
  } else {
    ASSIGN_OR_RETURN(Node * train,
                     optimizer.ApplyGradients(s.WithOpName("train"), grads, &global_step.ref));
    g->train = train->name();
  }
  g->init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  vars.push_back(global_step.ref);
  for (const Output& v : vars) {
    Output ready = ops::IsVariableInitialized(s.WithOpName(v.node->name() + "_ready"), v);
    g->ready.push_back(absl::StrCat(ready.node->name(), ":0"));
  }
  RETURN_IF_ERROR(s.status());
  ReplicaDeviceSetterOptions setter;
  setter.num_ps_tasks = task.cluster.num_tasks("ps");
  setter.worker_device = TaskName(task.job, task.task);
  setter.strategy = ReplicaDeviceSetterOptions::Strategy::kGreedyByBytes;
  RETURN_IF_ERROR(ApplyReplicaDeviceSetter(s.graph(), setter).status());
  ASSIGN_OR_RETURN(g->def, s.ToGraphDef());
  return g;
}

int64_t DistinctIds(const Tensor& ids) {
  const int64_t* p = ids.data<int64_t>();
  return static_cast<int64_t>(absl::flat_hash_set<int64_t>(p, p + ids.NumElements()).size());
}

// The test AUC of the model in `session` (tf.metrics.auc's numbers).
absl::StatusOr<double> EvaluateAuc(Session* session, const std::vector<ClickBatch>& test) {
  AucAccumulator auc;
  for (const ClickBatch& b : test) {
    ASSIGN_OR_RETURN(std::vector<Tensor> out, session->Run({{"ids", b.ids}}, {kProbabilities}, {}));
    const float* p = out[0].data<float>();
    const float* y = b.labels.data<float>();
    const int64_t n = b.labels.NumElements();
    std::vector<int64_t> labels(n);
    for (int64_t i = 0; i < n; ++i) labels[i] = y[i] != 0;
    RETURN_IF_ERROR(auc.Add(labels, absl::MakeConstSpan(p, n)));
  }
  return auc.Value();
}

absl::StatusOr<ClickLogFiles> Logs() {
  ClickLogOptions o;
  o.out_dir = absl::GetFlag(FLAGS_data_dir);
  o.train_examples = absl::GetFlag(FLAGS_train_examples);
  o.test_examples = absl::GetFlag(FLAGS_test_examples);
  o.vocab = absl::GetFlag(FLAGS_vocab);
  o.train_shards = absl::GetFlag(FLAGS_train_shards);
  return EnsureClickLogs(o);
}

absl::Status TrainWorker(Server* server, const TaskConfig& task) {
  const bool sync = !absl::GetFlag(FLAGS_async);
  const bool chief = task.task == 0;
  const int workers = task.cluster.num_tasks("worker");
  const int batch = absl::GetFlag(FLAGS_batch);
  if (batch < 1) return absl::InvalidArgumentError("--batch must be positive");
  ASSIGN_OR_RETURN(ClickLogFiles logs, Logs());
  std::vector<std::string> mine;
  for (size_t k = task.task; k < logs.train.size(); k += workers) mine.push_back(logs.train[k]);
  if (mine.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker ", task.task, " has no train shard: --train_shards=", logs.train.size(), " < ",
        workers, " workers"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, BuildGraph(task, sync));
  const int64_t buckets = int64_t{1} << absl::GetFlag(FLAGS_buckets_log2);
  ClickInputOptions in;
  in.files = mine;
  in.buckets = buckets;
  in.batch = batch;
  in.shuffle = true;
  in.repeat = true;
  in.seed = absl::GetFlag(FLAGS_seed) * 1000 + task.task;
  in.preload = absl::GetFlag(FLAGS_preload);
  ASSIGN_OR_RETURN(std::unique_ptr<ClickInput> input, ClickInput::Create(in));
  std::vector<ClickBatch> test;
  if (chief) {
    ClickInputOptions t;
    t.files = logs.test;
    t.buckets = buckets;
    t.batch = 4096;
    ASSIGN_OR_RETURN(std::unique_ptr<ClickInput> test_input, ClickInput::Create(t));
    ASSIGN_OR_RETURN(test, test_input->ReadAll());
  }
  // Examples per global step: every worker's batch (sync) or one (async).
  const int64_t per_step = sync ? int64_t{batch} * workers : batch;
  const int64_t max_steps = std::max<int64_t>(
      1, static_cast<int64_t>(absl::GetFlag(FLAGS_epochs) * logs.train_examples / per_step));
  const WideDeepModel& m = g->model;
  int64_t table_bytes = 0;
  for (const VariablePart& p : m.embeddings.parts) table_bytes += p.shape.num_elements() * 4;
  std::printf(
      "%s: %s training, %d workers, batch %d per worker, %lld global steps; embeddings "
      "%lld x %lld (%lld MiB) and linear weights in %zu parts each\n",
      server->task().c_str(), sync ? "synchronous" : "asynchronous", workers, batch,
      static_cast<long long>(max_steps), static_cast<long long>(buckets),
      static_cast<long long>(m.embeddings.full_shape.dim(1)),
      static_cast<long long>(table_bytes >> 20), m.embeddings.parts.size());
  std::fflush(stdout);

  SyncChiefHook sync_hook(g->sync);
  MonitoredSessionOptions options;
  options.create_session = [&] { return server->NewSession(g->def); };
  options.is_chief = chief;
  options.init_op = g->init->name();
  options.ready_tensors = g->ready;
  if (chief && sync) options.hooks.push_back(&sync_hook);
  ASSIGN_OR_RETURN(std::unique_ptr<MonitoredSession> session, MonitoredSession::Create(options));
  std::unique_ptr<ChiefUpdateThread> updates;
  if (chief && sync) {
    updates = std::make_unique<ChiefUpdateThread>([&] { return server->NewSession(g->def); },
                                                  g->sync.chief_update);
  }
  TrainProgressOptions po;
  po.examples_per_step = per_step;
  po.epoch_examples = logs.train_examples;
  po.max_steps = max_steps;
  po.max_train_s = absl::GetFlag(FLAGS_max_train_s);
  po.log_every = absl::GetFlag(FLAGS_log_every);
  po.eval_every_s = absl::GetFlag(FLAGS_eval_every_s);
  po.metric = "test AUC";
  po.evaluate = [&] { return EvaluateAuc(session->session(), test); };
  TrainProgress progress(po);
  int64_t local_steps = 0, touched_rows = 0;
  std::optional<Tensor> token;  // sync: the step this worker computes next
  while (true) {
    ASSIGN_OR_RETURN(ClickBatch b, input->Next());
    const int64_t distinct = DistinctIds(b.ids);
    std::vector<std::pair<std::string, Tensor>> feeds = {{"ids", b.ids}, {"labels", b.labels}};
    int64_t global_step = 0;
    float loss = 0;
    if (sync) {
      if (!token.has_value()) {
        ASSIGN_OR_RETURN(token, TakeSyncToken(session.get(), g->sync, kGlobalStep, max_steps));
        if (!token.has_value()) break;  // the last step is taken
      }
      global_step = token->scalar<int64_t>() + 1;
      ASSIGN_OR_RETURN(SyncStepResult r,
                       RunSyncStep(session.get(), g->sync, *token, feeds, {kLoss}));
      token = std::move(r.next);
      if (r.fetched.empty()) {
        ++local_steps;
        touched_rows += distinct;
        continue;
      }
      loss = r.fetched[0].scalar<float>();
    } else {
      ASSIGN_OR_RETURN(std::vector<Tensor> out,
                       session->Run(feeds, {kLoss, kGlobalStep}, {g->train}));
      loss = out[0].scalar<float>();
      global_step = out[1].scalar<int64_t>();
    }
    ++local_steps;
    touched_rows += distinct;
    if (chief) {
      ASSIGN_OR_RETURN(bool stop, progress.AfterStep(global_step, loss, input->wait_seconds()));
      if (stop) break;
    } else if (!sync && global_step >= max_steps) {
      break;
    }
  }
  if (updates != nullptr) updates->Stop();
  // Each step moves each distinct row once each way (the model looks up
  // distinct ids): this is the least a step can send.
  const double rows_per_step =
      local_steps > 0 ? static_cast<double>(touched_rows) / local_steps : 0.0;
  int64_t other_bytes = 0;  // the dense layers and the bias: read and updated whole
  for (const std::vector<Output>* vars : {&m.wide, &m.deep}) {
    for (const Output& v : *vars) other_bytes += v.shape().num_elements() * 4;
  }
  for (const PartitionedVariable* t : {&m.embeddings, &m.linear}) {
    for (const VariablePart& p : t->parts) other_bytes -= p.shape.num_elements() * 4;
  }
  std::printf("%s: %.1f distinct ids per step: %.0f bytes of rows each way (embeddings and "
              "linear weights), %lld bytes of other variables\n",
              server->task().c_str(), rows_per_step,
              rows_per_step * (m.embeddings.full_shape.dim(1) + 1) * 4,
              static_cast<long long>(other_bytes));
  if (chief) {
    progress.PrintFinal();
    std::printf("planted optimum: test AUC %.4f (gap %.4f)\n", logs.planted_test_auc,
                logs.planted_test_auc - progress.accuracy());
  } else {
    std::printf("%s: done after %lld local steps (input wait %.1f s)\n", server->task().c_str(),
                static_cast<long long>(local_steps), input->wait_seconds());
  }
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Main() {
  absl::StatusOr<TaskConfig> task = TaskConfigFromEnv();
  if (absl::IsNotFound(task.status())) {
    return absl::FailedPreconditionError(
        "no cluster: $SLUICE_CONFIG is not set. Start the cluster with the launcher:\n"
        "  bazel run //tools:launch -- --ps=2 --workers=2 -- //examples:wide_deep");
  }
  RETURN_IF_ERROR(task.status());
  ServerOptions server_options;
  server_options.config = *task;
  server_options.session.devices.cpu_threads = absl::GetFlag(FLAGS_threads);
  ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(server_options));
  if (task->job == "ps") {
    std::printf("%s: serving variables at %s\n", server->task().c_str(), server->target().c_str());
    std::fflush(stdout);
    server->Join();  // until the launcher stops the cluster
    return absl::OkStatus();
  }
  if (task->job != "worker" || task->cluster.num_tasks("ps") < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("wide_deep runs as ps and worker tasks (--ps=2 --workers=2), not as ",
                     TaskName(task->job, task->task)));
  }
  return TrainWorker(server.get(), *task);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "wide_deep: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
