// The GPU batch normalization's kernels (ops/gpu/batch_norm.cu), their
// arithmetic compiled by nvcc and run on the host in launch order
// (batch_norm_on_host.cu.h), against the CPU kernels of FusedBatchNormV3
// and FusedBatchNormGradV3: training with and without moving averages,
// inference, one chunk of rows and many.
#include "ops/gpu/batch_norm_on_host.cu.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/nn/batch_norm_grad_ops.h"
#include "ops/nn/batch_norm_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

std::vector<float> Uniform(std::mt19937& rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

Tensor Of(const std::vector<float>& v, const TensorShape& shape) {
  Tensor t(DT_FLOAT, shape);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, double rel,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], rel * std::max(1.0f, std::abs(want[i])))
        << what << " element " << i;
  }
}

// What the GPU code computes besides y and dx, per channel.
struct ChannelResults {
  std::vector<float> batch_mean, batch_var, mean, var, scale_grad, offset_grad;
};

// The GPU's forward then gradient code on the host: x and dy of `type`
// (rows * depth elements) into y and dx; mean_in and var_in may be null.
ChannelResults RunTheGpuCodeOnHost(gpu::BatchNormType type, const void* x, const void* dy,
                                   void* y, void* dx, const std::vector<float>& scale,
                                   const std::vector<float>& offset, const float* mean_in,
                                   const float* var_in, int64_t rows, int64_t depth,
                                   bool training, float factor) {
  ChannelResults r;
  for (auto* v : {&r.batch_mean, &r.batch_var, &r.mean, &r.var, &r.scale_grad, &r.offset_grad}) {
    v->resize(depth);
  }
  std::vector<double> scratch(gpu::BatchNormScratchDoubles(rows, depth));
  gpu::BatchNormForwardArgs f;
  f.type = type;
  f.x = x;
  f.scale = scale.data();
  f.offset = offset.data();
  f.mean_in = mean_in;
  f.var_in = var_in;
  f.y = y;
  f.batch_mean = r.batch_mean.data();
  f.batch_var = r.batch_var.data();
  f.saved_mean = r.mean.data();
  f.saved_var = r.var.data();
  f.scratch = scratch.data();
  f.rows = rows;
  f.depth = depth;
  f.epsilon = 0.001f;
  f.factor = factor;
  f.training = training;
  gpu::RunBatchNormForwardOnHost(f);
  gpu::BatchNormGradArgs b;
  b.type = type;
  b.dy = dy;
  b.x = x;
  b.scale = scale.data();
  b.mean = r.mean.data();
  b.var = r.var.data();
  b.dx = dx;
  b.scale_grad = r.scale_grad.data();
  b.offset_grad = r.offset_grad.data();
  b.scratch = scratch.data();
  b.rows = rows;
  b.depth = depth;
  b.epsilon = 0.001f;
  b.training = training;
  gpu::RunBatchNormGradOnHost(b);
  return r;
}

struct Case {
  TensorShape shape;  // NHWC
  bool training;
  float factor;       // exponential_avg_factor
  bool empty_stats;   // training with no moving averages: mean, variance empty
};

void ExpectTheGpuCodeMatchesTheCpu(const Case& c) {
  SCOPED_TRACE(c.shape.DebugString() + (c.training ? " training" : " inference") +
               " factor " + std::to_string(c.factor) + (c.empty_stats ? " no stats" : ""));
  std::mt19937 rng(5);
  const int64_t depth = c.shape.dim(3);
  const int64_t n = c.shape.num_elements();
  const int64_t rows = depth == 0 ? 0 : n / depth;
  const std::vector<float> x = Uniform(rng, n, -2, 3), dy = Uniform(rng, n, -1, 1);
  const std::vector<float> scale = Uniform(rng, depth, 0.5, 1.5);
  const std::vector<float> offset = Uniform(rng, depth, -0.5, 0.5);
  const std::vector<float> mean_in = c.empty_stats ? std::vector<float>{}
                                                   : Uniform(rng, depth, -0.5, 0.5);
  const std::vector<float> var_in = c.empty_stats ? std::vector<float>{}
                                                  : Uniform(rng, depth, 0.5, 2);
  const TensorShape channels({depth});
  const TensorShape stats({static_cast<int64_t>(mean_in.size())});

  // The CPU: forward, then the gradient from its reserve spaces.
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::FusedBatchNormOutputs bn = ops::FusedBatchNormV3(
      s, ops::Const(s, Of(x, c.shape)), ops::Const(s, Of(scale, channels)),
      ops::Const(s, Of(offset, channels)), ops::Const(s, Of(mean_in, stats)),
      ops::Const(s, Of(var_in, stats)),
      {.epsilon = 0.001f, .exponential_avg_factor = c.factor, .is_training = c.training});
  ops::FusedBatchNormGradOutputs g = ops::FusedBatchNormGradV3(
      s, ops::Const(s, Of(dy, c.shape)), ops::Const(s, Of(x, c.shape)),
      ops::Const(s, Of(scale, channels)), bn.reserve_space_1, bn.reserve_space_2,
      ops::Const(s, Of({}, TensorShape({0}))), {.epsilon = 0.001f, .is_training = c.training});
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> cpu =
      (*sess)->Run({},
                   {bn.y, bn.batch_mean, bn.batch_variance, bn.reserve_space_1,
                    bn.reserve_space_2, g.x_backprop, g.scale_backprop, g.offset_backprop},
                   {});
  ASSERT_TRUE(cpu.ok()) << cpu.status();

  // The GPU's code on the host.
  std::vector<float> y(n), dx(n);
  const ChannelResults r = RunTheGpuCodeOnHost(
      gpu::BatchNormType::kFloat, x.data(), dy.data(), y.data(), dx.data(), scale, offset,
      c.empty_stats ? nullptr : mean_in.data(), c.empty_stats ? nullptr : var_in.data(), rows,
      depth, c.training, c.factor);

  const double rel = 1e-5;
  ExpectNear(y, Values((*cpu)[0]), rel, "y");
  ExpectNear(r.batch_mean, Values((*cpu)[1]), rel, "batch_mean");
  ExpectNear(r.batch_var, Values((*cpu)[2]), rel, "batch_variance");
  ExpectNear(r.mean, Values((*cpu)[3]), rel, "reserve_space_1");
  ExpectNear(r.var, Values((*cpu)[4]), rel, "reserve_space_2");
  ExpectNear(dx, Values((*cpu)[5]), rel, "x_backprop");
  ExpectNear(r.scale_grad, Values((*cpu)[6]), rel, "scale_backprop");
  ExpectNear(r.offset_grad, Values((*cpu)[7]), rel, "offset_backprop");
}

// bfloat16 x and dy (what mixed precision gives the op): the host run of
// the GPU code against the CPU's float kernels on the same, rounded values.
TEST(BatchNormOnHostTest, BFloat16MatchesTheCpuOnRoundedValues) {
  std::mt19937 rng(9);
  const TensorShape shape({4, 10, 10, 3});
  const int64_t depth = 3, n = shape.num_elements(), rows = n / depth;
  std::vector<float> x = Uniform(rng, n, -2, 3), dy = Uniform(rng, n, -1, 1);
  std::vector<BFloat16> x16(n), dy16(n);
  for (int64_t i = 0; i < n; ++i) {
    x16[i] = BFloat16::FromFloat(x[i]);
    dy16[i] = BFloat16::FromFloat(dy[i]);
    x[i] = x16[i].ToFloat();
    dy[i] = dy16[i].ToFloat();
  }
  const std::vector<float> scale = {1.0f, 0.5f, 2.0f}, offset = {0.1f, -0.2f, 0.0f};
  Scope s = Scope::NewRootScope(BuiltinOps());
  const TensorShape channels({depth});
  ops::FusedBatchNormOutputs bn = ops::FusedBatchNormV3(
      s, ops::Const(s, Of(x, shape)), ops::Const(s, Of(scale, channels)),
      ops::Const(s, Of(offset, channels)), ops::Const(s, Of({}, TensorShape({0}))),
      ops::Const(s, Of({}, TensorShape({0}))), {.epsilon = 0.001f});
  ops::FusedBatchNormGradOutputs g = ops::FusedBatchNormGradV3(
      s, ops::Const(s, Of(dy, shape)), ops::Const(s, Of(x, shape)),
      ops::Const(s, Of(scale, channels)), bn.reserve_space_1, bn.reserve_space_2,
      ops::Const(s, Of({}, TensorShape({0}))), {.epsilon = 0.001f});
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> cpu =
      (*sess)->Run({}, {bn.y, bn.reserve_space_1, bn.reserve_space_2, g.x_backprop}, {});
  ASSERT_TRUE(cpu.ok()) << cpu.status();

  std::vector<BFloat16> y16(n), dx16(n);
  const ChannelResults r =
      RunTheGpuCodeOnHost(gpu::BatchNormType::kBFloat16, x16.data(), dy16.data(), y16.data(),
                          dx16.data(), scale, offset, nullptr, nullptr, rows, depth, true, 1.0f);
  std::vector<float> y(n), dx(n);
  for (int64_t i = 0; i < n; ++i) {
    y[i] = y16[i].ToFloat();
    dx[i] = dx16[i].ToFloat();
  }
  ExpectNear(r.mean, Values((*cpu)[1]), 1e-6, "reserve_space_1");
  ExpectNear(r.var, Values((*cpu)[2]), 1e-6, "reserve_space_2");
  ExpectNear(y, Values((*cpu)[0]), 8e-3, "y (rounded to bfloat16)");
  ExpectNear(dx, Values((*cpu)[3]), 8e-3, "x_backprop (rounded to bfloat16)");
}

TEST(BatchNormOnHostTest, MatchesTheCpuKernels) {
  const std::vector<Case> cases = {
      {TensorShape({2, 3, 3, 4}), true, 1.0f, true},     // 18 rows: one chunk
      {TensorShape({4, 20, 20, 3}), true, 1.0f, true},   // 1600 rows: 50 chunks
      {TensorShape({4, 20, 20, 3}), true, 0.3f, false},  // moving averages blended
      {TensorShape({8, 64, 70, 5}), true, 1.0f, false},  // 35840 rows: 1024 chunks
      {TensorShape({4, 20, 20, 3}), false, 1.0f, false},  // inference
      {TensorShape({1, 1, 1, 6}), true, 1.0f, true},     // one row: no Bessel factor
      {TensorShape({0, 2, 2, 3}), true, 1.0f, true},     // no rows
  };
  for (const Case& c : cases) ExpectTheGpuCodeMatchesTheCpu(c);
}

}  // namespace
}  // namespace sluice
