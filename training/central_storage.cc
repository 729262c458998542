#include "training/central_storage.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"

namespace sluice {
namespace {

absl::Status ValidateOptions(const CentralStorageOptions& o) {
  if (o.compute_devices.empty()) {
    return absl::InvalidArgumentError(
        "central storage: no compute devices (need one tower per device)");
  }
  if (o.variable_device.empty()) {
    return absl::InvalidArgumentError("central storage: empty variable device");
  }
  return absl::OkStatus();
}

// The mean over the towers of tower_outputs[k][i], on `scope`'s device.
Output TowerMean(const Scope& scope, const ReplicatedGraph& towers, size_t i) {
  std::vector<Output> values;
  for (const std::vector<Output>& outputs : towers.tower_outputs) values.push_back(outputs[i]);
  if (values.size() == 1) return values[0];
  Output sum = ops::AddN(scope, values);
  return ops::Mul(scope, sum, 1.0 / static_cast<double>(values.size()));
}

}  // namespace

absl::StatusOr<CentralStorageModel> BuildCentralStorage(const Scope& scope,
                                                        const std::vector<Output>& batch_inputs,
                                                        const ReplicaFn& fn, Optimizer* optimizer,
                                                        const CentralStorageOptions& options) {
  RETURN_IF_ERROR(scope.status());
  RETURN_IF_ERROR(ValidateOptions(options));
  CentralStorageModel result;
  absl::StatusOr<ReplicaModel> model = fn(scope, batch_inputs);
  if (!model.ok()) return AddContext(model.status(), "central storage: building the model");
  result.model = *std::move(model);

  ReplicationOptions replication;
  replication.devices = options.compute_devices;
  replication.batch_inputs = batch_inputs;
  replication.loss = result.model.loss;
  replication.variables = result.model.variables;
  replication.variable_device = options.variable_device;
  replication.tower_outputs = result.model.metrics;
  ASSIGN_OR_RETURN(result.towers, ReplicateTraining(scope, replication));
  result.loss = result.towers.loss;

  const Scope central = scope.NewSubScope("central_storage").WithDevice(options.variable_device);
  for (size_t i = 0; i < result.model.metrics.size(); ++i) {
    result.metrics.push_back(
        TowerMean(central.WithOpName(absl::StrCat("metric_", i)), result.towers, i));
  }
  const Output* global_step = options.global_step.valid() ? &options.global_step : nullptr;
  ASSIGN_OR_RETURN(result.train, optimizer->ApplyGradients(scope.WithOpName("train"),
                                                           result.towers.grads_and_vars,
                                                           global_step));
  result.init = ops::GlobalVariablesInitializer(scope.WithOpName("init"));
  RETURN_IF_ERROR(scope.status());
  return result;
}

}  // namespace sluice
