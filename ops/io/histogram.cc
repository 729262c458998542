#include "ops/io/histogram.h"

#include <algorithm>
#include <cfloat>

namespace sluice {

const std::vector<double>& Histogram::BucketLimits() {
  static const std::vector<double>* const kLimits = [] {
    std::vector<double> positive;
    for (double v = 1e-12; v < 1e20; v *= 1.1) positive.push_back(v);
    positive.push_back(DBL_MAX);
    auto* limits = new std::vector<double>();
    limits->reserve(2 * positive.size() + 1);
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) limits->push_back(-*it);
    limits->push_back(0.0);
    limits->insert(limits->end(), positive.begin(), positive.end());
    return limits;
  }();
  return *kLimits;
}

Histogram::Histogram()
    : counts_(BucketLimits().size(), 0.0), min_(BucketLimits().back()), max_(-DBL_MAX) {}

void Histogram::Add(double value) {
  const std::vector<double>& limits = BucketLimits();
  size_t b = std::upper_bound(limits.begin(), limits.end(), value) - limits.begin();
  // DBL_MAX and +inf are not below any limit: they go to the last bucket.
  if (b == limits.size()) b = limits.size() - 1;
  counts_[b] += 1.0;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  num_ += 1;
  sum_ += value;
  sum_squares_ += value * value;
}

void Histogram::EncodeToProto(::tensorflow::HistogramProto* proto) const {
  const std::vector<double>& limits = BucketLimits();
  proto->Clear();
  proto->set_min(min_);
  proto->set_max(max_);
  proto->set_num(num_);
  proto->set_sum(sum_);
  proto->set_sum_squares(sum_squares_);
  for (size_t i = 0; i < counts_.size();) {
    double limit = limits[i];
    const double count = counts_[i];
    ++i;
    if (count <= 0.0) {
      // One entry for the whole run of empty buckets, at its last limit.
      while (i < counts_.size() && counts_[i] <= 0.0) limit = limits[i++];
    }
    proto->add_bucket_limit(limit);
    proto->add_bucket(count);
  }
}

}  // namespace sluice
