// Tests of the runner: the library's pieces, and the built binary run as a
// user would (exit code, stdout, the one "runner: error: " line on stderr).
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "builtin_session.h"
#include "gmock/gmock.h"
#include "graph/graph_def_io.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "session/direct_session.h"
#include "tools/runner_lib.h"
#include "training/checkpoint/meta_graph.h"
#include "training/checkpoint/saved_model.h"
#include "training/checkpoint/saver.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// y = x . W with W a variable initialized to [[2], [3]] by "init"; a summary
// node whose op Sluice lacks hangs off y. TensorFlow's text layout.
constexpr char kGraph[] = R"pb(node {
                                 name: "x"
                                 op: "Placeholder"
                                 attr {
                                   key: "dtype"
                                   value { type: DT_FLOAT }
                                 }
                                 attr {
                                   key: "shape"
                                   value {
                                     shape {
                                       dim { size: -1 }
                                       dim { size: 2 }
                                     }
                                   }
                                 }
                               }
                               node {
                                 name: "W/initial_value"
                                 op: "Const"
                                 attr {
                                   key: "dtype"
                                   value { type: DT_FLOAT }
                                 }
                                 attr {
                                   key: "value"
                                   value {
                                     tensor {
                                       dtype: DT_FLOAT
                                       tensor_shape {
                                         dim { size: 2 }
                                         dim { size: 1 }
                                       }
                                       tensor_content: "\000\000\000@\000\000@@"
                                     }
                                   }
                                 }
                               }
                               node {
                                 name: "W"
                                 op: "VariableV2"
                                 attr {
                                   key: "container"
                                   value { s: "" }
                                 }
                                 attr {
                                   key: "dtype"
                                   value { type: DT_FLOAT }
                                 }
                                 attr {
                                   key: "shape"
                                   value {
                                     shape {
                                       dim { size: 2 }
                                       dim { size: 1 }
                                     }
                                   }
                                 }
                                 attr {
                                   key: "shared_name"
                                   value { s: "" }
                                 }
                               }
                               node {
                                 name: "W/Assign"
                                 op: "Assign"
                                 input: "W"
                                 input: "W/initial_value"
                                 attr {
                                   key: "T"
                                   value { type: DT_FLOAT }
                                 }
                                 attr {
                                   key: "_class"
                                   value { list { s: "loc:@W" } }
                                 }
                                 attr {
                                   key: "use_locking"
                                   value { b: true }
                                 }
                                 attr {
                                   key: "validate_shape"
                                   value { b: true }
                                 }
                               }
                               node {
                                 name: "W/read"
                                 op: "Identity"
                                 input: "W"
                                 attr {
                                   key: "T"
                                   value { type: DT_FLOAT }
                                 }
                                 attr {
                                   key: "_class"
                                   value { list { s: "loc:@W" } }
                                 }
                               }
                               node {
                                 name: "layer/y"
                                 op: "MatMul"
                                 input: "x"
                                 input: "W/read"
                                 attr {
                                   key: "T"
                                   value { type: DT_FLOAT }
                                 }
                                 attr {
                                   key: "transpose_a"
                                   value { b: false }
                                 }
                                 attr {
                                   key: "transpose_b"
                                   value { b: false }
                                 }
                               }
                               node {
                                 name: "y_summary/tag"
                                 op: "Const"
                                 attr {
                                   key: "dtype"
                                   value { type: DT_STRING }
                                 }
                                 attr {
                                   key: "value"
                                   value {
                                     tensor {
                                       dtype: DT_STRING
                                       tensor_shape {}
                                       string_val: "y"
                                     }
                                   }
                                 }
                               }
                               node {
                                 name: "y_summary"
                                 op: "HistogramSummary"
                                 input: "y_summary/tag"
                                 input: "layer/y"
                                 attr {
                                   key: "T"
                                   value { type: DT_FLOAT }
                                 }
                               }
                               node { name: "init" op: "NoOp" input: "^W/Assign" }
                               versions { producer: 27 }
)pb";

std::string TmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TmpDir() + "/runner_test";
    std::filesystem::create_directories(dir_);
    graph_ = dir_ + "/graph.pbtxt";
    WriteFile(graph_, kGraph);
    x_ = dir_ + "/x.npy";
    ASSERT_TRUE(
        WriteNpyFile(Tensor::FromVector<float>({1, 1, 0, 2}, TensorShape({2, 2})), x_).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  struct Result {
    int exit_code = -1;
    std::string out;
    std::string err;
  };

  // Runs the built binary with `args` (and optional environment prefix).
  Result RunBinary(const std::string& args, const std::string& env = "") {
    std::string err_path = dir_ + "/stderr.txt";
    std::string cmd = absl::StrCat(env, " tools/runner ", args, " 2>", err_path);
    Result r;
    std::FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
    int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = ReadFile(err_path);
    return r;
  }

  // The binary failed cleanly: exit 1 and exactly one error line.
  void ExpectOneErrorLine(const Result& r, const std::string& fragment) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    std::vector<std::string> lines = absl::StrSplit(r.err, '\n', absl::SkipEmpty());
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_THAT(lines[0], StartsWith("runner: error: "));
    EXPECT_THAT(lines[0], HasSubstr(fragment));
  }

  std::string dir_;
  std::string graph_;
  std::string x_;
};

TEST_F(RunnerTest, ParseArgs) {
  absl::StatusOr<RunnerArgs> a =
      ParseRunnerArgs({"--graph=g.pb", "--feed=x=a.npy,y:0=b.npy", "--feed", "z=c.npy",
                       "--init=init", "--target=t1,t2", "--target=t3", "--steps=5", "--fetch=loss",
                       "--fetch=W:0,b", "--out_dir=out"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->graph, "g.pb");
  ASSERT_EQ(a->feeds.size(), 3u);
  EXPECT_EQ(a->feeds[1].first, "y:0");
  EXPECT_EQ(a->feeds[1].second, "b.npy");
  EXPECT_EQ(a->feeds[2].first, "z");
  EXPECT_THAT(a->init_targets, ElementsAre("init"));
  EXPECT_THAT(a->targets, ElementsAre("t1", "t2", "t3"));
  EXPECT_EQ(a->steps, 5);
  EXPECT_THAT(a->fetches, ElementsAre("loss", "W:0", "b"));
  EXPECT_EQ(a->out_dir, "out");

  // A second parse starts from the defaults again.
  a = ParseRunnerArgs({"--graph=h.pb", "--fetch=y"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->steps, 1);
  EXPECT_TRUE(a->feeds.empty());
  EXPECT_TRUE(a->targets.empty());
  EXPECT_EQ(a->out_dir, "");
}

TEST_F(RunnerTest, ParseArgsErrors) {
  auto error = [](std::vector<std::string> args) {
    absl::StatusOr<RunnerArgs> a = ParseRunnerArgs(args);
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(a.status().message());
  };
  EXPECT_THAT(error({"--graph=g", "--fetch=y", "--bogus=1"}), HasSubstr("--bogus"));
  EXPECT_THAT(error({"--graph=g", "--fetch=y", "--steps=abc"}), HasSubstr("--steps"));
  EXPECT_THAT(error({"--graph=g", "--fetch=y", "--steps=-2"}), HasSubstr("--steps"));
  EXPECT_THAT(error({"--fetch=y"}), HasSubstr("--graph"));
  EXPECT_THAT(error({"--graph=g", "--meta_graph=m", "--fetch=y"}), HasSubstr("exactly one"));
  EXPECT_THAT(error({"--graph=g", "--restore=/ckpt/m-1", "--fetch=y"}),
              HasSubstr("--restore needs --meta_graph"));
  EXPECT_THAT(error({"--graph=g"}), HasSubstr("nothing to do"));
  EXPECT_THAT(error({"--graph=g", "--fetch=y", "--feed=x.npy"}), HasSubstr("NAME=FILE"));
  EXPECT_THAT(error({"--graph=g", "--fetch=y", "stray"}), HasSubstr("stray"));
  EXPECT_THAT(error({"--graph=g", "--fetch"}), HasSubstr("needs a value"));
  EXPECT_THAT(error({"--graph=g", "--fetch=y", "--function=f"}),
              HasSubstr("--function is for --saved_model"));
}

TEST_F(RunnerTest, Helpers) {
  EXPECT_EQ(FetchFileName("layer1/W:0"), "layer1_W_0.npy");
  EXPECT_EQ(FetchFileName("loss"), "loss.npy");
  EXPECT_EQ(ResolvePath("a/b.pb", "/home/u"), "/home/u/a/b.pb");
  EXPECT_EQ(ResolvePath("/abs.pb", "/home/u"), "/abs.pb");
  EXPECT_EQ(ResolvePath("a.pb", ""), "a.pb");
  EXPECT_EQ(DescribeFetched("loss", Tensor::Scalar<float>(0.25f)), "loss: float[] 0.25");
  EXPECT_EQ(DescribeFetched("v", Tensor::FromVector<int32_t>({1, 2, 3})), "v: int32[3] [1 2 3]");
  EXPECT_EQ(DescribeFetched("big", Tensor(DT_FLOAT, TensorShape({10, 3}))),
            "big: float[10,3] (30 values)");
}

TEST_F(RunnerTest, RunGraphDefLibrary) {
  absl::StatusOr<GraphDef> def = ParseGraphDef(kGraph);
  ASSERT_TRUE(def.ok()) << def.status();
  RunRequest req;
  req.feeds = {{"x", Tensor::FromVector<float>({1, 1, 0, 2}, TensorShape({2, 2}))}};
  req.init_targets = {"init"};
  req.fetches = {"layer/y:0", "W"};
  absl::StatusOr<RunReport> r = RunGraphDef(*def, req, BuiltinSessionConfig());
  ASSERT_TRUE(r.ok()) << r.status();
  // [[1, 1], [0, 2]] . [[2], [3]] = [[5], [6]]
  EXPECT_THAT(r->fetched[0].flat<float>(), ElementsAre(5.0f, 6.0f));
  EXPECT_THAT(r->fetched[1].flat<float>(), ElementsAre(2.0f, 3.0f));
  EXPECT_TRUE(r->warnings.empty());  // HistogramSummary is an op of Sluice's

  // A fetch index out of range, a fetch naming no node.
  req.fetches = {"layer/y:1"};
  EXPECT_EQ(RunGraphDef(*def, req, BuiltinSessionConfig()).status().code(),
            absl::StatusCode::kInvalidArgument);
  req.fetches = {"nope"};
  EXPECT_EQ(RunGraphDef(*def, req, BuiltinSessionConfig()).status().code(),
            absl::StatusCode::kNotFound);
}

// A node whose op is a library function's name calls it (a TF1 Defun call):
// the runner does not count it as an op Sluice lacks.
TEST_F(RunnerTest, RunGraphDefCallsALibraryFunctionByName) {
  absl::StatusOr<GraphDef> def = ParseGraphDef(R"pb(
    node {
      name: "x"
      op: "Placeholder"
      attr { key: "dtype" value { type: DT_FLOAT } }
    }
    node { name: "c" op: "Twice" input: "x" }
    library {
      function {
        signature {
          name: "Twice"
          input_arg { name: "a" type: DT_FLOAT }
          output_arg { name: "b" type: DT_FLOAT }
        }
        node_def {
          name: "s"
          op: "AddV2"
          input: "a"
          input: "a"
          attr { key: "T" value { type: DT_FLOAT } }
        }
        ret { key: "b" value: "s:z:0" }
      }
    })pb");
  ASSERT_TRUE(def.ok()) << def.status();
  RunRequest req;
  req.feeds = {{"x", Tensor::FromVector<float>({1.5f, -2.0f})}};
  req.fetches = {"c:0"};
  absl::StatusOr<RunReport> r = RunGraphDef(*def, req, BuiltinSessionConfig());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->fetched[0].flat<float>(), ElementsAre(3.0f, -4.0f));
  EXPECT_TRUE(r->warnings.empty());
}

TEST_F(RunnerTest, BinaryRunsAndWritesNpy) {
  Result r = RunBinary(absl::StrCat("--graph=", graph_, " --feed=x=", x_,
                                    " --init=init --fetch=layer/y:0,W --out_dir=", dir_, "/out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "layer/y:0: float[2,1] [5 6]\nW: float[2,1] [2 3]\n");
  EXPECT_EQ(r.err, "");
  absl::StatusOr<Tensor> y = ReadNpyFile(dir_ + "/out/layer_y_0.npy");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({2, 1}));
  EXPECT_THAT(y->flat<float>(), ElementsAre(5.0f, 6.0f));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/out/W.npy"));
}

TEST_F(RunnerTest, BinaryResolvesRelativePathsAgainstWorkingDirectory) {
  Result r = RunBinary("--graph=graph.pbtxt --feed=x=x.npy --init=init --fetch=layer/y",
                       absl::StrCat("BUILD_WORKING_DIRECTORY=", dir_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "layer/y: float[2,1] [5 6]\n");
}

TEST_F(RunnerTest, BinaryRunsOnVirtualDevices) {
  // The same graph with its MatMul pinned to CPU:1.
  std::string pinned = kGraph;
  const std::string name = "name: \"layer/y\"";
  pinned.replace(pinned.find(name), name.size(), name + "\n  device: \"/device:CPU:1\"");
  const std::string path = dir_ + "/pinned.pbtxt";
  WriteFile(path, pinned);
  const std::string base = absl::StrCat("--graph=", path, " --feed=x=", x_, " --init=init ");
  ExpectOneErrorLine(RunBinary(base + "--fetch=layer/y"), "/device:CPU:1");
  Result r = RunBinary(base + "--virtual_cpus=1 --fetch=layer/y");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "layer/y: float[2,1] [5 6]\n");
  r = RunBinary(absl::StrCat("--graph=", graph_, " --feed=x=", x_,
                             " --init=init --virtual_cpus=2 --auto_place --fetch=layer/y"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "layer/y: float[2,1] [5 6]\n");
  ExpectOneErrorLine(RunBinary(base + "--virtual_cpus=-1 --fetch=layer/y"), "--virtual_cpus");
}

TEST_F(RunnerTest, BinaryCheckListsTheOpsSluiceLacks) {
  Result r = RunBinary(absl::StrCat("--graph=", graph_, " --check"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(" distinct ops; Sluice has every one\n"));
  // Two nodes of an op Sluice lacks (the Identity and a Const) and one of
  // another.
  std::string lacking = kGraph;
  auto rename = [&](const std::string& from, const std::string& to) {
    const size_t at = lacking.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    lacking.replace(at, from.size(), to);
  };
  rename("op: \"Identity\"", "op: \"FancyOp\"");
  rename("op: \"Const\"", "op: \"FancyOp\"");
  rename("op: \"HistogramSummary\"", "op: \"OtherOp\"");
  const std::string path = dir_ + "/lacking.pbtxt";
  WriteFile(path, lacking);
  r = RunBinary(absl::StrCat("--graph=", path, " --check"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Sluice lacks 2 of them (3 nodes):\n  FancyOp: 2 nodes\n"
                               "  OtherOp: 1 node\n"));
  EXPECT_EQ(r.err, "");
  ExpectOneErrorLine(RunBinary(absl::StrCat("--graph=", dir_, "/missing.pbtxt --check")),
                     "missing.pbtxt");
}

// A MetaGraph with a saver: y = x . W, W saved as [[4], [5]] after
// initialization to [[2], [3]]; the runner restores it before fetching.
TEST_F(RunnerTest, BinaryRestoresThroughAMetaGraphsSaver) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::VariableAndInit w = ops::VariableWithInit(
      s.WithOpName("W"), ops::Const(s, Tensor::FromVector<float>({2, 3}, TensorShape({2, 1}))));
  ops::MatMul(s.WithOpName("y"), x, w.var);
  Output set = ops::Assign(s.WithOpName("set"), w.var,
                           ops::Const(s, Tensor::FromVector<float>({4, 5}, TensorShape({2, 1}))));
  absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {});
  ASSERT_TRUE(saver.ok()) << saver.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, std::vector<std::string>{"W/Assign"}).ok());
  ASSERT_TRUE((*sess)->Run({}, {}, std::vector<std::string>{"set"}).ok());
  absl::StatusOr<std::string> prefix = (*saver)->Save(sess->get(), dir_ + "/ckpt", 7);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  MetaGraphExportOptions opts;
  opts.saver = saver->get();
  absl::StatusOr<MetaGraphDef> meta = ExportMetaGraph(*s.graph(), opts);
  ASSERT_TRUE(meta.ok()) << meta.status();
  ASSERT_TRUE(WriteMetaGraph(*prefix + ".meta", *meta).ok());

  Result r = RunBinary(absl::StrCat("--meta_graph=", *prefix, ".meta --restore=", *prefix,
                                    " --feed=x=", x_, " --fetch=y:0"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "y:0: float[2,1] [9 10]\n");  // [[1, 1], [0, 2]] . [[4], [5]]
  // Without --restore, W is uninitialized; a missing checkpoint is named.
  ExpectOneErrorLine(RunBinary(absl::StrCat("--meta_graph=", *prefix, ".meta --restore=", dir_,
                                            "/ckpt/none --feed=x=", x_, " --fetch=y:0")),
                     "none");
  ExpectOneErrorLine(RunBinary(absl::StrCat("--meta_graph=", graph_, " --fetch=y:0")),
                     "MetaGraphDef");
  // A MetaGraph without a saver cannot --restore.
  absl::StatusOr<MetaGraphDef> bare = ExportMetaGraph(*s.graph(), {});
  ASSERT_TRUE(bare.ok());
  ASSERT_TRUE(WriteMetaGraph(dir_ + "/bare.meta", *bare).ok());
  ExpectOneErrorLine(RunBinary(absl::StrCat("--meta_graph=", dir_, "/bare.meta --restore=", *prefix,
                                            " --feed=x=", x_, " --fetch=y:0")),
                     "no saver_def");
}

// The same model as a SavedModel: its signature run by key.
TEST_F(RunnerTest, BinaryRunsASavedModelsSignature) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::VariableAndInit w = ops::VariableWithInit(
      s.WithOpName("W"), ops::Const(s, Tensor::FromVector<float>({4, 5}, TensorShape({2, 1}))));
  Output y = ops::MatMul(s.WithOpName("y"), x, w.var);
  absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {});
  ASSERT_TRUE(saver.ok()) << saver.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, std::vector<std::string>{"W/Assign"}).ok());
  SaveModelOptions opts;
  opts.signatures["serving_default"] = PredictSignature({{"features", x}}, {{"scores", y}});
  const std::string model = dir_ + "/model/1";
  ASSERT_TRUE(SaveModel(sess->get(), *s.graph(), **saver, model, opts).ok());

  Result r = RunBinary(absl::StrCat("--saved_model=", model, " --input=features=", x_,
                                    " --out_dir=", dir_, "/sm_out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "scores: float[2,1] [9 10]\n");
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/sm_out/scores.npy"));
  ExpectOneErrorLine(RunBinary(absl::StrCat("--saved_model=", model, " --signature=classify",
                                            " --input=features=", x_)),
                     "no signature 'classify'");
  ExpectOneErrorLine(
      RunBinary(absl::StrCat("--saved_model=", model, " --tag=train", " --input=features=", x_)),
      "{train}");
  ExpectOneErrorLine(RunBinary(absl::StrCat("--saved_model=", model, " --input=pixels=", x_)),
                     "no input 'pixels'");
  ExpectOneErrorLine(RunBinary(absl::StrCat("--saved_model=", model, " --fetch=y")),
                     "--saved_model runs a signature");
  ExpectOneErrorLine(RunBinary(absl::StrCat("--graph=", graph_, " --input=x=", x_, " --fetch=y")),
                     "--input is for --saved_model");
}

// A TF2 module's method by object path (training/checkpoint/testdata/
// module_methods: h(x) = (x . w + bias, offset * scale)).
TEST_F(RunnerTest, BinaryCallsASavedModelsFunction) {
  const std::string model = absl::StrCat(std::getenv("TEST_SRCDIR"), "/",
                                         std::getenv("TEST_WORKSPACE"),
                                         "/training/checkpoint/testdata/module_methods");
  const std::string x = dir_ + "/row.npy";
  ASSERT_TRUE(WriteNpyFile(Tensor::FromVector<float>({1, 2, 3}, TensorShape({1, 3})), x).ok());
  Result r = RunBinary(absl::StrCat("--saved_model=", model, " --function=h --input=x=", x,
                                    " --out_dir=", dir_, "/fn_out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0: float[1,2] [2.25 4.25]\n1: float[2] [2 -2]\n");
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/fn_out/0.npy"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/fn_out/1.npy"));
  ExpectOneErrorLine(
      RunBinary(absl::StrCat("--saved_model=", model, " --function=enc.nope --input=x=", x)),
      "'enc' has no child 'nope'");
  ExpectOneErrorLine(RunBinary(absl::StrCat("--saved_model=", model, " --function=h --input=y=", x)),
                     "no trace takes (y: float[1,3])");
}

TEST_F(RunnerTest, BinaryHelp) {
  Result r = RunBinary("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--feed"));
  EXPECT_THAT(r.out, HasSubstr("--out_dir"));
}

TEST_F(RunnerTest, BinaryErrors) {
  const std::string base = absl::StrCat("--graph=", graph_, " --feed=x=", x_, " --init=init ");
  ExpectOneErrorLine(RunBinary(absl::StrCat("--graph=", dir_, "/missing.pbtxt --fetch=y")),
                     "missing.pbtxt");
  WriteFile(dir_ + "/corrupt.pb", std::string("\x0a\xff\xff\x01garbage\x00\x13", 13));
  ExpectOneErrorLine(RunBinary(absl::StrCat("--graph=", dir_, "/corrupt.pb --fetch=y")),
                     "not a GraphDef");
  ExpectOneErrorLine(RunBinary(base + "--fetch=nope:0"), "no node 'nope'");
  ExpectOneErrorLine(RunBinary(base + "--fetch=layer/y:3"), "layer/y:3");
  ExpectOneErrorLine(RunBinary(base + "--target=nope"), "no node 'nope'");

  ASSERT_TRUE(WriteNpyFile(Tensor::FromVector<float>({1, 2, 3}), dir_ + "/bad_shape.npy").ok());
  ExpectOneErrorLine(RunBinary(absl::StrCat("--graph=", graph_, " --feed=x=", dir_,
                                            "/bad_shape.npy", " --init=init --fetch=layer/y")),
                     "float[3]");
  ASSERT_TRUE(WriteNpyFile(Tensor::FromVector<int32_t>({1, 2}, TensorShape({1, 2})),
                           dir_ + "/bad_dtype.npy")
                  .ok());
  ExpectOneErrorLine(RunBinary(absl::StrCat("--graph=", graph_, " --feed=x=", dir_,
                                            "/bad_dtype.npy", " --init=init --fetch=layer/y")),
                     "int32[1,2]");
  ExpectOneErrorLine(RunBinary(absl::StrCat("--graph=", graph_, " --feed=x=", dir_,
                                            "/missing.npy --fetch=layer/y")),
                     "missing.npy");
  ExpectOneErrorLine(RunBinary(base + "--fetch=layer/y --bogus"), "--bogus");
  ExpectOneErrorLine(RunBinary(base + "--fetch=layer/y --steps=many"), "--steps");
  ExpectOneErrorLine(RunBinary("--fetch=layer/y"), "--graph");
}

}  // namespace
}  // namespace sluice
