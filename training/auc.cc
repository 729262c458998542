#include "training/auc.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

constexpr double kThresholdEpsilon = 1e-7;  // TF's kepsilon
constexpr double kRateEpsilon = 1e-6;       // TF's epsilon in the rates

}  // namespace

AucAccumulator::AucAccumulator(int num_thresholds) {
  const int n = std::max(num_thresholds, 2);
  thresholds_.push_back(static_cast<float>(0.0 - kThresholdEpsilon));
  for (int i = 0; i < n - 2; ++i)
    thresholds_.push_back(static_cast<float>((i + 1) * 1.0 / (n - 1)));
  thresholds_.push_back(static_cast<float>(1.0 + kThresholdEpsilon));
  positives_.assign(thresholds_.size() + 1, 0);
  negatives_.assign(thresholds_.size() + 1, 0);
}

absl::Status AucAccumulator::Add(absl::Span<const int64_t> labels,
                                 absl::Span<const float> predictions) {
  if (labels.size() != predictions.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("AUC: ", labels.size(), " labels but ", predictions.size(), " predictions"));
  }
  for (size_t i = 0; i < predictions.size(); ++i) {
    if (!(predictions[i] >= 0.0f && predictions[i] <= 1.0f)) {
      return absl::InvalidArgumentError(
          absl::StrCat("AUC: prediction ", i, " is ", predictions[i], ", not in [0, 1]"));
    }
  }
  for (size_t i = 0; i < predictions.size(); ++i) {
    // Thresholds strictly below the prediction: there it is a positive.
    const size_t above = std::lower_bound(thresholds_.begin(), thresholds_.end(), predictions[i]) -
                         thresholds_.begin();
    ++(labels[i] != 0 ? positives_ : negatives_)[above];
  }
  count_ += static_cast<int64_t>(predictions.size());
  return absl::OkStatus();
}

double AucAccumulator::Value() const {
  if (count_ == 0) return 0;
  int64_t all_pos = 0, all_neg = 0;
  for (int64_t v : positives_) all_pos += v;
  for (int64_t v : negatives_) all_neg += v;
  // At threshold k, predictions above it are those in buckets > k.
  const size_t n = thresholds_.size();
  std::vector<double> tpr(n), fpr(n);
  int64_t tp = all_pos, fp = all_neg;
  for (size_t k = 0; k < n; ++k) {
    tp -= positives_[k];
    fp -= negatives_[k];
    tpr[k] = tp / (all_pos + kRateEpsilon);
    fpr[k] = fp / (all_neg + kRateEpsilon);
  }
  double auc = 0;
  for (size_t k = 0; k + 1 < n; ++k) auc += (fpr[k] - fpr[k + 1]) * (tpr[k] + tpr[k + 1]) / 2;
  return auc;
}

}  // namespace sluice
