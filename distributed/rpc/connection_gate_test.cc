#include "distributed/rpc/connection_gate.h"

#include <dirent.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
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

int ThreadsOfThisProcess() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

int64_t ResidentKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

// Closed by the server within `ms`: a read sees end of stream (or a reset).
bool ClosedWithin(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  const absl::Time deadline = absl::Now() + absl::Milliseconds(ms);
  while (absl::Now() < deadline) {
    if (poll(&p, 1, 20) > 0) {
      char c;
      const ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
      if (n <= 0) return true;
    }
  }
  return false;
}

// Opens `n` TCP connections to `port` that send nothing.
std::vector<int> OpenIdle(int port, int n) {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<int> fd = ConnectTcp(HostPort{"127.0.0.1", port}, 2000);
    EXPECT_TRUE(fd.ok()) << fd.status();
    if (!fd.ok()) break;
    fds.push_back(*fd);
  }
  return fds;
}

void CloseAll(std::vector<int>& fds) {
  for (int fd : fds) close(fd);
  fds.clear();
}

// Connections that send the start of a TLS ClientHello one byte at a time,
// each every `every`, until stopped.
class Tricklers {
 public:
  Tricklers(int port, int n, absl::Duration every) : fds_(OpenIdle(port, n)) {
    thread_ = std::thread([this, every] {
      // A TLS record header (handshake, TLS 1.0 record version, 512 bytes)
      // and then a ClientHello's first bytes: never a complete message.
      const unsigned char hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03,
                                     0x03, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99};
      size_t next = 0;
      while (!stop_.load()) {
        for (int fd : fds_) (void)send(fd, &hello[next % sizeof(hello)], 1, MSG_NOSIGNAL);
        ++next;
        absl::SleepFor(every);
      }
    });
  }
  ~Tricklers() {
    stop_.store(true);
    thread_.join();
    CloseAll(fds_);
  }
  const std::vector<int>& fds() const { return fds_; }

 private:
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class ConnectionGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("gate-tls");
    ASSERT_TRUE(WriteJobCredentials(dir_, {kPs, kWorker}).ok());
    worker_ = std::make_shared<FakeWorker>(kPs);
  }

  std::unique_ptr<ThriftServer> StartServer(ThriftServerOptions opts, bool tls = true) {
    opts.task_name = kPs;
    if (tls) {
      absl::StatusOr<std::shared_ptr<const TlsContext>> loaded = TlsContext::Load(dir_, kPs);
      EXPECT_TRUE(loaded.ok()) << loaded.status();
      opts.tls = *loaded;
    }
    absl::StatusOr<std::unique_ptr<ThriftServer>> s =
        ThriftServer::Start(opts, worker_, nullptr, nullptr);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }

  RpcOptions Member() {
    RpcOptions o;
    absl::StatusOr<std::shared_ptr<const TlsContext>> loaded = TlsContext::Load(dir_, kWorker);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    o.tls = *loaded;
    return o;
  }

  std::string dir_;
  std::shared_ptr<FakeWorker> worker_;
};

// The bar: 1,000 idle and trickling strangers from the member's own
// address, and a member's call still succeeds within a second, while the
// server adds no thread for them and little memory.
TEST_F(ConnectionGateTest, AThousandHostileConnectionsDoNotLockOutAMember) {
  // Opening 1,000 connections takes seconds on a loaded 2-core machine: the
  // strangers' deadline must outlast that, or the first are gone before the
  // last arrive.
  ThriftServerOptions opts;
  opts.auth_timeout_ms = 20000;
  std::unique_ptr<ThriftServer> server = StartServer(opts);
  ASSERT_NE(server, nullptr);
  const int threads_before = ThreadsOfThisProcess();
  const int64_t rss_before = ResidentKiB();
  std::vector<int> idle = OpenIdle(server->port(), 800);
  Tricklers tricklers(server->port(), 200, absl::Milliseconds(50));
  ASSERT_EQ(idle.size() + tricklers.fds().size(), 1000u);
  // Every one of them is waiting in the gate.
  const absl::Time wait_until = absl::Now() + absl::Seconds(2);
  while (server->gate_counts().pending < 1000 && absl::Now() < wait_until) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(server->gate_counts().pending, 1000);

  WorkerStub member(kPs, absl::StrCat("127.0.0.1:", server->port()), Member());
  const absl::Time start = absl::Now();
  absl::StatusOr<rpc::WorkerStatus> status = member.GetStatus(1000);
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_LT(took, absl::Seconds(1));
  EXPECT_EQ(server->served_connections(), 1);  // the member's; no stranger has a thread
  // The test's own trickler thread and the member's pooled connection's
  // server thread are the only new threads.
  EXPECT_LE(ThreadsOfThisProcess() - threads_before, 2);
  EXPECT_LT(ResidentKiB() - rss_before, 64 << 10) << "KiB resident for 1,000 strangers";
  // And once their time is up, every stranger is gone.
  const absl::Time closed_by = absl::Now() + absl::Seconds(30);
  while (server->gate_counts().pending > 0 && absl::Now() < closed_by) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(server->gate_counts().pending, 0);
  EXPECT_GE(server->gate_counts().timed_out, 1000);
  for (int fd : idle) EXPECT_TRUE(ClosedWithin(fd, 100));
  CloseAll(idle);
  EXPECT_TRUE(member.GetStatus(1000).ok());
}

// With the waiting room full, a newcomer closes the connection that has
// waited longest: a member arriving after a flood still gets its handshake.
TEST_F(ConnectionGateTest, TheOldestWaitingConnectionMakesRoom) {
  ThriftServerOptions opts;
  opts.max_pending_connections = 20;
  opts.auth_timeout_ms = 30000;  // only eviction closes them here
  std::unique_ptr<ThriftServer> server = StartServer(opts);
  ASSERT_NE(server, nullptr);
  std::vector<int> first = OpenIdle(server->port(), 20);
  std::vector<int> second = OpenIdle(server->port(), 20);
  for (int fd : first) EXPECT_TRUE(ClosedWithin(fd, 2000));
  for (int fd : second) EXPECT_FALSE(ClosedWithin(fd, 1));
  WorkerStub member(kPs, absl::StrCat("127.0.0.1:", server->port()), Member());
  absl::StatusOr<rpc::WorkerStatus> status = member.GetStatus(1000);
  EXPECT_TRUE(status.ok()) << status.status();
  EXPECT_GE(server->gate_counts().evicted, 21);  // the first 20, and one for the member
  CloseAll(first);
  CloseAll(second);
}

// Silence and a trickle are both closed at the authentication deadline,
// however often the trickle sends a byte.
TEST_F(ConnectionGateTest, SilentAndTricklingPeersAreClosedAtTheAuthDeadline) {
  ThriftServerOptions opts;
  opts.auth_timeout_ms = 500;
  std::unique_ptr<ThriftServer> server = StartServer(opts);
  ASSERT_NE(server, nullptr);
  std::vector<int> silent = OpenIdle(server->port(), 1);
  Tricklers trickling(server->port(), 1, absl::Milliseconds(20));
  const absl::Time start = absl::Now();
  EXPECT_TRUE(ClosedWithin(silent[0], 3000));
  EXPECT_TRUE(ClosedWithin(trickling.fds()[0], 3000));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(400));
  EXPECT_LT(took, absl::Milliseconds(2000));
  EXPECT_EQ(server->gate_counts().timed_out, 2);
  EXPECT_EQ(server->gate_counts().admitted, 0);
  CloseAll(silent);
}

// Plaintext has no handshake: a connection is let through once its first
// frame has arrived (whole, or 16 KiB of it); a frame header alone, or
// bytes that are not Thrift, never reach a thread.
TEST_F(ConnectionGateTest, PlaintextWaitsForTheFirstFrame) {
  ThriftServerOptions opts;
  opts.auth_timeout_ms = 500;
  std::unique_ptr<ThriftServer> server = StartServer(opts, /*tls=*/false);
  ASSERT_NE(server, nullptr);
  std::vector<int> fds = OpenIdle(server->port(), 2);
  // A strict binary message header of a 1000-byte frame, and nothing more.
  const unsigned char partial[] = {0x00, 0x00, 0x03, 0xe8, 0x80, 0x01, 0x00, 0x01};
  ASSERT_EQ(send(fds[0], partial, sizeof(partial), 0), static_cast<ssize_t>(sizeof(partial)));
  const char http[] = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_EQ(send(fds[1], http, sizeof(http) - 1, 0), static_cast<ssize_t>(sizeof(http) - 1));
  EXPECT_TRUE(ClosedWithin(fds[1], 300));  // not Thrift: at once
  EXPECT_EQ(server->served_connections(), 0);
  EXPECT_TRUE(ClosedWithin(fds[0], 2000));  // the deadline
  EXPECT_EQ(server->gate_counts().admitted, 0);
  EXPECT_EQ(server->gate_counts().refused, 1);
  EXPECT_EQ(server->gate_counts().timed_out, 1);
  CloseAll(fds);
  WorkerStub stub(kPs, absl::StrCat("127.0.0.1:", server->port()));
  EXPECT_TRUE(stub.GetStatus(1000).ok());
  EXPECT_EQ(server->gate_counts().admitted, 1);
}

// Once admitted, a request must arrive whole within its frame deadline:
// a peer that sends a byte now and then, each well within the per-read
// timeout, is dropped when the frame's time is up.
TEST_F(ConnectionGateTest, ARequestThatTricklesIsDroppedAtItsFrameDeadline) {
  ThriftServerOptions opts;
  opts.frame_timeout_ms = 300;
  opts.frame_min_bytes_per_s = int64_t{1} << 30;  // the size adds nothing here
  opts.io_timeout_ms = 60000;
  std::unique_ptr<ThriftServer> server = StartServer(opts, /*tls=*/false);
  ASSERT_NE(server, nullptr);
  std::vector<int> fds = OpenIdle(server->port(), 1);
  // A GetStatus call of 100,000 bytes (its arguments carry a long unknown
  // string field, which the server reads to skip it): the first 20,000
  // bytes get it admitted, the rest trickle.
  const uint32_t payload = 100000;
  const uint32_t field = payload - 36;
  std::string start = {0x00, 0x01, static_cast<char>(0x86), static_cast<char>(0xa0),
                       static_cast<char>(0x80), 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10};
  start += "worker:GetStatus";
  start += std::string("\x00\x00\x00\x01\x0b\x00\x01", 7);
  for (int shift : {24, 16, 8, 0}) start.push_back(static_cast<char>((field >> shift) & 0xff));
  ASSERT_EQ(start.size(), 39u);
  start.resize(20000, 'x');
  ASSERT_EQ(send(fds[0], start.data(), start.size(), 0), static_cast<ssize_t>(start.size()));
  const absl::Time begun = absl::Now();
  bool closed = false;
  while (!closed && absl::Now() - begun < absl::Seconds(5)) {
    (void)send(fds[0], "x", 1, MSG_NOSIGNAL);
    closed = ClosedWithin(fds[0], 50);
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(absl::Now() - begun, absl::Seconds(2));
  EXPECT_EQ(server->gate_counts().admitted, 1);
  CloseAll(fds);
}

TEST(OpenFileLimitTest, RaisedToTheHardLimit) {
  rlimit limit;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  const int64_t now = RaiseOpenFileLimit();
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  EXPECT_EQ(limit.rlim_cur, limit.rlim_max);
  EXPECT_EQ(now, limit.rlim_cur == RLIM_INFINITY ? INT64_MAX : static_cast<int64_t>(limit.rlim_cur));
}

}  // namespace
}  // namespace sluice
