// A model written with resource variables (tests/gpu/resource_variable_model.h:
// VarHandleOp, ReadVariableOp, ResourceGather, ResourceScatterSub,
// ResourceApplyAdam, ResourceApplyMomentum, AssignAddVariableOp) trained on
// GPU:0, its steps recorded and replayed, against the same model on the CPU
// from the same initial values and batches.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sluice.h"
#include "tests/gpu/gpu_compare.h"
#include "tests/gpu/resource_variable_model.h"

namespace sluice::gpu_test {
namespace {

class GpuResourceVariablesTest : public GpuTest {};

struct Trained {
  std::vector<float> losses;
  std::vector<Tensor> variables;  // ResourceModel::reads after training
  int replays = 0;
  std::unique_ptr<TestSession> session;
};

constexpr int kSteps = 12;
constexpr int64_t kBatch = 6;

// Trains the model pinned to `device` for kSteps steps; the initial values
// and batches follow from `seed` alone.
absl::StatusOr<Trained> Train(const char* device, int max_gpus, uint32_t seed) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  ASSIGN_OR_RETURN(ResourceModel m, BuildResourceModel(root.WithDevice(device)));
  Trained t;
  ASSIGN_OR_RETURN(t.session, TestSession::Create(root, TestSessionOptions(max_gpus)));
  std::mt19937 rng(seed);
  RETURN_IF_ERROR(t.session->Run(InitialFeeds(m, rng), {}, {m.init}).status());
  std::vector<int64_t> rows(ResourceModel::kRows);
  std::iota(rows.begin(), rows.end(), 0);
  for (int step = 0; step < kSteps; ++step) {
    std::shuffle(rows.begin(), rows.end(), rng);  // distinct ids
    const Tensor ids = Tensor::FromVector(std::vector<int64_t>(rows.begin(), rows.begin() + kBatch));
    const Tensor x = RandomTensor(rng, DT_FLOAT, TensorShape({kBatch, ResourceModel::kDense}), -1, 1);
    // Learnable: y = (x0 + x1 - x2, id / 10 - 0.5).
    std::vector<float> target;
    for (int64_t i = 0; i < kBatch; ++i) {
      const float* xi = x.data<float>() + i * ResourceModel::kDense;
      target.push_back(xi[0] + xi[1] - xi[2]);
      target.push_back(0.1f * static_cast<float>(ids.data<int64_t>()[i]) - 0.5f);
    }
    const Tensor y = Tensor::FromVector(target, TensorShape({kBatch, ResourceModel::kOut}));
    ASSIGN_OR_RETURN(std::vector<Tensor> loss,
                     t.session->Run({{m.ids, ids}, {m.x, x}, {m.y, y}}, {m.loss}, {m.train}));
    t.losses.push_back(loss[0].scalar<float>());
    t.replays += t.session->replayed() ? 1 : 0;
  }
  ASSIGN_OR_RETURN(t.variables, t.session->Run({}, m.reads, {}));
  return t;
}

// Losses within 1e-4 (relative) step by step, every variable within 1e-4,
// the counter exact; every variable op on the GPU; and on a GPU, every step
// after the first two replayed (the resource kernels replay right).
TEST_F(GpuResourceVariablesTest, TrainsLikeOnTheCpuAndReplays) {
  const uint32_t seed = rng()();
  absl::StatusOr<Trained> cpu = Train(kCpu0, 0, seed);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  absl::StatusOr<Trained> gpu = Train(kGpu0, 1, seed);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  for (int step = 0; step < kSteps; ++step) {
    EXPECT_NEAR(gpu->losses[step], cpu->losses[step], 1e-4 * std::abs(cpu->losses[step]))
        << "step " << step;
  }
  const auto mean3 = [](auto first) { return (first[0] + first[1] + first[2]) / 3; };
  EXPECT_LT(mean3(gpu->losses.end() - 3), mean3(gpu->losses.begin()))
      << "the GPU model did not learn";
  ASSERT_EQ(gpu->variables.size(), cpu->variables.size());
  for (size_t i = 0; i < cpu->variables.size(); ++i) {
    if (cpu->variables[i].dtype() == DT_INT64) {
      EXPECT_EQ(gpu->variables[i].scalar<int64_t>(), kSteps);
      EXPECT_EQ(cpu->variables[i].scalar<int64_t>(), kSteps);
      continue;
    }
    EXPECT_TRUE(Close(gpu->variables[i], cpu->variables[i], 1e-4)) << "variable " << i;
  }
  for (const char* node : {"table", "w", "rows", "w/read", "table/update", "w/update",
                           "b/update", "steps/update"}) {
    EXPECT_TRUE(gpu->session->PlacedOn(node, kGpu0)) << node;
  }
  std::printf("resource-variable model: %d of %d steps replayed\n", gpu->replays, kSteps);
  if (!DryRunOnCpu()) {
    EXPECT_EQ(gpu->replays, kSteps - 2);
  }
}

}  // namespace
}  // namespace sluice::gpu_test
