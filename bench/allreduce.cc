// Ring all-reduce across processes on 127.0.0.1: bus bandwidth by size and
// process count, and fused against unfused gradients.
//
//   bazel build //bench:allreduce && bazel-bin/bench/allreduce [--n=2,3,4]
//   bench/allreduce.sh          (adds torch.distributed gloo in the same run)
//
// The program forks and execs itself once per process (--rank=R): each runs
// a distributed Server (distributed/server.h) for task R of the job
// "worker" and waits until every peer answers GetStatus.
//
// --mode=busbw: every rank drives the all-reduce (sum, float32) straight
// through its Worker's CollectiveExecutor, the executor the AllReduce op's
// kernel calls, so no graph or session cost is in the figure: it is the
// ring and the Thrift transport (CollectivePush) alone. Per size: --warmup
// runs, then timed runs each preceded by a 1-float all-reduce (a barrier);
// each rank takes the median of its runs, and the figure uses the slowest
// rank's median (the ranks exchange them with an all-gather). The first
// result is checked against the exact sum.
//   allreduce_busbw_n<N>_<size>: GB/s   bytes * 2(N-1)/N / time (NCCL-tests)
//   allreduce_time_n<N>_<size>: ms
// --verbose adds, per rank and size, "#" lines with its CPU time (user and
// system), minor page faults and context switches per run.
//
// --mode=fused: each rank builds a graph of G constant "gradients" of E
// floats, all-reduced (mean) with AllReduceGradientsOfMember
// (training/all_reduce_gradients.h) into a NoOp, and runs it
// through its own Server's session; bucket_bytes 0 (one all-reduce per
// gradient) against 4 MiB (one fused all-reduce). Median over the steps,
// each preceded by a barrier:
//   allreduce_unfused_n<N>_<G>x<E>: ms/step
//   allreduce_fused_n<N>_<G>x<E>: ms/step
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_util.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/server.h"
#include "training/all_reduce_gradients.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "runtime/collective/collective_executor.h"

ABSL_FLAG(std::string, mode, "busbw", "busbw (bus bandwidth by size) or fused (fused vs unfused)");
ABSL_FLAG(std::string, n, "2,3,4", "process counts, comma separated");
ABSL_FLAG(std::string, sizes, "4K,64K,1M,4M,16M,64M,256M", "busbw: tensor sizes in bytes (K, M suffixes)");
ABSL_FLAG(int, warmup, 2, "untimed runs per size (busbw) or steps (fused)");
ABSL_FLAG(int, iters, 0, "busbw: timed runs per size; 0: about 1.5 s worth, 5 to 40");
ABSL_FLAG(std::string, grads, "100x10000,100x1000", "fused: gradient sets, <count>x<floats>");
ABSL_FLAG(int, steps, 20, "fused: timed steps per configuration");
ABSL_FLAG(int64_t, chunk_bytes, 0, "ring chunk bytes; 0: the executor's default");
ABSL_FLAG(int64_t, max_bytes_in_flight, 0, "ring chunks in flight per process, bytes; 0: the default");
ABSL_FLAG(int, max_concurrent_pushes, 0, "pushes in flight per process; 0: the transport's default");
ABSL_FLAG(bool, verbose, false, "busbw: every rank prints its CPU time and page faults per run");
ABSL_FLAG(int, rank, -1, "internal: this process's task (set by the parent)");
ABSL_FLAG(std::string, ports, "", "internal: every task's port, comma separated");

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

absl::StatusOr<std::vector<int64_t>> ParseList(const std::string& flag, const std::string& text) {
  std::vector<int64_t> out;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int64_t scale = 1;
    if (absl::EndsWith(item, "K")) scale = 1 << 10;
    if (absl::EndsWith(item, "M")) scale = 1 << 20;
    if (scale > 1) item.remove_suffix(1);
    int64_t v;
    if (!absl::SimpleAtoi(item, &v) || v <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, ": bad value '", item, "'"));
    }
    out.push_back(v * scale);
  }
  return out;
}

std::string SizeLabel(int64_t bytes) {
  if (bytes % (1 << 20) == 0) return absl::StrCat(bytes >> 20, "MiB");
  if (bytes % (1 << 10) == 0) return absl::StrCat(bytes >> 10, "KiB");
  return absl::StrCat(bytes, "B");
}

std::string DeviceName(int task) {
  return absl::StrCat("/job:worker/replica:0/task:", task, "/device:CPU:0");
}

// This process's CPU time (user + system) and minor page faults so far.
struct Usage {
  double cpu_ms = 0;
  double sys_ms = 0;
  int64_t minflt = 0;
  int64_t switches = 0;  // voluntary + involuntary context switches
};
Usage GetUsage() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec * 1e-3; };
  return {ms(u.ru_utime) + ms(u.ru_stime), ms(u.ru_stime), u.ru_minflt, u.ru_nvcsw + u.ru_nivcsw};
}

// ------------------------------------------------------------------ a rank

class Rank {
 public:
  Rank(int rank, int n) : rank_(rank), n_(n) {
    for (int t = 0; t < n; ++t) group_.push_back(DeviceName(t));
  }

  absl::Status Start(const std::vector<int64_t>& ports);
  absl::Status Busbw(const std::vector<int64_t>& sizes);
  absl::Status Fused(const std::vector<std::pair<int64_t, int64_t>>& sets);
  // A last barrier, so no rank stops its server while a peer still talks;
  // then a pause, since the barrier's last message is delivered (and ends
  // the barrier on its receiver) before the receiver replies to it.
  absl::Status Finish() {
    RETURN_IF_ERROR(Barrier());
    absl::SleepFor(absl::Milliseconds(300));
    return absl::OkStatus();
  }

 private:
  CollectiveParams Params(int64_t group, int64_t instance) const {
    CollectiveParams p;
    p.kind = CollectiveKind::kAllReduce;
    p.group_key = group;
    p.instance_key = instance;
    p.group_devices = group_;
    p.rank = rank_;
    p.chunk_bytes = absl::GetFlag(FLAGS_chunk_bytes);
    p.max_bytes_in_flight = absl::GetFlag(FLAGS_max_bytes_in_flight);
    p.node_name = absl::StrCat("bench_allreduce_", instance);
    return p;
  }
  absl::StatusOr<Tensor> RunSync(const CollectiveParams& p, const Tensor& input) {
    absl::Notification done;
    absl::StatusOr<Tensor> out;
    server_->worker()->collective_executor()->Run(p, device_, input, [&](absl::StatusOr<Tensor> r) {
      out = std::move(r);
      done.Notify();
    });
    done.WaitForNotification();
    return out;
  }
  absl::Status Barrier() {
    return RunSync(Params(/*group=*/1, /*instance=*/1), Tensor::Scalar<float>(1.0f)).status();
  }
  // Every rank's `values`, rank after rank (a ring all-gather).
  absl::StatusOr<std::vector<float>> Gather(const std::vector<float>& values);
  // Rank 0 prints; every rank must call it (it gathers).
  absl::Status Report(const std::vector<std::string>& names, const std::vector<double>& medians,
                      const std::function<void(size_t, const std::string&, double)>& print);

  const int rank_;
  const int n_;
  std::vector<std::string> group_;
  std::unique_ptr<Server> server_;
  Device* device_ = nullptr;
};

absl::Status Rank::Start(const std::vector<int64_t>& ports) {
  std::vector<std::string> addresses;
  for (int64_t p : ports) addresses.push_back(absl::StrCat("127.0.0.1:", p));
  ServerOptions options;
  ASSIGN_OR_RETURN(options.config,
                   TaskConfigFromFlags("worker=" + absl::StrJoin(addresses, ","), "worker", rank_));
  if (int m = absl::GetFlag(FLAGS_max_concurrent_pushes); m > 0) {
    options.collective_transport.max_concurrent_pushes = m;
  }
  // Plaintext on loopback, as the figures in RESULTS.md were taken
  // (bench/recv_tensor measures what TLS costs).
  options.security.insecure = true;
  ASSIGN_OR_RETURN(server_, Server::Create(options));
  for (Device* d : server_->worker()->devices()) {
    if (d->name() == group_[rank_]) device_ = d;
  }
  if (device_ == nullptr) {
    return absl::InternalError(absl::StrCat("task ", rank_, " has no device ", group_[rank_]));
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  for (int t = 0; t < n_; ++t) {
    const std::string task = absl::StrCat("/job:worker/replica:0/task:", t);
    while (true) {
      ASSIGN_OR_RETURN(WorkerInterface * peer, server_->worker_cache()->GetWorker(task));
      absl::Status s = peer->GetStatusWithin(500).status();
      if (s.ok()) break;
      if (absl::Now() > deadline) return AddContext(s, absl::StrCat("waiting for ", task));
      absl::SleepFor(absl::Milliseconds(50));
    }
  }
  return Barrier();
}

absl::StatusOr<std::vector<float>> Rank::Gather(const std::vector<float>& values) {
  CollectiveParams p = Params(/*group=*/1, /*instance=*/2);
  p.kind = CollectiveKind::kAllGather;
  ASSIGN_OR_RETURN(
      Tensor all,
      RunSync(p, Tensor::FromVector<float>(values, TensorShape({1, static_cast<int64_t>(values.size())}))));
  return std::vector<float>(all.flat<float>().begin(), all.flat<float>().end());
}

absl::Status Rank::Report(const std::vector<std::string>& names, const std::vector<double>& medians,
                          const std::function<void(size_t, const std::string&, double)>& print) {
  std::vector<float> mine(medians.begin(), medians.end());
  ASSIGN_OR_RETURN(std::vector<float> all, Gather(mine));
  if (rank_ != 0) return absl::OkStatus();
  for (size_t i = 0; i < names.size(); ++i) {
    double slowest = 0;
    std::vector<std::string> per_rank;
    for (int r = 0; r < n_; ++r) {
      slowest = std::max<double>(slowest, all[r * names.size() + i]);
      per_rank.push_back(absl::StrFormat("%.3f", all[r * names.size() + i]));
    }
    std::printf("# %s: rank medians %s ms\n", names[i].c_str(), absl::StrJoin(per_rank, " ").c_str());
    print(i, names[i], slowest);
  }
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Rank::Busbw(const std::vector<int64_t>& sizes) {
  std::vector<std::string> names;
  std::vector<double> medians;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t elems = sizes[i] / 4;
    Tensor input(DT_FLOAT, TensorShape({elems}));
    float* x = input.flat<float>().data();
    for (int64_t e = 0; e < elems; ++e) x[e] = static_cast<float>(rank_ + 1 + (e % 7));
    const CollectiveParams p = Params(/*group=*/2, /*instance=*/10 + static_cast<int64_t>(i));
    // Check the first result: sum over ranks of (r + 1 + e % 7).
    {
      ASSIGN_OR_RETURN(Tensor out, RunSync(p, input));
      const float* y = out.flat<float>().data();
      for (int64_t e = 0; e < elems; e += std::max<int64_t>(1, elems / 4099)) {
        const float want = static_cast<float>(n_ * (n_ + 1) / 2 + n_ * (e % 7));
        if (y[e] != want) {
          return absl::InternalError(absl::StrCat("all-reduce of ", SizeLabel(sizes[i]),
                                                  ": element ", e, " is ", y[e], ", not ", want));
        }
      }
    }
    for (int w = 1; w < absl::GetFlag(FLAGS_warmup); ++w) RETURN_IF_ERROR(RunSync(p, input).status());
    // About 1.5 s of runs at ~0.5 GB/s, within [5, 40].
    int iters = absl::GetFlag(FLAGS_iters);
    if (iters <= 0) iters = static_cast<int>(std::clamp<int64_t>((750 << 20) / sizes[i], 5, 40));
    std::vector<double> ms;
    const Usage before = GetUsage();
    for (int k = 0; k < iters; ++k) {
      RETURN_IF_ERROR(Barrier());
      const Clock::time_point t0 = Clock::now();
      RETURN_IF_ERROR(RunSync(p, input).status());
      ms.push_back(MsSince(t0));
    }
    if (absl::GetFlag(FLAGS_verbose)) {
      const Usage after = GetUsage();
      std::printf(
          "# rank %d n%d %s: %.3f ms, cpu %.3f ms/run (system %.3f), %.0f minor faults/run, "
          "%.0f context switches/run\n",
          rank_, n_, SizeLabel(sizes[i]).c_str(), bench::Median(ms),
          (after.cpu_ms - before.cpu_ms) / iters, (after.sys_ms - before.sys_ms) / iters,
          static_cast<double>(after.minflt - before.minflt) / iters,
          static_cast<double>(after.switches - before.switches) / iters);
      std::fflush(stdout);
    }
    names.push_back(absl::StrCat("n", n_, "_", SizeLabel(sizes[i])));
    medians.push_back(bench::Median(ms));
  }
  const int n = n_;
  return Report(names, medians, [&](size_t i, const std::string& name, double ms) {
    const double bus = static_cast<double>(sizes[i]) * 2.0 * (n - 1) / n / (ms * 1e-3) / 1e9;
    std::printf("allreduce_time_%s: %.3f ms\n", name.c_str(), ms);
    std::printf("allreduce_busbw_%s: %.3f GB/s\n", name.c_str(), bus);
  });
}

absl::Status Rank::Fused(const std::vector<std::pair<int64_t, int64_t>>& sets) {
  std::vector<std::string> names;
  std::vector<double> medians;
  int64_t group = 10;
  for (const auto& [count, floats] : sets) {
    for (int64_t bucket : {int64_t{0}, int64_t{4} << 20}) {
      Scope root = Scope::NewRootScope(BuiltinOps());
      Scope s = root.WithDevice(group_[rank_]);
      std::vector<Output> grads;
      for (int64_t g = 0; g < count; ++g) {
        grads.push_back(ops::Const(s.WithOpName(absl::StrCat("grad", g)),
                                   std::vector<float>(floats, 0.5f * (rank_ + 1)),
                                   TensorShape({floats})));
      }
      AllReduceOptions o;
      o.bucket_bytes = bucket;
      o.group_key = ++group;
      ASSIGN_OR_RETURN(std::vector<Output> reduced,
                       AllReduceGradientsOfMember(s, grads, group_, rank_, o));
      ops::NoOp(s.WithOpName("step").WithControlDependencies(reduced));
      RETURN_IF_ERROR(root.status());
      ASSIGN_OR_RETURN(GraphDef def, root.ToGraphDef());
      ClusterSessionOptions so;
      so.session.default_device = group_[rank_];
      ASSIGN_OR_RETURN(std::unique_ptr<Session> session, server_->NewSession(def, so));
      for (int w = 0; w < absl::GetFlag(FLAGS_warmup) + 1; ++w) {
        RETURN_IF_ERROR(session->Run({}, {}, {"step"}).status());
      }
      std::vector<double> ms;
      for (int k = 0; k < absl::GetFlag(FLAGS_steps); ++k) {
        RETURN_IF_ERROR(Barrier());
        const Clock::time_point t0 = Clock::now();
        RETURN_IF_ERROR(session->Run({}, {}, {"step"}).status());
        ms.push_back(MsSince(t0));
      }
      names.push_back(absl::StrCat(bucket == 0 ? "unfused" : "fused", "_n", n_, "_", count, "x",
                                   floats));
      medians.push_back(bench::Median(ms));
    }
  }
  return Report(names, medians, [](size_t, const std::string& name, double ms) {
    std::printf("allreduce_%s: %.3f ms/step\n", name.c_str(), ms);
  });
}

int RankMain() {
  const int rank = absl::GetFlag(FLAGS_rank);
  absl::Status s = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<int64_t> ports, ParseList("ports", absl::GetFlag(FLAGS_ports)));
    Rank r(rank, static_cast<int>(ports.size()));
    RETURN_IF_ERROR(r.Start(ports));
    if (absl::GetFlag(FLAGS_mode) == "fused") {
      std::vector<std::pair<int64_t, int64_t>> sets;
      for (absl::string_view item : absl::StrSplit(absl::GetFlag(FLAGS_grads), ',', absl::SkipEmpty())) {
        std::vector<std::string> parts = absl::StrSplit(item, 'x');
        int64_t count, floats;
        if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &count) ||
            !absl::SimpleAtoi(parts[1], &floats) || count <= 0 || floats <= 0) {
          return absl::InvalidArgumentError(absl::StrCat("--grads: bad set '", item, "'"));
        }
        sets.emplace_back(count, floats);
      }
      RETURN_IF_ERROR(r.Fused(sets));
    } else {
      ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ParseList("sizes", absl::GetFlag(FLAGS_sizes)));
      RETURN_IF_ERROR(r.Busbw(sizes));
    }
    return r.Finish();
  }();
  if (!s.ok()) {
    std::fprintf(stderr, "allreduce rank %d: error: %s\n", rank, std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}

// ----------------------------------------------------------------- parent

// Ports the kernel hands out now; closed again, so a rare race is possible.
absl::StatusOr<std::vector<int>> FreePorts(int n) {
  std::vector<int> fds, ports;
  for (int i = 0; i < n; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return absl::UnavailableError("cannot pick a free port on 127.0.0.1");
    }
    fds.push_back(fd);
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) close(fd);
  return ports;
}

// Runs N ranks of this program; fails when any fails or all take > 20 min.
absl::Status RunGroup(int n, int argc, char** argv) {
  ASSIGN_OR_RETURN(std::vector<int> ports, FreePorts(n));
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    std::vector<std::string> args(argv, argv + argc);
    args.push_back(absl::StrCat("--rank=", r));
    args.push_back(absl::StrCat("--ports=", absl::StrJoin(ports, ",")));
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return absl::InternalError("fork failed");
    if (pid == 0) {
      std::vector<char*> cargs;
      for (std::string& a : args) cargs.push_back(a.data());
      cargs.push_back(nullptr);
      execv("/proc/self/exe", cargs.data());
      _exit(127);
    }
    pids.push_back(pid);
  }
  const absl::Time deadline = absl::Now() + absl::Minutes(20);
  int failed = 0;
  size_t left = pids.size();
  while (left > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      --left;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
      if (failed > 0) {
        for (pid_t p : pids) kill(p, SIGKILL);
      }
      continue;
    }
    if (absl::Now() > deadline) {
      for (pid_t p : pids) kill(p, SIGKILL);
      failed = 1;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  if (failed > 0) return absl::InternalError(absl::StrCat("a rank of the n=", n, " group failed"));
  return absl::OkStatus();
}

int ParentMain(int argc, char** argv) {
  absl::StatusOr<std::vector<int64_t>> ns = ParseList("n", absl::GetFlag(FLAGS_n));
  if (!ns.ok()) {
    std::fprintf(stderr, "allreduce: error: %s\n", std::string(ns.status().message()).c_str());
    return 1;
  }
  int rc = 0;
  for (int64_t n : *ns) {
    if (n < 2) continue;
    absl::Status s = RunGroup(static_cast<int>(n), argc, argv);
    if (!s.ok()) {
      std::fprintf(stderr, "allreduce: error: %s\n", std::string(s.message()).c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_rank) >= 0) return sluice::RankMain();
  return sluice::ParentMain(argc, argv);
}
