// BuiltinSessionOptions(): SessionOptions with the built-in op and kernel
// registries and backends (ops/builtins.h) filled in. It sits above ops/ and
// runtime/, so that neither knows the other's half:
//
//   Scope root = Scope::NewRootScope(BuiltinOps());
//   ... build ...
//   ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
//                    NewSession(BuiltinSessionOptions(), *root.graph()));
//
// Thread-safe.
#ifndef SLUICE_BUILTIN_SESSION_H_
#define SLUICE_BUILTIN_SESSION_H_

#include "runtime/session.h"

namespace sluice {

SessionOptions BuiltinSessionOptions();

}  // namespace sluice

#endif  // SLUICE_BUILTIN_SESSION_H_
