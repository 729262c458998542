// Rendezvous: where a _Send kernel hands a tensor to the _Recv kernel of
// another partition, matched by a key naming the step, both devices and the
// edge.
//
//   std::string key = Rendezvous::CreateKey(step, "/job:localhost/.../CPU:0", 1,
//                                           "/job:localhost/.../CPU:1", "edge_7_x:0");
//   LocalRendezvous rendezvous;                      // one per step
//   RETURN_IF_ERROR(rendezvous.Send(key, tensor));   // never blocks
//   rendezvous.RecvAsync(key, [](absl::Status s, Tensor t) { ... });
//
// Either side may come first; each key is sent once and received once.
//
// Inside a while loop a transfer happens once per iteration: the key ends
// with the frame and iteration (FrameAndIter), as TensorFlow's does, so the
// partitions of one loop on several devices or tasks meet iteration by
// iteration. A dead tensor (from an untaken branch of a cond, or the body of
// a loop in its last iteration) travels too: it is sent and received as an
// uninitialized Tensor (IsDeadValue); every live value is initialized.
// StartAbort fails every waiting and later Recv (and later Sends) with the
// given status, so one failing partition stops a step's other partitions
// instead of leaving them waiting.
//
// Thread-safe. A Rendezvous must outlive every Send/Recv made on it.
#ifndef SLUICE_RUNTIME_RENDEZVOUS_H_
#define SLUICE_RUNTIME_RENDEZVOUS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "runtime/tensor.h"

namespace sluice {

// Which execution of a node a transfer belongs to: the dynamic frame (one
// run of a while loop, named the same on every partition of the loop; 0 for
// the root frame) and its iteration.
struct FrameAndIter {
  uint64_t frame_id = 0;
  int64_t iter = 0;
};

inline bool IsDeadValue(const Tensor& t) { return !t.IsInitialized(); }

class Rendezvous {
 public:
  using DoneCallback = std::function<void(absl::Status, Tensor)>;

  virtual ~Rendezvous() = default;

  // "<step>;<src_device>;<src_incarnation hex>;<dst_device>;<tensor_name>;
  // <frame_id hex>:<iter>": unique per step, edge, destination device and
  // loop iteration.
  static std::string CreateKey(int64_t step_id, absl::string_view src_device,
                               uint64_t src_incarnation, absl::string_view dst_device,
                               absl::string_view tensor_name, FrameAndIter frame_iter = {});
  struct ParsedKey {
    int64_t step_id = 0;
    std::string src_device;
    uint64_t src_incarnation = 0;
    std::string dst_device;
    std::string tensor_name;
    FrameAndIter frame_iter;
  };
  // InvalidArgument for a string CreateKey did not make.
  static absl::StatusOr<ParsedKey> ParseKey(absl::string_view key);

  // Hands `value` over (sharing its buffer, not copying it); an
  // uninitialized `value` is a dead tensor. Errors: the key was already
  // sent, or the rendezvous was aborted.
  virtual absl::Status Send(const std::string& key, const Tensor& value) = 0;
  // Calls `done` once with the tensor, at once if it was sent already, else
  // from the Send (or StartAbort) that provides it.
  virtual void RecvAsync(const std::string& key, DoneCallback done) = 0;
  virtual void StartAbort(const absl::Status& status) = 0;
  // The status StartAbort was first called with (OK when never aborted).
  virtual absl::Status abort_status() const = 0;

  bool aborted() const { return aborted_.load(std::memory_order_acquire); }

 protected:
  std::atomic<bool> aborted_{false};
};

// The in-process rendezvous of one step: a table of keys to a sent tensor
// or a waiting receiver.
class LocalRendezvous : public Rendezvous {
 public:
  LocalRendezvous() = default;
  ~LocalRendezvous() override;
  LocalRendezvous(const LocalRendezvous&) = delete;
  LocalRendezvous& operator=(const LocalRendezvous&) = delete;

  absl::Status Send(const std::string& key, const Tensor& value) override;
  void RecvAsync(const std::string& key, DoneCallback done) override;
  void StartAbort(const absl::Status& status) override;
  absl::Status abort_status() const override;

 private:
  // A key's slot lives until the rendezvous dies (or aborts), so that a key
  // sent or received twice is an error whichever order the calls came in.
  struct Slot {
    bool sent = false;
    bool received = false;
    Tensor value;
    DoneCallback waiter;  // set when the Recv came first
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Slot> table_ ABSL_GUARDED_BY(mu_);
  absl::Status abort_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_RENDEZVOUS_H_
