// NCCL all-reduce for GPU members of a collective (runtime/collective).
//
//   // The GPU backend (ops/gpu/gpu_backend.h) provides them; a
//   // CollectiveExecutor handed that backend runs every all-reduce whose
//   // members are all GPUs with NCCL instead of the CPU ring
//   // (communication_hint "auto" or "nccl"; "ring" keeps the CPU ring).
//
// Two implementations, for "GPU":
//  - Local (the GPU backend's LocalAllReduce): every member is a GPU of this process.
//    One communicator per ordered list of GPU ordinals, made once with
//    ncclCommInitAll and kept for the process; each all-reduce is one
//    ncclGroupStart / ncclAllReduce per GPU on its compute stream (its
//    Activate()'d device) / ncclGroupEnd, under a process-wide lock so that
//    every GPU sees the launches of all groups in the same order. Outputs are
//    fresh memory from each device's allocator; `done` runs as soon as the
//    work is enqueued (later kernels on the same streams are ordered after
//    it; asynchronous NCCL/CUDA errors surface in the step's device Sync).
//  - Cross-process (its CrossProcessAllReduce): the members are GPUs in
//    several processes. Rank 0's ncclGetUniqueId travels to the others
//    through the collective transport (Thrift between workers), each member
//    makes its communicator with ncclCommInitRank once per group, and every
//    all-reduce is launched in the order rank 0 chose
//    (runtime/gpu/internal/nccl_peer_comm.h); `done` runs when the GPU finished
//    it, and a watchdog turns a dead peer into DeadlineExceeded instead of a
//    hang. A dtype NCCL lacks leaves the collective to the CPU ring.
//
// Reductions: kSum is ncclSum; kMean is ncclAvg (NCCL 2.10 and later).
// Dtypes: float, half, bfloat16, double, int64 (and int32 when it is in
// device memory; collective ops keep int32 on the host, so it takes the
// ring). Inputs must be in device memory of the member's GPU.
//
// Members NCCL cannot serve are declined with Unimplemented: members that
// share a GPU (logical GPUs of one card, runtime/gpu/logical_gpus.h), a
// dtype or a reduction NCCL lacks. The collective executor then reduces
// them in host memory (runtime/collective/local_join.h).
//
// Errors name the node, group and rank (params.DebugString()) and the NCCL
// error (ncclGetErrorString, ncclGetLastError): InvalidArgument for members
// that are not GpuDevices or hold host memory; Unavailable for NCCL
// system/remote errors; Internal otherwise.
//
// Built without NCCL (or without CUDA) registration does nothing,
// NcclAvailable() is false and the two functions fail with Unimplemented.
// Thread-safe.
#ifndef SLUICE_RUNTIME_GPU_NCCL_COLLECTIVES_H_
#define SLUICE_RUNTIME_GPU_NCCL_COLLECTIVES_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/collective/collective.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

namespace sluice {

// Whether this build has NCCL.
bool NcclAvailable();

// The local implementation (a LocalAllReduceImpl): devices[i] is member i's
// GpuDevice and inputs[i] its input; `done` once, with the outputs in member
// order. Also for benchmarks and tests.
void NcclLocalAllReduce(const CollectiveParams& params, const std::vector<Device*>& devices,
                        const std::vector<Tensor>& inputs,
                        std::function<void(absl::StatusOr<std::vector<Tensor>>)> done);

// The cross-process implementation (a CrossProcessAllReduceImpl; see
// runtime/collective/collective_executor.h for the contract).
absl::Status NcclCrossProcessAllReduce(const CollectiveParams& params, const std::string& execution,
                                       Device* device, const Tensor& input,
                                       CollectiveTransport* transport,
                                       std::function<void(absl::StatusOr<Tensor>)> done);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_NCCL_COLLECTIVES_H_
