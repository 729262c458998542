// One training step of a tf.nn.dynamic_rnn LSTM (BasicLSTMCell, the loop,
// TensorArrays and the gradient loop as TensorFlow 1.x builds them:
// ops/testutil/dynamic_rnn_lstm.h) through Session::Run on GPU:0: mean
// squared error against a target sequence, plain SGD. The peer is
// bench/torch_gpu_lstm.py (nn.LSTM on cuDNN, the same sizes).
//
//   bazel run //bench:gpu_lstm_step [-- --batch=64 --time=32 --depth=128
//   --hidden=256]
//
// Prints the median step time over --steps after --warmup, the loss read
// every step (as PyTorch's loss.item()), with steps recorded and replayed
// whole, both loops included (SessionConfig::capture_steps, the default),
// and then in a second session that runs every step through the executor:
//   gpu_lstm_step: X ms
//   gpu_lstm_step_replayed_steps: R of S
//   gpu_lstm_step_uncaptured: X ms
//   gpu_lstm_step_capture_speedup: X.XX x    (uncaptured / captured)
//   gpu_lstm_step_loss_after, ..._uncaptured_loss_after  (the same batches:
//   equal up to float rounding)
//   gpu_lstm_step_nodes_off_device: N nodes  (placement; `#` lines list them)
//   gpu_lstm_step_input_copies: C per step   (host<->device input copies in a
//   traced step)
// Without a GPU it prints `gpu: none (<reason>)` and exits 0; --device=CPU:0
// runs the same step on the CPU (`cpu_lstm_step...` lines).
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "bench/bench_util.h"
#include "bench/training_steps.h"
#include "ops/testutil/dynamic_rnn_lstm.h"
#include "runtime/gpu/gpu_devices.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 50, "timed steps");
ABSL_FLAG(int, warmup, 5, "untimed steps first");
ABSL_FLAG(int, batch, 64, "sequences per step");
ABSL_FLAG(int, time, 32, "time steps per sequence");
ABSL_FLAG(int, depth, 128, "input features");
ABSL_FLAG(int, hidden, 256, "LSTM units");
ABSL_FLAG(std::string, device, "GPU:0",
          "where the step runs (CPU:0 to check the program)");

namespace sluice {
namespace {

Tensor Uniform(std::mt19937 &gen, const TensorShape &shape, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  Tensor t(DT_FLOAT, shape);
  for (float &v : t.flat<float>())
    v = u(gen);
  return t;
}

absl::Status Main() {
  const std::string device = absl::GetFlag(FLAGS_device);
  const bool on_gpu = device.rfind("GPU", 0) == 0;
  std::string why;
  if (on_gpu && VisibleGpuCount(&why) == 0) {
    std::printf("gpu: none (%s)\n", why.c_str());
    return absl::OkStatus();
  }
  const LstmSizes z{.batch = absl::GetFlag(FLAGS_batch),
                    .time = absl::GetFlag(FLAGS_time),
                    .depth = absl::GetFlag(FLAGS_depth),
                    .hidden = absl::GetFlag(FLAGS_hidden)};
  std::printf("# lstm: batch %d, time %d, depth %d, hidden %d\n", z.batch,
              z.time, z.depth, z.hidden);
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope s = root.WithDevice("/device:" + device);
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output target = ops::Placeholder(s.WithOpName("target"), DT_FLOAT);
  Output kernel_init = ops::Placeholder(s.WithOpName("kernel_init"), DT_FLOAT);
  Output bias_init = ops::Placeholder(s.WithOpName("bias_init"), DT_FLOAT);
  ops::VariableAndInit kernel =
      ops::VariableWithInit(s.WithOpName("kernel"), kernel_init);
  ops::VariableAndInit bias =
      ops::VariableWithInit(s.WithOpName("bias"), bias_init);
  ASSIGN_OR_RETURN(Output y,
                   DynamicRnnLstm(s, x, ops::Identity(s, kernel.var),
                                  ops::Identity(s, bias.var), DT_FLOAT, z));
  Output loss = ops::Mean(s.WithOpName("loss"),
                          ops::Square(s, ops::Sub(s, y, target)), {0, 1, 2});
  GradientDescentOptimizer sgd(0.1);
  ASSIGN_OR_RETURN(Node * train, sgd.Minimize(s, loss, {kernel.var, bias.var}));
  Node *init = ops::GlobalVariablesInitializer(s);
  RETURN_IF_ERROR(root.status());

  const std::string name = on_gpu ? "gpu_lstm_step" : "cpu_lstm_step";
  double captured_ms = 0;  // when some timed steps were replays
  for (const bool capture : {true, false}) {
    SessionConfig config = BuiltinSessionConfig();
    config.capture_steps = capture;
    ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config, *root.graph()));
    // The same weights and batches for both sessions.
    std::mt19937 gen(1);
    RETURN_IF_ERROR(
        session
            ->Run({{kernel_init,
                    Uniform(gen, TensorShape({z.depth + z.hidden, 4 * z.hidden}),
                            1.0f / std::sqrt(static_cast<float>(z.hidden)))},
                   {bias_init, Uniform(gen, TensorShape({4 * z.hidden}), 0.0f)}},
                  {}, {init})
            .status());
    std::vector<std::pair<Tensor, Tensor>> batches;
    for (int i = 0; i < 4; ++i) {
      batches.push_back({Uniform(gen, TensorShape({z.batch, z.time, z.depth}), 1.0f),
                         Uniform(gen, TensorShape({z.batch, z.time, z.hidden}), 0.5f)});
    }
    if (capture) {
      // Placement and copies, from one traced step (traced steps run
      // through the executor).
      RunOptions traced;
      traced.trace = true;
      traced.output_partition_graphs = true;
      RunMetadata md;
      RETURN_IF_ERROR(session
                          ->Run({{x, batches[0].first}, {target, batches[0].second}}, {loss},
                                {train}, traced, &md)
                          .status());
      int off_gpu = 0;
      for (const GraphDef& g : md.partition_graphs) {
        for (const NodeDef& n : g.node()) {
          if (n.device().find(device) == std::string::npos && n.op().rfind("_", 0) != 0) {
            ++off_gpu;
            std::printf("#   off the GPU: %s (%s) on %s\n", n.name().c_str(), n.op().c_str(),
                        n.device().c_str());
          }
        }
      }
      int copies = 0;
      for (const NodeExecStats& n : md.step_stats.nodes) copies += n.input_copies;
      std::printf("%s_nodes_off_device: %d nodes\n", name.c_str(), off_gpu);
      std::printf("%s_input_copies: %d per step\n", name.c_str(), copies);
    }

    int next = 0;
    ASSIGN_OR_RETURN(bench::TimedSteps t,
                     bench::TimeTrainingSteps(absl::GetFlag(FLAGS_warmup),
                                              absl::GetFlag(FLAGS_steps), [&](RunMetadata* md) {
                                                const auto& b = batches[next++ % batches.size()];
                                                return session->Run(
                                                    {{x, b.first}, {target, b.second}}, {loss},
                                                    {train}, {}, md);
                                              }));
    bench::PrintTimedSteps(capture ? name : name + "_uncaptured", t, /*replays=*/capture);
    if (capture) {
      if (t.replayed > 0) captured_ms = bench::Median(t.ms);
    } else if (captured_ms > 0) {
      std::printf("%s_capture_speedup: %.2f x\n", name.c_str(),
                  bench::Median(t.ms) / captured_ms);
    }
  }
  return absl::OkStatus();
}

} // namespace
} // namespace sluice

int main(int argc, char **argv) {
  return sluice::bench::BenchMain(argc, argv, "gpu_lstm_step", sluice::Main);
}
