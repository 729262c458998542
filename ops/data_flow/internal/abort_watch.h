// AbortWatch: cancels a queue request (ops/data_flow/queue.h) when the
// step's rendezvous is aborted (a RunOptions deadline, a failed partition),
// so that a kernel waiting on a queue ends with the abort's status. Used by
// the queue kernels and the reader kernels (ops/io/reader_kernels.cc).
//
//   std::shared_ptr<AbortWatch> watch = AbortWatch::Watch(ctx);  // before the request
//   watch->Arm(queue->Dequeue(1, done));  // again for each later request
//
// Watch() registers before the request is made (the request may complete,
// and the kernel's context go away, inside Enqueue/Dequeue); Arm() hands
// over the request's cancel function, running it at once if the abort came
// first. Arming again replaces the cancel function (a finished request's is
// a no-op). Without a step rendezvous nothing can abort the step and the
// watch never fires. Thread-safe; the rendezvous's callback holds the watch.
#ifndef SLUICE_OPS_DATA_FLOW_INTERNAL_ABORT_WATCH_H_
#define SLUICE_OPS_DATA_FLOW_INTERNAL_ABORT_WATCH_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/data_flow/queue.h"
#include "runtime/kernel.h"
#include "runtime/rendezvous.h"

namespace sluice {
namespace internal {

class AbortWatch {
 public:
  static std::shared_ptr<AbortWatch> Watch(OpKernelContext* ctx) {
    auto watch = std::make_shared<AbortWatch>();
    Rendezvous* r = ctx->rendezvous();
    if (r == nullptr) return watch;  // nothing can abort this step
    // A pending receive of a key nobody sends: called on abort, or with
    // Cancelled when the rendezvous goes away after the step.
    static std::atomic<uint64_t> next{0};
    const std::string& device = ctx->device()->name();
    r->RecvAsync(Rendezvous::CreateKey(ctx->step_id(), device, 0, device,
                                       absl::StrCat("queue_abort_watch_", next.fetch_add(1))),
                 [watch](absl::Status s, Tensor) {
                   if (!s.ok()) watch->Fire(std::move(s));
                 });
    return watch;
  }

  void Arm(Queue::Cancel cancel) {
    absl::Status aborted;
    {
      absl::MutexLock lock(&mu_);
      cancel_ = cancel;
      aborted = aborted_;
    }
    if (!aborted.ok()) cancel(aborted);
  }

 private:
  void Fire(absl::Status s) {
    Queue::Cancel cancel;
    {
      absl::MutexLock lock(&mu_);
      if (cancel_ == nullptr) {
        aborted_ = s;
        return;
      }
      cancel = cancel_;
    }
    cancel(std::move(s));
  }

  absl::Mutex mu_;
  Queue::Cancel cancel_ ABSL_GUARDED_BY(mu_);
  absl::Status aborted_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_INTERNAL_ABORT_WATCH_H_
