// NonMaxSuppression V1-V5 and WithOverlaps: TensorFlow 2.21's selections
// for the same boxes (overlapping groups, swapped corners, a box without
// area, a tie in score), thresholds, padding, Soft-NMS's rescored
// candidates, and each bad input's error.
#include "ops/image/nms_ops.h"

#include <vector>

#include "absl/strings/match.h"
#include "builtin_session.h"
#include "graph/scope.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/gradient_checker.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

absl::StatusOr<Tensor> Eval(const Scope& s, const Output& y) { return EvalWithFeeds(s, {}, {}, y); }

std::vector<int32_t> Ints(const Tensor& t) {
  return std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + t.NumElements());
}

// Three boxes overlapping box 0, two far right, one far away, box 0 again
// with its corners swapped (and box 0's score: the lower index wins the
// tie), and a box without area (never suppressed, suppresses nothing).
Output Boxes(const Scope& s) {
  return ops::Const(s, std::vector<float>{0, 0, 1, 1,     0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
                                          0, 10, 1, 11,   0, 10.1f, 1, 11.1f, 0, 100, 1, 101,
                                          1, 1, 0, 0,     0, 0, 0, 5},
                    TensorShape({8, 4}));
}
Output Scores(const Scope& s) {
  return ops::Const(s, std::vector<float>{0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f, 0.9f, 0.99f});
}

TEST(NmsOpsTest, SelectionsAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output b = Boxes(s), sc = Scores(s);
  const std::vector<std::pair<Output, std::vector<int32_t>>> cases = {
      {ops::NonMaxSuppressionV3(s, b, sc, 10, 0.5f, 0.0f), {7, 3, 0, 5}},
      {ops::NonMaxSuppressionV3(s, b, sc, 10, 0.5f, 0.55f), {7, 3, 0}},
      {ops::NonMaxSuppressionV3(s, b, sc, 2, 0.5f, 0.0f), {7, 3}},
      {s.Op("NonMaxSuppression").Input(b).Input(sc).Input(10).Attr("iou_threshold", 0.7f)
           .Finalize1(),
       {7, 3, 0, 5}},
      {s.Op("NonMaxSuppressionV2").Input(b).Input(sc).Input(10).Input(0.5f).Finalize1(),
       {7, 3, 0, 5}},
      {s.Op("NonMaxSuppressionWithOverlaps")
           .Input(ops::Const(s, std::vector<float>{1, 0.7f, 0.2f, 0.7f, 1, 0, 0.2f, 0, 1},
                             TensorShape({3, 3})))
           .Input(ops::Const(s, std::vector<float>{0.9f, 0.95f, 0.5f}))
           .Input(3).Input(0.6f).Input(0.0f).Finalize1(),
       {1, 2}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    absl::StatusOr<Tensor> got = Eval(s, cases[i].first);
    ASSERT_TRUE(got.ok()) << i << ": " << got.status();
    EXPECT_EQ(Ints(*got), cases[i].second) << "case " << i;
  }
  // V4 pads with zeros to max_output_size and counts the valid ones.
  std::vector<Output> v4 = s.Op("NonMaxSuppressionV4").Input(b).Input(sc).Input(7).Input(0.5f)
                               .Input(0.4f).Attr("pad_to_max_output_size", true).FinalizeAll();
  ASSERT_EQ(v4.size(), 2u);
  EXPECT_EQ(v4[0].shape(), TensorShape({7}));
  absl::StatusOr<Tensor> idx = Eval(s, v4[0]), valid = Eval(s, v4[1]);
  ASSERT_TRUE(idx.ok() && valid.ok()) << idx.status() << valid.status();
  EXPECT_EQ(Ints(*idx), (std::vector<int32_t>{7, 3, 0, 0, 0, 0, 0}));
  EXPECT_EQ(valid->scalar<int32_t>(), 3);
}

// Soft-NMS: overlapping candidates come back rescored, in order.
TEST(NmsOpsTest, SoftNmsRescoresOverlappingBoxes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::NonMaxSuppressionV5Outputs soft =
      ops::NonMaxSuppressionV5(s, Boxes(s), Scores(s), 10, 1.0f, 0.1f, 0.5f);
  absl::StatusOr<Tensor> idx = Eval(s, soft.selected_indices);
  absl::StatusOr<Tensor> sc = Eval(s, soft.selected_scores);
  absl::StatusOr<Tensor> valid = Eval(s, soft.valid_outputs);
  ASSERT_TRUE(idx.ok() && sc.ok() && valid.ok()) << idx.status() << sc.status();
  EXPECT_EQ(Ints(*idx), (std::vector<int32_t>{7, 3, 0, 1, 5, 4, 2}));
  const std::vector<float> want = {0.99f, 0.95f, 0.9f, 0.38400354981422424f, 0.3f,
                                   0.25600260496139526f, 0.19697244465351105f};
  ASSERT_EQ(sc->NumElements(), 7);
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(sc->data<float>()[i], want[i], 1e-6) << i;
  EXPECT_EQ(valid->scalar<int32_t>(), 7);
  // Hard NMS through V5 (sigma 0), padded.
  ops::NonMaxSuppressionV5Outputs hard =
      ops::NonMaxSuppressionV5(s, Boxes(s), Scores(s), 10, 0.5f, 0.0f, 0.0f, true);
  idx = Eval(s, hard.selected_indices);
  valid = Eval(s, hard.valid_outputs);
  ASSERT_TRUE(idx.ok() && valid.ok());
  EXPECT_EQ(Ints(*idx), (std::vector<int32_t>{7, 3, 0, 5, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(valid->scalar<int32_t>(), 4);
}

TEST(NmsOpsTest, BadInputsAreClearErrors) {
  auto error = [](const std::function<Output(const Scope&)>& build) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output out = build(s);
    if (!s.ok()) return s.status();
    return Eval(s, out).status();
  };
  absl::Status st = error([](const Scope& s) {
    return ops::NonMaxSuppressionV3(s, ops::Const(s, std::vector<float>(6, 0), TensorShape({2, 3})),
                                    ops::Const(s, std::vector<float>{1, 2}), 3, 0.5f, 0.0f);
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "4 columns")) << st;
  st = error([](const Scope& s) {
    return ops::NonMaxSuppressionV3(s, Boxes(s), ops::Const(s, std::vector<float>{1, 2}), 3, 0.5f,
                                    0.0f);
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "scores has incompatible shape")) << st;
  st = error([](const Scope& s) {
    return ops::NonMaxSuppressionV3(s, Boxes(s), Scores(s), 3, 1.5f, 0.0f);
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "iou_threshold must be in [0, 1]")) << st;
  st = error([](const Scope& s) {
    return ops::NonMaxSuppressionV3(s, Boxes(s), Scores(s), -1, 0.5f, 0.0f);
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "output size must be non-negative")) << st;
  st = error([](const Scope& s) {
    return ops::NonMaxSuppressionV5(s, Boxes(s), Scores(s), 3, 0.5f, 0.0f, -1.0f).selected_indices;
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "soft_nms_sigma")) << st;
  st = error([](const Scope& s) {
    return ops::NonMaxSuppressionV3(
        s, ops::PlaceholderWithDefault(s, Boxes(s), TensorShape::Unknown()), Scores(s),
        ops::PlaceholderWithDefault(s, ops::Const(s, std::vector<int32_t>{3}), TensorShape::Unknown()),
        0.5f, 0.0f);
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "max_output_size must be 0-D")) << st;
  // The selection has no gradient (as in TensorFlow): differentiating
  // through it is no error, and nothing flows back to the scores.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output sc = ops::Placeholder(s, DT_FLOAT);
  ops::NonMaxSuppressionV5Outputs keep = ops::NonMaxSuppressionV5(s, Boxes(s), sc, 3, 0.5f, 0.0f, 0.5f);
  absl::StatusOr<std::vector<Output>> grads = AddGradients(s, {keep.selected_scores}, {sc});
  EXPECT_TRUE(grads.ok()) << grads.status();
}

}  // namespace
}  // namespace sluice
