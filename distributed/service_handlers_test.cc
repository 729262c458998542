// MasterServiceHandler keeps sessions only while their clients use them: a
// session idle past its limit is closed by the next CreateSession, and a
// call on it then fails NotFound; a session in use stays.
#include "distributed/service_handlers.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "distributed/in_process_worker_cache.h"
#include "distributed/rpc/tensor_wire.h"
#include "distributed/worker.h"
#include "gtest/gtest.h"
#include "ops/builtins.h"

namespace sluice {
namespace {

constexpr char kTask[] = "/job:worker/replica:0/task:0";

class MasterServiceHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WorkerOptions w;
    w.task = kTask;
    w.session.ops = BuiltinOps();
    w.session.kernels = BuiltinKernels();
    w.session.devices.cpu_threads = 1;
    w.peers = &cache_;
    absl::StatusOr<std::unique_ptr<Worker>> worker = Worker::Create(w);
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = *std::move(worker);
    cache_.Add(kTask, worker_.get());
    options_.workers = &cache_;
    options_.session.ops = BuiltinOps();
    options_.session.kernels = BuiltinKernels();
    options_.session.default_device = kTask;
  }
  void TearDown() override { cache_.Quiesce(); }

  std::string Create(MasterServiceHandler& h) {
    rpc::CreateSessionRequest req;
    rpc::CreateSessionResponse out;
    h.CreateSession(out, req);  // an empty graph
    return out.session_handle;
  }
  // The status of a RunStep on `handle` with nothing to run.
  absl::Status Touch(MasterServiceHandler& h, const std::string& handle) {
    rpc::RunStepRequest req;
    req.session_handle = handle;
    rpc::RunStepResponse out;
    try {
      h.RunStep(out, req);
    } catch (const rpc::RpcError& e) {
      return FromRpcError(e);
    }
    return absl::OkStatus();
  }

  InProcessWorkerCache cache_;
  std::unique_ptr<Worker> worker_;
  MasterSessionOptions options_;
};

TEST_F(MasterServiceHandlerTest, SessionsIdlePastTheirLimitAreClosed) {
  MasterServiceHandler handler(options_, absl::Milliseconds(300));
  const std::string used = Create(handler);
  const std::string idle = Create(handler);
  for (int i = 0; i < 6; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
    EXPECT_TRUE(Touch(handler, used).ok());
  }
  Create(handler);  // sweeps
  EXPECT_TRUE(Touch(handler, used).ok());
  absl::Status s = Touch(handler, idle);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "idle limit")) << s;
}

}  // namespace
}  // namespace sluice
