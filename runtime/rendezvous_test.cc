// LocalRendezvous: keys, hand-over in either order without copies, errors,
// abort and destruction with receivers still waiting.
#include "runtime/rendezvous.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

bool Contains(const absl::Status& s, const std::string& needle) {
  return std::string(s.message()).find(needle) != std::string::npos;
}

// What a receiver was called with; `calls` counts the calls.
struct Received {
  int calls = 0;
  absl::Status status;
  Tensor value;
};

Rendezvous::DoneCallback Into(Received* r) {
  return [r](absl::Status s, Tensor t) {
    ++r->calls;
    r->status = std::move(s);
    r->value = std::move(t);
  };
}

TEST(RendezvousTest, KeyRoundTrip) {
  const std::string key = Rendezvous::CreateKey(42, kCpu0, 0xabcdef12345ULL, kCpu1, "edge_7_x:0");
  EXPECT_EQ(key, absl::StrCat("42;", kCpu0, ";abcdef12345;", kCpu1, ";edge_7_x:0;0:0"));
  absl::StatusOr<Rendezvous::ParsedKey> parsed = Rendezvous::ParseKey(key);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->step_id, 42);
  EXPECT_EQ(parsed->src_device, kCpu0);
  EXPECT_EQ(parsed->src_incarnation, 0xabcdef12345ULL);
  EXPECT_EQ(parsed->dst_device, kCpu1);
  EXPECT_EQ(parsed->tensor_name, "edge_7_x:0");
  // Negative step ids and the largest incarnation survive the trip too.
  parsed = Rendezvous::ParseKey(Rendezvous::CreateKey(-3, "a", ~0ULL, "b", "t"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->step_id, -3);
  EXPECT_EQ(parsed->src_incarnation, ~0ULL);
  // A transfer inside a loop: frame id (hex) and iteration.
  parsed = Rendezvous::ParseKey(Rendezvous::CreateKey(5, "a", 1, "b", "t", {0xfeedULL, 17}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->frame_iter.frame_id, 0xfeedULL);
  EXPECT_EQ(parsed->frame_iter.iter, 17);
}

TEST(RendezvousTest, DifferentPartsMakeDifferentKeys) {
  const std::string base = Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "t");
  EXPECT_NE(base, Rendezvous::CreateKey(2, kCpu0, 1, kCpu1, "t"));
  EXPECT_NE(base, Rendezvous::CreateKey(1, kCpu1, 1, kCpu1, "t"));
  EXPECT_NE(base, Rendezvous::CreateKey(1, kCpu0, 2, kCpu1, "t"));
  EXPECT_NE(base, Rendezvous::CreateKey(1, kCpu0, 1, kCpu0, "t"));
  EXPECT_NE(base, Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "u"));
  EXPECT_NE(base, Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "t", {7, 0}));
  EXPECT_NE(Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "t", {7, 0}),
            Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "t", {7, 1}));
}

TEST(RendezvousTest, ADeadTensorIsHandedOverAsDead) {
  LocalRendezvous rendezvous;
  const std::string key = Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "t", {3, 2});
  ASSERT_TRUE(rendezvous.Send(key, Tensor()).ok());
  Received got;
  rendezvous.RecvAsync(key, Into(&got));
  ASSERT_EQ(got.calls, 1);
  EXPECT_TRUE(got.status.ok()) << got.status;
  EXPECT_TRUE(IsDeadValue(got.value));
  EXPECT_FALSE(IsDeadValue(Tensor::Scalar<float>(0)));
}

TEST(RendezvousTest, BadKeysAreInvalidArgumentNamingTheKey) {
  for (const char* bad : {"", "garbage", "1;a;1;b", "x;a;1;b;t;0:0", "1;a;zz;b;t;0:0",
                          "1;;1;b;t;0:0", "1;a;1;;t;0:0", "1;a;1;b;;0:0", "1.5;a;1;b;t;0:0",
                          "1;a;1;b;t", "1;a;1;b;t;0", "1;a;1;b;t;zz:0", "1;a;1;b;t;0:x",
                          "1;a;1;b;t;0:0;extra"}) {
    absl::StatusOr<Rendezvous::ParsedKey> parsed = Rendezvous::ParseKey(bad);
    ASSERT_FALSE(parsed.ok()) << "'" << bad << "' parsed";
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << parsed.status();
    EXPECT_TRUE(Contains(parsed.status(), absl::StrCat("'", bad, "'"))) << parsed.status();
  }
}

TEST(RendezvousTest, SendThenRecvHandsOverTheSameBuffer) {
  LocalRendezvous rendezvous;
  const std::string key = Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "x");
  Tensor t = Tensor::FromVector<float>({1, 2, 3});
  ASSERT_TRUE(rendezvous.Send(key, t).ok());
  Received got;
  rendezvous.RecvAsync(key, Into(&got));  // already sent: called at once
  ASSERT_EQ(got.calls, 1);
  ASSERT_TRUE(got.status.ok()) << got.status;
  EXPECT_EQ(got.value.raw_data(), t.raw_data());
  EXPECT_EQ(got.value.flat<float>()[2], 3.0f);
  EXPECT_FALSE(rendezvous.aborted());
}

TEST(RendezvousTest, RecvThenSendHandsOverTheSameBuffer) {
  LocalRendezvous rendezvous;
  const std::string key = Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "x");
  Received got;
  rendezvous.RecvAsync(key, Into(&got));
  EXPECT_EQ(got.calls, 0);  // waits for the Send
  Tensor t = Tensor::FromVector<float>({4, 5});
  ASSERT_TRUE(rendezvous.Send(key, t).ok());
  ASSERT_EQ(got.calls, 1);
  ASSERT_TRUE(got.status.ok()) << got.status;
  EXPECT_EQ(got.value.raw_data(), t.raw_data());
  EXPECT_EQ(got.value.flat<float>()[1], 5.0f);
}

TEST(RendezvousTest, KeysAreIndependent) {
  LocalRendezvous rendezvous;
  const std::string a = Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "a");
  const std::string b = Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "b");
  const std::string a2 = Rendezvous::CreateKey(2, kCpu0, 1, kCpu1, "a");  // next step
  Received got_a, got_b, got_a2;
  rendezvous.RecvAsync(a, Into(&got_a));
  rendezvous.RecvAsync(a2, Into(&got_a2));
  ASSERT_TRUE(rendezvous.Send(b, Tensor::Scalar<float>(2)).ok());
  EXPECT_EQ(got_a.calls, 0);
  EXPECT_EQ(got_a2.calls, 0);
  ASSERT_TRUE(rendezvous.Send(a2, Tensor::Scalar<float>(3)).ok());
  EXPECT_EQ(got_a.calls, 0);
  ASSERT_EQ(got_a2.calls, 1);
  EXPECT_EQ(got_a2.value.scalar<float>(), 3.0f);
  rendezvous.RecvAsync(b, Into(&got_b));
  ASSERT_EQ(got_b.calls, 1);
  EXPECT_EQ(got_b.value.scalar<float>(), 2.0f);
  ASSERT_TRUE(rendezvous.Send(a, Tensor::Scalar<float>(1)).ok());
  ASSERT_EQ(got_a.calls, 1);
  EXPECT_EQ(got_a.value.scalar<float>(), 1.0f);
}

TEST(RendezvousTest, DuplicateSendIsAnErrorNamingTheKey) {
  const std::string key = Rendezvous::CreateKey(7, kCpu0, 1, kCpu1, "dup");
  {
    LocalRendezvous rendezvous;  // both sends before any receive
    ASSERT_TRUE(rendezvous.Send(key, Tensor::Scalar<float>(1)).ok());
    absl::Status s = rendezvous.Send(key, Tensor::Scalar<float>(2));
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(Contains(s, key)) << s;
    EXPECT_TRUE(Contains(s, "sent twice")) << s;
    Received got;  // the first value is the one received
    rendezvous.RecvAsync(key, Into(&got));
    ASSERT_EQ(got.calls, 1);
    EXPECT_EQ(got.value.scalar<float>(), 1.0f);
  }
  {
    LocalRendezvous rendezvous;  // the first send went straight to a waiter
    Received got;
    rendezvous.RecvAsync(key, Into(&got));
    ASSERT_TRUE(rendezvous.Send(key, Tensor::Scalar<float>(1)).ok());
    ASSERT_EQ(got.calls, 1);
    absl::Status s = rendezvous.Send(key, Tensor::Scalar<float>(2));
    EXPECT_FALSE(s.ok()) << "a key sent twice must be refused, even after it was received";
    EXPECT_TRUE(Contains(s, key)) << s;
    EXPECT_EQ(got.calls, 1);
  }
}

TEST(RendezvousTest, DuplicateRecvIsAnErrorNamingTheKey) {
  LocalRendezvous rendezvous;
  const std::string key = Rendezvous::CreateKey(7, kCpu0, 1, kCpu1, "twice");
  Received first, second;
  rendezvous.RecvAsync(key, Into(&first));
  rendezvous.RecvAsync(key, Into(&second));
  ASSERT_EQ(second.calls, 1);
  EXPECT_FALSE(second.status.ok());
  EXPECT_TRUE(Contains(second.status, key)) << second.status;
  EXPECT_TRUE(Contains(second.status, "received twice")) << second.status;
  EXPECT_EQ(first.calls,
            0);  // the first receiver still waits, and gets the value
  ASSERT_TRUE(rendezvous.Send(key, Tensor::Scalar<float>(9)).ok());
  ASSERT_EQ(first.calls, 1);
  EXPECT_EQ(first.value.scalar<float>(), 9.0f);
  // A receiver coming after the value was handed over is refused too, rather
  // than left waiting for a second Send that will not come.
  Received third;
  rendezvous.RecvAsync(key, Into(&third));
  ASSERT_EQ(third.calls, 1);
  EXPECT_TRUE(Contains(third.status, "received twice")) << third.status;

  const std::string sent_first = Rendezvous::CreateKey(7, kCpu0, 1, kCpu1, "sent_first");
  ASSERT_TRUE(rendezvous.Send(sent_first, Tensor::Scalar<float>(1)).ok());
  Received a, b;
  rendezvous.RecvAsync(sent_first, Into(&a));
  rendezvous.RecvAsync(sent_first, Into(&b));
  ASSERT_EQ(a.calls, 1);
  EXPECT_TRUE(a.status.ok()) << a.status;
  ASSERT_EQ(b.calls, 1);
  EXPECT_TRUE(Contains(b.status, "received twice")) << b.status;
  EXPECT_TRUE(Contains(b.status, sent_first)) << b.status;
}

TEST(RendezvousTest, AbortFailsWaitingAndLaterReceiversAndSends) {
  LocalRendezvous rendezvous;
  const std::string k1 = Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "a");
  const std::string k2 = Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "b");
  const std::string k3 = Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "c");
  Received waiting;
  rendezvous.RecvAsync(k1, Into(&waiting));
  ASSERT_TRUE(rendezvous.Send(k3, Tensor::Scalar<float>(1)).ok());  // sent, never received
  const absl::Status cause = absl::InvalidArgumentError("node 'mm' (MatMul): bad shapes");
  rendezvous.StartAbort(cause);
  EXPECT_TRUE(rendezvous.aborted());
  EXPECT_EQ(rendezvous.abort_status(), cause);
  ASSERT_EQ(waiting.calls, 1);
  EXPECT_EQ(waiting.status, cause);
  EXPECT_FALSE(waiting.value.IsInitialized());

  Received later;
  rendezvous.RecvAsync(k2, Into(&later));
  ASSERT_EQ(later.calls, 1);
  EXPECT_EQ(later.status, cause);
  Received after_send;  // a value sent before the abort is not handed out after it
  rendezvous.RecvAsync(k3, Into(&after_send));
  ASSERT_EQ(after_send.calls, 1);
  EXPECT_EQ(after_send.status, cause);
  EXPECT_EQ(rendezvous.Send(k2, Tensor::Scalar<float>(1)), cause);

  // The first abort's status sticks.
  rendezvous.StartAbort(absl::InternalError("second"));
  EXPECT_EQ(rendezvous.abort_status(), cause);
  EXPECT_EQ(waiting.calls, 1);  // not called again
}

TEST(RendezvousTest, AbortWithOkStatusStillCancels) {
  LocalRendezvous rendezvous;
  Received waiting;
  rendezvous.RecvAsync(Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "a"), Into(&waiting));
  rendezvous.StartAbort(absl::OkStatus());
  EXPECT_TRUE(rendezvous.aborted());
  ASSERT_EQ(waiting.calls, 1);
  EXPECT_EQ(waiting.status.code(), absl::StatusCode::kCancelled) << waiting.status;
  EXPECT_EQ(rendezvous.abort_status().code(), absl::StatusCode::kCancelled);
}

TEST(RendezvousTest, DestructionTellsWaitingReceivers) {
  Received waiting;
  {
    LocalRendezvous rendezvous;
    rendezvous.RecvAsync(Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, "never"), Into(&waiting));
    EXPECT_EQ(waiting.calls, 0);
  }
  ASSERT_EQ(waiting.calls, 1);
  EXPECT_FALSE(waiting.status.ok());
  EXPECT_EQ(waiting.status.code(), absl::StatusCode::kCancelled) << waiting.status;
  EXPECT_TRUE(Contains(waiting.status, "destroyed")) << waiting.status;
}

// Many keys sent from one thread and received from another, in opposite
// orders: every receiver is called exactly once with its own value.
TEST(RendezvousTest, ConcurrentSendersAndReceivers) {
  constexpr int kKeys = 2000;
  LocalRendezvous rendezvous;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) {
    keys.push_back(Rendezvous::CreateKey(1, kCpu0, 1, kCpu1, absl::StrCat("t", i)));
  }
  std::vector<std::atomic<int>> calls(kKeys);
  std::vector<std::atomic<int>> values(kKeys);
  std::atomic<int> errors{0};
  std::thread sender([&] {
    for (int i = 0; i < kKeys; ++i) {
      if (!rendezvous.Send(keys[i], Tensor::Scalar<int32_t>(i)).ok()) ++errors;
    }
  });
  std::thread receiver([&] {
    for (int i = kKeys - 1; i >= 0; --i) {
      rendezvous.RecvAsync(keys[i], [&, i](absl::Status s, Tensor t) {
        if (!s.ok()) ++errors;
        if (s.ok()) values[i] = t.scalar<int32_t>();
        ++calls[i];
      });
    }
  });
  sender.join();
  receiver.join();
  EXPECT_EQ(errors.load(), 0);
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ(calls[i].load(), 1) << "key " << i;
    ASSERT_EQ(values[i].load(), i) << "key " << i;
  }
}

}  // namespace
}  // namespace sluice
