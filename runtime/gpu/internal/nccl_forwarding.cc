// The NCCL functions Sluice calls, defined here so that no binary links
// libnccl: each forwards to the real function, found in the library opened
// on first use (cublas_library.h says why). Without the library each returns
// ncclSystemError; LoadNccl() has the reason.
//
// A new NCCL call in Sluice needs its forwarder here (the link fails
// without one, naming the function).
#include <nccl.h>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/nccl_library.h"
#include "runtime/gpu/internal/lazy_library.h"

namespace sluice {
namespace {

gpu_internal::LazyLibrary& Nccl() {
  static auto* library = new gpu_internal::LazyLibrary(absl::StrCat("libnccl.so.", NCCL_MAJOR),
                                                       SLUICE_CUDA_LIB_DIR);
  return *library;
}

template <typename Fn>
Fn* Find(const char* name) {
  return Nccl().Symbol<Fn>(name);
}

constexpr ncclResult_t kMissing = ncclSystemError;

}  // namespace

absl::Status LoadNccl() { return Nccl().Load(); }
bool NcclLoaded() { return Nccl().loaded(); }

}  // namespace sluice

using sluice::Find;
using sluice::kMissing;

extern "C" {

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  static auto* const real = Find<decltype(ncclGetUniqueId)>("ncclGetUniqueId");
  return real == nullptr ? kMissing : real(id);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t* config) {
  static auto* const real = Find<decltype(ncclCommInitRankConfig)>("ncclCommInitRankConfig");
  return real == nullptr ? kMissing : real(comm, nranks, id, rank, config);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devices) {
  static auto* const real = Find<decltype(ncclCommInitAll)>("ncclCommInitAll");
  return real == nullptr ? kMissing : real(comms, ndev, devices);
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  static auto* const real = Find<decltype(ncclCommAbort)>("ncclCommAbort");
  return real == nullptr ? kMissing : real(comm);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  static auto* const real = Find<decltype(ncclCommGetAsyncError)>("ncclCommGetAsyncError");
  return real == nullptr ? kMissing : real(comm, async_error);
}

const char* ncclGetErrorString(ncclResult_t result) {
  static auto* const real = Find<decltype(ncclGetErrorString)>("ncclGetErrorString");
  return real == nullptr ? "the NCCL library could not be loaded" : real(result);
}

const char* ncclGetLastError(ncclComm_t comm) {
  static auto* const real = Find<decltype(ncclGetLastError)>("ncclGetLastError");
  return real == nullptr ? "the NCCL library could not be loaded" : real(comm);
}

ncclResult_t ncclAllReduce(const void* send, void* receive, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  static auto* const real = Find<decltype(ncclAllReduce)>("ncclAllReduce");
  return real == nullptr ? kMissing : real(send, receive, count, type, op, comm, stream);
}

ncclResult_t ncclGroupStart() {
  static auto* const real = Find<decltype(ncclGroupStart)>("ncclGroupStart");
  return real == nullptr ? kMissing : real();
}

ncclResult_t ncclGroupEnd() {
  static auto* const real = Find<decltype(ncclGroupEnd)>("ncclGroupEnd");
  return real == nullptr ? kMissing : real();
}

}  // extern "C"
