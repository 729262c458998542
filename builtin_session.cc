#include "builtin_session.h"

#include "ops/builtins.h"

namespace sluice {

SessionConfig BuiltinSessionConfig() { return WithBuiltinRegistries(SessionConfig()); }

SessionConfig WithBuiltinRegistries(SessionConfig config) {
  if (config.ops == nullptr) config.ops = BuiltinOps();
  if (config.kernels == nullptr) config.kernels = BuiltinKernels();
  if (config.backends == nullptr) config.backends = BuiltinBackends();
  return config;
}

}  // namespace sluice
