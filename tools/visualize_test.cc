// Tests of the placement visualizer: the Graphviz source it builds (clusters,
// Send/Recv edges, legend, collapsed scopes), placing unplaced graphs,
// rendering SVG and PNG, and the tool's errors, also through the binary.
#include "tools/visualize_lib.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "examples/mlp_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/partition.h"
#include "sluice.h"
#include "tools/dot_graph.h"
#include "tools/placement_summary.h"
#include "tools/view_placement.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

int CountOf(absl::string_view text, absl::string_view needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != absl::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// Box node declarations in Graphviz source ("\t\tbox3\t[label=...").
int CountBoxes(absl::string_view dot) {
  int n = 0;
  for (absl::string_view line : absl::StrSplit(dot, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (absl::StartsWith(line, "box") && !absl::StrContains(line, "->")) ++n;
  }
  return n;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// x [2,4] and layer1 (w [4,8], h = x.w) on CPU:0; layer2 (w [8,3], y = h.w)
// and z = relu(h) on CPU:1: one tensor, h, crosses to two consumers.
void BuildTwoDeviceGraph(const Scope& root) {
  Scope d0 = root.WithDevice("/device:CPU:0");
  Scope d1 = root.WithDevice("/device:CPU:1");
  Output x = ops::Placeholder(d0.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({2, 4})});
  Scope l1 = d0.NewSubScope("layer1");
  Output w1 = ops::Const(l1.WithOpName("w"), std::vector<float>(32, 1.0f), TensorShape({4, 8}));
  Output h = ops::MatMul(l1.WithOpName("h"), x, w1);
  Scope l2 = d1.NewSubScope("layer2");
  Output w2 = ops::Const(l2.WithOpName("w"), std::vector<float>(24, 1.0f), TensorShape({8, 3}));
  ops::MatMul(l2.WithOpName("y"), h, w2);
  ops::Relu(d1.WithOpName("z"), h);
}

absl::StatusOr<Rendering> RenderNew(const Scope& root, const VisualizeOptions& options,
                                    ImageFormat format = ImageFormat::kDot) {
  if (!root.ok()) return root.status();
  return RenderGraph(root.graph(), options, format);
}

TEST(VisualizeTest, OneClusterPerDeviceAndLabelledSendRecv) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  BuildTwoDeviceGraph(root);
  absl::StatusOr<Rendering> r = RenderNew(root, {});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string& dot = r->data;
  EXPECT_THAT(dot, StartsWith("digraph placement {"));
  EXPECT_EQ(CountOf(dot, "subgraph cluster_"), 2) << dot;
  EXPECT_THAT(dot, HasSubstr("subgraph cluster_0 {"));
  EXPECT_THAT(dot, HasSubstr("label=\"/device:CPU:0\""));
  EXPECT_THAT(dot, HasSubstr("label=\"/device:CPU:1\""));
  EXPECT_THAT(dot, HasSubstr("fillcolor=\"#cfe2f3\""));
  EXPECT_THAT(dot, HasSubstr("fillcolor=\"#d9ead3\""));
  // Boxes: x, layer1 (collapsed), layer2 (collapsed), z.
  EXPECT_EQ(CountBoxes(dot), 4) << dot;
  EXPECT_THAT(dot, HasSubstr(R"(label="layer1/\n2 nodes\nConst, MatMul")"));
  EXPECT_THAT(dot, HasSubstr(R"(label="z\nRelu")"));
  // h crosses once (one Send/Recv pair for its two consumers on CPU:1),
  // drawn to layer2, the box of its first consumer.
  EXPECT_EQ(CountOf(dot, "dashed,bold"), 1) << dot;
  EXPECT_THAT(dot, HasSubstr("box1 -> box2"));
  EXPECT_THAT(dot, HasSubstr("label=\"float [2,8] 64 B → 2 consumers\""));
  EXPECT_THAT(dot, HasSubstr("color=\"#c0392b\""));
  EXPECT_THAT(dot, HasSubstr("Send/Recv layer1/h:0 -> /device:CPU:1 (layer2/y, z)"));
  // Same-device edge x -> layer1 is plain.
  EXPECT_THAT(dot, HasSubstr("box0 -> box1;"));
}

TEST(VisualizeTest, LegendListsOpsMemoryAndFlopsPerDevice) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  BuildTwoDeviceGraph(root);
  absl::StatusOr<Rendering> r = RenderNew(root, {});
  ASSERT_TRUE(r.ok()) << r.status();
  // CPU:0: outputs x 32 B + w 128 B + h 64 B; MatMul 2*2*8*4 FLOPs.
  // CPU:1: w 96 B + y 24 B + z 64 B; MatMul 2*2*3*8 + Relu 16 FLOPs.
  EXPECT_THAT(r->summary, ElementsAre("/device:CPU:0: 3 ops, 224 B, 128 FLOP",
                                      "/device:CPU:1: 3 ops, 184 B, 112 FLOP",
                                      "Send/Recv: 1 tensor(s), 64 B per step"));
  const std::string& dot = r->data;
  EXPECT_THAT(dot, HasSubstr("legend\t[label=<<table"));
  EXPECT_THAT(dot, HasSubstr("Devices (predicted per step)"));
  EXPECT_THAT(dot, HasSubstr("<td align=\"left\">/device:CPU:0</td><td align=\"right\">3</td>"
                             "<td align=\"right\">224 B</td><td align=\"right\">128 FLOP</td>"));
  EXPECT_THAT(dot, HasSubstr("<td align=\"left\">/device:CPU:1</td><td align=\"right\">3</td>"
                             "<td align=\"right\">184 B</td><td align=\"right\">112 FLOP</td>"));
  EXPECT_THAT(dot, HasSubstr("Send/Recv: 1 tensor(s), 64 B"));
}

TEST(VisualizeTest, DeviceListGivesMemoryLimitsAndFlagsOverflow) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  BuildTwoDeviceGraph(root);
  VisualizeOptions opts;
  absl::StatusOr<std::vector<DeviceSpec>> specs =
      ParseDeviceSpecs("CPU:0{mem=1KiB},CPU:1{mem=100}");
  ASSERT_TRUE(specs.ok()) << specs.status();
  opts.devices = *specs;
  absl::StatusOr<Rendering> r = RenderNew(root, opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->summary, ElementsAre("/device:CPU:0: 3 ops, 224 B of 1 KiB, 128 FLOP",
                                      "/device:CPU:1: 3 ops, 184 B of 100 B, 112 FLOP",
                                      "Send/Recv: 1 tensor(s), 64 B per step"));
  EXPECT_THAT(r->data, HasSubstr("184 B of 100 B (over)"));
  EXPECT_THAT(r->data, Not(HasSubstr("224 B of 1 KiB (over)")));
}

TEST(VisualizeTest, ClusterDevicesNestInJobAndTaskClusters) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Const(root.WithOpName("a").WithDevice("/job:ps/replica:0/task:0/device:CPU:0"),
                        {1.0f, 2.0f});
  Output b =
      ops::Square(root.WithOpName("b").WithDevice("/job:worker/replica:0/task:0/device:CPU:0"), a);
  ops::Neg(root.WithOpName("c").WithDevice("/job:worker/replica:0/task:1/device:CPU:0"), b);
  absl::StatusOr<Rendering> r = RenderNew(root, {});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string& dot = r->data;
  EXPECT_EQ(CountOf(dot, "subgraph cluster_job"), 2) << dot;
  EXPECT_EQ(CountOf(dot, "subgraph cluster_task"), 3) << dot;
  EXPECT_EQ(CountOf(dot, "label=\"/device:CPU:0\""), 3) << dot;
  EXPECT_THAT(dot, HasSubstr("label=\"/job:worker\""));
  EXPECT_THAT(dot, HasSubstr("label=\"/replica:0/task:1\""));
  // Device clusters sit two levels down: job, task, device.
  EXPECT_THAT(dot, HasSubstr("\n\tsubgraph cluster_job"));
  EXPECT_THAT(dot, HasSubstr("\n\t\tsubgraph cluster_task"));
  EXPECT_THAT(dot, HasSubstr("\n\t\t\tsubgraph cluster_0 {"));
  EXPECT_EQ(CountOf(dot, "dashed,bold"), 2) << dot;
  EXPECT_EQ(r->summary[0], "/job:ps/replica:0/task:0/device:CPU:0: 1 ops, 8 B, 0 FLOP");
}

TEST(VisualizeTest, UnplacedNodesWithoutADeviceListGoToTheirOwnCluster) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Const(root.WithOpName("a"), {1.0f, 2.0f});
  ops::Square(root.WithOpName("b").WithDevice("/device:CPU:0"), a);
  absl::StatusOr<Rendering> r = RenderNew(root, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->data, HasSubstr("label=\"(unplaced)\""));
  EXPECT_THAT(r->data, HasSubstr("fillcolor=\"#eeeeee\""));
  EXPECT_EQ(r->summary.back(), "Send/Recv: 1 tensor(s), 8 B per step");
  EXPECT_EQ(r->summary[1], "(unplaced): 1 ops, 8 B, 0 FLOP");
}

TEST(VisualizeTest, DeviceListPlacesRequestsAndPutsTheRestOnTheFirstDevice) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Const(root.WithOpName("a"), {1.0f, 2.0f});
  Output b = ops::Square(root.WithOpName("b").WithDevice("/cpu:1"), a);
  ops::Neg(root.WithOpName("c"), b);
  ASSERT_TRUE(root.ok()) << root.status();
  VisualizeOptions opts;
  opts.devices = {DeviceSpec{"CPU:0"}, DeviceSpec{"/device:CPU:1"}};
  absl::StatusOr<Rendering> r = RenderNew(root, opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->summary,
              ElementsAre("/device:CPU:0: 2 ops, 16 B, 2 FLOP", "/device:CPU:1: 1 ops, 8 B, 2 FLOP",
                          "Send/Recv: 2 tensor(s), 16 B per step"));
  EXPECT_EQ(root.graph()->FindNode("c")->requested_device(), "/device:CPU:0");
  EXPECT_EQ(root.graph()->FindNode("b")->requested_device(), "/device:CPU:1");
}

TEST(VisualizeTest, DeviceListMustMatchEveryRequest) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  ops::Const(root.WithOpName("g").WithDevice("/device:GPU:0"), {1.0f});
  ASSERT_TRUE(root.ok());
  VisualizeOptions opts;
  opts.devices = {DeviceSpec{"CPU:0"}, DeviceSpec{"CPU:1"}};
  absl::StatusOr<Rendering> r = RenderNew(root, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("'g' (Const)"));
  EXPECT_THAT(r.status().message(), HasSubstr("/device:GPU:0"));
  EXPECT_THAT(r.status().message(), HasSubstr("/device:CPU:0, /device:CPU:1"));
}

TEST(VisualizeTest, AutoPlacementSplitsAnMlpThatFitsNoSingleDevice) {
  absl::StatusOr<MlpModel> m = BuildMlp({.layers = {64, 128, 128, 10}});
  ASSERT_TRUE(m.ok()) << m.status();
  Graph* graph = m->scope.graph();
  absl::StatusOr<CostModel> cost = CostModel::Build(*graph);
  ASSERT_TRUE(cost.ok()) << cost.status();
  int64_t total = 0;
  for (const Node* n : graph->nodes()) total += cost->cost(*n).memory_bytes();
  VisualizeOptions opts;
  opts.devices = {DeviceSpec{"CPU:0"}, DeviceSpec{"CPU:1"}};
  for (DeviceSpec& d : opts.devices) d.memory_bytes = total * 3 / 4;
  opts.auto_place = true;
  absl::StatusOr<Rendering> r = RenderGraph(graph, opts, ImageFormat::kDot);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const Node* n : graph->nodes()) {
    EXPECT_THAT(n->requested_device(), testing::AnyOf("/device:CPU:0", "/device:CPU:1"))
        << n->name();
  }
  EXPECT_EQ(CountOf(r->data, "subgraph cluster_"), 2) << r->data;
  EXPECT_GE(CountOf(r->data, "dashed,bold"), 1) << r->data;
  ASSERT_EQ(r->summary.size(), 3u);
  EXPECT_THAT(r->summary[0], StartsWith("/device:CPU:0: "));
  EXPECT_THAT(r->summary[1], StartsWith("/device:CPU:1: "));
  EXPECT_THAT(r->summary[0], Not(HasSubstr("(over)")));
}

TEST(VisualizeTest, AutoPlacementNeedsDevices) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  ops::Const(root.WithOpName("a"), {1.0f});
  VisualizeOptions opts;
  opts.auto_place = true;
  absl::StatusOr<Rendering> r = RenderNew(root, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("device list"));
}

// 1 + 4 scopes * 5 blocks * 25 Adds (each with its Const) = 1001 nodes.
void BuildBigGraph(const Scope& root) {
  Output h = ops::Placeholder(root.WithOpName("x").WithDevice("/device:CPU:0"), DT_FLOAT,
                              {.shape = TensorShape({4})});
  for (int s = 0; s < 4; ++s) {
    Scope scope =
        root.NewSubScope(absl::StrCat("s", s)).WithDevice(absl::StrCat("/device:CPU:", s / 2));
    for (int b = 0; b < 5; ++b) {
      Scope block = scope.NewSubScope(absl::StrCat("block", b));
      for (int i = 0; i < 25; ++i) h = ops::Add(block, h, 1.0f);
    }
  }
}

TEST(VisualizeTest, AThousandNodesInFourScopesDrawAsFiveBoxes) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  BuildBigGraph(root);
  ASSERT_EQ(root.graph()->num_nodes(), 1001);
  absl::StatusOr<Rendering> r = RenderNew(root, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountBoxes(r->data), 5) << r->data;
  EXPECT_THAT(r->data, HasSubstr(R"(label="s2/\n250 nodes\nAdd, Const")"));
  EXPECT_EQ(CountOf(r->data, "dashed,bold"), 1);  // s1 -> s2 crosses CPU:0 -> CPU:1

  Scope root2 = Scope::NewRootScope(BuiltinOps());
  BuildBigGraph(root2);
  VisualizeOptions opts;
  opts.expand = {"s1"};
  r = RenderNew(root2, opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountBoxes(r->data), 9) << r->data;
  EXPECT_THAT(r->data, HasSubstr(R"(label="s1/block3/\n50 nodes\nAdd, Const")"));
}

TEST(VisualizeTest, PartitionGraphSendAndRecvNodesAreDrawnAndJoined) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  BuildTwoDeviceGraph(root);
  ASSERT_TRUE(root.ok()) << root.status();
  for (Node* n : root.graph()->nodes()) {
    n->set_assigned_device(absl::StrCat("/job:localhost/replica:0/task:0", n->requested_device()));
  }
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Partition(*root.graph());
  ASSERT_TRUE(parts.ok()) << parts.status();
  GraphDef merged;
  for (const auto& [device, def] : *parts) {
    for (const NodeDef& n : def.node()) *merged.add_node() = n;
  }
  Graph graph(BuiltinOps());
  absl::Status imported = ImportGraphDef(merged, &graph, {.allow_internal_ops = true});
  ASSERT_TRUE(imported.ok()) << imported;
  absl::StatusOr<Rendering> r = RenderGraph(&graph, {}, ImageFormat::kDot);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string& dot = r->data;
  EXPECT_EQ(CountOf(dot, "shape=rarrow"), 1) << dot;
  EXPECT_EQ(CountOf(dot, "shape=larrow"), 1) << dot;
  // The pair, joined by tensor_name and labelled with the tensor it carries.
  EXPECT_EQ(CountOf(dot, "dashed,bold"), 1) << dot;
  EXPECT_THAT(dot, HasSubstr("float [2,8] 64 B\""));
  EXPECT_EQ(CountOf(dot, "subgraph cluster_task"), 1) << dot;
}

TEST(VisualizeTest, SvgAndPngAreRenderedByGraphviz) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  BuildTwoDeviceGraph(root);
  absl::StatusOr<Rendering> svg = RenderNew(root, {.title = "two devices"}, ImageFormat::kSvg);
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_THAT(svg->data, StartsWith("<?xml"));
  EXPECT_THAT(svg->data, HasSubstr("<svg"));
  EXPECT_THAT(svg->data, HasSubstr("/device:CPU:1"));
  EXPECT_THAT(svg->data, HasSubstr("two devices"));
  EXPECT_EQ(CountOf(svg->data, "class=\"cluster\""), 2);
  absl::StatusOr<Rendering> png = RenderNew(root, {}, ImageFormat::kPng);
  ASSERT_TRUE(png.ok()) << png.status();
  EXPECT_THAT(png->data, StartsWith("\x89PNG\r\n"));
}

TEST(DotGraphTest, UnknownFormatIsAnErrorWithGraphvizsMessage) {
  DotGraph g("t");
  DotGraph::Node* a = g.AddNode(g.root(), "a");
  g.Set(g.AddEdge(a, g.AddNode(g.root(), "b")), "label", "x");
  absl::StatusOr<std::string> r = g.Render("no-such-format");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr("cannot render no-such-format"));
  EXPECT_THAT(r.status().message(), HasSubstr("graphviz"));
  // The graph is still usable afterwards.
  absl::StatusOr<std::string> svg = g.Render("svg");
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_THAT(*svg, HasSubstr("<svg"));
  EXPECT_THAT(g.ToSource(), HasSubstr("a -> b"));
}

TEST(VisualizeTest, Units) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(int64_t{32} << 20), "32 MiB");
  EXPECT_EQ(FormatBytes((int64_t{9} << 30) / 4), "2.25 GiB");
  EXPECT_EQ(FormatFlops(0), "0 FLOP");
  EXPECT_EQ(FormatFlops(640), "640 FLOP");
  EXPECT_EQ(FormatFlops(12345), "12.3 kFLOP");
  EXPECT_EQ(FormatFlops(1.5e6), "1.5 MFLOP");
  EXPECT_EQ(FormatFlops(3.2e9), "3.2 GFLOP");
  EXPECT_EQ(FormatFlops(1.1e12), "1.1 TFLOP");
}

TEST(VisualizeTest, OutputFormatFromExtension) {
  EXPECT_EQ(*ImageFormatFromPath("a/b.svg"), ImageFormat::kSvg);
  EXPECT_EQ(*ImageFormatFromPath("b.PNG"), ImageFormat::kPng);
  EXPECT_EQ(*ImageFormatFromPath("b.dot"), ImageFormat::kDot);
  EXPECT_EQ(*ImageFormatFromPath("b.gv"), ImageFormat::kDot);
  absl::StatusOr<ImageFormat> bad = ImageFormatFromPath("pic.jpg");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'pic.jpg'"));
  EXPECT_THAT(bad.status().message(), HasSubstr(".svg, .png or .dot"));
}

class VisualizeMainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/visualize_test");
    std::filesystem::create_directories(dir_);
    Scope root = Scope::NewRootScope(BuiltinOps());
    BuildTwoDeviceGraph(root);
    absl::StatusOr<GraphDef> def = root.ToGraphDef();
    ASSERT_TRUE(def.ok()) << def.status();
    graph_ = dir_ + "/two.pbtxt";
    ASSERT_TRUE(WriteGraphDefFile(*def, graph_, GraphFileFormat::kText).ok());
    std::ofstream(dir_ + "/garbage.pb") << "\x01\x02 this is not a graph {{{";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  struct Result {
    int code = -1;
    std::string out, err;
  };
  Result Main(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    Result r;
    r.code = VisualizeMain(args, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }
  Result Binary(const std::string& args) {
    std::string err_path = dir_ + "/stderr.txt";
    std::FILE* p = popen(absl::StrCat("tools/visualize ", args, " 2>", err_path).c_str(), "r");
    Result r;
    if (p == nullptr) return r;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) r.out.append(buf, n);
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = ReadFile(err_path);
    return r;
  }
  // Exit 1 and exactly one "visualize: error: " line holding every fragment.
  void ExpectOneErrorLine(const Result& r, const std::vector<std::string>& fragments) {
    EXPECT_EQ(r.code, 1) << r.err;
    std::vector<std::string> lines = absl::StrSplit(r.err, '\n', absl::SkipEmpty());
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_THAT(lines[0], StartsWith("visualize: error: "));
    for (const std::string& f : fragments) EXPECT_THAT(lines[0], HasSubstr(f));
  }

  std::string dir_;
  std::string graph_;
};

TEST_F(VisualizeMainTest, WritesTheFileAndPrintsTheLegend) {
  std::string out = dir_ + "/pic.dot";
  Result r = Main({"--graph=" + graph_, "--out", out, "--devices=CPU:0,CPU:1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, absl::StrCat("wrote ", out,
                                "\n  /device:CPU:0: 3 ops, 224 B, 128 FLOP"
                                "\n  /device:CPU:1: 3 ops, 184 B, 112 FLOP"
                                "\n  Send/Recv: 1 tensor(s), 64 B per step\n"));
  std::string dot = ReadFile(out);
  EXPECT_THAT(dot, HasSubstr("label=\"two.pbtxt: 6 nodes\""));
  EXPECT_EQ(CountOf(dot, "subgraph cluster_"), 2);
}

TEST_F(VisualizeMainTest, Help) {
  Result r = Main({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: visualize --graph=FILE"));
  EXPECT_THAT(r.out, HasSubstr("--expand"));
}

TEST_F(VisualizeMainTest, ErrorsAreOneLine) {
  const std::string g = "--graph=" + graph_, o = "--out=" + dir_ + "/x.svg";
  ExpectOneErrorLine(Main({o}), {"--graph=FILE is required"});
  ExpectOneErrorLine(Main({g}), {"--out=FILE.svg", "required"});
  ExpectOneErrorLine(Main({g, o, "--auto"}), {"--auto needs --devices"});
  ExpectOneErrorLine(Main({g, o, "--colour=red"}), {"unknown flag --colour"});
  ExpectOneErrorLine(Main({g, o, "stray"}), {"unexpected argument 'stray'"});
  ExpectOneErrorLine(Main({g, "--out"}), {"--out needs a value"});
  ExpectOneErrorLine(Main({g, "--out=" + dir_ + "/x.jpg"}), {"x.jpg", ".svg, .png or .dot"});
  ExpectOneErrorLine(Main({"--graph=" + dir_ + "/missing.pbtxt", o}), {"missing.pbtxt"});
  ExpectOneErrorLine(Main({"--graph=" + dir_ + "/garbage.pb", o}), {"garbage.pb"});
  ExpectOneErrorLine(Main({g, o, "--devices=CPU:0{mem=lots}"}), {"--devices", "lots"});
  ExpectOneErrorLine(Main({g, o, "--devices=CPU:0,TPU"}), {"--devices", "TPU"});
  ExpectOneErrorLine(Main({g, o, "--devices=GPU:0"}),
                     {"'x' (Placeholder)", "'/device:CPU:0'", "(/device:GPU:0)"});
  ExpectOneErrorLine(Main({g, o, "--expand=layer3"}), {"'layer3'", "layer1, layer2"});
  ExpectOneErrorLine(Main({g, "--out=" + dir_ + "/no/such/dir/x.dot"}), {"no/such/dir/x.dot"});
}

TEST_F(VisualizeMainTest, BinaryWritesSvgAndFailsCleanly) {
  std::string out = dir_ + "/pic.svg";
  Result r = Binary(absl::StrCat("--graph=", graph_, " --out=", out, " --expand=layer1"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("wrote " + out));
  std::string svg = ReadFile(out);
  EXPECT_THAT(svg, StartsWith("<?xml"));
  EXPECT_THAT(svg, HasSubstr("layer1/h"));  // opened: its nodes are boxes of their own
  ExpectOneErrorLine(Binary(absl::StrCat("--graph=", dir_, "/missing.pb --out=", out)),
                     {"missing.pb"});
}

}  // namespace
}  // namespace sluice
