// Trains the MLP of mlp_model.h with the Mirrored strategy: one replica per
// local device, each holding its own copy of the variables and computing the
// gradients of its slice of the batch; the gradients are averaged with
// all-reduce (fused into buckets) and every replica applies them, so the
// copies stay equal. No parameter server.
//
//   bazel run //examples:mirrored_mlp -- --replicas=3 --steps=600
//
// Devices: --devices when given (e.g. GPU:0,CPU:0 with one GPU), else every
// GPU of the process when there is one, else CPU:0 and --replicas - 1
// virtual CPU devices. --batch is the global batch of a step
// (a multiple of the replica count). Prints progress lines like
// examples/mlp and ends with "final: loss=<x> accuracy=<y>" over the whole
// training set (replica 0's copy of the model).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "training/mirrored_strategy.h"
#include "examples/mlp_model.h"
#include "sluice.h"

ABSL_FLAG(int, replicas, 2,
          "replicas on CPUs when the process has no GPU (with GPUs: one per GPU)");
ABSL_FLAG(std::string, devices, "",
          "replica devices, comma separated (GPU:0,CPU:0); default every GPU, else the CPUs");
ABSL_FLAG(int, steps, 600, "training steps");
ABSL_FLAG(int, batch, 128, "examples per step, split evenly between the replicas");
ABSL_FLAG(int64_t, bucket_bytes, 4 << 20, "gradient fusion bucket size in bytes (0: no fusion)");
ABSL_FLAG(std::string, hidden, "256,256", "hidden layer sizes, comma separated");
ABSL_FLAG(double, learning_rate, 0.05, "learning rate");
ABSL_FLAG(std::string, optimizer, "momentum", "sgd, momentum or adam");
ABSL_FLAG(int, log_every, 50, "print progress every N steps");
ABSL_FLAG(int, examples, 8192, "size of the synthetic training set");

namespace sluice {
namespace {

// The session's device whose name ends with `wanted` ("GPU:0" or
// "/device:GPU:0" match ".../device:GPU:0").
absl::StatusOr<std::string> FindDevice(const std::vector<std::string>& listed,
                                       absl::string_view wanted) {
  absl::ConsumePrefix(&wanted, "/device:");
  for (const std::string& d : listed) {
    if (absl::EndsWith(d, absl::StrCat("device:", wanted))) return d;
  }
  return absl::InvalidArgumentError(absl::StrCat("--devices: no device ", wanted, " here (",
                                                 absl::StrJoin(listed, ", "), ")"));
}

// The devices to replicate over: --devices, else the GPUs, else the CPUs, of
// a session with these options.
absl::StatusOr<std::vector<std::string>> ReplicaDevices(const SessionConfig& options) {
  std::vector<std::string> listed, gpus, cpus;
  {
    // A probe session over an empty graph, closed before the real one opens.
    Scope empty = Scope::NewRootScope(BuiltinOps());
    ASSIGN_OR_RETURN(std::unique_ptr<Session> probe, NewSession(options, *empty.graph()));
    listed = probe->ListDevices();
    RETURN_IF_ERROR(probe->Close());
  }
  const std::string wanted = absl::GetFlag(FLAGS_devices);
  if (!wanted.empty()) {
    std::vector<std::string> chosen;
    for (absl::string_view w : absl::StrSplit(wanted, ',', absl::SkipEmpty())) {
      ASSIGN_OR_RETURN(std::string d, FindDevice(listed, w));
      chosen.push_back(std::move(d));
    }
    return chosen;
  }
  for (const std::string& d : listed) {
    (absl::StrContains(d, "device:GPU:") ? gpus : cpus).push_back(d);
  }
  return gpus.empty() ? cpus : gpus;
}

absl::Status Main() {
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
  const int steps = absl::GetFlag(FLAGS_steps), batch = absl::GetFlag(FLAGS_batch);
  if (absl::GetFlag(FLAGS_replicas) <= 0)
    return absl::InvalidArgumentError("--replicas must be > 0");
  if (steps < 0 || batch <= 0) return absl::InvalidArgumentError("--steps >= 0 and --batch > 0");

  SessionConfig options = BuiltinSessionConfig();
  options.devices.num_virtual_cpus = absl::GetFlag(FLAGS_replicas) - 1;
  ASSIGN_OR_RETURN(std::vector<std::string> devices, ReplicaDevices(options));
  const int replicas = static_cast<int>(devices.size());
  if (batch % replicas != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch (", batch, ") must be a multiple of the ", replicas, " replicas"));
  }

  // The model, once per replica, over its slice of x and labels.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x =
      ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({-1, config.layers[0]})});
  Output labels = ops::Placeholder(s.WithOpName("labels"), DT_INT32, {.shape = TensorShape({-1})});
  std::vector<Output> first_inputs;  // replica 0's slices, fed for the final evaluation
  ReplicaFn fn = [&](const Scope& rs,
                     const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {
    if (first_inputs.empty()) first_inputs = in;
    ASSIGN_OR_RETURN(MlpModel m, BuildMlpTower(rs, config, in[0], in[1]));
    return ReplicaModel{m.loss, m.weights, {m.accuracy}};
  };
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> opt, NewMlpOptimizer(config));
  MirroredOptions mirrored;
  mirrored.devices = devices;
  mirrored.all_reduce.bucket_bytes = absl::GetFlag(FLAGS_bucket_bytes);
  ASSIGN_OR_RETURN(MirroredModel mm, BuildMirrored(s, {x, labels}, fn, opt.get(), mirrored));
  RETURN_IF_ERROR(s.status());

  Dataset data = MakeSyntheticDataset({.examples = absl::GetFlag(FLAGS_examples)});
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options, *s.graph()));
  RETURN_IF_ERROR(session->Run({}, {}, {mm.init}).status());

  std::printf(
      "training MLP %s on %lld synthetic examples, batch %d over %d replicas (%s), %s lr=%g\n",
      absl::GetFlag(FLAGS_hidden).c_str(), static_cast<long long>(data.x.dim_size(0)), batch,
      replicas, absl::StrJoin(devices, ", ").c_str(), config.optimizer.c_str(),
      config.learning_rate);
  auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  int last_step = 0;
  for (int step = 1; step <= steps; ++step) {
    Dataset b = Batch(data, static_cast<int64_t>(step - 1) * batch, batch);
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     session->Run({{x, b.x}, {labels, b.y}}, {mm.loss}, {mm.train}));
    if (step % absl::GetFlag(FLAGS_log_every) == 0 || step == steps) {
      auto now = std::chrono::steady_clock::now();
      double secs = std::chrono::duration<double>(now - last).count();
      std::printf("step %d: loss=%.4f (%.1f steps/s)\n", step, out[0].scalar<float>(),
                  (step - last_step) / secs);
      std::fflush(stdout);
      last = now;
      last_step = step;
    }
  }
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("trained %d steps in %.1f s\n", steps, total);

  // Replica 0 over the whole training set: its slices fed directly.
  const ReplicaModel& first = mm.replicas[0];
  ASSIGN_OR_RETURN(std::vector<Tensor> final_out,
                   session->Run({{first_inputs[0], data.x}, {first_inputs[1], data.y}},
                                {first.loss, first.metrics[0]}));
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
    std::fprintf(stderr, "mirrored_mlp: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
