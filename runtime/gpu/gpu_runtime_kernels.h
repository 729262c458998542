// The runtime's own kernels on GPU devices: _Send, _Recv (transfers between
// partitions) and _Arg, _Retval (feeds and fetches).
//
//   RegisterGpuRuntimeKernels(&kernels);   // ops/builtins, beside the CPU ones
//
// _Send hands its input to the step's rendezvous once the GPU work that
// writes it is done. A tensor bound for a GPU of this process goes as it is
// (the receiving GPU copies it from its peer); one bound anywhere else (a
// CPU, another process) is first copied to pinned host memory, so it leaves
// the GPU exactly once. The kernel is asynchronous: its done is called (on
// the device's pool) after the rendezvous Send, so no thread waits for the
// GPU and the step's rendezvous outlives the hand-over; a copy error is the
// kernel's error, which fails the step and aborts its rendezvous.
//
// _Recv puts what arrives into this GPU's memory: host tensors are copied in
// (CopyFromHost), another GPU's tensors copied from the peer (CopyFromPeer).
// DT_INT32 lives in host memory on GPUs (HostMemory("tensor"), TensorFlow's
// convention for shape arithmetic), for both kernels. _Arg and _Retval keep
// their values in host memory; the executor moves them.
//
// Without CUDA the function registers nothing. Thread-safe.
#ifndef SLUICE_RUNTIME_GPU_GPU_RUNTIME_KERNELS_H_
#define SLUICE_RUNTIME_GPU_GPU_RUNTIME_KERNELS_H_

#include "runtime/kernel_registry.h"

namespace sluice {

void RegisterGpuRuntimeKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_GPU_RUNTIME_KERNELS_H_
