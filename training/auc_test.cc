#include "training/auc.h"

#include <cmath>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

// 40 points: predictions frac(0.618... i) as float, labels frac(0.754... i)
// < prediction. TF 2.21's tf.compat.v1.metrics.auc gives 0.8471176028 (200
// thresholds) and 0.8070174456 (5 thresholds) on them.
void Points(std::vector<int64_t>* labels, std::vector<float>* predictions) {
  for (int i = 0; i < 40; ++i) {
    const float p = static_cast<float>(std::fmod(i * 0.6180339887, 1.0));
    predictions->push_back(p);
    labels->push_back(std::fmod(i * 0.7548776662, 1.0) < static_cast<double>(p) ? 1 : 0);
  }
}

TEST(AucTest, MatchesTensorFlowsMetric) {
  std::vector<int64_t> labels;
  std::vector<float> predictions;
  Points(&labels, &predictions);
  AucAccumulator fine, coarse(5);
  // Added in two batches, as an evaluation loop adds them.
  for (AucAccumulator* a : {&fine, &coarse}) {
    ASSERT_TRUE(
        a->Add(absl::MakeSpan(labels).subspan(0, 17), absl::MakeSpan(predictions).subspan(0, 17))
            .ok());
    ASSERT_TRUE(
        a->Add(absl::MakeSpan(labels).subspan(17), absl::MakeSpan(predictions).subspan(17)).ok());
  }
  EXPECT_NEAR(fine.Value(), 0.8471176028, 1e-6);
  EXPECT_NEAR(coarse.Value(), 0.8070174456, 1e-6);
  EXPECT_EQ(fine.count(), 40);
}

TEST(AucTest, PerfectAndInvertedRankings) {
  AucAccumulator perfect, inverted;
  ASSERT_TRUE(perfect.Add({0, 0, 1, 1}, {0.1f, 0.2f, 0.8f, 0.9f}).ok());
  ASSERT_TRUE(inverted.Add({1, 1, 0, 0}, {0.1f, 0.2f, 0.8f, 0.9f}).ok());
  EXPECT_NEAR(perfect.Value(), 1.0, 1e-5);
  EXPECT_NEAR(inverted.Value(), 0.0, 1e-5);
  EXPECT_EQ(AucAccumulator().Value(), 0.0);
}

TEST(AucTest, BadInputsAreInvalidArgument) {
  AucAccumulator a;
  absl::Status lengths = a.Add({0, 1}, {0.5f});
  EXPECT_EQ(lengths.code(), absl::StatusCode::kInvalidArgument);
  absl::Status range = a.Add({0, 1}, {0.5f, 1.5f});
  EXPECT_EQ(range.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(range.message(), "prediction 1 is 1.5")) << range;
  absl::Status nan = a.Add({1}, {std::nanf("")});
  EXPECT_EQ(nan.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a.count(), 0);
}

}  // namespace
}  // namespace sluice
