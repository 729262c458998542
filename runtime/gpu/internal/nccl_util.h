// Helpers shared by the NCCL collectives (runtime/gpu/nccl_collectives.cc and
// runtime/gpu/internal/nccl_peer_comm.cc): NCCL return codes as absl::Status,
// and Sluice's dtypes and reductions as NCCL's.
//
//   RETURN_IF_ERROR(internal::NcclStatus(ncclGroupEnd(), nullptr, what));
//   ASSIGN_OR_RETURN(ncclDataType_t type, internal::NcclDataType(DT_FLOAT));
//
// Thread-safety: pure functions. Internal to ops/gpu; only built with NCCL.
#ifndef SLUICE_RUNTIME_GPU_INTERNAL_NCCL_UTIL_H_
#define SLUICE_RUNTIME_GPU_INTERNAL_NCCL_UTIL_H_

#include <nccl.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/types.h"
#include "runtime/collective/collective.h"

namespace sluice {
namespace internal {

// OK for ncclSuccess. Else "<what>: NCCL <code name>: <ncclGetErrorString>
// (<ncclGetLastError(comm)>)": InvalidArgument / FailedPrecondition for
// NCCL's invalid argument / usage, Unavailable for system and remote errors
// (a peer or the network), Internal otherwise. `comm` may be null (the
// process's last NCCL error is used then).
absl::Status NcclStatus(ncclResult_t result, ncclComm_t comm, absl::string_view what);

// float, half, bfloat16, double, int32, int64; Unimplemented for others.
absl::StatusOr<ncclDataType_t> NcclDataType(DataType dtype);

// kSum -> ncclSum, kMean -> ncclAvg (Unimplemented before NCCL 2.10).
absl::StatusOr<ncclRedOp_t> NcclReduceOp(ReduceOp op);

// Whether two of the members' GPU UUIDs (one per rank) are equal: NCCL
// cannot make a communicator over them ("Duplicate GPU detected").
bool MembersShareAGpu(const std::vector<std::string>& uuids);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_INTERNAL_NCCL_UTIL_H_
