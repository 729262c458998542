// Executor overhead per node, measured through Session::Run.
//
//   bazel run //bench:executor_overhead [-- --reps=200]
//
// Three graphs, each compiled by a warm-up Run and then timed `reps` times:
//   empty:        one NoOp target (the fixed cost of a step);
//   chain:        Const -> 10,000 Identity in a chain, the last one fetched;
//   independent:  10,000 Identity of one Const, joined by control edges into
//                 one NoOp target.
// Per-node figures subtract the empty step and divide by the node count;
// the "_raw" figures do not subtract.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "bench/bench_util.h"
#include "session/direct_session.h"
#include "sluice.h"

ABSL_FLAG(int, reps, 200, "timed runs per graph");
ABSL_FLAG(int, nodes, 10000, "trivial ops per graph");

namespace sluice {
namespace {

// Compiles (warm-up runs) then times Run(fetches, targets); median in µs.
absl::StatusOr<double> TimeRuns(Session* session, const std::vector<Output>& fetches,
                                const std::vector<Node*>& targets, int reps) {
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<std::vector<Tensor>> out = session->Run({}, fetches, targets);
    if (!out.ok()) return out.status();
  }
  absl::Status status;
  std::vector<double> ms = bench::TimeRepeated(reps, [&] {
    absl::StatusOr<std::vector<Tensor>> out = session->Run({}, fetches, targets);
    if (!out.ok()) status = out.status();
  });
  if (!status.ok()) return status;
  return bench::Median(ms) * 1000.0;
}

absl::Status Main() {
  const int reps = absl::GetFlag(FLAGS_reps);
  const int n = absl::GetFlag(FLAGS_nodes);
  Scope s = Scope::NewRootScope(BuiltinOps());

  // Empty step: a lone NoOp.
  Node* empty = ops::NoOp(s.WithOpName("empty"));

  // Chain.
  Output h = ops::Const(s.WithOpName("chain_in"), 1.0f);
  for (int i = 0; i < n; ++i) h = ops::Identity(s, h);
  Output chain_out = h;

  // Independent nodes joined into one NoOp.
  Output c = ops::Const(s.WithOpName("fan_in"), 1.0f);
  std::vector<Node*> leaves;
  leaves.reserve(n);
  for (int i = 0; i < n; ++i) leaves.push_back(ops::Identity(s, c).node);
  Node* join = ops::NoOp(s.WithOpName("join").WithControlDependencies(leaves));
  RETURN_IF_ERROR(s.status());

  ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                   NewSession(BuiltinSessionConfig(), *s.graph()));

  ASSIGN_OR_RETURN(double empty_us, TimeRuns(session.get(), {}, {empty}, reps * 10));
  ASSIGN_OR_RETURN(double chain_us, TimeRuns(session.get(), {chain_out}, {}, reps));
  ASSIGN_OR_RETURN(double indep_us, TimeRuns(session.get(), {}, {join}, reps));

  std::printf("executor_empty_run: %.2f us\n", empty_us);
  std::printf("executor_chain_%d: %.3f us/node\n", n, (chain_us - empty_us) / (n + 2));
  std::printf("executor_chain_%d_raw: %.3f us/node\n", n, chain_us / (n + 2));
  std::printf("executor_independent_%d: %.3f us/node\n", n, (indep_us - empty_us) / (n + 2));
  std::printf("executor_independent_%d_raw: %.3f us/node\n", n, indep_us / (n + 2));
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "executor_overhead", sluice::Main);
}
