// Fakes for RPC tests: a WorkerService / MasterService handler with
// scriptable behaviour, an in-memory TensorSource and TensorSink.
//
//   auto worker = std::make_shared<FakeWorker>("/job:ps/replica:0/task:0");
//   FakeTensorSource source;
//   source.Provide(1, "x", Tensor::Scalar<float>(3));
//   ASSIGN_OR_RETURN(auto server, ThriftServer::Start(opts, worker, &source, nullptr));
//
// Thread-safe: handlers are called from server threads. FreshTestDir names
// an empty directory under the test's TEST_TMPDIR.
#ifndef SLUICE_DISTRIBUTED_RPC_RPC_TESTUTIL_H_
#define SLUICE_DISTRIBUTED_RPC_RPC_TESTUTIL_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distributed/rpc/gen-cpp/MasterService.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "distributed/rpc/thrift_server.h"
#include "runtime/tensor.h"

namespace sluice {

class FakeTensorSource : public TensorSource {
 public:
  void Provide(int64_t step_id, const std::string& key, Tensor tensor);
  void Abort(int64_t step_id, absl::Status reason);
  absl::StatusOr<Tensor> WaitForTensor(int64_t step_id, const std::string& key,
                                       int64_t timeout_ms) override;
  int waiting() const { return waiting_.load(); }

 private:
  absl::Mutex mu_;
  std::map<std::pair<int64_t, std::string>, Tensor> tensors_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, absl::Status> aborted_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> waiting_{0};
};

class FakeWorker : public rpc::WorkerServiceIf {
 public:
  explicit FakeWorker(std::string task) : task_(std::move(task)) {}

  // GetStatus sleeps this long first (for deadline tests).
  std::atomic<int64_t> get_status_delay_ms{0};
  std::atomic<int64_t> registered_bytes{0};
  std::atomic<int64_t> last_aborted_step{-1};
  std::atomic<int32_t> last_abort_code{0};
  std::atomic<int> status_calls{0};  // GetStatus calls answered

  void GetStatus(rpc::WorkerStatus& out) override;
  // Handle "graph<bytes of all partitions>".
  void RegisterGraph(rpc::RegisterGraphResponse& out, const rpc::RegisterGraphRequest& req) override;
  // NotFound unless the handle starts with "graph"; "throw" raises a
  // std::runtime_error (not an RpcError).
  void DeregisterGraph(const std::string& graph_handle) override;
  // Echoes each feed back as retval of the same index.
  void RunGraph(rpc::RunGraphResponse& out, const rpc::RunGraphRequest& req) override;
  // The generated (copying) path: a float vector [0, 1, ..., n-1] where n is
  // the key's length.
  void RecvTensor(rpc::RecvTensorResponse& out, const rpc::RecvTensorRequest& req) override;
  void AbortStep(int64_t step_id, int32_t code, const std::string& message) override;
  void CleanupStep(int64_t step_id) override;
  // The generated (copying) path: counts pushes and keeps the last one's
  // key; a key "refuse" is answered with FailedPrecondition.
  void CollectivePush(const std::string& to_device, const std::string& key,
                      const rpc::TensorWire& value, int64_t timeout_ms) override;
  std::atomic<int> pushes{0};
  std::string last_push_key() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::string task_;
  absl::Mutex mu_;
  std::string last_push_key_ ABSL_GUARDED_BY(mu_);
};

// Keeps pushed tensors by (to_device, key); refuses a key seen twice
// (FailedPrecondition), as the collective mailbox does.
class FakeTensorSink : public TensorSink {
 public:
  Allocator* allocator = nullptr;  // PushAllocator's answer
  Allocator* PushAllocator() override { return allocator; }
  absl::Status AcceptCollectivePush(const std::string& to_device, const std::string& key,
                                    Tensor value, int64_t timeout_ms,
                                    const std::string& sender) override;
  // The sender named with the last push.
  std::string last_sender() {
    absl::MutexLock lock(&mu_);
    return last_sender_;
  }
  // The pushed tensor (removed); NotFound when none.
  absl::StatusOr<Tensor> Take(const std::string& to_device, const std::string& key);

 private:
  absl::Mutex mu_;
  std::map<std::pair<std::string, std::string>, Tensor> pushed_ ABSL_GUARDED_BY(mu_);
  std::string last_sender_ ABSL_GUARDED_BY(mu_);
};

class FakeMaster : public rpc::MasterServiceIf {
 public:
  void CreateSession(rpc::CreateSessionResponse& out, const rpc::CreateSessionRequest& req) override;
  void ExtendSession(const std::string& session_handle, const std::string& graph_def) override;
  // Fetches: one int64 scalar per fetch name, its length.
  void RunStep(rpc::RunStepResponse& out, const rpc::RunStepRequest& req) override;
  void CloseSession(const std::string& session_handle) override;
  void ListDevices(std::vector<rpc::DeviceAttributes>& out) override;

 private:
  absl::Mutex mu_;
  std::map<std::string, std::string> sessions_ ABSL_GUARDED_BY(mu_);  // handle -> graph bytes
  int next_ ABSL_GUARDED_BY(mu_) = 0;
};

// "$TEST_TMPDIR/<name>" (/tmp outside Bazel), with whatever an earlier
// run left there removed; not created.
std::string FreshTestDir(const std::string& name);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_RPC_TESTUTIL_H_
