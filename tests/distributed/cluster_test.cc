// Real //tools:server processes on 127.0.0.1: the binary's contract (ready
// line, clean SIGTERM exit, one error line for bad flags), a graph trained
// over ps + two workers from this process (NewClusterSession and
// NewRemoteSession) against a local session, tasks killed with SIGKILL and
// restarted on the same port, and a 64 MiB tensor crossing tasks.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/cluster/launcher.h"
#include "distributed/cluster_session.h"
#include "distributed/master_session.h"
#include "gtest/gtest.h"
#include "session/direct_session.h"
#include "tests/distributed/test_credentials.h"
#include "ops/io/io_ops.h"
#include "sluice.h"
#include "tests/distributed/child_process.h"

namespace sluice {
namespace {

// Every process of these tests uses mutual TLS, as a launched job does.
const ::testing::Environment* const kTls =
    ::testing::AddGlobalTestEnvironment(new TestJobCredentials);

constexpr char kPs[] = "/job:ps/replica:0/task:0";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1";

std::string ServerPath() { return RunfilePath("tools/server"); }

// One server process per task of `spec`, started and restarted by name.
class ServerCluster {
 public:
  explicit ServerCluster(ClusterSpec spec) : spec_(std::move(spec)) {}

  const ClusterSpec& spec() const { return spec_; }

  // Starts (or restarts) job:task and waits for its ready line.
  ::testing::AssertionResult Start(const std::string& job, int task) {
    const std::string key = absl::StrCat(job, task);
    if (auto it = procs_.find(key); it != procs_.end()) it->second->Kill();
    static int runs = 0;  // every log file is new: readiness is read from it
    const int run = ++runs;
    absl::StatusOr<std::unique_ptr<ChildProcess>> p = ChildProcess::Start(
        {ServerPath(), "--cluster=" + spec_.ToJson(), "--job=" + job, absl::StrCat("--task=", task),
         "--threads=2"},
        {}, TestTmpPath(absl::StrCat("server-", key, "-", run, "-", getpid(), ".log")));
    if (!p.ok()) return ::testing::AssertionFailure() << p.status();
    ChildProcess* child = p->get();
    procs_[key] = *std::move(p);
    if (!child->WaitForOutput("listening on", absl::Seconds(10))) {
      return ::testing::AssertionFailure() << key << " not ready:\n" << child->Output();
    }
    return ::testing::AssertionSuccess();
  }

  ::testing::AssertionResult StartAll() {
    for (const auto& [job, addresses] : spec_.job_list()) {
      for (int t = 0; t < static_cast<int>(addresses.size()); ++t) {
        if (auto r = Start(job, t); !r) return r;
      }
    }
    return ::testing::AssertionSuccess();
  }

  ChildProcess* process(const std::string& job, int task) {
    auto it = procs_.find(absl::StrCat(job, task));
    return it == procs_.end() ? nullptr : it->second.get();
  }

 private:
  ClusterSpec spec_;
  std::map<std::string, std::unique_ptr<ChildProcess>> procs_;  // killed on destruction
};

// --- the server binary -----------------------------------------------------

struct Finished {
  int status = -1;
  std::string output;
};

// Runs the server to completion (bounded: killed after 10 s).
Finished RunServer(std::vector<std::string> args, const std::string& log_name) {
  args.insert(args.begin(), ServerPath());
  Finished f;
  auto p = ChildProcess::Start(args, {}, TestTmpPath(log_name));
  if (!p.ok()) return f;
  std::optional<int> status = (*p)->WaitForExit(absl::Seconds(10));
  f.status = status.has_value() ? *status : (*p)->Kill();
  f.output = (*p)->Output();
  return f;
}

int CountLines(const std::string& text, absl::string_view needle) {
  const std::string n_str(needle);
  int n = 0;
  for (size_t at = text.find(n_str); at != std::string::npos; at = text.find(n_str, at + 1)) ++n;
  return n;
}

TEST(ServerBinaryTest, ReadyWithinASecondAndSigtermExitsZero) {
  absl::StatusOr<std::vector<int>> ports = PickFreePorts(2);
  ASSERT_TRUE(ports.ok()) << ports.status();
  const std::string cluster =
      absl::StrCat("ps=127.0.0.1:", (*ports)[0], ";worker=127.0.0.1:", (*ports)[1]);
  const absl::Time start = absl::Now();
  auto p = ChildProcess::Start({ServerPath(), "--cluster=" + cluster, "--job=ps", "--task=0"}, {},
                               TestTmpPath("ready.log"));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE((*p)->WaitForOutput("listening on", absl::Seconds(5))) << (*p)->Output();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1)) << "ready line took too long";
  EXPECT_TRUE(absl::StrContains((*p)->Output(), absl::StrCat("127.0.0.1:", (*ports)[0])))
      << (*p)->Output();
  const absl::Time term = absl::Now();
  (*p)->Signal(SIGTERM);
  std::optional<int> status = (*p)->WaitForExit(absl::Seconds(5));
  ASSERT_TRUE(status.has_value()) << "still running 5 s after SIGTERM";
  EXPECT_LT(absl::Now() - term, absl::Seconds(2));
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << DescribeStatus(*status);
}

// The first non-loopback IPv4 address of this machine, if it has one.
std::optional<std::string> NonLoopbackAddress() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* a = list; a != nullptr && !found; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)) != nullptr) found = text;
  }
  freeifaddrs(list);
  return found;
}

bool Connects(const std::string& ip, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, ip.c_str(), &addr.sin_addr);
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// An insecure task named by a host name ("localhost" passes the loopback
// check) listens on loopback only, not on every interface.
TEST(ServerBinaryTest, InsecureLocalhostListensOnLoopbackOnly) {
  absl::StatusOr<std::vector<int>> ports = PickFreePorts(1);
  ASSERT_TRUE(ports.ok()) << ports.status();
  const int port = (*ports)[0];
  auto p = ChildProcess::Start({ServerPath(), absl::StrCat("--cluster=worker=localhost:", port),
                                "--job=worker", "--task=0", "--insecure"},
                               {}, TestTmpPath("insecure-localhost.log"));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE((*p)->WaitForOutput("listening on", absl::Seconds(5))) << (*p)->Output();
  EXPECT_TRUE(Connects("127.0.0.1", port));
  const std::optional<std::string> outside = NonLoopbackAddress();
  if (outside.has_value()) {
    EXPECT_FALSE(Connects(*outside, port)) << "reachable on " << *outside;
  }
  (*p)->Signal(SIGTERM);
  EXPECT_TRUE((*p)->WaitForExit(absl::Seconds(5)).has_value());
  if (!outside.has_value()) GTEST_SKIP() << "no non-loopback IPv4 address to try from";
}

TEST(ServerBinaryTest, BadFlagsExitOneWithOneErrorLine) {
  absl::StatusOr<std::vector<int>> ports = PickFreePorts(1);
  ASSERT_TRUE(ports.ok()) << ports.status();
  const std::string cluster = absl::StrCat("--cluster=ps=127.0.0.1:", (*ports)[0]);
  struct Case {
    std::vector<std::string> args;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {{cluster, "--job=nosuchjob"}, "nosuchjob"},
      {{cluster, "--job=ps", "--task=3"}, "out of range"},
      {{"--cluster=ps=127.0.0.1", "--job=ps"}, "127.0.0.1"},
      {{"--cluster=ps=127.0.0.1:1:2:x", "--job=ps"}, "ps"},
      // Plaintext only where every task is on loopback: a spec naming
      // another host is refused, whichever task this is.
      {{absl::StrCat(cluster, ",worker=10.1.2.3:2222"), "--job=ps", "--insecure"}, "10.1.2.3"},
      {{absl::StrCat("--cluster=worker=node-7.example:", (*ports)[0]), "--job=worker",
        "--insecure"},
       "node-7.example"},
  };
  int i = 0;
  for (const Case& c : cases) {
    Finished f = RunServer(c.args, absl::StrCat("bad-flags-", i++, ".log"));
    EXPECT_TRUE(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 1)
        << c.args[0] << ": " << DescribeStatus(f.status) << "\n" << f.output;
    EXPECT_EQ(CountLines(f.output, "server: error: "), 1) << f.output;
    EXPECT_TRUE(absl::StrContains(f.output, c.needle)) << c.needle << "\n" << f.output;
  }
}

TEST(ServerBinaryTest, PortInUseExitsOneNamingTheAddress) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string address = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
  Finished f = RunServer({"--cluster=ps=" + address, "--job=ps"}, "port-in-use.log");
  close(fd);
  EXPECT_TRUE(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 1)
      << DescribeStatus(f.status) << "\n" << f.output;
  EXPECT_EQ(CountLines(f.output, "server: error: "), 1) << f.output;
  EXPECT_TRUE(absl::StrContains(f.output, address)) << f.output;
}

// --- a graph over ps + 2 workers ----------------------------------------------

// y ~ tanh(x . w) + b: w and b on the ps, the matmul on worker 0, the loss
// on worker 1, SGD. With with_devices = false the same graph for a local
// session.
GraphDef TrainingGraph(bool with_devices) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  auto on = [&](const char* device) { return with_devices ? root.WithDevice(device) : root; };
  Scope ps = on("/job:ps/task:0"), w0 = on("/job:worker/task:0"), w1 = on("/job:worker/task:1");
  Output x = ops::Placeholder(w0.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({-1, 4})});
  Output y = ops::Placeholder(w1.WithOpName("y"), DT_FLOAT, {.shape = TensorShape({-1, 1})});
  ops::VariableAndInit w = ops::VariableWithInit(
      ps.WithOpName("w"), ops::Const(ps, {0.1f, -0.2f, 0.3f, 0.05f}, TensorShape({4, 1})));
  ops::VariableAndInit b =
      ops::VariableWithInit(ps.WithOpName("b"), ops::Const(ps, {0.5f}, TensorShape({1})));
  Output h = ops::Tanh(w0.WithOpName("h"), ops::MatMul(w0, x, w.var));
  Output pred = ops::Add(w1, h, b.var);
  Output loss = ops::Mean(w1.WithOpName("loss"), ops::Square(w1, ops::Sub(w1, pred, y)), {0, 1});
  GradientDescentOptimizer sgd(0.2, "train");
  absl::StatusOr<Node*> train = sgd.Minimize(w1, loss, {w.var, b.var});
  EXPECT_TRUE(train.ok()) << train.status();
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  EXPECT_TRUE(root.ok()) << root.status();
  GraphDef def;
  root.graph()->ToGraphDef(&def);
  return def;
}

std::vector<std::pair<std::string, Tensor>> StepFeeds(int step) {
  std::vector<float> xs, ys;
  for (int i = 0; i < 8; ++i) {
    float sum = 0;
    for (int j = 0; j < 4; ++j) {
      float v = std::sin(0.37f * (step * 8 + i) + 1.3f * j);
      xs.push_back(v);
      sum += (j + 1) * 0.25f * v;
    }
    ys.push_back(sum - 0.3f);
  }
  return {{"x:0", Tensor::FromVector<float>(xs, TensorShape({8, 4}))},
          {"y:0", Tensor::FromVector<float>(ys, TensorShape({8, 1}))}};
}

const std::vector<std::string> kFetches = {"loss:0", "w:0", "b:0"};

// Per step: loss, w (4), b (1).
using Trace = std::vector<std::vector<float>>;

absl::StatusOr<Trace> Train(Session* session, int steps, int first_step = 0) {
  Trace trace;
  for (int s = first_step; s < first_step + steps; ++s) {
    absl::StatusOr<std::vector<Tensor>> out = session->Run(StepFeeds(s), kFetches, {"train"});
    if (!out.ok()) return out.status();
    std::vector<float> row;
    for (const Tensor& t : *out) {
      for (float v : t.flat<float>()) row.push_back(v);
    }
    trace.push_back(row);
  }
  return trace;
}

Trace LocalTrace(int steps) {
  auto session = NewSession(BuiltinSessionConfig(), TrainingGraph(false));
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  EXPECT_TRUE((*session)->Run({}, {}, {"init"}).ok());
  absl::StatusOr<Trace> t = Train(session->get(), steps);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Trace{};
}

void ExpectSameTrace(const Trace& got, const Trace& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < got.size(); ++s) {
    ASSERT_EQ(got[s].size(), want[s].size()) << "step " << s;
    for (size_t i = 0; i < got[s].size(); ++i) {
      EXPECT_NEAR(got[s][i], want[s][i], 1e-6) << "step " << s << " value " << i;
    }
  }
}

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<ClusterSpec> spec = LocalCluster(1, 2);
    ASSERT_TRUE(spec.ok()) << spec.status();
    cluster_ = std::make_unique<ServerCluster>(*spec);
    ASSERT_TRUE(cluster_->StartAll());
  }

  absl::StatusOr<std::unique_ptr<Session>> NewSession(const GraphDef& def) {
    ClusterSessionOptions options;
    options.session.default_device = "/job:worker/task:0";
    options.wait_for_cluster_ms = 10000;
    options.session.step_timeout_ms = 20000;
    options.rpc.connect_timeout_ms = 1000;
    options.rpc.call_timeout_ms = 20000;
    return NewClusterSession(cluster_->spec(), def, options);
  }

  std::unique_ptr<ServerCluster> cluster_;
};

TEST_F(ClusterTest, TrainingMatchesALocalSession) {
  constexpr int kSteps = 5;
  const Trace want = LocalTrace(kSteps);
  ASSERT_EQ(want.size(), kSteps);
  EXPECT_LT(want.back()[0], want.front()[0]) << "the loss should go down";

  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(TrainingGraph(true));
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Run({}, {}, {"init"}).ok());
  absl::StatusOr<Trace> got = Train(session->get(), kSteps);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectSameTrace(*got, want);

  // The devices of every task are visible.
  std::vector<std::string> devices = (*session)->ListDevices();
  for (const std::string& task : cluster_->spec().AllTasks()) {
    bool found = false;
    for (const std::string& d : devices) found |= absl::StartsWith(d, task);
    EXPECT_TRUE(found) << task;
  }
}

TEST_F(ClusterTest, RemoteSessionThroughWorkerZero) {
  constexpr int kSteps = 5;
  const Trace want = LocalTrace(kSteps);
  absl::StatusOr<std::string> worker0 = cluster_->spec().Address("worker", 0);
  ASSERT_TRUE(worker0.ok());
  ClusterSessionOptions options;
  options.rpc.call_timeout_ms = 20000;
  absl::StatusOr<std::unique_ptr<Session>> session =
      NewRemoteSession("thrift://" + *worker0, TrainingGraph(true), options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Run({}, {}, {"init"}).ok());
  absl::StatusOr<Trace> got = Train(session->get(), kSteps);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectSameTrace(*got, want);
  EXPECT_TRUE((*session)->Close().ok());

  for (const char* bad : {"grpc://127.0.0.1:1", "thrift://", "127.0.0.1:80", "thrift://nohostport"}) {
    absl::StatusOr<std::unique_ptr<Session>> s = NewRemoteSession(bad, TrainingGraph(true));
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad << ": " << s.status();
  }
}

// Two towers of four MatMul -> BiasAdd -> Relu layers from one input, no
// device asked anywhere: what automatic placement spreads over devices (the
// towers run in parallel) and fuse_ops rewrites (each layer one _FusedMatMul).
GraphDef TwoTowers() {
  constexpr int kWidth = 512;
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({64, kWidth})});
  std::vector<Output> tops;
  for (int t = 0; t < 2; ++t) {
    Output h = x;
    for (int l = 0; l < 4; ++l) {
      std::vector<float> w(kWidth * kWidth), b(kWidth);
      for (size_t i = 0; i < w.size(); ++i) w[i] = 0.04f * std::sin(0.1f * i + t + 3 * l);
      for (size_t i = 0; i < b.size(); ++i) b[i] = 0.01f * std::cos(0.2f * i + l);
      const std::string name = absl::StrCat("t", t, "_l", l);
      Output mm = ops::MatMul(root.WithOpName(name + "_mm"), h,
                              ops::Const(root, w, TensorShape({kWidth, kWidth})));
      h = ops::Relu(root.WithOpName(name + "_relu"),
                    ops::BiasAdd(root.WithOpName(name + "_bias"), mm, ops::Const(root, b)));
    }
    tops.push_back(ops::Sum(root, h, {0, 1}));
  }
  ops::Add(root.WithOpName("out"), tops[0], tops[1]);
  EXPECT_TRUE(root.ok()) << root.status();
  GraphDef def;
  root.graph()->ToGraphDef(&def);
  return def;
}

// What a step of TwoTowers ran: the fetched value, the op counts over every
// partition, and how many devices ran a matrix product.
struct TowerStep {
  float out = 0;
  std::map<std::string, int> ops;
  int devices_with_products = 0;
};

absl::StatusOr<TowerStep> RunTowers(Session* session) {
  std::vector<float> xs(64 * 512);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.01f * i);
  RunMetadata metadata;
  RunOptions options;
  options.output_partition_graphs = true;
  absl::StatusOr<std::vector<Tensor>> out = session->Run(
      {{"x:0", Tensor::FromVector<float>(xs, TensorShape({64, 512}))}}, {"out:0"}, {}, options,
      &metadata);
  if (!out.ok()) return out.status();
  TowerStep step;
  step.out = (*out)[0].scalar<float>();
  for (const GraphDef& g : metadata.partition_graphs) {
    bool products = false;
    for (const NodeDef& n : g.node()) {
      ++step.ops[n.op()];
      products |= n.op() == "MatMul" || n.op() == "_FusedMatMul";
    }
    step.devices_with_products += products;
  }
  return step;
}

// A client's knobs reach the master over the wire: a remote session that
// turns fuse_ops off and auto_place on places and fuses as a local session
// with the same config does, and the default config fuses and keeps every
// unplaced node on the default device, locally and remotely alike.
TEST_F(ClusterTest, ClientSessionConfigPlacesAndFusesAsALocalSession) {
  absl::StatusOr<std::string> worker0 = cluster_->spec().Address("worker", 0);
  ASSERT_TRUE(worker0.ok());
  for (const bool tuned : {true, false}) {
    SCOPED_TRACE(tuned ? "auto_place on, fuse_ops off" : "defaults");
    SessionConfig config = BuiltinSessionConfig();
    config.devices.num_virtual_cpus = 2;  // three devices, as the cluster has
    if (tuned) {
      config.auto_place = true;
      config.fuse_ops = false;
    }
    absl::StatusOr<std::unique_ptr<Session>> local = sluice::NewSession(config, TwoTowers());
    ASSERT_TRUE(local.ok()) << local.status();
    absl::StatusOr<TowerStep> want = RunTowers(local->get());
    ASSERT_TRUE(want.ok()) << want.status();

    ClusterSessionOptions options;
    options.session.auto_place = config.auto_place;
    options.session.fuse_ops = config.fuse_ops;
    options.rpc.call_timeout_ms = 20000;
    absl::StatusOr<std::unique_ptr<Session>> remote =
        NewRemoteSession("thrift://" + *worker0, TwoTowers(), options);
    ASSERT_TRUE(remote.ok()) << remote.status();
    absl::StatusOr<TowerStep> got = RunTowers(remote->get());
    ASSERT_TRUE(got.ok()) << got.status();

    EXPECT_NEAR(got->out, want->out, 1e-3 * std::abs(want->out));
    for (const TowerStep* s : {&*want, &*got}) {
      const char* where = s == &*want ? "local" : "remote";
      if (tuned) {
        EXPECT_EQ(s->ops.count("_FusedMatMul"), 0u) << where;
        EXPECT_EQ(s->ops.at("MatMul"), 8) << where;
        EXPECT_EQ(s->devices_with_products, 2) << where << ": the towers run side by side";
      } else {
        EXPECT_EQ(s->ops.at("_FusedMatMul"), 8) << where;
        EXPECT_EQ(s->ops.count("MatMul"), 0u) << where;
        EXPECT_EQ(s->devices_with_products, 1) << where << ": all on the default device";
      }
    }
    EXPECT_TRUE((*remote)->Close().ok());
  }
}

// allow_soft_placement has one default, false as in TensorFlow, for a local
// and a cluster session alike: a node asking for a GPU no task has fails the
// same way in both, and the knob sent by the client relaxes it.
TEST_F(ClusterTest, SoftPlacementHasOneDefaultEverywhere) {
  EXPECT_EQ(ClusterSessionOptions().session.allow_soft_placement,
            SessionConfig().allow_soft_placement);
  EXPECT_EQ(MasterSessionOptions().session.allow_soft_placement,
            SessionConfig().allow_soft_placement);
  EXPECT_FALSE(SessionConfig().allow_soft_placement);
  Scope root = Scope::NewRootScope(BuiltinOps());
  ops::Square(root.WithOpName("sq").WithDevice("/job:worker/task:0/device:GPU:0"),
              ops::Const(root, 3.0f));
  GraphDef def;
  root.graph()->ToGraphDef(&def);
  absl::StatusOr<std::string> worker0 = cluster_->spec().Address("worker", 0);
  ASSERT_TRUE(worker0.ok());
  for (const bool soft : {false, true}) {
    ClusterSessionOptions options;
    options.session.allow_soft_placement = soft;
    options.rpc.call_timeout_ms = 20000;
    absl::StatusOr<std::unique_ptr<Session>> remote =
        NewRemoteSession("thrift://" + *worker0, def, options);
    ASSERT_TRUE(remote.ok()) << remote.status();
    absl::StatusOr<std::vector<Tensor>> out = (*remote)->Run({}, {"sq:0"}, {});
    if (soft) {
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].scalar<float>(), 9.0f);
    } else {
      ASSERT_FALSE(out.ok());
      EXPECT_NE(out.status().message().find("'sq' (Square)"), std::string::npos) << out.status();
      EXPECT_NE(out.status().message().find("GPU:0"), std::string::npos) << out.status();
    }
  }
}

// Runs one training step and returns its status and how long it took.
absl::Status TimedStep(Session* session, int step, absl::Duration* took) {
  const absl::Time start = absl::Now();
  absl::Status s = session->Run(StepFeeds(step), kFetches, {"train"}).status();
  *took = absl::Now() - start;
  std::printf("step %d: %.0f ms: %s\n", step, absl::ToDoubleMilliseconds(*took),
              s.ToString().c_str());
  return s;
}

TEST_F(ClusterTest, KilledPsFailsTheStepThenRejoinsAfterInit) {
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(TrainingGraph(true));
  ASSERT_TRUE(session.ok()) << session.status();
  Session* s = session->get();
  ASSERT_TRUE(s->Run({}, {}, {"init"}).ok());
  ASSERT_TRUE(Train(s, 2).ok());

  cluster_->process("ps", 0)->Signal(SIGKILL);
  ASSERT_TRUE(cluster_->process("ps", 0)->WaitForExit(absl::Seconds(5)).has_value());
  absl::Duration took;
  absl::Status failed = TimedStep(s, 2, &took);
  ASSERT_FALSE(failed.ok());
  EXPECT_LT(took, absl::Seconds(5)) << failed;
  EXPECT_TRUE(absl::StrContains(failed.message(), kPs)) << failed;

  ASSERT_TRUE(cluster_->Start("ps", 0));
  // The restarted task lost its variables. The first step after the restart
  // may only report the restart (Aborted); then the missing variable is named.
  absl::Status uninitialized;
  for (int attempt = 0; attempt < 3; ++attempt) {
    uninitialized = TimedStep(s, 2, &took);
    ASSERT_FALSE(uninitialized.ok()) << "a step on a fresh ps cannot succeed";
    EXPECT_LT(took, absl::Seconds(5)) << uninitialized;
    if (uninitialized.code() != absl::StatusCode::kAborted &&
        uninitialized.code() != absl::StatusCode::kUnavailable) {
      break;
    }
  }
  EXPECT_EQ(uninitialized.code(), absl::StatusCode::kFailedPrecondition) << uninitialized;
  EXPECT_TRUE(absl::StrContains(uninitialized.message(), "uninitialized value w") ||
              absl::StrContains(uninitialized.message(), "uninitialized value b"))
      << uninitialized;

  // "init" was registered before the restart: its first run only reports
  // that (Aborted, documented in master_session.h) and registers it again.
  absl::Status init = s->Run({}, {}, {"init"}).status();
  if (init.code() == absl::StatusCode::kAborted) {
    EXPECT_TRUE(absl::StrContains(init.message(), kPs)) << init;
    init = s->Run({}, {}, {"init"}).status();
  }
  ASSERT_TRUE(init.ok()) << init;
  absl::StatusOr<Trace> again = Train(s, 3);
  ASSERT_TRUE(again.ok()) << again.status();
  // Re-initialized: the same values as a fresh run.
  ExpectSameTrace(*again, LocalTrace(3));
}

TEST_F(ClusterTest, KilledWorkerFailsTheStepThenRejoins) {
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(TrainingGraph(true));
  ASSERT_TRUE(session.ok()) << session.status();
  Session* s = session->get();
  ASSERT_TRUE(s->Run({}, {}, {"init"}).ok());
  ASSERT_TRUE(Train(s, 2).ok());

  cluster_->process("worker", 1)->Signal(SIGKILL);
  ASSERT_TRUE(cluster_->process("worker", 1)->WaitForExit(absl::Seconds(5)).has_value());
  absl::Duration took;
  absl::Status failed = TimedStep(s, 2, &took);
  ASSERT_FALSE(failed.ok());
  EXPECT_LT(took, absl::Seconds(5)) << failed;
  EXPECT_TRUE(absl::StrContains(failed.message(), kWorker1)) << failed;

  ASSERT_TRUE(cluster_->Start("worker", 1));
  // Worker 1 holds no state: after at most one step that reports the
  // restart, training goes on from the ps's values.
  absl::Status ok_again;
  for (int attempt = 0; attempt < 3; ++attempt) {
    ok_again = TimedStep(s, 2, &took);
    if (ok_again.ok()) break;
  }
  ASSERT_TRUE(ok_again.ok()) << ok_again;
  absl::StatusOr<Trace> more = Train(s, 2, 3);
  ASSERT_TRUE(more.ok()) << more.status();
  const Trace want = LocalTrace(5);
  ExpectSameTrace(*more, Trace(want.begin() + 3, want.end()));
}

// Past Thrift 0.17's 100 MiB read limit (which a TSocket applies per read).
TEST_F(ClusterTest, TwoHundredFiftySixMiBTensorCrossesTasks) {
  constexpr int64_t kElements = 64 << 20;  // 256 MiB of floats
  Scope root = Scope::NewRootScope(BuiltinOps());
  // Fed on worker 0, doubled on the ps, passed through worker 1, fetched here.
  Output x = ops::Placeholder(root.WithDevice("/job:worker/task:0").WithOpName("big"), DT_FLOAT,
                              {.shape = TensorShape({kElements})});
  Output doubled = ops::Mul(root.WithDevice("/job:ps/task:0").WithOpName("doubled"), x, 2.0f);
  ops::Identity(root.WithDevice("/job:worker/task:1").WithOpName("out"), doubled);
  ASSERT_TRUE(root.ok()) << root.status();
  GraphDef def;
  root.graph()->ToGraphDef(&def);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(def);
  ASSERT_TRUE(session.ok()) << session.status();

  Tensor big(DT_FLOAT, TensorShape({kElements}));
  float* in = big.data<float>();
  for (int64_t i = 0; i < kElements; ++i) in[i] = static_cast<float>(i % 1000003) * 0.25f - 7.0f;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run({{"big:0", big}}, {"out:0"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  const absl::Duration took = absl::Now() - start;
  ASSERT_EQ(out->size(), 1u);
  const Tensor& got = (*out)[0];
  ASSERT_EQ(got.NumElements(), kElements);
  uint64_t want_sum = 0, got_sum = 0;  // order-sensitive checksums of the bits
  int64_t mismatches = 0;
  const float* o = got.data<float>();
  for (int64_t i = 0; i < kElements; ++i) {
    const float want = in[i] * 2.0f;
    uint32_t wb, gb;
    std::memcpy(&wb, &want, 4);
    std::memcpy(&gb, &o[i], 4);
    want_sum = want_sum * 1000003u + wb;
    got_sum = got_sum * 1000003u + gb;
    if (wb != gb && mismatches++ < 5) ADD_FAILURE() << "element " << i << ": " << o[i] << " != " << want;
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(got_sum, want_sum);
  std::printf("256 MiB worker0 -> ps -> worker1 -> client: %.0f ms\n",
              absl::ToDoubleMilliseconds(took));
}

// A client's graph may not write files outside the job's directories on a
// task (before: a SaveV2 could overwrite ~/.ssh/authorized_keys there).
// A while loop across tasks: its Enter/Merge/Switch/LoopCond on worker 0,
// its body's arithmetic on the ps, a cond's branches on worker 1. The ps and
// worker 1 run control loops driven by the LoopCond they receive; frames,
// iterations and dead tensors cross in RecvTensor. acc = acc * 2 + i for
// i < n, then acc + 1 if acc > 100 else acc - 1.
GraphDef LoopAcrossTasks() {
  Scope w0 = Scope::NewRootScope(BuiltinOps()).WithDevice("/job:worker/task:0");
  Output n = ops::Placeholder(w0.WithOpName("n"), DT_INT32);
  absl::StatusOr<std::vector<Output>> loop = ops::WhileLoop(
      w0, {ops::Const(w0, 0), ops::Const(w0, 1.0f)},
      [&](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], n); },
      [](const Scope& b, absl::Span<const Output> v) {
        Scope ps = b.WithDevice("/job:ps/task:0");
        Output acc = ops::Add(ps, ops::Mul(ps, v[1], 2.0f), ops::Cast(ps, v[0], DT_FLOAT));
        return std::vector<Output>{ops::Add(b, v[0], 1), acc};
      });
  EXPECT_TRUE(loop.ok()) << loop.status();
  Output acc = (*loop)[1];
  absl::StatusOr<std::vector<Output>> y = ops::Cond(
      w0, ops::Greater(w0, acc, 100.0f),
      [&](const Scope& b) {
        return std::vector<Output>{ops::Add(b.WithDevice("/job:worker/task:1"), acc, 1.0f)};
      },
      [&](const Scope& b) {
        return std::vector<Output>{ops::Sub(b.WithDevice("/job:worker/task:1"), acc, 1.0f)};
      });
  EXPECT_TRUE(y.ok()) << y.status();
  ops::Identity(w0.WithOpName("y"), (*y)[0]);
  // A loop that never ends, its body on the ps.
  absl::StatusOr<std::vector<Output>> forever = ops::WhileLoop(
      w0, {ops::Const(w0, 0)},
      [](const Scope& c, absl::Span<const Output> v) { return ops::GreaterEqual(c, v[0], 0); },
      [](const Scope& b, absl::Span<const Output> v) {
        return std::vector<Output>{
            ops::Maximum(b.WithDevice("/job:ps/task:0"), ops::Add(b, v[0], 1), 1)};
      },
      {.name = "forever"});
  EXPECT_TRUE(forever.ok()) << forever.status();
  ops::Identity(w0.WithOpName("forever_out"), (*forever)[0]);
  EXPECT_TRUE(w0.ok()) << w0.status();
  GraphDef def;
  w0.graph()->ToGraphDef(&def);
  return def;
}

TEST_F(ClusterTest, WhileLoopAndCondAcrossTasks) {
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(LoopAcrossTasks());
  ASSERT_TRUE(session.ok()) << session.status();
  for (int n : {0, 3, 8}) {
    float acc = 1;
    for (int i = 0; i < n; ++i) acc = acc * 2 + static_cast<float>(i);
    const float want = acc > 100 ? acc + 1 : acc - 1;
    absl::StatusOr<std::vector<Tensor>> out =
        (*session)->Run({{"n", Tensor::Scalar<int32_t>(n)}}, {"y"}, {});
    ASSERT_TRUE(out.ok()) << "n " << n << ": " << out.status();
    EXPECT_EQ((*out)[0].scalar<float>(), want) << "n " << n;
  }
}

// RunOptions::timeout_in_ms stops a loop that never ends on every task, in a
// cluster session and in a remote one (carried in RunStepRequest), and the
// cluster runs the next step.
TEST_F(ClusterTest, RunTimeoutStopsALoopAcrossTasks) {
  absl::StatusOr<std::string> worker0 = cluster_->spec().Address("worker", 0);
  ASSERT_TRUE(worker0.ok());
  ClusterSessionOptions remote_options;
  remote_options.rpc.call_timeout_ms = 20000;
  std::vector<std::unique_ptr<Session>> sessions;
  absl::StatusOr<std::unique_ptr<Session>> cluster = NewSession(LoopAcrossTasks());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  sessions.push_back(*std::move(cluster));
  absl::StatusOr<std::unique_ptr<Session>> remote =
      NewRemoteSession("thrift://" + *worker0, LoopAcrossTasks(), remote_options);
  ASSERT_TRUE(remote.ok()) << remote.status();
  sessions.push_back(*std::move(remote));
  for (auto& session : sessions) {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::vector<Tensor>> r =
        session->Run({}, {"forever_out"}, {}, RunOptions{.timeout_in_ms = 500});
    const absl::Duration took = absl::Now() - start;
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
    EXPECT_LT(took, absl::Seconds(5)) << "the step deadline is 20 s; the run's 0.5 s";
    absl::StatusOr<std::vector<Tensor>> next =
        session->Run({{"n", Tensor::Scalar<int32_t>(3)}}, {"y"}, {});
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ((*next)[0].scalar<float>(), 11.0f);  // 1 -> 2 -> 5 -> 12, not > 100: 12 - 1
  }
}

TEST_F(ClusterTest, GraphsWriteFilesOnlyUnderTheJobsDirectories) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string outside = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/not-a-job-dir/stolen");
  const std::string inside =
      absl::StrCat("/tmp/sluice/cluster_test-", getpid(), "/model.ckpt");
  for (const auto& [prefix, allowed] : {std::pair{outside, false}, std::pair{inside, true}}) {
    Scope root = Scope::NewRootScope(BuiltinOps());
    Scope ps = root.WithDevice("/job:ps/task:0");
    Output value = ops::Const(ps.WithOpName("value"), Tensor::FromVector<float>({1, 2, 3}));
    ops::SaveV2(ps.WithOpName("save"), ops::Const(ps, Tensor::Scalar<std::string>(prefix)),
                ops::Const(ps, Tensor::FromVector<std::string>({"v"})),
                ops::Const(ps, Tensor::FromVector<std::string>({""})), {value});
    ASSERT_TRUE(root.ok()) << root.status();
    GraphDef def;
    root.graph()->ToGraphDef(&def);
    absl::StatusOr<std::unique_ptr<Session>> session = NewSession(def);
    ASSERT_TRUE(session.ok()) << session.status();
    absl::StatusOr<std::vector<Tensor>> out = (*session)->Run({}, {}, {"save"});
    if (allowed) {
      EXPECT_TRUE(out.ok()) << out.status();
    } else {
      ASSERT_FALSE(out.ok()) << prefix << " was written";
      EXPECT_EQ(out.status().code(), absl::StatusCode::kPermissionDenied) << out.status();
      EXPECT_TRUE(absl::StrContains(out.status().message(), "graphs may write files only under"))
          << out.status();
      EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(prefix).parent_path()));
    }
  }
  // Checkpoint reads are fenced the same way: what was saved inside comes
  // back; /dev/zero (which would fill the task's memory) and any path
  // outside are refused before they are opened.
  for (const auto& [prefix, allowed] :
       {std::pair{inside, true}, std::pair{std::string("/dev/zero"), false},
        std::pair{std::string("/etc/hostname"), false}}) {
    Scope root = Scope::NewRootScope(BuiltinOps());
    Scope ps = root.WithDevice("/job:ps/task:0");
    std::vector<Output> restored = ops::RestoreV2(
        ps.WithOpName("restore"), ops::Const(ps, Tensor::Scalar<std::string>(prefix)),
        ops::Const(ps, Tensor::FromVector<std::string>({"v"})),
        ops::Const(ps, Tensor::FromVector<std::string>({""})), {DT_FLOAT});
    ASSERT_TRUE(root.ok()) << root.status();
    GraphDef def;
    root.graph()->ToGraphDef(&def);
    absl::StatusOr<std::unique_ptr<Session>> session = NewSession(def);
    ASSERT_TRUE(session.ok()) << session.status();
    absl::StatusOr<std::vector<Tensor>> out = (*session)->Run({}, {"restore:0"}, {});
    if (allowed) {
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].flat<float>()[2], 3.0f);
    } else {
      ASSERT_FALSE(out.ok()) << prefix << " was read";
      EXPECT_EQ(out.status().code(), absl::StatusCode::kPermissionDenied) << out.status();
      EXPECT_TRUE(absl::StrContains(out.status().message(), "graphs may read files only under"))
          << out.status();
    }
  }
  std::filesystem::remove_all(std::filesystem::path(inside).parent_path());
}

}  // namespace
}  // namespace sluice
