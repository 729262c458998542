// A stand-in task for launcher_test: reports its place and pid, then does
// what its arguments say for its task.
//
//   launch_test_task "ps=sleep" "worker:1=exit:3" "*=sleepms:300,exit:0"
//
// Each argument is SELECTOR=ACTIONS; the first whose selector matches this
// task ("job:index", "job" or "*") runs; none matching: exit 0. ACTIONS is a
// comma list of: exit:N, sleep (forever), sleepms:M, ignoreterm (SIGTERM
// ignored from here on), spawn (a grandchild that sleeps forever; prints
// "grandchild=PID"), lines:N (N long lines, each written in pieces),
// signal:N (raise N), touch:PATH (creates the file), unless:PATH (the
// rest of the actions only when PATH does not exist: a task that fails on
// its first run and not after a restart), waitfor:PATH (until PATH exists,
// at most 60 s, else exit 96: a task that goes on only once another has
// reported).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "distributed/cluster/cluster_spec.h"

namespace {

void Write(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(1, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += n;
  }
}

int Number(absl::string_view text) {
  int value = 0;
  if (!absl::SimpleAtoi(text, &value)) std::exit(99);
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<sluice::TaskConfig> config = sluice::TaskConfigFromEnv();
  if (!config.ok()) {
    std::fprintf(stderr, "bad config: %s\n", std::string(config.status().message()).c_str());
    return 98;
  }
  std::string me = absl::StrCat(config->job, ":", config->task);
  char byte;
  bool stdin_eof = read(0, &byte, 1) == 0;
  Write(absl::StrCat("config job=", config->job, " task=", config->task,
                     " address=", *config->cluster.Address(config->job, config->task),
                     " cluster=", config->cluster.ToJson(), "\n"));
  Write(absl::StrCat("pid=", getpid(), " stdin_eof=", stdin_eof ? 1 : 0, "\n"));
  const char* insecure = std::getenv("SLUICE_INSECURE");
  const char* tls_dir = std::getenv("SLUICE_TLS_DIR");
  // The launcher clears a variable by setting it empty.
  const auto unset = [](const char* v) { return v == nullptr || *v == '\0'; };
  Write(absl::StrCat("insecure=", unset(insecure) ? "unset" : insecure,
                     " tls_dir=", unset(tls_dir) ? "unset" : "set", "\n"));
  const char* threads = std::getenv("SLUICE_NUM_THREADS");
  Write(absl::StrCat("threads=", threads == nullptr ? "unset" : threads, "\n"));
  const char* budget = std::getenv("SLUICE_VARIABLE_MEMORY_BUDGET_MB");
  Write(absl::StrCat("budget=", unset(budget) ? "unset" : budget, "\n"));
  std::fprintf(stderr, "stderr line from %s\n", me.c_str());
  std::fflush(stderr);

  std::string actions;
  for (int i = 1; i < argc; ++i) {
    std::pair<std::string, std::string> rule = absl::StrSplit(argv[i], absl::MaxSplits('=', 1));
    if (rule.first == me || rule.first == config->job || rule.first == "*") {
      actions = rule.second;
      break;
    }
  }
  for (absl::string_view action : absl::StrSplit(actions, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(action, absl::MaxSplits(':', 1));
    if (parts.first == "exit") return Number(parts.second);
    if (parts.first == "unless" && access(std::string(parts.second).c_str(), F_OK) == 0) break;
    if (parts.first == "touch") {
      const int fd = open(std::string(parts.second).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
      if (fd < 0) return 97;
      close(fd);
    }
    if (parts.first == "sleep") {
      while (true) pause();
    }
    if (parts.first == "sleepms") usleep(Number(parts.second) * 1000);
    if (parts.first == "waitfor") {
      int polls = 0;
      while (access(std::string(parts.second).c_str(), F_OK) != 0) {
        if (++polls > 6000) return 96;
        usleep(10 * 1000);
      }
    }
    if (parts.first == "ignoreterm") signal(SIGTERM, SIG_IGN);
    if (parts.first == "signal") raise(Number(parts.second));
    if (parts.first == "spawn") {
      pid_t child = fork();
      if (child == 0) {
        while (true) pause();
      }
      Write(absl::StrCat("grandchild=", child, "\n"));
    }
    if (parts.first == "lines") {
      std::string body(2000, 'x');
      for (int k = 0; k < Number(parts.second); ++k) {
        std::string line = absl::StrCat(me, "-", k, "-", body, "\n");
        Write(line.substr(0, 700));
        usleep(50);
        Write(line.substr(700, 700));
        Write(line.substr(1400));
      }
    }
  }
  return 0;
}
