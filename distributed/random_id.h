// Unguessable identifiers for the handles a server gives out (graph and
// session handles): 128 bits from the kernel's CSPRNG (getrandom(2)), as 32
// hex digits. A handle is then a capability: a peer that did not receive
// it cannot name another client's graph or session.
//
//   std::string handle = absl::StrCat("graph/", RandomId128());
//
// Thread-safe.
#ifndef SLUICE_DISTRIBUTED_RANDOM_ID_H_
#define SLUICE_DISTRIBUTED_RANDOM_ID_H_

#include <string>

namespace sluice {

// 32 lowercase hex digits. Aborts the process only if the kernel cannot
// give random bytes at all (no fallback to a guessable source).
std::string RandomId128();

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RANDOM_ID_H_
