// The synchronous training step over a network of limited bandwidth: each
// task on its own host (a network namespace, tests/distributed/netns_hosts.h)
// with every link limited by tc tbf, parameter servers against ring
// all-reduce, the same MLP and global batch. Needs root and iproute2.
//
//   bazel run //bench:netns_sync_step [-- --rates=1gbit,10gbit,25gbit --hidden=1024,1024]
//
// Figures, per rate R:
//   sync_step_ps_R: ms          between_graph_mlp --sync, 1 ps + 2 workers
//   sync_step_allreduce_R: ms   multi_worker_mlp, 2 workers
//   sync_step_ps_over_allreduce_R: x
//   model_bytes: MB             the parameters' size (what each step moves
//                               each way per worker, for the ps path)
// A step's time is the run's steps over its training time, as the
// programs print it ("trained to global step N in T s (X steps/s").
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <system_error>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "bench/bench_util.h"
#include "distributed/rpc/job_credentials.h"
#include "tests/distributed/child_process.h"
#include "tests/distributed/netns_hosts.h"

ABSL_FLAG(std::string, rates, "1gbit,10gbit,25gbit", "link rates (tc), comma-separated");
ABSL_FLAG(std::string, hidden, "1024,1024", "hidden layer sizes of the MLP");
ABSL_FLAG(int, steps, 40, "synchronous steps per run");
ABSL_FLAG(int, batch, 64, "examples per worker and step");
ABSL_FLAG(std::string, between_graph_mlp, "examples/between_graph_mlp", "path to the program");
ABSL_FLAG(std::string, multi_worker_mlp, "examples/multi_worker_mlp", "path to the program");

namespace sluice::bench {
namespace {

constexpr int kPort = 2222;

std::string Config(const std::string& cluster, const std::string& job, int index) {
  return absl::StrCat("SLUICE_CONFIG={\"cluster\": ", cluster, ", \"task\": {\"type\": \"", job,
                      "\", \"index\": ", index, "}}");
}

// Steps per second from "(X steps/s" in a program's output; 0 when absent.
double StepsPerSecond(const std::string& out) {
  const size_t at = out.rfind(" steps/s");
  if (at == std::string::npos) return 0;
  const size_t open = out.rfind('(', at);
  double v = 0;
  return open != std::string::npos && absl::SimpleAtod(out.substr(open + 1, at - open - 1), &v)
             ? v
             : 0;
}

struct Task {
  std::string job;
  int index;
  int host;
};

// Runs `program` as every task (on its host) and returns the chief's step
// time in ms.
absl::StatusOr<double> RunJob(NetnsHosts& hosts, const std::string& program,
                              const std::string& cluster, const std::vector<Task>& tasks,
                              const std::vector<std::string>& flags, const std::string& tls_dir,
                              const std::string& tag) {
  std::vector<std::unique_ptr<ChildProcess>> procs;
  ChildProcess* chief = nullptr;
  char resolved[PATH_MAX];
  if (realpath(program.c_str(), resolved) == nullptr) {
    return absl::NotFoundError(absl::StrCat("no program at ", program, " (bazel run this)"));
  }
  for (const Task& t : tasks) {
    std::vector<std::string> argv = {resolved};
    argv.insert(argv.end(), flags.begin(), flags.end());
    ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> p,
                     ChildProcess::Start(hosts.Wrap(t.host, argv),
                                         {Config(cluster, t.job, t.index), "SLUICE_INSECURE=",
                                          "SLUICE_TLS_DIR=" + tls_dir},
                                         absl::StrCat("/tmp/netns-bench-", getpid(), "-", tag, "-",
                                                      t.job, t.index, ".log")));
    if (t.job == "worker" && t.index == 0) chief = p.get();
    procs.push_back(std::move(p));
  }
  std::optional<int> status = chief->WaitForExit(absl::Seconds(600));
  const std::string out = chief->Output();
  for (auto& p : procs) std::remove(p->log_path().c_str());
  if (!status.has_value() || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::InternalError(absl::StrCat(tag, ": the chief failed:\n", out));
  }
  const double per_s = StepsPerSecond(out);
  if (per_s <= 0) return absl::InternalError(absl::StrCat(tag, ": no steps/s in:\n", out));
  return 1000.0 / per_s;
}

absl::Status Run() {
  ASSIGN_OR_RETURN(std::unique_ptr<NetnsHosts> hosts, NetnsHosts::Create(3));
  const std::string& a = hosts->address(0);
  const std::string& b = hosts->address(1);
  const std::string& c = hosts->address(2);
  // 1 ps (host 0) + 2 workers (hosts 1, 2); all-reduce: the 2 workers.
  const std::string ps_cluster = absl::StrCat("{\"ps\": [\"", a, ":", kPort, "\"], \"worker\": [\"",
                                              b, ":", kPort, "\", \"", c, ":", kPort, "\"]}");
  const std::string ring_cluster =
      absl::StrCat("{\"worker\": [\"", b, ":", kPort, "\", \"", c, ":", kPort, "\"]}");
  const std::string hidden = absl::GetFlag(FLAGS_hidden);
  const int steps = absl::GetFlag(FLAGS_steps);
  const int batch = absl::GetFlag(FLAGS_batch);
  int64_t params = 0, prev = 784;
  for (absl::string_view h : absl::StrSplit(hidden, ',')) {
    int64_t n;
    if (!absl::SimpleAtoi(h, &n)) return absl::InvalidArgumentError("--hidden: not sizes");
    params += prev * n + n;
    prev = n;
  }
  params += prev * 10 + 10;
  std::printf("model_bytes: %.1f MB\n", params * 4 / 1e6);
  const std::string logdir = absl::StrCat("/tmp/sluice/netns-bench-", getpid());
  // Mutual TLS, as a launched job has it.
  const std::string tls_dir = logdir + "/tls";
  std::error_code ignored;
  std::filesystem::create_directories(logdir, ignored);
  RETURN_IF_ERROR(WriteJobCredentials(
      tls_dir, {"/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0",
                "/job:worker/replica:0/task:1"}));
  const std::vector<std::string> common = {"--hidden=" + hidden, absl::StrCat("--steps=", steps),
                                           "--examples=4096", "--log_every=1000"};
  for (absl::string_view rate_view : absl::StrSplit(absl::GetFlag(FLAGS_rates), ',')) {
    const std::string rate(rate_view);
    RETURN_IF_ERROR(hosts->LimitBandwidth(rate));
    // Fresh directories per run: a checkpoint of the run before would be
    // resumed from (its last step), and no step would be timed.
    std::vector<std::string> ps_flags = common;
    for (const std::string& f :
         {std::string("--sync"), absl::StrCat("--batch=", batch),
          absl::StrCat("--logdir=", logdir, "/ps-", rate), std::string("--checkpoint_steps=100000")}) {
      ps_flags.push_back(f);
    }
    std::vector<std::string> ring_flags = common;
    for (const std::string& f :
         {absl::StrCat("--batch=", 2 * batch), absl::StrCat("--checkpoint_dir=", logdir, "/ring-", rate),
          std::string("--checkpoint_every=100000")}) {
      ring_flags.push_back(f);
    }
    ASSIGN_OR_RETURN(double ps_ms,
                     RunJob(*hosts, absl::GetFlag(FLAGS_between_graph_mlp), ps_cluster,
                            {{"ps", 0, 0}, {"worker", 1, 2}, {"worker", 0, 1}}, ps_flags,
                            tls_dir, "ps-" + rate));
    ASSIGN_OR_RETURN(double ring_ms,
                     RunJob(*hosts, absl::GetFlag(FLAGS_multi_worker_mlp), ring_cluster,
                            {{"worker", 1, 2}, {"worker", 0, 1}}, ring_flags, tls_dir,
                            "ring-" + rate));
    std::printf("sync_step_ps_%s: %.1f ms\n", rate.c_str(), ps_ms);
    std::printf("sync_step_allreduce_%s: %.1f ms\n", rate.c_str(), ring_ms);
    std::printf("sync_step_ps_over_allreduce_%s: %.2f x\n", rate.c_str(), ps_ms / ring_ms);
    std::fflush(stdout);
  }
  (void)std::system(absl::StrCat("rm -rf '", logdir, "'").c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "netns_sync_step", sluice::bench::Run);
}
