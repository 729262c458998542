// Histogram: TensorFlow's summary histogram — exact min, max, count, sum and
// sum of squares, plus counts in fixed exponential buckets — encoded as a
// tensorflow.HistogramProto for TensorBoard.
//
//   Histogram h;
//   for (double v : values) h.Add(v);
//   ::tensorflow::HistogramProto proto;
//   h.EncodeToProto(&proto);
//
// Buckets: the limits grow by 10% from 1e-12 up to 1e20, mirrored to the
// negatives, with 0 in between and +-DBL_MAX at the ends. A value v counts in
// the first bucket whose limit is greater than v (limits are exclusive upper
// bounds). EncodeToProto writes each non-empty bucket as (limit, count) and
// collapses each run of empty buckets into one (last limit of the run, 0), as
// TensorFlow does; an empty histogram has min DBL_MAX and max -DBL_MAX.
//
// Thread-compatible. No ownership.
#ifndef SLUICE_OPS_IO_HISTOGRAM_H_
#define SLUICE_OPS_IO_HISTOGRAM_H_

#include <vector>

#include "absl/types/span.h"
#include "graph/proto/summary.pb.h"

namespace sluice {

class Histogram {
 public:
  Histogram();

  // Values beyond +-DBL_MAX (infinities) count in the outermost buckets; the
  // summary ops reject non-finite values before adding them.
  void Add(double value);
  void EncodeToProto(::tensorflow::HistogramProto* proto) const;

  double min() const { return min_; }
  double max() const { return max_; }
  double num() const { return num_; }
  double sum() const { return sum_; }
  double sum_squares() const { return sum_squares_; }

  // The shared limits, ascending: 1551 of them (774 per sign, 0).
  static const std::vector<double>& BucketLimits();

 private:
  std::vector<double> counts_;  // one per limit
  double min_;
  double max_;
  double num_ = 0;
  double sum_ = 0;
  double sum_squares_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_OPS_IO_HISTOGRAM_H_
