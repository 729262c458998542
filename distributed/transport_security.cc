#include "distributed/transport_security.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distributed/rpc/socket_util.h"

namespace sluice {

TransportSecurity TransportSecurityFromEnv() {
  TransportSecurity s;
  if (const char* dir = std::getenv(kTlsDirEnv); dir != nullptr) s.tls_dir = dir;
  if (const char* insecure = std::getenv(kInsecureEnv); insecure != nullptr) {
    s.insecure = std::string(insecure) == "1" || std::string(insecure) == "true";
  }
  return s;
}

std::vector<std::string> ClusterHosts(const ClusterSpec& cluster) {
  std::vector<std::string> hosts;
  for (const std::string& job : cluster.jobs()) {
    for (int t = 0; t < cluster.num_tasks(job); ++t) {
      absl::StatusOr<std::string> address = cluster.Address(job, t);
      if (!address.ok()) continue;
      absl::StatusOr<HostPort> hp = ParseHostPort(*address);
      hosts.push_back(hp.ok() ? hp->host : *address);
    }
  }
  return hosts;
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

absl::StatusOr<std::shared_ptr<const TlsContext>> ResolveTransportSecurity(
    const TransportSecurity& security, const std::string& identity,
    const std::vector<std::string>& hosts) {
  if (!security.tls_dir.empty()) return TlsContext::Load(security.tls_dir, identity);
  if (!security.insecure) {
    return absl::FailedPreconditionError(absl::StrCat(
        identity, ": no TLS credentials. Start the job with //tools:launch (it makes them), give ",
        "--tls_dir=DIR (or ", kTlsDirEnv, "), or --insecure (", kInsecureEnv,
        "=1) for a plaintext debug run on loopback"));
  }
  for (const std::string& host : hosts) {
    if (!IsLoopbackHost(host)) {
      return absl::InvalidArgumentError(absl::StrCat(
          identity, ": --insecure is for a debug run on loopback, and ", host,
          " is not a loopback address; use TLS (//tools:launch makes the credentials)"));
    }
  }
  std::fprintf(stderr,
               "WARNING: %s runs without TLS (--insecure): any process on this machine can "
               "connect and run graphs. For a loopback debug run only.\n",
               identity.c_str());
  return std::shared_ptr<const TlsContext>();
}

}  // namespace sluice
