// Synthetic click logs from a planted model, for the wide & deep example:
// each example has --features categorical string features ("C1".."C26",
// TF's Criteo naming) and a click label drawn from a logistic model whose
// weights are planted per (feature, value). Because the model is known, so
// is the best AUC any model can reach on the test set: the AUC of the
// planted probabilities themselves (training/auc.h's TF semantics).
//
//   ASSIGN_OR_RETURN(ClickLogFiles logs, EnsureClickLogs({.out_dir = "/tmp/sluice/click_logs"}));
//   // logs.train: TFRecord shards of tf.train.Example
//   //   {"C1".."C26": bytes_list ["v<id>"], "label": int64_list [0 or 1]}
//   // logs.planted_test_auc: the optimum to compare a trained model with
//
// Values of a feature are skewed as categorical data are (id =
// floor(vocab * u^2) for uniform u: small ids common, large ones rare).
// Files are written under temporary names and renamed, so processes
// generating at once (every worker on its first run) never read a partial
// file; the same options always give the same bytes. A file
// "planted.txt" beside them records the optimum and the counts.
//
// Errors: InvalidArgument for options out of range; file errors naming the
// file.
#ifndef SLUICE_EXAMPLES_CLICK_LOGS_H_
#define SLUICE_EXAMPLES_CLICK_LOGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {

struct ClickLogOptions {
  std::string out_dir;
  int features = 26;
  int vocab = 1000;  // values per feature
  int64_t train_examples = 200000;
  int64_t test_examples = 20000;
  int train_shards = 4;
  uint64_t seed = 1;
  double weight_stddev = 0.35;  // of each planted weight
  double bias = -1.0;
};

struct ClickLogFiles {
  std::vector<std::string> train;
  std::vector<std::string> test;
  int64_t train_examples = 0;
  double planted_test_auc = 0;  // the best achievable test AUC
  double click_rate = 0;        // of the training labels
};

// The feature names: "C1", "C2", ...
std::vector<std::string> ClickFeatureNames(int features);

absl::StatusOr<ClickLogFiles> EnsureClickLogs(const ClickLogOptions& options);

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_CLICK_LOGS_H_
