// EventQueue: "call me when the GPU work queued so far on this stream is
// done", without a thread per wait. Each ThenExecute records a CUDA event on
// the stream; one thread waits for the events in the order they were
// recorded and hands each callback (with the event's status) to a pool.
//
//   EventQueue events(/*ordinal=*/0, &pool);
//   events.ThenExecute(stream, [](absl::Status s) { ... });  // later, on `pool`
//
// Events are pooled and reused. The destructor waits for the pending events
// and runs their callbacks; a callback queued after that (by a callback run
// during shutdown) is waited for by its caller. When no event can be
// recorded, the caller waits for the stream before `done` gets the error, so
// `done` never runs before the work it was queued behind. Thread-safe.
#ifndef SLUICE_RUNTIME_GPU_EVENT_QUEUE_H_
#define SLUICE_RUNTIME_GPU_EVENT_QUEUE_H_

#include <cuda_runtime_api.h>

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "runtime/thread_pool.h"

namespace sluice {

class EventQueue {
 public:
  // Callbacks run on `pool`, which must outlive the queue.
  EventQueue(int device_ordinal, ThreadPool* pool);
  ~EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // `done` gets OK, or the CUDA error of recording or waiting.
  void ThenExecute(cudaStream_t stream, std::function<void(absl::Status)> done);
  // Waits for the pending events and hands their callbacks to the pool;
  // later ThenExecute calls wait for their own event. Idempotent; the
  // destructor calls it. Not concurrently with itself.
  void Stop();

 private:
  struct Pending {
    cudaEvent_t event;
    std::function<void(absl::Status)> done;
  };
  void Loop();

  const int ordinal_;
  ThreadPool* pool_;
  absl::Mutex mu_;
  std::deque<Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<cudaEvent_t> free_events_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Set by Loop as it returns: later ThenExecute calls (a callback run while
  // the queue shuts down) wait for their event themselves.
  bool loop_done_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_EVENT_QUEUE_H_
