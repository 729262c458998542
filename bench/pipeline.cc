// Pipeline parallelism (placement/pipeline.h) against no pipelining: one
// training step (plain SGD) of the MLP 1024-2048-2048-2048-10, batch 256,
// cut into two stages (layers 1-2 | layers 3-4).
//
//   bazel run //bench:pipeline [-- --steps=10]
//
// Every configuration runs in its own session with the same devices: CPU:0
// and the virtual CPU:1, each with a pool of --device_threads threads (1 by
// default, so the two stages can run side by side on two cores):
//   pipeline_one_device:  both stages on CPU:0, one micro-batch;
//   pipeline_two_devices: stage 0 on CPU:0, stage 1 on CPU:1, one micro-batch;
//   pipeline_m<M>:        the same two devices, M micro-batches.
// Prints `<config>: X ms` (median step over --steps after --warmup) and
// `<config>_loss: X` (the loss of the last step: all configurations train on
// the same batches from the same initial weights, so they agree), then
// `pipeline_best_speedup_vs_one_device: X x` (the fastest two-device
// configuration against pipeline_one_device).
#include "placement/pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "examples/dense_stage.h"
#include "examples/mlp_model.h"
#include "session/direct_session.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 10, "timed steps per configuration");
ABSL_FLAG(int, warmup, 2, "untimed steps first");
ABSL_FLAG(int, batch, 256, "examples per step");
ABSL_FLAG(int, device_threads, 1, "threads of each device's pool (CPU:0 and CPU:1)");
ABSL_FLAG(bool, profile, false, "also trace one step per configuration; print # lines");

namespace sluice {
namespace {

const std::vector<int64_t> kSizeList = {1024, 2048, 2048, 2048, 10};

// One traced step: kernel time per op type and busy time per device, as #
// lines. Kernel intervals include waiting for the process-wide BLAS lock
// (ops/internal/blas.h).
void PrintProfile(const std::string& name, const StepStats& stats) {
  std::map<std::string, double> op_ms, device_ms;
  int64_t end_us = 0;
  for (const NodeExecStats& n : stats.nodes) {
    if (n.op == "_Recv") continue;  // waits, not work
    const double ms = (n.end_us - n.start_us) / 1000.0;
    op_ms[n.op] += ms;
    device_ms[n.device] += ms;
    end_us = std::max(end_us, n.end_us);
  }
  std::printf("# %s traced step %.1f ms\n", name.c_str(), end_us / 1000.0);
  for (const auto& [device, ms] : device_ms) {
    std::printf("#   %-48s %8.1f ms of kernels\n", device.c_str(), ms);
  }
  for (const auto& [op, ms] : op_ms) {
    if (ms >= 0.5) std::printf("#   %-48s %8.1f ms\n", op.c_str(), ms);
  }
}

// Builds one configuration, trains it on `batches`; prints its figures and
// returns its median step time.
absl::StatusOr<double> RunConfig(const std::string& name, const std::string& device1,
                                 int micro_batches, const std::vector<Dataset>& batches) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x =
      ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({-1, kSizeList[0]})});
  Output y = ops::Placeholder(root.WithOpName("y"), DT_INT32, {.shape = TensorShape({-1})});
  std::vector<PipelineStage> stages = {DenseStage("/device:CPU:0", kSizeList, 1, 2),
                                       DenseStage(device1, kSizeList, 3, 4)};
  auto xent = [](const Scope& s, const Output& logits,
                 absl::Span<const Output> t) -> absl::StatusOr<Output> {
    return ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, t[0])[0], {0});
  };
  ASSIGN_OR_RETURN(Pipeline p,
                   BuildPipeline(root, stages, x, {y}, xent, {.num_micro_batches = micro_batches}));
  GradientDescentOptimizer sgd(0.01);
  ASSIGN_OR_RETURN(Node * train, sgd.ApplyGradients(root.WithOpName("train"), p.grads_and_vars));
  Node* init = ops::GlobalVariablesInitializer(root.WithOpName("init"));
  RETURN_IF_ERROR(root.status());

  SessionConfig options = BuiltinSessionConfig();
  options.devices.cpu_threads = absl::GetFlag(FLAGS_device_threads);
  options.devices.num_virtual_cpus = 1;
  options.devices.virtual_cpu_threads = absl::GetFlag(FLAGS_device_threads);
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options, *root.graph()));
  RETURN_IF_ERROR(session->Run({}, {}, {init}).status());

  absl::Status status;
  size_t next = 0;
  float loss = 0;
  auto step = [&] {
    const Dataset& b = batches[next++ % batches.size()];
    absl::StatusOr<std::vector<Tensor>> out = session->Run({{x, b.x}, {y, b.y}}, {p.loss}, {train});
    if (!out.ok()) {
      status = out.status();
    } else {
      loss = (*out)[0].scalar<float>();
    }
  };
  for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) step();
  RETURN_IF_ERROR(status);
  std::vector<double> ms = bench::TimeRepeated(absl::GetFlag(FLAGS_steps), step);
  RETURN_IF_ERROR(status);
  std::printf("%s: %.1f ms\n", name.c_str(), bench::Median(ms));
  std::printf("%s_loss: %.5f\n", name.c_str(), loss);
  if (absl::GetFlag(FLAGS_profile)) {
    RunOptions trace;
    trace.trace = true;
    RunMetadata metadata;
    const Dataset& b = batches[0];
    RETURN_IF_ERROR(session->Run({{x, b.x}, {y, b.y}}, {}, {train}, trace, &metadata).status());
    PrintProfile(name, metadata.step_stats);
  }
  std::fflush(stdout);
  return bench::Median(ms);
}

absl::Status Main() {
  const int batch = absl::GetFlag(FLAGS_batch);
  Dataset data = MakeSyntheticDataset({.examples = 4096, .features = kSizeList[0]});
  std::vector<Dataset> batches;
  for (int i = 0; i < 4; ++i) batches.push_back(Batch(data, int64_t{i} * batch, batch));

  ASSIGN_OR_RETURN(double one, RunConfig("pipeline_one_device", "/device:CPU:0", 1, batches));
  ASSIGN_OR_RETURN(double best, RunConfig("pipeline_two_devices", "/device:CPU:1", 1, batches));
  for (int m : {2, 4, 8}) {
    ASSIGN_OR_RETURN(double t,
                     RunConfig(absl::StrCat("pipeline_m", m), "/device:CPU:1", m, batches));
    best = std::min(best, t);
  }
  std::printf("pipeline_best_speedup_vs_one_device: %.2f x\n", one / best);
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "pipeline", sluice::Main);
}
