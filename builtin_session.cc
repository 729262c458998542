#include "builtin_session.h"

#include "ops/builtins.h"

namespace sluice {

SessionConfig BuiltinSessionConfig() {
  SessionConfig config;
  config.ops = BuiltinOps();
  config.kernels = BuiltinKernels();
  config.backends = BuiltinBackends();
  return config;
}

}  // namespace sluice
