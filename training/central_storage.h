// CentralStorage: data parallelism over the devices of one machine with one
// copy of the variables. Every variable lives on one device (the CPU by
// default); the model's forward and backward passes are mirrored over the
// compute devices (GPUs, or virtual CPUs), each on its slice of the batch;
// the towers' gradients are averaged onto the variables' device, where the
// optimizer applies them once. TensorFlow calls it
// CentralStorageStrategy. Unlike Mirrored (mirrored_strategy.h), nothing is
// all-reduced and no copies need to be kept equal: the towers read the one
// copy every step.
//
//   ReplicaFn fn = [&](const Scope& s, const std::vector<Output>& in)
//       -> absl::StatusOr<ReplicaModel> { ... return ReplicaModel{loss, vars, {accuracy}}; };
//   CentralStorageOptions o;
//   o.compute_devices = {".../device:GPU:0", ".../device:GPU:1"};
//   ASSIGN_OR_RETURN(CentralStorageModel cs,
//                    BuildCentralStorage(scope, {x, labels}, fn, &sgd, o));
//   sess->Run({}, {}, {cs.init->name()});
//   sess->Run({{x, batch}, {labels, y}}, {cs.loss}, {cs.train->name()});
//
// `fn` is called once, in `scope` itself, on the whole batch inputs: its
// variables are the shared ones (pinned to variable_device unless fn pinned
// them elsewhere) and its forward graph stays in the graph unreplicated, for
// evaluating a whole batch on one device (`model`). The towers are copies of
// what its loss and metrics need (placement/replicate.h, which documents the
// naming "tower_<k>/..."). With a loss that averages over its batch, a step
// equals one device's step on the whole batch, up to float rounding.
//
// Errors (InvalidArgument): no compute devices, an empty variable device, a
// global_step that is not an int64 variable, fn's error, and
// ReplicateTraining's (a batch the towers do not divide, a loss that is not
// a scalar, no variables, ...). Thread-compatible (adds nodes).
#ifndef SLUICE_TRAINING_CENTRAL_STORAGE_H_
#define SLUICE_TRAINING_CENTRAL_STORAGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "ops/training/optimizers.h"
#include "placement/replicate.h"
#include "training/mirrored_strategy.h"

namespace sluice {

struct CentralStorageOptions {
  std::vector<std::string> compute_devices;  // one tower each
  // The one copy of each variable, the gradient averages and the updates.
  std::string variable_device = "/device:CPU:0";
  // When set (an int64 variable's ref output), `train` increments it.
  Output global_step;
};

struct CentralStorageModel {
  ReplicaModel model;           // fn's graph: shared variables, whole-batch forward
  ReplicatedGraph towers;       // the towers' copies, losses and gradients
  Output loss;                  // mean of the towers' losses
  std::vector<Output> metrics;  // means of the towers' metrics
  Node* train = nullptr;        // applies the averaged gradients once
  Node* init = nullptr;         // initializes every variable (optimizer slots too)
};

absl::StatusOr<CentralStorageModel> BuildCentralStorage(const Scope& scope,
                                                        const std::vector<Output>& batch_inputs,
                                                        const ReplicaFn& fn, Optimizer* optimizer,
                                                        const CentralStorageOptions& options);

}  // namespace sluice

#endif  // SLUICE_TRAINING_CENTRAL_STORAGE_H_
