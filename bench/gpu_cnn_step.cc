// One training step of the Fashion-MNIST CNN (examples/cnn_model.h: two 3x3
// convolutions of 16 and 32 filters with 2x2 max-pools, dense 128, 10
// classes; Adam, lr 0.002) through Session::Run on GPU:0, the batch fed from
// host memory and the loss read every step (as PyTorch's loss.item()). The
// peer is bench/torch_gpu_cnn.py (the same model and step).
//
//   bazel run //bench:gpu_cnn_step [-- --batch=128 --steps=100]
//
// Variants, each the median step over --steps after --warmup:
//   gpu_cnn_step: X ms              float32, the step captured (a CUDA graph)
//   gpu_cnn_step_bf16: Y ms         automatic mixed precision (bfloat16
//                                   convolutions and products, float weights
//                                   and updates: SessionConfig::mixed_precision)
//   gpu_cnn_step_bf16_executor: Z ms  the same without step capture
// with `_loss_after`, `_replayed_steps` and `_nodes_off_device` lines. Without
// a GPU it prints `gpu: none (<reason>)` and exits 0; --device=CPU:0 runs the
// same variants on the CPU (`cpu_cnn_step...` lines) to check the program;
// --profile prints, per variant, the op types one traced step spent most on.
#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "bench/bench_util.h"
#include "bench/training_steps.h"
#include "examples/cnn_model.h"
#include "runtime/gpu/gpu_devices.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 100, "timed steps per variant");
ABSL_FLAG(int, warmup, 10, "untimed steps first");
ABSL_FLAG(int, batch, 128, "images per step");
ABSL_FLAG(std::string, device, "GPU:0", "where the step runs (CPU:0 to check the program)");
ABSL_FLAG(bool, profile, false, "after timing, trace one step and print its costliest ops");

namespace sluice {
namespace {

struct Batch {
  Tensor images, labels;
};

std::vector<Batch> RandomBatches(int batch, int count) {
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int64_t> label(0, 9);
  std::vector<Batch> out;
  for (int i = 0; i < count; ++i) {
    Batch b{Tensor(DT_FLOAT, TensorShape({batch, 28, 28, 1})), Tensor(DT_INT64, TensorShape({batch}))};
    for (float& v : b.images.flat<float>()) v = pixel(gen);
    for (int64_t& v : b.labels.flat<int64_t>()) v = label(gen);
    out.push_back(std::move(b));
  }
  return out;
}

absl::Status TimeVariant(const std::string& device, const std::string& name,
                         SessionConfig::MixedPrecision precision, bool capture,
                         const std::vector<Batch>& batches) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope s = root.WithDevice("/device:" + device);
  Output images = ops::Placeholder(s.WithOpName("images"), DT_FLOAT);
  Output labels = ops::Placeholder(s.WithOpName("labels"), DT_INT64);
  ASSIGN_OR_RETURN(CnnModel m, BuildCnnTower(s, CnnConfig{}, images, labels));
  AdamOptimizer adam(0.002);
  ASSIGN_OR_RETURN(Node * train, adam.Minimize(s.WithOpName("train"), m.loss, m.weights));
  Node* init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  RETURN_IF_ERROR(root.status());
  SessionConfig config = BuiltinSessionConfig();
  config.mixed_precision = precision;
  config.mixed_precision_on_any_cpu = true;  // so that --device=CPU:0 runs the same graph
  config.capture_steps = capture;
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config, *root.graph()));
  RETURN_IF_ERROR(session->Run({}, {}, {init}).status());

  RunOptions first;
  first.output_partition_graphs = true;
  RunMetadata md;
  RETURN_IF_ERROR(session
                      ->Run({{images, batches[0].images}, {labels, batches[0].labels}},
                            {m.loss}, {train}, first, &md)
                      .status());
  int off = 0;
  for (const GraphDef& g : md.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      if (n.device().find(device) == std::string::npos && n.op().rfind("_", 0) != 0) {
        ++off;
        std::printf("#   %s: %s (%s) on %s\n", name.c_str(), n.name().c_str(), n.op().c_str(),
                    n.device().c_str());
      }
    }
  }
  std::printf("%s_nodes_off_device: %d nodes\n", name.c_str(), off);

  int next = 0;
  ASSIGN_OR_RETURN(
      bench::TimedSteps t,
      bench::TimeTrainingSteps(
          absl::GetFlag(FLAGS_warmup), absl::GetFlag(FLAGS_steps), [&](RunMetadata* step_md) {
            const Batch& b = batches[next++ % batches.size()];
            return session->Run({{images, b.images}, {labels, b.labels}}, {m.loss}, {train}, {},
                                step_md);
          }));
  bench::PrintTimedSteps(name, t);
  if (absl::GetFlag(FLAGS_profile)) {
    // Microseconds per op type in one traced step (a GPU's are launch
    // times, not kernel times).
    RunOptions traced;
    traced.trace = true;
    RunMetadata tmd;
    RETURN_IF_ERROR(session
                        ->Run({{images, batches[0].images}, {labels, batches[0].labels}},
                              {m.loss}, {train}, traced, &tmd)
                        .status());
    std::map<std::string, std::pair<int64_t, int>> by_op;
    for (const NodeExecStats& n : tmd.step_stats.nodes) {
      by_op[n.op].first += n.end_us - n.start_us;
      ++by_op[n.op].second;
    }
    std::vector<std::pair<int64_t, std::string>> order;
    for (const auto& [op, t] : by_op) order.push_back({t.first, op});
    std::sort(order.rbegin(), order.rend());
    for (size_t i = 0; i < order.size() && i < 12; ++i) {
      std::printf("#   %s: %s %lld us in %d nodes\n", name.c_str(), order[i].second.c_str(),
                  static_cast<long long>(order[i].first), by_op[order[i].second].second);
    }
  }
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Main() {
  const std::string device = absl::GetFlag(FLAGS_device);
  const bool on_gpu = device.rfind("GPU", 0) == 0;
  std::string why;
  if (on_gpu && VisibleGpuCount(&why) == 0) {
    std::printf("gpu: none (%s)\n", why.c_str());
    return absl::OkStatus();
  }
  const int batch = absl::GetFlag(FLAGS_batch);
  std::printf("# cnn: batch %d, 28x28x1, conv 16 and 32 (3x3), dense 128, Adam\n", batch);
  const std::vector<Batch> batches = RandomBatches(batch, 8);
  const std::string base = on_gpu ? "gpu_cnn_step" : "cpu_cnn_step";
  using P = SessionConfig::MixedPrecision;
  RETURN_IF_ERROR(TimeVariant(device, base, P::kOff, true, batches));
  RETURN_IF_ERROR(TimeVariant(device, base + "_bf16", P::kBfloat16, true, batches));
  return TimeVariant(device, base + "_bf16_executor", P::kBfloat16, false, batches);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "gpu_cnn_step", sluice::Main);
}
