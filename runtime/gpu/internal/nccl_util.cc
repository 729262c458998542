#include "runtime/gpu/internal/nccl_util.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/nccl_library.h"

namespace sluice {
namespace internal {
namespace {

const char* CodeName(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "ncclResult";
  }
}

}  // namespace

absl::Status NcclStatus(ncclResult_t result, ncclComm_t comm, absl::string_view what) {
  if (result == ncclSuccess) return absl::OkStatus();
  if (!NcclLoaded()) {
    const absl::Status load = LoadNccl();
    if (!load.ok()) return absl::Status(load.code(), absl::StrCat(what, ": ", load.message()));
  }
  std::string message = absl::StrCat(what, ": NCCL ", CodeName(result), " (", result,
                                     "): ", ncclGetErrorString(result));
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') absl::StrAppend(&message, " (", last, ")");
#endif
  switch (result) {
    case ncclInvalidArgument:
      return absl::InvalidArgumentError(message);
    case ncclInvalidUsage:
      return absl::FailedPreconditionError(message);
    case ncclSystemError:
    case ncclRemoteError:
      return absl::UnavailableError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<ncclDataType_t> NcclDataType(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
      return ncclFloat32;
    case DT_HALF:
      return ncclFloat16;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
    case DT_BFLOAT16:
      return ncclBfloat16;
#endif
    case DT_DOUBLE:
      return ncclFloat64;
    case DT_INT32:
      return ncclInt32;
    case DT_INT64:
      return ncclInt64;
    default:
      return absl::UnimplementedError(
          absl::StrCat("NCCL all-reduce of ", DataTypeName(dtype), " is not implemented"));
  }
}

absl::StatusOr<ncclRedOp_t> NcclReduceOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kMean:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
      return ncclAvg;
#else
      return absl::UnimplementedError("NCCL before 2.10 has no ncclAvg for a mean all-reduce");
#endif
  }
  return absl::InvalidArgumentError("unknown reduce op");
}

bool MembersShareAGpu(const std::vector<std::string>& uuids) {
  for (size_t i = 0; i < uuids.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (uuids[i] == uuids[j]) return true;
    }
  }
  return false;
}

}  // namespace internal
}  // namespace sluice
