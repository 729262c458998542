// Job credentials: a CA made for one job and a certificate per identity
// (each task, and a "client" for processes outside the cluster), written as
// the files TlsContext::Load reads (distributed/rpc/tls_context.h).
//
//   std::vector<std::string> names = {"/job:ps/replica:0/task:0", "client"};
//   RETURN_IF_ERROR(WriteJobCredentials("/tmp/job/tls", names));
//   // -> ca.crt, ps-0.crt, ps-0.key, client.crt, client.key (0600, dir 0700)
//
// Generated with OpenSSL's library: ECDSA P-256 keys, SHA-256 signatures,
// the identity as the certificate's common name (no subjectAltName: tasks
// are known by name, not by address, and move between hosts). The CA's
// private key is never written: nobody can add an identity to a running
// job; a new job gets a new CA.
#ifndef SLUICE_DISTRIBUTED_RPC_JOB_CREDENTIALS_H_
#define SLUICE_DISTRIBUTED_RPC_JOB_CREDENTIALS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace sluice {

// The identity a process outside the cluster uses (tools, remote sessions).
inline constexpr char kClientIdentity[] = "client";

// The files of a job's credentials, by file name ("ca.crt", "ps-0.key", ...),
// PEM text. InvalidArgument for an empty or repeated identity; Internal when
// OpenSSL fails.
absl::StatusOr<std::map<std::string, std::string>> MakeJobCredentials(
    const std::vector<std::string>& identities, absl::Duration validity = absl::Hours(24 * 30));

// MakeJobCredentials written into `dir` (created 0700 when missing), each
// file 0600.
absl::Status WriteJobCredentials(const std::string& dir, const std::vector<std::string>& identities,
                                 absl::Duration validity = absl::Hours(24 * 30));

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_JOB_CREDENTIALS_H_
