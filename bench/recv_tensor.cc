// RecvTensor over Thrift between two processes on 127.0.0.1, against raw TCP
// with the same process layout.
//
//   bazel run //bench:recv_tensor [-- --transfers=20 --pings=3000]
//   bench/recv_tensor_peers.sh        (adds iperf3 and torch.distributed gloo)
//   perf stat -e instructions:u -- recv_tensor --transfers=0 --ping_kinds=rpc
//                                     (one kind of round trip alone)
//
// The program forks and execs itself as the server (--role=server): a
// ThriftServer whose TensorSource holds a 64 MiB float tensor and a 4-byte
// one, plus a raw TCP server that answers a 4-byte request with the same
// 64 MiB (one send) or echoes 4 bytes. Figures (medians over the transfers,
// percentiles over the pings):
//   recv_tensor_64MiB: GB/s           WorkerStub::RecvTensor with its default
//                                     allocator (RecvBufferPool: the previous
//                                     transfer's freed block is reused)
//   recv_tensor_64MiB_fresh_buffer: GB/s   into a new DefaultCpuAllocator
//                                     buffer every time (page faults included)
//   raw_tcp_64MiB: GB/s               recv() into one reused buffer
//   raw_tcp_64MiB_rcvlowat: GB/s      same, the receiver woken per MiB (SO_RCVLOWAT)
//   recv_tensor_tls_64MiB: GB/s       RecvTensor over mutual TLS 1.3 (a second
//                                     server of the same process, job credentials
//                                     made for the run)
//   recv_tensor_4B_rtt_{pinned,unpinned}_{p50,p99}: us
//   recv_tensor_tls_4B_rtt_{pinned,unpinned}_{p50,p99}: us
//   raw_tcp_4B_rtt_{pinned,unpinned}_{p50,p99}: us
// "pinned": both processes (all their threads) on CPU 0; "unpinned": the
// scheduler's choice over all CPUs, which is bimodal on two vCPUs: both ends
// on one CPU (~15 us) or one on each (~40-70 us, a cross-CPU wakeup each
// way), whichever it settles on; compare at the same pinning.
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "bench/bench_util.h"
#include "distributed/rpc/job_credentials.h"
#include "distributed/rpc/rpc_testutil.h"
#include "distributed/rpc/socket_util.h"
#include "distributed/rpc/thrift_server.h"
#include "distributed/rpc/tls_context.h"
#include "distributed/rpc/worker_stub.h"
#include "base/status_macros.h"
#include "runtime/tensor.h"

ABSL_FLAG(std::string, role, "client", "client, or server (started by the client)");
ABSL_FLAG(int, transfers, 20, "timed 64 MiB transfers per figure; 0: no throughput figures");
ABSL_FLAG(int, pings, 3000, "timed 4-byte round trips per figure; 0: no latency figures");
ABSL_FLAG(int64_t, bytes, 64 << 20, "size of the large tensor");
ABSL_FLAG(std::vector<std::string>, ping_kinds, std::vector<std::string>({"rpc", "tls", "raw"}),
          "which 4-byte round trips to time, of rpc, tls and raw (one alone: to count a "
          "kind's instructions with perf stat)");
ABSL_FLAG(int, pin_cpu, -1, "server role: pin the process to this CPU");
ABSL_FLAG(std::string, tls_dir, "", "server role: the job credentials of its TLS server");
ABSL_FLAG(std::string, server_ports, "",
          "client role: \"THRIFT,RAW\" of a server already started with --role=server "
          "(e.g. to profile one side); only the unpinned figures are taken");

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kStep = 1;
constexpr char kBenchTask[] = "/job:bench/replica:0/task:0";

void PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

void UnpinAll() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int n = static_cast<int>(std::thread::hardware_concurrency());
  for (int i = 0; i < n; ++i) CPU_SET(i, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

bool RecvAll(int fd, void* buf, size_t n) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t got = recv(fd, p, n, 0);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool SendAll(int fd, const void* buf, size_t n) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t sent = send(fd, p, n, MSG_NOSIGNAL);
    if (sent <= 0) return false;
    p += sent;
    n -= static_cast<size_t>(sent);
  }
  return true;
}

// ------------------------------------------------------------------ server

// Tensors ready before the first request; lookups need no lock. (The
// worker's rendezvous adds its own cost; this measures the RPC layer.)
class StaticTensorSource : public TensorSource {
 public:
  void Add(const std::string& key, Tensor t) { tensors_[key] = std::move(t); }
  absl::StatusOr<Tensor> WaitForTensor(int64_t step_id, const std::string& key,
                                       int64_t timeout_ms) override {
    auto it = tensors_.find(key);
    if (it == tensors_.end()) return absl::NotFoundError(absl::StrCat("no tensor '", key, "'"));
    return it->second;
  }

 private:
  std::map<std::string, Tensor> tensors_;
};

// Raw TCP peer: each request is 4 bytes; request 0 echoes 4 bytes, request 1
// answers with the big buffer.
void ServeRaw(int fd, const char* big, size_t big_bytes) {
  uint32_t req;
  while (RecvAll(fd, &req, 4)) {
    const bool ok = req == 1 ? SendAll(fd, big, big_bytes) : SendAll(fd, &req, 4);
    if (!ok) break;
  }
  close(fd);
}

int ServerMain() {
  const int pin = absl::GetFlag(FLAGS_pin_cpu);
  if (pin >= 0) PinTo(pin);  // before any thread starts: all inherit it
  const int64_t bytes = absl::GetFlag(FLAGS_bytes);
  StaticTensorSource source;
  Tensor big(DT_FLOAT, TensorShape({bytes / 4}));
  for (float& v : big.flat<float>()) v = 1.0f;
  source.Add("big", big);
  source.Add("small", Tensor::Scalar<float>(3.0f));
  auto worker = std::make_shared<FakeWorker>(kBenchTask);
  ThriftServerOptions opts;
  opts.task_name = kBenchTask;
  absl::StatusOr<std::unique_ptr<ThriftServer>> server = ThriftServer::Start(opts, worker, &source, nullptr);
  absl::StatusOr<std::shared_ptr<const TlsContext>> tls =
      TlsContext::Load(absl::GetFlag(FLAGS_tls_dir), kBenchTask);
  absl::StatusOr<std::unique_ptr<ThriftServer>> tls_server =
      tls.ok() ? absl::InternalError("not started") : tls.status();
  if (tls.ok()) {
    opts.tls = *tls;
    tls_server = ThriftServer::Start(opts, worker, &source, nullptr);
  }
  int raw_port = 0;
  absl::StatusOr<int> raw = ListenTcp("127.0.0.1", 0, &raw_port);
  if (!server.ok() || !raw.ok() || !tls_server.ok()) {
    std::fprintf(stderr, "recv_tensor server: %s %s %s\n", server.status().ToString().c_str(),
                 raw.status().ToString().c_str(), tls_server.status().ToString().c_str());
    return 1;
  }
  std::thread acceptor([&] {
    while (true) {
      int fd = accept(*raw, nullptr, nullptr);
      if (fd < 0) return;
      SetRpcSocketOptions(fd);
      std::thread(ServeRaw, fd, static_cast<const char*>(big.raw_data()), big.TotalBytes()).detach();
    }
  });
  std::printf("%d %d %d\n", (*server)->port(), raw_port, (*tls_server)->port());
  std::fflush(stdout);
  // Runs until the client closes our stdin.
  char c;
  while (read(0, &c, 1) > 0) {
  }
  std::_Exit(0);
}

// ------------------------------------------------------------------ client

struct Peer {
  pid_t pid = -1;
  int to_child = -1;
  int thrift_port = 0;
  int raw_port = 0;
  int tls_port = 0;
};

// The temporary directory TlsDir() made, removed when the client ends.
std::string* g_tls_parent = nullptr;

// The job credentials both processes use: made once per run.
const std::string& TlsDir() {
  static const std::string* dir = [] {
    char pattern[] = "/tmp/sluice-bench-tls-XXXXXX";
    const bool have_dir = mkdtemp(pattern) != nullptr;
    if (have_dir) g_tls_parent = new std::string(pattern);
    std::string* d = new std::string(have_dir ? pattern : "/tmp");
    *d += "/tls";
    absl::Status made = WriteJobCredentials(*d, {kBenchTask, kClientIdentity});
    if (!made.ok()) std::fprintf(stderr, "recv_tensor: %s\n", made.ToString().c_str());
    return d;
  }();
  return *dir;
}

RpcOptions TlsClient() {
  RpcOptions o;
  absl::StatusOr<std::shared_ptr<const TlsContext>> tls = TlsContext::Load(TlsDir(), kClientIdentity);
  if (tls.ok()) o.tls = *tls;
  return o;
}

absl::StatusOr<Peer> SpawnServer(int pin_cpu) {
  int in_pipe[2], out_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0) return absl::InternalError("pipe failed");
  const std::string pin_flag = absl::StrCat("--pin_cpu=", pin_cpu);
  const std::string bytes_flag = absl::StrCat("--bytes=", absl::GetFlag(FLAGS_bytes));
  const std::string tls_flag = absl::StrCat("--tls_dir=", TlsDir());
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    close(in_pipe[1]);
    close(out_pipe[0]);
    execl("/proc/self/exe", "recv_tensor", "--role=server", pin_flag.c_str(), bytes_flag.c_str(),
          tls_flag.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  Peer peer;
  peer.pid = pid;
  peer.to_child = in_pipe[1];
  char line[64] = {0};
  size_t len = 0;
  while (len < sizeof(line) - 1) {
    ssize_t got = read(out_pipe[0], line + len, 1);
    if (got <= 0 || line[len] == '\n') break;
    ++len;
  }
  close(out_pipe[0]);
  if (std::sscanf(line, "%d %d %d", &peer.thrift_port, &peer.raw_port, &peer.tls_port) != 3) {
    return absl::InternalError("the server process did not start");
  }
  return peer;
}

void StopServer(const Peer& peer) {
  close(peer.to_child);
  int status;
  waitpid(peer.pid, &status, 0);
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

absl::Status Throughput(const Peer& peer) {
  const int transfers = absl::GetFlag(FLAGS_transfers);
  const int64_t bytes = absl::GetFlag(FLAGS_bytes);
  const std::string label = absl::StrCat(bytes >> 20, "MiB");
  WorkerStub stub(kBenchTask, absl::StrCat("127.0.0.1:", peer.thrift_port));
  WorkerStub tls_stub(kBenchTask, absl::StrCat("127.0.0.1:", peer.tls_port), TlsClient());
  absl::Status status;
  auto recv_tensor = [&](Allocator* alloc, WorkerStub* via) {
    absl::StatusOr<Tensor> t = via->RecvTensor(kStep, "big", 10000, alloc);
    if (!t.ok()) {
      status = t.status();
    } else if (static_cast<int64_t>(t->TotalBytes()) != bytes) {
      status = absl::InternalError("short tensor");
    }
  };
  // Two raw connections: plain, and one whose receiver is woken per MiB
  // (SO_RCVLOWAT), the tuning FramedTransport applies to tensor bytes.
  ASSIGN_OR_RETURN(int fd, ConnectTcp(HostPort{"127.0.0.1", peer.raw_port}, 3000));
  ASSIGN_OR_RETURN(int tuned_fd, ConnectTcp(HostPort{"127.0.0.1", peer.raw_port}, 3000));
  std::unique_ptr<char[]> buf(new char[bytes]);
  std::memset(buf.get(), 0, bytes);
  bool ok = true;
  auto raw = [&](int sock) {
    uint32_t req = 1;
    ok = ok && SendAll(sock, &req, 4) && RecvAll(sock, buf.get(), bytes);
  };
  // The kernel wakes a sleeping reader only once SO_RCVLOWAT bytes are
  // queued, whatever the read asked for, so the mark goes back to 1 for
  // the last megabytes (as FramedTransport does).
  auto raw_tuned = [&] {
    uint32_t req = 1;
    ok = ok && SendAll(tuned_fd, &req, 4);
    int lowat = 1 << 20;
    setsockopt(tuned_fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat));
    char* p = buf.get();
    size_t left = static_cast<size_t>(bytes);
    while (ok && left > 0) {
      if (left < (4u << 20) && lowat != 1) {
        lowat = 1;
        setsockopt(tuned_fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat));
      }
      ssize_t got = recv(tuned_fd, p, left, 0);
      if (got <= 0) ok = false;
      else p += got, left -= static_cast<size_t>(got);
    }
  };
  // Interleaved, so that load from elsewhere on the machine hits all alike.
  std::vector<double> fresh_ms, reused_ms, raw_ms, tuned_ms, tls_ms;
  for (int i = 0; i < transfers + 2; ++i) {
    std::vector<double> f =
        bench::TimeRepeated(1, [&] { recv_tensor(DefaultCpuAllocator(), &stub); });
    std::vector<double> r = bench::TimeRepeated(1, [&] { recv_tensor(nullptr, &stub); });
    std::vector<double> t = bench::TimeRepeated(1, [&] { recv_tensor(nullptr, &tls_stub); });
    std::vector<double> w = bench::TimeRepeated(1, [&] { raw(fd); });
    std::vector<double> l = bench::TimeRepeated(1, raw_tuned);
    if (i < 2) continue;  // warm-up
    fresh_ms.push_back(f[0]);
    tls_ms.push_back(t[0]);
    reused_ms.push_back(r[0]);
    raw_ms.push_back(w[0]);
    tuned_ms.push_back(l[0]);
  }
  close(fd);
  close(tuned_fd);
  RETURN_IF_ERROR(status);
  if (!ok) return absl::InternalError("raw TCP transfer failed");
  auto gbs = [&](const std::vector<double>& ms) { return bytes / (bench::Median(ms) * 1e6); };
  std::printf("recv_tensor_%s: %.2f GB/s\n", label.c_str(), gbs(reused_ms));
  std::printf("recv_tensor_%s_fresh_buffer: %.2f GB/s\n", label.c_str(), gbs(fresh_ms));
  std::printf("raw_tcp_%s: %.2f GB/s\n", label.c_str(), gbs(raw_ms));
  std::printf("raw_tcp_%s_rcvlowat: %.2f GB/s\n", label.c_str(), gbs(tuned_ms));
  std::printf("recv_tensor_tls_%s: %.2f GB/s\n", label.c_str(), gbs(tls_ms));
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Latency(const Peer& peer, const char* pinning) {
  const int pings = absl::GetFlag(FLAGS_pings);
  WorkerStub stub(kBenchTask, absl::StrCat("127.0.0.1:", peer.thrift_port));
  WorkerStub tls_stub(kBenchTask, absl::StrCat("127.0.0.1:", peer.tls_port), TlsClient());
  absl::Status status;
  auto rpc = [&] {
    absl::StatusOr<Tensor> t = stub.RecvTensor(kStep, "small", 10000);
    if (!t.ok()) status = t.status();
  };
  auto tls_rpc = [&] {
    absl::StatusOr<Tensor> t = tls_stub.RecvTensor(kStep, "small", 10000);
    if (!t.ok()) status = t.status();
  };
  ASSIGN_OR_RETURN(int fd, ConnectTcp(HostPort{"127.0.0.1", peer.raw_port}, 3000));
  bool ok = true;
  auto ping = [&] {
    uint32_t v = 0;
    ok = ok && SendAll(fd, &v, 4) && RecvAll(fd, &v, 4);
  };
  struct Kind {
    const char* flag;
    const char* figure;
    std::function<void()> call;
    std::vector<double> ms;
  };
  std::vector<Kind> kinds;
  const std::vector<std::string> wanted = absl::GetFlag(FLAGS_ping_kinds);
  for (Kind& k : std::vector<Kind>{{"rpc", "recv_tensor_4B_rtt", rpc},
                                   {"raw", "raw_tcp_4B_rtt", ping},
                                   {"tls", "recv_tensor_tls_4B_rtt", tls_rpc}}) {
    if (std::find(wanted.begin(), wanted.end(), k.flag) != wanted.end()) {
      kinds.push_back(std::move(k));
    }
  }
  if (kinds.empty()) return absl::InvalidArgumentError("--ping_kinds names none of rpc, tls, raw");
  for (int i = 0; i < 200; ++i) {
    for (Kind& k : kinds) k.call();
  }
  // Alternating blocks, so that load from elsewhere hits all alike.
  constexpr int kBlock = 50;
  for (int done = 0; done < pings; done += kBlock) {
    for (Kind& k : kinds) {
      for (double ms : bench::TimeRepeated(kBlock, k.call)) k.ms.push_back(ms);
    }
  }
  close(fd);
  RETURN_IF_ERROR(status);
  if (!ok) return absl::InternalError("raw TCP ping failed");
  for (const Kind& k : kinds) {
    for (double q : {0.50, 0.99}) {
      std::printf("%s_%s_p%d: %.2f us\n", k.figure, pinning, static_cast<int>(q * 100),
                  Percentile(k.ms, q) * 1000);
    }
  }
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status ClientMain() {
  signal(SIGPIPE, SIG_IGN);
  const bool throughput = absl::GetFlag(FLAGS_transfers) > 0;
  const bool latency = absl::GetFlag(FLAGS_pings) > 0;
  const std::string ports = absl::GetFlag(FLAGS_server_ports);
  if (!ports.empty()) {
    Peer peer;
    if (std::sscanf(ports.c_str(), "%d,%d", &peer.thrift_port, &peer.raw_port) != 2) {
      return absl::InvalidArgumentError("--server_ports wants THRIFT,RAW");
    }
    if (throughput) RETURN_IF_ERROR(Throughput(peer));
    return latency ? Latency(peer, "unpinned") : absl::OkStatus();
  }
  {
    ASSIGN_OR_RETURN(Peer peer, SpawnServer(-1));
    absl::Status s;
    if (throughput) s = Throughput(peer);
    if (s.ok() && latency) s = Latency(peer, "unpinned");
    StopServer(peer);
    RETURN_IF_ERROR(s);
  }
  if (!latency) return absl::OkStatus();
  ASSIGN_OR_RETURN(Peer peer, SpawnServer(0));
  PinTo(0);
  absl::Status s = Latency(peer, "pinned");
  UnpinAll();
  StopServer(peer);
  return s;
}

absl::Status Main() {
  if (absl::GetFlag(FLAGS_role) == "server") std::exit(ServerMain());
  absl::Status s = ClientMain();
  if (g_tls_parent != nullptr) {
    std::error_code ignored;  // a leftover directory is no reason to fail the run
    std::filesystem::remove_all(*g_tls_parent, ignored);
  }
  return s;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "recv_tensor", &sluice::Main);
}
