// SessionConfig (session/session_config.h) on the wire: the one conversion
// between it and the Thrift SessionConfig (sluice.thrift) that a client's
// CreateSession carries to a remote master. It carries the placement and
// execution groups; registries and devices stay in each process, so
// FromWire leaves `base`'s.
//
//   rpc::CreateSessionRequest req;
//   req.config = SessionConfigToWire(options.session);      // client
//   ...
//   SessionConfig config = SessionConfigFromWire(req.config, server_config);  // master
//
// A new knob that a remote master must see is added to both structs and to
// the two functions here; session_config_wire_test checks every field
// crosses.
//
// Thread-safe (pure functions).
#ifndef SLUICE_DISTRIBUTED_RPC_SESSION_CONFIG_WIRE_H_
#define SLUICE_DISTRIBUTED_RPC_SESSION_CONFIG_WIRE_H_

#include "distributed/rpc/gen-cpp/sluice_types.h"
#include "session/session_config.h"

namespace sluice {

rpc::SessionConfig SessionConfigToWire(const SessionConfig& config);

// `base` with the wire's placement and execution knobs.
SessionConfig SessionConfigFromWire(const rpc::SessionConfig& wire, const SessionConfig& base);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_SESSION_CONFIG_WIRE_H_
