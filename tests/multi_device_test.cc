// The local Session over several (virtual CPU) devices: results equal the
// single-device run, one partition graph per used device, errors in one
// partition stop the others, per-device memory limits, traces with transfer
// arrows, training with variables and compute on different devices, feeds and
// fetches on a non-default device, and concurrent steps.
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/training/optimizers.h"
#include "ops/state/state_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

constexpr char kPrefix[] = "/job:localhost/replica:0/task:0";

std::string Cpu(int id) { return absl::StrCat(kPrefix, "/device:CPU:", id); }

bool Contains(const absl::Status& s, const std::string& needle) {
  return std::string(s.message()).find(needle) != std::string::npos;
}

using Feeds = std::vector<std::pair<std::string, Tensor>>;
using Result = absl::StatusOr<std::vector<Tensor>>;

// `num_virtual_cpus` extra devices; with 0, soft placement sends every pinned
// node to CPU:0, so one graph serves as its own single-device reference.
SessionConfig Options(int num_virtual_cpus) {
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.cpu_threads = 2;
  opts.devices.num_virtual_cpus = num_virtual_cpus;
  opts.devices.virtual_cpu_threads = 1;
  opts.allow_soft_placement = num_virtual_cpus == 0;
  return opts;
}

std::unique_ptr<Session> MakeSession(const Scope& s, const SessionConfig& opts) {
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? *std::move(sess) : nullptr;
}

Tensor Iota(const TensorShape& shape, float start, float step) {
  Tensor t(DT_FLOAT, shape);
  float v = start;
  for (float& x : t.flat<float>()) {
    x = v;
    v += step;
  }
  return t;
}

void ExpectBitwiseEqual(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(a.TotalBytes(), b.TotalBytes()) << what;
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0) << what;
}

// Runs in another thread and gives up waiting after `limit`: a hung step
// fails the test instead of hanging it. On a timeout the session is leaked
// (the hung thread still uses it) and `*sess` is reset.
Result RunWithin(std::unique_ptr<Session>* sess, const Feeds& feeds,
                 const std::vector<std::string>& fetches, absl::Duration limit,
                 absl::Duration* took) {
  struct State {
    absl::Notification done;
    Result result = absl::UnknownError("not run");
  };
  auto state = std::make_shared<State>();
  Session* raw = sess->get();
  const absl::Time start = absl::Now();
  std::thread([state, raw, feeds, fetches] {
    state->result = raw->Run(feeds, fetches, {});
    state->done.Notify();
  }).detach();
  if (!state->done.WaitForNotificationWithTimeout(limit)) {
    sess->release();  // NOLINT: deliberately leaked, see above
    return absl::DeadlineExceededError(
        absl::StrCat("step still running after ", absl::FormatDuration(limit)));
  }
  *took = absl::Now() - start;
  return state->result;
}

// A small network over three devices: x (CPU:0) -> tanh(x w1) (CPU:1) ->
// (h w2) (CPU:2) -> y + x-derived term (CPU:0).
struct Model {
  Output x, h, y, out;
};

Model BuildModel(const Scope& root) {
  Model m;
  Scope d0 = root.WithDevice("/device:CPU:0");
  Scope d1 = root.WithDevice("/device:CPU:1");
  Scope d2 = root.WithDevice("/device:CPU:2");
  m.x = ops::Placeholder(d0.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({4, 3})});
  Output w1 = ops::Const(d1.WithOpName("w1"), Iota(TensorShape({3, 5}), -0.7f, 0.1f));
  m.h = ops::Tanh(d1.WithOpName("h"), ops::MatMul(d1.WithOpName("xw1"), m.x, w1));
  Output w2 = ops::Const(d2.WithOpName("w2"), Iota(TensorShape({5, 2}), 0.3f, -0.05f));
  m.y = ops::MatMul(d2.WithOpName("y"), m.h, w2);
  Output xs = ops::Sum(d0.WithOpName("xs"), m.x, 1, {.keep_dims = true});
  m.out = ops::Add(d0.WithOpName("out"), m.y, ops::Square(d0, xs));
  return m;
}

TEST(MultiDeviceTest, SplitComputationMatchesOneDevice) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  BuildModel(s);
  auto one = MakeSession(s, Options(0));
  auto three = MakeSession(s, Options(2));
  ASSERT_EQ(one->ListDevices().size(), 1u);
  ASSERT_EQ(three->ListDevices(), (std::vector<std::string>{Cpu(0), Cpu(1), Cpu(2)}));
  const Feeds feeds = {{"x", Iota(TensorShape({4, 3}), -1.f, 0.17f)}};
  const std::vector<std::string> fetches = {"h", "y", "out", "xs"};
  Result want = one->Run(feeds, fetches, {});
  ASSERT_TRUE(want.ok()) << want.status();
  for (int run = 0; run < 3; ++run) {
    Result got = three->Run(feeds, fetches, {});
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t i = 0; i < fetches.size(); ++i) {
      ExpectBitwiseEqual((*got)[i], (*want)[i], fetches[i]);
    }
  }
  // A spot check against hand-computed values: xs = row sums of x.
  EXPECT_NEAR((*want)[3].flat<float>()[0], -1.f + -0.83f + -0.66f, 1e-5);
}

TEST(MultiDeviceTest, PartitionGraphsOnePerUsedDevice) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  BuildModel(s);
  auto sess = MakeSession(s, Options(3));  // CPU:3 exists but nothing uses it
  RunOptions run_opts;
  run_opts.output_partition_graphs = true;
  RunMetadata meta;
  Result r = sess->Run({{"x", Iota(TensorShape({4, 3}), 0.f, 0.1f)}}, {"out"}, {}, run_opts, &meta);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(meta.partition_graphs.size(), 3u);
  std::vector<std::string> devices;
  for (const GraphDef& g : meta.partition_graphs) {
    ASSERT_GT(g.node_size(), 0);
    const std::string device = g.node(0).device();
    devices.push_back(device);
    int transfers = 0;
    for (const NodeDef& n : g.node()) {
      EXPECT_EQ(n.device(), device) << n.name();
      if (n.op() == "_Send" || n.op() == "_Recv") ++transfers;
    }
    EXPECT_GT(transfers, 0) << device;
  }
  EXPECT_EQ(devices, (std::vector<std::string>{Cpu(0), Cpu(1), Cpu(2)}));  // device order

  // Fetching only what CPU:1 computes from x (CPU:0): two partitions.
  meta = RunMetadata();
  r = sess->Run({{"x", Iota(TensorShape({4, 3}), 0.f, 0.1f)}}, {"h"}, {}, run_opts, &meta);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(meta.partition_graphs.size(), 2u);
  // Without the option, none.
  meta = RunMetadata();
  ASSERT_TRUE(sess->Run({{"x", Iota(TensorShape({4, 3}), 0.f, 0.1f)}}, {"h"}, {}, {}, &meta).ok());
  EXPECT_TRUE(meta.partition_graphs.empty());
}

// x (CPU:0) -> mm = MatMul(x, w) (CPU:2) -> r (CPU:1) -> out (CPU:0): with a
// badly shaped x, mm fails while CPU:1 and CPU:0 wait on their _Recv nodes.
TEST(MultiDeviceTest, ErrorInOnePartitionStopsTheOthers) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice("/device:CPU:0"), DT_FLOAT);
  Output w = ops::Const(s.WithOpName("w").WithDevice("/device:CPU:2"),
                        Iota(TensorShape({3, 3}), 1.f, 1.f));
  Output mm = ops::MatMul(s.WithOpName("mm").WithDevice("/device:CPU:2"), x, w);
  Output r = ops::Neg(s.WithOpName("r").WithDevice("/device:CPU:1"), mm);
  ops::Add(s.WithOpName("out").WithDevice("/device:CPU:0"), r, ops::Square(s, x));
  auto sess = MakeSession(s, Options(2));
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::Duration took;
    Result bad = RunWithin(&sess, {{"x", Tensor(DT_FLOAT, TensorShape({2, 5}))}}, {"out"},
                           absl::Seconds(5), &took);
    ASSERT_NE(sess, nullptr) << "the failing step hung: " << bad.status();
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
    EXPECT_TRUE(Contains(bad.status(), "'mm' (MatMul)")) << bad.status();
    EXPECT_LT(took, absl::Seconds(5));
    // The session still runs good steps.
    Tensor good = Iota(TensorShape({2, 3}), 1.f, 1.f);  // [[1,2,3],[4,5,6]]
    Result ok = RunWithin(&sess, {{"x", good}}, {"out"}, absl::Seconds(5), &took);
    ASSERT_NE(sess, nullptr) << "a good step after a failed one hung";
    ASSERT_TRUE(ok.ok()) << ok.status();
    // x w = [[30,36,42],[66,81,96]]; out = -(x w) + x^2.
    const std::vector<float> want = {-29, -32, -33, -50, -56, -60};
    for (int i = 0; i < 6; ++i) EXPECT_EQ((*ok)[0].flat<float>()[i], want[i]) << i;
  }
}

// A kernel error that is not about shapes: reading an uninitialized variable
// on CPU:2, while CPU:0 waits for the value.
TEST(MultiDeviceTest, RuntimeErrorOnAnotherDeviceIsTheStepsError) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit v =
      ops::VariableWithInit(s.WithOpName("v").WithDevice("/device:CPU:2"), 5.0f);
  Output read = ops::Square(s.WithOpName("v_sq").WithDevice("/device:CPU:2"), v.var);
  Output slow = ops::Const(s.WithDevice("/device:CPU:1"), 1.0f);
  for (int i = 0; i < 10; ++i) slow = ops::Neg(s.WithDevice("/device:CPU:1"), slow);
  ops::Add(s.WithOpName("sum").WithDevice("/device:CPU:0"), read, slow);
  auto sess = MakeSession(s, Options(2));
  absl::Duration took;
  Result r = RunWithin(&sess, {}, {"sum"}, absl::Seconds(5), &took);
  ASSERT_NE(sess, nullptr) << "the failing step hung";
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_TRUE(Contains(r.status(), "uninitialized value v")) << r.status();
  EXPECT_TRUE(Contains(r.status(), "'v_sq' (Square)")) << r.status();
  ASSERT_TRUE(sess->Run({}, {}, {v.initializer->name()}).ok());
  r = sess->Run({}, {"sum"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 26.0f);
}

TEST(MultiDeviceTest, VirtualDeviceMemoryLimit) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output dims = ops::Placeholder(s.WithOpName("dims"), DT_INT32);
  Output big = ops::Fill(s.WithOpName("big").WithDevice("/device:CPU:1"), dims, 1.0f);
  ops::Sum(s.WithOpName("total").WithDevice("/device:CPU:0"), big, {0, 1});
  // The same fill on CPU:0, which has no limit.
  ops::Fill(s.WithOpName("big0").WithDevice("/device:CPU:0"), dims, 1.0f);
  SessionConfig opts = Options(2);
  opts.devices.virtual_cpu_memory_limit = 1 << 20;
  auto sess = MakeSession(s, opts);
  const Tensor two_mib = Tensor::FromVector<int32_t>({512, 1024});
  Result r = sess->Run({{"dims", two_mib}}, {"total"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_TRUE(Contains(r.status(), Cpu(1))) << r.status();
  EXPECT_TRUE(Contains(r.status(), "'big' (Fill)")) << r.status();
  EXPECT_TRUE(sess->Run({{"dims", two_mib}}, {"big0"}, {}).ok());
  r = sess->Run({{"dims", Tensor::FromVector<int32_t>({16, 16})}}, {"total"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 256.0f);
  EXPECT_EQ(sess->DeviceMemoryStats()[1].bytes_limit, 1 << 20);
}

// The ids of the flow events of one kind ("s" or "f") in a Chrome trace.
std::multiset<std::string> FlowIds(const std::string& json, const std::string& ph) {
  std::multiset<std::string> ids;
  const std::string start = absl::StrCat("{\"ph\":\"", ph, "\"");
  for (size_t at = json.find(start); at != std::string::npos; at = json.find(start, at + 1)) {
    const size_t id = json.find("\"id\":", at);
    const size_t end = json.find_first_of(",}", id + 5);
    if (id == std::string::npos || end == std::string::npos) break;
    ids.insert(json.substr(id + 5, end - id - 5));
  }
  return ids;
}

size_t CountOf(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

TEST(MultiDeviceTest, TraceShowsEveryDeviceAndTransferArrows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  BuildModel(s);
  auto sess = MakeSession(s, Options(2));
  RunOptions run_opts;
  run_opts.trace = true;
  RunMetadata meta;
  Result r = sess->Run({{"x", Iota(TensorShape({4, 3}), 0.f, 0.1f)}}, {"out"}, {}, run_opts, &meta);
  ASSERT_TRUE(r.ok()) << r.status();
  std::set<std::string> devices;
  int sends = 0, recvs = 0;
  for (const NodeExecStats& n : meta.step_stats.nodes) {
    devices.insert(n.device);
    if (n.op == "_Send") {
      ++sends;
      EXPECT_TRUE(n.flow_is_send) << n.node_name;
      EXPECT_FALSE(n.flow_key.empty()) << n.node_name;
    }
    if (n.op == "_Recv") {
      ++recvs;
      EXPECT_FALSE(n.flow_is_send) << n.node_name;
    }
    EXPECT_LE(n.start_us, n.end_us) << n.node_name;
  }
  EXPECT_EQ(devices, (std::set<std::string>{Cpu(0), Cpu(1), Cpu(2)}));
  EXPECT_GE(sends, 3);  // x -> CPU:1, h -> CPU:2, y -> CPU:0
  EXPECT_EQ(sends, recvs);
  const std::string json = ToChromeTraceJson(meta.step_stats);
  EXPECT_EQ(CountOf(json, "\"name\":\"process_name\""), 3u) << json;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(CountOf(json, absl::StrCat("\"args\":{\"name\":\"", Cpu(i), "\"}")), 1u) << i;
  }
  std::multiset<std::string> starts = FlowIds(json, "s");
  std::multiset<std::string> finishes = FlowIds(json, "f");
  EXPECT_EQ(starts.size(), static_cast<size_t>(sends));
  EXPECT_EQ(starts, finishes) << json;
  EXPECT_EQ(std::set<std::string>(starts.begin(), starts.end()).size(), starts.size())
      << "one id per transfer";
  // Without trace, no stats.
  meta = RunMetadata();
  ASSERT_TRUE(
      sess->Run({{"x", Iota(TensorShape({4, 3}), 0.f, 0.1f)}}, {"out"}, {}, {}, &meta).ok());
  EXPECT_TRUE(meta.step_stats.nodes.empty());
}

// Linear regression with its variables on CPU:0 and the forward and
// backward passes on CPU:1.
struct Regression {
  Node* init = nullptr;
  Node* train = nullptr;
};

Regression BuildRegression(const Scope& root) {
  Regression reg;
  Scope vars = root.WithDevice("/device:CPU:0");
  Scope compute = root.WithDevice("/device:CPU:1");
  ops::VariableAndInit w = ops::VariableWithInit(
      vars.WithOpName("w"), ops::Const(vars, {0.1f, -0.2f, 0.3f}, TensorShape({3, 1})));
  ops::VariableAndInit b = ops::VariableWithInit(vars.WithOpName("b"), ops::Const(vars, {0.5f}));
  Output x = ops::Placeholder(compute.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({8, 3})});
  Output y = ops::Placeholder(compute.WithOpName("y"), DT_FLOAT, {.shape = TensorShape({8, 1})});
  Output pred =
      ops::Add(compute.WithOpName("pred"), ops::MatMul(compute.WithOpName("xw"), x, w.var), b.var);
  Output loss = ops::Mean(compute.WithOpName("loss"),
                          ops::Square(compute, ops::Sub(compute, pred, y)), {0, 1});
  // Gradients computed beside the model, applied beside the variables.
  GradientDescentOptimizer sgd(0.05);
  absl::StatusOr<std::vector<GradAndVar>> grads =
      sgd.ComputeGradients(compute, loss, {w.var, b.var});
  absl::StatusOr<Node*> train =
      grads.ok() ? sgd.ApplyGradients(vars, *grads) : absl::StatusOr<Node*>(grads.status());
  if (!train.ok()) {
    root.UpdateStatus(train.status());
    return reg;
  }
  reg.train = *train;
  reg.init = ops::GlobalVariablesInitializer(root);
  return reg;
}

TEST(MultiDeviceTest, TrainingWithVariablesOnOneDeviceAndComputeOnAnother) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Regression reg = BuildRegression(s);
  ASSERT_TRUE(s.ok()) << s.status();
  const Tensor x = Iota(TensorShape({8, 3}), -1.f, 0.1f);
  Tensor y(DT_FLOAT, TensorShape({8, 1}));
  for (int i = 0; i < 8; ++i) {  // y = x . [1, 2, -1] + 0.25
    auto xv = x.flat<float>();
    y.flat<float>()[i] = xv[3 * i] + 2 * xv[3 * i + 1] - xv[3 * i + 2] + 0.25f;
  }
  std::map<int, std::vector<Tensor>> results;
  for (int virtual_cpus : {0, 1}) {
    // Splitting over devices must not change a bit. Fusion rounds differently
    // (the GEMM accumulates alpha * product into the weight, an equality
    // within tolerance that placement/fuse_ops_test checks), and it applies
    // only where MatMul and update share a device: off in both sessions.
    SessionConfig opts = Options(virtual_cpus);
    opts.fuse_ops = false;
    auto sess = MakeSession(s, opts);
    ASSERT_TRUE(sess->Run({}, {}, {reg.init->name()}).ok());
    float first_loss = 0, last_loss = 0;
    for (int step = 0; step < 5; ++step) {
      RunOptions run_opts;
      run_opts.output_partition_graphs = step == 0;
      RunMetadata meta;
      Result r = sess->Run({{"x", x}, {"y", y}}, {"loss"}, {reg.train->name()}, run_opts, &meta);
      ASSERT_TRUE(r.ok()) << r.status();
      (step == 0 ? first_loss : last_loss) = (*r)[0].scalar<float>();
      if (step == 0 && virtual_cpus == 1) {
        // The variables and their updates on CPU:0, the model on CPU:1.
        ASSERT_EQ(meta.partition_graphs.size(), 2u);
        std::map<std::string, std::string> device_of;
        for (const GraphDef& g : meta.partition_graphs) {
          for (const NodeDef& n : g.node()) device_of[n.op() + ":" + n.name()] = n.device();
        }
        EXPECT_EQ(device_of["VariableV2:w"], Cpu(0));
        EXPECT_EQ(device_of["MatMul:xw"], Cpu(1));
        int updates = 0;
        for (const auto& [key, device] : device_of) {
          if (key.rfind("ApplyGradientDescent:", 0) == 0) {
            EXPECT_EQ(device, Cpu(0)) << key;
            ++updates;
          }
        }
        EXPECT_EQ(updates, 2);
      }
    }
    EXPECT_LT(last_loss, first_loss);
    Result vars = sess->Run({}, std::vector<std::string>{"w", "b"}, {});
    ASSERT_TRUE(vars.ok()) << vars.status();
    results[virtual_cpus] = *vars;
  }
  ExpectBitwiseEqual(results[1][0], results[0][0], "w");
  ExpectBitwiseEqual(results[1][1], results[0][1], "b");
}

// Minimize called in the model's device scope (as TensorFlow programs do
// under tf.device) builds each update colocated with its variable; the
// variable's device must win over the scope's, as in TensorFlow.
TEST(MultiDeviceTest, MinimizeInADeviceScopePutsUpdatesWithTheirVariables) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w =
      ops::VariableWithInit(s.WithOpName("w").WithDevice("/device:CPU:0"), 3.0f);
  Scope compute = s.WithDevice("/device:CPU:1");
  Output loss = ops::Square(compute.WithOpName("loss"), ops::Sub(compute, w.var, 1.0f));
  GradientDescentOptimizer sgd(0.25);
  absl::StatusOr<Node*> train = sgd.Minimize(compute, loss, {w.var});
  ASSERT_TRUE(train.ok()) << train.status();
  auto sess = MakeSession(s, Options(1));
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer->name()}).ok());
  Result r = sess->Run({}, {}, {(*train)->name()});
  ASSERT_TRUE(r.ok()) << r.status();
  r = sess->Run({}, std::vector<std::string>{"w"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 2.0f);  // 3 - 0.25 * 2 * (3 - 1)
}

TEST(MultiDeviceTest, FeedsIntoAndFetchesFromANonDefaultDevice) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Scope d1 = s.WithDevice("/device:CPU:1");
  Output x = ops::Placeholder(d1.WithOpName("x"), DT_FLOAT);
  Output y = ops::Mul(d1.WithOpName("y"), x, 2.0f);
  ops::Neg(s.WithOpName("z").WithDevice("/device:CPU:2"), y);
  ops::Add(s.WithOpName("w"), y, 1.0f);  // CPU:0
  auto sess = MakeSession(s, Options(2));
  Result r = sess->Run({{"x", Tensor::FromVector<float>({1, 2})}}, {"x", "y", "z", "w"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].flat<float>()[1], 2.0f);
  EXPECT_EQ((*r)[1].flat<float>()[1], 4.0f);
  EXPECT_EQ((*r)[2].flat<float>()[1], -4.0f);
  EXPECT_EQ((*r)[3].flat<float>()[1], 5.0f);
  // Feeding the intermediate y (on CPU:1) cuts x out.
  r = sess->Run({{"y", Tensor::FromVector<float>({10, 20})}}, {"z", "y"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].flat<float>()[0], -10.0f);
  EXPECT_EQ((*r)[1].flat<float>()[1], 20.0f);
  // Fetching only a CPU:1 node fed on CPU:1.
  r = sess->Run({{"x", Tensor::FromVector<float>({3})}}, {"y"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].flat<float>()[0], 6.0f);
}

TEST(MultiDeviceTest, ConcurrentRunsKeepTheirTransfersApart) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice("/device:CPU:1"), DT_FLOAT);
  Output a = ops::Mul(s.WithOpName("a").WithDevice("/device:CPU:2"), x, 2.0f);
  Output b = ops::Add(s.WithOpName("b").WithDevice("/device:CPU:1"), a, x);
  ops::Sub(s.WithOpName("c").WithDevice("/device:CPU:0"), b, a);  // = x
  auto sess = MakeSession(s, Options(2));
  std::atomic<int> good{0};
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const float v = t * 100 + i;
        Result r = sess->Run({{"x", Tensor::FromVector<float>({v, -v})}}, {"b", "c"}, {});
        if (!r.ok()) {
          errors[t] = r.status().ToString();
          continue;
        }
        if ((*r)[0].flat<float>()[0] == 3 * v && (*r)[0].flat<float>()[1] == -3 * v &&
            (*r)[1].flat<float>()[0] == v) {
          ++good;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(good.load(), 100);
  for (const std::string& e : errors) EXPECT_EQ(e, "");
}

// A node with a control dependency on a Placeholder runs when the
// Placeholder is fed (the fed Placeholder itself does not run), as in
// TensorFlow, here with the Placeholder and its dependent on two devices.
TEST(MultiDeviceTest, ControlDependencyOnAFedPlaceholder) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice("/device:CPU:1"), DT_FLOAT);
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT);
  ops::Neg(s.WithOpName("z").WithDevice("/device:CPU:2").WithControlDependencies({x}), y);
  for (int virtual_cpus : {0, 2}) {
    auto sess = MakeSession(s, Options(virtual_cpus));
    Result r =
        sess->Run({{"x", Tensor::Scalar<float>(1)}, {"y", Tensor::Scalar<float>(2)}}, {"z"}, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].scalar<float>(), -2.0f);
    // Unfed, the Placeholder runs and says what is missing.
    r = sess->Run({{"y", Tensor::Scalar<float>(2)}}, {"z"}, {});
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(Contains(r.status(), "'x'")) << r.status();
  }
}

// A read on another device ordered (by a control edge) after an update of
// the variable sees the update, as it does on one device.
TEST(MultiDeviceTest, CrossDeviceReadOrderedAfterAnUpdateSeesIt) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit v =
      ops::VariableWithInit(s.WithOpName("v").WithDevice("/device:CPU:0"), 1.0f);
  Output bump = ops::AssignAdd(s.WithOpName("bump"), v.var, 10.0f);
  ops::Add(s.WithOpName("after").WithDevice("/device:CPU:1").WithControlDependencies({bump}), v.var,
           0.0f);
  ops::Add(s.WithOpName("before").WithDevice("/device:CPU:1"), v.var, 0.0f);
  for (int virtual_cpus : {0, 1}) {
    auto sess = MakeSession(s, Options(virtual_cpus));
    ASSERT_TRUE(sess->Run({}, {}, {v.initializer->name()}).ok());
    for (int step = 0; step < 3; ++step) {
      Result r = sess->Run({}, std::vector<std::string>{"after", "before"}, {});
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ((*r)[0].scalar<float>(), 11.0f + 10.0f * step) << virtual_cpus << " virtual cpus";
      EXPECT_EQ((*r)[1].scalar<float>(), 1.0f + 10.0f * step) << virtual_cpus << " virtual cpus";
    }
  }
}

// The same when the read sits beside the variable but is ordered after the
// update only through a node on another device.
TEST(MultiDeviceTest, ReadOrderedAfterAnUpdateThroughAnotherDeviceSeesIt) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit v =
      ops::VariableWithInit(s.WithOpName("v").WithDevice("/device:CPU:0"), 1.0f);
  Output bump = ops::AssignAdd(s.WithOpName("bump"), v.var, 10.0f);
  Output hop = ops::Neg(
      s.WithOpName("hop").WithDevice("/device:CPU:1").WithControlDependencies({bump}), 2.0f);
  ops::Add(s.WithOpName("after").WithDevice("/device:CPU:0").WithControlDependencies({hop}), v.var,
           0.0f);
  for (int virtual_cpus : {0, 1}) {
    auto sess = MakeSession(s, Options(virtual_cpus));
    ASSERT_TRUE(sess->Run({}, {}, {v.initializer->name()}).ok());
    for (int step = 0; step < 3; ++step) {
      Result r = sess->Run({}, std::vector<std::string>{"after"}, {});
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ((*r)[0].scalar<float>(), 11.0f + 10.0f * step) << virtual_cpus << " virtual cpus";
    }
  }
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// A three-layer chain whose weights (about 3.8 MiB) fit neither 3 MiB device
// alone: auto placement splits it, and it runs.
absl::StatusOr<std::unique_ptr<Session>> ChainSession(int64_t limit, bool auto_place,
                                                      std::string* y) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output h = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  const std::vector<int64_t> widths = {512, 768, 768, 10};
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    Scope layer = s.NewSubScope(absl::StrCat("layer", i));
    ops::VariableAndInit w = ops::VariableWithInit(
        layer.WithOpName("w"), ops::Fill(layer, {widths[i], widths[i + 1]}, 0.001f));
    h = ops::MatMul(layer, h, w.var);
  }
  *y = h.name();  // the graph dies with `s`; the session keeps its copy
  Node* init = ops::GlobalVariablesInitializer(s);
  if (!s.ok()) return s.status();
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.num_virtual_cpus = 1;
  opts.devices.cpu_memory_limit = limit;
  opts.devices.virtual_cpu_memory_limit = limit;
  opts.auto_place = auto_place;
  ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(opts, *s.graph()));
  RETURN_IF_ERROR(sess->Run({}, {}, {init->name()}).status());
  return sess;
}

TEST(MultiDeviceTest, AutoPlacementSplitsAModelTooLargeForOneDevice) {
  std::string y;
  absl::StatusOr<std::unique_ptr<Session>> one = ChainSession(3 << 20, false, &y);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().code(), absl::StatusCode::kResourceExhausted) << one.status();

  absl::StatusOr<std::unique_ptr<Session>> sess = ChainSession(3 << 20, true, &y);
  ASSERT_TRUE(sess.ok()) << sess.status();
  RunOptions ro;
  ro.output_partition_graphs = true;
  RunMetadata md;
  Tensor x(DT_FLOAT, TensorShape({4, 512}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = 1.0f;
  Result out = (*sess)->Run({{"x", x}}, {y}, {}, ro, &md);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(md.partition_graphs.size(), 2u);
  // Every entry: 512 * 0.001 * 768 * 0.001 * 768 * 0.001.
  EXPECT_NEAR((*out)[0].flat<float>()[0], 512 * 768 * 768 * 1e-9, 1e-5);

  absl::StatusOr<std::unique_ptr<Session>> tiny = ChainSession(1 << 20, true, &y);
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.status().code(), absl::StatusCode::kResourceExhausted) << tiny.status();
  EXPECT_NE(tiny.status().message().find("needs"), std::string::npos) << tiny.status();
}

}  // namespace
}  // namespace sluice
