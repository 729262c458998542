#include "tests/distributed/test_credentials.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/rpc/job_credentials.h"
#include "distributed/transport_security.h"

namespace sluice {

const std::string& UseTestJobCredentials() {
  static const std::string* dir = [] {
    const char* base = std::getenv("TEST_TMPDIR");
    auto* d = new std::string(
        absl::StrCat(base != nullptr ? base : "/tmp", "/job-credentials-", getpid()));
    std::vector<std::string> identities = {kClientIdentity};
    for (int t = 0; t < 4; ++t) identities.push_back(TaskName("ps", t));
    for (int t = 0; t < 8; ++t) identities.push_back(TaskName("worker", t));
    absl::Status made = WriteJobCredentials(*d, identities);
    if (!made.ok()) {
      std::fprintf(stderr, "test credentials: %s\n", std::string(made.message()).c_str());
      std::abort();
    }
    setenv(kTlsDirEnv, d->c_str(), 1);
    unsetenv(kInsecureEnv);
    return d;
  }();
  return *dir;
}

}  // namespace sluice
