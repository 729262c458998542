// The distorted-bounding-box samplers against crops TensorFlow 2.21 drew
// with the same seeds (stateless, and the first runs of seeded stateful
// kernels), their constraints on many seeds, and their errors.
#include "ops/image/bounding_box_ops.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::TryEval;

Tensor Boxes(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size()) / 4;
  return Tensor::FromVector<float>(v, TensorShape({1, n, 4}));
}

TEST(BoundingBoxOpsTest, StatelessMatchesTensorFlow) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output boxes = ops::Const(s, Boxes({0.1f, 0.2f, 0.7f, 0.9f}));
  Output size = ops::Const(s, Tensor::FromVector<int32_t>({480, 640, 3}, TensorShape({3})));
  auto draw = [&](std::vector<int32_t> seed) {
    return ops::StatelessSampleDistortedBoundingBox(
        s, size, boxes, ops::Const(s, 0.3f),
        ops::Const(s, Tensor::FromVector<int32_t>(seed, TensorShape({2}))));
  };
  ops::DistortedBoundingBox a = draw({1, 2});
  ExpectTensor<int32_t>(Eval(s, {}, a.begin), TensorShape({3}), {3, 52, 0});
  ExpectTensor<int32_t>(Eval(s, {}, a.size), TensorShape({3}), {428, 389, -1});
  ExpectTensor<float>(Eval(s, {}, a.bboxes), TensorShape({1, 1, 4}),
                      {0.00625f, 0.08125f, 0.8979167f, 0.6890625f});
  ops::DistortedBoundingBox b = draw({7, -3});
  ExpectTensor<int32_t>(Eval(s, {}, b.begin), TensorShape({3}), {3, 144, 0});
  ExpectTensor<int32_t>(Eval(s, {}, b.size), TensorShape({3}), {475, 476, -1});
  // int64 sizes and seed, no boxes but the image, other ranges.
  ops::DistortedBoundingBox c = ops::StatelessSampleDistortedBoundingBox(
      s, ops::Const(s, Tensor::FromVector<int64_t>({37, 23, 1}, TensorShape({3}))),
      ops::Const(s, Tensor(DT_FLOAT, TensorShape({1, 0, 4}))), ops::Const(s, 0.0f),
      ops::Const(s, Tensor::FromVector<int64_t>({5, 6}, TensorShape({2}))),
      {.aspect_ratio_range = {0.5f, 2.0f},
       .area_range = {0.1f, 0.5f},
       .max_attempts = 10,
       .use_image_if_no_bounding_boxes = true});
  ExpectTensor<int64_t>(Eval(s, {}, c.begin), TensorShape({3}), {23, 1, 0});
  ExpectTensor<int64_t>(Eval(s, {}, c.size), TensorShape({3}), {12, 15, -1});
}

TEST(BoundingBoxOpsTest, SeededStatefulRunsMatchTensorFlow) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output boxes = ops::Const(s, Boxes({0.1f, 0.2f, 0.7f, 0.9f}));
  ops::DistortedBoundingBox v2 = ops::SampleDistortedBoundingBoxV2(
      s, ops::Const(s, Tensor::FromVector<int32_t>({480, 640, 3}, TensorShape({3}))), boxes,
      ops::Const(s, 0.3f), {.seed = 7, .seed2 = 9});
  // The V1 op, built by name: min_object_covered is an attr.
  Node* v1 = s.Op("SampleDistortedBoundingBox")
                 .Input(ops::Const(s, Tensor::FromVector<uint8_t>({100, 200, 3}, TensorShape({3}))))
                 .Input(boxes)
                 .Attr("seed", int64_t{3})
                 .Attr("seed2", int64_t{4})
                 .Attr("min_object_covered", 0.5f)
                 .Finalize();
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<std::vector<int32_t>> want_v2 = {
      {5, 55, 0, 459, 487, -1}, {28, 48, 0, 390, 478, -1}, {103, 163, 0, 295, 244, -1}};
  for (const auto& want : want_v2) {
    absl::StatusOr<std::vector<Tensor>> run = (*session)->Run({}, {v2.begin.name(), v2.size.name()}, {});
    ASSERT_TRUE(run.ok()) << run.status();
    const std::vector<Tensor>& out = *run;
    ExpectTensor<int32_t>(out[0], TensorShape({3}), {want[0], want[1], want[2]});
    ExpectTensor<int32_t>(out[1], TensorShape({3}), {want[3], want[4], want[5]});
  }
  const std::vector<std::vector<uint8_t>> want_v1 = {{13, 60, 0, 80, 76, 255},
                                                     {14, 86, 0, 66, 75, 255}};
  for (const auto& want : want_v1) {
    absl::StatusOr<std::vector<Tensor>> run =
        (*session)->Run({}, {v1->name() + ":0", v1->name() + ":1"}, {});
    ASSERT_TRUE(run.ok()) << run.status();
    const std::vector<Tensor>& out = *run;
    ExpectTensor<uint8_t>(out[0], TensorShape({3}), {want[0], want[1], want[2]});
    ExpectTensor<uint8_t>(out[1], TensorShape({3}), {want[3], want[4], want[5]});
  }
}

TEST(BoundingBoxOpsTest, CropsKeepTheirConstraints) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output seed = ops::Placeholder(s, DT_INT64);
  const float ymin = 0.25f, xmin = 0.5f, ymax = 0.75f, xmax = 1.0f;
  ops::DistortedBoundingBox box = ops::StatelessSampleDistortedBoundingBox(
      s, ops::Const(s, Tensor::FromVector<int32_t>({200, 300, 3}, TensorShape({3}))),
      ops::Const(s, Boxes({ymin, xmin, ymax, xmax})), ops::Const(s, 0.6f), seed,
      {.aspect_ratio_range = {0.5f, 1.5f}, .area_range = {0.2f, 0.8f}});
  int whole = 0;
  for (int64_t i = 0; i < 200; ++i) {
    Tensor seed_value = Tensor::FromVector<int64_t>({i, 1000 - i}, TensorShape({2}));
    const Tensor begin = Eval(s, {{seed, seed_value}}, box.begin);
    const Tensor size = Eval(s, {{seed, seed_value}}, box.size);
    const int32_t y = begin.data<int32_t>()[0], x = begin.data<int32_t>()[1];
    const int32_t h = size.data<int32_t>()[0], w = size.data<int32_t>()[1];
    ASSERT_GE(y, 0);
    ASSERT_GE(x, 0);
    ASSERT_LE(y + h, 200);
    ASSERT_LE(x + w, 300);
    if (h == 200 && w == 300) {
      ++whole;  // no crop found: the image
      continue;
    }
    const double area = static_cast<double>(h) * w / (200.0 * 300.0);
    EXPECT_GE(area, 0.2 - 1e-6);
    EXPECT_LE(area, 0.8 + 1e-6);
    // At least 60% of the box [50, 150) x [150, 300) is inside the crop.
    const double iy = std::max(0, std::min(y + h, 150) - std::max(y, 50));
    const double ix = std::max(0, std::min(x + w, 300) - std::max(x, 150));
    EXPECT_GE(iy * ix / (100.0 * 150.0), 0.6 - 1e-6);
  }
  EXPECT_LT(whole, 20);
}

TEST(BoundingBoxOpsTest, BadInputsAndAttrs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output size = ops::Placeholder(s, DT_INT32);
  Output boxes = ops::Placeholder(s, DT_FLOAT);
  Output covered = ops::Placeholder(s, DT_FLOAT);
  Output seed = ops::Const(s, Tensor::FromVector<int32_t>({1, 2}, TensorShape({2})));
  auto message = [&](const ops::SampleDistortedBoundingBoxAttrs& a, Tensor sz, Tensor bx,
                     float cov) {
    ops::DistortedBoundingBox b =
        ops::StatelessSampleDistortedBoundingBox(s, size, boxes, covered, seed, a);
    return std::string(
        TryEval(s, {{size, sz}, {boxes, bx}, {covered, Tensor::Scalar<float>(cov)}}, b.begin)
            .status()
            .message());
  };
  const Tensor good_size = Tensor::FromVector<int32_t>({10, 10, 3}, TensorShape({3}));
  const Tensor good_boxes = Boxes({0, 0, 1, 1});
  EXPECT_THAT(message({}, Tensor::FromVector<int32_t>({10, 10}, TensorShape({2})), good_boxes, 0.1f),
              HasSubstr("image_size must be 1-dimensional with 3 elements"));
  EXPECT_THAT(message({}, Tensor::FromVector<int32_t>({-1, 10, 3}, TensorShape({3})), good_boxes,
                      0.1f),
              HasSubstr("image height cannot be >= int32 max"));
  EXPECT_THAT(message({}, good_size, Tensor(DT_FLOAT, TensorShape({1, 4})), 0.1f),
              HasSubstr("must be 3-dimensional"));
  EXPECT_THAT(message({}, good_size, Boxes({0, 0, 1.5f, 1}), 0.1f),
              HasSubstr("must be in [0.0, 1.0]: 1.5"));
  EXPECT_THAT(message({}, good_size, Tensor(DT_FLOAT, TensorShape({1, 0, 4})), 0.1f),
              HasSubstr("use_image_if_no_bounding_boxes"));
  EXPECT_THAT(message({}, good_size, good_boxes, -0.5f),
              HasSubstr("Min object covered must be non-negative"));
  EXPECT_THAT(message({.area_range = {0.5f, 1.5f}}, good_size, good_boxes, 0.1f),
              HasSubstr("less then or equal to 1.0"));
  EXPECT_THAT(message({.aspect_ratio_range = {0.0f, 1.0f}}, good_size, good_boxes, 0.1f),
              HasSubstr("Aspect ratio range must be non-negative"));
  EXPECT_THAT(message({.area_range = {0.5f}}, good_size, good_boxes, 0.1f),
              HasSubstr("must specify 2 dimensions"));
  EXPECT_THAT(message({.max_attempts = 0}, good_size, good_boxes, 0.1f),
              HasSubstr("Max attempts must be positive"));
}

}  // namespace
}  // namespace sluice
