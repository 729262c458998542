#include "distributed/rpc/framed_transport.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransportException.h>

#include "distributed/rpc/socket_util.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using apache::thrift::TConfiguration;
using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::protocol::TBinaryProtocolT;
using apache::thrift::protocol::TMessageType;
using apache::thrift::transport::TFramedTransport;
using apache::thrift::transport::TSocket;
using apache::thrift::transport::TTransport;
using apache::thrift::transport::TTransportException;

// Two ends of a loopback TCP connection.
struct SocketPair {
  std::shared_ptr<TSocket> a, b;
};

SocketPair Connect() {
  int port = 0;
  absl::StatusOr<int> listener = ListenTcp("127.0.0.1", 0, &port);
  EXPECT_TRUE(listener.ok()) << listener.status();
  absl::StatusOr<int> client = ConnectTcp(HostPort{"127.0.0.1", port}, 1000);
  EXPECT_TRUE(client.ok()) << client.status();
  int server = accept(*listener, nullptr, nullptr);
  EXPECT_GE(server, 0);
  close(*listener);
  return SocketPair{std::make_shared<TSocket>(*client), std::make_shared<TSocket>(server)};
}

std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  uint32_t x = 2166136261u ^ static_cast<uint32_t>(seed);
  for (size_t i = 0; i < n; ++i) {
    x = x * 16777619u + 0x9e3779b9u;
    s[i] = static_cast<char>(x >> 24);
  }
  return s;
}

// One message: name, seqid, then a list of strings.
void WriteMessage(TBinaryProtocol* p, int seq, const std::vector<std::string>& parts) {
  p->writeMessageBegin("msg", apache::thrift::protocol::T_CALL, seq);
  p->writeI32(static_cast<int32_t>(parts.size()));
  for (const std::string& s : parts) p->writeBinary(s);
  p->writeMessageEnd();
  p->getTransport()->writeEnd();
  p->getTransport()->flush();
}

std::vector<std::string> ReadMessage(TBinaryProtocol* p, int* seq) {
  std::string name;
  TMessageType type;
  p->readMessageBegin(name, type, *seq);
  EXPECT_EQ(name, "msg");
  int32_t n;
  p->readI32(n);
  std::vector<std::string> parts(n);
  for (std::string& s : parts) p->readBinary(s);
  p->readMessageEnd();
  p->getTransport()->readEnd();
  return parts;
}

// Sends `messages` from `writer` (on a thread) while `reader` checks them.
void Exchange(const std::shared_ptr<TTransport>& writer, const std::shared_ptr<TTransport>& reader,
              const std::vector<std::vector<std::string>>& messages) {
  std::thread t([&] {
    TBinaryProtocol p(writer);
    for (size_t i = 0; i < messages.size(); ++i) WriteMessage(&p, static_cast<int>(i), messages[i]);
  });
  TBinaryProtocol p(reader);
  for (size_t i = 0; i < messages.size(); ++i) {
    int seq = -1;
    std::vector<std::string> got = ReadMessage(&p, &seq);
    EXPECT_EQ(seq, static_cast<int>(i));
    ASSERT_EQ(got.size(), messages[i].size());
    for (size_t j = 0; j < got.size(); ++j) {
      ASSERT_TRUE(got[j] == messages[i][j]) << "message " << i << " part " << j;
    }
  }
  t.join();
}

std::vector<std::vector<std::string>> MixedMessages() {
  return {
      {"small"},
      {"a", Pattern(100 << 10, 1), "b", Pattern(20 << 10, 2), ""},  // by-reference between copies
      {Pattern(3 << 20, 3)},
      {},
      {Pattern(70 << 10, 4), Pattern(70 << 10, 5)},
      {Pattern(5000, 6), Pattern(16 << 10, 7)},  // below and at the copy threshold
  };
}

TEST(FramedTransportTest, OursToOurs) {
  SocketPair s = Connect();
  Exchange(std::make_shared<FramedTransport>(s.a), std::make_shared<FramedTransport>(s.b),
           MixedMessages());
}

TEST(FramedTransportTest, StockWriterOurReader) {
  SocketPair s = Connect();
  Exchange(std::make_shared<TFramedTransport>(s.a), std::make_shared<FramedTransport>(s.b),
           MixedMessages());
}

TEST(FramedTransportTest, OurWriterStockReader) {
  SocketPair s = Connect();
  Exchange(std::make_shared<FramedTransport>(s.a), std::make_shared<TFramedTransport>(s.b),
           MixedMessages());
}

TEST(FramedTransportTest, OverHundredMegabytesOnOneConnection) {
  // Thrift 0.17 drops a connection once 100 MB have been read on it; frames
  // of 16 MiB, 9 of them, plus a 64 MiB one, in both directions.
  SocketPair s = Connect();
  auto a = std::make_shared<FramedTransport>(s.a);
  auto b = std::make_shared<FramedTransport>(s.b);
  const std::string chunk = Pattern(16 << 20, 9);
  std::vector<std::vector<std::string>> messages(9, std::vector<std::string>{chunk});
  messages.push_back({Pattern(64 << 20, 10)});
  Exchange(a, b, messages);
  Exchange(b, a, messages);
}

TEST(FramedTransportTest, LargeReadsNeverWaitForBytesPastTheMessage) {
  // Request/reply: after each message the writer waits for an answer, so a
  // reader that waited for more bytes than the message has would stall.
  SocketPair s = Connect();
  s.a->setRecvTimeout(5000);
  s.b->setRecvTimeout(5000);
  auto a = std::make_shared<FramedTransport>(s.a);
  auto b = std::make_shared<FramedTransport>(s.b);
  const std::vector<size_t> sizes = {(4 << 20) + 3, (5 << 20) + 65535, (8 << 20) - 1, 6 << 20};
  std::thread answerer([&] {
    TBinaryProtocol p(b);
    for (size_t i = 0; i < sizes.size(); ++i) {
      int seq;
      std::vector<std::string> got = ReadMessage(&p, &seq);
      WriteMessage(&p, seq, {std::to_string(got.size() == 3 ? got[1].size() : 0)});
    }
  });
  TBinaryProtocol p(a);
  for (size_t i = 0; i < sizes.size(); ++i) {
    // The large string ends a few bytes before the message does.
    WriteMessage(&p, static_cast<int>(i), {"start", Pattern(sizes[i], 20), "end"});
    int seq;
    std::vector<std::string> answer = ReadMessage(&p, &seq);
    ASSERT_EQ(answer.size(), 1u);
    EXPECT_EQ(answer[0], std::to_string(sizes[i]));
  }
  answerer.join();
}

TEST(FramedTransportTest, LargeReadLandsInCallerMemory) {
  SocketPair s = Connect();
  auto writer = std::make_shared<FramedTransport>(s.a);
  auto reader = std::make_shared<FramedTransport>(s.b);
  const std::string payload = Pattern(64 << 20, 11);
  std::thread t([&] {
    writer->write(reinterpret_cast<const uint8_t*>(payload.data()), static_cast<uint32_t>(payload.size()));
    writer->flush();
  });
  std::unique_ptr<uint8_t[]> dest(new uint8_t[payload.size()]);
  reader->readAll(dest.get(), static_cast<uint32_t>(payload.size()));
  EXPECT_EQ(reader->frame_remaining(), 0u);
  EXPECT_EQ(std::memcmp(dest.get(), payload.data(), payload.size()), 0);
  EXPECT_EQ(reader->readEnd(), payload.size() + 4);
  t.join();
}

// WriteKept bytes go out without a copy: the transport holds their keeper
// after flush() (the kernel may still read them) until the peer's next
// frame arrives, and the peer gets them intact, on our reader and on
// Thrift's stock one.
TEST(FramedTransportTest, KeptBytesAreHeldUntilThePeerAnswers) {
  for (bool stock_reader : {false, true}) {
    SCOPED_TRACE(stock_reader ? "stock reader" : "our reader");
    SocketPair s = Connect();
    auto writer = std::make_shared<FramedTransport>(s.a);
    std::shared_ptr<TTransport> reader;
    if (stock_reader) {
      reader = std::make_shared<TFramedTransport>(s.b);
    } else {
      reader = std::make_shared<FramedTransport>(s.b);
    }
    auto payload = std::make_shared<const std::string>(Pattern((8 << 20) + 5, 14));
    std::weak_ptr<const std::string> alive = payload;
    ASSERT_TRUE(writer->WouldKeep(payload->size()));
    std::thread t([&, kept = std::move(payload)]() mutable {
      const std::string& bytes = *kept;
      writer->write(reinterpret_cast<const uint8_t*>("head"), 4);
      writer->WriteKept(reinterpret_cast<const uint8_t*>(bytes.data()),
                        static_cast<uint32_t>(bytes.size()), std::move(kept));
      writer->write(reinterpret_cast<const uint8_t*>("tail"), 4);
      writer->flush();
    });
    std::string got((8 << 20) + 13, '\0');
    reader->readAll(reinterpret_cast<uint8_t*>(got.data()), static_cast<uint32_t>(got.size()));
    reader->readEnd();
    t.join();
    EXPECT_EQ(got.substr(0, 4), "head");
    EXPECT_TRUE(got.substr(4, (8 << 20) + 5) == Pattern((8 << 20) + 5, 14));
    EXPECT_EQ(got.substr((8 << 20) + 9), "tail");
    EXPECT_EQ(writer->kept_for_testing(), 1u);
    EXPECT_FALSE(alive.expired());
    // The peer answers: the writer reads the answer's header and lets go.
    reader->write(reinterpret_cast<const uint8_t*>("ok"), 2);
    reader->flush();
    uint8_t answer[2];
    writer->readAll(answer, 2);
    EXPECT_EQ(writer->kept_for_testing(), 0u);
    EXPECT_TRUE(alive.expired());
  }
}

TEST(FramedTransportTest, SmallKeptWritesAreCopiedAndNotHeld) {
  SocketPair s = Connect();
  auto writer = std::make_shared<FramedTransport>(s.a);
  auto reader = std::make_shared<FramedTransport>(s.b);
  auto payload = std::make_shared<const std::string>(Pattern(100 << 10, 15));
  EXPECT_FALSE(writer->WouldKeep(payload->size()));
  writer->WriteKept(reinterpret_cast<const uint8_t*>(payload->data()),
                    static_cast<uint32_t>(payload->size()), payload);
  writer->flush();
  EXPECT_EQ(writer->kept_for_testing(), 0u);
  std::string got(payload->size(), '\0');
  reader->readAll(reinterpret_cast<uint8_t*>(got.data()), static_cast<uint32_t>(got.size()));
  EXPECT_TRUE(got == *payload);
}

TEST(FramedTransportTest, KeptWriteToAClosedPeerThrowsWithoutSigpipe) {
  // splice() raises SIGPIPE on a closed socket; the default action would
  // end this test. The transport keeps it off the thread.
  SocketPair s = Connect();
  auto writer = std::make_shared<FramedTransport>(s.a);
  s.b->close();
  auto payload = std::make_shared<const std::string>(Pattern(16 << 20, 16));
  EXPECT_THROW(
      {
        for (int i = 0; i < 4; ++i) {
          writer->WriteKept(reinterpret_cast<const uint8_t*>(payload->data()),
                            static_cast<uint32_t>(payload->size()), payload);
          writer->flush();
        }
      },
      TTransportException);
  writer->close();
  EXPECT_EQ(writer->kept_for_testing(), 0u);
}

TEST(FramedTransportTest, WaitForPeerBuffersTheNextFrame) {
  SocketPair s = Connect();
  auto a = std::make_shared<FramedTransport>(s.a);
  auto b = std::make_shared<FramedTransport>(s.b);
  s.b->setRecvTimeout(200);
  EXPECT_EQ(b->WaitForPeer(), FramedTransport::PeerWait::kTimedOut);
  TBinaryProtocol writer(a);
  WriteMessage(&writer, 7, {"hello", Pattern(200 << 10, 17)});
  EXPECT_EQ(b->WaitForPeer(), FramedTransport::PeerWait::kReady);
  EXPECT_GT(b->buffered_bytes(), 0u);
  TBinaryProtocol reader(b);
  int seq = -1;
  std::vector<std::string> got = ReadMessage(&reader, &seq);
  EXPECT_EQ(seq, 7);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[1] == Pattern(200 << 10, 17));
  a->close();
  EXPECT_EQ(b->WaitForPeer(), FramedTransport::PeerWait::kClosed);
}

// Past Thrift 0.17's 100 MiB TConfiguration limit, which a TSocket applies
// to each read it is handed: a 256 MiB frame read in one call.
TEST(FramedTransportTest, FramesPastAHundredMegabytes) {
  SocketPair s = Connect();
  auto writer = std::make_shared<FramedTransport>(s.a);
  auto reader = std::make_shared<FramedTransport>(s.b);
  const std::string payload = Pattern(256 << 20, 13);
  std::thread t([&] {
    writer->write(reinterpret_cast<const uint8_t*>(payload.data()), static_cast<uint32_t>(payload.size()));
    writer->flush();
  });
  std::unique_ptr<uint8_t[]> dest(new uint8_t[payload.size()]);
  reader->readAll(dest.get(), static_cast<uint32_t>(payload.size()));
  EXPECT_EQ(std::memcmp(dest.get(), payload.data(), payload.size()), 0);
  EXPECT_EQ(reader->readEnd(), payload.size() + 4);
  t.join();
}

// A 12-byte request whose method name claims 2 GiB: refused before the
// protocol sizes a string for it (it used to zero-fill 2 GiB first).
TEST(FramedTransportTest, StringsLongerThanTheirFrameAreRefusedBeforeAllocation) {
  SocketPair s = Connect();
  auto reader = std::make_shared<FramedTransport>(s.b);
  // Frame of 8 bytes: version word, then a name length of 0x7fffff00.
  const uint8_t frame[] = {0, 0, 0, 8, 0x80, 0x01, 0x00, 0x01, 0x7f, 0xff, 0xff, 0x00};
  ASSERT_EQ(::write(s.a->getSocketFD(), frame, sizeof(frame)), static_cast<ssize_t>(sizeof(frame)));
  TBinaryProtocolT<FramedTransport> protocol(reader);
  std::string name;
  TMessageType type;
  int32_t seq;
  rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  EXPECT_THROW(protocol.readMessageBegin(name, type, seq), TTransportException);
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 << 10) << "KiB of peak memory grew";
}

TEST(FramedTransportTest, RefusesFramesOverTheLimit) {
  SocketPair s = Connect();
  FramedTransportOptions small;
  small.max_frame_bytes = 1000;
  auto writer = std::make_shared<FramedTransport>(s.a);
  auto reader = std::make_shared<FramedTransport>(s.b, small);
  std::string big = Pattern(2000, 12);
  writer->write(reinterpret_cast<const uint8_t*>(big.data()), static_cast<uint32_t>(big.size()));
  writer->flush();
  uint8_t buf[16];
  try {
    reader->read(buf, sizeof(buf));
    FAIL() << "an oversized frame was accepted";
  } catch (const TTransportException& e) {
    EXPECT_EQ(e.getType(), TTransportException::CORRUPTED_DATA);
    EXPECT_NE(std::string(e.what()).find("2000"), std::string::npos) << e.what();
  }

  auto limited_writer = std::make_shared<FramedTransport>(s.b, small);
  limited_writer->write(reinterpret_cast<const uint8_t*>(big.data()), static_cast<uint32_t>(big.size()));
  EXPECT_THROW(limited_writer->flush(), TTransportException);
  EXPECT_EQ(limited_writer->writeEnd(), 0u);  // the refused frame is dropped
}

TEST(FramedTransportTest, CleanEndOfStreamBetweenFrames) {
  SocketPair s = Connect();
  auto writer = std::make_shared<FramedTransport>(s.a);
  auto reader = std::make_shared<FramedTransport>(s.b);
  writer->write(reinterpret_cast<const uint8_t*>("abcd"), 4);
  writer->flush();
  s.a->close();
  uint8_t buf[4];
  reader->readAll(buf, 4);
  EXPECT_EQ(std::memcmp(buf, "abcd", 4), 0);
  reader->readEnd();
  EXPECT_EQ(reader->read(buf, 4), 0u);
  try {
    reader->readAll(buf, 4);
    FAIL();
  } catch (const TTransportException& e) {
    EXPECT_EQ(e.getType(), TTransportException::END_OF_FILE);
  }
}

TEST(FramedTransportTest, BorrowAndConsumeStayInsideTheFrame) {
  SocketPair s = Connect();
  auto writer = std::make_shared<FramedTransport>(s.a);
  auto reader = std::make_shared<FramedTransport>(s.b);
  writer->write(reinterpret_cast<const uint8_t*>("hello"), 5);
  writer->flush();
  writer->write(reinterpret_cast<const uint8_t*>("world"), 5);
  writer->flush();
  uint8_t first;
  reader->readAll(&first, 1);  // reads the header of frame 1
  uint32_t len = 4;
  const uint8_t* p = reader->borrow(nullptr, &len);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(len, 4u);  // never past the frame's end
  EXPECT_EQ(std::memcmp(p, "ello", 4), 0);
  reader->consume(4);
  len = 1;
  EXPECT_THROW(reader->borrow(nullptr, &len), TTransportException);  // past the frame's end
  reader->readEnd();
  uint8_t rest[5];
  reader->readAll(rest, 5);
  EXPECT_EQ(std::memcmp(rest, "world", 5), 0);
}

TEST(FramedTransportTest, PeekFrameShowsTheFrameInPlace) {
  SocketPair s = Connect();
  auto writer = std::make_shared<FramedTransport>(s.a);
  auto reader = std::make_shared<FramedTransport>(s.b);
  writer->write(reinterpret_cast<const uint8_t*>("hello"), 5);
  writer->flush();
  std::string big(80 << 10, 'b');  // larger than the read buffer
  writer->write(reinterpret_cast<const uint8_t*>(big.data()), static_cast<uint32_t>(big.size()));
  writer->flush();
  s.a->close();

  size_t len = 0;
  const uint8_t* p = reader->PeekFrame(100, &len);  // opens frame 1; never past its end
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(len, 5u);
  EXPECT_EQ(std::memcmp(p, "hello", 5), 0);
  EXPECT_EQ(reader->frame_remaining(), 5u);
  p = reader->PeekFrame(100, &len);  // the same bytes again: nothing was taken
  EXPECT_EQ(len, 5u);
  reader->consume(2);
  p = reader->PeekFrame(100, &len);
  EXPECT_EQ(len, 3u);
  EXPECT_EQ(std::memcmp(p, "llo", 3), 0);
  reader->readEnd();

  p = reader->PeekFrame(1000, &len);  // frame 2: at least the 1000 bytes asked for
  ASSERT_NE(p, nullptr);
  EXPECT_GE(len, 1000u);
  EXPECT_LE(len, 64u << 10);  // at most a buffer's worth
  EXPECT_EQ(reader->frame_remaining(), big.size());
  std::string rest(big.size(), '\0');
  reader->readAll(reinterpret_cast<uint8_t*>(rest.data()), static_cast<uint32_t>(rest.size()));
  EXPECT_EQ(rest, big);
  reader->readEnd();
  EXPECT_EQ(reader->PeekFrame(100, &len), nullptr);  // a clean end of stream
}

// ConsumeFrame takes a wholly buffered frame's rest and closes it; a frame
// not wholly buffered is refused, the stream left as it was.
TEST(FramedTransportTest, ConsumeFrameTakesABufferedFrame) {
  SocketPair s = Connect();
  auto writer = std::make_shared<FramedTransport>(s.a);
  auto reader = std::make_shared<FramedTransport>(s.b);
  std::string big(80 << 10, 'b');  // larger than the read buffer
  for (const std::string& payload : {std::string("first"), big, std::string("third")}) {
    writer->write(reinterpret_cast<const uint8_t*>(payload.data()),
                  static_cast<uint32_t>(payload.size()));
    writer->flush();
  }
  s.a->close();

  size_t len = 0;
  ASSERT_NE(reader->PeekFrame(100, &len), nullptr);
  reader->consume(1);
  reader->ConsumeFrame();
  EXPECT_EQ(reader->frame_remaining(), 0u);
  ASSERT_NE(reader->PeekFrame(100, &len), nullptr);  // the big frame
  EXPECT_THROW(reader->ConsumeFrame(), apache::thrift::transport::TTransportException);
  EXPECT_EQ(reader->frame_remaining(), big.size());
  reader->readEnd();
  const uint8_t* p = reader->PeekFrame(100, &len);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(p), len), "third");
  reader->ConsumeFrame();
  EXPECT_EQ(reader->PeekFrame(100, &len), nullptr);  // a clean end of stream
}

TEST(FramedTransportTest, FactoryWrapsTransports) {
  SocketPair s = Connect();
  FramedTransportFactory factory;
  std::shared_ptr<TTransport> t = factory.getTransport(s.a);
  EXPECT_NE(dynamic_cast<FramedTransport*>(t.get()), nullptr);
}

}  // namespace
}  // namespace sluice
