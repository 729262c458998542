// Partition: per-device GraphDefs with _Send/_Recv pairs for data edges and
// Const -> _Send ... _Recv chains for control edges; one pair per (tensor,
// destination); unique tensor names; partitions that import and run.
#include "placement/partition.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_def_io.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"
#include "runtime/executor.h"
#include "runtime/local_devices.h"
#include "runtime/rendezvous.h"

namespace sluice {
namespace {

constexpr char kPrefix[] = "/job:localhost/replica:0/task:0";

std::string Cpu(int id) { return absl::StrCat(kPrefix, "/device:CPU:", id); }

bool Contains(const absl::Status& s, const std::string& needle) {
  return std::string(s.message()).find(needle) != std::string::npos;
}

bool IsTransfer(const NodeDef& n) { return n.op() == "_Send" || n.op() == "_Recv"; }

std::string StringAttr(const NodeDef& n, const std::string& name) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? "<missing>" : it->second.s();
}

const NodeDef* FindNodeDef(const GraphDef& def, const std::string& name) {
  for (const NodeDef& n : def.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

std::vector<const NodeDef*> NodesOfOp(const GraphDef& def, const std::string& op) {
  std::vector<const NodeDef*> out;
  for (const NodeDef& n : def.node()) {
    if (n.op() == op) out.push_back(&n);
  }
  return out;
}

void Assign(const Scope& s, const std::string& node, const std::string& device) {
  Node* n = s.graph()->FindNode(node);
  ASSERT_NE(n, nullptr) << node;
  n->set_assigned_device(device);
}

// x (CPU:0) -> a = Square(x) (CPU:0); on CPU:1 three consumers of a (b3 takes
// it twice); on CPU:2 one consumer; a control edge b1 (CPU:1) -> z (CPU:2).
class PartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Output x = ops::Const(s_.WithOpName("x"), {1.f, -2.f, 3.f, 0.5f}, TensorShape({2, 2}));
    Output a = ops::Square(s_.WithOpName("a"), x);
    Output b1 = ops::Neg(s_.WithOpName("b1"), a);
    Output b2 = ops::Tanh(s_.WithOpName("b2"), a);
    Output b3 = ops::Add(s_.WithOpName("b3"), a, a);
    ops::AddN(s_.WithOpName("sum"), {b1, b2, b3});
    Output c = ops::Neg(s_.WithOpName("c"), a);
    ops::Neg(s_.WithOpName("z").WithControlDependencies({b1}), c);
    ASSERT_TRUE(s_.ok()) << s_.status();
    for (const char* n : {"x", "a"}) Assign(s_, n, Cpu(0));
    for (const char* n : {"b1", "b2", "b3", "sum"}) Assign(s_, n, Cpu(1));
    for (const char* n : {"c", "z"}) Assign(s_, n, Cpu(2));
  }

  absl::StatusOr<std::map<std::string, GraphDef>> Parts(const PartitionOptions& opts = {}) {
    return Partition(*s_.graph(), opts);
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(PartitionTest, EachPartitionHoldsItsDevicesNodesAndTransfers) {
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Parts();
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 3u);
  const std::map<std::string, std::set<std::string>> want = {
      {Cpu(0), {"x", "a"}}, {Cpu(1), {"b1", "b2", "b3", "sum"}}, {Cpu(2), {"c", "z"}}};
  for (const auto& [device, def] : *parts) {
    ASSERT_TRUE(want.count(device)) << device;
    std::set<std::string> originals;
    for (const NodeDef& n : def.node()) {
      EXPECT_EQ(n.device(), device) << n.name();
      if (IsTransfer(n) || absl::StartsWith(n.name(), "_ctrl_")) continue;
      originals.insert(n.name());
    }
    EXPECT_EQ(originals, want.at(device)) << device;
  }
  // The original nodes keep their attrs.
  const NodeDef* x = FindNodeDef(parts->at(Cpu(0)), "x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->op(), "Const");
  EXPECT_EQ(x->attr().at("value").tensor().float_val_size(), 4);
}

TEST_F(PartitionTest, OnePairPerTensorAndDestination) {
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Parts();
  ASSERT_TRUE(parts.ok()) << parts.status();
  // CPU:0 sends `a` twice: once to CPU:1 (for its three consumers), once to
  // CPU:2.
  std::vector<const NodeDef*> sends = NodesOfOp(parts->at(Cpu(0)), "_Send");
  ASSERT_EQ(sends.size(), 2u);
  std::set<std::string> destinations;
  for (const NodeDef* send : sends) {
    ASSERT_EQ(send->input_size(), 1);
    EXPECT_EQ(send->input(0), "a");
    EXPECT_EQ(StringAttr(*send, "send_device"), Cpu(0));
    destinations.insert(StringAttr(*send, "recv_device"));
  }
  EXPECT_EQ(destinations, (std::set<std::string>{Cpu(1), Cpu(2)}));
  // CPU:1 has one _Recv, and every use of `a` there reads it.
  std::vector<const NodeDef*> recvs = NodesOfOp(parts->at(Cpu(1)), "_Recv");
  ASSERT_EQ(recvs.size(), 1u);
  const std::string recv = recvs[0]->name();
  EXPECT_EQ(recvs[0]->attr().at("T").type(), ::tensorflow::DT_FLOAT);
  for (const char* consumer : {"b1", "b2", "b3"}) {
    const NodeDef* n = FindNodeDef(parts->at(Cpu(1)), consumer);
    ASSERT_NE(n, nullptr);
    for (const std::string& in : n->input()) EXPECT_EQ(in, recv) << consumer;
  }
  EXPECT_EQ(FindNodeDef(parts->at(Cpu(1)), "b3")->input_size(), 2);
  // Edges inside a partition stay as they were.
  const NodeDef* sum = FindNodeDef(parts->at(Cpu(1)), "sum");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(std::vector<std::string>(sum->input().begin(), sum->input().end()),
            (std::vector<std::string>{"b1", "b2", "b3"}));
  EXPECT_EQ(FindNodeDef(parts->at(Cpu(0)), "a")->input(0), "x");
}

TEST_F(PartitionTest, CrossDeviceControlEdgeBecomesConstSendRecv) {
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Parts();
  ASSERT_TRUE(parts.ok()) << parts.status();
  const GraphDef& p1 = parts->at(Cpu(1));
  const GraphDef& p2 = parts->at(Cpu(2));
  // On CPU:1: a Const run after b1, sent to CPU:2.
  std::vector<const NodeDef*> consts = NodesOfOp(p1, "Const");
  ASSERT_EQ(consts.size(), 1u);
  ASSERT_EQ(consts[0]->input_size(), 1);
  EXPECT_EQ(consts[0]->input(0), "^b1");
  std::vector<const NodeDef*> sends = NodesOfOp(p1, "_Send");
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0]->input(0), consts[0]->name());
  EXPECT_EQ(StringAttr(*sends[0], "recv_device"), Cpu(2));
  // On CPU:2: z waits for the matching _Recv by a control input only.
  const NodeDef* z = FindNodeDef(p2, "z");
  ASSERT_NE(z, nullptr);
  ASSERT_EQ(z->input_size(), 2);
  EXPECT_EQ(z->input(0), "c");
  ASSERT_TRUE(absl::StartsWith(z->input(1), "^")) << z->input(1);
  const NodeDef* recv = FindNodeDef(p2, z->input(1).substr(1));
  ASSERT_NE(recv, nullptr) << z->input(1);
  EXPECT_EQ(recv->op(), "_Recv");
  EXPECT_EQ(StringAttr(*recv, "tensor_name"), StringAttr(*sends[0], "tensor_name"));
  EXPECT_EQ(StringAttr(*recv, "send_device"), Cpu(1));
}

TEST_F(PartitionTest, TensorNamesAreUniqueAndPairsMatch) {
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Parts();
  ASSERT_TRUE(parts.ok()) << parts.status();
  std::map<std::string, const NodeDef*> send_of, recv_of;
  std::set<std::string> names;
  for (const auto& [device, def] : *parts) {
    for (const NodeDef& n : def.node()) {
      EXPECT_TRUE(names.insert(n.name()).second) << "node name used twice: " << n.name();
      if (!IsTransfer(n)) continue;
      auto& table = n.op() == "_Send" ? send_of : recv_of;
      const std::string tensor = StringAttr(n, "tensor_name");
      EXPECT_TRUE(table.emplace(tensor, &n).second) << "tensor_name used twice: " << tensor;
      EXPECT_EQ(n.attr().at("send_device_incarnation").i(), 1) << n.name();
      EXPECT_FALSE(n.attr().at("client_terminated").b()) << n.name();
    }
  }
  ASSERT_EQ(send_of.size(), 3u);  // a -> CPU:1, a -> CPU:2, control b1 -> CPU:2
  ASSERT_EQ(recv_of.size(), send_of.size());
  for (const auto& [tensor, send] : send_of) {
    ASSERT_TRUE(recv_of.count(tensor)) << tensor;
    const NodeDef* recv = recv_of.at(tensor);
    for (const char* attr : {"send_device", "recv_device"}) {
      EXPECT_EQ(StringAttr(*send, attr), StringAttr(*recv, attr)) << tensor << " " << attr;
    }
    EXPECT_EQ(send->device(), StringAttr(*send, "send_device"));
    EXPECT_EQ(recv->device(), StringAttr(*recv, "recv_device"));
    EXPECT_EQ(send->attr().at("T").type(), recv->attr().at("T").type());
  }
  // The _Recv of a carries its shape for shape inference in the partition.
  const NodeDef* recv_a = NodesOfOp(parts->at(Cpu(1)), "_Recv")[0];
  EXPECT_EQ(recv_a->attr().at("shape").shape().dim_size(), 2);
}

TEST_F(PartitionTest, EachPartitionImportsOverTheBuiltinOps) {
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Parts();
  ASSERT_TRUE(parts.ok()) << parts.status();
  for (const auto& [device, def] : *parts) {
    Graph g(BuiltinOps());
    ImportOptions opts;
    opts.allow_internal_ops = true;
    absl::Status st = ImportGraphDef(def, &g, opts);
    ASSERT_TRUE(st.ok()) << device << ": " << st;
    EXPECT_EQ(g.num_nodes(), def.node_size());
    // Shapes flow through the _Recv: b1 on CPU:1 is [2,2].
    if (device == Cpu(1)) {
      EXPECT_EQ(g.FindNode("b1")->output_shape(0), TensorShape({2, 2}));
    }
    // Without the option, the internal ops are refused.
    Graph strict(BuiltinOps());
    if (device == Cpu(0)) {
      absl::Status refused = ImportGraphDef(def, &strict);
      EXPECT_FALSE(refused.ok());
      EXPECT_TRUE(Contains(refused, "_Send")) << refused;
    }
  }
}

TEST_F(PartitionTest, AnUnplacedNodeIsFailedPrecondition) {
  s_.graph()->FindNode("b2")->set_assigned_device("");
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Parts();
  ASSERT_FALSE(parts.ok());
  EXPECT_EQ(parts.status().code(), absl::StatusCode::kFailedPrecondition) << parts.status();
  EXPECT_TRUE(Contains(parts.status(), "'b2' (Tanh)")) << parts.status();
}

TEST_F(PartitionTest, OptionsGroupNodesAndSetIncarnations) {
  PartitionOptions opts;
  // Two locations: CPU:0 alone, the rest together.
  opts.node_to_loc = [](const Node& n) {
    return n.assigned_device() == Cpu(0) ? std::string("front") : std::string("back");
  };
  opts.get_incarnation = [](const std::string& loc) -> uint64_t {
    return loc == "front" ? 77 : 88;
  };
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Parts(opts);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  // One pair for a (its five uses are all in "back"); the control edge b1 -> z
  // is now inside "back".
  std::vector<const NodeDef*> sends = NodesOfOp(parts->at("front"), "_Send");
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0]->attr().at("send_device_incarnation").i(), 77);
  EXPECT_EQ(NodesOfOp(parts->at("back"), "_Recv").size(), 1u);
  EXPECT_TRUE(NodesOfOp(parts->at("back"), "_Send").empty());
  const NodeDef* z = FindNodeDef(parts->at("back"), "z");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->input(1), "^b1");
}

TEST(PartitionOutputsTest, SecondOutputAndRepeatedControlEdges) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s.WithOpName("x"), {1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}));
  std::vector<Output> rows = ops::Unpack(s.WithOpName("rows"), x, 2);
  ops::Neg(s.WithOpName("n0"), rows[0]);
  ops::Neg(s.WithOpName("n1"), rows[1]);
  Output gate = ops::Neg(s.WithOpName("gate"), rows[0]);
  // Two nodes on CPU:1 wait for gate (CPU:0): one control transfer serves both.
  ops::Neg(s.WithOpName("after1").WithControlDependencies({gate}), rows[1]);
  ops::Neg(s.WithOpName("after2").WithControlDependencies({gate}), rows[1]);
  ASSERT_TRUE(s.ok()) << s.status();
  for (const char* n : {"x", "rows", "n0", "gate"}) Assign(s, n, Cpu(0));
  for (const char* n : {"n1", "after1", "after2"}) Assign(s, n, Cpu(1));
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Partition(*s.graph());
  ASSERT_TRUE(parts.ok()) << parts.status();
  std::vector<const NodeDef*> sends = NodesOfOp(parts->at(Cpu(0)), "_Send");
  ASSERT_EQ(sends.size(),
            2u);  // rows:1 (for three consumers), and gate's control
  std::set<std::string> sent;
  for (const NodeDef* send : sends) sent.insert(send->input(0));
  EXPECT_TRUE(sent.count("rows:1")) << *sent.begin();
  EXPECT_EQ(NodesOfOp(parts->at(Cpu(0)), "Const").size(),
            2u);  // x and the control dummy
  const NodeDef* a1 = FindNodeDef(parts->at(Cpu(1)), "after1");
  const NodeDef* a2 = FindNodeDef(parts->at(Cpu(1)), "after2");
  ASSERT_NE(a1, nullptr);
  ASSERT_NE(a2, nullptr);
  ASSERT_EQ(a1->input_size(), 2);
  EXPECT_EQ(a1->input(1), a2->input(1));
  EXPECT_EQ(a1->input(0), FindNodeDef(parts->at(Cpu(1)), "n1")->input(0));
}

// A node waiting for several nodes of another device (a train op after a
// parameter server's updates) gets one control transfer for all of them;
// sources on a third device get their own.
TEST(PartitionOutputsTest, ControlEdgesFromOneDeviceShareOneTransfer) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s.WithOpName("x"), {1.f, 2.f}, TensorShape({2}));
  Output u1 = ops::Neg(s.WithOpName("u1"), x);
  Output u2 = ops::Neg(s.WithOpName("u2"), x);
  Output u3 = ops::Neg(s.WithOpName("u3"), x);
  Output v = ops::Neg(s.WithOpName("v"), x);
  ops::Neg(s.WithOpName("train").WithControlDependencies({u1, u2, u3, v}), x);
  ASSERT_TRUE(s.ok()) << s.status();
  for (const char* n : {"x", "u1", "u2", "u3"}) Assign(s, n, Cpu(0));
  Assign(s, "v", Cpu(2));
  Assign(s, "train", Cpu(1));
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Partition(*s.graph());
  ASSERT_TRUE(parts.ok()) << parts.status();
  // CPU:0 sends x (data, to CPU:1 and CPU:2) and one control dummy.
  std::vector<const NodeDef*> consts = NodesOfOp(parts->at(Cpu(0)), "Const");
  ASSERT_EQ(consts.size(), 2u);
  const NodeDef* dummy = consts[0]->name() == "x" ? consts[1] : consts[0];
  EXPECT_EQ(std::vector<std::string>(dummy->input().begin(), dummy->input().end()),
            (std::vector<std::string>{"^u1", "^u2", "^u3"}));
  int control_sends = 0;
  for (const NodeDef* send : NodesOfOp(parts->at(Cpu(0)), "_Send")) {
    if (send->input(0) == dummy->name()) ++control_sends;
  }
  EXPECT_EQ(control_sends, 1);
  EXPECT_EQ(NodesOfOp(parts->at(Cpu(2)), "_Send").size(), 1u);  // v's control
  // train: x, then one control _Recv per source device.
  const NodeDef* train = FindNodeDef(parts->at(Cpu(1)), "train");
  ASSERT_NE(train, nullptr);
  ASSERT_EQ(train->input_size(), 3);
  std::set<std::string> senders;
  for (int k = 1; k < 3; ++k) {
    ASSERT_TRUE(absl::StartsWith(train->input(k), "^")) << train->input(k);
    const NodeDef* recv = FindNodeDef(parts->at(Cpu(1)), train->input(k).substr(1));
    ASSERT_NE(recv, nullptr);
    EXPECT_EQ(recv->op(), "_Recv");
    senders.insert(StringAttr(*recv, "send_device"));
  }
  EXPECT_EQ(senders, (std::set<std::string>{Cpu(0), Cpu(2)}));
}

// A variable read ordered after an update of the variable must see it, as
// on one device: read on another device, the read gets its own transfer
// whose _Send follows the update; read beside the variable but ordered
// after the update only through another device, the read is ordered after
// the update directly.
TEST(PartitionVariableReadsTest, ReadsOrderedAfterUpdatesFollowThemInTheirPartition) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = ops::Variable(s.WithOpName("v"), TensorShape({}), DT_FLOAT);
  Output bump = ops::AssignAdd(s.WithOpName("bump"), v, 1.0f);
  ops::Neg(s.WithOpName("after").WithControlDependencies({bump}), v);
  ops::Neg(s.WithOpName("before"), v);
  Output hop = ops::Neg(s.WithOpName("hop").WithControlDependencies({bump}), 2.0f);
  ops::Neg(s.WithOpName("local_after").WithControlDependencies({hop}), v);
  ops::Neg(s.WithOpName("local_before"), v);
  ASSERT_TRUE(s.ok()) << s.status();
  for (Node* n : s.graph()->nodes()) n->set_assigned_device(Cpu(0));
  for (const char* n : {"after", "before", "hop"}) Assign(s, n, Cpu(1));
  for (Node* n : s.graph()->nodes()) {
    if (n->op() == "Const" && n->out_edges()[0]->dst->name() == "hop") {
      n->set_assigned_device(Cpu(1));
    }
  }
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Partition(*s.graph());
  ASSERT_TRUE(parts.ok()) << parts.status();
  const GraphDef& p0 = parts->at(Cpu(0));
  const GraphDef& p1 = parts->at(Cpu(1));
  // Two transfers of v to CPU:1: the one for `after` is sent after `bump`.
  std::map<std::string, std::vector<std::string>> send_inputs;  // tensor_name -> inputs
  for (const NodeDef* send : NodesOfOp(p0, "_Send")) {
    if (send->input(0) != "v") continue;
    send_inputs[StringAttr(*send, "tensor_name")] =
        std::vector<std::string>(send->input().begin(), send->input().end());
  }
  ASSERT_EQ(send_inputs.size(), 2u);
  auto tensor_of = [&](const std::string& reader) {
    const NodeDef* r = FindNodeDef(p1, FindNodeDef(p1, reader)->input(0));
    return r == nullptr ? std::string("<no recv>") : StringAttr(*r, "tensor_name");
  };
  ASSERT_NE(tensor_of("after"), tensor_of("before"));
  EXPECT_EQ(send_inputs[tensor_of("after")], (std::vector<std::string>{"v", "^bump"}));
  EXPECT_EQ(send_inputs[tensor_of("before")], (std::vector<std::string>{"v"}));
  // local_after waits for hop's control transfer and, directly, for bump.
  const NodeDef* local_after = FindNodeDef(p0, "local_after");
  ASSERT_NE(local_after, nullptr);
  ASSERT_EQ(local_after->input_size(), 3);
  EXPECT_EQ(local_after->input(0), "v");
  EXPECT_TRUE(absl::StartsWith(local_after->input(1), "^_recv_")) << local_after->input(1);
  EXPECT_EQ(local_after->input(2), "^bump");
  EXPECT_EQ(FindNodeDef(p0, "local_before")->input_size(), 1);
  // bump itself takes v by reference: no ordering added to it.
  EXPECT_EQ(FindNodeDef(p0, "bump")->input_size(), 2);
}

// The partitions of a graph, each run by its own executor on its own device
// with one rendezvous for the step, compute what the whole graph computes.
TEST(PartitionRunTest, PartitionsRunTogetherThroughARendezvous) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s.WithOpName("x"), {1.f, -2.f, 3.f, 0.5f}, TensorShape({2, 2}));
  Output a = ops::Square(s.WithOpName("a"), x);                               // CPU:0
  Output b = ops::MatMul(s.WithOpName("b"), a, x);                            // CPU:1
  Output c = ops::Add(s.WithOpName("c").WithControlDependencies({b}), a, b);  // CPU:2
  ASSERT_TRUE(s.ok()) << s.status();
  NodeDef ret;
  ret.set_name("ret");
  ret.set_op("_Retval");
  (*ret.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  (*ret.mutable_attr())["index"] = MakeAttr(int64_t{0});
  absl::StatusOr<Node*> r = s.graph()->AddNode(ret);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(s.graph()->AddEdge(c.node, 0, *r, 0).ok());
  for (const char* n : {"x", "a"}) Assign(s, n, Cpu(0));
  Assign(s, "b", Cpu(1));
  for (const char* n : {"c", "ret"}) Assign(s, n, Cpu(2));
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Partition(*s.graph());
  ASSERT_TRUE(parts.ok()) << parts.status();

  LocalDevicesOptions dopts;
  dopts.num_virtual_cpus = 2;
  dopts.cpu_threads = 1;
  dopts.virtual_cpu_threads = 1;
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateLocalDevices(dopts);
  ASSERT_TRUE(devices.ok()) << devices.status();
  std::vector<std::unique_ptr<Executor>> executors;
  for (const auto& d : *devices) {
    auto g = std::make_unique<Graph>(BuiltinOps());
    ImportOptions iopts;
    iopts.allow_internal_ops = true;
    ASSERT_TRUE(ImportGraphDef(parts->at(d->name()), g.get(), iopts).ok());
    absl::StatusOr<std::unique_ptr<Executor>> ex =
        Executor::Create(std::move(g), d.get(), *BuiltinKernels());
    ASSERT_TRUE(ex.ok()) << ex.status();
    executors.push_back(*std::move(ex));
  }
  for (int64_t step = 1; step <= 3; ++step) {
    LocalRendezvous rendezvous;
    CallFrame frame;
    frame.retvals.resize(1);
    Executor::Args args;
    args.step_id = step;
    args.call_frame = &frame;
    args.rendezvous = &rendezvous;
    // The consumer starts first, so its _Recv nodes wait.
    std::vector<absl::Status> statuses(3);
    std::vector<std::thread> threads;
    for (int i = 2; i >= 0; --i) {
      threads.emplace_back([&, i] { statuses[i] = executors[i]->Run(args); });
    }
    for (std::thread& t : threads) t.join();
    for (const absl::Status& st : statuses) ASSERT_TRUE(st.ok()) << st;
    // a = x^2 = [[1,4],[9,0.25]]; b = a x = [[13,0],[9.75,-17.875]]; c = a + b.
    ASSERT_TRUE(frame.retvals[0].IsInitialized());
    absl::Span<const float> got = frame.retvals[0].flat<float>();
    const std::vector<float> want = {14.f, 4.f, 18.75f, -17.625f};
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << "element " << i;
  }
}

}  // namespace
}  // namespace sluice
