// The runtime's transfer ops, inserted by the partitioner where an edge
// crosses devices: _Send (on the producer's device) hands its input to the
// step's Rendezvous; _Recv (on the consumer's device) waits for it without
// holding a thread. Attrs, as in TensorFlow: T, tensor_name (unique per
// edge), send_device, send_device_incarnation, recv_device,
// client_terminated; _Recv also carries the shape, when known, for shape
// inference in partition graphs.
//
//   RETURN_IF_ERROR(RegisterSendRecvOps(&ops));
//   RegisterSendRecvKernels(&kernels);
//
// A step of several partitions must run with a Rendezvous (Executor::Args);
// the kernels fail with Internal otherwise. Thread-safe.
#ifndef SLUICE_RUNTIME_SENDRECV_OPS_H_
#define SLUICE_RUNTIME_SENDRECV_OPS_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

inline constexpr char kSendOp[] = "_Send";
inline constexpr char kRecvOp[] = "_Recv";

absl::Status RegisterSendRecvOps(OpRegistry* ops);
// CPU kernels (a GPU backend registers its own for GPU devices).
void RegisterSendRecvKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_SENDRECV_OPS_H_
