// The launcher behind //tools:launch: starts one process per task of a
// local cluster (parameter servers and workers on free 127.0.0.1 ports), each
// with its TaskConfig in the SLUICE_CONFIG environment variable, streams
// their output with a "[job:index] " prefix and tears the cluster down when
// the chief (worker 0) exits. With --k8s=DIR it writes Kubernetes manifests
// for the same program instead.
//
//   bazel run //tools:launch -- --ps=1 --workers=2 -- //examples:between_graph_mlp --steps=100
//   bazel run //tools:launch -- --ps=1 --workers=4 --k8s=/tmp/k8s --image=me/mlp:1
//       -- /app/between_graph_mlp --steps=1000
//
// Flags (before the program; "--" ends them, so does the first non-flag):
//   --ps=N (default 0)           parameter-server tasks; no "ps" job when 0
//   --workers=N (default 1)      worker tasks, >= 1; worker 0 is the chief
//   --fail_fast                  a failing non-chief task tears everything down
//   --chief_only_exit            tasks other than the chief are expected to run
//                                until torn down: one that exits on its own,
//                                even with status 0, counts as failed
//   --grace_period_s=S (5)       SIGTERM to SIGKILL delay when tearing down
//   --insecure                   plaintext between tasks (loopback debugging)
//   --k8s=DIR --image=IMG [--port=2222] [--namespace=default]
//       [--gpus_per_worker=N] [--storage=10Gi] [--storage_class=NAME]
//
// Security: every run gets a new CA and a certificate per task (and one
// for "client"), made with OpenSSL's library into a private temporary
// directory that each task finds in SLUICE_TLS_DIR; tasks accept only
// connections that show one of them (mutual TLS 1.3). The directory is
// removed when the launcher exits. With --k8s the credentials go into a
// Secret per task, each pod mounting the CA's certificate and its own key.
//
// Local runs: PROGRAM is a path (relative paths resolve against the
// directory `bazel run` was started from, then the workspace root; a bare
// name is looked up in PATH) or a Bazel label "//pkg:name", which is built
// with `bazel build` in $BUILD_WORKSPACE_DIRECTORY (set by `bazel run`) and
// run from bazel-bin. Each task runs in its own process group with stdin
// /dev/null, its working directory $BUILD_WORKING_DIRECTORY when set, and
// PR_SET_PDEATHSIG so it dies with the launcher. Every exit is reported
// ("[launch] worker:1 exited with status 0" / "... killed by signal 9").
// The chief's exit stops the others (SIGTERM to each process group, SIGKILL
// after the grace period) and becomes the launcher's exit status (128+N for a
// signal). SIGINT / SIGTERM to the launcher stop everything the same way and
// exit 130 / 143; a second one sends SIGKILL at once.
//
// Kubernetes: per job a headless Service and per task a StatefulSet of one
// pod in DIR/<job>.yaml, the job's shared volume in DIR/storage.yaml, the
// Secrets in DIR/tls-secret.yaml (0600) and DIR/README.txt (see
// k8s_manifests.h). Each pod's SLUICE_CONFIG holds the cluster of stable DNS
// names <job>-<i>-0.<job>.<namespace>.svc.cluster.local:<port> and its task.
//
// Thread-safety: LaunchMain and RunLocalTasks install process-wide signal
// handlers (SIGINT, SIGTERM, SIGCHLD) for their duration and reap their own
// children: call them from one thread, with no other code waiting on
// children. The other functions are pure or only read the environment.
#ifndef SLUICE_DISTRIBUTED_CLUSTER_LAUNCHER_H_
#define SLUICE_DISTRIBUTED_CLUSTER_LAUNCHER_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/cluster/cluster_spec.h"

namespace sluice {

struct LaunchOptions {
  int num_ps = 0;
  int num_workers = 1;
  bool fail_fast = false;
  bool chief_only_exit = false;
  double grace_period_s = 5;
  int max_restarts = 3;  // SupervisorOptions::max_restarts
  // Plaintext between tasks (SLUICE_INSECURE=1) instead of mutual TLS with
  // credentials made for this job.
  bool insecure = false;
  // Each ps task's variable memory budget in MiB
  // ($SLUICE_VARIABLE_MEMORY_BUDGET_MB; distributed/variable_budget.h); 0: none.
  int64_t ps_memory_budget_mb = 0;
  // Kubernetes output; empty k8s_dir means run locally.
  std::string k8s_dir;
  std::string image;
  int port = 2222;
  std::string k8s_namespace = "default";
  int gpus_per_worker = 0;       // K8sOptions::gpus_per_worker
  std::string storage = "10Gi";  // K8sOptions::storage
  std::string storage_class;     // K8sOptions::storage_class
  // PROGRAM then its arguments.
  std::vector<std::string> program;
  bool help = false;
};

// Parses the arguments (argv without argv[0]); flags are "--name=value" or a
// bare "--name" for booleans. InvalidArgument for an unknown flag, a bad or
// out-of-range value, --workers=0, a missing program, --k8s without --image,
// or --image/--port/--namespace without --k8s.
absl::StatusOr<LaunchOptions> ParseLaunchArgs(const std::vector<std::string>& args);

// The usage text for --help.
std::string LaunchUsage();

// `count` distinct TCP ports that were free on 127.0.0.1 a moment ago (each
// bound to port 0 and read back, all open at once, then closed). Another
// process may still take one before the task binds it.
absl::StatusOr<std::vector<int>> PickFreePorts(int count);

// {ps: [127.0.0.1:P, ...], worker: [...]} on fresh ports; no ps job when
// num_ps is 0.
absl::StatusOr<ClusterSpec> LocalCluster(int num_ps, int num_workers);

// Where ResolveProgram looks. FromEnvironment() reads BUILD_WORKSPACE_DIRECTORY,
// BUILD_WORKING_DIRECTORY, PATH and the current directory.
struct ProgramLocations {
  std::string workspace_dir;    // set: labels are built there with `bazel`
  std::string working_dir;      // relative paths resolve here first
  std::string cwd;              // then here (and bazel-bin/ without workspace_dir)
  std::string path;             // PATH, for bare names
  std::string bazel = "bazel";  // the command that builds labels
  static ProgramLocations FromEnvironment();
};

// The absolute path of an executable PROGRAM (see the top comment). Labels
// are built first, printing "[launch] building LABEL" to `log`. NotFound when
// there is no such file (or an unbuilt label without a workspace),
// InvalidArgument when it is not an executable file, Internal when the build
// fails.
absl::StatusOr<std::string> ResolveProgram(const std::string& program,
                                           const ProgramLocations& where, std::ostream& log);

// Runs `program` with `args` once per task of `cluster` as described at the
// top; output and "[launch]" lines go to `out` (flushed per line). Returns
// the exit status the launcher should exit with: the chief's, 1 or the
// failed task's status under --fail_fast, 130 / 143 after SIGINT / SIGTERM.
// Returns an error (after stopping what had started) only when a task could
// not be started.
absl::StatusOr<int> RunLocalTasks(const ClusterSpec& cluster, const std::string& program,
                                  const std::vector<std::string>& args,
                                  const LaunchOptions& options, std::ostream& out);

// The whole tool. Returns the process exit code; bad input prints one
// "launch: error: ..." line to `err` and returns 2.
int LaunchMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_CLUSTER_LAUNCHER_H_
