// Collectives: what a collective op asks for (CollectiveParams) and how
// members exchange tensors (CollectiveTransport).
//
// A collective runs over a group of devices, possibly in several processes.
// Every member runs the same kind of collective with the same group_key,
// instance_key and group_devices; its rank is its device's index in
// group_devices. Several collectives may be in flight in one step: they are
// told apart by instance_key. The n-th execution of an instance on a member
// meets the n-th execution on every other member (members count their own
// executions), so between-graph replicas whose step ids differ still meet.
//
//   CollectiveParams p;
//   p.kind = CollectiveKind::kAllReduce;  p.reduce_op = ReduceOp::kMean;
//   p.group_key = 1;  p.instance_key = 7;
//   p.group_devices = {"/job:worker/replica:0/task:0/device:CPU:0",
//                      "/job:worker/replica:0/task:1/device:CPU:0"};
//   p.rank = 0;
//
// Thread-safety: CollectiveParams is a value; transports are thread-safe.
#ifndef SLUICE_RUNTIME_COLLECTIVE_COLLECTIVE_H_
#define SLUICE_RUNTIME_COLLECTIVE_COLLECTIVE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/tensor.h"

namespace sluice {

enum class CollectiveKind { kAllReduce, kBroadcast, kAllGather };
enum class ReduceOp { kSum, kMean };  // kMean: the sum divided by the group size

inline constexpr int64_t kDefaultCollectiveTimeoutMs = 60000;

struct CollectiveParams {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  ReduceOp reduce_op = ReduceOp::kSum;
  int64_t group_key = 0;
  int64_t instance_key = 0;
  // Full device names of the members, in rank order.
  std::vector<std::string> group_devices;
  int rank = 0;         // this member
  int source_rank = 0;  // kBroadcast: the member whose value everyone gets
  // How long a member waits for a peer before failing with an error naming
  // it; 0: kDefaultCollectiveTimeoutMs.
  int64_t timeout_ms = 0;
  // Ring pipelining: the bytes of one message; 0: the executor's default.
  int64_t chunk_bytes = 0;
  // Ring all-reduce / all-gather: about how many bytes of chunks a member
  // has in flight at once (at least 4 chunks); 0: 32 MiB.
  int64_t max_bytes_in_flight = 0;
  // "auto", "ring" (the CPU ring even for GPUs) or "nccl".
  std::string communication_hint = "auto";
  std::string node_name;  // for errors

  int group_size() const { return static_cast<int>(group_devices.size()); }
  // InvalidArgument naming the node: empty group, rank or source out of
  // range, a device listed twice.
  absl::Status Validate() const;
  // "node 'x' (all-reduce, group 1, instance 7, rank 0 of 2)"
  std::string DebugString() const;
};

// Moves tensors between members. Messages are addressed by (device, key)
// and may arrive before the receiver asks; each key is sent once.
class CollectiveTransport {
 public:
  virtual ~CollectiveTransport() = default;

  // Delivers `value` to member device `to_device` under `key`. `done` once
  // the value has been handed over (to the peer's mailbox, for a remote peer);
  // Unavailable or DeadlineExceeded naming the peer's task if it is not
  // reachable within `timeout_ms`. `value` is host memory.
  virtual void Send(const std::string& to_device, const std::string& key, const Tensor& value,
                    int64_t timeout_ms, std::function<void(absl::Status)> done) = 0;
  // Calls `done` with the value sent to `to_device` (a member in this
  // process) under `key` by `from_device`; DeadlineExceeded naming
  // from_device after `timeout_ms`, or sooner Unavailable when the
  // transport learns the sender's process is gone.
  virtual void Recv(const std::string& from_device, const std::string& to_device,
                    const std::string& key, int64_t timeout_ms,
                    std::function<void(absl::StatusOr<Tensor>)> done) = 0;
  // Recv, and where the transport can, the value's bytes are written
  // straight into `landing` (host memory of the dtype and element count the
  // caller expects, left alone by the caller until `done`): `done` then gets
  // a tensor sharing landing's buffer (compare raw_data()). Saves the copy
  // out of the transport's receive buffer. Only values pushed from another
  // process land; others, and a value of another size, arrive as Recv gives
  // them. The default ignores `landing`.
  virtual void RecvInto(const std::string& from_device, const std::string& to_device,
                        const std::string& key, Tensor landing, int64_t timeout_ms,
                        std::function<void(absl::StatusOr<Tensor>)> done) {
    Recv(from_device, to_device, key, timeout_ms, std::move(done));
  }
  // Fails every pending and later Recv whose key starts with `key_prefix`
  // with `status`, and drops values already delivered under it.
  virtual void Abort(const std::string& key_prefix, const absl::Status& status) = 0;
  // Tells member `to_device`, which may be waiting on this one, that the
  // execution under `key_prefix` failed here with `status`: it fails at once
  // with that root cause instead of at its deadline. Best effort, within
  // `timeout_ms`. The default does nothing: a transport whose members are
  // all in this process reaches them through Abort.
  virtual void TellAborted(const std::string& to_device, const std::string& key_prefix,
                           const absl::Status& status, int64_t timeout_ms) {}
  // True when Send hands `to_device` a copy of the value's bytes (a member
  // in another process), never the buffer itself: the sender may then send
  // a view of memory that it leaves unchanged until `done`, instead of a
  // fresh tensor the receiver would own.
  virtual bool CopiesOnSend(const std::string& to_device) const { return false; }
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_COLLECTIVE_COLLECTIVE_H_
