// One cluster task: hosts the task's devices, WorkerService and
// MasterService on its port until SIGTERM or SIGINT.
//
//   bazel run //tools:server -- --cluster=cluster.json --job=ps --task=0 --tls_dir=/job/tls
//   # plaintext, loopback debugging only:
//   bazel run //tools:server -- --cluster="ps=127.0.0.1:4000;worker=127.0.0.1:4001" --job=worker --task=0 --insecure
//   SLUICE_CONFIG='{"cluster": {...}, "task": {"type": "ps", "index": 0}}' SLUICE_TLS_DIR=... server
//
// Every connection is mutual TLS with the job's credentials (tools:launch
// makes them: ca.crt, <job>-<task>.crt/.key); --insecure, loopback only,
// turns it off and says so.
//
// Prints one line when ready; exits 0 after a clean shutdown, 1 on an error
// (one "server: error: ..." line).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "distributed/server.h"

ABSL_FLAG(std::string, cluster, "",
          "cluster spec: a JSON or text-proto file, or inline \"ps=h:p;worker=h:p,h:p\"; "
          "empty: from $SLUICE_CONFIG");
ABSL_FLAG(std::string, job, "", "this task's job (with --cluster)");
ABSL_FLAG(int, task, 0, "this task's index in its job");
ABSL_FLAG(int, virtual_cpus, 0, "virtual CPU devices CPU:1..N beside CPU:0");
ABSL_FLAG(int, threads, 0, "CPU:0's threads; 0: one per core");
ABSL_FLAG(int64_t, variable_memory_budget_mb, 0,
          "the most MiB of variables one graph may place on this task (a ps); 0: no limit");
ABSL_FLAG(std::vector<std::string>, write_dirs, {},
          "directories (absolute, comma separated, this user's) where the graphs this task runs "
          "may write files and read checkpoints; none: /tmp/sluice (0700, this user's; /tmp/sluice-UID when another user has it); nowhere else");
ABSL_FLAG(std::vector<std::string>, read_dirs, {},
          "directories where those graphs may also read checkpoints (a model to start from)");

ABSL_FLAG(std::string, tls_dir, "",
          "the job's TLS credentials (ca.crt, this task's certificate and key); empty: "
          "$SLUICE_TLS_DIR");
ABSL_FLAG(bool, insecure, false,
          "plaintext with no authentication, for a debug run on loopback (also "
          "$SLUICE_INSECURE=1)");

namespace {

int Fail(const absl::Status& s) {
  std::cerr << "server: error: " << s.message() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const absl::Time start = absl::Now();
  absl::SetProgramUsageMessage(
      "one cluster task: server --cluster=SPEC --job=JOB --task=N [--tls_dir=DIR | --insecure]");
  absl::ParseCommandLine(argc, argv);
  sluice::BlockTerminationSignals();

  sluice::ServerOptions options;
  absl::StatusOr<sluice::TaskConfig> config = sluice::TaskConfigFromFlags(
      absl::GetFlag(FLAGS_cluster), absl::GetFlag(FLAGS_job), absl::GetFlag(FLAGS_task));
  if (!config.ok()) return Fail(config.status());
  options.config = *std::move(config);
  options.session.devices.num_virtual_cpus = absl::GetFlag(FLAGS_virtual_cpus);
  options.session.devices.cpu_threads = absl::GetFlag(FLAGS_threads);
  options.file_write_roots = absl::GetFlag(FLAGS_write_dirs);
  options.file_read_roots = absl::GetFlag(FLAGS_read_dirs);
  options.variable_memory_budget_bytes = absl::GetFlag(FLAGS_variable_memory_budget_mb) << 20;
  options.security = sluice::TransportSecurityFromEnv();
  if (!absl::GetFlag(FLAGS_tls_dir).empty()) options.security.tls_dir = absl::GetFlag(FLAGS_tls_dir);
  if (absl::GetFlag(FLAGS_insecure)) {
    options.security.insecure = true;
    options.security.tls_dir.clear();
  }
  absl::StatusOr<std::unique_ptr<sluice::Server>> server = sluice::Server::Create(options);
  if (!server.ok()) return Fail(server.status());
  std::vector<std::string> devices;
  for (sluice::Device* d : (*server)->worker()->devices()) devices.push_back(d->name());
  std::printf("server: %s listening on %s (%s); ready in %.0f ms\n", (*server)->task().c_str(),
              (*server)->target().c_str(), absl::StrJoin(devices, ", ").c_str(),
              absl::ToDoubleMilliseconds(absl::Now() - start));
  std::fflush(stdout);
  int sig = sluice::ServeUntilTerminated(server->get());
  std::printf("server: %s stopped (signal %d)\n", (*server)->task().c_str(), sig);
  return 0;
}
