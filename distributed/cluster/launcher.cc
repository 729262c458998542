#include "distributed/cluster/launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "distributed/cluster/k8s_manifests.h"
#include "distributed/cluster/task_supervisor.h"
#include "distributed/rpc/job_credentials.h"
#include "runtime/cpu_share.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

absl::StatusOr<int> ParseIntFlag(absl::string_view name, absl::string_view value, int lo, int hi) {
  int parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad value '", value, "' for --", name, ": not an integer"));
  }
  if (parsed < lo || parsed > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " must be in ", lo, "..", hi, ", not ", parsed));
  }
  return parsed;
}

absl::StatusOr<bool> ParseBoolFlag(absl::string_view name, absl::string_view value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("bad value '", value, "' for --", name, ": want true or false"));
}

bool IsExecutableFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

absl::StatusOr<std::string> CheckExecutable(const std::string& path, const std::string& program) {
  std::string absolute = std::filesystem::absolute(path).lexically_normal().string();
  if (!IsExecutableFile(absolute)) {
    return absl::InvalidArgumentError(
        absl::StrCat("program '", program, "' (", absolute, ") is not an executable file"));
  }
  return absolute;
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// Runs `bazel build label` in `workspace`, its output on our stderr.
absl::Status BazelBuild(const std::string& bazel, const std::string& label,
                        const std::string& workspace) {
  std::vector<std::string> argv_strings = {bazel, "build", label};
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    if (chdir(workspace.c_str()) != 0) _exit(126);
    dup2(2, 1);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return absl::InternalError(absl::StrCat("cannot run '", bazel, "' to build ", label));
  }
  return absl::InternalError(absl::StrCat("`", bazel, " build ", label, "` in ", workspace,
                                          " failed (", DescribeWaitStatus(status), ")"));
}

absl::StatusOr<std::string> ResolveLabel(const std::string& label, const ProgramLocations& where,
                                         std::ostream& log) {
  absl::string_view rest = absl::string_view(label).substr(2);
  size_t colon = rest.find(':');
  std::string package(rest.substr(0, colon));
  std::string name;
  if (colon == absl::string_view::npos) {
    name = package.substr(package.rfind('/') + 1);
  } else {
    name = std::string(rest.substr(colon + 1));
  }
  bool ok = !name.empty() && !absl::StrContains(label, "..") && !absl::EndsWith(package, "/");
  for (char c : package + name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && !absl::StrContains("_-./+", c)) ok = false;
  }
  if (!ok) return absl::InvalidArgumentError(absl::StrCat("bad Bazel label '", label, "'"));
  std::string relative = package.empty() ? name : absl::StrCat(package, "/", name);
  std::string base = where.workspace_dir.empty() ? where.cwd : where.workspace_dir;
  if (!where.workspace_dir.empty()) {
    log << "[launch] building " << label << std::endl;
    RETURN_IF_ERROR(BazelBuild(where.bazel, label, where.workspace_dir));
  }
  std::string path = absl::StrCat(base, "/bazel-bin/", relative);
  if (!Exists(path)) {
    return absl::NotFoundError(
        absl::StrCat("program ", label, ": ", path, " does not exist; run `bazel build ", label,
                     "` first, or start the launcher with `bazel run //tools:launch`"));
  }
  return CheckExecutable(path, label);
}

}  // namespace

std::string LaunchUsage() {
  return "usage: launch [--ps=N] [--workers=N] [--fail_fast] [--chief_only_exit]\n"
         "              [--grace_period_s=S] [--max_restarts=N] [--insecure]\n"
         "              [--ps_memory_budget_mb=N]\n"
         "              [--k8s=DIR --image=IMG [--port=2222] [--namespace=default]\n"
         "               [--gpus_per_worker=N] [--storage=10Gi] [--storage_class=NAME]]\n"
         "               -- PROGRAM [ARGS...]\n"
         "Starts PROGRAM once per task of a local cluster (ps and worker jobs on free\n"
         "127.0.0.1 ports) with its place in SLUICE_CONFIG, prefixes each task's output\n"
         "with [job:index], and stops every task when the chief (worker 0) exits.\n"
         "PROGRAM is a path or a Bazel label (//pkg:name, built first under `bazel run`).\n"
         "With --k8s=DIR, writes Kubernetes manifests (headless Service + StatefulSet\n"
         "per job) to DIR instead; PROGRAM is then the path inside the image.\n"
         "  --ps=N              parameter-server tasks (default 0: no ps job)\n"
         "  --workers=N         worker tasks (default 1); worker 0 is the chief\n"
         "  --fail_fast         a failing non-chief task stops everything\n"
         "  --chief_only_exit   any non-chief exit, even status 0, counts as a failure\n"
         "  --grace_period_s=S  SIGTERM to SIGKILL delay when stopping (default 5)\n"
         "  --max_restarts=N    a failed non-chief task is started again at its address,\n"
         "                      up to N times, after 1, 2, 4... s (default 3; 0: never)\n"
         "  --insecure          no TLS between tasks (default: mutual TLS with a CA and\n"
         "                      certificates made for this run)\n"
         "  --ps_memory_budget_mb=N  each ps task refuses a graph whose variables need\n"
         "                      more than N MiB, naming the largest (default 0: no limit)\n"
         "  --gpus_per_worker=N with --k8s: each worker pod requests N nvidia.com/gpu\n"
         "  --storage=SIZE      with --k8s: the job's shared volume for checkpoints and\n"
         "                      logs at /data in every pod (a ReadWriteMany\n"
         "                      PersistentVolumeClaim; default 10Gi)\n"
         "  --storage_class=NAME with --k8s: that volume's storage class (one offering\n"
         "                      ReadWriteMany; default: the cluster's default class)\n";
}

absl::StatusOr<LaunchOptions> ParseLaunchArgs(const std::vector<std::string>& args) {
  LaunchOptions options;
  bool k8s_only_flag = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (!absl::StartsWith(arg, "-") || arg == "-") break;  // the program
    if (arg == "-h" || arg == "-help" || arg == "--help") {
      options.help = true;
      continue;
    }
    absl::string_view body = absl::StripPrefix(absl::StripPrefix(arg, "-"), "-");
    size_t eq = body.find('=');
    absl::string_view name = body.substr(0, eq);
    bool has_value = eq != absl::string_view::npos;
    absl::string_view value = has_value ? body.substr(eq + 1) : absl::string_view();
    auto need_value = [&]() -> absl::Status {
      if (has_value) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, " needs a value (--", name, "=...)"));
    };
    if (name == "ps" || name == "workers" || name == "port" || name == "max_restarts" ||
        name == "gpus_per_worker") {
      RETURN_IF_ERROR(need_value());
      int lo = name == "ps" || name == "max_restarts" || name == "gpus_per_worker" ? 0 : 1;
      int hi = name == "port" ? 65535 : 10000;
      ASSIGN_OR_RETURN(int parsed, ParseIntFlag(name, value, lo, hi));
      if (name == "ps") options.num_ps = parsed;
      if (name == "max_restarts") options.max_restarts = parsed;
      if (name == "workers") options.num_workers = parsed;
      if (name == "gpus_per_worker") {
        options.gpus_per_worker = parsed;
        k8s_only_flag = true;
      }
      if (name == "port") {
        options.port = parsed;
        k8s_only_flag = true;
      }
    } else if (name == "fail_fast" || name == "chief_only_exit" || name == "insecure") {
      bool parsed = true;
      if (has_value) {
        ASSIGN_OR_RETURN(parsed, ParseBoolFlag(name, value));
      }
      (name == "fail_fast"         ? options.fail_fast
       : name == "chief_only_exit" ? options.chief_only_exit
                                   : options.insecure) = parsed;
    } else if (name == "ps_memory_budget_mb") {
      RETURN_IF_ERROR(need_value());
      ASSIGN_OR_RETURN(int parsed, ParseIntFlag(name, value, 0, 1 << 30));
      options.ps_memory_budget_mb = parsed;
    } else if (name == "grace_period_s") {
      RETURN_IF_ERROR(need_value());
      double parsed = 0;
      if (!absl::SimpleAtod(value, &parsed) || !(parsed >= 0 && parsed <= 3600)) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad value '", value, "' for --grace_period_s: want seconds in 0..3600"));
      }
      options.grace_period_s = parsed;
    } else if (name == "k8s" || name == "image" || name == "namespace" || name == "storage" ||
               name == "storage_class") {
      RETURN_IF_ERROR(need_value());
      if (value.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a non-empty value"));
      }
      if (name == "k8s") options.k8s_dir = std::string(value);
      if (name == "image") options.image = std::string(value);
      if (name == "namespace") options.k8s_namespace = std::string(value);
      if (name == "storage") options.storage = std::string(value);
      if (name == "storage_class") options.storage_class = std::string(value);
      if (name != "k8s") k8s_only_flag = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '", arg, "' (see --help)"));
    }
  }
  options.program.assign(args.begin() + std::min(i, args.size()), args.end());
  if (options.help) return options;
  if (options.program.empty() || options.program[0].empty()) {
    return absl::InvalidArgumentError(
        "no program given: launch [flags] -- PROGRAM [ARGS...] (see --help)");
  }
  if (options.k8s_dir.empty() && k8s_only_flag) {
    return absl::InvalidArgumentError(
        "--image, --port, --namespace, --gpus_per_worker, --storage and --storage_class only "
        "apply with --k8s=DIR");
  }
  if (!options.k8s_dir.empty() && options.insecure) {
    return absl::InvalidArgumentError(
        "--insecure is for a debug run on loopback; a Kubernetes cluster uses TLS");
  }
  if (!options.k8s_dir.empty() && options.image.empty()) {
    return absl::InvalidArgumentError("--k8s=DIR needs --image=IMAGE");
  }
  return options;
}

absl::StatusOr<std::vector<int>> PickFreePorts(int count) {
  std::vector<int> sockets;
  std::vector<int> ports;
  absl::Status status = absl::OkStatus();
  for (int i = 0; i < count && status.ok(); ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      status = absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
      break;
    }
    sockets.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      status = absl::InternalError(
          absl::StrCat("cannot pick a free port on 127.0.0.1: ", std::strerror(errno)));
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : sockets) close(fd);
  if (!status.ok()) return status;
  return ports;
}

absl::StatusOr<ClusterSpec> LocalCluster(int num_ps, int num_workers) {
  if (num_ps < 0 || num_workers < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("need ps >= 0 and workers >= 1, not ", num_ps, " and ", num_workers));
  }
  ASSIGN_OR_RETURN(std::vector<int> ports, PickFreePorts(num_ps + num_workers));
  ClusterSpec::JobList jobs;
  auto add = [&](const std::string& job, int first, int count) {
    std::vector<std::string> addresses;
    for (int i = 0; i < count; ++i)
      addresses.push_back(absl::StrCat("127.0.0.1:", ports[first + i]));
    jobs.emplace_back(job, std::move(addresses));
  };
  if (num_ps > 0) add("ps", 0, num_ps);
  add("worker", num_ps, num_workers);
  return ClusterSpec::FromJobs(std::move(jobs));
}

ProgramLocations ProgramLocations::FromEnvironment() {
  ProgramLocations where;
  auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value != nullptr ? value : "");
  };
  where.workspace_dir = env("BUILD_WORKSPACE_DIRECTORY");
  where.working_dir = env("BUILD_WORKING_DIRECTORY");
  where.path = env("PATH");
  std::error_code ec;
  where.cwd = std::filesystem::current_path(ec).string();
  return where;
}

absl::StatusOr<std::string> ResolveProgram(const std::string& program,
                                           const ProgramLocations& where, std::ostream& log) {
  if (program.empty()) return absl::InvalidArgumentError("empty program name");
  if (absl::StartsWith(program, "//")) return ResolveLabel(program, where, log);
  if (absl::StartsWith(program, "/")) {
    if (!Exists(program)) {
      return absl::NotFoundError(absl::StrCat("program '", program, "' does not exist"));
    }
    return CheckExecutable(program, program);
  }
  std::vector<std::string> looked;
  if (!absl::StrContains(program, '/')) {
    for (absl::string_view dir : absl::StrSplit(where.path, ':', absl::SkipEmpty())) {
      std::string candidate = absl::StrCat(dir, "/", program);
      if (IsExecutableFile(candidate)) return CheckExecutable(candidate, program);
    }
    looked.push_back("PATH");
  }
  for (const std::string* dir : {&where.working_dir, &where.workspace_dir, &where.cwd}) {
    if (dir->empty()) continue;
    std::string candidate = absl::StrCat(*dir, "/", program);
    if (Exists(candidate)) return CheckExecutable(candidate, program);
    looked.push_back(*dir);
  }
  return absl::NotFoundError(absl::StrCat("program '", program, "' not found (looked in ",
                                          absl::StrJoin(looked, ", "), ")"));
}

// Each task's share of this machine's cores, as $SLUICE_NUM_THREADS (which
// sizes a process's default CPU pools, runtime/cpu_share.h): the cores
// over the tasks that compute (all but the ps tasks, which get the same
// share), so that two workers on two cores run one thread each instead of
// four threads fighting over two cores (torchrun's OMP_NUM_THREADS=1, for
// the same reason). Nothing when one task computes, or when the launcher was
// given a share itself (a sweep's trial: it passes through).
std::vector<std::string> CpuShareEnv(const ClusterSpec& cluster, std::ostream& out) {
  const char* given = std::getenv(kNumThreadsEnv);
  if (given != nullptr && *given != '\0') return {};
  int computing = 0;
  for (const std::string& job : cluster.jobs()) {
    if (job != "ps") computing += cluster.num_tasks(job);
  }
  if (computing <= 1) return {};
  const int cores = HardwareThreads();
  const int share = std::max(1, cores / computing);
  out << "[launch] " << computing << " computing tasks on " << cores << " cores: " << share
      << " thread(s) each (" << kNumThreadsEnv << ")" << std::endl;
  return {absl::StrCat(kNumThreadsEnv, "=", share)};
}

absl::StatusOr<int> RunLocalTasks(const ClusterSpec& cluster, const std::string& program,
                                  const std::vector<std::string>& args,
                                  const LaunchOptions& options, std::ostream& out) {
  SupervisorOptions supervisor_options;
  supervisor_options.fail_fast = options.fail_fast;
  supervisor_options.chief_only_exit = options.chief_only_exit;
  supervisor_options.grace_period_s = options.grace_period_s;
  supervisor_options.max_restarts = options.max_restarts;
  const char* working_dir = std::getenv("BUILD_WORKING_DIRECTORY");
  if (working_dir != nullptr) supervisor_options.working_dir = working_dir;

  // Mutual TLS unless --insecure: credentials made for this run, in a
  // private directory removed when the run ends.
  std::vector<std::string> security_env = {"SLUICE_INSECURE=1", "SLUICE_TLS_DIR="};
  std::string credentials_root;
  if (options.insecure) {
    out << "[launch] --insecure: tasks talk in plaintext and accept any caller" << std::endl;
  } else {
    std::string pattern = (std::filesystem::temp_directory_path() / "sluice-job-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot create a directory for the job's TLS "
                                              "credentials in ", pattern, ": ", std::strerror(errno)));
    }
    credentials_root = pattern;
    std::vector<std::string> identities = cluster.AllTasks();
    identities.push_back(kClientIdentity);
    const std::string dir = credentials_root + "/tls";
    absl::Status made = WriteJobCredentials(dir, identities);
    if (!made.ok()) {
      std::filesystem::remove_all(credentials_root);
      return made;
    }
    security_env = {"SLUICE_TLS_DIR=" + dir, "SLUICE_INSECURE="};
    out << "[launch] mutual TLS: a new CA and " << identities.size() << " certificates in " << dir
        << std::endl;
  }

  const std::vector<std::string> cpu_env = CpuShareEnv(cluster, out);
  std::vector<TaskLaunch> tasks;
  for (const std::string& job : cluster.jobs()) {
    for (int i = 0; i < cluster.num_tasks(job); ++i) {
      TaskLaunch task;
      task.job = job;
      task.index = i;
      task.chief = job == "worker" && i == 0;
      task.argv.push_back(program);
      task.argv.insert(task.argv.end(), args.begin(), args.end());
      task.env = {absl::StrCat("SLUICE_CONFIG=", TaskConfigToJson({cluster, job, i}))};
      task.env.insert(task.env.end(), security_env.begin(), security_env.end());
      task.env.insert(task.env.end(), cpu_env.begin(), cpu_env.end());
      const bool budget = job == "ps" && options.ps_memory_budget_mb > 0;
      task.env.push_back(absl::StrCat("SLUICE_VARIABLE_MEMORY_BUDGET_MB=",
                                      budget ? absl::StrCat(options.ps_memory_budget_mb) : ""));
      tasks.push_back(std::move(task));
    }
  }
  out << "[launch] cluster " << cluster.ToJson() << std::endl;
  absl::StatusOr<int> code = SuperviseTasks(tasks, supervisor_options, out);
  if (!credentials_root.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(credentials_root, ignored);
  }
  return code;
}

int LaunchMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto fail = [&](const absl::Status& status, int code) {
    err << "launch: error: " << status.message() << std::endl;
    return code;
  };
  absl::StatusOr<LaunchOptions> options = ParseLaunchArgs(args);
  if (!options.ok()) return fail(options.status(), 2);
  if (options->help) {
    out << LaunchUsage();
    return 0;
  }
  std::vector<std::string> program_args(options->program.begin() + 1, options->program.end());
  if (!options->k8s_dir.empty()) {
    if (absl::StartsWith(options->program[0], "//")) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
                      "with --k8s, give the program's path inside the image, not the label ",
                      options->program[0])),
                  2);
    }
    K8sOptions k8s;
    k8s.num_ps = options->num_ps;
    k8s.num_workers = options->num_workers;
    k8s.image = options->image;
    k8s.port = options->port;
    k8s.k8s_namespace = options->k8s_namespace;
    k8s.command = options->program;
    k8s.gpus_per_worker = options->gpus_per_worker;
    k8s.storage = options->storage;
    k8s.storage_class = options->storage_class;
    if (!options->insecure) {
      absl::StatusOr<ClusterSpec> names = K8sCluster(k8s);
      if (!names.ok()) return fail(names.status(), 2);
      std::vector<std::string> identities = names->AllTasks();
      identities.push_back(kClientIdentity);
      absl::StatusOr<std::map<std::string, std::string>> credentials =
          MakeJobCredentials(identities);
      if (!credentials.ok()) return fail(credentials.status(), 1);
      k8s.tls_files = *std::move(credentials);
    }
    absl::StatusOr<std::vector<K8sFile>> files = K8sManifests(k8s);
    if (!files.ok()) return fail(files.status(), 2);
    absl::Status written = WriteK8sFiles(options->k8s_dir, *files);
    if (!written.ok()) return fail(written, 1);
    for (const K8sFile& file : *files) {
      out << "[launch] wrote " << (std::filesystem::path(options->k8s_dir) / file.name).string()
          << "\n";
    }
    out << "[launch] apply with: cd " << options->k8s_dir << " && kubectl apply -f .\n";
    out.flush();
    return 0;
  }
  absl::StatusOr<std::string> program =
      ResolveProgram(options->program[0], ProgramLocations::FromEnvironment(), out);
  if (!program.ok()) return fail(program.status(), 2);
  absl::StatusOr<ClusterSpec> cluster = LocalCluster(options->num_ps, options->num_workers);
  if (!cluster.ok()) return fail(cluster.status(), 1);
  absl::StatusOr<int> code = RunLocalTasks(*cluster, *program, program_args, *options, out);
  if (!code.ok()) return fail(code.status(), 1);
  return *code;
}

}  // namespace sluice
