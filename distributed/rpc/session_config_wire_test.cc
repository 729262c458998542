// SessionConfig crosses the wire whole: every placement and execution knob
// set away from its default survives ToWire, Thrift's binary encoding and
// FromWire; registries and devices stay the receiving side's; defaults
// agree on both sides; and a request from a client that predates a field
// decodes to SessionConfig's default for it.
#include "distributed/rpc/session_config_wire.h"

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace sluice {
namespace {

using apache::thrift::protocol::T_BOOL;
using apache::thrift::protocol::T_I64;
using apache::thrift::protocol::T_STRING;
using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::transport::TMemoryBuffer;

// Encodes and decodes `wire` as a CreateSession request would carry it.
rpc::SessionConfig ThroughThrift(const rpc::SessionConfig& wire) {
  auto buffer = std::make_shared<TMemoryBuffer>();
  TBinaryProtocol protocol(buffer);
  wire.write(&protocol);
  rpc::SessionConfig out;
  out.read(&protocol);
  return out;
}

// Every field away from its default.
SessionConfig Unusual() {
  SessionConfig c;
  c.default_device = "/job:worker/replica:0/task:3";
  c.allow_soft_placement = !c.allow_soft_placement;
  c.auto_place = !c.auto_place;
  c.fuse_ops = !c.fuse_ops;
  c.step_timeout_ms = 1234;
  c.inter_op_parallelism = 3;
  c.capture_steps = !c.capture_steps;
  c.mixed_precision = SessionConfig::MixedPrecision::kFloat16;
  c.mixed_precision_on_any_cpu = !c.mixed_precision_on_any_cpu;
  c.group_updates_on = {"CPU", "GPU"};
  return c;
}

TEST(SessionConfigWireTest, EveryKnobRoundTrips) {
  const SessionConfig sent = Unusual();
  const SessionConfig got = SessionConfigFromWire(ThroughThrift(SessionConfigToWire(sent)), {});
  EXPECT_EQ(got.default_device, sent.default_device);
  EXPECT_EQ(got.allow_soft_placement, sent.allow_soft_placement);
  EXPECT_EQ(got.auto_place, sent.auto_place);
  EXPECT_EQ(got.fuse_ops, sent.fuse_ops);
  EXPECT_EQ(got.step_timeout_ms, sent.step_timeout_ms);
  EXPECT_EQ(got.inter_op_parallelism, sent.inter_op_parallelism);
  EXPECT_EQ(got.capture_steps, sent.capture_steps);
  EXPECT_EQ(got.mixed_precision, sent.mixed_precision);
  EXPECT_EQ(got.mixed_precision_on_any_cpu, sent.mixed_precision_on_any_cpu);
  EXPECT_EQ(got.group_updates_on, sent.group_updates_on);
  // And the wire form is a fixed point: nothing the Thrift struct holds is
  // dropped by the conversion (Thrift's operator== compares every field).
  const rpc::SessionConfig wire = SessionConfigToWire(sent);
  EXPECT_TRUE(SessionConfigToWire(SessionConfigFromWire(wire, {})) == wire);
}

TEST(SessionConfigWireTest, DefaultsAgreeOnBothSides) {
  EXPECT_TRUE(SessionConfigToWire(SessionConfig()) == rpc::SessionConfig());
  const SessionConfig from_default_wire = SessionConfigFromWire(rpc::SessionConfig(), {});
  const SessionConfig defaults;
  EXPECT_EQ(from_default_wire.allow_soft_placement, defaults.allow_soft_placement);
  EXPECT_EQ(from_default_wire.fuse_ops, defaults.fuse_ops);
  EXPECT_EQ(from_default_wire.capture_steps, defaults.capture_steps);
  EXPECT_EQ(from_default_wire.auto_place, defaults.auto_place);
  EXPECT_EQ(from_default_wire.mixed_precision, defaults.mixed_precision);
  EXPECT_EQ(from_default_wire.mixed_precision_on_any_cpu, defaults.mixed_precision_on_any_cpu);
}

TEST(SessionConfigWireTest, AnUnknownMixedPrecisionIsOff) {
  rpc::SessionConfig wire;
  wire.mixed_precision = 7;  // a newer client's kind
  EXPECT_EQ(SessionConfigFromWire(wire, {}).mixed_precision, SessionConfig::MixedPrecision::kOff);
  wire.mixed_precision = 1;
  EXPECT_EQ(SessionConfigFromWire(wire, {}).mixed_precision,
            SessionConfig::MixedPrecision::kBfloat16);
}

TEST(SessionConfigWireTest, RegistriesAndDevicesStayTheReceiversOwn) {
  SessionConfig base;
  base.ops = reinterpret_cast<const OpRegistry*>(0x10);  // never dereferenced
  base.kernels = reinterpret_cast<const KernelRegistry*>(0x20);
  base.devices.num_virtual_cpus = 2;
  SessionConfig sent = Unusual();
  sent.devices.num_virtual_cpus = 7;  // the client's own devices do not travel
  const SessionConfig got = SessionConfigFromWire(SessionConfigToWire(sent), base);
  EXPECT_EQ(got.ops, base.ops);
  EXPECT_EQ(got.kernels, base.kernels);
  EXPECT_EQ(got.backends, nullptr);
  EXPECT_EQ(got.devices.num_virtual_cpus, 2);
  EXPECT_EQ(got.fuse_ops, sent.fuse_ops);
}

TEST(SessionConfigWireTest, AnOlderClientsConfigGetsTheNewFieldsDefaults) {
  // Fields 1-3 only, as a client built before auto_place and fuse_ops
  // crossed the wire wrote them.
  auto buffer = std::make_shared<TMemoryBuffer>();
  TBinaryProtocol p(buffer);
  p.writeStructBegin("SessionConfig");
  p.writeFieldBegin("default_device", T_STRING, 1);
  p.writeString(std::string("/job:ps/replica:0/task:0"));
  p.writeFieldEnd();
  p.writeFieldBegin("allow_soft_placement", T_BOOL, 2);
  p.writeBool(true);
  p.writeFieldEnd();
  p.writeFieldBegin("step_timeout_ms", T_I64, 3);
  p.writeI64(500);
  p.writeFieldEnd();
  p.writeFieldStop();
  p.writeStructEnd();
  rpc::SessionConfig wire;
  wire.read(&p);
  const SessionConfig got = SessionConfigFromWire(wire, {});
  EXPECT_EQ(got.default_device, "/job:ps/replica:0/task:0");
  EXPECT_TRUE(got.allow_soft_placement);
  EXPECT_EQ(got.step_timeout_ms, 500);
  EXPECT_TRUE(got.fuse_ops);  // SessionConfig's default, not bool's
  EXPECT_FALSE(got.auto_place);
  EXPECT_TRUE(got.capture_steps);
  EXPECT_EQ(got.inter_op_parallelism, 0);
  EXPECT_EQ(got.mixed_precision, SessionConfig::MixedPrecision::kOff);
}

}  // namespace
}  // namespace sluice
