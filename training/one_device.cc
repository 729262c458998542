#include "training/one_device.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/state/state_ops.h"
#include "placement/device_name.h"

namespace sluice {

absl::StatusOr<OneDeviceModel> BuildOneDevice(const Scope& scope,
                                              const std::vector<Output>& inputs,
                                              const ReplicaFn& fn, Optimizer* optimizer,
                                              const OneDeviceOptions& options) {
  RETURN_IF_ERROR(scope.status());
  if (options.device.empty()) return absl::InvalidArgumentError("one device: no device given");
  if (absl::StatusOr<DeviceName> parsed = DeviceName::Parse(options.device); !parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("one device: bad device name '",
                                                   options.device, "': ",
                                                   parsed.status().message()));
  }
  const Scope on_device = scope.WithDevice(options.device);
  OneDeviceModel result;
  absl::StatusOr<ReplicaModel> model = fn(on_device, inputs);
  if (!model.ok()) return AddContext(model.status(), "one device: building the model");
  result.model = *std::move(model);
  const ReplicaModel& m = result.model;
  if (!m.loss.valid()) return absl::InvalidArgumentError("one device: the loss is unset");
  if (!m.loss.shape().unknown_rank() && m.loss.shape().rank() != 0) {
    return absl::InvalidArgumentError(absl::StrCat("one device: loss ", m.loss.node->name(),
                                                   " has shape ", m.loss.shape().DebugString(),
                                                   "; it must be a scalar"));
  }
  if (m.variables.empty()) return absl::InvalidArgumentError("one device: no variables");
  result.loss = m.loss;
  result.metrics = m.metrics;
  const Output* global_step = options.global_step.valid() ? &options.global_step : nullptr;
  ASSIGN_OR_RETURN(result.train, optimizer->Minimize(on_device, m.loss,
                                                     m.variables, global_step));
  result.init = ops::GlobalVariablesInitializer(on_device.WithOpName("init"));
  RETURN_IF_ERROR(scope.status());
  return result;
}

}  // namespace sluice
