#include "distributed/rpc/session_config_wire.h"

namespace sluice {

rpc::SessionConfig SessionConfigToWire(const SessionConfig& config) {
  rpc::SessionConfig wire;
  wire.default_device = config.default_device;
  wire.allow_soft_placement = config.allow_soft_placement;
  wire.auto_place = config.auto_place;
  wire.fuse_ops = config.fuse_ops;
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
  config.step_timeout_ms = wire.step_timeout_ms;
  config.inter_op_parallelism = wire.inter_op_parallelism;
  config.capture_steps = wire.capture_steps;
  return config;
}

}  // namespace sluice
