// examples/multi_worker_mlp as 2 and 3 worker processes on 127.0.0.1
// (MultiWorkerMirrored: gradients averaged by ring all-reduce, no parameter
// server) trains to the same weights as one session training the same
// model, from the same seed, with SGD on the combined batch: worker r's
// slice of step s is rows s*W*B + r*B .. +B, so the W slices of a step are
// the rows of Batch(data, s*W*B, W*B).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "examples/mlp_model.h"
#include "gtest/gtest.h"
#include "session/direct_session.h"
#include "tests/distributed/test_credentials.h"
#include "sluice.h"
#include "tests/distributed/multi_worker_testutil.h"

namespace sluice {
namespace {

// Every process of these tests uses mutual TLS, as a launched job does.
const ::testing::Environment* const kTls =
    ::testing::AddGlobalTestEnvironment(new TestJobCredentials);

constexpr int kHidden = 32;
constexpr int kExamples = 1024;
constexpr int kBatchPerWorker = 16;
constexpr int kSteps = 12;

// The weights after kSteps plain SGD steps on the W-fold batches, in the
// order of model.weights; `initial` gets them before the first step.
std::vector<Tensor> CombinedBatchReference(const MlpModel& model, int workers,
                                           std::vector<Tensor>* initial) {
  absl::StatusOr<std::unique_ptr<Session>> session =
      NewSession(BuiltinSessionConfig(), *model.scope.graph());
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  Session* s = session->get();
  EXPECT_TRUE(s->Run({}, {}, {model.init->name()}).ok());
  std::vector<std::string> names;
  for (const Output& w : model.weights) names.push_back(w.node->name());
  absl::StatusOr<std::vector<Tensor>> before = s->Run({}, names, {});
  EXPECT_TRUE(before.ok()) << before.status();
  if (before.ok()) {
    // Copies: the session's variables change in place as it trains.
    for (const Tensor& t : *before) {
      Tensor copy(t.dtype(), t.shape());
      std::copy(t.flat<float>().begin(), t.flat<float>().end(), copy.data<float>());
      initial->push_back(copy);
    }
  }
  Dataset data = MakeSyntheticDataset({.examples = kExamples});
  const int global = workers * kBatchPerWorker;
  for (int64_t step = 0; step < kSteps; ++step) {
    Dataset b = Batch(data, step * global, global);
    absl::Status st = s->Run({{"x", b.x}, {"labels", b.y}}, {}, {model.train->name()}).status();
    EXPECT_TRUE(st.ok()) << st;
  }
  absl::StatusOr<std::vector<Tensor>> out = s->Run({}, names, {});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

// Runs W workers to kSteps and compares the chief's dumped weights with the
// one-session reference.
void ExpectSameWeightsAsOneSession(int workers, const std::string& bucket_bytes) {
  const std::string dump = FreshDir(absl::StrCat("weights-", workers));
  const std::string ckpt = FreshDir(absl::StrCat("ckpt-", workers));
  MultiWorkerCluster cluster(workers);
  std::vector<std::string> flags = {
      absl::StrCat("--hidden=", kHidden), absl::StrCat("--examples=", kExamples),
      absl::StrCat("--batch=", workers * kBatchPerWorker), absl::StrCat("--steps=", kSteps),
      "--learning_rate=0.1", "--optimizer=sgd", "--seed=1", "--log_every=4",
      "--checkpoint_every=0", "--collective_timeout_s=10", "--recovery_timeout_s=30",
      "--bucket_bytes=" + bucket_bytes, "--checkpoint_dir=" + ckpt};
  for (int t = workers - 1; t >= 1; --t) ASSERT_NE(cluster.Start(t, flags), nullptr);
  flags.push_back("--dump_weights=" + dump);
  ChildProcess* chief = cluster.Start(0, flags);
  ASSERT_NE(chief, nullptr);
  ASSERT_TRUE(ExitsZero(chief, absl::Seconds(40))) << cluster.AllOutputs();
  for (int t = 1; t < workers; ++t) {
    ASSERT_TRUE(ExitsZero(cluster.process(t), absl::Seconds(10))) << cluster.AllOutputs();
    EXPECT_FALSE(LinesWith(cluster.process(t)->Output(),
                           absl::StrCat("done at global step ", kSteps, " (0 recoveries, 0 rejoins)"))
                     .empty())
        << cluster.process(t)->Output();
  }
  const std::string out = chief->Output();
  EXPECT_FALSE(LinesWith(out, absl::StrCat("trained to global step ", kSteps)).empty()) << out;
  float loss = 0, accuracy = 0;
  EXPECT_TRUE(ParseFinal(out, &loss, &accuracy)) << out;

  MlpConfig config;
  config.layers = {784, kHidden, 10};
  config.learning_rate = 0.1;
  config.optimizer = "sgd";
  config.seed = 1;
  absl::StatusOr<MlpModel> model = BuildMlp(config);
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<Tensor> initial;
  const std::vector<Tensor> want = CombinedBatchReference(*model, workers, &initial);
  ASSERT_EQ(want.size(), model->weights.size());
  ASSERT_EQ(initial.size(), want.size());
  double worst = 0, moved = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string name = model->weights[i].node->name();
    absl::StatusOr<Tensor> got =
        ReadNpyFile(absl::StrCat(dump, "/", absl::StrReplaceAll(name, {{"/", "_"}}), ".npy"));
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->NumElements(), want[i].NumElements()) << name;
    absl::Span<const float> g = got->flat<float>(), w = want[i].flat<float>();
    absl::Span<const float> w0 = initial[i].flat<float>();
    for (size_t j = 0; j < g.size(); ++j) {
      worst = std::max(worst, std::abs(double(g[j]) - double(w[j])));
      moved = std::max(moved, std::abs(double(w[j]) - double(w0[j])));
    }
  }
  std::printf(
      "%d workers (bucket_bytes %s): max |multi-worker - one session| = %g (training moved the "
      "weights by up to %g)\n",
      workers, bucket_bytes.c_str(), worst, moved);
  EXPECT_LT(worst, 1e-4) << out;
  EXPECT_GT(moved, 1e-2);  // the comparison is not between untrained weights
}

TEST(MultiWorkerEquivalenceTest, TwoWorkersEqualOneSessionOnTheCombinedBatch) {
  ExpectSameWeightsAsOneSession(2, "4194304");
}

// Small buckets: each layer's gradients in buckets of their own.
TEST(MultiWorkerEquivalenceTest, ThreeWorkersEqualOneSessionOnTheCombinedBatch) {
  ExpectSameWeightsAsOneSession(3, "1024");
}

}  // namespace
}  // namespace sluice
