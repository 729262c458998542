// One training step of the MLP 784-1024-1024-10 (batch 256, ReLU, softmax
// cross-entropy, plain SGD) through Session::Run, the model built by
// examples/mlp_model.h. The peer is bench/pytorch_mlp.py.
//
//   bazel run //bench:mlp_step [-- --steps=50 --profile]
//
// Prints `mlp_step: X ms` (median over --steps after warm-up, with the
// graph-rewrite pass on unless --fuse_ops=false). With --compare_fusion (the
// default) it then runs the same graph in a second session with
// SessionConfig::fuse_ops = false, in --rounds alternating rounds of
// --steps each (the order swapped every round), and prints
// `mlp_step_fused: X ms`, `mlp_step_unfused: X ms` (medians of the rounds'
// medians) and `mlp_step_fusion_speedup: Yx`. With
// --profile (the default) it then runs traced steps and prints where the
// time goes: `mlp_profile_op_<Op>: X ms` per op type (summed over the
// step's nodes, median over the traced steps), the kernels' total and the
// traced step's wall time, then the top nodes as `#` lines.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "bench/bench_util.h"
#include "examples/mlp_model.h"
#include "session/direct_session.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 50, "timed steps");
ABSL_FLAG(int, warmup, 5, "untimed steps first");
ABSL_FLAG(int, batch, 256, "examples per step");
ABSL_FLAG(bool, profile, true, "also run traced steps and print per-op times");
ABSL_FLAG(int, top, 12, "nodes listed (as # lines) by --profile");
ABSL_FLAG(bool, timeline, false, "print the last traced step's nodes (start, end, thread) to stderr");
ABSL_FLAG(int, num_threads, 0, "SessionConfig::devices.cpu_threads (0: hardware threads)");
ABSL_FLAG(int, inter_op, 0, "SessionConfig::inter_op_parallelism (1: nodes run one at a time)");
ABSL_FLAG(bool, fuse_ops, true, "SessionConfig::fuse_ops of the main session");
ABSL_FLAG(bool, compare_fusion, true, "also time fused against unfused in alternating rounds");
ABSL_FLAG(int, rounds, 5, "alternating rounds of --compare_fusion");

namespace sluice {
namespace {

// Times the step with the rewrite pass on and off, each in its own session
// (both initialized alike), in alternating rounds.
template <typename StepOn>
absl::Status CompareFusion(const MlpModel& m, SessionConfig options, int steps, int warmup,
                           StepOn& step_on) {
  std::unique_ptr<Session> sessions[2];
  for (int fused = 0; fused < 2; ++fused) {
    options.fuse_ops = fused == 1;
    ASSIGN_OR_RETURN(sessions[fused], NewSession(options, *m.scope.graph()));
    RETURN_IF_ERROR(sessions[fused]->Run({}, {}, {m.init}).status());
    for (int i = 0; i < warmup; ++i) step_on(sessions[fused].get(), {}, nullptr);
  }
  std::vector<double> medians[2];
  const int rounds = absl::GetFlag(FLAGS_rounds);
  for (int r = 0; r < rounds; ++r) {
    for (int j = 0; j < 2; ++j) {
      const int fused = (r + j) % 2;  // unfused first in even rounds
      Session* s = sessions[fused].get();
      medians[fused].push_back(
          bench::Median(bench::TimeRepeated(steps, [&] { step_on(s, {}, nullptr); })));
    }
  }
  const double fused = bench::Median(medians[1]), unfused = bench::Median(medians[0]);
  std::printf("mlp_step_fused: %.3f ms\n", fused);
  std::printf("mlp_step_unfused: %.3f ms\n", unfused);
  std::printf("mlp_step_fusion_speedup: %.3fx\n", unfused / fused);
  std::printf("# fusion rounds (fused / unfused, ms):");
  for (int r = 0; r < rounds; ++r) std::printf(" %.2f/%.2f", medians[1][r], medians[0][r]);
  std::printf("\n");
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Main() {
  MlpConfig config;
  config.layers = {784, 1024, 1024, 10};
  config.optimizer = "sgd";
  config.learning_rate = 0.1;
  ASSIGN_OR_RETURN(MlpModel m, BuildMlp(config));
  SessionConfig options = BuiltinSessionConfig();
  options.devices.cpu_threads = absl::GetFlag(FLAGS_num_threads);
  options.inter_op_parallelism = absl::GetFlag(FLAGS_inter_op);
  options.fuse_ops = absl::GetFlag(FLAGS_fuse_ops);
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options, *m.scope.graph()));
  RETURN_IF_ERROR(session->Run({}, {}, {m.init}).status());

  const int batch = absl::GetFlag(FLAGS_batch);
  const int steps = absl::GetFlag(FLAGS_steps), warmup = absl::GetFlag(FLAGS_warmup);
  Dataset data = MakeSyntheticDataset({.examples = 8192});
  // Batches are made before timing: the step alone is measured.
  std::vector<Dataset> batches;
  for (int i = 0; i < 16; ++i) batches.push_back(Batch(data, int64_t{i} * batch, batch));

  absl::Status status;
  int next = 0;
  float last_loss = 0;
  auto step_on = [&](Session* on, const RunOptions& options, RunMetadata* metadata) {
    const Dataset& b = batches[next++ % batches.size()];
    absl::StatusOr<std::vector<Tensor>> out =
        on->Run({{m.x, b.x}, {m.labels, b.y}}, {m.loss}, {m.train}, options, metadata);
    if (!out.ok()) {
      status = out.status();
    } else {
      last_loss = (*out)[0].scalar<float>();
    }
  };
  auto step = [&](const RunOptions& options, RunMetadata* metadata) {
    step_on(session.get(), options, metadata);
  };
  for (int i = 0; i < warmup; ++i) step({}, nullptr);
  RETURN_IF_ERROR(status);
  std::vector<double> ms = bench::TimeRepeated(steps, [&] { step({}, nullptr); });
  RETURN_IF_ERROR(status);
  std::printf("mlp_step: %.3f ms\n", bench::Median(ms));
  std::printf("mlp_step_loss_after: %.4f\n", last_loss);
  std::fflush(stdout);
  if (absl::GetFlag(FLAGS_compare_fusion)) {
    RETURN_IF_ERROR(CompareFusion(m, options, steps, warmup, step_on));
  }
  if (!absl::GetFlag(FLAGS_profile)) return absl::OkStatus();

  // Traced steps: per op type, the sum of its nodes' kernel times.
  const int traced = std::max(5, steps / 2);
  std::map<std::string, std::vector<double>> per_op;
  std::map<std::string, std::vector<double>> per_node;
  std::vector<double> kernels_total, wall;
  for (int i = 0; i < traced; ++i) {
    RunOptions options;
    options.trace = true;
    RunMetadata metadata;
    std::vector<double> t = bench::TimeRepeated(1, [&] { step(options, &metadata); });
    RETURN_IF_ERROR(status);
    wall.push_back(t[0]);
    std::map<std::string, double> op_ms;
    double total = 0;
    for (const NodeExecStats& n : metadata.step_stats.nodes) {
      const double d = (n.end_us - n.start_us) / 1000.0;
      op_ms[n.op] += d;
      per_node[n.node_name + " (" + n.op + ")"].push_back(d);
      total += d;
    }
    for (const auto& [op, v] : op_ms) per_op[op].push_back(v);
    kernels_total.push_back(total);
    if (i + 1 == traced && absl::GetFlag(FLAGS_timeline)) {
      std::fprintf(stderr, "timeline of the last traced step (us since step start):\n");
      for (const NodeExecStats& n : metadata.step_stats.nodes) {
        if (n.end_us - n.start_us < 20) continue;
        std::fprintf(stderr, "  %7lld %7lld  thread %5lld  %s (%s)\n",
                     static_cast<long long>(n.start_us), static_cast<long long>(n.end_us),
                     static_cast<long long>(n.thread_id), n.node_name.c_str(), n.op.c_str());
      }
    }
  }
  std::vector<std::pair<double, std::string>> ops_sorted;
  for (const auto& [op, v] : per_op) {
    // Ops missing from some steps count as 0 there.
    std::vector<double> all = v;
    all.resize(traced, 0.0);
    ops_sorted.push_back({bench::Median(all), op});
  }
  std::sort(ops_sorted.rbegin(), ops_sorted.rend());
  for (const auto& [v, op] : ops_sorted) std::printf("mlp_profile_op_%s: %.3f ms\n", op.c_str(), v);
  std::printf("mlp_profile_kernels_total: %.3f ms\n", bench::Median(kernels_total));
  std::printf("mlp_profile_traced_step_wall: %.3f ms\n", bench::Median(wall));
  std::printf("mlp_profile_nodes_per_step: %zu\n", per_node.size());
  std::fflush(stdout);

  std::vector<std::pair<double, std::string>> nodes_sorted;
  for (const auto& [name, v] : per_node) nodes_sorted.push_back({bench::Median(v), name});
  std::sort(nodes_sorted.rbegin(), nodes_sorted.rend());
  const int top = std::min<int>(absl::GetFlag(FLAGS_top), nodes_sorted.size());
  std::printf("# top %d nodes by median kernel time:\n", top);
  for (int i = 0; i < top; ++i) {
    std::printf("#   %8.3f ms  %s\n", nodes_sorted[i].first,
                 nodes_sorted[i].second.c_str());
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "mlp_step", sluice::Main);
}
