#include "distributed/cluster/launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "distributed/cluster/k8s_manifests.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Clock = std::chrono::steady_clock;

std::string TmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/launcher_test");
  std::filesystem::create_directories(path);
  return path;
}

std::string TaskBinary() {
  return std::filesystem::absolute("distributed/cluster/launch_test_task").string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteExecutable(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

struct LaunchResult {
  int code = -1;
  std::string out;
  std::string err;
  double seconds = 0;
};

// Runs LaunchMain in this process with the test task as PROGRAM.
LaunchResult Launch(std::vector<std::string> flags, const std::vector<std::string>& task_args) {
  flags.push_back("--");
  flags.push_back(TaskBinary());
  flags.insert(flags.end(), task_args.begin(), task_args.end());
  std::ostringstream out;
  std::ostringstream err;
  auto start = Clock::now();
  LaunchResult result;
  result.code = LaunchMain(flags, out, err);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.out = out.str();
  result.err = err.str();
  return result;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// The pids in "pid=N" and "grandchild=N" lines.
std::vector<pid_t> Pids(const std::string& out) {
  std::vector<pid_t> pids;
  for (const std::string& line : Lines(out)) {
    for (std::string key : {"] pid=", "] grandchild="}) {
      size_t at = line.find(key);
      if (at == std::string::npos) continue;
      std::string rest = line.substr(at + key.size());
      int pid = 0;
      if (absl::SimpleAtoi(rest.substr(0, rest.find(' ')), &pid)) pids.push_back(pid);
    }
  }
  return pids;
}

// Alive and not a zombie (a zombie reparented to init may linger unreaped).
bool IsAlive(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

bool AllDeadWithin(const std::vector<pid_t>& pids, double seconds) {
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    bool any = false;
    for (pid_t pid : pids) any = any || IsAlive(pid);
    if (!any) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

class LauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("SLUICE_CONFIG");
    unsetenv("BUILD_WORKSPACE_DIRECTORY");
    unsetenv("BUILD_WORKING_DIRECTORY");
  }
};

TEST_F(LauncherTest, ParseArgs) {
  auto options = ParseLaunchArgs({"--ps=1", "--workers=3", "--fail_fast", "--grace_period_s=0.5",
                                  "--", "prog", "--steps=3", "--"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->num_ps, 1);
  EXPECT_EQ(options->num_workers, 3);
  EXPECT_TRUE(options->fail_fast);
  EXPECT_FALSE(options->chief_only_exit);
  EXPECT_DOUBLE_EQ(options->grace_period_s, 0.5);
  EXPECT_EQ(options->program, (std::vector<std::string>{"prog", "--steps=3", "--"}));
  // The first non-flag starts the program too.
  auto bare = ParseLaunchArgs({"--chief_only_exit=true", "prog", "--ps=9"});
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_TRUE(bare->chief_only_exit);
  EXPECT_EQ(bare->num_ps, 0);
  EXPECT_EQ(bare->program, (std::vector<std::string>{"prog", "--ps=9"}));
  auto k8s = ParseLaunchArgs({"--k8s=/d", "--image=i", "--port=80", "--namespace=ml", "p"});
  ASSERT_TRUE(k8s.ok()) << k8s.status();
  EXPECT_EQ(k8s->k8s_dir, "/d");
  EXPECT_EQ(k8s->port, 80);
  EXPECT_TRUE(ParseLaunchArgs({"--help"})->help);
}

TEST_F(LauncherTest, BadInputIsOneErrorLineAndExit2) {
  std::string not_executable = TmpDir() + "/not_executable";
  std::ofstream(not_executable) << "data";
  std::filesystem::permissions(
      not_executable, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{}, "no program given"},
      {{"--workers=2", "--"}, "no program given"},
      {{"--workers=0", "--", "/bin/true"}, "--workers must be in 1..10000, not 0"},
      {{"--ps=-1", "--", "/bin/true"}, "--ps must be in 0..10000, not -1"},
      {{"--workers=two", "/bin/true"}, "bad value 'two' for --workers"},
      {{"--workers", "/bin/true"}, "--workers needs a value"},
      {{"--bogus=1", "/bin/true"}, "unknown flag '--bogus=1'"},
      {{"--fail_fast=maybe", "/bin/true"}, "bad value 'maybe' for --fail_fast"},
      {{"--grace_period_s=-1", "/bin/true"}, "--grace_period_s"},
      {{"--image=x", "/bin/true"}, "only apply with --k8s"},
      {{"--k8s=/tmp/x", "/bin/true"}, "--k8s=DIR needs --image"},
      {{"--k8s=/tmp/x", "--image=i", "//a:b"}, "path inside the image"},
      {{"--k8s=/tmp/x", "--image=i", "--namespace=Bad_NS", "/a"}, "namespace 'Bad_NS'"},
      {{"--", "/no/such/program"}, "program '/no/such/program' does not exist"},
      {{"--", "no_such_program_xyz"}, "program 'no_such_program_xyz' not found"},
      {{"--", not_executable}, "is not an executable file"},
      {{"--", "//no/such:label"}, "does not exist; run `bazel build //no/such:label`"},
  };
  for (const Case& c : cases) {
    std::ostringstream out;
    std::ostringstream err;
    EXPECT_EQ(LaunchMain(c.args, out, err), 2) << absl::StrJoin(c.args, " ");
    std::vector<std::string> lines = Lines(err.str());
    ASSERT_EQ(lines.size(), 1u) << err.str();
    EXPECT_THAT(lines[0], ::testing::StartsWith("launch: error: "));
    EXPECT_THAT(lines[0], HasSubstr(c.message));
  }
  std::filesystem::remove(not_executable);
}

TEST_F(LauncherTest, FreePortsAreDistinctAndBindable) {
  auto ports = PickFreePorts(8);
  ASSERT_TRUE(ports.ok()) << ports.status();
  ASSERT_EQ(ports->size(), 8u);
  EXPECT_EQ(std::set<int>(ports->begin(), ports->end()).size(), 8u);
  for (int port : *ports) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << port;
    close(fd);
  }
  auto cluster = LocalCluster(0, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->jobs(), std::vector<std::string>{"worker"});
  EXPECT_THAT(*cluster->Address("worker", 1), ::testing::StartsWith("127.0.0.1:"));
}

TEST_F(LauncherTest, EveryTaskGetsItsConfigAndChiefExitStopsTheRest) {
  LaunchResult r = Launch({"--ps=2", "--workers=2"}, {"worker:0=sleepms:500,exit:0", "*=sleep"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  std::set<std::string> clusters;
  std::set<std::string> addresses;
  for (const auto& [job, index] : std::vector<std::pair<std::string, int>>{
           {"ps", 0}, {"ps", 1}, {"worker", 0}, {"worker", 1}}) {
    std::string prefix = absl::StrCat("[", job, ":", index, "] ");
    bool found = false;
    for (const std::string& line : Lines(r.out)) {
      std::string head = absl::StrCat(prefix, "config job=", job, " task=", index, " address=");
      if (!absl::StartsWith(line, head)) continue;
      found = true;
      std::string rest = line.substr(head.size());
      size_t space = rest.find(' ');
      addresses.insert(rest.substr(0, space));
      clusters.insert(rest.substr(space + 1));
    }
    EXPECT_TRUE(found) << prefix << " has no config line in:\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat(prefix, "stderr line from ", job, ":", index)));
  }
  EXPECT_EQ(addresses.size(), 4u);
  ASSERT_EQ(clusters.size(), 1u) << "every task sees the same cluster";
  auto cluster = ClusterSpec::FromJson(clusters.begin()->substr(std::string("cluster=").size()));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->jobs(), (std::vector<std::string>{"ps", "worker"}));
  EXPECT_THAT(r.out, HasSubstr("stdin_eof=1"));
  EXPECT_THAT(r.out, Not(HasSubstr("stdin_eof=0")));
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:0 exited with status 0\n"));
  for (const char* task : {"ps:0", "ps:1", "worker:1"}) {
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("[launch] ", task, " stopped\n")));
  }
  EXPECT_LT(r.seconds, 4.0);
  EXPECT_TRUE(AllDeadWithin(Pids(r.out), 1.0));
}

// --ps_memory_budget_mb reaches the ps tasks only (their servers refuse
// graphs whose variables exceed it: distributed/variable_budget.h).
TEST_F(LauncherTest, PsMemoryBudgetGoesToThePsTasks) {
  LaunchResult r = Launch({"--ps=2", "--workers=1", "--ps_memory_budget_mb=64"},
                          {"worker:0=sleepms:500,exit:0", "*=sleep"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[ps:0] budget=64\n"));
  EXPECT_THAT(r.out, HasSubstr("[ps:1] budget=64\n"));
  EXPECT_THAT(r.out, HasSubstr("[worker:0] budget=unset\n"));
  EXPECT_FALSE(ParseLaunchArgs({"--ps_memory_budget_mb=-1", "prog"}).ok());
  EXPECT_FALSE(ParseLaunchArgs({"--ps_memory_budget_mb", "prog"}).ok());
}

// Several computing tasks on one machine share its cores; a share given to
// the launcher (a sweep's) passes through unchanged.
TEST_F(LauncherTest, EachComputingTaskGetsItsShareOfTheCores) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string share = absl::StrCat(std::max(1, cores / 3));
  LaunchResult r = Launch({"--ps=1", "--workers=3"}, {"worker:0=sleepms:500,exit:0", "*=sleep"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("[launch] 3 computing tasks on ", cores, " cores: ",
                                            share, " thread(s) each")));
  for (const char* task : {"[ps:0] threads=", "[worker:0] threads=", "[worker:2] threads="}) {
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat(task, share, "\n"))) << r.out;
  }
  setenv("SLUICE_NUM_THREADS", "7", 1);
  r = Launch({"--ps=1", "--workers=2"}, {"worker:0=sleepms:500,exit:0", "*=sleep"});
  unsetenv("SLUICE_NUM_THREADS");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("computing tasks on")));
  EXPECT_THAT(r.out, HasSubstr("[worker:1] threads=7\n"));
  // One computing task keeps the whole machine.
  r = Launch({"--ps=1", "--workers=1"}, {"worker:0=sleepms:500,exit:0", "*=sleep"});
  EXPECT_THAT(r.out, HasSubstr("[worker:0] threads=unset\n"));
}

TEST_F(LauncherTest, ChiefStatusIsTheExitCodeAndStubbornTasksGetSigkill) {
  LaunchResult r = Launch({"--ps=1", "--workers=1", "--grace_period_s=0.5"},
                          {"worker=sleepms:300,exit:7", "ps=ignoreterm,sleep"});
  EXPECT_EQ(r.code, 7) << r.out;
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:0 exited with status 7\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] ps:0 did not stop within 0.5s; sending SIGKILL\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] ps:0 killed by signal 9\n"));
  EXPECT_GT(r.seconds, 0.7);
  EXPECT_LT(r.seconds, 3.0);

  LaunchResult killed = Launch({"--workers=1", "--max_restarts=0"}, {"worker=signal:9"});
  EXPECT_EQ(killed.code, 128 + 9);
  EXPECT_THAT(killed.out, HasSubstr("[launch] worker:0 killed by signal 9\n"));
}

// A chief killed by a signal is started again, as a StatefulSet would (the
// example programs resume from their newest checkpoint); the job ends with
// its next exit. A chief that exits with a status has answered: no restart.
TEST_F(LauncherTest, AKilledChiefIsRestartedAndTheJobFinishes) {
  const std::string marker = TmpDir() + "/chief-killed-once";
  std::remove(marker.c_str());
  LaunchResult r = Launch({"--ps=1", "--workers=2"},
                          {absl::StrCat("worker:0=unless:", marker, ",touch:", marker, ",signal:9"),
                           "*=sleep"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:0 killed by signal 9\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:0 failed; restarting in 1s (1 of 3)\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:0 exited with status 0\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] ps:0 stopped\n"));
  int starts = 0;
  for (const std::string& line : Lines(r.out)) {
    starts += absl::StartsWith(line, "[launch] started worker:0");
  }
  EXPECT_EQ(starts, 2) << r.out;
  // The other tasks ran on undisturbed: started once each.
  int ps_starts = 0;
  for (const std::string& line : Lines(r.out)) ps_starts += absl::StartsWith(line, "[launch] started ps:0");
  EXPECT_EQ(ps_starts, 1) << r.out;

  // Past its budget the chief's last death is the job's exit status.
  LaunchResult again = Launch({"--workers=1", "--max_restarts=1"}, {"worker=signal:9"});
  EXPECT_EQ(again.code, 128 + 9) << again.out;
  EXPECT_THAT(again.out, HasSubstr("[launch] worker:0 failed; restarting in 1s (1 of 1)\n"));
}

// The launcher's side of --insecure: its tasks all run on loopback, so it
// may; each task is told (SLUICE_INSECURE=1, no credentials) and the run
// says so. A Kubernetes cluster, whose tasks are on other hosts, may not.
TEST_F(LauncherTest, InsecureIsForLoopbackRunsOnly) {
  // The chief ends the job: it waits until the ps has reported (a slow
  // start, under a sanitizer, would otherwise be stopped before it printed).
  const std::string reported = TmpDir() + "/ps-reported";
  std::remove(reported.c_str());
  LaunchResult plain = Launch({"--ps=1", "--workers=1", "--insecure"},
                              {absl::StrCat("ps=touch:", reported, ",sleep"),
                               absl::StrCat("worker=waitfor:", reported, ",exit:0")});
  EXPECT_EQ(plain.code, 0) << plain.out;
  EXPECT_THAT(plain.out, HasSubstr("[launch] --insecure: tasks talk in plaintext"));
  EXPECT_THAT(plain.out, HasSubstr("[ps:0] insecure=1 tls_dir=unset\n"));
  EXPECT_THAT(plain.out, HasSubstr("[worker:0] insecure=1 tls_dir=unset\n"));
  LaunchResult tls = Launch({"--workers=1"}, {"*=exit:0"});
  EXPECT_EQ(tls.code, 0) << tls.out;
  EXPECT_THAT(tls.out, HasSubstr("[worker:0] insecure=unset tls_dir=set\n"));

  std::ostringstream out, err;
  EXPECT_EQ(LaunchMain({"--insecure", "--k8s=" + TmpDir() + "/k8s-insecure", "--image=i", "--",
                        "/app/x"},
                       out, err),
            2);
  EXPECT_THAT(err.str(), HasSubstr("--insecure is for a debug run on loopback"));
  EXPECT_FALSE(std::filesystem::exists(TmpDir() + "/k8s-insecure"));
}

TEST_F(LauncherTest, NonChiefFailureIsReportedAndTheRestGoOn) {
  LaunchResult r = Launch({"--workers=3", "--max_restarts=0"},
                          {"worker:1=exit:3", "worker:0=sleepms:600,exit:0", "*=sleep"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:1 exited with status 3\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:1 failed; the other tasks go on\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:0 exited with status 0\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:2 stopped\n"));
}

// A failed task is started again at its address within a budget, with
// backoff (1 s, 2 s); past the budget it stays down and the rest go on.
TEST_F(LauncherTest, FailedTasksAreRestartedWithinABudget) {
  LaunchResult r = Launch({"--ps=1", "--workers=1", "--max_restarts=2"},
                          {"ps=sleepms:100,exit:3", "worker:0=sleepms:4500,exit:0"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("[launch] ps:0 failed; restarting in 1s (1 of 2)\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] ps:0 failed; restarting in 2s (2 of 2)\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] ps:0 failed; the other tasks go on\n"));
  int starts = 0;
  for (const std::string& line : Lines(r.out)) starts += absl::StartsWith(line, "[launch] started ps:0");
  EXPECT_EQ(starts, 3) << r.out;
  // The same SLUICE_CONFIG (so the same address) each time.
  std::vector<std::string> configs;
  for (const std::string& line : Lines(r.out)) {
    if (absl::StartsWith(line, "[ps:0] config ")) configs.push_back(line.substr(0, line.find(" pid=")));
  }
  ASSERT_EQ(configs.size(), 3u) << r.out;
  for (const std::string& c : configs) EXPECT_EQ(c, configs.front());
}

TEST_F(LauncherTest, FailFastStopsEverything) {
  LaunchResult r = Launch({"--workers=2", "--ps=1", "--fail_fast"}, {"worker:1=exit:3", "*=sleep"});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:1 failed (--fail_fast); stopping 2 task(s)"));
  EXPECT_THAT(r.out, HasSubstr("[launch] worker:0 stopped\n"));
  EXPECT_THAT(r.out, HasSubstr("[launch] ps:0 stopped\n"));
  EXPECT_LT(r.seconds, 3.0);

  // Under --chief_only_exit a clean non-chief exit is a failure too.
  LaunchResult early =
      Launch({"--workers=2", "--fail_fast", "--chief_only_exit"}, {"worker:1=exit:0", "*=sleep"});
  EXPECT_EQ(early.code, 1) << early.out;
  EXPECT_THAT(early.out, HasSubstr("[launch] worker:0 stopped\n"));
}

TEST_F(LauncherTest, LinesNeverInterleave) {
  LaunchResult r =
      Launch({"--workers=3"}, {"worker:0=lines:200,sleepms:800,exit:0", "*=lines:200,sleep"});
  EXPECT_EQ(r.code, 0);
  std::map<std::string, int> long_lines;
  for (const std::string& line : Lines(r.out)) {
    if (absl::StartsWith(line, "[launch] ")) continue;
    ASSERT_TRUE(absl::StartsWith(line, "[worker:")) << line.substr(0, 80);
    std::string task = line.substr(1, line.find(']') - 1);
    std::string body = line.substr(task.size() + 3);
    if (!absl::StartsWith(body, task + "-")) {
      EXPECT_TRUE(absl::StartsWith(body, "config ") || absl::StartsWith(body, "pid=") ||
                  absl::StartsWith(body, "insecure=") || absl::StartsWith(body, "threads=") ||
                  absl::StartsWith(body, "budget=") ||
                  absl::StartsWith(body, "stderr line"))
          << line.substr(0, 80);
      continue;
    }
    std::vector<std::string> parts = absl::StrSplit(body, '-');
    ASSERT_EQ(parts.size(), 3u) << line.substr(0, 80);
    EXPECT_EQ(parts[2], std::string(2000, 'x')) << line.substr(0, 80);
    ++long_lines[task];
  }
  EXPECT_EQ(long_lines["worker:0"], 200);
  EXPECT_EQ(long_lines["worker:1"], 200);
  EXPECT_EQ(long_lines["worker:2"], 200);
}

// Runs LaunchMain in a forked child writing to a file; returns its pid.
pid_t LaunchInChild(const std::vector<std::string>& args, const std::string& out_path) {
  pid_t pid = fork();
  if (pid == 0) {
    std::ofstream out(out_path);
    std::ostringstream err;
    int code = LaunchMain(args, out, err);
    out.flush();
    _exit(code);
  }
  return pid;
}

// Waits until `out_path` holds `count` pids; empty on timeout.
std::vector<pid_t> WaitForPids(const std::string& out_path, size_t count) {
  auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    std::vector<pid_t> pids = Pids(ReadFile(out_path));
    if (pids.size() >= count) return pids;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {};
}

// waitpid with a deadline; SIGKILLs the child on timeout and returns -1.
int WaitExit(pid_t pid, double seconds) {
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (Clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

TEST_F(LauncherTest, SignalToLauncherStopsEveryTaskAndGrandchild) {
  for (int sig : {SIGTERM, SIGINT}) {
    std::string out_path = absl::StrCat(TmpDir(), "/signal_", sig, ".txt");
    pid_t launcher = LaunchInChild(
        {"--ps=1", "--workers=2", "--", TaskBinary(), "ps=spawn,sleep", "*=sleep"}, out_path);
    ASSERT_GT(launcher, 0);
    std::vector<pid_t> pids = WaitForPids(out_path, 4);  // 3 tasks + the grandchild
    if (pids.size() < 4) {
      kill(launcher, SIGKILL);
      waitpid(launcher, nullptr, 0);
      FAIL() << "tasks did not start:\n" << ReadFile(out_path);
    }
    for (pid_t pid : pids) EXPECT_TRUE(IsAlive(pid)) << pid;
    kill(launcher, sig);
    int status = WaitExit(launcher, 5.0);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    EXPECT_TRUE(AllDeadWithin(pids, 2.0)) << ReadFile(out_path);
    std::string out = ReadFile(out_path);
    EXPECT_THAT(out, HasSubstr(sig == SIGTERM ? "[launch] SIGTERM received; stopping 3 task(s)"
                                              : "[launch] SIGINT received; stopping 3 task(s)"));
    EXPECT_THAT(out, HasSubstr("[launch] worker:0 stopped"));
    std::filesystem::remove(out_path);
  }
}

TEST_F(LauncherTest, TasksDieWithAKilledLauncher) {
  std::string out_path = TmpDir() + "/sigkill.txt";
  pid_t launcher =
      LaunchInChild({"--ps=1", "--workers=2", "--", TaskBinary(), "*=sleep"}, out_path);
  ASSERT_GT(launcher, 0);
  std::vector<pid_t> pids = WaitForPids(out_path, 3);
  kill(launcher, SIGKILL);
  waitpid(launcher, nullptr, 0);
  ASSERT_EQ(pids.size(), 3u) << ReadFile(out_path);
  EXPECT_TRUE(AllDeadWithin(pids, 2.0)) << "PR_SET_PDEATHSIG did not stop the tasks";
  std::filesystem::remove(out_path);
}

// The string inside a JSON literal (as the YAML holds it).
std::string JsonUnquote(const std::string& literal) {
  google::protobuf::Struct s;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage("{\"v\": " + literal + "}", &s).ok())
      << literal;
  return s.fields().at("v").string_value();
}

TEST_F(LauncherTest, KubernetesManifests) {
  K8sOptions options;
  options.num_ps = 1;
  options.num_workers = 3;
  options.image = "registry/me/mlp:1";
  options.k8s_namespace = "ml";
  options.storage_class = "nfs";
  options.command = {"/app/mlp", "--steps=10", "a \"quoted\" arg"};
  auto files = K8sManifests(options);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 4u);
  EXPECT_EQ((*files)[0].name, "storage.yaml");
  EXPECT_EQ((*files)[1].name, "ps.yaml");
  EXPECT_EQ((*files)[2].name, "worker.yaml");
  EXPECT_EQ((*files)[3].name, "README.txt");
  const std::string& worker = (*files)[2].contents;
  for (const char* piece :
       {"kind: Service\n", "  clusterIP: None\n", "      port: 2222\n", "kind: StatefulSet\n",
        "  name: \"worker-0\"\n", "  name: \"worker-2\"\n", "  serviceName: \"worker\"\n",
        "  replicas: 1\n", "          image: \"registry/me/mlp:1\"\n",
        "            - \"/app/mlp\"\n", "            - \"--steps=10\"\n",
        "            - \"a \\\"quoted\\\" arg\"\n", "            claimName: \"sluice-data\"\n",
        "  namespace: \"ml\"\n"}) {
    EXPECT_THAT(worker, HasSubstr(piece));
  }
  EXPECT_THAT(worker, Not(HasSubstr("volumeClaimTemplates")));  // one shared volume
  EXPECT_THAT((*files)[0].contents, HasSubstr("  accessModes: [\"ReadWriteMany\"]\n"));
  EXPECT_THAT((*files)[0].contents, HasSubstr("  storageClassName: \"nfs\"\n"));
  EXPECT_THAT((*files)[3].contents,
              HasSubstr("kubectl apply -f storage.yaml -f ps.yaml -f worker.yaml"));
  EXPECT_THAT((*files)[3].contents, HasSubstr("between_graph_mlp --logdir=/data/logs"));

  // Task worker 2's own SLUICE_CONFIG places it, with no help from POD_NAME.
  const size_t set = worker.find("  name: \"worker-2\"\n");
  std::string key = "value: ";
  size_t at = worker.find(key, worker.find("SLUICE_CONFIG", set));
  std::string config_json =
      JsonUnquote(worker.substr(at + key.size(), worker.find('\n', at) - at - key.size()));
  auto config = ParseTaskConfig(config_json);
  ASSERT_TRUE(config.ok()) << config.status() << "\n" << config_json;
  EXPECT_EQ(config->job, "worker");
  EXPECT_EQ(config->task, 2);
  EXPECT_EQ(*config->cluster.Address("worker", 2), "worker-2-0.worker.ml.svc.cluster.local:2222");
  EXPECT_EQ(*config->cluster.Address("ps", 0), "ps-0-0.ps.ml.svc.cluster.local:2222");
}

// With credentials, each task's Secret holds the CA certificate and that
// task's certificate and key, and its pod mounts that Secret alone.
TEST_F(LauncherTest, KubernetesPodsMountOnlyTheirOwnKey) {
  K8sOptions options;
  options.num_ps = 1;
  options.num_workers = 2;
  options.image = "img";
  options.command = {"/app/between_graph_mlp"};
  for (const char* f : {"ca.crt", "ps-0.crt", "ps-0.key", "worker-0.crt", "worker-0.key",
                        "worker-1.crt", "worker-1.key", "client.crt", "client.key"}) {
    options.tls_files[f] = absl::StrCat("contents of ", f);
  }
  auto files = K8sManifests(options);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ((*files)[1].name, "tls-secret.yaml");
  EXPECT_TRUE((*files)[1].secret);
  std::map<std::string, std::set<std::string>> secrets;  // name -> its data keys
  std::string current;
  for (const std::string& line : Lines((*files)[1].contents)) {
    if (absl::StartsWith(line, "  name: ")) current = JsonUnquote(line.substr(8));
    if (absl::StartsWith(line, "  \"")) {
      secrets[current].insert(JsonUnquote(line.substr(2, line.find(':', 3) - 2)));
    }
  }
  EXPECT_EQ(secrets.size(), 4u);
  EXPECT_EQ(secrets["sluice-tls-worker-1"],
            (std::set<std::string>{"ca.crt", "worker-1.crt", "worker-1.key"}));
  EXPECT_EQ(secrets["sluice-tls-ps-0"], (std::set<std::string>{"ca.crt", "ps-0.crt", "ps-0.key"}));
  EXPECT_EQ(secrets["sluice-tls-client"],
            (std::set<std::string>{"ca.crt", "client.crt", "client.key"}));
  const std::string& worker = (*files)[3].contents;
  EXPECT_THAT(worker, HasSubstr("            secretName: \"sluice-tls-worker-1\"\n"));
  EXPECT_THAT(worker, Not(HasSubstr("sluice-tls-ps-0")));
  EXPECT_THAT(worker, Not(HasSubstr("sluice-tls-client")));
  // Credentials that lack a task's key are an error, not a pod without one.
  options.tls_files.erase("worker-1.key");
  auto incomplete = K8sManifests(options);
  EXPECT_EQ(incomplete.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(incomplete.status().message()), HasSubstr("worker-1.key"));
}

TEST_F(LauncherTest, KubernetesFlagWritesFiles) {
  std::string dir = TmpDir() + "/k8s";
  std::filesystem::remove_all(dir);
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(
      LaunchMain({"--workers=2", "--k8s=" + dir, "--image=img", "--port=3000", "--", "/app/train"},
                 out, err),
      0)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("[launch] wrote " + dir + "/worker.yaml\n"));
  EXPECT_THAT(out.str(), HasSubstr("[launch] wrote " + dir + "/README.txt\n"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/ps.yaml"));  // --ps=0: no ps job
  std::string worker = ReadFile(dir + "/worker.yaml");
  EXPECT_THAT(worker, HasSubstr("worker-1-0.worker.default.svc.cluster.local:3000"));
  EXPECT_THAT(worker, Not(HasSubstr("\\\"ps\\\"")));
  EXPECT_THAT(worker, HasSubstr("containerPort: 3000"));
  // The private keys are the owner's alone, whatever the umask; an existing
  // file made readable by others is closed again.
  const std::filesystem::path secret = dir + "/tls-secret.yaml";
  ASSERT_TRUE(std::filesystem::exists(secret));
  auto perms = std::filesystem::status(secret).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_THAT(ReadFile(secret.string()), HasSubstr("kind: Secret"));
  std::filesystem::permissions(secret, std::filesystem::perms::all);
  EXPECT_EQ(
      LaunchMain({"--workers=2", "--k8s=" + dir, "--image=img", "--port=3000", "--", "/app/train"},
                 out, err),
      0)
      << err.str();
  perms = std::filesystem::status(secret).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::remove_all(dir);
}

TEST_F(LauncherTest, ResolveProgram) {
  std::string ws = TmpDir() + "/ws";
  std::string built = ws + "/bazel-bin/pkg/name";
  WriteExecutable(built, "#!/bin/sh\nexit 0\n");
  std::string bazel_log = TmpDir() + "/bazel_log.txt";
  std::string fake_bazel = TmpDir() + "/fake_bazel";
  WriteExecutable(fake_bazel, "#!/bin/sh\necho \"$(pwd -P) $*\" > " + bazel_log + "\nexit 0\n");
  std::string failing_bazel = TmpDir() + "/failing_bazel";
  WriteExecutable(failing_bazel, "#!/bin/sh\nexit 1\n");

  ProgramLocations where;
  where.workspace_dir = ws;
  where.bazel = fake_bazel;
  std::ostringstream log;
  auto path = ResolveProgram("//pkg:name", where, log);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, built);
  EXPECT_EQ(log.str(), "[launch] building //pkg:name\n");
  EXPECT_EQ(ReadFile(bazel_log), std::filesystem::canonical(ws).string() + " build //pkg:name\n");
  EXPECT_EQ(ResolveProgram("//pkg", where, log).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ResolveProgram("//pkg:", where, log).status().code(),
            absl::StatusCode::kInvalidArgument);
  where.bazel = failing_bazel;
  auto failed = ResolveProgram("//pkg:name", where, log);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(failed.status().message()), HasSubstr("exited with status 1"));

  // Without `bazel run`: bazel-bin under the current directory, no build.
  ProgramLocations local;
  local.cwd = ws;
  std::ostringstream quiet;
  EXPECT_EQ(*ResolveProgram("//pkg:name", local, quiet), built);
  EXPECT_EQ(quiet.str(), "");
  local.cwd = TmpDir();
  EXPECT_THAT(std::string(ResolveProgram("//pkg:name", local, quiet).status().message()),
              HasSubstr("bazel build //pkg:name"));

  // Relative paths: the working directory first, then the workspace.
  ProgramLocations relative;
  relative.working_dir = TmpDir();
  relative.workspace_dir = ws;
  EXPECT_EQ(*ResolveProgram("bazel-bin/pkg/name", relative, quiet), built);
  EXPECT_EQ(*ResolveProgram("./fake_bazel", relative, quiet), fake_bazel);
  // Bare names come from PATH.
  ProgramLocations path_only;
  path_only.path = "/nonexistent:/bin:/usr/bin";
  auto sh = ResolveProgram("sh", path_only, quiet);
  ASSERT_TRUE(sh.ok()) << sh.status();
  EXPECT_TRUE(absl::EndsWith(*sh, "/sh"));
  std::filesystem::remove_all(ws);
}

}  // namespace
}  // namespace sluice
