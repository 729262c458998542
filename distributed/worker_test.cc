// Worker: two tasks in one process ("/job:ps/replica:0/task:0" with CPU:0,
// "/job:worker/replica:0/task:0" with CPU:0 and CPU:1) wired through an
// in-process WorkerCache. Graphs are placed over both tasks' devices,
// partitioned, registered per task and run with one step id on both, as a
// master would: cross-task data and control edges, feeds and fetches, a
// variable shared by two sessions' graphs, RecvTensor before RunGraph, error
// propagation, AbortStep, dead peers, step deadlines, unknown handles, bad
// partitions and CleanupStep.
#include "distributed/worker.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "distributed/in_process_worker_cache.h"
#include "distributed/master_session.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "graph/function_builder.h"
#include "ops/builtins.h"
#include "ops/data/dataset_builder.h"
#include "ops/functional/functional_ops.h"
#include "ops/collective/collective_ops.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"
#include "placement/partition.h"
#include "placement/placer.h"
#include "runtime/client_graph.h"
#include "runtime/rendezvous.h"

namespace sluice {
namespace {

constexpr char kPs[] = "/job:ps/replica:0/task:0";
constexpr char kWk[] = "/job:worker/replica:0/task:0";

std::string PsCpu() { return absl::StrCat(kPs, "/device:CPU:0"); }
std::string WkCpu(int i) { return absl::StrCat(kWk, "/device:CPU:", i); }

bool Contains(const absl::Status& s, absl::string_view needle) {
  return absl::StrContains(s.message(), needle);
}

Tensor Mat(std::vector<float> v, int64_t rows, int64_t cols) {
  return Tensor::FromVector<float>(v, TensorShape({rows, cols}));
}
std::vector<float> Values(const Tensor& t) {
  auto f = t.flat<float>();
  return std::vector<float>(f.begin(), f.end());
}

std::unique_ptr<Worker> MakeWorker(const std::string& task, int virtual_cpus, WorkerCache* peers,
                                   int64_t timeout_ms,
                                   absl::Duration graph_idle_ttl = absl::Hours(1)) {
  WorkerOptions opts;
  opts.task = task;
  opts.session.ops = BuiltinOps();
  opts.session.kernels = BuiltinKernels();
  opts.session.devices.cpu_threads = 2;
  opts.session.devices.num_virtual_cpus = virtual_cpus;
  opts.session.devices.virtual_cpu_threads = 1;
  opts.session.devices.cpu_memory_limit = int64_t{1} << 30;
  opts.peers = peers;
  opts.default_timeout_ms = timeout_ms;
  opts.graph_idle_ttl = graph_idle_ttl;
  absl::StatusOr<std::unique_ptr<Worker>> w = Worker::Create(opts);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? *std::move(w) : nullptr;
}

// The two tasks. The cache is declared first so it outlives the workers.
class Cluster {
 public:
  explicit Cluster(int64_t timeout_ms = 10000, absl::Duration graph_idle_ttl = absl::Hours(1))
      : ps_(MakeWorker(kPs, 0, &cache_, timeout_ms, graph_idle_ttl)),
        wk_(MakeWorker(kWk, 1, &cache_, timeout_ms, graph_idle_ttl)) {
    cache_.Add(kPs, ps_.get());
    cache_.Add(kWk, wk_.get());
  }
  // The workers fetch from each other through the cache: stop that first.
  ~Cluster() { cache_.Quiesce(); }
  Worker* ps() { return ps_.get(); }
  Worker* wk() { return wk_.get(); }
  Worker* Get(const std::string& task) { return task == kPs ? ps() : wk(); }
  InProcessWorkerCache& cache() { return cache_; }
  std::vector<Device*> devices() {
    std::vector<Device*> out = ps_->devices();
    for (Device* d : wk_->devices()) out.push_back(d);
    return out;
  }
  // What a master does when a step fails or is abandoned.
  void AbortEverywhere(int64_t step, const absl::Status& why) {
    ASSERT_TRUE(ps_->AbortStep(step, why).ok());
    ASSERT_TRUE(wk_->AbortStep(step, why).ok());
  }

 private:
  InProcessWorkerCache cache_;
  std::unique_ptr<Worker> ps_;
  std::unique_ptr<Worker> wk_;
};

// One task's share of a registered graph.
struct TaskGraph {
  std::string handle;
  std::vector<int> args;
  std::vector<int> retvals;
  std::map<std::string, GraphDef> partitions;
};
using Registered = std::map<std::string, TaskGraph>;  // task -> share

// Client graph -> place over both tasks -> partition -> register per task,
// as a master does.
absl::StatusOr<Registered> Register(Cluster& c, const Scope& s,
                                    const std::vector<std::string>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets,
                                    const std::string& session = "s1") {
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(ClientGraph cg, BuildClientGraph(*s.graph(), feeds, fetches, targets));
  // Each fetched value is handed out by the task that computes it (the
  // placer would otherwise put every _Retval on the first device).
  for (Node* n : cg.graph->nodes()) {
    if (n->op() == "_Retval") n->set_requested_device(n->input_edge(0)->src->requested_device());
  }
  RETURN_IF_ERROR(PlaceGraph(cg.graph.get(), c.devices(), *BuiltinKernels(), {}));
  ASSIGN_OR_RETURN(auto parts, Partition(*cg.graph));
  Registered out;
  for (auto& [device, def] : parts) {
    TaskGraph& tg = out[TaskOfDevice(device)];
    for (const NodeDef& n : def.node()) {
      if (n.op() == "_Arg") tg.args.push_back(static_cast<int>(n.attr().at("index").i()));
      if (n.op() == "_Retval") tg.retvals.push_back(static_cast<int>(n.attr().at("index").i()));
    }
    tg.partitions[device] = def;
  }
  for (auto& [task, tg] : out) {
    ASSIGN_OR_RETURN(tg.handle, c.Get(task)->RegisterGraph(session, tg.partitions));
  }
  return out;
}

RunGraphArgs ArgsFor(const TaskGraph& tg, int64_t step, const std::vector<Tensor>& feeds,
                     int64_t timeout_ms = 0) {
  RunGraphArgs a;
  a.graph_handle = tg.handle;
  a.step_id = step;
  for (int i : tg.args) a.feeds[i] = feeds[i];
  a.retval_indices = tg.retvals;
  a.timeout_ms = timeout_ms;
  return a;
}

struct StepResult {
  std::map<std::string, absl::Status> status;  // per task
  std::map<int, Tensor> fetched;
  bool ok() const {
    for (const auto& [task, s] : status) {
      if (!s.ok()) return false;
    }
    return true;
  }
  std::string Describe() const {
    std::string out;
    for (const auto& [task, s] : status) absl::StrAppend(&out, task, ": ", s.ToString(), "; ");
    return out;
  }
};

// Runs the step on every task at once, then cleans it up everywhere.
StepResult RunStep(Cluster& c, const Registered& g, int64_t step,
                   const std::vector<Tensor>& feeds = {}) {
  StepResult result;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (const auto& [task, tg] : g) {
    threads.emplace_back([&, task = task, tg = &tg] {
      std::map<int, Tensor> out;
      absl::Status s = c.Get(task)->RunGraph(ArgsFor(*tg, step, feeds), &out);
      std::lock_guard<std::mutex> lock(mu);
      result.status[task] = s;
      for (auto& [i, t] : out) result.fetched[i] = t;
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& [task, tg] : g) EXPECT_TRUE(c.Get(task)->CleanupStep(step).ok());
  return result;
}

// x (worker CPU:0) -> y = x w (w on ps) -> h = -y (worker CPU:1) -> z = h + w
// (ps); `after` on ps waits (control edge) on `side` (worker CPU:1).
Scope CrossTaskModel() {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Scope ps = s.WithDevice(PsCpu());
  Scope w0 = s.WithDevice(WkCpu(0));
  Scope w1 = s.WithDevice(WkCpu(1));
  Output x = ops::Placeholder(w0.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({2, 2})});
  Output w = ops::Const(ps.WithOpName("w"), {1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}));
  Output y = ops::MatMul(w0.WithOpName("y"), x, w);
  Output h = ops::Neg(w1.WithOpName("h"), y);
  ops::Add(ps.WithOpName("z"), h, w);
  Output side = ops::Square(w1.WithOpName("side"), x);
  ops::Identity(ps.WithOpName("after").WithControlDependencies(std::vector<Output>{side}), w);
  return s;
}

void CheckCrossTaskStep(const StepResult& r, float base) {
  ASSERT_TRUE(r.ok()) << r.Describe();
  ASSERT_EQ(r.fetched.size(), 3u);
  // x = [[b, b+1], [b+2, b+3]], w = [[1, 2], [3, 4]].
  const float b = base;
  std::vector<float> y = {b * 1 + (b + 1) * 3, b * 2 + (b + 1) * 4, (b + 2) * 1 + (b + 3) * 3,
                          (b + 2) * 2 + (b + 3) * 4};
  EXPECT_EQ(Values(r.fetched.at(0)), y);
  EXPECT_EQ(Values(r.fetched.at(1)),
            (std::vector<float>{1 - y[0], 2 - y[1], 3 - y[2], 4 - y[3]}));
  EXPECT_EQ(Values(r.fetched.at(2)), (std::vector<float>{1, 2, 3, 4}));
}

Tensor CrossTaskFeed(float base) { return Mat({base, base + 1, base + 2, base + 3}, 2, 2); }

TEST(WorkerTest, CrossTaskDataAndControlEdges) {
  Cluster c;
  absl::StatusOr<Registered> g = Register(c, CrossTaskModel(), {"x"}, {"y", "z", "after"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->size(), 2u);
  EXPECT_EQ(g->at(kWk).partitions.size(), 2u);  // CPU:0 and CPU:1
  EXPECT_EQ(g->at(kWk).args, std::vector<int>{0});
  for (int step = 1; step <= 5; ++step) {
    CheckCrossTaskStep(RunStep(c, *g, step, {CrossTaskFeed(step)}), step);
  }
  // Several steps in flight at once, each on both tasks.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        const int step = 100 + 10 * t + i;
        CheckCrossTaskStep(RunStep(c, *g, step, {CrossTaskFeed(step)}), step);
      }
    });
  }
  for (auto& t : threads) t.join();
}

TEST(WorkerTest, VariableSharedByTwoSessionsGraphs) {
  Cluster c;
  // Session 1: creates and initializes v on the ps, and adds p^2 (computed
  // on the worker) to it.
  Scope s1 = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit v = ops::VariableWithInit(s1.WithDevice(PsCpu()).WithOpName("v"), {1.f, 2.f});
  Output p = ops::Placeholder(s1.WithDevice(WkCpu(0)).WithOpName("p"), DT_FLOAT,
                              {.shape = TensorShape({2})});
  Output d = ops::Square(s1.WithDevice(WkCpu(0)).WithOpName("d"), p);
  ops::AssignAdd(s1.WithDevice(PsCpu()).WithOpName("upd"), v.var, d);
  absl::StatusOr<Registered> init = Register(c, s1, {}, {}, {"v/Assign"}, "s1");
  ASSERT_TRUE(init.ok()) << init.status();
  absl::StatusOr<Registered> upd = Register(c, s1, {"p"}, {}, {"upd"}, "s1");
  ASSERT_TRUE(upd.ok()) << upd.status();

  // Session 2: its own graph naming the same variable; reads it on the worker.
  Scope s2 = Scope::NewRootScope(BuiltinOps());
  Output v2 = ops::Variable(s2.WithDevice(PsCpu()).WithOpName("v"), TensorShape({2}), DT_FLOAT);
  Output upd2 = ops::AssignAdd(s2.WithDevice(PsCpu()).WithOpName("upd2"), v2, {10.f, 10.f});
  Output value = ops::Identity(s2.WithDevice(PsCpu()).WithOpName("value"), upd2);
  ops::Neg(s2.WithDevice(WkCpu(0)).WithOpName("read"), value);
  absl::StatusOr<Registered> read = Register(c, s2, {}, {"read"}, {}, "s2");
  ASSERT_TRUE(read.ok()) << read.status();

  StepResult r = RunStep(c, *init, 1);
  ASSERT_TRUE(r.ok()) << r.Describe();
  r = RunStep(c, *upd, 2, {Tensor::FromVector<float>({3.f, 4.f})});
  ASSERT_TRUE(r.ok()) << r.Describe();  // v = [10, 18]
  r = RunStep(c, *read, 3);
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(Values(r.fetched.at(0)), (std::vector<float>{-20.f, -28.f}));
  r = RunStep(c, *upd, 4, {Tensor::FromVector<float>({1.f, 1.f})});
  ASSERT_TRUE(r.ok()) << r.Describe();
  r = RunStep(c, *read, 5);
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(Values(r.fetched.at(0)), (std::vector<float>{-31.f, -39.f}));
}

// a (ps) -> b = -a (worker).
Scope PsToWorkerModel() {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Const(s.WithDevice(PsCpu()).WithOpName("a"), {7.f, 8.f});
  ops::Neg(s.WithDevice(WkCpu(0)).WithOpName("b"), a);
  return s;
}

std::string SendKey(const TaskGraph& tg, int64_t step) {
  for (const auto& [device, def] : tg.partitions) {
    for (const NodeDef& n : def.node()) {
      if (n.op() != "_Send") continue;
      const auto& a = n.attr();
      return Rendezvous::CreateKey(step, a.at("send_device").s(),
                                   static_cast<uint64_t>(a.at("send_device_incarnation").i()),
                                   a.at("recv_device").s(), a.at("tensor_name").s());
    }
  }
  return "";
}

TEST(WorkerTest, RecvTensorArrivingBeforeRunGraph) {
  Cluster c;
  absl::StatusOr<Registered> g = Register(c, PsToWorkerModel(), {}, {"b"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->size(), 2u);

  // A peer's RecvTensor reaches the ps before the master's RunGraph does.
  const std::string key = SendKey(g->at(kPs), 11);
  ASSERT_FALSE(key.empty());
  absl::Notification received;
  absl::StatusOr<Tensor> got;
  std::thread peer([&] {
    got = c.ps()->RecvTensor(11, key, 5000);
    received.Notify();
  });
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(received.HasBeenNotified());
  std::map<int, Tensor> out;
  absl::Status ps_status = c.ps()->RunGraph(ArgsFor(g->at(kPs), 11, {}), &out);
  peer.join();
  ASSERT_TRUE(ps_status.ok()) << ps_status;
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Values(*got), (std::vector<float>{7.f, 8.f}));
  ASSERT_TRUE(c.ps()->CleanupStep(11).ok());

  // The same through the worker: its RunGraph starts first and fetches.
  StepResult wk_result;
  std::thread wk([&] {
    std::map<int, Tensor> o;
    wk_result.status[kWk] = c.wk()->RunGraph(ArgsFor(g->at(kWk), 12, {}), &o);
    wk_result.fetched = o;
  });
  absl::SleepFor(absl::Milliseconds(200));
  ASSERT_TRUE(c.ps()->RunGraph(ArgsFor(g->at(kPs), 12, {}), &out).ok());
  wk.join();
  ASSERT_TRUE(wk_result.ok()) << wk_result.Describe();
  EXPECT_EQ(Values(wk_result.fetched.at(0)), (std::vector<float>{-7.f, -8.f}));
}

// w (ps) and x (worker) -> mm = x w (worker) -> r = -mm (ps).
Scope FailingModel() {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithDevice(WkCpu(0)).WithOpName("x"), DT_FLOAT);
  Output w = ops::Const(s.WithDevice(PsCpu()).WithOpName("w"), {1.f}, TensorShape({3, 3}));
  Output mm = ops::MatMul(s.WithDevice(WkCpu(0)).WithOpName("mm"), x, w);
  ops::Neg(s.WithDevice(PsCpu()).WithOpName("r"), mm);
  return s;
}

TEST(WorkerTest, ErrorInOneTaskThenAbortStopsTheOther) {
  Cluster c;
  absl::StatusOr<Registered> g = Register(c, FailingModel(), {"x"}, {"r"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<Tensor> bad = {Tensor(DT_FLOAT, TensorShape({2, 5}))};
  // The ps waits for mm from the worker.
  absl::Status ps_status;
  absl::Time ps_end;
  std::thread ps([&] {
    std::map<int, Tensor> out;
    ps_status = c.ps()->RunGraph(ArgsFor(g->at(kPs), 21, bad), &out);
    ps_end = absl::Now();
  });
  std::map<int, Tensor> out;
  absl::Status wk_status = c.wk()->RunGraph(ArgsFor(g->at(kWk), 21, bad), &out);
  EXPECT_EQ(wk_status.code(), absl::StatusCode::kInvalidArgument) << wk_status;
  EXPECT_TRUE(Contains(wk_status, "'mm'")) << wk_status;
  EXPECT_TRUE(Contains(wk_status, kWk)) << wk_status;
  // The master aborts the step on the other task.
  const absl::Time abort_at = absl::Now();
  ASSERT_TRUE(c.ps()->AbortStep(21, wk_status).ok());
  ps.join();
  EXPECT_LT(ps_end - abort_at, absl::Seconds(2));
  EXPECT_FALSE(ps_status.ok());
  EXPECT_TRUE(Contains(ps_status, "mm")) << ps_status;
  // A late RunGraph of the aborted step fails at once.
  const absl::Time start = absl::Now();
  absl::Status late = c.ps()->RunGraph(ArgsFor(g->at(kPs), 21, bad), &out);
  EXPECT_FALSE(late.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  c.AbortEverywhere(21, wk_status);
}

TEST(WorkerTest, AbortStepReleasesAWaitingRunGraph) {
  Cluster c;
  absl::StatusOr<Registered> g = Register(c, PsToWorkerModel(), {}, {"b"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  // The worker waits for `a`, which the ps never sends (it never runs).
  absl::Status wk_status;
  absl::Time wk_end;
  std::thread wk([&] {
    std::map<int, Tensor> out;
    wk_status = c.wk()->RunGraph(ArgsFor(g->at(kWk), 31, {}), &out);
    wk_end = absl::Now();
  });
  absl::SleepFor(absl::Milliseconds(200));
  const absl::Time abort_at = absl::Now();
  c.AbortEverywhere(31, absl::AbortedError("client cancelled step 31"));
  wk.join();
  EXPECT_LT(wk_end - abort_at, absl::Seconds(2));
  EXPECT_EQ(wk_status.code(), absl::StatusCode::kAborted) << wk_status;
  EXPECT_TRUE(Contains(wk_status, "client cancelled step 31")) << wk_status;

  // Aborted steps stay aborted; once cleaned up they are over for good (a
  // late RecvTensor or RunGraph fails at once), and the next id runs.
  std::map<int, Tensor> out;
  EXPECT_EQ(c.ps()->RunGraph(ArgsFor(g->at(kPs), 31, {}), &out).code(),
            absl::StatusCode::kAborted);
  ASSERT_TRUE(c.ps()->CleanupStep(31).ok());
  ASSERT_TRUE(c.wk()->CleanupStep(31).ok());
  const absl::Time late_at = absl::Now();
  absl::StatusOr<Tensor> late = c.ps()->RecvTensor(31, SendKey(g->at(kPs), 31), 5000);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kAborted) << late.status();
  EXPECT_LT(absl::Now() - late_at, absl::Seconds(1));
  EXPECT_EQ(c.ps()->RunGraph(ArgsFor(g->at(kPs), 31, {}), &out).code(),
            absl::StatusCode::kAborted);
  StepResult r = RunStep(c, *g, 32);
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(Values(r.fetched.at(0)), (std::vector<float>{-7.f, -8.f}));
}

TEST(WorkerTest, DeadPeerFailsTheStepNamingIt) {
  Cluster c;
  absl::StatusOr<Registered> g = Register(c, PsToWorkerModel(), {}, {"b"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  c.cache().SetDead(kPs, true);
  const absl::Time start = absl::Now();
  std::map<int, Tensor> out;
  absl::Status s = c.wk()->RunGraph(ArgsFor(g->at(kWk), 41, {}), &out);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_TRUE(Contains(s, absl::StrCat("from ", kPs))) << s;
}

TEST(WorkerTest, StepDeadline) {
  Cluster c;
  absl::StatusOr<Registered> g = Register(c, PsToWorkerModel(), {}, {"b"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  const absl::Time start = absl::Now();
  std::map<int, Tensor> out;
  absl::Status s = c.wk()->RunGraph(ArgsFor(g->at(kWk), 51, {}, /*timeout_ms=*/300), &out);
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(250));
  EXPECT_LT(took, absl::Seconds(2));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_TRUE(Contains(s, kWk)) << s;
  EXPECT_TRUE(Contains(s, "step 51")) << s;
  c.AbortEverywhere(51, s);  // releases the fetch still waiting on the ps
}

TEST(WorkerTest, UnknownAndDeregisteredHandles) {
  Cluster c;
  std::map<int, Tensor> out;
  RunGraphArgs args;
  args.graph_handle = "graph/99/abc";
  absl::Status s = c.wk()->RunGraph(args, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_TRUE(Contains(s, kWk)) << s;
  EXPECT_TRUE(Contains(s, "graph/99/abc")) << s;

  absl::StatusOr<Registered> g = Register(c, PsToWorkerModel(), {}, {"b"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  const std::string handle = g->at(kPs).handle;
  ASSERT_TRUE(c.ps()->DeregisterGraph(handle).ok());
  args = ArgsFor(g->at(kPs), 61, {});
  EXPECT_EQ(c.ps()->RunGraph(args, &out).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(c.ps()->DeregisterGraph(handle).code(), absl::StatusCode::kNotFound);
  // Handles are unique per registration.
  absl::StatusOr<Registered> g2 = Register(c, PsToWorkerModel(), {}, {"b"}, {});
  ASSERT_TRUE(g2.ok()) << g2.status();
  EXPECT_NE(g2->at(kPs).handle, handle);
}

// A graph whose client went away is dropped after graph_idle_ttl unused; a
// graph in use stays (a RunGraph, even a refused one, counts as a use).
TEST(WorkerTest, GraphsUnusedPastTheirIdleLimitAreDropped) {
  Cluster c(10000, absl::Milliseconds(300));
  absl::StatusOr<Registered> used = Register(c, PsToWorkerModel(), {}, {"b"}, {});
  absl::StatusOr<Registered> idle = Register(c, PsToWorkerModel(), {}, {"b"}, {});
  ASSERT_TRUE(used.ok() && idle.ok());
  std::map<int, Tensor> out;
  for (int i = 0; i < 8; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
    RunGraphArgs touch = ArgsFor(used->at(kPs), 100 + i, {});
    touch.feeds[99] = Tensor::Scalar<float>(0);  // refused, after the lookup
    EXPECT_EQ(c.ps()->RunGraph(touch, &out).code(), absl::StatusCode::kInvalidArgument);
  }
  // The next registration sweeps.
  ASSERT_TRUE(Register(c, PsToWorkerModel(), {}, {"b"}, {}).ok());
  EXPECT_EQ(c.ps()->DeregisterGraph(idle->at(kPs).handle).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(c.ps()->DeregisterGraph(used->at(kPs).handle).ok());
  RunGraphArgs gone = ArgsFor(idle->at(kPs), 200, {});
  absl::Status s = c.ps()->RunGraph(gone, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;  // the master registers again
  EXPECT_TRUE(Contains(s, "idle limit")) << s;
}

// A ps given a variable memory budget refuses a graph whose variables do not
// fit, naming the largest; the same table split so its part fits is held.
TEST(WorkerTest, AVariableMemoryBudgetRefusesAWholeTableAndHoldsAPart) {
  WorkerOptions opts;
  opts.task = kPs;
  opts.session.ops = BuiltinOps();
  opts.session.kernels = BuiltinKernels();
  opts.session.devices.cpu_threads = 1;
  opts.variable_memory_budget_bytes = 3 << 20;  // 3 MiB
  absl::StatusOr<std::unique_ptr<Worker>> ps = Worker::Create(opts);
  ASSERT_TRUE(ps.ok()) << ps.status();
  auto table = [](const std::string& name, int64_t rows) {
    GraphDef def;
    NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op("VariableV2");
    (*n->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
    tensorflow::TensorShapeProto* shape = (*n->mutable_attr())["shape"].mutable_shape();
    shape->add_dim()->set_size(rows);
    shape->add_dim()->set_size(1024);
    (*n->mutable_attr())["container"].set_s("");
    (*n->mutable_attr())["shared_name"].set_s("");
    return def;
  };
  // 1,024 x 1,024 floats: 4 MiB, over the budget.
  absl::StatusOr<std::string> whole = (*ps)->RegisterGraph("s1", {{PsCpu(), table("emb", 1024)}});
  ASSERT_EQ(whole.status().code(), absl::StatusCode::kResourceExhausted) << whole.status();
  EXPECT_TRUE(Contains(whole.status(), kPs)) << whole.status();
  EXPECT_TRUE(Contains(whole.status(), "emb 4.0 MiB")) << whole.status();
  EXPECT_TRUE(Contains(whole.status(), "budget of 3.0 MiB")) << whole.status();
  // Half of it (the ps's part of a table split over two): 2 MiB, held.
  absl::StatusOr<std::string> part =
      (*ps)->RegisterGraph("s1", {{PsCpu(), table("emb/part_0", 512)}});
  EXPECT_TRUE(part.ok()) << part.status();
}

TEST(WorkerTest, RegisterGraphRefusesBadPartitions) {
  Cluster c;
  absl::StatusOr<Registered> g = Register(c, PsToWorkerModel(), {}, {"b"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  // The ps's partition handed to the worker.
  absl::StatusOr<std::string> h = c.wk()->RegisterGraph("s1", g->at(kPs).partitions);
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument) << h.status();
  EXPECT_TRUE(Contains(h.status(), PsCpu())) << h.status();
  EXPECT_TRUE(Contains(h.status(), absl::StrCat("task ", kWk))) << h.status();

  // An op the registry does not have.
  GraphDef def;
  NodeDef* n = def.add_node();
  n->set_name("mystery");
  n->set_op("NoSuchOp");
  h = c.wk()->RegisterGraph("s1", {{WkCpu(0), def}});
  EXPECT_FALSE(h.ok());
  EXPECT_TRUE(Contains(h.status(), "mystery")) << h.status();
  EXPECT_TRUE(Contains(h.status(), kWk)) << h.status();

  EXPECT_EQ(c.wk()->RegisterGraph("s1", {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WorkerTest, FeedsAndFetchesAreChecked) {
  Cluster c;
  absl::StatusOr<Registered> g = Register(c, CrossTaskModel(), {"x"}, {"y", "z", "after"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  std::map<int, Tensor> out;
  RunGraphArgs args = ArgsFor(g->at(kWk), 71, {CrossTaskFeed(1)});
  args.feeds.clear();
  absl::Status s = c.wk()->RunGraph(args, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "not fed")) << s;

  args.feeds[0] = Tensor::FromVector<int32_t>({1, 2, 3, 4});
  s = c.wk()->RunGraph(args, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "int32")) << s;

  args = ArgsFor(g->at(kWk), 71, {CrossTaskFeed(1)});
  args.retval_indices = {17};
  s = c.wk()->RunGraph(args, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "_Retval 17")) << s;
}

TEST(WorkerTest, StatusAndCreateErrors) {
  Cluster c;
  absl::StatusOr<WorkerInfo> ps = c.ps()->GetStatus();
  absl::StatusOr<WorkerInfo> wk = c.wk()->GetStatus();
  ASSERT_TRUE(ps.ok() && wk.ok());
  EXPECT_EQ(ps->task, kPs);
  ASSERT_EQ(wk->devices.size(), 2u);
  EXPECT_EQ(wk->devices[1].name, WkCpu(1));
  EXPECT_EQ(wk->devices[0].device_type, "CPU");
  EXPECT_EQ(wk->devices[0].memory_limit, int64_t{1} << 30);
  EXPECT_GT(ps->incarnation, 0);
  EXPECT_NE(ps->incarnation, wk->incarnation);
  EXPECT_EQ(c.ps()->task(), kPs);

  WorkerOptions opts;
  opts.task = "/job:ps/replica:0/task:0";
  EXPECT_EQ(Worker::Create(opts).status().code(), absl::StatusCode::kInvalidArgument);
  opts.session.ops = BuiltinOps();
  opts.session.kernels = BuiltinKernels();
  opts.task = "/job:ps/replica:0/task:0/device:CPU:0";
  EXPECT_EQ(Worker::Create(opts).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TaskOfDevice("/job:ps/replica:0/task:3/device:GPU:1"), "/job:ps/replica:0/task:3");
}

// y<i> = the sum of x0 (ps CPU:0), x1 (worker CPU:0) and x2 (worker CPU:1):
// members on one task meet in its mailbox, the others through
// CollectivePush.
Scope AllReduceModel() {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::CollectiveSpec spec;
  spec.group_key = 3;
  spec.instance_key = 1;
  spec.group_devices = {PsCpu(), WkCpu(0), WkCpu(1)};
  spec.timeout_seconds = 5;
  for (int i = 0; i < 3; ++i) {
    Scope on = s.WithDevice(spec.group_devices[i]);
    Output x = ops::Placeholder(on.WithOpName(absl::StrCat("x", i)), DT_FLOAT,
                                {.shape = TensorShape({3})});
    ops::AllReduce(on.WithOpName(absl::StrCat("y", i)), x, ReduceOp::kSum, spec);
  }
  return s;
}

TEST(WorkerTest, CollectiveReduceAcrossTasks) {
  Cluster c;
  absl::StatusOr<Registered> g =
      Register(c, AllReduceModel(), {"x0", "x1", "x2"}, {"y0", "y1", "y2"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  for (int step = 1; step <= 3; ++step) {
    const float b = static_cast<float>(step);
    StepResult r = RunStep(c, *g, step,
                           {Tensor::FromVector<float>({b, 1, 2}), Tensor::FromVector<float>({b, 10, 20}),
                            Tensor::FromVector<float>({b, 100, 200})});
    ASSERT_TRUE(r.ok()) << r.Describe();
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(Values(r.fetched.at(i)), (std::vector<float>{3 * b, 111, 222})) << "y" << i;
    }
  }
  // A push for a device the task does not have.
  absl::Status bad = c.wk()->CollectivePush(PsCpu(), "k", Tensor::Scalar<float>(1), 1000);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
  EXPECT_TRUE(Contains(bad, kWk)) << bad;
  ASSERT_NE(c.wk()->collective_executor(), nullptr);
}

TEST(WorkerTest, CollectiveWithADeadPeerFailsNamingIt) {
  Cluster c;
  absl::StatusOr<Registered> g =
      Register(c, AllReduceModel(), {"x0", "x1", "x2"}, {"y0", "y1", "y2"}, {});
  ASSERT_TRUE(g.ok()) << g.status();
  c.cache().SetDead(kPs, true);
  // Only the worker task runs its share: its members wait on (and push to)
  // the ps, which is unreachable.
  const TaskGraph& wk = g->at(kWk);
  std::vector<Tensor> feeds(3, Tensor::FromVector<float>({1, 2, 3}));
  std::map<int, Tensor> out;
  const absl::Time start = absl::Now();
  absl::Status s = c.wk()->RunGraph(ArgsFor(wk, 9, feeds), &out);
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s, kPs)) << s;
  EXPECT_TRUE(Contains(s, "unreachable")) << s;
  EXPECT_TRUE(c.wk()->CleanupStep(9).ok());
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// The master compiles run signatures with the step engine's CompileSignature,
// so it places automatically when asked, as a local session does: two 40 MiB
// variables on a task whose two devices hold 64 MiB each go one per device
// (without it, both go to the default device and do not fit).
TEST(MasterSessionTest, AutoPlacementSpreadsWhatDoesNotFitOneDevice) {
  constexpr int64_t kLimit = int64_t{64} << 20;
  WorkerOptions opts;
  opts.task = kWk;
  opts.session.ops = BuiltinOps();
  opts.session.kernels = BuiltinKernels();
  opts.session.devices.cpu_threads = 2;
  opts.session.devices.cpu_memory_limit = kLimit;
  opts.session.devices.num_virtual_cpus = 1;
  opts.session.devices.virtual_cpu_threads = 1;
  opts.session.devices.virtual_cpu_memory_limit = kLimit;

  Scope s = Scope::NewRootScope(BuiltinOps());
  const int64_t n = 10 << 20;  // floats: 40 MiB
  std::vector<std::string> inits;
  for (const char* name : {"a", "b"}) {
    Output v = ops::Variable(s.WithOpName(name), TensorShape({n}), DT_FLOAT);
    Output zeros = ops::Fill(s.WithOpName(absl::StrCat(name, "_zeros")),
                             Input({n}), 0.0f);
    ops::Assign(s.WithOpName(absl::StrCat(name, "_init")), v, zeros);
    inits.push_back(absl::StrCat(name, "_init"));
  }
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<GraphDef> def = s.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();

  for (bool auto_place : {false, true}) {
    // A fresh task each time: variables outlive the sessions that made them.
    absl::StatusOr<std::unique_ptr<Worker>> worker = Worker::Create(opts);
    ASSERT_TRUE(worker.ok()) << worker.status();
    InProcessWorkerCache cache;
    cache.Add(kWk, worker->get());
    MasterSessionOptions master;
    master.workers = &cache;
    master.session.ops = BuiltinOps();
    master.session.kernels = BuiltinKernels();
    master.session.auto_place = auto_place;
    absl::StatusOr<std::unique_ptr<MasterSession>> session = MasterSession::Create(master, *def);
    ASSERT_TRUE(session.ok()) << session.status();
    RunMetadata metadata;
    absl::StatusOr<std::vector<Tensor>> out =
        (*session)->Run({}, {}, inits, {.output_partition_graphs = true}, &metadata);
    if (!auto_place) {
      // Everything on the default device, which cannot hold both.
      EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
      EXPECT_TRUE(Contains(out.status(), "out of memory on " + WkCpu(0))) << out.status();
    } else {
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(metadata.partition_graphs.size(), 2u);
    }
    ASSERT_TRUE((*session)->Close().ok());
  }
}

// Functions across tasks: the master inlines a call placed on the ps (its
// body runs there), and a dataset's map function runs on the worker through
// the FunctionRuntime its partition was registered with (the partition
// carries the graph's library).
TEST(MasterSessionTest, FunctionsRunOnEveryTask) {
  Cluster c;
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<NameAttrList> affine = DefineFunction(
      s, "affine64", {DT_INT64},
      [](Scope& b, std::vector<Output> a) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{ops::Add(b, ops::Mul(b, a[0], int64_t{3}), int64_t{1})};
      });
  ASSERT_TRUE(affine.ok()) << affine.status();
  Scope ps = s.WithDevice(kPs);
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice(kWk), DT_INT64);
  ops::CallFunction(ps.WithOpName("on_ps"), *affine, {x});
  Scope wk = s.WithDevice(kWk);
  data::Iterator it = data::Range(wk, 0, 3)
                          .Map(*affine, {{DT_INT64}, {TensorShape({})}})
                          .MakeInitializableIterator();
  std::vector<Output> next = it.GetNext();
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<GraphDef> def = s.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  MasterSessionOptions master;
  master.workers = &c.cache();
  master.session.ops = BuiltinOps();
  master.session.kernels = BuiltinKernels();
  absl::StatusOr<std::unique_ptr<MasterSession>> session = MasterSession::Create(master, *def);
  ASSERT_TRUE(session.ok()) << session.status();
  RunMetadata metadata;
  absl::StatusOr<std::vector<Tensor>> out =
      (*session)->Run({{"x:0", Tensor::Scalar<int64_t>(5)}}, {"on_ps:0"}, {},
                      {.output_partition_graphs = true}, &metadata);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<int64_t>()[0], 16);
  bool body_on_ps = false;
  for (const GraphDef& part : metadata.partition_graphs) {
    for (const NodeDef& n : part.node()) {
      if (n.name() == "on_ps/Mul") body_on_ps = absl::StartsWith(n.device(), kPs);
    }
  }
  EXPECT_TRUE(body_on_ps);
  ASSERT_TRUE((*session)->Run({}, {}, {it.initializer()->name()}).ok());
  for (int64_t want : {1, 4, 7}) {
    out = (*session)->Run({}, {next[0].name()}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<int64_t>()[0], want);
  }
  out = (*session)->Run({}, {next[0].name()}, {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange) << out.status();
  ASSERT_TRUE((*session)->Close().ok());
}

// A task that stops answering once a step runs (SIGSTOP, a partition): its
// RunGraph and AbortStep wait until `release` (at most 20 s), then go to the
// real worker; everything else goes there at once.
class HungWorker : public WorkerInterface {
 public:
  explicit HungWorker(WorkerInterface* real) : real_(real) {}
  absl::Notification release;

  absl::StatusOr<WorkerInfo> GetStatus() override { return real_->GetStatus(); }
  absl::StatusOr<std::string> RegisterGraph(
      const std::string& session, const std::map<std::string, GraphDef>& parts) override {
    return real_->RegisterGraph(session, parts);
  }
  absl::Status DeregisterGraph(const std::string& handle) override {
    return real_->DeregisterGraph(handle);
  }
  absl::Status RunGraph(const RunGraphArgs& args, std::map<int, Tensor>* retvals) override {
    release.WaitForNotificationWithTimeout(absl::Seconds(20));
    return real_->RunGraph(args, retvals);
  }
  absl::StatusOr<Tensor> RecvTensor(int64_t step, const std::string& key, int64_t ms) override {
    return real_->RecvTensor(step, key, ms);
  }
  absl::Status AbortStep(int64_t step, const absl::Status& reason) override {
    release.WaitForNotificationWithTimeout(absl::Seconds(20));
    return real_->AbortStep(step, reason);
  }
  absl::Status CleanupStep(int64_t step) override { return real_->CleanupStep(step); }
  absl::Status CollectivePush(const std::string& to, const std::string& key, const Tensor& value,
                              int64_t ms) override {
    return real_->CollectivePush(to, key, value, ms);
  }

 private:
  WorkerInterface* const real_;
};

// The step's root cause (a bad matmul on the worker) ends the step soon after
// it comes, although the ps never answers its RunGraph: the master does not
// wait for a task that stopped answering once another has failed the step
// (it used to wait for that call's RPC deadline, the step timeout + 2 s).
TEST(MasterSessionTest, AFailedStepEndsSoonThoughATaskHangs) {
  Cluster c;
  HungWorker hung_ps(c.ps());
  InProcessWorkerCache master_view;
  master_view.Add(kPs, &hung_ps);
  master_view.Add(kWk, c.wk());
  // mm = x w fails on the worker, needing nothing from the ps; r = -mm (ps).
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithDevice(WkCpu(0)).WithOpName("x"), DT_FLOAT);
  Output w = ops::Const(s.WithDevice(WkCpu(0)).WithOpName("w"), {1.f}, TensorShape({3, 3}));
  ops::Neg(s.WithDevice(PsCpu()).WithOpName("r"),
           ops::MatMul(s.WithDevice(WkCpu(0)).WithOpName("mm"), x, w));
  absl::StatusOr<GraphDef> def = s.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  MasterSessionOptions master;
  master.workers = &master_view;
  master.session.ops = BuiltinOps();
  master.session.kernels = BuiltinKernels();
  absl::StatusOr<std::unique_ptr<MasterSession>> session = MasterSession::Create(master, *def);
  ASSERT_TRUE(session.ok()) << session.status();
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Tensor>> out =
      (*session)->Run({{"x:0", Tensor(DT_FLOAT, TensorShape({2, 5}))}}, {"r:0"}, {});
  const absl::Duration took = absl::Now() - start;
  hung_ps.release.Notify();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_TRUE(Contains(out.status(), "'mm'")) << out.status();
  EXPECT_LT(took, absl::Seconds(5));  // the grace is 0.5 s; the hung call waits 20 s
  ASSERT_TRUE((*session)->Close().ok());
  session->reset();  // joins the straggler's call, released above
  master_view.Quiesce();
}

}  // namespace
}  // namespace sluice
