// A job member's call to a task server while strangers hold connections
// open: idle ones (TCP, then nothing) and trickling ones (a TLS ClientHello
// a byte every 50 ms), all from 127.0.0.1 like the member. The server runs
// in this process with mutual TLS, as tools:server does by default.
//
//   bazel run //bench:connection_flood [-- --hostile=0,1000,4000 --calls=20]
//
// Figures, per number of hostile connections N:
//   member_call_new_connection_{p50,max}_hostile_N: ms   a new connection:
//       TCP connect, TLS handshake through the gate, GetStatus
//   member_call_pooled_p50_hostile_N: ms   a call on a kept connection
//   server_threads_hostile_N: threads      connection threads at most, during
//       the calls (the gate's event loop is one more, whatever N)
//   rss_growth_hostile_N: MiB              this process's resident memory
//       over its value before the strangers came
#include <dirent.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "bench/bench_util.h"
#include "distributed/rpc/connection_gate.h"
#include "distributed/rpc/job_credentials.h"
#include "distributed/rpc/rpc_testutil.h"
#include "distributed/rpc/socket_util.h"
#include "distributed/rpc/thrift_server.h"
#include "distributed/rpc/tls_context.h"
#include "distributed/rpc/worker_stub.h"

ABSL_FLAG(std::string, hostile, "0,1000,4000", "numbers of hostile connections, comma-separated");
ABSL_FLAG(int, calls, 20, "member calls per figure");

namespace sluice::bench {
namespace {

constexpr char kPs[] = "/job:ps/replica:0/task:0";
constexpr char kWorker[] = "/job:worker/replica:0/task:0";

double ResidentMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return -1;
}

absl::StatusOr<std::vector<int>> OpenIdle(int port, int n) {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(int fd, ConnectTcp(HostPort{"127.0.0.1", port}, 2000));
    fds.push_back(fd);
  }
  return fds;
}

absl::Status Run() {
  RaiseOpenFileLimit();
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/sluice-flood-", getpid());
  RETURN_IF_ERROR(WriteJobCredentials(dir, {kPs, kWorker}));
  ASSIGN_OR_RETURN(std::shared_ptr<const TlsContext> server_tls, TlsContext::Load(dir, kPs));
  ASSIGN_OR_RETURN(std::shared_ptr<const TlsContext> member_tls, TlsContext::Load(dir, kWorker));
  auto worker = std::make_shared<FakeWorker>(kPs);
  ThriftServerOptions opts;
  opts.task_name = kPs;
  opts.tls = server_tls;
  opts.auth_timeout_ms = 60000;  // the strangers stay for the whole figure
  ASSIGN_OR_RETURN(std::unique_ptr<ThriftServer> server,
                   ThriftServer::Start(opts, worker, nullptr, nullptr));
  const std::string address = absl::StrCat("127.0.0.1:", server->port());
  RpcOptions member;
  member.tls = member_tls;

  for (absl::string_view part : absl::StrSplit(absl::GetFlag(FLAGS_hostile), ',')) {
    int n;
    if (!absl::SimpleAtoi(part, &n) || n < 0) {
      return absl::InvalidArgumentError(absl::StrCat("--hostile: not a count: ", part));
    }
    const double rss_before = ResidentMiB();
    ASSIGN_OR_RETURN(std::vector<int> idle, OpenIdle(server->port(), n / 2));
    ASSIGN_OR_RETURN(std::vector<int> trickling, OpenIdle(server->port(), n - n / 2));
    std::atomic<bool> stop{false};
    std::thread trickler([&] {
      const unsigned char hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03};
      for (size_t next = 0; !stop.load(); ++next) {
        for (int fd : trickling) (void)send(fd, &hello[next % sizeof(hello)], 1, MSG_NOSIGNAL);
        absl::SleepFor(absl::Milliseconds(50));
      }
    });
    const absl::Time settle = absl::Now() + absl::Seconds(10);
    while (server->gate_counts().pending < n && absl::Now() < settle) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    std::vector<double> fresh, pooled;
    int threads = 0;
    absl::Status failed;
    for (int i = 0; i < absl::GetFlag(FLAGS_calls) && failed.ok(); ++i) {
      WorkerStub stub(kPs, address, member);
      const absl::Time t0 = absl::Now();
      failed = stub.GetStatus(5000).status();
      fresh.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
      const absl::Time t1 = absl::Now();
      if (failed.ok()) failed = stub.GetStatus(5000).status();
      pooled.push_back(absl::ToDoubleMilliseconds(absl::Now() - t1));
      threads = std::max(threads, server->served_connections());
    }
    const double rss = ResidentMiB() - rss_before;
    stop.store(true);
    trickler.join();
    for (int fd : idle) close(fd);
    for (int fd : trickling) close(fd);
    if (!failed.ok()) {
      return absl::Status(failed.code(), absl::StrCat("with ", n, " hostile connections: ",
                                                      failed.message()));
    }
    double worst = 0;
    for (double ms : fresh) worst = std::max(worst, ms);
    std::printf("member_call_new_connection_p50_hostile_%d: %.3f ms\n", n, Median(fresh));
    std::printf("member_call_new_connection_max_hostile_%d: %.3f ms\n", n, worst);
    std::printf("member_call_pooled_p50_hostile_%d: %.3f ms\n", n, Median(pooled));
    std::printf("server_threads_hostile_%d: %d threads\n", n, threads);
    std::printf("rss_growth_hostile_%d: %.1f MiB\n", n, rss);
    std::fflush(stdout);
    // Let the server close its side before the next figure.
    const absl::Time drained = absl::Now() + absl::Seconds(10);
    while (server->gate_counts().pending > 0 && absl::Now() < drained) {
      absl::SleepFor(absl::Milliseconds(10));
    }
  }
  server->Stop();
  (void)std::system(absl::StrCat("rm -rf '", dir, "'").c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "connection_flood", sluice::bench::Run);
}
