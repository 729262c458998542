// Per-node execution statistics of a step, and their Chrome trace export
// (load the JSON in chrome://tracing or Perfetto).
//
//   StepStatsCollector collector;          // handed to executors via Args
//   ... run ...
//   StepStats stats = collector.Finish();
//   std::string json = ToChromeTraceJson(stats);
//
// Thread-safe collector.
#ifndef SLUICE_RUNTIME_STEP_STATS_H_
#define SLUICE_RUNTIME_STEP_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sluice {

struct NodeExecStats {
  std::string node_name;
  std::string op;
  std::string device;
  int64_t start_us = 0;  // since the step began
  int64_t end_us = 0;
  int64_t thread_id = 0;
  int64_t output_bytes = 0;
  // Inputs the executor copied between host and device memory before the
  // node ran (an argument the kernel wants in the other memory).
  int input_copies = 0;
  // A _Send or _Recv names its transfer (the rendezvous key), so the trace
  // draws an arrow from the send to the matching receive.
  std::string flow_key;
  bool flow_is_send = false;
};

struct StepStats {
  std::vector<NodeExecStats> nodes;
};

class StepStatsCollector {
 public:
  StepStatsCollector();
  int64_t NowMicros() const;  // since construction
  void Record(NodeExecStats stats);
  StepStats Finish();

 private:
  const int64_t origin_ns_;
  absl::Mutex mu_;
  StepStats stats_ ABSL_GUARDED_BY(mu_);
};

// One "X" (complete) event per node; one process (track group) per device,
// named by the device, with one track per thread; a flow arrow ("s"/"f"
// events) from each _Send to its _Recv.
std::string ToChromeTraceJson(const StepStats& stats);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STEP_STATS_H_
