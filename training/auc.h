// The area under the ROC curve as TensorFlow 1.x's tf.metrics.auc computes
// it (curve "ROC", summation "trapezoidal"), on the host: predictions in
// [0, 1] are counted against num_thresholds thresholds
// ({-1e-7, 1/(n-1), ..., (n-2)/(n-1), 1 + 1e-7}; a prediction above a
// threshold is a positive there), then the true- and false-positive rates
// (each over its total plus 1e-6) are integrated by trapezoids. So an
// evaluation reports the number TensorFlow's would.
//
//   AucAccumulator auc;                    // 200 thresholds
//   RETURN_IF_ERROR(auc.Add(labels, predictions));   // per evaluation batch
//   double value = auc.Value();
//
// Labels: nonzero is positive (TF casts them to bool). Errors:
// InvalidArgument for lengths that differ or a prediction outside [0, 1]
// (TF's assertion), naming it. Thread-compatible.
#ifndef SLUICE_TRAINING_AUC_H_
#define SLUICE_TRAINING_AUC_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace sluice {

class AucAccumulator {
 public:
  explicit AucAccumulator(int num_thresholds = 200);

  absl::Status Add(absl::Span<const int64_t> labels, absl::Span<const float> predictions);
  // The AUC of everything added (0 before anything is).
  double Value() const;
  int64_t count() const { return count_; }

 private:
  std::vector<float> thresholds_;
  // By bucket j: predictions above exactly j thresholds.
  std::vector<int64_t> positives_, negatives_;
  int64_t count_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_AUC_H_
