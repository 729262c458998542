// The main job's model trained with ring all-reduce instead of parameter
// servers: every worker process holds all the variables, computes the
// gradients of its own batch (read from its own train shards through
// tf.data, fashion_mnist_input.h), and the gradients are averaged across
// the processes (distributed/collective_training/collective_trainer.h).
//
//   bazel run //tools:launch -- --workers=2 -- //examples:fashion_mnist_allreduce
//
// Worker 0 is the chief: it evaluates the 10,000 test images every
// --eval_every_s seconds of training (the others wait in the next
// all-reduce meanwhile; that time is not training) and prints the progress
// lines of train_progress.h; training runs --epochs passes over the
// training set. Checkpoints go to --checkpoint_dir (shared by the workers).
#include <algorithm>
#include <functional>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/collective_training/collective_trainer.h"
#include "distributed/server.h"
#include "examples/cnn_model.h"
#include "examples/fashion_mnist_data.h"
#include "examples/fashion_mnist_input.h"
#include "examples/train_progress.h"
#include "sluice.h"

ABSL_FLAG(std::string, data_dir, "/tmp/sluice/fashion_mnist",
          "TFRecord files (made from --source_dir when missing)");
ABSL_FLAG(std::string, source_dir, sluice::kDebianFashionMnistDir,
          "Fashion-MNIST IDX files (Debian's dataset-fashion-mnist)");
ABSL_FLAG(int, train_shards, 4, "train files to write (each worker reads its own)");
ABSL_FLAG(double, epochs, 4, "passes over the training set (60,000 images)");
ABSL_FLAG(int, batch, 128, "global batch: examples per global step over all workers");
ABSL_FLAG(double, learning_rate, 0.002, "Adam's learning rate");
ABSL_FLAG(int, log_every, 100, "print progress every N global steps");
ABSL_FLAG(double, eval_every_s, 30, "chief: evaluate on the test set every N s of training");
ABSL_FLAG(int, seed, 1, "seed of the initial weights and the shuffles");
ABSL_FLAG(int, input_threads, 1, "CPU threads of the input pipeline's session");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "checkpoints, shared by every worker (default: one directory per launch under "
          "/tmp/sluice/fashion_mnist_allreduce)");

namespace sluice {
namespace {

absl::StatusOr<double> Evaluate(Session* session, const ReplicaModel& replica,
                                const std::vector<Output>& inputs,
                                const std::vector<ImageBatch>& test) {
  double correct = 0, total = 0;
  for (const ImageBatch& b : test) {
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     session->Run({{inputs[0], b.images}, {inputs[1], b.labels}},
                                  {replica.metrics[0]}));
    const double n = static_cast<double>(b.labels.NumElements());
    correct += out[0].scalar<float>() * n;
    total += n;
  }
  return total > 0 ? correct / total : 0.0;
}

absl::Status Main() {
  absl::StatusOr<TaskConfig> task = TaskConfigFromEnv();
  if (absl::IsNotFound(task.status())) {
    return absl::FailedPreconditionError(
        "no cluster: $SLUICE_CONFIG is not set. Start the workers with the launcher:\n"
        "  bazel run //tools:launch -- --workers=2 -- //examples:fashion_mnist_allreduce");
  }
  RETURN_IF_ERROR(task.status());
  if (task->job != "worker" || task->cluster.jobs().size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fashion_mnist_allreduce runs in a cluster of one \"worker\" job (no ps); this task is ",
        TaskName(task->job, task->task)));
  }
  const int workers = task->cluster.num_tasks("worker");
  const int batch = absl::GetFlag(FLAGS_batch);
  if (batch < workers || batch % workers != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch=", batch, " must be a multiple of the ", workers, " workers"));
  }
  FashionMnistOptions data;
  data.source_dir = absl::GetFlag(FLAGS_source_dir);
  data.out_dir = absl::GetFlag(FLAGS_data_dir);
  data.train_shards = absl::GetFlag(FLAGS_train_shards);
  ASSIGN_OR_RETURN(FashionMnistFiles files, EnsureFashionMnistRecords(data));
  std::vector<std::string> mine;  // shard k goes to worker k % workers
  for (size_t k = task->task; k < files.train.size(); k += workers) mine.push_back(files.train[k]);
  if (mine.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("worker ", task->task,
                                                   " has no train shard: fewer shards than workers"));
  }
  ImageInputOptions in;
  in.files = mine;
  in.batch = batch / workers;
  in.shuffle = true;
  in.repeat = true;
  in.seed = absl::GetFlag(FLAGS_seed) * 1000 + task->task;
  in.cpu_threads = absl::GetFlag(FLAGS_input_threads);
  ASSIGN_OR_RETURN(std::unique_ptr<ImageInput> input, ImageInput::Create(in));
  std::vector<ImageBatch> test;
  if (task->task == 0) {
    ImageInputOptions t;
    t.files = files.test;
    t.batch = 1000;
    t.cpu_threads = absl::GetFlag(FLAGS_input_threads);
    ASSIGN_OR_RETURN(std::unique_ptr<ImageInput> test_input, ImageInput::Create(t));
    ASSIGN_OR_RETURN(test, test_input->ReadAll());
  }

  std::string checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  if (checkpoint_dir.empty()) {
    // The launcher picks fresh ports for each run: a directory per cluster
    // is a directory per launch, so a run never resumes an older one.
    checkpoint_dir = absl::StrCat("/tmp/sluice/fashion_mnist_allreduce/",
                                  absl::Hex(std::hash<std::string>()(task->cluster.ToJson()),
                                            absl::kZeroPad16));
  }
  ServerOptions server_options;
  server_options.config = *task;
  server_options.rpc.connect_timeout_ms = 1000;
  server_options.file_write_roots.push_back(std::filesystem::absolute(checkpoint_dir).string());
  ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(server_options));

  const int64_t steps = std::max<int64_t>(
      1, static_cast<int64_t>(absl::GetFlag(FLAGS_epochs) * files.train_examples / batch));
  const float learning_rate = absl::GetFlag(FLAGS_learning_rate);
  CnnConfig config;
  config.seed = absl::GetFlag(FLAGS_seed);
  CollectiveTrainerOptions o;
  o.server = server.get();
  o.inputs = {{"images", DT_FLOAT, TensorShape({-1, 28, 28, 1})},
              {"labels", DT_INT64, TensorShape({-1})}};
  o.replica = [&config](const Scope& s,
                        const std::vector<Output>& x) -> absl::StatusOr<ReplicaModel> {
    ASSIGN_OR_RETURN(CnnModel m, BuildCnnTower(s, config, x[0], x[1]));
    return ReplicaModel{m.loss, m.weights, {m.accuracy}};
  };
  o.optimizer = [](double lr) -> absl::StatusOr<std::unique_ptr<Optimizer>> {
    return std::make_unique<AdamOptimizer>(lr);
  };
  o.batch = [&input](int64_t, const MemberPlan&) -> absl::StatusOr<std::vector<Tensor>> {
    ASSIGN_OR_RETURN(ImageBatch b, input->Next());
    return std::vector<Tensor>{b.images, b.labels};
  };
  o.steps = steps;
  o.scaling.global_batch = batch;
  o.scaling.learning_rate = learning_rate;
  o.all_reduce.timeout_seconds = 120;  // the chief's evaluations hold the others meanwhile
  o.checkpoint_dir = checkpoint_dir;
  o.checkpoint_every = 0;
  o.log_every = 0;  // TrainProgress prints the progress lines
  TrainProgressOptions po;
  po.examples_per_step = batch;
  po.epoch_examples = files.train_examples;
  po.max_steps = steps;
  po.log_every = absl::GetFlag(FLAGS_log_every);
  po.eval_every_s = absl::GetFlag(FLAGS_eval_every_s);
  std::unique_ptr<TrainProgress> progress;
  const ReplicaModel* eval_replica = nullptr;
  const std::vector<Output>* eval_inputs = nullptr;
  Session* eval_session = nullptr;
  po.evaluate = [&]() { return Evaluate(eval_session, *eval_replica, *eval_inputs, test); };
  o.after_chief_step = [&](int64_t step, Session* session, const ReplicaModel& replica,
                           const std::vector<Output>& inputs) -> absl::Status {
    if (progress == nullptr) progress = std::make_unique<TrainProgress>(po);
    eval_session = session;
    eval_replica = &replica;
    eval_inputs = &inputs;
    // The loss is not fetched every step: a collective would cost a round.
    return progress->AfterStep(step, 0.0f, input->wait_seconds()).status();
  };
  ASSIGN_OR_RETURN(std::unique_ptr<CollectiveTrainer> trainer, CollectiveTrainer::Create(o));
  std::printf("%s: reading %zu train file(s), batch %d of %d; %d workers all-reduce, %lld global "
              "steps\n",
              server->task().c_str(), mine.size(), batch / workers, batch, workers,
              static_cast<long long>(steps));
  std::fflush(stdout);
  ASSIGN_OR_RETURN(TrainResult result, trainer->Train());
  if (result.plan.chief && progress != nullptr) {
    progress->PrintFinal();
  } else {
    std::printf("%s: done at global step %lld (input wait %.1f s)\n", server->task().c_str(),
                static_cast<long long>(result.global_step), input->wait_seconds());
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "fashion_mnist_allreduce: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
