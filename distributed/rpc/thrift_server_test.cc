#include "distributed/rpc/thrift_server.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TMultiplexedProtocol.h>
#include <thrift/processor/TMultiplexedProcessor.h>
#include <thrift/server/TThreadedServer.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TServerSocket.h>
#include <thrift/transport/TSocket.h>

#include "absl/strings/str_cat.h"
#include "distributed/rpc/framed_transport.h"
#include "distributed/rpc/rpc_testutil.h"
#include "distributed/rpc/socket_util.h"
#include "distributed/rpc/tensor_wire.h"
#include "distributed/rpc/worker_stub.h"
#include "gtest/gtest.h"
#include "runtime/rendezvous.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kTask[] = "/job:ps/replica:0/task:0";

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

class ThriftServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    worker_ = std::make_shared<FakeWorker>(kTask);
    ThriftServerOptions opts;
    opts.task_name = kTask;
    absl::StatusOr<std::unique_ptr<ThriftServer>> s = ThriftServer::Start(opts, worker_, &source_, nullptr);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    address_ = absl::StrCat("127.0.0.1:", server_->port());
  }

  std::shared_ptr<FakeWorker> worker_;
  FakeTensorSource source_;
  std::unique_ptr<ThriftServer> server_;
  std::string address_;
};

Tensor RandomFloats(int64_t rows, int64_t cols) {
  Tensor t(DT_FLOAT, TensorShape({rows, cols}));
  uint32_t x = 12345;
  for (float& v : t.flat<float>()) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<float>(x) / 4096.0f - 3.0f;
  }
  return t;
}

void ExpectSameTensor(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  if (a.dtype() == DT_STRING) {
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      EXPECT_EQ(a.flat<std::string>()[i], b.flat<std::string>()[i]);
    }
    return;
  }
  ASSERT_EQ(a.TotalBytes(), b.TotalBytes());
  if (a.TotalBytes() > 0) {
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0);
  }
}

TEST_F(ThriftServerTest, RecvTensorReturnsExactBytes) {
  Tensor strings(DT_STRING, TensorShape({2}));
  strings.flat<std::string>()[0] = "alpha";
  strings.flat<std::string>()[1] = std::string(70000, 'z');
  const std::vector<std::pair<std::string, Tensor>> cases = {
      {"float", RandomFloats(1000, 37)},
      {"int64", Tensor::FromVector<int64_t>({-5, 1LL << 50, 0, 9})},
      {"empty", Tensor(DT_FLOAT, TensorShape({0, 3}))},
      {"scalar", Tensor::Scalar<double>(2.5)},
      {"strings", strings},
  };
  for (const auto& [key, t] : cases) source_.Provide(1, key, t);
  WorkerStub stub(kTask, address_);
  for (const auto& [key, t] : cases) {
    absl::StatusOr<Tensor> got = stub.RecvTensor(1, key, 1000);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status();
    ExpectSameTensor(*got, t);
    EXPECT_FALSE(got->SharesBufferWith(t));
  }
  CpuAllocator alloc("recv");
  absl::StatusOr<Tensor> got = stub.RecvTensor(1, "float", 1000, &alloc);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(alloc.GetStats().num_allocs, 1);
  EXPECT_EQ(stub.channel().IdleConnectionsForTesting(), 1);  // one connection, reused
}

// A dead tensor (an uninitialized one: runtime/rendezvous.h) crosses as
// RecvTensorResponse.is_dead, to Sluice's reader and the generated one.
TEST_F(ThriftServerTest, ADeadTensorArrivesDead) {
  source_.Provide(4, "dead", Tensor());
  source_.Provide(4, "dead_again", Tensor());
  WorkerStub stub(kTask, address_);
  absl::StatusOr<Tensor> got = stub.RecvTensor(4, "dead", 1000);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(IsDeadValue(*got));
  auto socket = std::make_shared<apache::thrift::transport::TSocket>("127.0.0.1", server_->port());
  auto framed = std::make_shared<apache::thrift::transport::TFramedTransport>(socket);
  auto binary = std::make_shared<apache::thrift::protocol::TBinaryProtocol>(framed);
  rpc::WorkerServiceClient client(
      std::make_shared<apache::thrift::protocol::TMultiplexedProtocol>(binary, "worker"));
  framed->open();
  rpc::RecvTensorRequest req;
  req.step_id = 4;
  req.rendezvous_key = "dead_again";
  req.timeout_ms = 1000;
  rpc::RecvTensorResponse resp;
  client.RecvTensor(resp, req);
  EXPECT_TRUE(resp.is_dead);
  framed->close();
}

TEST_F(ThriftServerTest, StockGeneratedClientParsesTheZeroCopyReply) {
  Tensor t = RandomFloats(300, 300);  // 360 KB: sent by reference
  source_.Provide(2, "w", t);
  auto socket = std::make_shared<apache::thrift::transport::TSocket>("127.0.0.1", server_->port());
  auto framed = std::make_shared<apache::thrift::transport::TFramedTransport>(socket);
  auto binary = std::make_shared<apache::thrift::protocol::TBinaryProtocol>(framed);
  rpc::WorkerServiceClient client(
      std::make_shared<apache::thrift::protocol::TMultiplexedProtocol>(binary, "worker"));
  framed->open();
  rpc::RecvTensorRequest req;
  req.step_id = 2;
  req.rendezvous_key = "w";
  req.timeout_ms = 1000;
  rpc::RecvTensorResponse resp;
  client.RecvTensor(resp, req);
  rpc::TensorWire expected;
  ASSERT_TRUE(TensorToWire(t, &expected).ok());
  EXPECT_EQ(resp.tensor.dtype, expected.dtype);
  EXPECT_EQ(resp.tensor.shape, expected.shape);
  EXPECT_TRUE(resp.tensor.data == expected.data);

  // Errors reach the stock client as RpcError with the status code.
  source_.Abort(3, absl::AbortedError("step 3 aborted by the chief"));
  req.step_id = 3;
  try {
    client.RecvTensor(resp, req);
    FAIL() << "no error";
  } catch (const rpc::RpcError& e) {
    EXPECT_EQ(e.code, static_cast<int32_t>(absl::StatusCode::kAborted));
    EXPECT_EQ(e.message, "step 3 aborted by the chief");
  }
  // The stock client's other calls go to the handler.
  rpc::WorkerStatus status;
  client.GetStatus(status);
  EXPECT_EQ(status.task, kTask);
  framed->close();
}

TEST_F(ThriftServerTest, RecvTensorBlocksUntilTheSourceProvides) {
  WorkerStub stub(kTask, address_);
  auto pending = std::async(std::launch::async, [&] { return stub.RecvTensor(4, "late", 5000); });
  while (source_.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(pending.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  source_.Provide(4, "late", Tensor::Scalar<float>(7));
  absl::StatusOr<Tensor> got = pending.get();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->scalar<float>(), 7);
}

TEST_F(ThriftServerTest, ErrorsPropagateWithTheirCode) {
  WorkerStub stub(kTask, address_);
  source_.Abort(5, absl::AbortedError("step 5 aborted"));
  absl::StatusOr<Tensor> t = stub.RecvTensor(5, "x", 1000);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(t.status().message(), absl::StrCat("task ", kTask, ": step 5 aborted"));

  t = stub.RecvTensor(6, "never", 50);  // the source's own deadline
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(t.status().message().find("never"), std::string::npos) << t.status();

  absl::Status s = stub.DeregisterGraph("nope");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find(kTask), std::string::npos) << s;
  EXPECT_NE(s.message().find("no graph 'nope'"), std::string::npos) << s;

  s = stub.DeregisterGraph("throw");  // not an RpcError: TApplicationException
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("handler bug"), std::string::npos) << s;

  EXPECT_EQ(stub.CleanupStep(-1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(stub.CleanupStep(1).ok());
  EXPECT_TRUE(stub.AbortStep(9, absl::CancelledError("stop")).ok());
  EXPECT_EQ(worker_->last_aborted_step.load(), 9);
  EXPECT_EQ(worker_->last_abort_code.load(), static_cast<int32_t>(absl::StatusCode::kCancelled));

  EXPECT_EQ(stub.channel().IdleConnectionsForTesting(), 1);  // errors kept the connection
}

TEST_F(ThriftServerTest, RunGraphAndRegisterGraphCarryTensors) {
  WorkerStub stub(kTask, address_);
  rpc::RunGraphRequest req;
  req.graph_handle = "graph1";
  ASSERT_TRUE(TensorToWire(Tensor::FromVector<int32_t>({1, 2, 3}), &req.feeds[0]).ok());
  absl::StatusOr<rpc::RunGraphResponse> resp = stub.RunGraph(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  absl::StatusOr<Tensor> back = TensorFromWire(resp->retvals.at(0));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->flat<int32_t>()[2], 3);
  absl::StatusOr<rpc::WorkerStatus> status = stub.GetStatus();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->incarnation, 77);
}

TEST_F(ThriftServerTest, OneConnectionCarriesOverHundredMegabytesEachWay) {
  // Thrift 0.17 silently drops a connection after 100 MB received in total.
  WorkerStub stub(kTask, address_);
  rpc::RegisterGraphRequest reg;
  for (int i = 0; i < 3; ++i) reg.partitions[absl::StrCat("/device:CPU:", i)] = std::string(20 << 20, 'g');
  for (int round = 0; round < 2; ++round) {  // 120 MB into the server
    absl::StatusOr<std::string> handle = stub.RegisterGraph(reg);
    ASSERT_TRUE(handle.ok()) << handle.status();
    EXPECT_EQ(*handle, absl::StrCat("graph", 60 << 20));
  }
  Tensor big = RandomFloats(4096, 4096);  // 64 MiB
  source_.Provide(7, "big", big);
  for (int round = 0; round < 2; ++round) {  // 128 MiB out of it
    absl::StatusOr<Tensor> got = stub.RecvTensor(7, "big", 5000);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSameTensor(*got, big);
  }
  EXPECT_EQ(stub.channel().IdleConnectionsForTesting(), 1);
  EXPECT_EQ(stub.recv_buffer_pool()->reuses(), 1);  // the second landed in the first's block
}

TEST_F(ThriftServerTest, StopWithIdleClientsReturnsPromptly) {
  std::vector<std::unique_ptr<WorkerStub>> stubs;
  for (int i = 0; i < 4; ++i) {
    stubs.push_back(std::make_unique<WorkerStub>(kTask, address_));
    ASSERT_TRUE(stubs.back()->GetStatus().ok());
  }
  auto t0 = Clock::now();
  server_->Stop();
  EXPECT_LT(MsSince(t0), 500);
  server_->Stop();  // idempotent
  absl::StatusOr<rpc::WorkerStatus> s = stubs[0]->GetStatus();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable) << s.status();
}

// A call inside a handler when Stop() comes still gets its reply: the peer
// learns its request was acted on (Stop waits for it, up to the drain
// timeout), and no new call starts.
TEST_F(ThriftServerTest, StopLetsACallInsideAHandlerWriteItsReply) {
  WorkerStub stub(kTask, address_);
  auto pending = std::async(std::launch::async, [&] { return stub.RecvTensor(4, "late", 5000); });
  while (source_.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto t0 = Clock::now();
  auto stopped = std::async(std::launch::async, [&] { server_->Stop(); });
  EXPECT_EQ(stopped.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  source_.Provide(4, "late", Tensor::Scalar<float>(7));
  absl::StatusOr<Tensor> got = pending.get();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->scalar<float>(), 7);
  stopped.get();
  EXPECT_LT(MsSince(t0), 1500);
  EXPECT_EQ(stub.GetStatus().status().code(), absl::StatusCode::kUnavailable);
}

// A call that does not finish within the drain timeout loses its
// connection at the deadline (the client hears at once, not when the
// handler gives up).
TEST(ThriftServerDrainTest, ACallPastTheDrainTimeoutLosesItsConnection) {
  auto worker = std::make_shared<FakeWorker>(kTask);
  FakeTensorSource source;
  ThriftServerOptions opts;
  opts.task_name = kTask;
  opts.drain_timeout_ms = 100;
  absl::StatusOr<std::unique_ptr<ThriftServer>> server =
      ThriftServer::Start(opts, worker, &source, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", (*server)->port()));
  auto pending = std::async(std::launch::async, [&] { return stub.RecvTensor(4, "never", 1500); });
  while (source.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto t0 = Clock::now();
  auto stopped = std::async(std::launch::async, [&] { (*server)->Stop(); });
  absl::StatusOr<Tensor> got = pending.get();
  EXPECT_LT(MsSince(t0), 1000);  // the source's own deadline is 1.5 s
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable) << got.status();
  stopped.get();  // once the handler gives up
}

TEST_F(ThriftServerTest, GarbageClientIsDroppedAndOthersKeepWorking) {
  absl::StatusOr<int> fd = ConnectTcp(HostPort{"127.0.0.1", server_->port()}, 1000);
  ASSERT_TRUE(fd.ok());
  const char request[] = "GET / HTTP/1.0\r\n\r\n";
  ASSERT_EQ(send(*fd, request, sizeof(request) - 1, 0), static_cast<ssize_t>(sizeof(request) - 1));
  timeval tv{2, 0};
  setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char c;
  auto t0 = Clock::now();
  EXPECT_EQ(recv(*fd, &c, 1, 0), 0);  // closed by the server, not timed out
  EXPECT_LT(MsSince(t0), 1000);
  close(*fd);
  WorkerStub stub(kTask, address_);
  EXPECT_TRUE(stub.GetStatus().ok());
}

// Closed by the peer within `ms`: recv sees end of stream, not a timeout.
bool ClosedWithin(int fd, int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char c;
  return recv(fd, &c, 1, 0) == 0;
}

// Hostile frames: a method name declared 2 GiB long in a 12-byte request, a
// list of 2^31 structs, a frame over the limit. Each costs its connection
// and no memory; the server keeps answering.
TEST_F(ThriftServerTest, HostileFramesCostTheirConnectionOnly) {
  const std::vector<std::string> inputs = {
      // frame 8: version|call, name length 0x7fffff00
      std::string("\x00\x00\x00\x08\x80\x01\x00\x01\x7f\xff\xff\x00", 12),
      // frame 2^31 - 1 (over the server's limit)
      std::string("\x7f\xff\xff\xff\x80\x01\x00\x01", 8),
      // "worker:GetStatus" then a struct field 1 of type list<struct> of 2^31 - 1
      std::string("\x00\x00\x00\x25\x80\x01\x00\x01\x00\x00\x00\x10worker:GetStatus"
                  "\x00\x00\x00\x01\x0f\x00\x01\x0c\x7f\xff\xff\xff",
                  41),
  };
  rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  for (const std::string& input : inputs) {
    absl::StatusOr<int> fd = ConnectTcp(HostPort{"127.0.0.1", server_->port()}, 1000);
    ASSERT_TRUE(fd.ok());
    ASSERT_EQ(send(*fd, input.data(), input.size(), 0), static_cast<ssize_t>(input.size()));
    EXPECT_TRUE(ClosedWithin(*fd, 2000)) << "input of " << input.size() << " bytes";
    close(*fd);
  }
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 << 10) << "KiB of peak memory grew";
  WorkerStub stub(kTask, address_);
  EXPECT_TRUE(stub.GetStatus().ok());
}

// A stock client whose one connection made a call and now sits idle.
struct IdleCaller {
  std::shared_ptr<apache::thrift::transport::TSocket> socket;
  int fd() const { return socket->getSocketFD(); }
};

IdleCaller CallOnce(int port) {
  IdleCaller caller;
  caller.socket = std::make_shared<apache::thrift::transport::TSocket>("127.0.0.1", port);
  auto framed = std::make_shared<apache::thrift::transport::TFramedTransport>(caller.socket);
  auto binary = std::make_shared<apache::thrift::protocol::TBinaryProtocol>(framed);
  rpc::WorkerServiceClient client(
      std::make_shared<apache::thrift::protocol::TMultiplexedProtocol>(binary, "worker"));
  framed->open();
  rpc::WorkerStatus status;
  client.GetStatus(status);
  return caller;
}

// Past max_connections a connection that made its first request is closed
// at once; a slot freed by a closing client is served again. Idle
// connections close after idle_timeout_ms.
TEST(ThriftServerLimitsTest, ConnectionCapAndIdleTimeout) {
  auto worker = std::make_shared<FakeWorker>(kTask);
  ThriftServerOptions opts;
  opts.task_name = kTask;
  opts.max_connections = 2;
  opts.idle_timeout_ms = 300;
  absl::StatusOr<std::unique_ptr<ThriftServer>> server =
      ThriftServer::Start(opts, worker, nullptr, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  std::vector<IdleCaller> held;
  for (int i = 0; i < 2; ++i) held.push_back(CallOnce((*server)->port()));
  EXPECT_EQ((*server)->served_connections(), 2);
  auto t0 = Clock::now();
  WorkerStub extra(kTask, absl::StrCat("127.0.0.1:", (*server)->port()));
  EXPECT_FALSE(extra.GetStatus(2000).ok());  // refused well before the idle timeout
  EXPECT_LT(MsSince(t0), 250);
  // The two idle ones are closed by the idle timeout...
  for (const IdleCaller& c : held) EXPECT_TRUE(ClosedWithin(c.fd(), 3000));
  // ... after which a client is served.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", (*server)->port()));
  EXPECT_TRUE(stub.GetStatus().ok());
}

// With an io timeout shorter than the idle one, the server waits for a
// request in recv() (timing out each io_timeout_ms) and then in poll(): an
// idle connection outlives the io timeout, is closed once the idle timeout
// has passed, and one that calls meanwhile is served.
TEST(ThriftServerLimitsTest, IdleTimeoutLongerThanTheIoTimeout) {
  auto worker = std::make_shared<FakeWorker>(kTask);
  ThriftServerOptions opts;
  opts.task_name = kTask;
  opts.io_timeout_ms = 100;
  opts.idle_timeout_ms = 600;
  absl::StatusOr<std::unique_ptr<ThriftServer>> server =
      ThriftServer::Start(opts, worker, nullptr, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  IdleCaller idle = CallOnce((*server)->port());
  auto t0 = Clock::now();
  EXPECT_FALSE(ClosedWithin(idle.fd(), 300));  // open past the io timeout
  EXPECT_TRUE(ClosedWithin(idle.fd(), 3000));
  EXPECT_GE(MsSince(t0), 550);  // the idle timeout, not the io one
  WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", (*server)->port()));
  ASSERT_TRUE(stub.GetStatus().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_TRUE(stub.GetStatus().ok());
}

TEST_F(ThriftServerTest, BusyPortIsAnErrorNamingTheAddress) {
  ThriftServerOptions opts;
  opts.task_name = "/job:worker/replica:0/task:1";
  opts.port = server_->port();
  absl::StatusOr<std::unique_ptr<ThriftServer>> s = ThriftServer::Start(opts, worker_, nullptr, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.status().message().find(absl::StrCat("127.0.0.1:", server_->port())), std::string::npos)
      << s.status();
  EXPECT_NE(s.status().message().find("task:1"), std::string::npos) << s.status();
}

TEST(ThriftServerInteropTest, OurClientAgainstStockThreadedServer) {
  // The stock server's generated RecvTensor writes the reply; our reader
  // parses it. Our FramedTransport talks to a TFramedTransport server.
  auto worker = std::make_shared<FakeWorker>(kTask);
  auto mux = std::make_shared<apache::thrift::TMultiplexedProcessor>();
  mux->registerProcessor("worker", std::make_shared<rpc::WorkerServiceProcessor>(worker));
  auto server_socket = std::make_shared<apache::thrift::transport::TServerSocket>("127.0.0.1", 0);
  apache::thrift::server::TThreadedServer server(
      mux, server_socket, std::make_shared<apache::thrift::transport::TFramedTransportFactory>(),
      std::make_shared<apache::thrift::protocol::TBinaryProtocolFactory>());
  std::thread serving([&] { server.serve(); });
  for (int i = 0; i < 2000 && server_socket->getPort() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_NE(server_socket->getPort(), 0);
  {
    WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", server_socket->getPort()));
    absl::StatusOr<Tensor> t = stub.RecvTensor(1, "abcde", 1000);  // [0,1,2,3,4] via the handler
    ASSERT_TRUE(t.ok()) << t.status();
    ExpectSameTensor(*t, Tensor::FromVector<float>({0, 1, 2, 3, 4}));
    absl::StatusOr<rpc::WorkerStatus> st = stub.GetStatus();
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(st->task, kTask);
    EXPECT_EQ(stub.DeregisterGraph("x").code(), absl::StatusCode::kNotFound);
  }
  server.stop();
  serving.join();
}

// RecvTensor has one server path, the TensorSource's: without one there is
// nothing to give (the handler's RecvTensor is never called).
TEST(ThriftServerNoSourceTest, RecvTensorWithoutASourceIsUnimplemented) {
  auto worker = std::make_shared<FakeWorker>(kTask);
  ThriftServerOptions opts;
  opts.task_name = kTask;
  absl::StatusOr<std::unique_ptr<ThriftServer>> s = ThriftServer::Start(opts, worker, nullptr, nullptr);
  ASSERT_TRUE(s.ok());
  WorkerStub stub(kTask, absl::StrCat("127.0.0.1:", (*s)->port()));
  absl::StatusOr<Tensor> t = stub.RecvTensor(1, "xyz", 1000);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented) << t.status();
  EXPECT_TRUE(stub.GetStatus().ok());  // the connection and the other calls work
}

}  // namespace
}  // namespace sluice
