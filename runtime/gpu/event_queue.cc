#include "runtime/gpu/event_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/cuda_status.h"
#include "runtime/gpu/scoped_device.h"

namespace sluice {

EventQueue::EventQueue(int device_ordinal, ThreadPool* pool)
    : ordinal_(device_ordinal), pool_(pool) {
  thread_ = std::thread([this] { Loop(); });
}

void EventQueue::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();  // the loop drains every pending event first
}

EventQueue::~EventQueue() {
  Stop();
  std::vector<cudaEvent_t> events;
  {
    absl::MutexLock lock(&mu_);
    events.swap(free_events_);
  }
  if (!events.empty()) {
    ScopedDevice on(ordinal_);
    if (on.ok()) {
      for (cudaEvent_t e : events) (void)cudaEventDestroy(e);
    }
    (void)cudaGetLastError();  // leave no error behind on the caller's thread
  }
}

void EventQueue::ThenExecute(cudaStream_t stream, std::function<void(absl::Status)> done) {
  cudaEvent_t event = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (!free_events_.empty()) {
      event = free_events_.back();
      free_events_.pop_back();
    }
  }
  // Events belong to the device they are created on and can only be recorded
  // on that device's streams. A caller on another device gets it back on
  // return (GpuDevice's callers have made this one current already).
  ScopedDevice on(ordinal_);
  absl::Status status =
      CudaStatus(on.error(), absl::StrCat("selecting GPU ordinal ", ordinal_));
  if (status.ok() && event == nullptr) {
    status = CudaStatus(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                        absl::StrCat("creating an event on GPU ordinal ", ordinal_));
    if (!status.ok()) event = nullptr;
  }
  if (status.ok()) {
    status = CudaStatus(cudaEventRecord(event, stream),
                        absl::StrCat("recording an event on GPU ordinal ", ordinal_));
    if (!status.ok()) {
      (void)cudaEventDestroy(event);
      event = nullptr;
    }
  }
  if (!status.ok()) {
    // Callbacks keep buffers alive until a copy is done with them (a copy's
    // source, a staging buffer): without an event, wait for the stream here
    // rather than release them under a copy still in flight.
    (void)cudaStreamSynchronize(stream);
    (void)cudaGetLastError();
    if (event != nullptr) {
      absl::MutexLock lock(&mu_);
      free_events_.push_back(event);
    }
    pool_->Schedule([done = std::move(done), status] { done(status); });
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (!loop_done_) {
      pending_.push_back(Pending{event, std::move(done)});
      return;
    }
  }
  // The loop has drained and returned (the queue is being destroyed): no one
  // else would ever wait for this event.
  const cudaError_t code = cudaEventSynchronize(event);
  status = CudaStatus(code, absl::StrCat("waiting for work on GPU ordinal ", ordinal_));
  (void)cudaEventDestroy(event);
  (void)cudaGetLastError();
  pool_->Schedule([done = std::move(done), status = std::move(status)] { done(status); });
}

void EventQueue::Loop() {
  // Not needed to wait for an event, but keeps this thread on its device for
  // anything else the driver does on its behalf.
  if (cudaSetDevice(ordinal_) != cudaSuccess) (void)cudaGetLastError();
  for (;;) {
    Pending p;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !pending_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (pending_.empty()) {  // stopping, and every event was waited for
        loop_done_ = true;
        return;
      }
      p = std::move(pending_.front());
      pending_.pop_front();
    }
    const cudaError_t code = cudaEventSynchronize(p.event);
    absl::Status status =
        CudaStatus(code, absl::StrCat("waiting for work on GPU ordinal ", ordinal_));
    if (code == cudaSuccess) {
      absl::MutexLock lock(&mu_);
      free_events_.push_back(p.event);
    } else {
      (void)cudaEventDestroy(p.event);
      (void)cudaGetLastError();
    }
    pool_->Schedule([done = std::move(p.done), status = std::move(status)] { done(status); });
  }
}

}  // namespace sluice
