// RunRing (internal to the collective executor): one member's part of a ring
// collective over a CollectiveTransport, on host tensors.
//
//   RingOptions o{params, "g1/i7/n0", &mailbox, device->allocator()};
//   RunRing(std::move(o), host_input, [](absl::StatusOr<Tensor> out) { ... });
//
// Every member first sends its header (kind, dtype, shape) to the next rank
// and checks the previous rank's. All-reduce: reduce-scatter then all-gather
// over N segments, each cut into chunks of about chunk_bytes; every chunk
// runs its own chain of 2(N-1) steps through callbacks, so no thread blocks
// and the chunks pipeline. At reduce-scatter step s rank r sends its partial
// piece of segment (r - s) mod N to rank r+1 and adds the piece of segment
// (r - s - 1) mod N coming from rank r-1; after N-1 steps it holds segment
// (r + 1) mod N reduced (divided by N for kMean), which the all-gather steps
// pass around the ring. All-gather: the same all-gather steps over the
// members' equal blocks. Broadcast: chunks flow from the source down the
// ring to the member before it. Keys: "<prefix>/hdr", "<prefix>/rs/s<s>/c<c>",
// "<prefix>/ag/s<s>/c<c>", "<prefix>/bc/c<c>".
//
// Messages are 1-D host tensors. A received piece belongs to its receiver,
// which adds into it and passes it on; a sender never touches a tensor
// after sending it. Pieces of the input itself go out as views of the
// input's buffer when the transport copies them to the peer
// (CollectiveTransport::CopiesOnSend), else as fresh copies. All-gather and
// broadcast pieces are received into the result itself where the transport
// can (CollectiveTransport::RecvInto) when they go on as views or not at
// all: no copy out of a receive buffer.
//
// Memory: about params.max_bytes_in_flight of chunks (32 MiB by default,
// at least 4 chunks) are in flight per member: a new chain starts when one
// ends here, so the transport's buffers stay bounded whatever the tensor's
// size. The result and piece copies come from scratch_allocator when given
// (a caching pool: no page faults on reuse), else from output_allocator /
// the default CPU allocator.
//
// The first error aborts "<prefix>/" on the transport (failing the other
// local members of this execution) and is the result; later ones are
// dropped. Thread-safe; `done` runs once, on any thread.
#ifndef SLUICE_RUNTIME_COLLECTIVE_RING_H_
#define SLUICE_RUNTIME_COLLECTIVE_RING_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/allocator.h"
#include "runtime/collective/collective.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

struct RingOptions {
  // Validated, with timeout_ms and chunk_bytes > 0.
  CollectiveParams params;
  std::string prefix;                        // the execution's key prefix
  CollectiveTransport* transport = nullptr;  // borrowed
  Allocator* output_allocator = nullptr;     // host memory for the result
  // Cached host memory tried first for the result and piece copies; may be
  // null. Borrowed: must outlive the result (shared-owned allocators are
  // kept alive by their buffers).
  Allocator* scratch_allocator = nullptr;
};

// `input` is host memory; the result is host memory from scratch_allocator
// or output_allocator (a broadcast source gets `input` back). For kAllReduce the dtype must be
// one ReduceKernelsFor supports; for kAllGather the rank at least 1.
void RunRing(RingOptions options, Tensor input, std::function<void(absl::StatusOr<Tensor>)> done);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_COLLECTIVE_RING_H_
