#include "distributed/rpc/session_config_wire.h"

namespace sluice {

rpc::SessionConfig SessionConfigToWire(const SessionConfig& config) {
  rpc::SessionConfig wire;
  wire.default_device = config.default_device;
  wire.allow_soft_placement = config.allow_soft_placement;
  wire.auto_place = config.auto_place;
  wire.fuse_ops = config.fuse_ops;
  wire.mixed_precision = static_cast<int32_t>(config.mixed_precision);
  wire.mixed_precision_on_any_cpu = config.mixed_precision_on_any_cpu;
  wire.group_updates_on = config.group_updates_on;
  wire.step_timeout_ms = config.step_timeout_ms;
  wire.inter_op_parallelism = config.inter_op_parallelism;
  wire.capture_steps = config.capture_steps;
  return wire;
}

SessionConfig SessionConfigFromWire(const rpc::SessionConfig& wire, const SessionConfig& base) {
  SessionConfig config = base;
  config.default_device = wire.default_device;
  config.allow_soft_placement = wire.allow_soft_placement;
  config.auto_place = wire.auto_place;
  config.fuse_ops = wire.fuse_ops;
  // An unknown value (a newer client) stays off rather than guessing.
  config.mixed_precision = wire.mixed_precision == 1   ? SessionConfig::MixedPrecision::kBfloat16
                           : wire.mixed_precision == 2 ? SessionConfig::MixedPrecision::kFloat16
                                                       : SessionConfig::MixedPrecision::kOff;
  config.mixed_precision_on_any_cpu = wire.mixed_precision_on_any_cpu;
  config.group_updates_on = wire.group_updates_on;
  config.step_timeout_ms = wire.step_timeout_ms;
  config.inter_op_parallelism = wire.inter_op_parallelism;
  config.capture_steps = wire.capture_steps;
  return config;
}

}  // namespace sluice
