// How much a Sluice binary costs to start: peak resident memory and wall
// time of `BINARY --help`, run N times (medians). The GPU backend opens
// cuBLAS and NCCL only when it makes a GPU device, so on a machine without
// one the tools should start like binaries built without CUDA.
//
//   bazel run //bench:process_start -- --runs=20 bazel-bin/tools/server bazel-bin/tools/launch
//
// Prints, per binary (named by its file name):
//   start_<name>_rss: 14.9 MB
//   start_<name>_wall: 18.2 ms
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "bench/bench_util.h"

ABSL_FLAG(int, runs, 20, "starts per binary");

namespace {

// Runs `path --help` with output to /dev/null; its peak RSS (MB) and wall
// time (ms), or false when it could not be started.
bool StartOnce(const std::string& path, double* rss_mb, double* wall_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    execl(path.c_str(), path.c_str(), "--help", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) != pid) return false;
  const auto t1 = std::chrono::steady_clock::now();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return false;
  *rss_mb = usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB on Linux
  *wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> binaries = absl::ParseCommandLine(argc, argv);
  if (binaries.size() < 2) {
    std::fprintf(stderr, "usage: process_start [--runs=N] BINARY...\n");
    return 2;
  }
  const int runs = absl::GetFlag(FLAGS_runs);
  for (size_t b = 1; b < binaries.size(); ++b) {
    const std::string path = binaries[b];
    std::vector<double> rss, wall;
    for (int i = 0; i < runs; ++i) {
      double r = 0, w = 0;
      if (!StartOnce(path, &r, &w)) {
        std::fprintf(stderr, "process_start: cannot run %s\n", path.c_str());
        return 1;
      }
      rss.push_back(r);
      wall.push_back(w);
    }
    const std::string name = path.substr(path.find_last_of('/') + 1);
    std::printf("start_%s_rss: %.1f MB\n", name.c_str(), sluice::bench::Median(rss));
    std::printf("start_%s_wall: %.1f ms\n", name.c_str(), sluice::bench::Median(wall));
  }
  return 0;
}
