#include "runtime/collective/mailbox.h"

#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

constexpr char kA[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kB[] = "/job:worker/replica:0/task:1/device:CPU:0";

// Collects one Recv result.
struct Got {
  absl::Notification done;
  std::optional<absl::StatusOr<Tensor>> value;
  std::function<void(absl::StatusOr<Tensor>)> Callback() {
    return [this](absl::StatusOr<Tensor> v) {
      value = std::move(v);
      done.Notify();
    };
  }
  bool WaitFor(absl::Duration d) { return done.WaitForNotificationWithTimeout(d); }
};

TEST(CollectiveMailboxTest, SendBeforeRecv) {
  CollectiveMailbox box;
  absl::Status sent = absl::UnknownError("not called");
  box.Send(kB, "g1/i1/n0/x", Tensor::FromVector<float>({1, 2, 3}), 1000,
           [&](absl::Status s) { sent = s; });
  EXPECT_TRUE(sent.ok()) << sent;
  EXPECT_EQ(box.PendingValues(), 1u);
  Got got;
  box.Recv(kA, kB, "g1/i1/n0/x", 1000, got.Callback());
  ASSERT_TRUE(got.WaitFor(absl::Seconds(1)));
  ASSERT_TRUE(got.value->ok()) << got.value->status();
  EXPECT_EQ((*got.value)->flat<float>()[2], 3.0f);
  EXPECT_EQ(box.PendingValues(), 0u);
}

TEST(CollectiveMailboxTest, RecvBeforeSend) {
  CollectiveMailbox box;
  Got got;
  box.Recv(kA, kB, "k", 1000, got.Callback());
  EXPECT_FALSE(got.done.HasBeenNotified());
  ASSERT_TRUE(box.Deliver(kB, "k", Tensor::Scalar<int64_t>(42)).ok());
  ASSERT_TRUE(got.WaitFor(absl::Seconds(1)));
  ASSERT_TRUE(got.value->ok());
  EXPECT_EQ((*got.value)->scalar<int64_t>(), 42);
  EXPECT_EQ(box.PendingValues(), 0u);
}

// Values nobody receives are capped in count and bytes: past either cap a
// delivery is refused with an error for its sender, and a receive makes
// room again. A value a receiver waits for is handed over, never counted.
TEST(CollectiveMailboxTest, UnreceivedValuesAreCappedInCountAndBytes) {
  MailboxLimits limits;
  limits.max_values = 2;
  limits.max_bytes = 64;
  CollectiveMailbox box(CollectiveMailbox::kDefaultRetention, limits);
  const Tensor four_floats = Tensor::FromVector<float>({1, 2, 3, 4});  // 16 bytes
  ASSERT_TRUE(box.Deliver(kB, "a", four_floats, "/job:worker/replica:0/task:0").ok());
  ASSERT_TRUE(box.Deliver(kB, "b", four_floats).ok());
  EXPECT_EQ(box.PendingBytes(), 32);
  absl::Status third = box.Deliver(kB, "c", four_floats, "/job:worker/replica:0/task:0");
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted) << third;
  EXPECT_TRUE(absl::StrContains(third.message(), "from /job:worker/replica:0/task:0")) << third;
  EXPECT_TRUE(absl::StrContains(third.message(), "2 values (32 bytes)")) << third;
  Got got;
  box.Recv(kA, kB, "a", 1000, got.Callback());
  ASSERT_TRUE(got.WaitFor(absl::Seconds(1)));
  ASSERT_TRUE(got.value->ok()) << got.value->status();
  EXPECT_EQ(box.PendingBytes(), 16);
  // Room for one more value, but not for 64 more bytes.
  const Tensor sixteen_floats = Tensor::FromVector<float>(std::vector<float>(16, 1.0f));
  absl::Status big = box.Deliver(kB, "c", sixteen_floats);
  EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted) << big;
  ASSERT_TRUE(box.Deliver(kB, "c", four_floats).ok());
  // A receiver already waiting takes a value past the caps.
  Got waiting;
  box.Recv(kA, kB, "d", 1000, waiting.Callback());
  ASSERT_TRUE(box.Deliver(kB, "d", sixteen_floats).ok());
  ASSERT_TRUE(waiting.WaitFor(absl::Seconds(1)));
  EXPECT_TRUE(waiting.value->ok());
  // An abort forgets the values and their bytes.
  box.Abort("", absl::CancelledError("step ended"));
  EXPECT_EQ(box.PendingValues(), 0u);
  EXPECT_EQ(box.PendingBytes(), 0);
}

TEST(CollectiveMailboxTest, KeysAreSeparatePerDevice) {
  CollectiveMailbox box;
  ASSERT_TRUE(box.Deliver(kA, "k", Tensor::Scalar<int32_t>(1)).ok());
  ASSERT_TRUE(box.Deliver(kB, "k", Tensor::Scalar<int32_t>(2)).ok());
  absl::Status twice = box.Deliver(kB, "k", Tensor::Scalar<int32_t>(3));
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition) << twice;
  Got a, b;
  box.Recv(kB, kA, "k", 1000, a.Callback());
  box.Recv(kA, kB, "k", 1000, b.Callback());
  ASSERT_TRUE(a.WaitFor(absl::Seconds(1)) && b.WaitFor(absl::Seconds(1)));
  EXPECT_EQ((*a.value)->scalar<int32_t>(), 1);
  EXPECT_EQ((*b.value)->scalar<int32_t>(), 2);
}

TEST(CollectiveMailboxTest, DeadlineNamesTheSender) {
  Got slow, fast;  // outlive the box, which cancels `slow` when destroyed
  CollectiveMailbox box;
  const absl::Time start = absl::Now();
  box.Recv(kB, kA, "g1/i1/n0/slow", 5000, slow.Callback());
  box.Recv(kB, kA, "g1/i1/n0/hdr", 80, fast.Callback());  // earlier deadline, later Recv
  ASSERT_TRUE(fast.WaitFor(absl::Seconds(3)));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(75));
  EXPECT_LT(took, absl::Seconds(2));
  ASSERT_FALSE(fast.value->ok());
  const absl::Status& s = fast.value->status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(s.message(),
            absl::StrCat("collective: no message 'g1/i1/n0/hdr' from ", kB, " within 80 ms"));
  EXPECT_FALSE(slow.done.HasBeenNotified());
  // A value arriving after the deadline waits for a receiver.
  ASSERT_TRUE(box.Deliver(kA, "g1/i1/n0/hdr", Tensor::Scalar<int32_t>(1)).ok());
  EXPECT_EQ(box.PendingValues(), 1u);
}

TEST(CollectiveMailboxTest, AbortByPrefix) {
  CollectiveMailbox box;
  Got waiting, other, sibling;
  box.Recv(kB, kA, "g1/i1/n0/rs/s0/c0", 5000, waiting.Callback());
  box.Recv(kB, kA, "g1/i2/n0/rs/s0/c0", 5000, other.Callback());
  box.Recv(kB, kA, "g1/i10/n0/x", 5000, sibling.Callback());
  ASSERT_TRUE(box.Deliver(kA, "g1/i1/n0/ag/s0/c0", Tensor::Scalar<float>(1)).ok());
  ASSERT_TRUE(box.Deliver(kA, "g1/i2/n0/ag/s0/c0", Tensor::Scalar<float>(1)).ok());
  EXPECT_EQ(box.PendingValues(), 2u);

  box.Abort("g1/i1/", absl::InternalError("rank 1 broke"));
  ASSERT_TRUE(waiting.WaitFor(absl::Seconds(1)));
  EXPECT_EQ(waiting.value->status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(waiting.value->status().message(), "rank 1 broke");
  EXPECT_EQ(box.PendingValues(), 1u);  // the aborted one dropped
  EXPECT_FALSE(other.done.HasBeenNotified());
  EXPECT_FALSE(sibling.done.HasBeenNotified());  // "g1/i10/" is not under "g1/i1/"

  // Later Recv under the prefix fails at once; later Deliver is dropped.
  Got late;
  box.Recv(kB, kA, "g1/i1/n1/hdr", 5000, late.Callback());
  ASSERT_TRUE(late.done.HasBeenNotified());
  EXPECT_EQ(late.value->status().message(), "rank 1 broke");
  EXPECT_TRUE(box.Deliver(kA, "g1/i1/n2/hdr", Tensor::Scalar<float>(1)).ok());
  EXPECT_EQ(box.PendingValues(), 1u);

  ASSERT_TRUE(box.Deliver(kA, "g1/i2/n0/rs/s0/c0", Tensor::Scalar<float>(5)).ok());
  ASSERT_TRUE(other.WaitFor(absl::Seconds(1)));
  EXPECT_TRUE(other.value->ok());
  box.Abort("g1/", absl::AbortedError("reset"));
  ASSERT_TRUE(sibling.WaitFor(absl::Seconds(1)));
  EXPECT_EQ(sibling.value->status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(box.PendingValues(), 0u);
}

TEST(CollectiveMailboxTest, DestructorCancelsPendingRecvs) {
  auto box = std::make_unique<CollectiveMailbox>();
  Got got;
  box->Recv(kB, kA, "g3/i1/n0/hdr", 60000, got.Callback());
  box.reset();
  ASSERT_TRUE(got.done.HasBeenNotified());
  EXPECT_EQ(got.value->status().code(), absl::StatusCode::kCancelled);
  EXPECT_NE(got.value->status().message().find("g3/i1/n0/hdr"), absl::string_view::npos);
}

TEST(CollectiveMailboxTest, SecondRecvOfAKeyFails) {
  CollectiveMailbox box;
  Got first, second;
  box.Recv(kB, kA, "k", 5000, first.Callback());
  box.Recv(kB, kA, "k", 5000, second.Callback());
  ASSERT_TRUE(second.done.HasBeenNotified());
  EXPECT_EQ(second.value->status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(box.Deliver(kA, "k", Tensor::Scalar<float>(2)).ok());
  ASSERT_TRUE(first.WaitFor(absl::Seconds(1)));
  EXPECT_TRUE(first.value->ok());
}

TEST(CollectiveMailboxTest, LandingIsTakenOnceAndForgottenOnDelivery) {
  CollectiveMailbox box;
  Tensor result = Tensor::FromVector<float>({0, 0, 0, 0});
  absl::StatusOr<Tensor> piece = result.Reshaped(TensorShape({4}));
  ASSERT_TRUE(piece.ok());
  box.ExpectInto(kA, "g1/i1/n0/ag/s0/c0", *piece);
  EXPECT_EQ(box.PendingLandings(), 1u);
  EXPECT_FALSE(box.TakeLanding(kB, "g1/i1/n0/ag/s0/c0").IsInitialized());  // another member
  Tensor landing = box.TakeLanding(kA, "g1/i1/n0/ag/s0/c0");
  ASSERT_TRUE(landing.IsInitialized());
  EXPECT_TRUE(landing.SharesBufferWith(result));
  EXPECT_FALSE(box.TakeLanding(kA, "g1/i1/n0/ag/s0/c0").IsInitialized());  // once
  EXPECT_EQ(box.LandingsTaken(), 1);
  landing.flat<float>()[1] = 5;  // what a server reading the push does
  Got got;
  box.Recv(kB, kA, "g1/i1/n0/ag/s0/c0", 1000, got.Callback());
  ASSERT_TRUE(box.Deliver(kA, "g1/i1/n0/ag/s0/c0", landing).ok());
  ASSERT_TRUE(got.WaitFor(absl::Seconds(1)));
  ASSERT_TRUE(got.value->ok());
  EXPECT_EQ((*got.value)->raw_data(), result.raw_data());
  EXPECT_EQ(result.flat<float>()[1], 5.0f);

  // A landing nobody took goes when its key is delivered another way.
  box.ExpectInto(kA, "g1/i1/n0/ag/s1/c0", *piece);
  ASSERT_TRUE(box.Deliver(kA, "g1/i1/n0/ag/s1/c0", Tensor::FromVector<float>({1, 2, 3, 4})).ok());
  EXPECT_EQ(box.PendingLandings(), 0u);
  // No landing for a value already here (the receive takes it as it is).
  box.ExpectInto(kA, "g1/i1/n0/ag/s1/c0", *piece);
  EXPECT_EQ(box.PendingLandings(), 0u);
}

TEST(CollectiveMailboxTest, AbortAndDropForgetLandings) {
  CollectiveMailbox box;
  Tensor result = Tensor::FromVector<float>({0, 0});
  box.ExpectInto(kA, "g1/i1/n0/ag/s0/c0", result);
  box.ExpectInto(kA, "g1/i1/n0/ag/s0/c1", result);
  box.ExpectInto(kA, "g1/i2/n0/ag/s0/c0", result);
  EXPECT_FALSE(result.RefCountIsOne());
  box.Abort("g1/i1/", absl::AbortedError("peer died"));
  EXPECT_EQ(box.PendingLandings(), 1u);
  box.ExpectInto(kA, "g1/i1/n0/ag/s1/c0", result);  // aborted prefix: refused
  EXPECT_EQ(box.PendingLandings(), 1u);
  box.DropLanding(kA, "g1/i2/n0/ag/s0/c0");
  EXPECT_EQ(box.PendingLandings(), 0u);
  EXPECT_TRUE(result.RefCountIsOne());  // nothing keeps the result's buffer
  EXPECT_EQ(box.LandingsTaken(), 0);
}

TEST(CollectiveMailboxTest, AbortNoticeAbortsThePrefixWithItsStatus) {
  CollectiveMailbox box;
  Got waiting, other;
  box.Recv(kB, kA, "g1/i1/n0/rs/s1/c0", 5000, waiting.Callback());
  box.Recv(kB, kA, "g1/i2/n0/rs/s1/c0", 5000, other.Callback());
  const absl::Status why = absl::UnavailableError("task 2 is unreachable");
  ASSERT_TRUE(
      box.Deliver(kA, CollectiveMailbox::AbortKey("g1/i1/n0/"), CollectiveMailbox::AbortNotice(why))
          .ok());
  ASSERT_TRUE(waiting.WaitFor(absl::Seconds(1)));
  EXPECT_EQ(waiting.value->status(), why);
  EXPECT_FALSE(other.done.HasBeenNotified());
  EXPECT_EQ(box.PendingValues(), 0u);  // a notice is not a value

  // A malformed notice still aborts its prefix, as Internal.
  ASSERT_TRUE(box.Deliver(kA, CollectiveMailbox::AbortKey("g1/i2/"), Tensor::Scalar<float>(1)).ok());
  ASSERT_TRUE(other.WaitFor(absl::Seconds(1)));
  EXPECT_EQ(other.value->status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(other.value->status().message().find("malformed abort notice"), std::string::npos);
}

TEST(CollectiveMailboxTest, AbortedPrefixesAndUnreceivedValuesExpire) {
  CollectiveMailbox box(absl::Milliseconds(100));
  box.Abort("g1/i1/", absl::AbortedError("reset"));
  ASSERT_TRUE(box.Deliver(kA, "g1/i2/n0/hdr", Tensor::Scalar<float>(1)).ok());
  EXPECT_EQ(box.AbortedPrefixes(), 1u);
  EXPECT_EQ(box.PendingValues(), 1u);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while ((box.AbortedPrefixes() > 0 || box.PendingValues() > 0) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(box.AbortedPrefixes(), 0u);
  EXPECT_EQ(box.PendingValues(), 0u);
  // Forgotten means usable again.
  Got late;
  box.Recv(kB, kA, "g1/i1/n5/hdr", 5000, late.Callback());
  EXPECT_FALSE(late.done.HasBeenNotified());
  ASSERT_TRUE(box.Deliver(kA, "g1/i1/n5/hdr", Tensor::Scalar<float>(2)).ok());
  ASSERT_TRUE(late.WaitFor(absl::Seconds(1)));
  EXPECT_TRUE(late.value->ok());
}

TEST(CollectiveMailboxTest, AbortedPrefixesAreBounded) {
  CollectiveMailbox box;
  for (size_t i = 0; i < CollectiveMailbox::kMaxAbortedPrefixes + 10; ++i) {
    box.Abort(absl::StrCat("g", i, "/"), absl::AbortedError("reset"));
  }
  EXPECT_EQ(box.AbortedPrefixes(), CollectiveMailbox::kMaxAbortedPrefixes);
}

}  // namespace
}  // namespace sluice
