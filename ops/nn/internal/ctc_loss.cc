#include "ops/nn/internal/ctc_loss.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice {
namespace internal {
namespace {

constexpr double kLogZero = -std::numeric_limits<double>::infinity();

double LogSumExp(double a, double b) {
  if (a <= kLogZero) return b;
  if (b <= kLogZero) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

// Rows u of the extended sequence, columns t.
class LogTable {
 public:
  LogTable(int64_t rows, int64_t cols) : cols_(cols), v_(rows * cols, kLogZero) {}
  double& at(int64_t u, int64_t t) { return v_[u * cols_ + t]; }

 private:
  int64_t cols_;
  std::vector<double> v_;
};

// The states of step t that can still reach the end (and be reached from
// the start) in T steps: [first, limit).
int64_t FirstState(int64_t U, int64_t T, int64_t t) { return std::max<int64_t>(0, U - 2 * (T - t)); }
int64_t LimitState(int64_t U, int64_t t) { return std::min<int64_t>(U, 2 * (t + 1)); }

}  // namespace

absl::StatusOr<std::vector<int>> CtcLabels(const std::vector<int>& raw, int64_t classes,
                                           bool collapse_repeated, int64_t b) {
  std::vector<int> labels;
  bool ended = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (i > 0 && collapse_repeated && raw[i] == raw[i - 1]) continue;
    if (raw[i] >= classes - 1) {
      ended = true;
    } else if (ended) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Saw a non-null label (index >= num_classes - 1) following a null label, batch: ", b,
          " num_classes: ", classes, " labels: ", absl::StrJoin(raw, ",")));
    } else {
      labels.push_back(raw[i]);
    }
  }
  for (int l : labels) {
    if (l < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "All labels must be nonnegative integers, batch: ", b, " labels: ", absl::StrJoin(labels, ",")));
    }
  }
  return labels;
}

double CtcLoss(const CtcSequence& seq, const std::vector<int>& labels, bool merge_repeated,
               double* grad) {
  const int64_t T = seq.steps;
  const int64_t C = seq.classes;
  const int blank = static_cast<int>(C - 1);
  // The extended sequence: a blank before each label and one at the end.
  std::vector<int> ext;
  for (int l : labels) {
    ext.push_back(blank);
    ext.push_back(l);
  }
  ext.push_back(blank);
  const int64_t U = static_cast<int64_t>(ext.size());

  // Softmax of each step, its largest logit subtracted.
  std::vector<double> y(T * C);
  for (int64_t t = 0; t < T; ++t) {
    const double* row = seq.logits + t * seq.stride;
    const double top = *std::max_element(row, row + C);
    double sum = 0;
    for (int64_t c = 0; c < C; ++c) sum += (y[t * C + c] = std::exp(row[c] - top));
    for (int64_t c = 0; c < C; ++c) y[t * C + c] /= sum;
  }
  auto log_y = [&](int64_t u, int64_t t) { return std::log(y[t * C + ext[u]]); };
  // Whether state u may be entered from u - 2 (skipping a blank): not a
  // blank, and not a repeat of the label before when repeats merge.
  auto skips = [&](int64_t u) {
    return ext[u] != blank && !(merge_repeated && ext[u] == ext[u - 2]);
  };

  LogTable alpha(U, T), beta(U, T);
  alpha.at(0, 0) = log_y(0, 0);
  if (U > 1) alpha.at(1, 0) = log_y(1, 0);
  for (int64_t t = 1; t < T; ++t) {
    for (int64_t u = FirstState(U, T, t); u < LimitState(U, t); ++u) {
      double sum = kLogZero;
      if (merge_repeated || ext[u] == blank) sum = alpha.at(u, t - 1);
      if (u > 0) sum = LogSumExp(sum, alpha.at(u - 1, t - 1));
      if (u > 1 && skips(u)) sum = LogSumExp(sum, alpha.at(u - 2, t - 1));
      alpha.at(u, t) = log_y(u, t) + sum;
    }
  }
  for (int64_t u = std::max<int64_t>(0, U - 2); u < U; ++u) beta.at(u, T - 1) = 0;
  for (int64_t t = T - 2; t >= 0; --t) {
    for (int64_t u = FirstState(U, T, t); u < LimitState(U, t); ++u) {
      double& b = beta.at(u, t);
      if (merge_repeated || ext[u] == blank) b = LogSumExp(b, beta.at(u, t + 1) + log_y(u, t + 1));
      if (u + 1 < U) b = LogSumExp(b, beta.at(u + 1, t + 1) + log_y(u + 1, t + 1));
      if (u + 2 < U && skips(u + 2)) {
        b = LogSumExp(b, beta.at(u + 2, t + 1) + log_y(u + 2, t + 1));
      }
    }
  }

  double log_p = kLogZero;
  for (int64_t u = 0; u < U; ++u) log_p = LogSumExp(log_p, alpha.at(u, 0) + beta.at(u, 0));
  if (grad == nullptr) return -log_p;
  if (log_p == kLogZero) {
    std::copy(y.begin(), y.end(), grad);
    return -log_p;
  }
  std::vector<double> posterior(C);
  for (int64_t t = 0; t < T; ++t) {
    std::fill(posterior.begin(), posterior.end(), kLogZero);
    for (int64_t u = 0; u < U; ++u) {
      posterior[ext[u]] = LogSumExp(posterior[ext[u]], alpha.at(u, t) + beta.at(u, t));
    }
    for (int64_t c = 0; c < C; ++c) grad[t * C + c] = y[t * C + c] - std::exp(posterior[c] - log_p);
  }
  return -log_p;
}

}  // namespace internal
}  // namespace sluice
