#include "distributed/rpc/worker_stub.h"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "distributed/rpc/master_stub.h"
#include "distributed/rpc/recv_buffer_pool.h"
#include "distributed/rpc/rpc_testutil.h"
#include "distributed/rpc/socket_util.h"
#include "distributed/rpc/tensor_wire.h"
#include "distributed/rpc/thrift_server.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kTask[] = "/job:ps/replica:0/task:0";

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::unique_ptr<ThriftServer> StartServer(std::shared_ptr<rpc::WorkerServiceIf> worker,
                                          TensorSource* source,
                                          std::shared_ptr<rpc::MasterServiceIf> master, int port = 0) {
  ThriftServerOptions opts;
  opts.task_name = kTask;
  opts.port = port;
  absl::StatusOr<std::unique_ptr<ThriftServer>> s = ThriftServer::Start(opts, worker, source, master);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// A port nobody listens on: bound once, then released.
int ClosedPort() {
  int port = 0;
  absl::StatusOr<int> fd = ListenTcp("127.0.0.1", 0, &port);
  EXPECT_TRUE(fd.ok());
  close(*fd);
  return port;
}

TEST(WorkerStubTest, ClosedPortIsUnavailableNamingTheTaskWithinASecond) {
  const std::string address = absl::StrCat("127.0.0.1:", ClosedPort());
  WorkerStub stub(kTask, address);
  auto t0 = Clock::now();
  absl::StatusOr<rpc::WorkerStatus> s = stub.GetStatus();
  EXPECT_LT(MsSince(t0), 1000);
  ASSERT_EQ(s.status().code(), absl::StatusCode::kUnavailable) << s.status();
  EXPECT_NE(s.status().message().find(kTask), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find(address), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("connection refused"), std::string::npos) << s.status();
  EXPECT_EQ(stub.RecvTensor(1, "k", 100).status().code(), absl::StatusCode::kUnavailable);
}

TEST(WorkerStubTest, MalformedAddressIsInvalidArgument) {
  WorkerStub stub(kTask, "no-port-here");
  EXPECT_EQ(stub.GetStatus().status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WorkerStubTest, SlowHandlerIsDeadlineExceededWithinBound) {
  auto worker = std::make_shared<FakeWorker>(kTask);
  worker->get_status_delay_ms = 1500;
  std::unique_ptr<ThriftServer> server = StartServer(worker, nullptr, nullptr);
  RpcOptions opts;
  opts.call_timeout_ms = 200;
  WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", server->port()), opts);
  auto t0 = Clock::now();
  absl::StatusOr<rpc::WorkerStatus> s = stub.GetStatus();
  const double ms = MsSince(t0);
  EXPECT_GE(ms, 150);
  EXPECT_LT(ms, 1000);
  ASSERT_EQ(s.status().code(), absl::StatusCode::kDeadlineExceeded) << s.status();
  EXPECT_NE(s.status().message().find(kTask), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("200 ms"), std::string::npos) << s.status();
  EXPECT_EQ(stub.channel().IdleConnectionsForTesting(), 0);  // the late reply's connection is gone

  worker->get_status_delay_ms = 0;
  EXPECT_TRUE(stub.GetStatus().ok());  // a fresh connection
}

TEST(WorkerStubTest, ConcurrentCallsFromEightThreads) {
  auto worker = std::make_shared<FakeWorker>(kTask);
  FakeTensorSource source;
  Tensor t = Tensor::FromVector<float>(std::vector<float>(1000, 0.5f));
  source.Provide(1, "t", t);
  std::unique_ptr<ThriftServer> server = StartServer(worker, &source, nullptr);
  WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", server->port()));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 100; ++j) {
        absl::StatusOr<Tensor> got = stub.RecvTensor(1, "t", 1000);
        if (!got.ok() || got->NumElements() != 1000 || got->flat<float>()[999] != 0.5f) ++failures;
        rpc::RunGraphRequest req;
        req.step_id = i * 1000 + j;
        if (!TensorToWire(Tensor::Scalar<int64_t>(req.step_id), &req.feeds[3]).ok()) ++failures;
        absl::StatusOr<rpc::RunGraphResponse> r = stub.RunGraph(req);
        if (!r.ok()) {
          ++failures;
          continue;
        }
        absl::StatusOr<Tensor> back = TensorFromWire(r->retvals[3]);
        if (!back.ok() || back->scalar<int64_t>() != req.step_id) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  const int idle = stub.channel().IdleConnectionsForTesting();
  EXPECT_GE(idle, 1);
  EXPECT_LE(idle, 8);
}

// A step's transfers to one task (a ps worker's parameters, its control
// edges) are many calls at once: every connection they opened is kept for
// the next step, none is closed and opened again (with TLS, a handshake per
// call: what made parameter-server steps 2x slower).
TEST(WorkerStubTest, ThirtyTwoConcurrentCallsKeepTheirConnections) {
  constexpr int kCalls = 32;
  auto worker = std::make_shared<FakeWorker>(kTask);
  FakeTensorSource source;
  std::unique_ptr<ThriftServer> server = StartServer(worker, &source, nullptr);
  WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", server->port()));
  for (int step = 1; step <= 2; ++step) {
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kCalls; ++i) {
      threads.emplace_back([&, i] {
        if (!stub.RecvTensor(step, absl::StrCat("t", i), 5000).ok()) ++failures;
      });
    }
    // All of them wait in the server at once, then are answered.
    for (int tries = 0; source.waiting() < kCalls && tries < 500; ++tries) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    EXPECT_EQ(source.waiting(), kCalls);
    for (int i = 0; i < kCalls; ++i) {
      source.Provide(step, absl::StrCat("t", i), Tensor::Scalar<float>(i));
    }
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(stub.channel().IdleConnectionsForTesting(), kCalls) << "step " << step;
  }
}

TEST(WorkerStubTest, ReconnectsAfterTheServerRestarts) {
  auto worker = std::make_shared<FakeWorker>(kTask);
  std::unique_ptr<ThriftServer> server = StartServer(worker, nullptr, nullptr);
  const int port = server->port();
  WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", port));
  ASSERT_TRUE(stub.GetStatus().ok());
  server.reset();
  server = StartServer(worker, nullptr, nullptr, port);
  ASSERT_NE(server, nullptr);
  absl::StatusOr<rpc::WorkerStatus> s = stub.GetStatus();  // the pooled connection is stale
  EXPECT_TRUE(s.ok()) << s.status();
}

TEST(WorkerStubTest, MissingServiceIsUnimplemented) {
  auto worker = std::make_shared<FakeWorker>(kTask);
  std::unique_ptr<ThriftServer> server = StartServer(worker, nullptr, nullptr);
  MasterStub master(kTask, absl::StrCat("127.0.0.1:", server->port()));
  absl::StatusOr<std::vector<rpc::DeviceAttributes>> d = master.ListDevices();
  EXPECT_EQ(d.status().code(), absl::StatusCode::kUnimplemented) << d.status();
  EXPECT_NE(d.status().message().find("master"), std::string::npos) << d.status();
}

std::unique_ptr<ThriftServer> StartServerWithSink(std::shared_ptr<rpc::WorkerServiceIf> worker,
                                                  TensorSink* sink) {
  ThriftServerOptions opts;
  opts.task_name = kTask;
  opts.tensor_sink = sink;
  absl::StatusOr<std::unique_ptr<ThriftServer>> s = ThriftServer::Start(opts, worker, nullptr, nullptr);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(WorkerStubTest, CollectivePushLandsInTheSinksMemory) {
  auto worker = std::make_shared<FakeWorker>(kTask);
  auto pool = std::make_shared<RecvBufferPool>(64 << 20);
  FakeTensorSink sink;
  sink.allocator = pool.get();
  std::unique_ptr<ThriftServer> server = StartServerWithSink(worker, &sink);
  WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", server->port()));
  const std::string cpu = std::string(kTask) + "/device:CPU:0";

  std::vector<float> big(1 << 20);  // 4 MiB: sent by reference, read in place
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 977) * 0.5f;
  ASSERT_TRUE(stub.CollectivePush(cpu, "g1/i1/n0/rs/s0/c0", Tensor::FromVector<float>(big), 5000).ok());
  absl::StatusOr<Tensor> got = sink.Take(cpu, "g1/i1/n0/rs/s0/c0");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->NumElements(), static_cast<int64_t>(big.size()));
  EXPECT_EQ(std::memcmp(got->raw_data(), big.data(), big.size() * sizeof(float)), 0);
  EXPECT_EQ(pool->GetStats().num_allocs, 1);  // the sink's allocator, no staging copy
  EXPECT_EQ(worker->pushes.load(), 0);        // the handler's copying path was not taken

  // Small and string tensors, a 2-D shape.
  Tensor m(DT_INT64, TensorShape({2, 3}));
  for (int i = 0; i < 6; ++i) m.flat<int64_t>()[i] = i * 7;
  ASSERT_TRUE(stub.CollectivePush(cpu, "m", m, 5000).ok());
  got = sink.Take(cpu, "m");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->shape(), TensorShape({2, 3}));
  EXPECT_EQ(got->flat<int64_t>()[5], 35);
  Tensor s(DT_STRING, TensorShape({2}));
  s.flat<std::string>()[0] = "ring";
  s.flat<std::string>()[1] = "";
  ASSERT_TRUE(stub.CollectivePush(cpu, "s", s, 5000).ok());
  got = sink.Take(cpu, "s");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->flat<std::string>()[0], "ring");

  // The sink's error comes back with its code; the connection stays usable.
  ASSERT_TRUE(stub.CollectivePush(cpu, "twice", m, 5000).ok());
  absl::Status again = stub.CollectivePush(cpu, "twice", m, 5000);
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition) << again;
  EXPECT_NE(again.message().find(kTask), std::string::npos) << again;
  EXPECT_TRUE(stub.CollectivePush(cpu, "after", m, 5000).ok());
  EXPECT_EQ(stub.channel().IdleConnectionsForTesting(), 1);
}

TEST(WorkerStubTest, CollectivePushWithoutASinkReachesTheHandler) {
  auto worker = std::make_shared<FakeWorker>(kTask);
  std::unique_ptr<ThriftServer> server = StartServer(worker, nullptr, nullptr);
  WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", server->port()));
  Tensor t = Tensor::FromVector<float>(std::vector<float>(100000, 1.0f));
  ASSERT_TRUE(stub.CollectivePush("/job:ps/replica:0/task:0/device:CPU:0", "k7", t, 5000).ok());
  EXPECT_EQ(worker->pushes.load(), 1);
  EXPECT_EQ(worker->last_push_key(), "k7");
  absl::Status refused = stub.CollectivePush("/job:ps/replica:0/task:0/device:CPU:0", "refuse", t, 5000);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
}

TEST(WorkerStubTest, CollectivePushToAClosedPortIsUnavailableNamingTheTask) {
  const std::string address = absl::StrCat("127.0.0.1:", ClosedPort());
  WorkerStub stub(kTask, address);
  auto t0 = Clock::now();
  absl::Status s = stub.CollectivePush("/job:ps/replica:0/task:0/device:CPU:0", "k",
                                       Tensor::Scalar<float>(1), 1000);
  EXPECT_LT(MsSince(t0), 1000);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find(kTask), std::string::npos) << s;
  EXPECT_NE(s.message().find(address), std::string::npos) << s;
}

TEST(MasterStubTest, SessionLifecycle) {
  auto master = std::make_shared<FakeMaster>();
  std::unique_ptr<ThriftServer> server = StartServer(nullptr, nullptr, master);
  MasterStub stub("/job:chief/replica:0/task:0", absl::StrCat("127.0.0.1:", server->port()));
  rpc::CreateSessionRequest create;
  create.graph_def = "graph bytes";
  absl::StatusOr<std::string> handle = stub.CreateSession(create);
  ASSERT_TRUE(handle.ok()) << handle.status();
  EXPECT_TRUE(stub.ExtendSession(*handle, "more").ok());
  rpc::RunStepRequest step;
  step.session_handle = *handle;
  step.fetches = {"a:0", "loss"};
  absl::StatusOr<rpc::RunStepResponse> out = stub.RunStep(step);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->fetches.size(), 2u);
  absl::StatusOr<Tensor> f = TensorFromWire(out->fetches[1]);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->scalar<int64_t>(), 4);
  absl::StatusOr<std::vector<rpc::DeviceAttributes>> devices = stub.ListDevices();
  ASSERT_TRUE(devices.ok());
  EXPECT_EQ(devices->at(0).device_type, "CPU");
  EXPECT_TRUE(stub.CloseSession(*handle).ok());
  absl::Status closed = stub.CloseSession(*handle);
  EXPECT_EQ(closed.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(closed.message().find("/job:chief/replica:0/task:0"), std::string::npos) << closed;
  step.session_handle = "bogus";
  EXPECT_EQ(stub.RunStep(step).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace sluice
