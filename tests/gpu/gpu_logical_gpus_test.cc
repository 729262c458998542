// Logical GPUs (runtime/gpu/logical_gpus.h) in a process of their own: a
// GPU's context keeps the memory limit of its first creation in the
// process, so a test of what limits do cannot share a binary with tests
// that made the same contexts with other limits first.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "sluice.h"
#include "tests/gpu/gpu_compare.h"
#include "gtest/gtest.h"

namespace sluice::gpu_test {
namespace {

class GpuLogicalGpusTest : public GpuTest {};

// Automatic model parallelism (SessionConfig::auto_place) over two logical
// GPUs of one card with 160 MiB each. The placer counts each 44 MiB weight
// matrix and its initial value, 88 MiB together, so the two do not fit one
// logical GPU and the model spreads over both; the product matches the
// host's over the weights it drew. A dry run places over CPU:0..2 with the
// same limit each instead.
TEST_F(GpuLogicalGpusTest, AutoPlacementSpreadsAModelOverTwoLogicalGpus) {
  const bool dry = DryRunOnCpu();
  constexpr int32_t kIn = 4096, kMid = 2816, kBatch = 8;
  constexpr int64_t kLimit = int64_t{160} << 20;
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope gpus = root.WithDevice(dry ? "/device:CPU:*" : "/device:GPU:*");
  Output x = ops::Placeholder(root.WithDevice(kCpu0).WithOpName("x"), DT_FLOAT);
  std::vector<Output> w;
  std::vector<Node *> init;
  for (int i = 0; i < 2; ++i) {
    const int32_t rows = i == 0 ? kIn : kMid, cols = i == 0 ? kMid : kIn;
    Output v = ops::Variable(gpus.WithOpName(absl::StrCat("w", i)),
                             TensorShape({rows, cols}), DT_FLOAT);
    Output shape =
        ops::Const<int32_t>(Unplaced(gpus), {rows, cols}, TensorShape({2}));
    Output r = ops::RandomUniform(gpus.WithOpName(absl::StrCat("r", i)), shape,
                                  DT_FLOAT, {.seed = 7 + i});
    init.push_back(
        ops::Assign(gpus.WithOpName(absl::StrCat("init", i)), v, r).node);
    w.push_back(v);
  }
  Output h = ops::MatMul(gpus.WithOpName("h"), x, w[0]);
  Output y = ops::MatMul(gpus.WithOpName("y"), h, w[1]);
  ASSERT_TRUE(root.ok()) << root.status();
  SessionConfig config = TestSessionOptions(1);
  if (dry) {
    config.devices.cpu_memory_limit = kLimit;
    config.devices.virtual_cpu_memory_limit = kLimit;
  } else {
    config.devices.gpu_logical_memory_limits = {kLimit, kLimit};
  }
  config.auto_place = true;
  absl::StatusOr<std::unique_ptr<TestSession>> s =
      TestSession::Create(root, config);
  ASSERT_TRUE(s.ok()) << s.status();
  // A GPU's context keeps the limit it was made with (the first in the
  // process): this binary makes none before, so both must have 160 MiB.
  const std::vector<std::string> names = (*s)->session()->ListDevices();
  const std::vector<AllocatorStats> stats =
      (*s)->session()->DeviceMemoryStats();
  ASSERT_EQ(names.size(), stats.size());
  for (size_t i = 0; i < names.size(); ++i) {
    if (!dry && absl::StrContains(names[i], "GPU")) {
      EXPECT_EQ(stats[i].bytes_limit, kLimit) << names[i];
    }
  }
  absl::StatusOr<std::vector<Tensor>> initialized = (*s)->Run({}, {}, init);
  ASSERT_TRUE(initialized.ok()) << initialized.status();
  Tensor xv = RandomTensor(rng(), DT_FLOAT, TensorShape({kBatch, kIn}), -1, 1);
  absl::StatusOr<std::vector<Tensor>> out =
      (*s)->Run({{x, xv}}, {y, w[0], w[1]});
  ASSERT_TRUE(out.ok()) << out.status();

  std::set<std::string> used;
  for (const char *node : {"w0", "w1", "r0", "r1", "h", "y"}) {
    auto it = (*s)->placed().find(node);
    ASSERT_NE(it, (*s)->placed().end()) << node;
    used.insert(DeviceTail(it->second));
  }
  if (dry) {
    EXPECT_GE(used.size(), 2u);
  } else {
    EXPECT_EQ(used, (std::set<std::string>{"GPU:0", "GPU:1"}));
  }

  const Tensor &w0 = (*out)[1];
  const Tensor &w1 = (*out)[2];
  std::vector<double> mid(static_cast<size_t>(kBatch) * kMid, 0.0);
  for (int b = 0; b < kBatch; ++b) {
    for (int k = 0; k < kIn; ++k) {
      const double xk = xv.data<float>()[b * kIn + k];
      const float *row = w0.data<float>() + static_cast<int64_t>(k) * kMid;
      for (int j = 0; j < kMid; ++j)
        mid[b * kMid + j] += xk * row[j];
    }
  }
  Tensor want(DT_FLOAT, TensorShape({kBatch, kIn}));
  for (int b = 0; b < kBatch; ++b) {
    std::vector<double> acc(kIn, 0.0);
    for (int j = 0; j < kMid; ++j) {
      const float *row = w1.data<float>() + static_cast<int64_t>(j) * kIn;
      for (int k = 0; k < kIn; ++k)
        acc[k] += mid[b * kMid + j] * row[k];
    }
    for (int k = 0; k < kIn; ++k)
      want.data<float>()[b * kIn + k] = static_cast<float>(acc[k]);
  }
  EXPECT_TRUE(Close((*out)[0], want, 1e-4));
}

} // namespace
} // namespace sluice::gpu_test
