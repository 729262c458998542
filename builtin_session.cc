#include "builtin_session.h"

#include "ops/builtins.h"

namespace sluice {

SessionOptions BuiltinSessionOptions() {
  SessionOptions options;
  options.ops = BuiltinOps();
  options.kernels = BuiltinKernels();
  options.backends = BuiltinBackends();
  return options;
}

}  // namespace sluice
