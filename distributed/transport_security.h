// TransportSecurity: how a process talks to its cluster. Mutual TLS with the
// job's credentials by default; plaintext only when asked for explicitly,
// for a debug run on loopback.
//
//   TransportSecurity security = TransportSecurityFromEnv();   // as tools:launch sets it
//   security.tls_dir = "/etc/sluice/tls";                     // or --tls_dir
//   ASSIGN_OR_RETURN(std::shared_ptr<const TlsContext> tls,
//                    ResolveTransportSecurity(security, task_name, {"127.0.0.1"}));
//   // null: plaintext (--insecure, said on stderr)
//
// Thread-safe (no state).
#ifndef SLUICE_DISTRIBUTED_TRANSPORT_SECURITY_H_
#define SLUICE_DISTRIBUTED_TRANSPORT_SECURITY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/rpc/tls_context.h"

namespace sluice {

// The environment variables tools:launch sets for its tasks.
inline constexpr char kTlsDirEnv[] = "SLUICE_TLS_DIR";
inline constexpr char kInsecureEnv[] = "SLUICE_INSECURE";

struct TransportSecurity {
  // The job's credentials (tls_context.h): ca.crt and this process's
  // certificate and key.
  std::string tls_dir;
  // Plaintext, anyone who reaches a port can run graphs: loopback only.
  bool insecure = false;

  bool unset() const { return tls_dir.empty() && !insecure; }
};

// SLUICE_TLS_DIR, and SLUICE_INSECURE=1.
TransportSecurity TransportSecurityFromEnv();

// The TLS context of `identity` (a task name, or kClientIdentity), or null
// for an insecure run, after a warning line on stderr. Errors:
// FailedPrecondition when neither TLS nor insecure is chosen (saying how to
// choose); InvalidArgument for insecure with a host in `hosts` that is not
// a loopback address; Load's errors for the credentials.
absl::StatusOr<std::shared_ptr<const TlsContext>> ResolveTransportSecurity(
    const TransportSecurity& security, const std::string& identity,
    const std::vector<std::string>& hosts);

// The hosts of every task of `cluster` (the addresses' host parts), where
// a process of the job connects: what an insecure run must keep on loopback.
std::vector<std::string> ClusterHosts(const ClusterSpec& cluster);

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_TRANSPORT_SECURITY_H_
