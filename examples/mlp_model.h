// The MLP classifier of the examples and benchmarks, and the synthetic
// dataset it learns: a model a user would copy.
//
//   MlpConfig config;  config.layers = {784, 256, 256, 10};
//   ASSIGN_OR_RETURN(MlpModel m, BuildMlp(config));
//   Dataset data = MakeSyntheticDataset({.examples = 8192});
//   ASSIGN_OR_RETURN(auto sess, NewSession(BuiltinSessionConfig(), *m.scope.graph()));
//   RETURN_IF_ERROR(sess->Run({}, {}, {m.init->name()}).status());
//   ... sess->Run({{m.x, batch_x}, {m.labels, batch_y}}, {m.loss}, {m.train}) ...
//
// Thread-compatible.
#ifndef SLUICE_EXAMPLES_MLP_MODEL_H_
#define SLUICE_EXAMPLES_MLP_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sluice.h"

namespace sluice {

struct MlpConfig {
  std::vector<int64_t> layers = {784, 256, 256, 10};  // input, hidden..., classes
  double learning_rate = 0.1;
  std::string optimizer = "sgd";  // sgd, momentum, adam
  int64_t seed = 1;
};

struct MlpModel {
  Scope scope;
  Output x;           // float [batch, layers[0]]  (node "x")
  Output labels;      // int32 [batch]             (node "labels")
  Output logits;      // float [batch, classes]
  Output prediction;  // int64 [batch]             (node "prediction")
  Output loss;        // float scalar, mean cross-entropy (node "loss")
  Output accuracy;    // float scalar              (node "accuracy")
  Output global_step;
  Node* train = nullptr;  // one SGD step, increments global_step (node "train")
  Node* init = nullptr;   // initializes every variable (node "init")
  std::vector<Output> weights;
};

// The whole training graph: BuildMlpForward, a global step, the optimizer of
// config.optimizer minimizing the loss ("train") and "init".
absl::StatusOr<MlpModel> BuildMlp(const MlpConfig& config);

// The forward graph only — x, labels, the layers' variables (weights), logits,
// prediction, loss and accuracy — for callers that build their own training
// ops (e.g. in-graph replication, placement/replicate.h); global_step, train
// and init stay unset. InvalidArgument for fewer than 2 layers.
absl::StatusOr<MlpModel> BuildMlpForward(const MlpConfig& config);

// One copy of BuildMlpForward's forward pass, built in `scope` (e.g. a
// replica's scope pinned to its device) over the given `x` [batch, layers[0]]
// float and `labels` [batch] int32: the layers' variables with their
// initializers ("layer<l>/weights", "layer<l>/bias"), logits, prediction,
// loss and accuracy, named under the scope. The returned model's scope is
// `scope`; global_step, train and init stay unset. InvalidArgument for fewer
// than 2 layers.
absl::StatusOr<MlpModel> BuildMlpTower(const Scope& scope, const MlpConfig& config, Output x,
                                       Output labels);

// The optimizer named by config.optimizer at config.learning_rate (momentum
// 0.9); InvalidArgument for an unknown name.
absl::StatusOr<std::unique_ptr<Optimizer>> NewMlpOptimizer(const MlpConfig& config);

struct DatasetOptions {
  int64_t examples = 8192;
  int64_t features = 784;
  int64_t classes = 10;
  double noise = 7.0;  // stddev of the per-feature noise around each class centre
  uint64_t seed = 7;
};

// Examples drawn around one random centre per class: x float [n, features],
// y int32 [n]. Deterministic for a seed; nothing is downloaded.
struct Dataset {
  Tensor x;
  Tensor y;
};
Dataset MakeSyntheticDataset(const DatasetOptions& options);

// Rows [begin, begin + n) of a dataset (wrapping around), as new tensors.
Dataset Batch(const Dataset& data, int64_t begin, int64_t n);

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_MLP_MODEL_H_
