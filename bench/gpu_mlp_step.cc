// One training step of the MLP 784-1024-1024-10 (batch 256, ReLU, softmax
// cross-entropy, plain SGD lr 0.1; examples/mlp_model.h) through
// Session::Run on GPU:0. The peer is bench/torch_gpu_mlp.py.
//
//   bazel run //bench:gpu_mlp_step [-- --steps=200 --warmup=20]
//
// Two variants, each the median step time over --steps after --warmup, the
// loss fetched every step (as PyTorch's loss.item()):
//   gpu_mlp_step: X ms            the batch fed from host memory each step
//   gpu_mlp_step_resident: Y ms   the batch already on the GPU (the model's
//                                 x and labels read variables filled once),
//                                 which leaves the host->device copy out
// The placer puts the nodes (no device requested) on the GPU where it has
// kernels; `#` lines say how many ended elsewhere. MatMuls run in the
// process-wide precision (SLUICE_GPU_MATMUL, default fp32). Without a GPU it
// prints `gpu: none (<reason>)` and exits 0.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "examples/mlp_model.h"
#include "ops/gpu/matmul_precision.h"
#include "runtime/direct_session.h"
#include "runtime/gpu/gpu_devices.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 200, "timed steps per variant");
ABSL_FLAG(int, warmup, 20, "untimed steps first");
ABSL_FLAG(int, batch, 256, "examples per step");

namespace sluice {
namespace {

constexpr char kGpu[] = "/device:GPU:0";

// Prints where the nodes of one step ran; returns how many left GPU:0.
int ReportPlacement(const char* variant, const RunMetadata& md) {
  std::map<std::string, int> per_device;
  int off_gpu = 0;
  for (const GraphDef& g : md.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      ++per_device[n.device()];
      if (n.device().find("GPU:0") == std::string::npos &&
          n.op().rfind("_", 0) != 0) {  // _Send/_Recv/_Arg/_Retval are plumbing
        ++off_gpu;
        std::printf("#   %s: %s (%s) on %s\n", variant, n.name().c_str(), n.op().c_str(),
                    n.device().c_str());
      }
    }
  }
  for (const auto& [device, count] : per_device) {
    std::printf("# %s placement: %d nodes on %s\n", variant, count, device.c_str());
  }
  return off_gpu;
}

// The model's graph with Placeholders x and labels replaced by Identities of
// variables "x_resident" (GPU:0) and "labels_resident", filled by the
// returned initializers from Placeholders "x_resident_init" and
// "labels_resident_init".
absl::StatusOr<GraphDef> ResidentBatchGraph(MlpModel& m, int64_t batch, int64_t features) {
  Scope s = m.scope;
  Scope gpu = s.WithDevice(kGpu);
  Output x_var = ops::Variable(gpu.WithOpName("x_resident"), TensorShape({batch, features}),
                               DT_FLOAT);
  Output x_init = ops::Placeholder(gpu.WithOpName("x_resident_init"), DT_FLOAT);
  ops::Assign(gpu.WithOpName("x_resident_assign"), x_var, x_init);
  Output y_var = ops::Variable(s.WithOpName("labels_resident"), TensorShape({batch}), DT_INT32);
  Output y_init = ops::Placeholder(s.WithOpName("labels_resident_init"), DT_INT32);
  ops::Assign(s.WithOpName("labels_resident_assign"), y_var, y_init);
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(GraphDef def, s.ToGraphDef());
  for (NodeDef& n : *def.mutable_node()) {
    if (n.name() != "x" && n.name() != "labels") continue;
    const bool is_x = n.name() == "x";
    n.set_op("Identity");
    n.mutable_attr()->clear();
    (*n.mutable_attr())["T"] = MakeAttr(is_x ? DT_FLOAT : DT_INT32);
    n.add_input(is_x ? "x_resident" : "labels_resident");
  }
  return def;
}

absl::Status Main() {
  std::string why;
  if (VisibleGpuCount(&why) == 0) {
    std::printf("gpu: none (%s)\n", why.c_str());
    return absl::OkStatus();
  }
  const int batch = absl::GetFlag(FLAGS_batch);
  const int steps = absl::GetFlag(FLAGS_steps), warmup = absl::GetFlag(FLAGS_warmup);
  std::printf("# matmul precision: %s\n",
              std::string(GpuMatMulPrecisionName(GetGpuMatMulPrecision())).c_str());

  MlpConfig config;
  config.layers = {784, 1024, 1024, 10};
  config.optimizer = "sgd";
  config.learning_rate = 0.1;
  Dataset data = MakeSyntheticDataset({.examples = 8192});
  std::vector<Dataset> batches;
  for (int i = 0; i < 16; ++i) batches.push_back(Batch(data, int64_t{i} * batch, batch));

  // Fed from the host.
  {
    ASSIGN_OR_RETURN(MlpModel m, BuildMlp(config));
    ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                     NewSession(BuiltinSessionOptions(), *m.scope.graph()));
    RETURN_IF_ERROR(session->Run({}, {}, {m.init}).status());
    absl::Status status;
    float loss = 0;
    int next = 0;
    auto step = [&](const RunOptions& ro, RunMetadata* md) {
      const Dataset& b = batches[next++ % batches.size()];
      absl::StatusOr<std::vector<Tensor>> out =
          session->Run({{m.x, b.x}, {m.labels, b.y}}, {m.loss}, {m.train}, ro, md);
      if (!out.ok()) {
        status = out.status();
      } else {
        loss = (*out)[0].scalar<float>();
      }
    };
    RunOptions ro;
    ro.output_partition_graphs = true;
    RunMetadata md;
    step(ro, &md);
    RETURN_IF_ERROR(status);
    std::printf("gpu_mlp_step_nodes_off_gpu: %d nodes\n", ReportPlacement("fed", md));
    for (int i = 0; i < warmup; ++i) step({}, nullptr);
    RETURN_IF_ERROR(status);
    std::vector<double> ms = bench::TimeRepeated(steps, [&] { step({}, nullptr); });
    RETURN_IF_ERROR(status);
    std::printf("gpu_mlp_step: %.3f ms\n", bench::Median(ms));
    std::printf("gpu_mlp_step_loss_after: %.4f\n", loss);
    std::fflush(stdout);
  }

  // The batch already on the GPU.
  {
    ASSIGN_OR_RETURN(MlpModel m, BuildMlp(config));
    ASSIGN_OR_RETURN(GraphDef def, ResidentBatchGraph(m, batch, config.layers[0]));
    ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(BuiltinSessionOptions(), def));
    RETURN_IF_ERROR(session
                        ->Run({{"x_resident_init", batches[0].x},
                               {"labels_resident_init", batches[0].y}},
                              {}, {"init", "x_resident_assign", "labels_resident_assign"})
                        .status());
    RunOptions ro;
    ro.output_partition_graphs = true;
    RunMetadata md;
    RETURN_IF_ERROR(session->Run({}, {"loss"}, {"train"}, ro, &md).status());
    std::printf("gpu_mlp_step_resident_nodes_off_gpu: %d nodes\n", ReportPlacement("resident", md));
    absl::Status status;
    float loss = 0;
    auto step = [&] {
      absl::StatusOr<std::vector<Tensor>> out = session->Run({}, {"loss"}, {"train"});
      if (!out.ok()) {
        status = out.status();
      } else {
        loss = (*out)[0].scalar<float>();
      }
    };
    for (int i = 0; i < warmup; ++i) step();
    RETURN_IF_ERROR(status);
    std::vector<double> ms = bench::TimeRepeated(steps, step);
    RETURN_IF_ERROR(status);
    std::printf("gpu_mlp_step_resident: %.3f ms\n", bench::Median(ms));
    std::printf("gpu_mlp_step_resident_loss_after: %.4f\n", loss);
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "gpu_mlp_step", sluice::Main);
}
