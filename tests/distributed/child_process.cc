#include "tests/distributed/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace sluice {
namespace {

int CountOccurrences(const std::string& text, absl::string_view needle) {
  const std::string n_str(needle);
  int n = 0;
  for (size_t at = text.find(n_str); at != std::string::npos; at = text.find(n_str, at + 1)) ++n;
  return n;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(std::vector<std::string> argv,
                                                                  std::vector<std::string> env,
                                                                  std::string log_path) {
  if (argv.empty()) return absl::InvalidArgumentError("ChildProcess::Start: empty argv");
  // Everything the child touches is prepared before fork: after it, only
  // async-signal-safe calls (the test process has threads).
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    absl::string_view entry(*e);
    bool replaced = false;
    for (const std::string& extra : env) {
      size_t eq = extra.find('=');
      if (eq != std::string::npos && absl::StartsWith(entry, extra.substr(0, eq + 1))) replaced = true;
    }
    if (!replaced) environment.emplace_back(entry);
  }
  for (const std::string& extra : env) environment.push_back(extra);
  std::vector<char*> c_argv, c_env;
  for (std::string& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  for (std::string& e : environment) c_env.push_back(e.data());
  c_env.push_back(nullptr);

  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return absl::InternalError(absl::StrCat("opening '", log_path, "': ", std::strerror(errno)));
  }
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(log_fd);
    if (null_fd >= 0) close(null_fd);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(err)));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);  // the test died before prctl
    if (null_fd >= 0) dup2(null_fd, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(c_argv[0], c_argv.data(), c_env.data());
    const char msg[] = "ChildProcess: execve failed\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so Signal works before the child runs
  close(log_fd);
  if (null_fd >= 0) close(null_fd);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, std::move(log_path)));
}

ChildProcess::~ChildProcess() {
  if (!status_.has_value()) Kill();
}

std::string ChildProcess::Output() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool ChildProcess::TryReap() {
  if (status_.has_value()) return true;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    status_ = status;
    // Whatever the task left in its group goes with it.
    kill(-pid_, SIGKILL);
    return true;
  }
  if (r < 0) {
    status_ = -1;  // not our child any more; nothing to reap
    return true;
  }
  return false;
}

bool ChildProcess::Running() { return !TryReap(); }

bool ChildProcess::WaitForOutput(absl::string_view needle, absl::Duration timeout) {
  return WaitForOutputCount(needle, 1, timeout);
}

bool ChildProcess::WaitForOutputCount(absl::string_view needle, int count,
                                      absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const bool exited = TryReap();  // before reading: the output of an exited process is complete
    if (CountOccurrences(Output(), needle) >= count) return true;
    if (exited || absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

void ChildProcess::Signal(int sig) {
  if (!status_.has_value()) kill(-pid_, sig);
}

bool ChildProcess::WaitUntilStopped(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  const std::string tasks = absl::StrCat("/proc/", pid_, "/task");
  while (true) {
    bool all_stopped = true;
    int threads = 0;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(tasks, error)) {
      std::ifstream stat(entry.path() / "stat");
      std::string line;
      std::getline(stat, line);
      // "tid (comm) S ...": the state follows the last ')'.
      const size_t close = line.rfind(')');
      if (close == std::string::npos || close + 2 >= line.size()) continue;
      ++threads;
      const char state = line[close + 2];
      if (state != 'T' && state != 't') all_stopped = false;
    }
    if (threads > 0 && all_stopped) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
}

std::optional<int> ChildProcess::WaitForExit(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!TryReap()) {
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return status_;
}

int ChildProcess::Kill() {
  if (status_.has_value()) return *status_;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  status_ = r == pid_ ? status : -1;
  return *status_;
}

std::string RunfilePath(absl::string_view path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/", workspace ? workspace : "", "/", path);
}

std::string TestTmpPath(absl::string_view name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/", name);
}

std::string DescribeStatus(int wait_status) {
  if (wait_status == -1) return "not a child";
  if (WIFEXITED(wait_status)) return absl::StrCat("exited with status ", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return absl::StrCat("killed by signal ", WTERMSIG(wait_status));
  return absl::StrCat("wait status ", wait_status);
}

}  // namespace sluice
