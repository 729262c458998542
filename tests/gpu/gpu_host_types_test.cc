// Values of types a GPU cannot hold (strings) stay off the GPU when a graph
// is placed over a CPU and a GPU: their feeds, fetches and transfers run on
// the CPU; and a loop pinned to the GPU keeps its counters, predicates and
// handles in host memory and its values in device memory, so no iteration
// copies between them. Placement only, against a GPU-typed stand-in device: it runs on
// any machine and needs the GPU kernels registered (a CUDA build), as CI has.
// (A TF-written graph fetching a string Const failed on an H200 with "no GPU
// kernel for node '_recv_...' (_Recv) with T=string": the fetch's _Retval had
// gone to the GPU, whose _Arg/_Retval took every type.)
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/algorithm.h"
#include "graph/control_flow_info.h"
#include "graph/function_builder.h"
#include "graph/function_inline.h"
#include "graph/graph_def_io.h"
#include "gtest/gtest.h"
#include "examples/cnn_model.h"
#include "ops/testutil/dynamic_rnn_lstm.h"
#include "placement/auto_mixed_precision.h"
#include "ops/functional/functional_control_flow.h"
#include "ops/training/optimizers.h"
#include "placement/partition.h"
#include "placement/placer.h"
#include "runtime/client_graph.h"
#include "runtime/local_devices.h"
#include "runtime/step_decisions.h"
#include "sluice.h"
#include "tests/gpu/gpu_compare.h"
#include "tests/gpu/resource_variable_model.h"
#include "training/checkpoint/saver.h"

namespace sluice {
namespace {

constexpr char kGpu0[] = "/job:localhost/replica:0/task:0/device:GPU:0";

// Its name and type are all the placer reads.
class StandInGpu : public Device {
 public:
  StandInGpu() : Device(kGpu0, kDeviceTypeGpu) {}
  Allocator* allocator() override { return nullptr; }
  ThreadPool* thread_pool() override { return nullptr; }
};

// CPU:0 and a stand-in GPU:0, what the tests place graphs over.
struct CpuAndGpu {
  std::vector<std::unique_ptr<Device>> cpus;
  StandInGpu gpu;
};

// Places `g` over `d` (making its CPU first). With `soft`, a node without a
// GPU kernel goes to the CPU with its colocation group instead of failing,
// so that a test can list such nodes.
absl::Status PlaceOver(Graph* g, CpuAndGpu* d, bool soft) {
  LocalDevicesOptions local;
  local.cpu_threads = 1;
  ASSIGN_OR_RETURN(d->cpus, CreateLocalDevices(local));
  PlacerOptions options;
  options.allow_soft_placement = soft;
  return PlaceGraph(g, {d->cpus[0].get(), &d->gpu}, *BuiltinKernels(), options);
}

// Places `g` over CPU:0 and a stand-in GPU:0; then every node must have a
// kernel on the type of its device. False (after the failures) otherwise.
bool PlaceOverACpuAndAGpu(Graph* g) {
  CpuAndGpu d;
  absl::Status placed = PlaceOver(g, &d, /*soft=*/false);
  EXPECT_TRUE(placed.ok()) << placed;
  if (!placed.ok()) return false;
  bool all = true;
  for (const Node* n : g->nodes()) {
    const std::string type = n->assigned_device() == kGpu0 ? kDeviceTypeGpu : kDeviceTypeCpu;
    const bool has = BuiltinKernels()->FindKernelDef(*n, type) != nullptr;
    EXPECT_TRUE(has) << n->DebugName() << " on " << n->assigned_device();
    all &= has;
  }
  return all;
}

bool HasGpuKernels() {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output y = ops::Square(s, ops::Placeholder(s, DT_FLOAT));
  return BuiltinKernels()->FindKernelDef(*y.node, kDeviceTypeGpu) != nullptr;
}

TEST(GpuHostTypesTest, StringFeedsFetchesAndTransfersStayOnTheCpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Const(s.WithOpName("file_name"), Tensor::FromVector<std::string>({"train.tfrecord"}));
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::Square(s.WithOpName("y"), x);
  ops::Identity(s.WithOpName("tag"), ops::Placeholder(s.WithOpName("label"), DT_STRING));
  ASSERT_TRUE(s.ok()) << s.status();

  absl::StatusOr<ClientGraph> cg =
      BuildClientGraph(*s.graph(), {"x:0", "label:0"}, {"file_name:0", "y:0", "tag:0"}, {});
  ASSERT_TRUE(cg.ok()) << cg.status();
  ASSERT_TRUE(PlaceOverACpuAndAGpu(cg->graph.get()));
  EXPECT_EQ(cg->graph->FindNode("y")->assigned_device(), kGpu0);  // the float work: the GPU

  // No string crosses to the GPU.
  absl::StatusOr<std::map<std::string, GraphDef>> parts = Partition(*cg->graph);
  ASSERT_TRUE(parts.ok()) << parts.status();
  auto gpu_part = parts->find(kGpu0);
  ASSERT_NE(gpu_part, parts->end());
  for (const NodeDef& nd : gpu_part->second.node()) {
    auto t = nd.attr().find("T");
    if (t == nd.attr().end()) continue;
    EXPECT_NE(t->second.type(), ::tensorflow::DT_STRING) << nd.name() << " (" << nd.op() << ")";
  }
}

// A worker whose variables (ref and resource) live on its GPU saves them from its CPU: the
// saver's file names and SaveV2/RestoreV2 have CPU kernels only. (On an
// H200, multi_worker_mlp's workers failed with "cannot place node
// 'global_step' (VariableV2) on .../device:GPU:0 with its 2 colocated nodes:
// ... has no GPU kernel for 'save/shard_0/filename' (StringJoin)": the
// saver's ops were colocated with the variables.)
TEST(GpuHostTypesTest, VariablesOnTheGpuAreSavedFromTheCpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  for (bool sharded : {true, false}) {
    SCOPED_TRACE(sharded ? "sharded" : "one shard");
    Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kGpu0);
    ops::VariableWithInit(s.WithOpName("w"), {1.0f, 2.0f});
    CreateGlobalStep(s);
    // A resource variable too: read and assigned on the GPU, saved from the CPU.
    ops::VarHandleOp(s.WithOpName("r"), DT_FLOAT, TensorShape({2}));
    ASSERT_TRUE(s.ok()) << s.status();
    SaverOptions options;
    options.sharded = sharded;
    absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {}, options);
    ASSERT_TRUE(saver.ok()) << saver.status();

    absl::StatusOr<ClientGraph> cg =
        BuildClientGraph(*s.graph(), {"save/prefix:0"}, {}, {"save/save_all", "save/restore_all"});
    ASSERT_TRUE(cg.ok()) << cg.status();
    ASSERT_TRUE(PlaceOverACpuAndAGpu(cg->graph.get()));
    EXPECT_EQ(cg->graph->FindNode("w")->assigned_device(), kGpu0);
    EXPECT_EQ(cg->graph->FindNode("r")->assigned_device(), kGpu0);
    int saves = 0, resource_ops = 0;
    for (const Node* n : cg->graph->nodes()) {
      if (n->op() == "SaveV2") {
        ++saves;
        EXPECT_NE(n->assigned_device(), kGpu0);
      }
      if (n->op() == "ReadVariableOp" || n->op() == "AssignVariableOp") {
        ++resource_ops;
        EXPECT_EQ(n->assigned_device(), kGpu0) << n->DebugName();
      }
    }
    EXPECT_EQ(saves, 1);
    EXPECT_EQ(resource_ops, 2);  // r's read for the save, its restoring assignment
  }
}

// An embedding table on the GPU trained by each optimizer's sparse update:
// the gather's gradient arrives as IndexedSlices and the update (ScatterSub,
// ScatterAdd, SparseApply*), colocated with the table, needs a GPU kernel.
TEST(GpuHostTypesTest, SparseUpdatesOfAnEmbeddingOnTheGpuRunOnTheGpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  GradientDescentOptimizer sgd(0.1);
  MomentumOptimizer momentum(0.1, 0.9);
  AdamOptimizer adam(0.01);
  AdagradOptimizer adagrad(0.1);
  FtrlOptimizer ftrl(0.1);
  RMSPropOptimizer rmsprop(0.1), centered(0.1, {.momentum = 0.9, .centered = true});
  AdadeltaOptimizer adadelta(1.0);
  for (Optimizer* opt : std::vector<Optimizer*>{&sgd, &momentum, &adam, &adagrad, &ftrl, &rmsprop,
                                                &centered, &adadelta}) {
    {
      SCOPED_TRACE(opt->name());
      Scope s = Scope::NewRootScope(BuiltinOps());
      Scope gpu = s.WithDevice(kGpu0);
      Output init = ops::Const(s, std::vector<float>(40, 0.5f), TensorShape({10, 4}));
      Output table = ops::VariableWithInit(gpu.WithOpName("table"), init).var;
      Output ids = ops::Placeholder(s.WithOpName("ids"), DT_INT64);
      Output rows = ops::GatherV2(gpu, table, ids, int32_t{0});
      Output loss = ops::Sum(gpu.WithOpName("loss"), ops::Square(gpu, rows), {0, 1});
      absl::StatusOr<Node*> train = opt->Minimize(s, loss, {table});
      ASSERT_TRUE(train.ok()) << train.status();
      ASSERT_TRUE(s.ok()) << s.status();

      absl::StatusOr<ClientGraph> cg =
          BuildClientGraph(*s.graph(), {"ids:0"}, {"loss:0"}, {(*train)->name()});
      ASSERT_TRUE(cg.ok()) << cg.status();
      ASSERT_TRUE(PlaceOverACpuAndAGpu(cg->graph.get()));
      int sparse_updates = 0;
      for (const Node* n : cg->graph->nodes()) {
        const std::string& op = n->op();
        if (absl::StrContains(op, "Scatter") || absl::StrContains(op, "SparseApply")) {
          ++sparse_updates;
          EXPECT_EQ(n->assigned_device(), kGpu0) << n->DebugName();
        }
      }
      EXPECT_GT(sparse_updates, 0);
    }
  }
}

// Every dense training rule with a GPU kernel (ops/gpu/training.cu and the
// row updates of ops/gpu/sparse_training.cu), ref and resource forms: its
// variables on the GPU, it stays with them there. Inputs come from the op's
// definition: a ref or resource argument is a variable on the GPU, "grad" a
// constant on the GPU, any other a scalar constant left to placement.
TEST(GpuHostTypesTest, DenseTrainingRulesStayWithTheirVariablesOnTheGpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  const TensorShape shape({4, 3});
  for (const char* rule : {"GradientDescent", "Momentum", "KerasMomentum", "Adam", "Adagrad",
                           "AdagradV2", "Ftrl", "FtrlV2", "Adadelta", "RMSProp", "CenteredRMSProp",
                           "AdaMax", "AdamWithAmsgrad", "AddSign", "PowerSign"}) {
    for (const char* prefix : {"Apply", "ResourceApply"}) {
      const std::string op = absl::StrCat(prefix, rule);
      const OpDef* def = BuiltinOps()->Find(op);
      if (def == nullptr) {  // the Keras rules have only the resource form
        EXPECT_TRUE(std::string(prefix) == "Apply") << op << " is not an op";
        continue;
      }
      SCOPED_TRACE(op);
      Scope root = Scope::NewRootScope(BuiltinOps());
      Scope gpu = root.WithDevice(kGpu0);
      OpBuilder b = gpu.WithOpName("update").Op(op);
      for (const ArgDef& arg : def->inputs) {
        const std::string name = absl::StrCat("in_", arg.name);
        if (arg.is_ref) {
          b.Input(ops::Variable(gpu.WithOpName(name), shape, DT_FLOAT));
        } else if (arg.type == DT_RESOURCE) {
          b.Input(ops::VarHandleOp(gpu.WithOpName(name), DT_FLOAT, shape));
        } else if (arg.name == "grad" || arg.name == "delta") {
          b.Input(ops::Const(gpu.WithOpName(name), std::vector<float>(12, 0.5f), shape));
        } else {
          b.Input(ops::Const(root.WithOpName(name), 0.5f));
        }
      }
      b.Finalize();
      ASSERT_TRUE(root.ok()) << root.status();
      CpuAndGpu d;  // soft: a missing kernel would move the update to the CPU
      absl::Status placed = PlaceOver(root.graph(), &d, /*soft=*/true);
      ASSERT_TRUE(placed.ok()) << placed;
      const Node* update = root.graph()->FindNode("update");
      ASSERT_NE(update, nullptr);
      EXPECT_EQ(update->assigned_device(), kGpu0);
      EXPECT_NE(BuiltinKernels()->FindKernelDef(*update, kDeviceTypeGpu), nullptr);
    }
  }
}

// The activations beyond Relu and their gradient ops have GPU kernels for
// every type their ops allow, and L2Loss for float and double, so a network
// using them stays on the GPU (a missing kernel would move the op to the
// CPU, a copy each way per step).
TEST(GpuHostTypesTest, ActivationsAndTheirGradientsHaveGpuKernels) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    for (const char* op : {"Relu6", "Elu", "Selu", "LeakyRelu", "Softplus", "Softsign"}) {
      Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kGpu0);
      Output x = ops::Placeholder(s, t);
      Output y = s.Op(op).Input(x).Finalize1();
      Output dx = s.Op(absl::StrCat(op, "Grad")).Input(x).Input(y).Finalize1();
      ASSERT_TRUE(s.ok()) << s.status();
      for (const Output& o : {y, dx}) {
        EXPECT_NE(BuiltinKernels()->FindKernelDef(*o.node, kDeviceTypeGpu), nullptr)
            << o.node->op() << " " << DataTypeName(t);
      }
    }
    if (t == DT_FLOAT || t == DT_DOUBLE) {  // weight decay's loss
      Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kGpu0);
      Output loss = ops::L2Loss(s, ops::Placeholder(s, t));
      ASSERT_TRUE(s.ok()) << s.status();
      EXPECT_NE(BuiltinKernels()->FindKernelDef(*loss.node, kDeviceTypeGpu), nullptr)
          << "L2Loss " << DataTypeName(t);
    }
  }
}

// The fused batch norm and its gradient have GPU kernels, so a CNN with
// batch normalization trains wholly on the GPU.
TEST(GpuHostTypesTest, FusedBatchNormHasGpuKernels) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kGpu0);
  Output x = ops::Placeholder(s, DT_FLOAT);
  Output c = ops::Placeholder(s, DT_FLOAT);
  ops::FusedBatchNormOutputs bn = ops::FusedBatchNormV3(s, x, c, c, c, c);
  ops::FusedBatchNormGradOutputs g =
      ops::FusedBatchNormGradV3(s, x, x, c, bn.reserve_space_1, bn.reserve_space_2, c);
  ASSERT_TRUE(s.ok()) << s.status();
  for (const Output& o : {bn.y, g.x_backprop}) {
    EXPECT_NE(BuiltinKernels()->FindKernelDef(*o.node, kDeviceTypeGpu), nullptr)
        << o.node->op();
  }
  // In 16 bits (mixed precision's T; U stays float).
  for (DataType t : {DT_HALF, DT_BFLOAT16}) {
    Scope h = Scope::NewRootScope(BuiltinOps()).WithDevice(kGpu0);
    Output x16 = ops::Placeholder(h, t);
    Output c32 = ops::Placeholder(h, DT_FLOAT);
    ops::FusedBatchNormOutputs bn16 = ops::FusedBatchNormV3(h, x16, c32, c32, c32, c32);
    ops::FusedBatchNormGradOutputs g16 = ops::FusedBatchNormGradV3(
        h, x16, x16, c32, bn16.reserve_space_1, bn16.reserve_space_2, c32);
    ASSERT_TRUE(h.ok()) << h.status();
    for (const Output& o : {bn16.y, g16.x_backprop}) {
      EXPECT_NE(BuiltinKernels()->FindKernelDef(*o.node, kDeviceTypeGpu), nullptr)
          << o.node->op() << " " << DataTypeName(t);
    }
  }
}

// BatchMatMul and BatchMatMulV2 have GPU kernels in the four float types
// (attention's products stay on the GPU).
TEST(GpuHostTypesTest, BatchMatMulHasGpuKernels) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    for (const char* op : {"BatchMatMul", "BatchMatMulV2"}) {
      Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kGpu0);
      Output x = ops::Placeholder(s, t);
      Output y = s.Op(op).Input(x).Input(x).Attr("adj_x", false).Attr("adj_y", true).Finalize1();
      ASSERT_TRUE(s.ok()) << s.status();
      EXPECT_NE(BuiltinKernels()->FindKernelDef(*y.node, kDeviceTypeGpu), nullptr)
          << op << " " << DataTypeName(t);
    }
  }
}

// GatherNd, ScatterNd, Pad and OneHot have GPU kernels (ScatterNd's shape
// in host memory), so gather_nd, its gradient, explicit padding and one-hot
// labels stay on the GPU.
TEST(GpuHostTypesTest, GatherNdAndScatterNdHaveGpuKernels) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  for (DataType index_type : {DT_INT32, DT_INT64}) {
    Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kGpu0);
    Output params = ops::Placeholder(s, DT_FLOAT);
    Output indices = ops::Placeholder(s, index_type);
    Output g = ops::GatherNd(s, params, indices);
    Output shape = ops::Placeholder(s, index_type);
    Output sc = ops::ScatterNd(s, indices, g, shape);
    ASSERT_TRUE(s.ok()) << s.status();
    for (const Output& o : {g, sc}) {
      EXPECT_NE(BuiltinKernels()->FindKernelDef(*o.node, kDeviceTypeGpu), nullptr)
          << o.node->op() << " " << DataTypeName(index_type);
    }
    Output padded = ops::Pad(s, params, ops::Placeholder(s, index_type));
    EXPECT_NE(BuiltinKernels()->FindKernelDef(*padded.node, kDeviceTypeGpu), nullptr)
        << "Pad " << DataTypeName(index_type);
    Output hot = ops::OneHot(s, indices, ops::Placeholder(s, DT_INT32),
                             ops::Placeholder(s, DT_FLOAT), ops::Placeholder(s, DT_FLOAT));
    EXPECT_NE(BuiltinKernels()->FindKernelDef(*hot.node, kDeviceTypeGpu), nullptr)
        << "OneHot " << DataTypeName(index_type);
    const KernelDef* def = BuiltinKernels()->FindKernelDef(*sc.node, kDeviceTypeGpu);
    ASSERT_NE(def, nullptr);
    EXPECT_TRUE(HostMemoryArgs(*def, *sc.node).input_on_host[2]) << "ScatterNd's shape";
  }
}

// A TensorArray on the GPU whose handle passes through an Identity (as a
// function's argument or a loop variable does) stays on the GPU: placement
// joins every op taking a resource handle with the op that made it, so the
// Identity needs (and has) a GPU kernel for handles.
TEST(GpuHostTypesTest, AResourceHandleThroughIdentityStaysWithItsResource) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope s = root.WithDevice(kGpu0);
  ops::TensorArrayOutputs ta = ops::TensorArrayV3(s.WithOpName("ta"), ops::Const(s, 2), DT_FLOAT);
  Output handle = ops::Identity(s.WithOpName("handle"), ta.handle);
  Output flow = ops::TensorArrayWriteV3(s.WithOpName("write"), handle, ops::Const(s, 0),
                                        ops::Const(s, std::vector<float>{1, 2}), ta.flow);
  ops::TensorArrayReadV3(s.WithOpName("read"), handle, ops::Const(s, 0), flow, DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  CpuAndGpu d;  // soft: a missing kernel would move the group to the CPU
  absl::Status placed = PlaceOver(root.graph(), &d, /*soft=*/true);
  ASSERT_TRUE(placed.ok()) << placed;
  for (const char* name : {"ta", "handle", "write", "read"}) {
    const Node* n = root.graph()->FindNode(name);
    ASSERT_NE(n, nullptr) << name;
    EXPECT_EQ(n->assigned_device(), kGpu0) << name;
  }
}

// Where a node's argument lives on its device: host memory or not.
struct ArgMemory {
  bool found = false;
  ArgMemoryTypes types;
};

ArgMemory MemoryOf(const Node& n) {
  ArgMemory m;
  const std::string type = n.assigned_device() == kGpu0 ? kDeviceTypeGpu : kDeviceTypeCpu;
  const KernelDef* def = BuiltinKernels()->FindKernelDef(n, type);
  if (def == nullptr) return m;
  m.found = true;
  m.types = HostMemoryArgs(*def, n);
  return m;
}

// The feeds a recording of `g`'s GPU:0 step is keyed on, as StepReplay
// finds them (runtime/step_decisions.h): with the host reads of the GPU
// kernels' host-memory inputs.
absl::StatusOr<std::vector<int>> DecidingFeedsOnTheGpu(const Graph& g) {
  return DecidingFeeds(g, [](const Node& n, int i) {
    if (n.assigned_device() != kGpu0) return false;
    const ArgMemory m = MemoryOf(n);
    return m.found && m.types.input_on_host[i] != 0;
  });
}

// A tf.nn.dynamic_rnn LSTM training step pinned to GPU:0 (forward loop,
// gradient loop with its stacks, TensorArrays, the update; with
// `with_lengths`, a fed sequence_length, "lengths"), placed over CPU:0 and a
// stand-in GPU with soft placement (so that a node without a GPU kernel
// shows up on the CPU instead of failing).
struct PlacedLstmStep {
  std::unique_ptr<Graph> graph;
  CpuAndGpu devices;
};

void PlaceLstmStep(PlacedLstmStep *step, bool with_lengths) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope s = root.WithDevice(kGpu0);
  const LstmSizes z{.batch = 4, .time = 5, .depth = 3, .hidden = 6};
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output target = ops::Placeholder(s.WithOpName("target"), DT_FLOAT);
  Output lengths;
  if (with_lengths) lengths = ops::Placeholder(s.WithOpName("lengths"), DT_INT32);
  ops::VariableAndInit kernel = ops::VariableWithInit(
      s.WithOpName("kernel"),
      ops::Fill(s, {z.depth + z.hidden, 4 * z.hidden}, 0.1f));
  ops::VariableAndInit bias = ops::VariableWithInit(
      s.WithOpName("bias"), ops::Fill(s, {4 * z.hidden}, 0.0f));
  absl::StatusOr<Output> y =
      DynamicRnnLstm(s, x, ops::Identity(s, kernel.var),
                     ops::Identity(s, bias.var), DT_FLOAT, z, lengths);
  ASSERT_TRUE(y.ok()) << y.status();
  Output loss = ops::Mean(s.WithOpName("loss"),
                          ops::Square(s, ops::Sub(s, *y, target)), {0, 1, 2});
  GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<Node *> train = sgd.Minimize(s, loss, {kernel.var, bias.var});
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(root.ok()) << root.status();

  std::vector<std::string> feeds = {"x:0", "target:0"};
  if (with_lengths) feeds.push_back("lengths:0");
  absl::StatusOr<ClientGraph> cg =
      BuildClientGraph(*root.graph(), feeds, {"loss:0"}, {(*train)->name()});
  ASSERT_TRUE(cg.ok()) << cg.status();
  step->graph = std::move(cg->graph);
  absl::Status placed = PlaceOver(step->graph.get(), &step->devices, /*soft=*/true);
  ASSERT_TRUE(placed.ok()) << placed;
}

// The nodes of `g` placed off GPU:0 (but _Arg and _Retval).
std::vector<std::string> OffTheGpu(const Graph &g) {
  std::vector<std::string> off;
  for (const Node *n : g.nodes()) {
    if (n->assigned_device() != kGpu0 && n->op() != "_Arg" &&
        n->op() != "_Retval") {
      off.push_back(absl::StrCat(n->name(), " (", n->op(), ")"));
    }
  }
  return off;
}

// The edges inside a loop that join a host-memory output to a
// device-memory input or back: where the executor copies once per
// iteration. *loop_edges counts the loops' edges that carry tensors.
std::vector<const Edge *> PerIterationCopies(const Graph &g, int *loop_edges) {
  std::vector<const Edge *> copies;
  *loop_edges = 0;
  absl::StatusOr<std::vector<Node *>> order = TopologicalOrder(g);
  EXPECT_TRUE(order.ok()) << order.status();
  if (!order.ok()) return copies;
  absl::StatusOr<ControlFlowInfo> frames = BuildControlFlowInfo(g, *order);
  EXPECT_TRUE(frames.ok()) << frames.status();
  if (!frames.ok()) return copies;
  for (const Node *n : g.nodes()) {
    for (const Edge *e : n->out_edges()) {
      if (e->IsControl())
        continue;
      if (frames->frame_of[e->dst->id()] <= 0)
        continue; // the root frame: once per step
      const DataType t = e->src->output_type(e->src_output);
      if (IsRefType(t) || HoldsObjects(t) || BaseType(t) == DT_RESOURCE)
        continue; // never moved
      ++*loop_edges;
      const ArgMemory src = MemoryOf(*e->src), dst = MemoryOf(*e->dst);
      if (!src.found || !dst.found)
        continue; // listed by OffTheGpu
      const bool src_host = src.types.output_on_host[e->src_output] != 0;
      const bool dst_host = dst.types.input_on_host[e->dst_input] != 0;
      if (src_host != dst_host) copies.push_back(e);
    }
  }
  return copies;
}

std::string Describe(const Edge *e) {
  return absl::StrCat(e->src->name(), ":", e->src_output, " -> ",
                      e->dst->name(), ":", e->dst_input);
}

// The stateful nodes of `g` but variables and the frame ops; each one's GPU
// kernel must replay right (runtime/step_replay.h) for the step to be
// recorded.
int ExpectStatefulKernelsReplayRight(const Graph &g, StandInGpu *gpu) {
  int stateful = 0;
  for (const Node *n : g.nodes()) {
    if (!n->IsStateful() || n->op_def().is_variable || n->op() == "_Arg" ||
        n->op() == "_Retval")
      continue;
    ++stateful;
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
        BuiltinKernels()->CreateKernel(*n, gpu);
    EXPECT_TRUE(kernel.ok()) << kernel.status();
    if (!kernel.ok()) continue;
    EXPECT_TRUE((*kernel)->ReplaysRight())
        << n->DebugName() << " keeps the step from being recorded";
  }
  return stateful;
}

// Every node of the LSTM step has a GPU kernel, so none falls back to the
// CPU; and inside both loops no edge joins a host-memory output to a
// device-memory input or back.
TEST(GpuLoopsTest, AnLstmTrainingStepOnTheGpuCopiesNothingPerIteration) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  PlacedLstmStep step;
  ASSERT_NO_FATAL_FAILURE(PlaceLstmStep(&step, /*with_lengths=*/false));
  const Graph &g = *step.graph;
  const std::vector<std::string> off = OffTheGpu(g);
  EXPECT_TRUE(off.empty()) << "no GPU kernel: " << absl::StrJoin(off, ", ");

  int loop_edges = 0;
  std::vector<std::string> copies;
  for (const Edge *e : PerIterationCopies(g, &loop_edges)) copies.push_back(Describe(e));
  EXPECT_GT(loop_edges, 50);
  EXPECT_TRUE(copies.empty()) << copies.size() << " copies per iteration:\n"
                              << absl::StrJoin(copies, "\n");

  // And the whole step, both loops included, can be recorded and replayed
  // (runtime/step_replay.h): its trip counts follow from x's shape, and
  // every stateful node's GPU kernel (TensorArrays, stacks) replays right.
  const absl::StatusOr<std::vector<int>> deciding = DecidingFeedsOnTheGpu(g);
  ASSERT_TRUE(deciding.ok()) << deciding.status();
  EXPECT_TRUE(deciding->empty()) << "a feed's value decides: recorded per value";
  EXPECT_GT(ExpectStatefulKernelsReplayRight(g, &step.devices.gpu), 10); // the arrays' and stacks' ops
}

// Lowers and inlines `g` as a session does (at least `min_lowered` nodes
// and calls) and places it over CPU:0 and the stand-in GPU (soft); expects
// every node on the GPU, and more than `min_loop_edges` loop edges, none
// joining host and device memory.
void ExpectLoweredLoopsOnTheGpuWithoutCopies(Graph* g, int min_lowered, int min_loop_edges) {
  absl::StatusOr<int> lowered = InlineFunctionCalls(g);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_GE(*lowered, min_lowered);
  CpuAndGpu d;
  absl::Status placed = PlaceOver(g, &d, /*soft=*/true);
  ASSERT_TRUE(placed.ok()) << placed;
  const std::vector<std::string> off = OffTheGpu(*g);
  EXPECT_TRUE(off.empty()) << "no GPU kernel: " << absl::StrJoin(off, ", ");
  int loop_edges = 0;
  std::vector<std::string> copies;
  for (const Edge* e : PerIterationCopies(*g, &loop_edges)) copies.push_back(Describe(e));
  EXPECT_GT(loop_edges, min_loop_edges);
  EXPECT_TRUE(copies.empty()) << copies.size() << " copies per iteration:\n"
                              << absl::StrJoin(copies, "\n");
}

// TensorFlow 2's own RNN step (ops/functional/testdata, written by TF
// 2.21: TensorArrays as TensorLists in a StatelessWhile, tf.gradients of it
// a second While with TensorList accumulators) pinned to GPU:0: lowered and
// inlined as a session does, every node has a GPU kernel, and inside the
// loops no edge joins host memory to device memory (the lists, counters
// and predicates on the host, the elements and the math on the device).
TEST(GpuLoopsTest, ATensorFlow2LoopOverTensorListsOnTheGpuCopiesNothingPerIteration) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  absl::StatusOr<GraphDef> def =
      ReadGraphDefFile(gpu_test::TestDataPath("ops/functional/testdata/control_flow_v2_grad.pbtxt"));
  ASSERT_TRUE(def.ok()) << def.status();
  for (tensorflow::NodeDef& n : *def->mutable_node()) n.set_device(kGpu0);
  Graph whole(BuiltinOps());
  ASSERT_TRUE(ImportGraphDef(*def, &whole).ok());
  absl::StatusOr<ClientGraph> cg = BuildClientGraph(whole, {"xs:0"}, {"hs:0", "gx:0"}, {});
  ASSERT_TRUE(cg.ok()) << cg.status();
  Graph& g = *cg->graph;
  // Two Whiles, their conditions and bodies.
  ASSERT_NO_FATAL_FAILURE(ExpectLoweredLoopsOnTheGpuWithoutCopies(&g, 6, 20));
  int list_ops = 0;
  for (const Node* n : g.nodes()) list_ops += absl::StartsWith(n->op(), "TensorList") ? 1 : 0;
  EXPECT_GE(list_ops, 8);
}

// A Keras 3 model's training step as TensorFlow 2.21 traces it (LSTM, GRU,
// Dense; GradientTape: a gradient StatelessWhile per layer popping
// TensorList accumulators; Split, StridedSlice(Grad), BiasAddGrad, the
// activations' gradients) pinned to GPU:0: every node has a GPU kernel and
// nothing crosses between host and device memory inside the loops.
TEST(GpuLoopsTest, AKerasLstmGruTrainingStepPlacesOnTheGpuWithoutCopies) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  absl::StatusOr<GraphDef> def =
      ReadGraphDefFile(gpu_test::TestDataPath("ops/functional/testdata/keras_rnn_grad.pb"));
  ASSERT_TRUE(def.ok()) << def.status();
  for (tensorflow::NodeDef& n : *def->mutable_node()) n.set_device(kGpu0);
  Graph whole(BuiltinOps());
  ASSERT_TRUE(ImportGraphDef(*def, &whole).ok());
  std::vector<std::string> feeds = {"x:0", "y:0"};
  for (int i = 0; i < 8; ++i) feeds.push_back(absl::StrCat("w_", i, ":0"));
  std::vector<std::string> fetches = {"Identity:0"};
  for (int i = 1; i <= 8; ++i) fetches.push_back(absl::StrCat("Identity_", i, ":0"));
  absl::StatusOr<ClientGraph> cg = BuildClientGraph(whole, feeds, fetches, {});
  ASSERT_TRUE(cg.ok()) << cg.status();
  // Two layers: two forward and two gradient Whiles, with their conditions and bodies.
  ASSERT_NO_FATAL_FAILURE(ExpectLoweredLoopsOnTheGpuWithoutCopies(cg->graph.get(), 12, 100));
}

// A graph TensorFlow 2.21 wrote (ops/functional/testdata/`file`; fed x, y
// and the weights w_i, fetching the loss and the gradients) pinned to
// GPU:0: lowered as a session lowers it (`lowered` nodes), every node has a
// GPU kernel.
void ExpectTensorFlowStepWhollyOnTheGpu(const std::string& file, int lowered) {
  absl::StatusOr<GraphDef> def =
      ReadGraphDefFile(gpu_test::TestDataPath("ops/functional/testdata/" + file));
  ASSERT_TRUE(def.ok()) << def.status();
  for (tensorflow::NodeDef& n : *def->mutable_node()) n.set_device(kGpu0);
  Graph whole(BuiltinOps());
  ASSERT_TRUE(ImportGraphDef(*def, &whole).ok());
  std::vector<std::string> feeds = {"x:0", "y:0"}, fetches = {"Identity:0"};
  for (const Node* n : whole.nodes()) {
    if (n->op() == "Placeholder" && absl::StartsWith(n->name(), "w_")) {
      feeds.push_back(n->name() + ":0");
      fetches.push_back(absl::StrCat("Identity_", fetches.size(), ":0"));
    }
  }
  absl::StatusOr<ClientGraph> cg = BuildClientGraph(whole, feeds, fetches, {});
  ASSERT_TRUE(cg.ok()) << cg.status();
  Graph& g = *cg->graph;
  absl::StatusOr<int> inlined = InlineFunctionCalls(&g);
  ASSERT_TRUE(inlined.ok()) << inlined.status();
  EXPECT_EQ(*inlined, lowered);
  CpuAndGpu d;
  absl::Status placed = PlaceOver(&g, &d, /*soft=*/true);
  ASSERT_TRUE(placed.ok()) << placed;
  const std::vector<std::string> off = OffTheGpu(g);
  EXPECT_TRUE(off.empty()) << "no GPU kernel: " << absl::StrJoin(off, ", ");
}

// A Keras 3 transformer block's training step (MultiHeadAttention's
// Einsums and their gradients' Einsums, lowered into Transposes, Reshapes
// and BatchMatMulV2s).
TEST(GpuLoopsTest, AKerasAttentionTrainingStepPlacesOnTheGpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  ExpectTensorFlowStepWhollyOnTheGpu("keras_attention_grad.pb", 6);  // the Einsums
}

// A Keras 3 CNN's training step with Dropout: its stateless draws have GPU
// kernels (the key and counter made in host memory).
TEST(GpuLoopsTest, AKerasDropoutTrainingStepPlacesOnTheGpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  ExpectTensorFlowStepWhollyOnTheGpu("keras_dropout_grad.pb", 0);
}

// The same kind of loop built in C++ (ops::While over TensorLists) and
// trained with Adam: Sluice's own loop gradient (a backward loop whose
// stacks hold the forward lists, in host memory) places wholly on the GPU
// and copies nothing per iteration.
TEST(GpuLoopsTest, AFunctionalLoopOverTensorListsTrainsOnTheGpuWithoutCopies) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope s = root.WithDevice(kGpu0);
  const std::vector<DataType> types = {DT_INT32, DT_FLOAT, ::tensorflow::DT_VARIANT,
                                       ::tensorflow::DT_VARIANT, DT_FLOAT};
  absl::StatusOr<NameAttrList> cond = DefineFunction(
      s, "more_steps", types,
      [](Scope& b, std::vector<Output> a) -> absl::StatusOr<std::vector<Output>> {
        return std::vector<Output>{ops::Less(b, a[0], 5)};
      });
  ASSERT_TRUE(cond.ok()) << cond.status();
  absl::StatusOr<NameAttrList> body = DefineFunction(
      s, "rnn_step", types,
      [](Scope& b, std::vector<Output> a) -> absl::StatusOr<std::vector<Output>> {
        Output x_t = b.Op("TensorListGetItem").Input(a[2]).Input(a[0])
                         .Input(ops::Const(b, int32_t{-1})).Attr("element_dtype", DT_FLOAT)
                         .Finalize1();
        Output h = ops::Tanh(b, ops::Add(b, ops::Mul(b, a[1], a[4]), x_t));
        Output states = b.Op("TensorListSetItem").Input(a[3]).Input(a[0]).Input(h).Finalize1();
        return std::vector<Output>{ops::Add(b, a[0], 1), h, a[2], states, a[4]};
      });
  ASSERT_TRUE(body.ok()) << body.status();
  Output xs = ops::Placeholder(s.WithOpName("xs"), DT_FLOAT);  // [5, 8]
  Output w = ops::VariableWithInit(s.WithOpName("w"),
                                   ops::Const(s, std::vector<float>(8, 0.5f)))
                 .var;
  Output inputs = s.Op("TensorListFromTensor").Input(xs).Input(ops::Const(s, int32_t{-1}))
                      .Finalize1();
  Output states = s.Op("TensorListReserve").Input(ops::Const(s, std::vector<int32_t>{8}))
                      .Input(ops::Const(s, 5)).Attr("element_dtype", DT_FLOAT).Finalize1();
  std::vector<Output> out = ops::While(
      s.WithOpName("rnn"),
      {ops::Const(s, 0), ops::Const(s, std::vector<float>(8, 0.0f)), inputs, states,
       ops::Identity(s, w)},
      *cond, *body);
  ASSERT_EQ(out.size(), 5u);
  Output stacked = s.Op("TensorListStack").Input(out[3]).Input(ops::Const(s, int32_t{-1}))
                       .Attr("element_dtype", DT_FLOAT).Finalize1();
  Output loss = ops::Mean(s.WithOpName("loss"), ops::Square(s, stacked),
                          ops::Const(s, std::vector<int32_t>{0, 1}));
  AdamOptimizer adam(0.01);
  absl::StatusOr<Node*> train = adam.Minimize(s.WithOpName("train"), loss, {w});
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<ClientGraph> cg =
      BuildClientGraph(*root.graph(), {"xs:0"}, {"loss:0"}, {(*train)->name()});
  ASSERT_TRUE(cg.ok()) << cg.status();
  // AddGradients lowered the loop already (it was on the differentiated path).
  ASSERT_NO_FATAL_FAILURE(ExpectLoweredLoopsOnTheGpuWithoutCopies(cg->graph.get(), 0, 20));
}

// With a fed sequence_length (dynamic_rnn's Assert of its shape, its Min
// and Max, the loop bound, the Selects past each length) the step stays on
// the GPU too. Per iteration, only the host's GreaterEqual(time, lengths)
// goes to the device (the Selects' conditions, and onto the stacks that keep
// them for the gradient loop, as in TensorFlow); the loop
// bound follows from the lengths' value, so the step is recorded per value
// of "lengths", and a replay copies nothing.
TEST(GpuLoopsTest, AnLstmWithSequenceLengthsStaysOnTheGpuAndIsRecordedPerLength) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  PlacedLstmStep step;
  ASSERT_NO_FATAL_FAILURE(PlaceLstmStep(&step, /*with_lengths=*/true));
  const Graph &g = *step.graph;
  const std::vector<std::string> off = OffTheGpu(g);
  EXPECT_TRUE(off.empty()) << "no GPU kernel: " << absl::StrJoin(off, ", ");

  int loop_edges = 0;
  int conditions = 0;
  std::vector<std::string> others;
  for (const Edge *e : PerIterationCopies(g, &loop_edges)) {
    if (e->src->op() == "GreaterEqual" &&
        (e->dst->op() == "Select" || e->dst->op() == "StackPushV2")) {
      ++conditions;
    } else {
      others.push_back(Describe(e));
    }
  }
  EXPECT_GT(loop_edges, 50);
  EXPECT_EQ(conditions, 6); // to Select, Select_1, Select_2 and their pushes
  EXPECT_TRUE(others.empty()) << others.size() << " other copies per iteration:\n"
                              << absl::StrJoin(others, "\n");

  const absl::StatusOr<std::vector<int>> deciding = DecidingFeedsOnTheGpu(g);
  ASSERT_TRUE(deciding.ok()) << deciding.status();
  ASSERT_EQ(deciding->size(), 1u);
  const Node *lengths = nullptr;
  for (const Node *n : g.nodes()) {
    if (n->op() == "_Arg" && n->GetAttr<int64_t>("index").value_or(-1) == (*deciding)[0]) {
      lengths = n;
    }
  }
  ASSERT_NE(lengths, nullptr);
  EXPECT_EQ(lengths->GetAttr<DataType>("T").value_or(DT_INVALID), DT_INT32)
      << lengths->DebugName() << " decides, not the lengths";
  EXPECT_GT(ExpectStatefulKernelsReplayRight(g, &step.devices.gpu), 10); // with the Assert
}

// The Fashion-MNIST CNN's training step (examples/cnn_model.h, Adam as the
// main job trains it), requested on GPU:0 and placed over CPU:0 and a
// stand-in GPU with soft placement (so that a node without a GPU kernel
// shows up on the CPU instead of failing).
struct PlacedCnnStep {
  std::unique_ptr<Graph> graph;
  CpuAndGpu devices;
};

void PlaceCnnStep(PlacedCnnStep* step) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope s = root.WithDevice(kGpu0);
  Output images = ops::Placeholder(s.WithOpName("images"), DT_FLOAT);
  Output labels = ops::Placeholder(s.WithOpName("labels"), DT_INT64);
  absl::StatusOr<CnnModel> m = BuildCnnTower(s, CnnConfig{}, images, labels);
  ASSERT_TRUE(m.ok()) << m.status();
  AdamOptimizer adam(0.002);
  absl::StatusOr<Node*> train = adam.Minimize(s.WithOpName("train"), m->loss, m->weights);
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<ClientGraph> cg = BuildClientGraph(*root.graph(), {"images:0", "labels:0"},
                                                    {"loss:0"}, {(*train)->name()});
  ASSERT_TRUE(cg.ok()) << cg.status();
  step->graph = std::move(cg->graph);
  absl::Status placed = PlaceOver(step->graph.get(), &step->devices, /*soft=*/true);
  ASSERT_TRUE(placed.ok()) << placed;
}

// Places the Adam training step of `loss` over CPU:0 and the stand-in GPU
// with soft placement; the nodes that fell back to the CPU.
std::vector<std::string> OffTheGpuInATrainingStep(const Scope& root, Output loss,
                                                  const std::vector<Output>& weights,
                                                  const std::vector<std::string>& feeds) {
  Scope s = root.WithDevice(kGpu0);
  AdamOptimizer adam(0.001);
  absl::StatusOr<Node*> train = adam.Minimize(s.WithOpName("train"), loss, weights);
  EXPECT_TRUE(train.ok()) << train.status();
  EXPECT_TRUE(root.ok()) << root.status();
  if (!train.ok() || !root.ok()) return {"(not built)"};
  absl::StatusOr<ClientGraph> cg =
      BuildClientGraph(*root.graph(), feeds, {loss.name()}, {(*train)->name()});
  EXPECT_TRUE(cg.ok()) << cg.status();
  if (!cg.ok()) return {"(no client graph)"};
  CpuAndGpu d;
  absl::Status placed = PlaceOver(cg->graph.get(), &d, /*soft=*/true);
  EXPECT_TRUE(placed.ok()) << placed;
  return OffTheGpu(*cg->graph);
}

// A transformer block's training step — attention (BatchMatMul, scaled,
// softmax), layer normalization (moments: SquaredDifference, Mean, Rsqrt),
// an exact-GELU feed-forward layer (Erf), weight decay (L2Loss) — stays
// wholly on the GPU, gradients included.
TEST(GpuModelsTest, ATransformerBlockTrainsWhollyOnTheGpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope s = root.WithDevice(kGpu0);
  const int64_t width = 16;
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);  // [batch, sequence, width]
  auto weight = [&](const char* name, int64_t rows, int64_t cols) {
    return ops::VariableWithInit(s.WithOpName(name),
                                 ops::Const(s, std::vector<float>(rows * cols, 0.01f),
                                            TensorShape({rows, cols})))
        .var;
  };
  const Output wq = weight("wq", width, width), wk = weight("wk", width, width),
               wv = weight("wv", width, width), w1 = weight("w1", width, 4 * width),
               w2 = weight("w2", 4 * width, width);
  auto dense = [&](Output in, Output w) {  // [batch, seq, a] x [a, b]
    return s.Op("BatchMatMulV2").Input(in).Input(w).Attr("adj_x", false).Attr("adj_y", false)
        .Finalize1();
  };
  Output q = dense(x, wq), k = dense(x, wk), v = dense(x, wv);
  Output scores = ops::Mul(s, s.Op("BatchMatMulV2").Input(q).Input(k).Attr("adj_x", false)
                                  .Attr("adj_y", true).Finalize1(),
                           ops::Const(s, 0.25f));
  Output attended = s.Op("BatchMatMulV2").Input(ops::Softmax(s, scores)).Input(v)
                        .Attr("adj_x", false).Attr("adj_y", false).Finalize1();
  Output h = ops::Add(s, x, attended);
  // Layer norm over the last axis, as tf.nn.moments writes it.
  Output mean = ops::Mean(s, h, ops::Const(s, std::vector<int32_t>{2}), {.keep_dims = true});
  Output var = ops::Mean(s, ops::SquaredDifference(s, h, mean),
                         ops::Const(s, std::vector<int32_t>{2}), {.keep_dims = true});
  Output normed = ops::Mul(s, ops::Sub(s, h, mean), ops::Rsqrt(s, ops::Add(s, var, 1e-6f)));
  // GELU(x) = x * (1 + erf(x / sqrt(2))) / 2.
  Output up = dense(normed, w1);
  Output gelu = ops::Mul(s, ops::Mul(s, up, 0.5f),
                         ops::Add(s, ops::Erf(s, ops::Mul(s, up, 0.70710678f)), 1.0f));
  Output out = dense(gelu, w2);
  Output all_axes = ops::Const(s, std::vector<int32_t>{0, 1, 2});
  Output loss = ops::Add(s.WithOpName("loss"), ops::Mean(s, ops::Square(s, out), all_axes),
                         ops::Mul(s, ops::Add(s, ops::L2Loss(s, w1), ops::L2Loss(s, w2)), 1e-4f));
  const std::vector<std::string> off =
      OffTheGpuInATrainingStep(root, loss, {wq, wk, wv, w1, w2}, {"x:0"});
  EXPECT_TRUE(off.empty()) << "no GPU kernel: " << absl::StrJoin(off, ", ");
}

// A residual convolution block's step — Conv2D, FusedBatchNormV3, Relu6,
// a residual AddV2, AvgPool, global average pooling by Mean, L2 weight
// decay.
TEST(GpuModelsTest, AResidualBlockWithBatchNormTrainsWhollyOnTheGpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope s = root.WithDevice(kGpu0);
  Output images = ops::Placeholder(s.WithOpName("images"), DT_FLOAT);  // [n, 8, 8, 4]
  Output filter = ops::VariableWithInit(
                      s.WithOpName("filter"),
                      ops::Const(s, std::vector<float>(3 * 3 * 4 * 4, 0.01f),
                                 TensorShape({3, 3, 4, 4})))
                      .var;
  Output gamma = ops::VariableWithInit(s.WithOpName("gamma"),
                                       ops::Const(s, std::vector<float>(4, 1.0f)))
                     .var;
  Output beta = ops::VariableWithInit(s.WithOpName("beta"),
                                      ops::Const(s, std::vector<float>(4, 0.0f)))
                    .var;
  Output conv = ops::Conv2D(s, images, filter, {1, 1, 1, 1}, "SAME");
  Output none = ops::Const(s, std::vector<float>{}, TensorShape({0}));
  ops::FusedBatchNormOutputs bn = ops::FusedBatchNormV3(s, conv, gamma, beta, none, none);
  Output block = ops::AddV2(s, images, ops::Relu6(s, bn.y));
  Output halved = ops::AvgPool(s, block, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  Output pooled = ops::Mean(s, halved, ops::Const(s, std::vector<int32_t>{1, 2}));
  Output both_axes = ops::Const(s, std::vector<int32_t>{0, 1});
  Output loss = ops::Add(s.WithOpName("loss"), ops::Mean(s, ops::Square(s, pooled), both_axes),
                         ops::Mul(s, ops::L2Loss(s, filter), 1e-4f));
  const std::vector<std::string> off =
      OffTheGpuInATrainingStep(root, loss, {filter, gamma, beta}, {"images:0"});
  EXPECT_TRUE(off.empty()) << "no GPU kernel: " << absl::StrJoin(off, ", ");
}

// The convolutions, their gradients, the max-pools and theirs have GPU
// kernels, so no node of the step falls back to the CPU.
TEST(GpuCnnTest, TheFashionMnistCnnStepRunsWhollyOnTheGpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  PlacedCnnStep step;
  ASSERT_NO_FATAL_FAILURE(PlaceCnnStep(&step));
  std::vector<std::string> on_cpu;
  std::map<std::string, int> window_ops;
  for (const Node* n : step.graph->nodes()) {
    if (n->assigned_device() != kGpu0 && n->op() != "_Arg" && n->op() != "_Retval") {
      on_cpu.push_back(absl::StrCat(n->name(), " (", n->op(), ")"));
    }
    if (absl::StartsWith(n->op(), "Conv2D") || absl::StartsWith(n->op(), "MaxPool")) {
      ++window_ops[n->op()];
    }
  }
  EXPECT_TRUE(on_cpu.empty()) << "no GPU kernel: " << absl::StrJoin(on_cpu, ", ");
  // Two convolutions and pools, their gradients (the first convolution
  // needs no input gradient).
  EXPECT_EQ(window_ops, (std::map<std::string, int>{{"Conv2D", 2},
                                                    {"Conv2DBackpropFilter", 2},
                                                    {"Conv2DBackpropInput", 1},
                                                    {"MaxPool", 2},
                                                    {"MaxPoolGrad", 2}}));
  // No feed is read on the host (the labels are int64, in device memory):
  // the step is recorded once for all batches, not per value.
  const absl::StatusOr<std::vector<int>> deciding = DecidingFeedsOnTheGpu(*step.graph);
  ASSERT_TRUE(deciding.ok()) << deciding.status();
  EXPECT_TRUE(deciding->empty()) << "feed " << (*deciding)[0] << " is read on the host";
}

// Mixed precision on the GPU keeps everything between the first
// convolution and the logits in bfloat16, forward and backward: the
// bias, ReLU and max-pool ops have bfloat16 GPU kernels, so no Cast sits
// between two bfloat16 ops (a round trip through float).
TEST(GpuCnnTest, MixedPrecisionKeepsTheConvolutionStackInBfloat16) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  PlacedCnnStep step;
  ASSERT_NO_FATAL_FAILURE(PlaceCnnStep(&step));
  MixedPrecisionOptions options;
  options.kernels = BuiltinKernels();
  options.device_types = {kDeviceTypeGpu};
  absl::StatusOr<MixedPrecisionStats> stats = AutoMixedPrecision(step.graph.get(), options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  std::vector<std::string> still_float, round_trips;
  for (const Node* n : step.graph->nodes()) {
    static const auto* const kStack = new absl::flat_hash_set<std::string>{
        "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "MaxPoolGrad",
        "Relu", "ReluGrad", "BiasAdd", "MatMul"};
    if (kStack->contains(n->op()) && n->GetAttr<DataType>("T").value_or(DT_INVALID) != DT_BFLOAT16) {
      still_float.push_back(absl::StrCat(n->name(), " (", n->op(), ")"));
    }
    if (n->op() != "Cast" || n->num_inputs() == 0) continue;
    const Edge* in = n->input_edge(0);
    if (in == nullptr || in->src->output_type(in->src_output) != DT_BFLOAT16) continue;
    bool only_bf16_consumers = !n->out_edges().empty();
    for (const Edge* e : n->out_edges()) {
      if (e->IsControl()) continue;
      const Node* c = e->dst;
      if (c->op() == "Cast" || c->input_type(e->dst_input) != DT_FLOAT) only_bf16_consumers = false;
      if (c->GetAttr<DataType>("T").value_or(DT_INVALID) != DT_BFLOAT16) only_bf16_consumers = false;
    }
    if (only_bf16_consumers) round_trips.push_back(n->name());
  }
  EXPECT_GT(stats->converted, 0);
  EXPECT_TRUE(still_float.empty()) << "float: " << absl::StrJoin(still_float, ", ");
  EXPECT_TRUE(round_trips.empty()) << "bfloat16 -> float -> bfloat16 at: "
                                   << absl::StrJoin(round_trips, ", ");
}

// A model written with resource variables (a TF graph with use_resource, a
// Keras layer; tests/gpu/resource_variable_model.h) pinned to GPU:0: the
// handles, reads, assignments, the embedding's ResourceGather and
// ResourceScatterSub, ResourceApplyAdam, ResourceApplyMomentum,
// ResourceApplyKerasMomentum and the int64
// counter's AssignAddVariableOp all have GPU kernels, so soft placement
// leaves none on the CPU. (Before, VarHandleOp had only a CPU kernel, and
// placement took every op on its handle to the CPU with it.) Every stateful
// one replays right, so the training step is recorded whole.
TEST(GpuHostTypesTest, ResourceVariablesAndTheirUpdatesStayOnTheGpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  Scope root = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<gpu_test::ResourceModel> m = gpu_test::BuildResourceModel(root.WithDevice(kGpu0));
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<std::string> init_feeds;
  for (const auto& v : m->initial_values) init_feeds.push_back(v.placeholder.name());
  const std::vector<std::pair<std::vector<std::string>, std::string>> steps = {
      {init_feeds, m->init->name()}, {{"ids:0", "x:0", "y:0"}, m->train->name()}};
  for (const auto& [feeds, target] : steps) {
    SCOPED_TRACE(target);
    absl::StatusOr<ClientGraph> cg = BuildClientGraph(*root.graph(), feeds, {}, {target});
    ASSERT_TRUE(cg.ok()) << cg.status();
    CpuAndGpu d;  // soft: a missing kernel would move a group to the CPU
    absl::Status placed = PlaceOver(cg->graph.get(), &d, /*soft=*/true);
    ASSERT_TRUE(placed.ok()) << placed;
    const std::vector<std::string> off = OffTheGpu(*cg->graph);
    EXPECT_TRUE(off.empty()) << "no GPU kernel: " << absl::StrJoin(off, ", ");
    int resource_ops = 0;
    for (const Node* n : cg->graph->nodes()) {
      for (int i = 0; i < n->num_inputs(); ++i) resource_ops += n->input_type(i) == DT_RESOURCE;
    }
    if (target == m->train->name()) {
      // 4 reads (the gather's, w's, b's, c's); the updates: the scatter,
      // Adam's with its 2 slots, Momentum's and Keras's with 1 each, the
      // counter's.
      EXPECT_EQ(resource_ops, 4 + 1 + 3 + 2 + 2 + 1) << "resource inputs";
      const absl::StatusOr<std::vector<int>> deciding = DecidingFeedsOnTheGpu(*cg->graph);
      ASSERT_TRUE(deciding.ok()) << deciding.status();
      EXPECT_TRUE(deciding->empty());
      // The handles, the reads with the gather, and the five updates.
      EXPECT_EQ(ExpectStatefulKernelsReplayRight(*cg->graph, &d.gpu), 9 + 4 + 5);
    } else {
      EXPECT_EQ(resource_ops, 9);  // one assignment per variable
    }
  }
}

// Keras's SGD with momentum on an embedding written with resource variables
// (its sparse gradient applied by ResourceSparseApplyKerasMomentum, as
// Keras's _resource_apply_sparse does): the update stays with the table on
// the GPU.
TEST(GpuHostTypesTest, KerasMomentumOnAResourceEmbeddingStaysOnTheGpu) {
  if (!HasGpuKernels()) GTEST_SKIP() << "built without CUDA: no GPU kernels to place on";
  Scope s = Scope::NewRootScope(BuiltinOps());
  Scope gpu = s.WithDevice(kGpu0);
  Output table = ops::VarHandleOp(gpu.WithOpName("table"), DT_FLOAT, TensorShape({10, 4}));
  Output velocity = ops::VarHandleOp(gpu.WithOpName("velocity"), DT_FLOAT, TensorShape({10, 4}));
  Output ids = ops::Placeholder(s.WithOpName("ids"), DT_INT64);
  Output rows = ops::ResourceGather(gpu.WithOpName("rows"), table, ids, DT_FLOAT);
  Node* update = gpu.WithOpName("update")
                     .Op("ResourceSparseApplyKerasMomentum")
                     .Input(table)
                     .Input(velocity)
                     .Input(ops::Const(s, 0.1f))
                     .Input(ops::Mul(gpu, ops::Const(s, 2.0f), rows))
                     .Input(ids)
                     .Input(ops::Const(s, 0.9f))
                     .Attr("use_nesterov", true)
                     .Finalize();
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<ClientGraph> cg = BuildClientGraph(*s.graph(), {"ids:0"}, {}, {update->name()});
  ASSERT_TRUE(cg.ok()) << cg.status();
  ASSERT_TRUE(PlaceOverACpuAndAGpu(cg->graph.get()));
  const std::vector<std::string> off = OffTheGpu(*cg->graph);
  EXPECT_TRUE(off.empty()) << "no GPU kernel: " << absl::StrJoin(off, ", ");
}

} // namespace
} // namespace sluice
