// The main job: trains the CNN of cnn_model.h on Fashion-MNIST, read from
// TFRecord files of tf.train.Example through tf.data
// (fashion_mnist_input.h), to about 91 % test accuracy.
//
//   bazel run //tools:launch -- --ps=1 --workers=2 -- //examples:fashion_mnist_cnn
//   bazel run //examples:fashion_mnist_cnn               # the same model in one process
//
// Under the launcher ($SLUICE_CONFIG set) it is between-graph synchronous
// training on parameter servers: every worker builds the same graph with
// the variables on the ps tasks (ReplicaDeviceSetter), reads its own train
// shards (shard k goes to worker k % workers), shuffled with a seed of its
// own, and contributes one batch per global step; the gradients of a step
// are averaged on the ps and applied once (training/sync_replicas.h).
// Worker 0 is the chief: it initializes the model, evaluates the 10,000
// test images every --eval_every_s seconds of training and at the end, and
// prints the progress lines. Without $SLUICE_CONFIG, one process trains on
// every shard.
//
// The records are made from Debian's dataset-fashion-mnist on first use
// (in --data_dir; every worker may convert at once: files are renamed into
// place whole). Training stops after --epochs passes over the training set,
// after --max_train_s seconds of training, or (with --stop_at_accuracy) at
// the first evaluation that reaches it. Evaluation time is not training
// time. Output, one line per --log_every global steps and per evaluation:
//
//   step   2269  test accuracy 0.9048  (60.0 s of training, epoch 4.8)
//   step   2300  loss 0.2071   4656 examples/s  input wait 2.6 %
//   final: test accuracy 0.9101 after 75.8 s of training (6.0 epochs, 2812 global steps)
//   exported the model as a SavedModel: /tmp/sluice/fashion_mnist_model/1 (...)
//
// At the end the chief exports the model (--export_dir; cnn_export.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/server.h"
#include "examples/cnn_export.h"
#include "examples/cnn_model.h"
#include "examples/fashion_mnist_data.h"
#include "examples/fashion_mnist_input.h"
#include "examples/sync_ps_worker.h"
#include "examples/train_progress.h"
#include "sluice.h"
#include "training/monitored_session.h"
#include "training/replica_device_setter.h"

ABSL_FLAG(std::string, data_dir, "/tmp/sluice/fashion_mnist",
          "TFRecord files (made from --source_dir when missing)");
ABSL_FLAG(std::string, source_dir, sluice::kDebianFashionMnistDir,
          "Fashion-MNIST IDX files (Debian's dataset-fashion-mnist)");
ABSL_FLAG(int, train_shards, 4, "train files to write (each worker reads its own)");
ABSL_FLAG(double, epochs, 6, "passes over the training set (60,000 images)");
ABSL_FLAG(double, max_train_s, 290, "stop after this many seconds of training");
ABSL_FLAG(double, stop_at_accuracy, 0, "stop at the first evaluation this good (0: never)");
ABSL_FLAG(int, batch, 128, "global batch: examples per global step over all workers");
ABSL_FLAG(double, learning_rate, 0.002, "Adam's learning rate");
ABSL_FLAG(int, log_every, 100, "print progress every N global steps");
ABSL_FLAG(double, eval_every_s, 30, "chief: evaluate on the test set every N s of training");
ABSL_FLAG(int, seed, 1, "seed of the initial weights and the shuffles");
ABSL_FLAG(int, threads, 0, "CPU threads of the training session (0: the machine's)");
ABSL_FLAG(bool, mixed_precision, false,
          "compute the convolutions and matrix products in bfloat16 (SessionConfig::"
          "mixed_precision): on GPUs, and on CPUs that multiply bfloat16 natively");
ABSL_FLAG(int, input_threads, 1, "CPU threads of the input pipeline's session");
ABSL_FLAG(std::string, export_dir, "/tmp/sluice/fashion_mnist_model",
          "chief: write the trained model here as a SavedModel (<dir>/<next version>) with the "
          "test set beside it as .npy (empty: no export)");

namespace sluice {
namespace {

constexpr char kGlobalStep[] = "global_step:0";

// What a training loop needs of either kind of session.
struct Graph {
  Scope scope = Scope::NewRootScope(BuiltinOps());
  CnnModel model{scope};
  std::string train;  // local: the optimizer's step; ps: this worker's contribution
  SyncPsNames sync;
  Node* init = nullptr;
  std::vector<std::string> ready;  // IsVariableInitialized of every weight
  GraphDef def;
};

absl::StatusOr<std::unique_ptr<Graph>> BuildGraph(const TaskConfig* task) {
  auto g = std::make_unique<Graph>();
  const Scope& s = g->scope;
  Output images =
      ops::Placeholder(s.WithOpName("images"), DT_FLOAT, {.shape = TensorShape({-1, 28, 28, 1})});
  Output labels = ops::Placeholder(s.WithOpName("labels"), DT_INT64, {.shape = TensorShape({-1})});
  CnnConfig config;
  config.seed = absl::GetFlag(FLAGS_seed);
  ASSIGN_OR_RETURN(g->model, BuildCnnTower(s, config, images, labels));
  GlobalStep global_step = CreateGlobalStep(s);
  AdamOptimizer adam(absl::GetFlag(FLAGS_learning_rate));
  if (task == nullptr) {
    ASSIGN_OR_RETURN(Node * train, adam.Minimize(s.WithOpName("train"), g->model.loss,
                                                 g->model.weights, &global_step.ref));
    g->train = train->name();
  } else {
    ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                     adam.ComputeGradients(s, g->model.loss, g->model.weights));
    ASSIGN_OR_RETURN(g->sync, BuildSyncPs(s, &adam, grads, global_step.ref,
                                          {.workers = task->cluster.num_tasks("worker"),
                                           .replica_index = task->task}));
    g->train = g->sync.train;
  }
  g->init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  for (const Output& w : g->model.weights) {
    Output ready = ops::IsVariableInitialized(s.WithOpName(w.node->name() + "_ready"), w);
    g->ready.push_back(absl::StrCat(ready.node->name(), ":0"));
  }
  RETURN_IF_ERROR(s.status());
  if (task != nullptr) {
    ReplicaDeviceSetterOptions setter;
    setter.num_ps_tasks = task->cluster.num_tasks("ps");
    setter.worker_device = TaskName(task->job, task->task);
    setter.strategy = ReplicaDeviceSetterOptions::Strategy::kGreedyByBytes;
    RETURN_IF_ERROR(ApplyReplicaDeviceSetter(s.graph(), setter).status());
  }
  ASSIGN_OR_RETURN(g->def, s.ToGraphDef());
  return g;
}

// The chief's last act: the trained weights, read from `session`, leave as
// a SavedModel (cnn_export.h) with the test set beside it.
absl::Status Export(Session* session, const Graph& g, const std::vector<ImageBatch>& test) {
  const std::string base = absl::GetFlag(FLAGS_export_dir);
  if (base.empty()) return absl::OkStatus();
  std::vector<std::string> names;
  for (const Output& w : g.model.weights) names.push_back(absl::StrCat(w.node->name(), ":0"));
  ASSIGN_OR_RETURN(std::vector<Tensor> weights, session->Run({}, names, {}));
  CnnConfig config;
  config.seed = absl::GetFlag(FLAGS_seed);
  ASSIGN_OR_RETURN(std::string dir, ExportCnnSavedModel(config, weights, base, &test));
  std::printf(
      "exported the model as a SavedModel: %s (classify the test set: bazel run "
      "//tools:runner -- --saved_model=%s --input=images=%s/test_images.npy)\n",
      dir.c_str(), dir.c_str(), base.c_str());
  std::fflush(stdout);
  return absl::OkStatus();
}

// The test accuracy of `g`'s model in `session`, over the test batches.
absl::StatusOr<double> Evaluate(Session* session, const Graph& g,
                                const std::vector<ImageBatch>& test) {
  double correct = 0, total = 0;
  const std::string accuracy = absl::StrCat(g.model.accuracy.node->name(), ":0");
  for (const ImageBatch& b : test) {
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     session->Run({{"images", b.images}, {"labels", b.labels}}, {accuracy}, {}));
    const double n = static_cast<double>(b.labels.NumElements());
    correct += out[0].scalar<float>() * n;
    total += n;
  }
  return total > 0 ? correct / total : 0.0;
}

TrainProgressOptions ProgressOptions(int64_t epoch_examples, int64_t max_steps) {
  TrainProgressOptions o;
  o.examples_per_step = absl::GetFlag(FLAGS_batch);
  o.epoch_examples = epoch_examples;
  o.max_steps = max_steps;
  o.max_train_s = absl::GetFlag(FLAGS_max_train_s);
  o.stop_at_accuracy = absl::GetFlag(FLAGS_stop_at_accuracy);
  o.log_every = absl::GetFlag(FLAGS_log_every);
  o.eval_every_s = absl::GetFlag(FLAGS_eval_every_s);
  return o;
}

absl::StatusOr<FashionMnistFiles> Records() {
  FashionMnistOptions o;
  o.source_dir = absl::GetFlag(FLAGS_source_dir);
  o.out_dir = absl::GetFlag(FLAGS_data_dir);
  o.train_shards = absl::GetFlag(FLAGS_train_shards);
  return EnsureFashionMnistRecords(o);
}

absl::StatusOr<std::unique_ptr<ImageInput>> TrainInput(const std::vector<std::string>& files,
                                                       int64_t seed, int64_t batch) {
  ImageInputOptions o;
  o.files = files;
  o.batch = batch;
  o.shuffle = true;
  o.repeat = true;
  o.seed = seed;
  o.cpu_threads = absl::GetFlag(FLAGS_input_threads);
  return ImageInput::Create(o);
}

absl::StatusOr<std::vector<ImageBatch>> TestSet(const FashionMnistFiles& files) {
  ImageInputOptions o;
  o.files = files.test;
  o.batch = 1000;
  o.cpu_threads = absl::GetFlag(FLAGS_input_threads);
  ASSIGN_OR_RETURN(std::unique_ptr<ImageInput> in, ImageInput::Create(o));
  return in->ReadAll();
}

SessionConfig::MixedPrecision MixedPrecision() {
  return absl::GetFlag(FLAGS_mixed_precision) ? SessionConfig::MixedPrecision::kBfloat16
                                              : SessionConfig::MixedPrecision::kOff;
}

// A cluster session of this job: placement as the task's, precision as asked.
ClusterSessionOptions TrainingSessionOptions() {
  ClusterSessionOptions options;
  options.session.mixed_precision = MixedPrecision();
  return options;
}

int64_t MaxSteps(int64_t epoch_examples) {
  const double steps = absl::GetFlag(FLAGS_epochs) * epoch_examples /
                       static_cast<double>(absl::GetFlag(FLAGS_batch));
  return std::max<int64_t>(1, static_cast<int64_t>(steps));
}

absl::Status TrainLocal() {
  ASSIGN_OR_RETURN(FashionMnistFiles files, Records());
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, BuildGraph(nullptr));
  SessionConfig config = BuiltinSessionConfig();
  config.devices.cpu_threads = absl::GetFlag(FLAGS_threads);
  config.mixed_precision = MixedPrecision();
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config, g->def));
  RETURN_IF_ERROR(session->Run({}, {}, {g->init->name()}).status());
  ASSIGN_OR_RETURN(std::unique_ptr<ImageInput> input,
                   TrainInput(files.train, absl::GetFlag(FLAGS_seed), absl::GetFlag(FLAGS_batch)));
  ASSIGN_OR_RETURN(std::vector<ImageBatch> test, TestSet(files));
  const int64_t max_steps = MaxSteps(files.train_examples);
  std::printf(
      "training the CNN on %zu train files in %s: batch %d, %lld steps at most, "
      "%.0f s of training at most\n",
      files.train.size(), absl::GetFlag(FLAGS_data_dir).c_str(), absl::GetFlag(FLAGS_batch),
      static_cast<long long>(max_steps), absl::GetFlag(FLAGS_max_train_s));
  std::fflush(stdout);
  TrainProgressOptions po = ProgressOptions(files.train_examples, max_steps);
  po.evaluate = [&] { return Evaluate(session.get(), *g, test); };
  TrainProgress progress(po);
  const std::string loss = absl::StrCat(g->model.loss.node->name(), ":0");
  for (int64_t step = 1;; ++step) {
    ASSIGN_OR_RETURN(ImageBatch b, input->Next());
    ASSIGN_OR_RETURN(
        std::vector<Tensor> out,
        session->Run({{"images", b.images}, {"labels", b.labels}}, {loss}, {g->train}));
    ASSIGN_OR_RETURN(bool stop,
                     progress.AfterStep(step, out[0].scalar<float>(), input->wait_seconds()));
    if (stop) break;
  }
  progress.PrintFinal();
  return Export(session.get(), *g, test);
}

absl::Status TrainWorker(Server* server, const TaskConfig& task) {
  const int workers = task.cluster.num_tasks("worker");
  const bool chief = task.task == 0;
  ASSIGN_OR_RETURN(FashionMnistFiles files, Records());
  std::vector<std::string> mine;  // shard k goes to worker k % workers
  for (size_t k = task.task; k < files.train.size(); k += workers) mine.push_back(files.train[k]);
  if (mine.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker ", task.task, " has no train shard: --train_shards=",
        absl::GetFlag(FLAGS_train_shards), " is fewer than the ", workers, " workers"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, BuildGraph(&task));
  const int batch = absl::GetFlag(FLAGS_batch);
  if (batch < workers || batch % workers != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch=", batch, " must be a multiple of the ", workers, " workers"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ImageInput> input,
                   TrainInput(mine, absl::GetFlag(FLAGS_seed) * 1000 + task.task, batch / workers));
  std::vector<ImageBatch> test;
  if (chief) {
    ASSIGN_OR_RETURN(test, TestSet(files));
  }
  const int64_t max_steps = MaxSteps(files.train_examples);
  std::printf(
      "%s: reading %zu train file(s), batch %d of %d; %d workers train synchronously, "
      "%lld global steps at most\n",
      server->task().c_str(), mine.size(), batch / workers, batch, workers,
      static_cast<long long>(max_steps));
  std::fflush(stdout);

  SyncChiefHook sync_hook(g->sync);
  MonitoredSessionOptions options;
  options.create_session = [&] { return server->NewSession(g->def, TrainingSessionOptions()); };
  options.is_chief = chief;
  options.init_op = g->init->name();
  options.ready_tensors = g->ready;  // every worker waits for the chief's init
  if (chief) options.hooks.push_back(&sync_hook);
  ASSIGN_OR_RETURN(std::unique_ptr<MonitoredSession> session, MonitoredSession::Create(options));
  std::unique_ptr<ChiefUpdateThread> updates;
  if (chief) {
    updates = std::make_unique<ChiefUpdateThread>(
        [&] { return server->NewSession(g->def, TrainingSessionOptions()); }, g->sync.chief_update);
  }
  TrainProgressOptions po = ProgressOptions(files.train_examples, max_steps);
  po.evaluate = [&] { return Evaluate(session->session(), *g, test); };
  TrainProgress progress(po);
  const std::string loss = absl::StrCat(g->model.loss.node->name(), ":0");
  int64_t local_steps = 0;
  std::optional<Tensor> token;  // the step this worker computes next
  while (true) {
    if (!token.has_value()) {
      ASSIGN_OR_RETURN(token, TakeSyncToken(session.get(), g->sync, kGlobalStep, max_steps));
      if (!token.has_value()) break;  // the last step is taken
    }
    const int64_t global_step = token->scalar<int64_t>() + 1;
    ASSIGN_OR_RETURN(ImageBatch b, input->Next());
    ASSIGN_OR_RETURN(SyncStepResult r,
                     RunSyncStep(session.get(), g->sync, *token,
                                 {{"images", b.images}, {"labels", b.labels}}, {loss}));
    token = std::move(r.next);
    ++local_steps;
    if (chief && !r.fetched.empty()) {
      ASSIGN_OR_RETURN(bool stop, progress.AfterStep(global_step, r.fetched[0].scalar<float>(),
                                                     input->wait_seconds()));
      if (stop) break;
    }
  }
  if (updates != nullptr) updates->Stop();
  if (chief) {
    progress.PrintFinal();
    RETURN_IF_ERROR(Export(session->session(), *g, test));
  } else {
    std::printf("%s: done after %lld local steps (input wait %.1f s)\n", server->task().c_str(),
                static_cast<long long>(local_steps), input->wait_seconds());
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

absl::Status Main() {
  absl::StatusOr<TaskConfig> task = TaskConfigFromEnv();
  if (absl::IsNotFound(task.status())) return TrainLocal();  // no cluster: one process
  RETURN_IF_ERROR(task.status());
  ServerOptions server_options;
  server_options.config = *task;
  server_options.session.devices.cpu_threads = absl::GetFlag(FLAGS_threads);
  if (const std::string base = absl::GetFlag(FLAGS_export_dir); !base.empty()) {
    // The chief's export writes there (servers fence where graphs write).
    std::error_code ec;
    std::filesystem::create_directories(base, ec);
    if (ec)
      return absl::InvalidArgumentError(absl::StrCat("--export_dir=", base, ": ", ec.message()));
    server_options.file_write_roots.push_back(std::filesystem::absolute(base).string());
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(server_options));
  if (task->job == "ps") {
    std::printf("%s: serving variables at %s\n", server->task().c_str(), server->target().c_str());
    std::fflush(stdout);
    server->Join();  // until the launcher stops the cluster
    return absl::OkStatus();
  }
  if (task->job != "worker" || task->cluster.num_tasks("ps") < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("fashion_mnist_cnn runs as ps and worker tasks (--ps=1 --workers=2), not as ",
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
    std::fprintf(stderr, "fashion_mnist_cnn: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
