// Step capture on a cluster worker (runtime/step_replay.h through
// runtime/step_partitions.h): a registered graph of one partition, on a
// device that can record, is recorded once its feed shapes repeat and
// replayed from then on, as in a local session. Without a GPU: the fake
// recording device of runtime/recording_device_testutil.h.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/worker.h"
#include "graph/scope.h"
#include "runtime/frame_ops.h"
#include "runtime/recording_device_testutil.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using testing_rec::RecBackend;
using testing_rec::RecordingDevice;
using testing_rec::RecStats;

constexpr char kTask[] = "/job:worker/replica:0/task:0";

class WorkerCaptureTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(backends_.Add(std::make_unique<RecBackend>()).ok());
    ASSERT_TRUE(testing_rec::RegisterRecOps(&ops_).ok());
    backends_.RegisterKernels(&kernels_);
  }

  std::unique_ptr<Worker> MakeWorker(bool capture) {
    WorkerOptions opts;
    opts.task = kTask;
    opts.session.ops = &ops_;
    opts.session.kernels = &kernels_;
    opts.session.backends = &backends_;
    opts.session.capture_steps = capture;
    opts.default_timeout_ms = 10000;
    absl::StatusOr<std::unique_ptr<Worker>> w = Worker::Create(opts);
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? *std::move(w) : nullptr;
  }

  // The partition a master would register: every node on the task's REC:0,
  // the feed as _Arg 0 and, for training, the loss as _Retval 0.
  //   training: loss = Sum(w * x) * Size(x); w -= x after it
  //   init:     w = _Arg 0
  GraphDef Partition(bool training) {
    Graph g(&ops_);
    Scope s = Scope::NewRootScope(&g);
    Output w = s.WithOpName("w").Op("Var").Finalize1();
    Output fed = s.WithOpName("fed")
                     .Op(kArgOp)
                     .Attr("T", DT_FLOAT)
                     .Attr("index", int64_t{0})
                     .Finalize1();
    if (training) {
      Output wx = s.WithOpName("wx").Op("Mul").Input(w).Input(fed).Finalize1();
      Output sum = s.WithOpName("sum").Op("Sum").Input(wx).Finalize1();
      Output size = s.WithOpName("size").Op("Size").Input(fed).Finalize1();
      Output loss =
          s.WithOpName("loss").Op("Scale").Input(sum).Input(size).Finalize1();
      s.WithOpName("loss_retval")
          .Op(kRetvalOp)
          .Input(loss)
          .Attr("index", int64_t{0})
          .Finalize();
      s.WithOpName("train")
          .Op("Sub")
          .Input(w)
          .Input(fed)
          .ControlInput(loss.node)
          .Finalize();
    } else {
      s.WithOpName("init").Op("Assign").Input(w).Input(fed).Finalize();
    }
    EXPECT_TRUE(s.ok()) << s.status();
    GraphDef def;
    g.ToGraphDef(&def);
    for (NodeDef &n : *def.mutable_node())
      n.set_device(Rec());
    return def;
  }

  static std::string Rec() { return absl::StrCat(kTask, "/device:REC:0"); }

  static Tensor Floats(std::vector<float> v) {
    return Tensor::FromVector<float>(
        v, TensorShape({static_cast<int64_t>(v.size())}));
  }

  BackendRegistry backends_;
  OpRegistry ops_;
  KernelRegistry kernels_;
};

TEST_F(WorkerCaptureTest, AOneDevicePartitionIsRecordedAndReplayed) {
  for (const bool capture : {true, false}) {
    SCOPED_TRACE(capture ? "capturing" : "not capturing");
    std::unique_ptr<Worker> worker = MakeWorker(capture);
    ASSERT_NE(worker, nullptr);
    auto *rec = dynamic_cast<RecordingDevice *>(worker->devices()[0]);
    ASSERT_NE(rec, nullptr);
    absl::StatusOr<std::string> init =
        worker->RegisterGraph("s", {{Rec(), Partition(false)}});
    absl::StatusOr<std::string> train =
        worker->RegisterGraph("s", {{Rec(), Partition(true)}});
    ASSERT_TRUE(init.ok()) << init.status();
    ASSERT_TRUE(train.ok()) << train.status();
    std::vector<float> w = {1, 2, 3};
    std::map<int, Tensor> none;
    ASSERT_TRUE(worker
                    ->RunGraph({.graph_handle = *init,
                                .step_id = 1,
                                .feeds = {{0, Floats(w)}}},
                               &none)
                    .ok());
    ASSERT_TRUE(worker->CleanupStep(1).ok());

    int mul_computes_late = 0;
    const int recordings_before = RecStats().recordings;
    for (int step = 2; step < 10; ++step) {
      const std::vector<float> x = {0.5f * step, -1.0f, 0.25f};
      float want = 0;
      for (size_t i = 0; i < w.size(); ++i)
        want += w[i] * x[i];
      want *= 3;
      const int before = RecStats().mul_computes.load();
      std::map<int, Tensor> out;
      absl::Status s = worker->RunGraph({.graph_handle = *train,
                                         .step_id = step,
                                         .feeds = {{0, Floats(x)}},
                                         .retval_indices = {0}},
                                        &out);
      ASSERT_TRUE(s.ok()) << "step " << step << ": " << s;
      ASSERT_TRUE(worker->CleanupStep(step).ok());
      EXPECT_EQ(out.at(0).scalar<float>(), want) << "step " << step;
      for (size_t i = 0; i < w.size(); ++i)
        w[i] -= x[i];
      if (step >= 5)
        mul_computes_late += RecStats().mul_computes.load() - before;
    }
    // Two runs through the executor, then one recording, then replays that
    // run no kernel's Compute.
    EXPECT_EQ(RecStats().recordings - recordings_before, capture ? 1 : 0);
    if (capture) {
      EXPECT_EQ(mul_computes_late, 0);
    } else {
      EXPECT_EQ(mul_computes_late, 5);
    }
  }
}

} // namespace
} // namespace sluice
