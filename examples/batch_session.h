// A tf.data pipeline run in a session of its own, one batch per call: the
// examples' input pipelines (fashion_mnist_input.h, click_input.h) build
// their datasets and hand the last stage here.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<BatchSession> batches,
//                    BatchSession::Create(s, ds.Prefetch(4), /*cpu_threads=*/1));
//   ASSIGN_OR_RETURN(std::vector<Tensor> b, batches->Next());   // one per component
//
// Create makes the dataset's initializable iterator, the session (with
// `cpu_threads` CPU threads; 0: the machine's) and runs the initializer.
// Next counts the time it waits for a batch (wait_seconds()).
//
// Errors: Next returns OutOfRange after the last batch; graph and session
// errors as they are. Thread-compatible: one caller at a time.
#ifndef SLUICE_EXAMPLES_BATCH_SESSION_H_
#define SLUICE_EXAMPLES_BATCH_SESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/data/dataset_builder.h"
#include "sluice.h"

namespace sluice {

class BatchSession {
 public:
  static absl::StatusOr<std::unique_ptr<BatchSession>> Create(const Scope& scope,
                                                              const data::Dataset& ds,
                                                              int cpu_threads);

  absl::StatusOr<std::vector<Tensor>> Next();
  // Every batch left.
  absl::StatusOr<std::vector<std::vector<Tensor>>> ReadAll();

  double wait_seconds() const { return wait_seconds_; }

 private:
  BatchSession(std::unique_ptr<Session> session, std::vector<std::string> outputs)
      : session_(std::move(session)), outputs_(std::move(outputs)) {}

  std::unique_ptr<Session> session_;
  std::vector<std::string> outputs_;  // the IteratorGetNext outputs
  double wait_seconds_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_BATCH_SESSION_H_
