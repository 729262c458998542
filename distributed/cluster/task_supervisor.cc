#include "distributed/cluster/task_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

extern char** environ;

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxLine = 64 * 1024;

// The write end of the self-pipe the signal handler reports to; -1 when no
// supervisor runs. A plain int written before the handlers are installed and
// after they are removed.
volatile sig_atomic_t g_signal_fd = -1;

void OnSignal(int sig) {
  int saved_errno = errno;
  unsigned char byte = static_cast<unsigned char>(sig);
  if (g_signal_fd >= 0) {
    ssize_t ignored = write(g_signal_fd, &byte, 1);
    (void)ignored;
  }
  errno = saved_errno;
}

// Turns SIGINT, SIGTERM and SIGCHLD into bytes on a non-blocking pipe for the
// poll loop; restores the previous handlers on destruction.
class SignalPipe {
 public:
  SignalPipe() = default;
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;
  ~SignalPipe() {
    if (!installed_) return;
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
    g_signal_fd = -1;
    close(fds_[0]);
    close(fds_[1]);
  }

  absl::Status Install() {
    if (pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
      return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
    }
    g_signal_fd = fds_[1];
    struct sigaction action {};
    action.sa_handler = OnSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &action, &old_[i]);
    installed_ = true;
    return absl::OkStatus();
  }

  int read_fd() const { return fds_[0]; }

  // The signals received since the last call.
  std::vector<int> Take() {
    std::vector<int> signals;
    unsigned char buffer[64];
    ssize_t n;
    while ((n = read(fds_[0], buffer, sizeof(buffer))) > 0)
      signals.insert(signals.end(), buffer, buffer + n);
    return signals;
  }

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGCHLD};
  int fds_[2] = {-1, -1};
  struct sigaction old_[3];
  bool installed_ = false;
};

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

struct RunningTask {
  std::string name;    // "worker:1"
  std::string prefix;  // "[worker:1] "
  bool chief = false;
  TaskLaunch launch;             // to start it again
  int restarts = 0;              // done so far
  bool restart_pending = false;  // starts again at restart_at
  Clock::time_point restart_at;
  pid_t pid = -1;       // also the process group id
  int fd = -1;          // read end of its output pipe; -1 after EOF
  std::string pending;  // output after the last newline
  bool running = false;
};

class Supervisor {
 public:
  Supervisor(const SupervisorOptions& options, std::ostream& out) : options_(options), out_(out) {}
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Never leaves a child behind, even when Run was not reached.
  ~Supervisor() {
    for (RunningTask& task : tasks_) {
      if (task.running) {
        kill(-task.pid, SIGKILL);
        kill(task.pid, SIGKILL);
        while (waitpid(task.pid, nullptr, 0) < 0 && errno == EINTR) {
        }
      }
      if (task.fd >= 0) close(task.fd);
    }
  }

  absl::Status Start(const TaskLaunch& launch);
  int Run(SignalPipe& signals);

 private:
  void Say(absl::string_view text) {
    out_ << "[launch] " << text << "\n";
    out_.flush();
  }
  // Forks and execs the task's program (a first start or a restart).
  absl::Status Spawn(RunningTask& task);
  // Starts the task again after a backoff (1, 2, 4 ... s, at most 30 s).
  void ScheduleRestart(RunningTask& task);
  // Starts the tasks whose restart is due.
  void RestartDue();
  bool AnyRestartPending() const {
    return std::any_of(tasks_.begin(), tasks_.end(),
                       [](const RunningTask& t) { return t.restart_pending; });
  }
  void Pump(RunningTask& task);
  void EmitLines(RunningTask& task, bool flush_partial);
  void Reap();
  void OnExit(RunningTask& task, int status);
  void OnLauncherSignal(int sig);
  void Stop(absl::string_view why);
  void SignalGroups(int sig);
  int NumRunning() const {
    return static_cast<int>(std::count_if(tasks_.begin(), tasks_.end(),
                                          [](const RunningTask& t) { return t.running; }));
  }
  bool AnyGroupAlive() const {
    for (const RunningTask& task : tasks_) {
      if (kill(-task.pid, 0) == 0) return true;
    }
    return false;
  }

  const SupervisorOptions options_;
  std::ostream& out_;
  std::vector<RunningTask> tasks_;
  bool has_chief_ = false;
  bool any_failed_ = false;
  bool stopping_ = false;
  bool killed_ = false;  // SIGKILL sent to every group
  Clock::time_point deadline_;
  int exit_code_ = -1;  // decided by the event that started the stop
};

absl::Status Supervisor::Start(const TaskLaunch& launch) {
  RunningTask task;
  task.name = absl::StrCat(launch.job, ":", launch.index);
  task.prefix = absl::StrCat("[", task.name, "] ");
  task.chief = launch.chief;
  task.launch = launch;
  if (launch.argv.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("task ", task.name, ": no program"));
  }
  if (absl::Status s = Spawn(task); !s.ok()) return s;
  has_chief_ = has_chief_ || task.chief;
  tasks_.push_back(std::move(task));
  return absl::OkStatus();
}

absl::Status Supervisor::Spawn(RunningTask& task) {
  const TaskLaunch& launch = task.launch;

  // Everything the child needs is built before fork.
  std::vector<std::string> env_strings;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    absl::string_view var(*entry);
    bool overridden = false;
    for (const std::string& own : launch.env) {
      absl::string_view name = absl::string_view(own).substr(0, own.find('=') + 1);
      if (absl::StartsWith(var, name)) overridden = true;
    }
    if (!overridden) env_strings.emplace_back(var);
  }
  env_strings.insert(env_strings.end(), launch.env.begin(), launch.env.end());
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = launch.argv;
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::string exec_error = absl::StrCat("launch: cannot run ", launch.argv[0], ": ");
  std::string chdir_error = absl::StrCat("launch: cannot enter ", options_.working_dir, ": ");

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("task ", task.name, ": pipe: ", std::strerror(errno)));
  }
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int fork_errno = errno;
    close(fds[0]);
    close(fds[1]);
    if (devnull >= 0) close(devnull);
    return absl::InternalError(
        absl::StrCat("task ", task.name, ": fork: ", std::strerror(fork_errno)));
  }
  if (pid == 0) {
    // The child: default signal dispositions first, so a signal before exec
    // does not reach the launcher's handler.
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the launcher died before prctl
    if (devnull >= 0) dup2(devnull, 0);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    auto fail = [](const std::string& what) {
      std::string line = absl::StrCat(what, std::strerror(errno), "\n");
      ssize_t ignored = write(2, line.data(), line.size());
      (void)ignored;
      _exit(127);
    };
    if (!options_.working_dir.empty() && chdir(options_.working_dir.c_str()) != 0) {
      fail(chdir_error);
    }
    execve(argv[0], argv.data(), envp.data());
    fail(exec_error);
  }
  close(fds[1]);
  if (devnull >= 0) close(devnull);
  setpgid(pid, pid);  // also done by the child; whichever runs first wins
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  if (task.fd >= 0) close(task.fd);  // a restart: the old pipe's reader
  task.pid = pid;
  task.fd = fds[0];
  task.running = true;
  task.pending.clear();
  Say(absl::StrCat("started ", task.name, " (pid ", pid, ")"));
  return absl::OkStatus();
}

void Supervisor::EmitLines(RunningTask& task, bool flush_partial) {
  size_t start = 0;
  while (true) {
    size_t newline = task.pending.find('\n', start);
    if (newline == std::string::npos) break;
    out_ << task.prefix;
    out_.write(task.pending.data() + start, newline - start + 1);
    start = newline + 1;
  }
  task.pending.erase(0, start);
  if (task.pending.size() >= kMaxLine || (flush_partial && !task.pending.empty())) {
    out_ << task.prefix << task.pending << "\n";
    task.pending.clear();
  }
  out_.flush();
}

void Supervisor::Pump(RunningTask& task) {
  char buffer[16384];
  while (task.fd >= 0) {
    ssize_t n = read(task.fd, buffer, sizeof(buffer));
    if (n > 0) {
      task.pending.append(buffer, n);
      EmitLines(task, false);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    close(task.fd);  // EOF or error
    task.fd = -1;
  }
  EmitLines(task, true);
}

void Supervisor::Reap() {
  for (RunningTask& task : tasks_) {
    if (!task.running) continue;
    int status = 0;
    pid_t done = waitpid(task.pid, &status, WNOHANG);
    if (done == task.pid) {
      task.running = false;
      OnExit(task, status);
    }
  }
}

void Supervisor::OnExit(RunningTask& task, int status) {
  Pump(task);
  EmitLines(task, true);
  // A task that ends on the SIGTERM the launcher sent it while stopping the
  // job did what it was asked: it is stopped, not killed.
  const bool stopped = stopping_ && !killed_ && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM;
  Say(absl::StrCat(task.name, " ", stopped ? "stopped" : DescribeWaitStatus(status)));
  int code = ExitCode(status);
  if (stopping_) return;
  if (task.chief) {
    // Killed by a signal this process did not send (a crash, the OOM
    // killer, kill -9): started again like any task, it resumes from its
    // newest checkpoint. An exit status is the chief's answer: the job ends.
    if (WIFSIGNALED(status) && !options_.fail_fast && task.restarts < options_.max_restarts) {
      ScheduleRestart(task);
      return;
    }
    exit_code_ = code;
    Stop(absl::StrCat("the chief ", task.name, " is done"));
    return;
  }
  bool failed = code != 0 || options_.chief_only_exit;
  if (!failed) return;
  if (!options_.fail_fast && !options_.chief_only_exit && task.restarts < options_.max_restarts) {
    ScheduleRestart(task);
    return;
  }
  any_failed_ = true;
  if (options_.fail_fast) {
    exit_code_ = code != 0 ? code : 1;
    Stop(absl::StrCat(task.name, " failed (--fail_fast)"));
  } else if (has_chief_) {
    Say(absl::StrCat(task.name, " failed; the other tasks go on"));
  }
}

void Supervisor::ScheduleRestart(RunningTask& task) {
  ++task.restarts;
  const int delay_s = std::min(30, 1 << std::min(task.restarts - 1, 5));
  task.restart_pending = true;
  task.restart_at = Clock::now() + std::chrono::seconds(delay_s);
  Say(absl::StrCat(task.name, " failed; restarting in ", delay_s, "s (", task.restarts, " of ",
                   options_.max_restarts, ")"));
}

void Supervisor::RestartDue() {
  if (stopping_) return;
  const Clock::time_point now = Clock::now();
  for (RunningTask& task : tasks_) {
    if (!task.restart_pending || now < task.restart_at) continue;
    task.restart_pending = false;
    absl::Status s = Spawn(task);
    if (!s.ok()) {
      any_failed_ = true;
      Say(absl::StrCat(task.name, " could not be restarted: ", s.message()));
    }
  }
}

void Supervisor::SignalGroups(int sig) {
  for (RunningTask& task : tasks_) {
    if (kill(-task.pid, sig) != 0 && task.running) kill(task.pid, sig);
  }
}

void Supervisor::Stop(absl::string_view why) {
  stopping_ = true;
  auto grace = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.grace_period_s));
  deadline_ = Clock::now() + grace;
  int running = NumRunning();
  if (running > 0) {
    Say(absl::StrFormat("%s; stopping %d task(s) (SIGTERM, SIGKILL after %gs)", why, running,
                        options_.grace_period_s));
  } else {
    Say(why);
  }
  SignalGroups(SIGTERM);
}

void Supervisor::OnLauncherSignal(int sig) {
  const char* name = sig == SIGINT ? "SIGINT" : "SIGTERM";
  if (!stopping_) {
    exit_code_ = 128 + sig;
    Stop(absl::StrCat(name, " received"));
  } else if (!killed_) {
    Say(absl::StrCat(name, " received again; sending SIGKILL"));
    SignalGroups(SIGKILL);
    killed_ = true;
  }
}

int Supervisor::Run(SignalPipe& signals) {
  while (true) {
    std::vector<pollfd> fds = {{signals.read_fd(), POLLIN, 0}};
    std::vector<RunningTask*> polled;
    for (RunningTask& task : tasks_) {
      if (task.fd < 0) continue;
      fds.push_back({task.fd, POLLIN, 0});
      polled.push_back(&task);
    }
    int timeout_ms = 200;
    if (stopping_ && !killed_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, timeout_ms));
    }
    int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      Say(absl::StrCat("poll failed: ", std::strerror(errno), "; stopping"));
      if (!stopping_) {
        exit_code_ = 1;
        Stop("internal error");
      }
    }
    for (int sig : signals.Take()) {
      if (sig == SIGINT || sig == SIGTERM) OnLauncherSignal(sig);
    }
    for (size_t i = 1; i < fds.size() && ready > 0; ++i) {
      if (fds[i].revents != 0) Pump(*polled[i - 1]);
    }
    Reap();
    RestartDue();
    if (stopping_ && !killed_ && Clock::now() >= deadline_) {
      for (const RunningTask& task : tasks_) {
        if (task.running) {
          Say(absl::StrFormat("%s did not stop within %gs; sending SIGKILL", task.name,
                              options_.grace_period_s));
        }
      }
      SignalGroups(SIGKILL);
      killed_ = true;
    }
    if (NumRunning() == 0 && (stopping_ || !AnyRestartPending())) {
      // Wait (within the grace period) for grandchildren left in the groups.
      if (!stopping_ || killed_ || !AnyGroupAlive()) break;
    }
  }
  SignalGroups(SIGKILL);  // the last sweep: nothing of ours outlives the run
  for (RunningTask& task : tasks_) {
    if (task.fd >= 0) {
      Pump(task);  // what is already in the pipe; a grandchild may hold it open
      if (task.fd >= 0) close(task.fd);
      task.fd = -1;
    }
    EmitLines(task, true);
  }
  if (exit_code_ >= 0) return exit_code_;
  return any_failed_ ? 1 : 0;  // no chief: every task exited on its own
}

}  // namespace

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("killed by signal ", WTERMSIG(status));
  return absl::StrCat("ended with wait status ", status);
}

absl::StatusOr<int> SuperviseTasks(const std::vector<TaskLaunch>& tasks,
                                   const SupervisorOptions& options, std::ostream& out) {
  SignalPipe signals;
  absl::Status installed = signals.Install();
  if (!installed.ok()) return installed;
  Supervisor supervisor(options, out);  // destroyed before `signals`
  for (const TaskLaunch& task : tasks) {
    absl::Status started = supervisor.Start(task);
    if (!started.ok()) return started;  // ~Supervisor kills what started
  }
  return supervisor.Run(signals);
}

}  // namespace sluice
