// BuiltinSessionConfig(): a SessionConfig (session/session_config.h) with
// the built-in op and kernel registries and backends (ops/builtins.h) filled
// in. It sits above ops/ and session/, so that neither knows the other:
//
//   Scope root = Scope::NewRootScope(BuiltinOps());
//   ... build ...
//   ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
//                    NewSession(BuiltinSessionConfig(), *root.graph()));
//
// Thread-safe.
#ifndef SLUICE_BUILTIN_SESSION_H_
#define SLUICE_BUILTIN_SESSION_H_

#include "session/session_config.h"

namespace sluice {

SessionConfig BuiltinSessionConfig();

// `config` with each registry it leaves null (ops, kernels, backends) set to
// the built-in one: what a cluster session or a server uses by default.
SessionConfig WithBuiltinRegistries(SessionConfig config);

}  // namespace sluice

#endif  // SLUICE_BUILTIN_SESSION_H_
