// Fake quantization on known values (the nudged range, rounding to a step,
// clamping), the straight-through gradients through AddGradients, per
// channel ranges, and the bad attrs and shapes.
#include "ops/nn/fake_quant_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using testing_util::Eval;
using testing_util::TryEval;

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}

constexpr float kStep = 2.0f / 255;  // (max - min) / 255 for [-1, 1]

TEST(FakeQuantTest, RoundsToTheNudgedGridAndClamps) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // [-1, 1] nudges to [-127, 128] steps so that 0 is on the grid (in float
  // 1 / (2 / 255) is just below 127.5, which rounds to 127).
  Output x = ops::Const(s, {-2.0f, -1.0f, 0.0f, 0.5f, 2.0f});
  const std::vector<float> want = {-127 * kStep, -127 * kStep, 0.0f, 64 * kStep, 128 * kStep};
  EXPECT_THAT(Values(Eval(s, {}, ops::FakeQuantWithMinMaxArgs(s, x, -1.0f, 1.0f))),
              Pointwise(FloatNear(1e-6), want));
  EXPECT_THAT(Values(Eval(s, {}, ops::FakeQuantWithMinMaxVars(s, x, -1.0f, 1.0f))),
              Pointwise(FloatNear(1e-6), want));
  // 4 bits, narrow range: steps 1..15 over [0, 1.4]; 0 nudges to step 1.
  Output y = ops::FakeQuantWithMinMaxVars(s, ops::Const(s, {0.0f, 0.33f, 5.0f}), 0.0f, 1.4f,
                                          {.num_bits = 4, .narrow_range = true});
  EXPECT_THAT(Values(Eval(s, {}, y)), Pointwise(FloatNear(1e-6), {0.0f, 0.3f, 1.4f}));
}

TEST(FakeQuantTest, PerChannelRangesFollowTheLastDimension) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Tensor::FromVector<float>({0.5f, 0.5f, -3.0f, 3.0f}, TensorShape({2, 2})));
  Output q = ops::FakeQuantWithMinMaxVarsPerChannel(s, x, {-1.0f, 0.0f}, {1.0f, 2.55f});
  EXPECT_THAT(Values(Eval(s, {}, q)),
              Pointwise(FloatNear(1e-6), {64 * kStep, 0.5f, -127 * kStep, 2.55f}));
}

TEST(FakeQuantTest, StraightThroughGradients) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, {-2.0f, 0.5f, 2.0f, 3.0f});
  Output lo = ops::Const(s, -1.0f), hi = ops::Const(s, 1.0f);
  Output y = ops::FakeQuantWithMinMaxVars(s, x, lo, hi);
  Output w = ops::Const(s, {1.0f, 2.0f, 3.0f, 4.0f});
  Output loss = s.Op("Sum").Input(s.Op("Mul").Input(y).Input(w).Finalize1()).Input(0).Finalize1();
  absl::StatusOr<std::vector<Output>> g = AddGradients(s, {loss}, {x, lo, hi});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(Values(Eval(s, {}, (*g)[0])), ElementsAre(0, 2, 0, 0));
  EXPECT_THAT(Values(Eval(s, {}, (*g)[1])), ElementsAre(1));  // below the range
  EXPECT_THAT(Values(Eval(s, {}, (*g)[2])), ElementsAre(7));  // above it
  Output a = ops::FakeQuantWithMinMaxArgs(s, x, -1.0f, 1.0f);
  absl::StatusOr<std::vector<Output>> ga = AddGradients(s, {a}, {x});
  ASSERT_TRUE(ga.ok()) << ga.status();
  EXPECT_THAT(Values(Eval(s, {}, (*ga)[0])), ElementsAre(0, 1, 0, 0));
}

TEST(FakeQuantTest, BadAttrsAndRangesSayWhatIsWrong) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})));
  auto error = [&](Output o) { return std::string(TryEval(s, {}, o).status().message()); };
  EXPECT_THAT(error(ops::FakeQuantWithMinMaxArgs(s, x, -1.0f, 1.0f, {.num_bits = 1})),
              HasSubstr("num_bits must be between 2 and 16"));
  EXPECT_THAT(error(ops::FakeQuantWithMinMaxArgs(s, x, 1.0f, 1.0f)),
              HasSubstr("min has to be smaller than max"));
  EXPECT_THAT(error(ops::FakeQuantWithMinMaxVars(s, x, {0.0f, 1.0f}, 1.0f)),
              HasSubstr("`min` must be rank 0"));
  EXPECT_THAT(error(ops::FakeQuantWithMinMaxVarsPerChannel(s, x, {0.0f, 0.0f, 0.0f}, {1.0f, 1.0f})),
              HasSubstr("must be a vector of 2"));
}

}  // namespace
}  // namespace sluice
