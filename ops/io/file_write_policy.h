// Where the ops of a graph may write files in this process (SaveV2 is the
// one that does). A local program's own graphs write where they like; a
// cluster server restricts every graph it runs, since a remote client chose
// them: a SaveV2 with prefix "~/.ssh/authorized_keys" must not run there.
//
//   RestrictGraphFileWrites({"/tmp/sluice", "/data/ckpt"});   // Server::Create
//   RETURN_IF_ERROR(CheckGraphFileWrite(prefix));             // in SaveV2
//
// Reads of checkpoints (RestoreV2, MergeV2Checkpoints) are fenced the same
// way once writes are: under a write root or a read root added with
// AllowGraphFileReads. The check comes before the file is touched, so a
// refused path says nothing of whether it exists.
//
// A path is allowed when its canonical form (symbolic links and "." / ".."
// resolved for the part that exists, the rest taken as written but with no
// ".." in it) lies under a root's canonical form. A root must be a
// directory of this process's user that no one else may write (else
// another user could plant a link in it that redirects a write):
// FailedPrecondition naming its owner otherwise.
//
// Process-wide, like the GPU MatMul precision: the first restriction holds
// for the process's life (a later call adds roots, never lifts it).
// Thread-safe.
#ifndef SLUICE_OPS_IO_FILE_WRITE_POLICY_H_
#define SLUICE_OPS_IO_FILE_WRITE_POLICY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace sluice {

// From now on graph ops write only under `roots` (and roots added later).
// Roots that do not exist yet are created (0700).
absl::Status RestrictGraphFileWrites(const std::vector<std::string>& roots);

// OK when unrestricted or `path` is under a root; else PermissionDenied
// naming the path and the roots.
absl::Status CheckGraphFileWrite(const std::string& path);

// Adds roots graphs may read under (besides the write roots); they must
// exist. Has no effect until writes are restricted.
absl::Status AllowGraphFileReads(const std::vector<std::string>& roots);

// OK when unrestricted or `path` is under a write or read root; else
// PermissionDenied naming the path and the roots.
absl::Status CheckGraphFileRead(const std::string& path);

// A root for this user under the shared name `base` ("/tmp/sluice"): `base`
// when it does not exist yet or is this user's; `base`-<uid> when another
// user took the name first (on a shared machine the first user to run a
// server owns /tmp/sluice, and it must not become the others' root).
std::string PrivateRoot(const std::string& base);

}  // namespace sluice

#endif  // SLUICE_OPS_IO_FILE_WRITE_POLICY_H_
