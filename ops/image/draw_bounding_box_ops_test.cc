// DrawBoundingBoxes and V2 against TensorFlow 2.21's outputs (boxes
// inside, crossing the edges, inverted, outside, a point; given colors and
// the default table on one channel) and their errors.
#include "ops/image/draw_bounding_box_ops.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::TryEval;

Tensor Images(int64_t depth) {
  return Tensor::FromVector<float>(std::vector<float>(2 * 5 * 6 * depth, 0.5f), TensorShape({2, 5, 6, depth}));
}

Tensor Boxes() {
  return Tensor::FromVector<float>({0.1f, 0.2f, 0.8f, 0.9f, 0.5f, -0.3f, 1.4f, 0.6f, 0.9f, 0.1f, 0.2f, 0.5f,
                                    0, 0, 1, 1, -2, -2, -1, -1, 0.3f, 0.3f, 0.3f, 0.3f},
                                   TensorShape({2, 3, 4}));
}

TEST(DrawBoundingBoxOpsTest, OutlinesAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output colors = ops::Const(s, Tensor::FromVector<float>({1, 0, 0, 1, 0, 0.25f, 1, 1}, TensorShape({2, 4})));
  ExpectTensor<float>(Eval(s, {}, ops::DrawBoundingBoxesV2(s, ops::Const(s, Images(3)), ops::Const(s, Boxes()), colors)),
                      TensorShape({2, 5, 6, 3}), {0.5f, 0.5f, 0.5f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.0f, 0.25f, 1.0f, 0.0f, 0.25f, 1.0f, 0.0f, 0.25f, 1.0f, 0.0f, 0.25f, 1.0f, 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.25f, 1.0f, 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.0f, 0.25f, 1.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f});
  ExpectTensor<float>(Eval(s, {}, s.Op("DrawBoundingBoxes").Input(ops::Const(s, Images(1))).Input(ops::Const(s, Boxes())).Finalize1()),
                      TensorShape({2, 5, 6, 1}), {0.5f, 1.0f, 1.0f, 1.0f, 1.0f, 0.5f, 0.5f, 1.0f, 0.5f, 0.5f, 1.0f, 0.5f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 0.5f, 0.5f, 1.0f, 1.0f, 1.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.5f, 0.5f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 0.5f, 0.5f, 0.5f, 1.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f});
}

TEST(DrawBoundingBoxOpsTest, Errors) {
  auto run = [](Tensor images, Tensor boxes, Tensor colors) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output im = testing_util::Placeholder(s, DT_FLOAT);
    return TryEval(s, {{im, images}}, ops::DrawBoundingBoxesV2(s, im, ops::Const(s, boxes), ops::Const(s, colors)))
        .status();
  };
  const Tensor colors = Tensor::FromVector<float>({1, 0, 0, 1}, TensorShape({1, 4}));
  EXPECT_THAT(run(Images(2), Boxes(), colors).message(), HasSubstr("Channel depth should be either 1 (GRY)"));
  EXPECT_THAT(run(Images(3), Boxes(), Tensor::FromVector<float>({1, 0}, TensorShape({1, 2}))).message(),
              HasSubstr("colors must have equal or more channels"));
  EXPECT_THAT(run(Images(3), Tensor::FromVector<float>({0, 0, 1}, TensorShape({1, 1, 3})), colors).message(),
              HasSubstr("The batch sizes should be the same"));
}

}  // namespace
}  // namespace sluice
