// Model-parallel placement over two devices: for three graphs (a chain MLP, a
// wide graph of parallel branches, two towers), the step time the cost model
// predicts (placement/auto_placer.h PredictPlacement) for four placements —
// all on one device, colocation groups round-robin, a split made by hand
// (layers / branches / towers) and AutoPlace — and, when the devices are
// CPUs, the step time measured in a Session with virtual CPU devices (median
// over --steps runs after warm-up; the four sessions of a graph take turns in
// --rounds rounds, in a rotating order).
//
//   bazel run //bench:placement [-- --devices='CPU:0{gflops=40},CPU:1{gflops=40}' --steps=10]
//
// Prints `placement_<graph>_<placement>_predicted: X ms`,
// `placement_<graph>_<placement>_measured: X ms` and
// `placement_<graph>_auto_vs_manual: X x`, and AutoPlace's report for each
// graph as `#` lines.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "placement/auto_placer.h"
#include "placement/colocation.h"
#include "session/direct_session.h"
#include "sluice.h"

ABSL_FLAG(std::string, devices, "CPU:0,CPU:1", "DeviceSpecs of the two (or more) devices");
ABSL_FLAG(int, batch, 128, "rows of the input");
ABSL_FLAG(int, steps, 10, "measured steps per placement (0: predictions only)");
ABSL_FLAG(int, rounds, 5, "rounds the measured steps are spread over, the placements' order "
          "rotating each round");
ABSL_FLAG(int, warmup, 2, "untimed steps first");

namespace sluice {
namespace {

// A forward-only graph with initialized variables, and its hand-made split:
// the first rule whose prefix starts a node's name gives its device index.
struct BenchGraph {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x;
  Output out;
  Node* init = nullptr;
  std::vector<std::pair<std::string, int>> manual;
};

// `layers` x (MatMul with a width x width variable, Relu) under `scope`.
Output Dense(const Scope& scope, Output h, int layers, int64_t width) {
  for (int l = 0; l < layers; ++l) {
    Scope s = scope.NewSubScope(absl::StrCat("layer", l));
    ops::VariableAndInit w = ops::VariableWithInit(
        s.WithOpName("w"), ops::Fill(s, {width, width}, 1.0f / static_cast<float>(width)));
    h = ops::Relu(s, ops::MatMul(s, h, w.var));
  }
  return h;
}

// x[batch, 1024] through 6 layers; by hand: layers 0-2 on device 0, 3-5 on 1.
std::unique_ptr<BenchGraph> ChainMlp(int64_t batch) {
  auto g = std::make_unique<BenchGraph>();
  g->x = ops::Placeholder(g->root.WithOpName("x"), DT_FLOAT, {.shape = {batch, 1024}});
  g->out = ops::Identity(g->root.WithOpName("out"), Dense(g->root, g->x, 6, 1024));
  g->manual = {{"layer3/", 1}, {"layer4/", 1}, {"layer5/", 1}, {"out", 1}};
  return g;
}

// x[batch, 512] into 8 branches of 2 layers, summed; by hand: odd branches on 1.
std::unique_ptr<BenchGraph> Wide(int64_t batch) {
  auto g = std::make_unique<BenchGraph>();
  g->x = ops::Placeholder(g->root.WithOpName("x"), DT_FLOAT, {.shape = {batch, 512}});
  std::vector<Output> branches;
  for (int b = 0; b < 8; ++b) {
    branches.push_back(Dense(g->root.NewSubScope(absl::StrCat("branch", b)), g->x, 2, 512));
    if (b % 2 == 1) g->manual.push_back({absl::StrCat("branch", b, "/"), 1});
  }
  g->out = ops::AddN(g->root.WithOpName("out"), branches);
  return g;
}

// x[batch, 1024] into two towers of 4 layers, added; by hand: a tower each.
std::unique_ptr<BenchGraph> TwoTowers(int64_t batch) {
  auto g = std::make_unique<BenchGraph>();
  g->x = ops::Placeholder(g->root.WithOpName("x"), DT_FLOAT, {.shape = {batch, 1024}});
  Output a = Dense(g->root.NewSubScope("tower0"), g->x, 4, 1024);
  Output b = Dense(g->root.NewSubScope("tower1"), g->x, 4, 1024);
  g->out = ops::Add(g->root.WithOpName("out"), a, b);
  g->manual = {{"tower1/", 1}};
  return g;
}

using Builder = std::unique_ptr<BenchGraph> (*)(int64_t);

// Sets every node's requested device for `strategy`; AutoPlace's report, if
// it ran, goes to `auto_report`.
absl::Status Place(BenchGraph* g, absl::string_view strategy,
                   const std::vector<DeviceSpec>& devices, PlacementReport* auto_report) {
  Graph* graph = g->root.graph();
  if (strategy == "auto") {
    ASSIGN_OR_RETURN(*auto_report, AutoPlace(graph, {.devices = devices}));
    return absl::OkStatus();
  }
  ColocationGroups groups = ComputeColocationGroups(*graph);
  for (Node* node : graph->nodes()) {
    int d = 0;
    if (strategy == "round_robin") {
      d = groups.group_of[node->id()] % static_cast<int>(devices.size());
    } else if (strategy == "manual") {
      for (const auto& [prefix, device] : g->manual) {
        if (absl::StartsWith(node->name(), prefix)) {
          d = device;
          break;
        }
      }
    }
    node->set_requested_device(devices[d].name);
  }
  return absl::OkStatus();
}

// A placed graph in its own session, ready to step.
struct Runner {
  std::unique_ptr<Session> session;
  Tensor x;
  std::string x_name, out_name;

  absl::Status Step() { return session->Run({{x_name, x}}, {out_name}, {}).status(); }
};

absl::StatusOr<Runner> MakeRunner(const BenchGraph& g, int num_devices) {
  SessionConfig options = BuiltinSessionConfig();
  options.devices.num_virtual_cpus = num_devices - 1;
  Runner r;
  ASSIGN_OR_RETURN(r.session, NewSession(options, *g.root.graph()));
  RETURN_IF_ERROR(r.session->Run({}, {}, {g.init}).status());
  r.x = Tensor(DT_FLOAT, g.x.shape());
  float* data = r.x.data<float>();
  for (int64_t i = 0; i < r.x.NumElements(); ++i) data[i] = static_cast<float>(i % 7) * 0.1f;
  r.x_name = g.x.name();
  r.out_name = g.out.name();
  for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) RETURN_IF_ERROR(r.Step());
  return r;
}

absl::Status Main() {
  ASSIGN_OR_RETURN(std::vector<DeviceSpec> devices,
                   ParseDeviceSpecs(absl::GetFlag(FLAGS_devices)));
  if (devices.size() < 2) return absl::InvalidArgumentError("--devices: give at least two");
  bool all_cpus = true;
  for (size_t d = 0; d < devices.size(); ++d) {
    all_cpus = all_cpus && devices[d].name == absl::StrCat("/device:CPU:", d);
  }
  const bool measure = absl::GetFlag(FLAGS_steps) > 0 && all_cpus;
  if (absl::GetFlag(FLAGS_steps) > 0 && !all_cpus) {
    std::printf("# measured steps need devices /device:CPU:0, /device:CPU:1, ... in order\n");
  }
  const int64_t batch = absl::GetFlag(FLAGS_batch);
  const std::pair<const char*, Builder> graphs[] = {
      {"chain", ChainMlp}, {"wide", Wide}, {"towers", TwoTowers}};
  constexpr const char* kStrategies[] = {"single", "round_robin", "manual", "auto"};
  constexpr int kNumStrategies = 4;
  const int rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  for (const auto& [graph_name, build] : graphs) {
    std::vector<std::unique_ptr<BenchGraph>> placed;
    std::vector<Runner> runners;
    for (const char* strategy : kStrategies) {
      std::unique_ptr<BenchGraph> g = build(batch);
      g->init = ops::GlobalVariablesInitializer(g->root.WithOpName("init"));
      RETURN_IF_ERROR(g->root.status());
      PlacementReport auto_report;
      RETURN_IF_ERROR(Place(g.get(), strategy, devices, &auto_report));
      ASSIGN_OR_RETURN(PlacementReport predicted, PredictPlacement(*g->root.graph(), devices));
      std::printf("placement_%s_%s_predicted: %.3f ms\n", graph_name, strategy,
                  predicted.predicted_step_seconds * 1e3);
      if (std::string(strategy) == "auto") {
        for (absl::string_view line : absl::StrSplit(auto_report.ToString(), '\n')) {
          if (!line.empty()) std::printf("# %s %s\n", graph_name, std::string(line).c_str());
        }
      }
      if (measure) {
        absl::StatusOr<Runner> runner = MakeRunner(*g, static_cast<int>(devices.size()));
        if (!runner.ok()) return AddContext(runner.status(), absl::StrCat(graph_name, " ", strategy));
        runners.push_back(*std::move(runner));
      }
      placed.push_back(std::move(g));
      std::fflush(stdout);
    }
    if (!measure) continue;
    // Rounds rotate the order of the placements, so that drift in the
    // machine's speed during a run (and whatever a placement leaves behind
    // for the next) falls on all of them alike.
    std::map<std::string, std::vector<double>> ms;
    const int per_round = std::max(1, absl::GetFlag(FLAGS_steps) / rounds);
    for (int round = 0; round < rounds; ++round) {
      for (int i = 0; i < kNumStrategies; ++i) {
        const int which = (i + round) % kNumStrategies;
        absl::Status status;
        for (double v : bench::TimeRepeated(per_round, [&] {
               if (status.ok()) status = runners[which].Step();
             })) {
          ms[kStrategies[which]].push_back(v);
        }
        if (!status.ok()) {
          return AddContext(status, absl::StrCat(graph_name, " ", kStrategies[which]));
        }
      }
    }
    std::map<std::string, double> measured;
    for (const char* strategy : kStrategies) {
      measured[strategy] = bench::Median(ms[strategy]);
      std::printf("placement_%s_%s_measured: %.3f ms\n", graph_name, strategy, measured[strategy]);
    }
    // Each device owns an equal share of the cores (runtime/local_devices.h),
    // so "single" is the graph on one share and a split uses all of them.
    for (const char* strategy : {"manual", "auto"}) {
      std::printf("placement_%s_%s_speedup_vs_single: %.2f x\n", graph_name, strategy,
                  measured["single"] / measured[strategy]);
    }
    std::printf("placement_%s_auto_vs_manual: %.3f x (manual's step time / auto's)\n", graph_name,
                measured["manual"] / measured["auto"]);
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "placement", sluice::Main);
}
