// One training step of the MLP 784-1024-1024-10 (batch 256, ReLU, softmax
// cross-entropy, plain SGD lr 0.1; examples/mlp_model.h) through
// Session::Run on GPU:0. The peer is bench/torch_gpu_mlp.py.
//
//   bazel run //bench:gpu_mlp_step [-- --steps=200 --warmup=20]
//
// Four variants, each the median step time over --steps after --warmup, the
// loss fetched every step (as PyTorch's loss.item()):
//   gpu_mlp_step: X ms            the batch fed from host memory each step
//   gpu_mlp_step_resident: Y ms   the batch already on the GPU (x reads a
//                                 variable filled once, labels a GPU Const),
//                                 which leaves the host->device copy out
// each with step capture (the default: replayed as a CUDA graph once its
// shapes repeat; `_replayed_steps` says how many timed steps were) and as
// `..._executor` without it (SessionConfig::capture_steps = false); and
// gpu_mlp_step_resident_unfused: captured, without the fusion pass
// (SessionConfig::fuse_ops = false: no cuBLASLt epilogues). `_ops_on_gpu`
// counts the operations a step runs on the GPU (constants, variables and
// plumbing aside).
// The placer puts the nodes (no device requested) on the GPU where it has
// kernels; `#` lines say how many ended elsewhere. MatMuls run in the
// process-wide precision (SLUICE_GPU_MATMUL, default fp32). Without a GPU it
// prints `gpu: none (<reason>)` and exits 0.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "bench/training_steps.h"
#include "examples/mlp_model.h"
#include "ops/gpu/matmul_precision.h"
#include "session/direct_session.h"
#include "runtime/gpu/gpu_devices.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 200, "timed steps per variant");
ABSL_FLAG(int, warmup, 20, "untimed steps first");
ABSL_FLAG(int, batch, 256, "examples per step");

namespace sluice {
namespace {

constexpr char kGpu[] = "/device:GPU:0";

// Prints where the nodes of one step ran; returns how many left GPU:0 and
// counts in `on_gpu` the operations that stayed (what a step launches there).
int ReportPlacement(const char* variant, const RunMetadata& md, int* on_gpu) {
  std::map<std::string, int> per_device;
  int off_gpu = 0;
  *on_gpu = 0;
  for (const GraphDef& g : md.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      ++per_device[n.device()];
      if (n.device().find("GPU:0") != std::string::npos && n.op() != "Const" &&
          n.op().rfind("_", 0) != 0 && n.op().rfind("Variable", 0) != 0) {
        ++*on_gpu;
      }
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

// The model's graph with Placeholder x replaced by an Identity of variable
// "x_resident" (GPU:0), filled by the returned initializer "x_resident_assign"
// from Placeholder "x_resident_init", and Placeholder labels by a Const on
// GPU:0 holding `labels` (int32 stays in host memory there, as in
// TensorFlow).
absl::StatusOr<GraphDef> ResidentBatchGraph(MlpModel& m, int64_t batch, int64_t features,
                                            const Tensor& labels) {
  Scope s = m.scope;
  Scope gpu = s.WithDevice(kGpu);
  Output x_var = ops::Variable(gpu.WithOpName("x_resident"), TensorShape({batch, features}),
                               DT_FLOAT);
  Output x_init = ops::Placeholder(gpu.WithOpName("x_resident_init"), DT_FLOAT);
  ops::Assign(gpu.WithOpName("x_resident_assign"), x_var, x_init);
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(GraphDef def, s.ToGraphDef());
  for (NodeDef& n : *def.mutable_node()) {
    if (n.name() == "x") {
      n.set_op("Identity");
      n.mutable_attr()->clear();
      (*n.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
      n.add_input("x_resident");
    } else if (n.name() == "labels") {
      n.set_op("Const");
      n.set_device(kGpu);
      n.mutable_attr()->clear();
      (*n.mutable_attr())["dtype"] = MakeAttr(DT_INT32);
      tensorflow::TensorProto value;
      labels.ToProto(&value);
      *(*n.mutable_attr())["value"].mutable_tensor() = value;
    }
  }
  return def;
}

// Times one variant: a first step reporting placement, `warmup` steps, then
// the median of `steps` (the loss read every step). Prints NAME, its loss
// after, how many nodes left GPU:0 and whether the timed steps were replays.
absl::Status TimeVariant(
    const std::string& name, const char* label, int warmup, int steps,
    const std::function<absl::StatusOr<std::vector<Tensor>>(const RunOptions&, RunMetadata*)>&
        run) {
  RunOptions first;
  first.output_partition_graphs = true;
  RunMetadata md;
  RETURN_IF_ERROR(run(first, &md).status());
  int on_gpu = 0;
  std::printf("%s_nodes_off_gpu: %d nodes\n", name.c_str(), ReportPlacement(label, md, &on_gpu));
  std::printf("%s_ops_on_gpu: %d ops\n", name.c_str(), on_gpu);
  ASSIGN_OR_RETURN(bench::TimedSteps t,
                   bench::TimeTrainingSteps(warmup, steps,
                                            [&](RunMetadata* step_md) { return run({}, step_md); }));
  bench::PrintTimedSteps(name, t);
  return absl::OkStatus();
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

  // Fed from the host, with and without step capture (a CUDA graph per
  // step once its shapes repeat: SessionConfig::capture_steps).
  for (const bool capture : {true, false}) {
    const std::string name = capture ? "gpu_mlp_step" : "gpu_mlp_step_executor";
    ASSIGN_OR_RETURN(MlpModel m, BuildMlp(config));
    SessionConfig options = BuiltinSessionConfig();
    options.capture_steps = capture;
    ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options, *m.scope.graph()));
    RETURN_IF_ERROR(session->Run({}, {}, {m.init}).status());
    int next = 0;
    RETURN_IF_ERROR(TimeVariant(name, "fed", warmup, steps, [&](const RunOptions& ro,
                                                                RunMetadata* md) {
      const Dataset& b = batches[next++ % batches.size()];
      return session->Run({{m.x, b.x}, {m.labels, b.y}}, {m.loss}, {m.train}, ro, md);
    }));
  }

  // The batch already on the GPU; last, captured without the fusion pass
  // (each BiasAdd, Relu and BiasAddGrad a kernel of its own).
  struct Resident {
    const char* name;
    bool capture, fuse;
  };
  for (const Resident& v : {Resident{"gpu_mlp_step_resident", true, true},
                            Resident{"gpu_mlp_step_resident_executor", false, true},
                            Resident{"gpu_mlp_step_resident_unfused", true, false}}) {
    const std::string name = v.name;
    ASSIGN_OR_RETURN(MlpModel m, BuildMlp(config));
    ASSIGN_OR_RETURN(GraphDef def,
                     ResidentBatchGraph(m, batch, config.layers[0], batches[0].y));
    SessionConfig options = BuiltinSessionConfig();
    options.capture_steps = v.capture;
    options.fuse_ops = v.fuse;
    ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options, def));
    RETURN_IF_ERROR(
        session->Run({{"x_resident_init", batches[0].x}}, {}, {"init", "x_resident_assign"})
            .status());
    RETURN_IF_ERROR(TimeVariant(name, "resident", warmup, steps,
                                [&](const RunOptions& ro, RunMetadata* md) {
                                  return session->Run({}, {"loss"}, {"train"}, ro, md);
                                }));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "gpu_mlp_step", sluice::Main);
}
