// Mutual TLS between a ThriftServer and WorkerStubs with credentials from
// one job CA: calls and tensors of every size pass; a plaintext client, a
// client of another job's CA, and a server that is not the task asked for
// are refused, the server logging the refused peer's address; the server
// names each push's authenticated sender.
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TMultiplexedProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distributed/rpc/job_credentials.h"
#include "distributed/rpc/rpc_testutil.h"
#include "distributed/rpc/socket_util.h"
#include "distributed/rpc/thrift_server.h"
#include "distributed/rpc/tls_context.h"
#include "distributed/rpc/worker_stub.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

constexpr char kPs[] = "/job:ps/replica:0/task:0";
constexpr char kWorker[] = "/job:worker/replica:0/task:0";

std::shared_ptr<const TlsContext> Load(const std::string& dir, const std::string& identity) {
  absl::StatusOr<std::shared_ptr<const TlsContext>> tls = TlsContext::Load(dir, identity);
  EXPECT_TRUE(tls.ok()) << tls.status();
  return tls.ok() ? *tls : nullptr;
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("job-tls");
    ASSERT_TRUE(WriteJobCredentials(dir_, {kPs, kWorker, kClientIdentity}).ok());
    worker_ = std::make_shared<FakeWorker>(kPs);
    ThriftServerOptions opts;
    opts.task_name = kPs;
    opts.tensor_sink = &sink_;
    opts.io_timeout_ms = 2000;
    opts.tls = Load(dir_, kPs);
    ASSERT_NE(opts.tls, nullptr);
    absl::StatusOr<std::unique_ptr<ThriftServer>> s =
        ThriftServer::Start(opts, worker_, &source_, nullptr);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    address_ = absl::StrCat("127.0.0.1:", server_->port());
  }

  RpcOptions Client(const std::string& identity, const std::string& dir = "") {
    RpcOptions o;
    o.tls = Load(dir.empty() ? dir_ : dir, identity);
    return o;
  }

  std::string dir_;
  std::shared_ptr<FakeWorker> worker_;
  FakeTensorSource source_;
  FakeTensorSink sink_;
  std::unique_ptr<ThriftServer> server_;
  std::string address_;
};

TEST_F(TlsTest, CredentialFilesArePrivate) {
  for (const char* f : {"ca.crt", "ps-0.crt", "ps-0.key", "worker-0.key", "client.key"}) {
    struct stat st;
    ASSERT_EQ(stat(absl::StrCat(dir_, "/", f).c_str(), &st), 0) << f;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << f;
  }
  struct stat st;
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(CredentialStem("/job:worker/replica:0/task:12"), "worker-12");
  EXPECT_EQ(CredentialStem("client"), "client");
  EXPECT_EQ(MakeJobCredentials({kPs, kPs}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TlsContext::Load(dir_, "/job:ps/replica:0/task:7").status().code(),
            absl::StatusCode::kNotFound);
}

// OpenSSL writes with write(): to a peer that died, that raises SIGPIPE.
// Once TLS is loaded the process ignores it, and such a write fails with
// EPIPE instead of killing the process (an elastic worker whose peer was
// killed, for one).
TEST_F(TlsTest, AWriteToAPeerThatWentAwayIsAnErrorNotASignal) {
  struct sigaction current;
  ASSERT_EQ(sigaction(SIGPIPE, nullptr, &current), 0);
  EXPECT_EQ(current.sa_handler, SIG_IGN);
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  close(fds[1]);
  const char byte = 1;
  EXPECT_EQ(write(fds[0], &byte, 1), -1);
  EXPECT_EQ(errno, EPIPE);
  close(fds[0]);
}

TEST_F(TlsTest, CallsAndLargeTensorsPassBetweenMembersOfTheJob) {
  WorkerStub stub(kPs, address_, Client(kWorker));
  absl::StatusOr<rpc::WorkerStatus> status = stub.GetStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  Tensor big(DT_FLOAT, TensorShape({(96 << 20) / 4}));  // past one 64 MiB socket read
  float* v = big.flat<float>().data();
  for (int64_t i = 0; i < big.NumElements(); ++i) v[i] = static_cast<float>(i % 1000003);
  source_.Provide(1, "big", big);
  absl::StatusOr<Tensor> got = stub.RecvTensor(1, "big", 20000);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->NumElements(), big.NumElements());
  EXPECT_EQ(std::memcmp(got->raw_data(), big.raw_data(), big.TotalBytes()), 0);
  // The push path reads into tensors too, and knows who sent.
  Tensor pushed = Tensor::FromVector<float>(std::vector<float>(300000, 2.5f));
  ASSERT_TRUE(stub.CollectivePush(absl::StrCat(kPs, "/device:CPU:0"), "g1/i1/n0/x", pushed, 5000)
                  .ok());
  absl::StatusOr<Tensor> landed = sink_.Take(absl::StrCat(kPs, "/device:CPU:0"), "g1/i1/n0/x");
  ASSERT_TRUE(landed.ok()) << landed.status();
  EXPECT_EQ(landed->flat<float>()[299999], 2.5f);
  EXPECT_EQ(sink_.last_sender(), kWorker);
  // One connection did all of it (no session tickets left to read).
  EXPECT_EQ(stub.channel().IdleConnectionsForTesting(), 1);
  usleep(150 * 1000);  // past the idle check
  ASSERT_TRUE(stub.GetStatus().ok());
  EXPECT_EQ(stub.channel().IdleConnectionsForTesting(), 1);
}

// A reply's header, tensor bytes and trailer go out as separate writes of
// the TLS socket: tensors around a TLS record's size (16 KiB), and strings,
// arrive whole.
TEST_F(TlsTest, TensorsAroundARecordsSizeArriveWhole) {
  WorkerStub stub(kPs, address_, Client(kWorker));
  int64_t step = 100;
  for (int64_t n : {0, 1, 4000, 4090, 4096, 4097, 8192, 12289, 40000}) {
    Tensor t(DT_FLOAT, TensorShape({n}));
    for (int64_t i = 0; i < n; ++i) t.flat<float>()[i] = static_cast<float>(i * 3 + 1);
    source_.Provide(++step, "t", t);
    absl::StatusOr<Tensor> got = stub.RecvTensor(step, "t", 20000);
    ASSERT_TRUE(got.ok()) << n << ": " << got.status();
    ASSERT_EQ(got->NumElements(), n);
    EXPECT_EQ(std::memcmp(got->raw_data(), t.raw_data(), t.TotalBytes()), 0) << n;
  }
  std::vector<std::string> words;
  for (int i = 0; i < 3000; ++i)
    words.push_back(std::string(i % 17, static_cast<char>('a' + i % 26)));
  Tensor strings = Tensor::FromVector<std::string>(words);
  source_.Provide(++step, "s", strings);
  absl::StatusOr<Tensor> got = stub.RecvTensor(step, "s", 20000);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->NumElements(), 3000);
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(got->flat<std::string>()[i], words[i]) << i;
}

TEST_F(TlsTest, PlaintextClientIsRefusedAndTheRefusalLogged) {
  ::testing::internal::CaptureStderr();
  WorkerStub plain(kPs, address_);
  absl::StatusOr<rpc::WorkerStatus> status = plain.GetStatus(3000);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  std::string log;
  while (absl::Now() < deadline && !absl::StrContains(log, "refused a connection from 127.0.0.1")) {
    usleep(20 * 1000);
    log = ::testing::internal::GetCapturedStderr();
    ::testing::internal::CaptureStderr();
  }
  (void)::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(log, "refused a connection from 127.0.0.1")) << log;
  EXPECT_EQ(worker_->status_calls.load(), 0);
  // The server still answers members.
  WorkerStub member(kPs, address_, Client(kWorker));
  EXPECT_TRUE(member.GetStatus().ok());
}

TEST_F(TlsTest, ClientOfAnotherJobIsRefused) {
  const std::string other = FreshTestDir("other-job-tls");
  ASSERT_TRUE(WriteJobCredentials(other, {kWorker}).ok());
  WorkerStub stranger(kPs, address_, Client(kWorker, other));
  absl::StatusOr<rpc::WorkerStatus> status = stranger.GetStatus(3000);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnauthenticated) << status.status();
  EXPECT_TRUE(absl::StrContains(status.status().message(), kPs)) << status.status();
  EXPECT_EQ(worker_->status_calls.load(), 0);
}

TEST_F(TlsTest, ClientRefusesAServerThatIsNotTheTaskItAskedFor) {
  WorkerStub wrong(kWorker, address_, Client(kClientIdentity));  // ps answers there
  absl::StatusOr<rpc::WorkerStatus> status = wrong.GetStatus(3000);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnauthenticated) << status.status();
  EXPECT_TRUE(absl::StrContains(status.status().message(), absl::StrCat("the peer is '", kPs)))
      << status.status();
  // A target known by address only takes any task of the job.
  WorkerStub by_address(address_, address_, Client(kClientIdentity));
  EXPECT_TRUE(by_address.GetStatus().ok());
}

TEST_F(TlsTest, SilentPeerIsDroppedWithinTheHandshakeTimeout) {
  absl::StatusOr<HostPort> hp = ParseHostPort(address_);
  ASSERT_TRUE(hp.ok());
  absl::StatusOr<int> fd = ConnectTcp(*hp, 1000);
  ASSERT_TRUE(fd.ok());
  // Says nothing; the server gives up after io_timeout_ms (2 s) and closes.
  char byte;
  const absl::Time start = absl::Now();
  struct timeval tv{6, 0};
  setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  const ssize_t n = recv(*fd, &byte, 1, 0);
  EXPECT_LE(n, 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  close(*fd);
}

// A stopped task: its kernel completes the TCP handshake (the socket
// listens) but nothing answers the TLS handshake. A probe with a 300 ms
// deadline fails after the least connect time (1 s), not after
// connect_timeout_ms (5 s here).
TEST_F(TlsTest, ShortCallToAStoppedTaskFailsWithinItsOwnDeadline) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 8), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string silent = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));

  RpcOptions options = Client(kClientIdentity);
  options.connect_timeout_ms = 5000;
  WorkerStub stub(kWorker, silent, options);
  const absl::Time start = absl::Now();
  absl::StatusOr<rpc::WorkerStatus> status = stub.GetStatus(300);
  const absl::Duration took = absl::Now() - start;
  close(listener);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), absl::StatusCode::kDeadlineExceeded) << status.status();
  EXPECT_TRUE(absl::StrContains(status.status().message(), kWorker)) << status.status();
  EXPECT_TRUE(absl::StrContains(status.status().message(), "handshake")) << status.status();
  EXPECT_GE(took, absl::Milliseconds(900));
  EXPECT_LT(took, absl::Milliseconds(2500));
}

}  // namespace
}  // namespace sluice
