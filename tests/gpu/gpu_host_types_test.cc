// Values of types a GPU cannot hold (strings) stay off the GPU when a graph
// is placed over a CPU and a GPU: their feeds, fetches and transfers run on
// the CPU. Placement only, against a GPU-typed stand-in device: it runs on
// any machine and needs the GPU kernels registered (a CUDA build), as CI has.
// (A TF-written graph fetching a string Const failed on an H200 with "no GPU
// kernel for node '_recv_...' (_Recv) with T=string": the fetch's _Retval had
// gone to the GPU, whose _Arg/_Retval took every type.)
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/training/optimizers.h"
#include "placement/partition.h"
#include "placement/placer.h"
#include "runtime/client_graph.h"
#include "runtime/local_devices.h"
#include "sluice.h"
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

// Places `g` over CPU:0 and a stand-in GPU:0; then every node must have a
// kernel on the type of its device. False (after the failures) otherwise.
bool PlaceOverACpuAndAGpu(Graph* g) {
  LocalDevicesOptions local;
  local.cpu_threads = 1;
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> cpus = CreateLocalDevices(local);
  EXPECT_TRUE(cpus.ok()) << cpus.status();
  if (!cpus.ok()) return false;
  StandInGpu gpu;
  const std::vector<Device*> devices = {(*cpus)[0].get(), &gpu};
  absl::Status placed = PlaceGraph(g, devices, *BuiltinKernels(), {});
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

// A worker whose variables live on its GPU saves them from its CPU: the
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
    int saves = 0;
    for (const Node* n : cg->graph->nodes()) {
      if (n->op() == "SaveV2") {
        ++saves;
        EXPECT_NE(n->assigned_device(), kGpu0);
      }
    }
    EXPECT_EQ(saves, 1);
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
  for (Optimizer* opt : std::vector<Optimizer*>{&sgd, &momentum, &adam, &adagrad, &ftrl}) {
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

}  // namespace
}  // namespace sluice
