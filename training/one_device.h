// OneDevice: the whole model on one device — its variables, forward and
// backward passes and the optimizer's update — with the batch inputs fed on
// the client and copied there. It is the strategy to start from, or to
// debug with, before spreading a model out: code written against a strategy
// runs unchanged with it. TensorFlow calls it OneDeviceStrategy.
//
//   OneDeviceOptions o;  o.device = "/job:localhost/replica:0/task:0/device:GPU:0";
//   ASSIGN_OR_RETURN(OneDeviceModel m, BuildOneDevice(scope, {x, labels}, fn, &sgd, o));
//   sess->Run({}, {}, {m.init->name()});
//   sess->Run({{x, batch}, {labels, y}}, {m.loss}, {m.train->name()});
//
// `fn` (mirrored_strategy.h's ReplicaFn) builds the model in a scope pinned
// to options.device; the gradients and updates are built pinned there too,
// so every node the step runs except the fed inputs is on that device.
//
// Errors (InvalidArgument): an empty or malformed device name, a
// global_step that is not an int64 variable, fn's error, a loss that is not
// a scalar, no variables, and the optimizer's errors. Thread-compatible.
#ifndef SLUICE_TRAINING_ONE_DEVICE_H_
#define SLUICE_TRAINING_ONE_DEVICE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "ops/training/optimizers.h"
#include "training/mirrored_strategy.h"

namespace sluice {

struct OneDeviceOptions {
  std::string device;  // e.g. "/device:GPU:0" (any part may be omitted)
  // When set (an int64 variable's ref output), `train` increments it.
  Output global_step;
};

struct OneDeviceModel {
  ReplicaModel model;           // fn's result
  Output loss;                  // model.loss
  std::vector<Output> metrics;  // model.metrics
  Node* train = nullptr;
  Node* init = nullptr;  // initializes every variable (optimizer slots too)
};

absl::StatusOr<OneDeviceModel> BuildOneDevice(const Scope& scope,
                                              const std::vector<Output>& inputs,
                                              const ReplicaFn& fn, Optimizer* optimizer,
                                              const OneDeviceOptions& options);

}  // namespace sluice

#endif  // SLUICE_TRAINING_ONE_DEVICE_H_
