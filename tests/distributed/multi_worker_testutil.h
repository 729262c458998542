// For the multi-process tests of examples/multi_worker_mlp: a worker-only
// cluster on fresh 127.0.0.1 ports whose tasks run the example (each with
// its SLUICE_CONFIG), and parsers for the example's output lines.
//
//   MultiWorkerCluster cluster(3);
//   for (int t = 0; t < 3; ++t) cluster.Start(t, {"--steps=100", "--checkpoint_dir=" + dir});
//   EXPECT_TRUE(ExitsZero(cluster.process(0), absl::Seconds(30)));
//   float loss, accuracy;
//   ParseFinal(cluster.process(0)->Output(), &loss, &accuracy);
//
// The processes are killed and reaped when the cluster is destroyed.
// Thread-compatible.
#ifndef SLUICE_TESTS_DISTRIBUTED_MULTI_WORKER_TESTUTIL_H_
#define SLUICE_TESTS_DISTRIBUTED_MULTI_WORKER_TESTUTIL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "distributed/cluster/cluster_spec.h"
#include "gtest/gtest.h"
#include "tests/distributed/child_process.h"

namespace sluice {

class MultiWorkerCluster {
 public:
  explicit MultiWorkerCluster(int workers);

  const ClusterSpec& spec() const { return spec_; }

  // Starts (or restarts, killing the previous process) worker `task` of
  // examples/multi_worker_mlp with `flags`; nullptr when it cannot start
  // (with a test failure).
  ChildProcess* Start(int task, std::vector<std::string> flags);
  ChildProcess* process(int task);
  // What every started worker printed so far, task by task (for failure
  // messages: one worker's error is often another's doing).
  std::string AllOutputs() const;

 private:
  ClusterSpec spec_;
  std::map<int, std::unique_ptr<ChildProcess>> procs_;
};

// `p` exits with status 0 within `timeout` (else its output in the message).
::testing::AssertionResult ExitsZero(ChildProcess* p, absl::Duration timeout);

// "final: loss=<x> accuracy=<y>".
bool ParseFinal(const std::string& out, float* loss, float* accuracy);

// The N of every "step N: loss=" progress line, in order.
std::vector<int64_t> LoggedSteps(const std::string& out);

// Waits until `p` logged a progress line for a step >= `step`.
bool WaitForStep(ChildProcess* p, int64_t step, absl::Duration timeout);

// The lines of `out` that contain `needle`.
std::vector<std::string> LinesWith(const std::string& out, const std::string& needle);

// A fresh, empty directory under TEST_TMPDIR.
std::string FreshDir(const std::string& name);

}  // namespace sluice

#endif  // SLUICE_TESTS_DISTRIBUTED_MULTI_WORKER_TESTUTIL_H_
