// CollectiveMailbox: the in-process CollectiveTransport, and the receiving
// half of the remote one. Values sent to a key wait until received; a Recv
// waits until the value arrives, its deadline passes, or its prefix is
// aborted. Keys are "<to_device>|<key>" internally, so members of one
// process keep separate boxes.
//
//   CollectiveMailbox box;
//   box.Send("/job:localhost/replica:0/task:0/device:CPU:1", "g1/i7/n0/rs/s0/c0", t, 1000, done);
//   box.Recv(from, to, "g1/i7/n0/rs/s0/c0", 1000, [](absl::StatusOr<Tensor> v) { ... });
//
// Deliver() is what a server calls when a remote peer pushes a value.
// Deadlines are enforced by one timer thread. Thread-safe.
//
// Abort notices: a member whose execution failed tells the member waiting
// on it by delivering AbortNotice(status) under AbortKey(prefix); Deliver
// then aborts the prefix here, so that member fails at once with the root
// cause instead of at its deadline naming the messenger.
//
// Nothing is kept forever: aborted prefixes, and values nobody received,
// are forgotten `retention` after they arrived (the timer thread sweeps).
// Nor without bound: values nobody has received yet are capped in number
// and bytes (MailboxLimits); a delivery past either cap is refused with
// ResourceExhausted, which goes back to the sender.
//
// Landings: a receiver that knows where a value should end up registers
// that memory for its key (ExpectInto); the server reading a peer's push
// asks for it (TakeLanding) and reads the bytes straight into it, then
// delivers the tensor that shares it. A landing is forgotten when its key
// is delivered or aborted, or by DropLanding; it keeps its buffer alive
// until then.
#ifndef SLUICE_RUNTIME_COLLECTIVE_MAILBOX_H_
#define SLUICE_RUNTIME_COLLECTIVE_MAILBOX_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "runtime/collective/collective.h"

namespace sluice {

// Caps on values delivered and not yet received. The defaults hold a
// collective's chunks in flight for models of several GiB while a slow
// member catches up; a peer (or bug) sending keys nobody receives hits them.
struct MailboxLimits {
  int64_t max_values = int64_t{1} << 16;
  int64_t max_bytes = int64_t{4} << 30;
};

class CollectiveMailbox : public CollectiveTransport {
 public:
  // Longer than any collective's timeout: a value may wait that long for
  // its receiver.
  static constexpr absl::Duration kDefaultRetention = absl::Hours(1);
  // At most this many aborted prefixes are remembered (the oldest go first);
  // every receive checks them.
  static constexpr size_t kMaxAbortedPrefixes = 4096;

  explicit CollectiveMailbox(absl::Duration retention = kDefaultRetention,
                             MailboxLimits limits = {});
  ~CollectiveMailbox() override;  // fails pending Recvs with Cancelled

  // The key and value that, delivered to a member, abort `key_prefix` there
  // with `status`.
  static std::string AbortKey(const std::string& key_prefix);
  static Tensor AbortNotice(const absl::Status& status);

  // A value for member `to_device` under `key` (from this process or a
  // peer). FailedPrecondition if that key already holds a value.
  // `sender`: the task that sent it, as authenticated by the transport (""
  // when unknown: this process, or a plaintext connection). A value from a
  // known sender is received only by a Recv whose `from_device` is on that
  // task; any other gets PermissionDenied naming both (injected values fail
  // the collective instead of entering it).
  absl::Status Deliver(const std::string& to_device, const std::string& key, Tensor value,
                       const std::string& sender = "");

  // CollectiveTransport: Send delivers locally (every member is in this
  // process).
  void Send(const std::string& to_device, const std::string& key, const Tensor& value,
            int64_t timeout_ms, std::function<void(absl::Status)> done) override;
  void Recv(const std::string& from_device, const std::string& to_device, const std::string& key,
            int64_t timeout_ms, std::function<void(absl::StatusOr<Tensor>)> done) override;
  void Abort(const std::string& key_prefix, const absl::Status& status) override;

  // Registers `landing` (a host tensor the receiver leaves alone until its
  // Recv ends) as where the value for `to_device` under `key` may be read
  // into; nothing when that value is already here or the key is aborted.
  void ExpectInto(const std::string& to_device, const std::string& key, Tensor landing);
  // The landing registered for the key, unregistered; an uninitialized
  // tensor when there is none.
  Tensor TakeLanding(const std::string& to_device, const std::string& key);
  // Forgets the key's landing, if any (its receive failed).
  void DropLanding(const std::string& to_device, const std::string& key);

  // Values delivered and not yet received (tests, leak checks), and their
  // bytes.
  size_t PendingValues() const;
  int64_t PendingBytes() const;
  // Landings registered and not yet taken or forgotten (tests, leak checks).
  size_t PendingLandings() const;
  // Landings handed out by TakeLanding so far.
  int64_t LandingsTaken() const;
  // Aborted prefixes remembered (tests, leak checks).
  size_t AbortedPrefixes() const;

 private:
  struct Waiter;
  struct Stored {
    Tensor value;
    absl::Time at;
    std::string sender;
  };
  struct Aborted {
    absl::Status status;
    absl::Time at;
  };
  void TimerLoop();
  // Forgets what has been kept longer than retention_.
  void Sweep(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Unregisters and returns the landing of `box_key` (uninitialized: none).
  Tensor EraseLanding(const std::string& box_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Erases a stored value, keeping stored_bytes_.
  void EraseValue(absl::flat_hash_map<std::string, Stored>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The status of the first aborted prefix of `key`; OK when none.
  absl::Status AbortedStatus(absl::string_view key) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const absl::Duration retention_;
  const MailboxLimits limits_;
  mutable absl::Mutex mu_;
  absl::CondVar timer_cv_;  // signalled on an earlier deadline and on stop
  absl::flat_hash_map<std::string, Stored> values_ ABSL_GUARDED_BY(mu_);
  int64_t stored_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // of values_
  absl::flat_hash_map<std::string, std::shared_ptr<Waiter>> waiters_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Tensor> landings_ ABSL_GUARDED_BY(mu_);
  int64_t landings_taken_ ABSL_GUARDED_BY(mu_) = 0;
  // Deadline -> waiter key, for the timer thread.
  std::multimap<absl::Time, std::string> deadlines_ ABSL_GUARDED_BY(mu_);
  // Aborted key prefixes, why and when.
  std::map<std::string, Aborted> aborted_ ABSL_GUARDED_BY(mu_);
  absl::Time next_sweep_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread timer_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_COLLECTIVE_MAILBOX_H_
