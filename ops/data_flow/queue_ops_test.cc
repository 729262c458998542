// The queue ops: FIFO and random-shuffle order, EnqueueMany/DequeueMany,
// blocking on empty and full queues, closing (TensorFlow's messages and codes,
// as fifo_queue_test.py and random_shuffle_queue_test.py check them), a
// dequeue ended by a RunOptions deadline, and a producer step and a consumer
// step in two threads.
#include "ops/data_flow/queue_ops.h"

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class QueueTest : public ::testing::Test {
 protected:
  void Start() {
    ASSERT_TRUE(s_.ok()) << s_.status();
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
    ASSERT_TRUE(sess.ok()) << sess.status();
    sess_ = std::move(*sess);
  }
  absl::Status Enqueue(float v, int64_t timeout_ms = 0) {
    return sess_->Run({{x_, Tensor::Scalar<float>(v)}}, {}, {enqueue_}, {.timeout_in_ms = timeout_ms})
        .status();
  }
  absl::StatusOr<float> Dequeue(int64_t timeout_ms = 0) {
    absl::StatusOr<std::vector<Tensor>> r =
        sess_->Run({}, {dequeued_}, {}, {.timeout_in_ms = timeout_ms});
    if (!r.ok()) return r.status();
    return (*r)[0].scalar<float>();
  }
  int32_t Size() {
    absl::StatusOr<std::vector<Tensor>> r = sess_->Run({}, {size_}, {});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? (*r)[0].scalar<int32_t>() : -1;
  }
  // A float-scalar queue "q" with enqueue, dequeue, size and close nodes.
  void BuildFloatQueue(Output q) {
    x_ = ops::Placeholder(s_.WithOpName("x"), DT_FLOAT);
    enqueue_ = ops::QueueEnqueueV2(s_.WithOpName("enqueue"), q, {x_});
    dequeued_ = ops::QueueDequeueV2(s_.WithOpName("dequeue"), q, {DT_FLOAT})[0];
    size_ = ops::QueueSizeV2(s_.WithOpName("size"), q);
    close_ = ops::QueueCloseV2(s_.WithOpName("close"), q);
    cancel_close_ =
        ops::QueueCloseV2(s_.WithOpName("cancel_close"), q, {.cancel_pending_enqueues = true});
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
  std::unique_ptr<Session> sess_;
  Output x_, dequeued_, size_;
  Node* enqueue_ = nullptr;
  Node* close_ = nullptr;
  Node* cancel_close_ = nullptr;
};

TEST_F(QueueTest, FifoOrderAndSize) {
  BuildFloatQueue(ops::FIFOQueueV2(s_.WithOpName("q"), {DT_FLOAT}, {.capacity = 10}));
  Start();
  for (float v : {1.0f, 2.0f, 3.0f}) ASSERT_TRUE(Enqueue(v).ok());
  EXPECT_EQ(Size(), 3);
  for (float v : {1.0f, 2.0f, 3.0f}) {
    absl::StatusOr<float> got = Dequeue();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, v);
  }
  EXPECT_EQ(Size(), 0);
}

// fifo_queue_test.py testDequeueFromClosedQueue / testEnqueueToClosedQueue.
TEST_F(QueueTest, ClosedQueue) {
  BuildFloatQueue(ops::FIFOQueueV2(s_.WithOpName("q"), {DT_FLOAT}, {.capacity = 10}));
  Start();
  ASSERT_TRUE(Enqueue(5).ok());
  ASSERT_TRUE(sess_->Run({}, {}, {close_}).ok());
  absl::StatusOr<float> got = Dequeue();  // what was enqueued before close still comes out
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 5);
  got = Dequeue();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kOutOfRange) << got.status();
  EXPECT_THAT(std::string(got.status().message()),
              MatchesRegex(".*FIFOQueue '_[0-9]+_q' is closed and has insufficient elements "
                           "\\(requested 1, current size 0\\).*"));
  absl::Status st = Enqueue(6);
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled) << st;
  EXPECT_THAT(st.message(), HasSubstr("is closed."));
}

// As fifo_queue_test.py's testIsClosed: false until closed, then true,
// also while elements remain.
TEST_F(QueueTest, IsClosedTurnsTrueOnClose) {
  Output q = ops::FIFOQueueV2(s_.WithOpName("q"), {DT_FLOAT});
  BuildFloatQueue(q);
  Output is_closed = ops::QueueIsClosedV2(s_.WithOpName("is_closed"), q);
  Start();
  auto closed = [&]() -> absl::StatusOr<bool> {
    absl::StatusOr<std::vector<Tensor>> r = sess_->Run({}, {is_closed}, {});
    if (!r.ok()) return r.status();
    EXPECT_EQ((*r)[0].dtype(), DT_BOOL);
    EXPECT_EQ((*r)[0].shape(), TensorShape());
    return (*r)[0].scalar<bool>();
  };
  absl::StatusOr<bool> c = closed();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(*c);
  ASSERT_TRUE(Enqueue(1).ok());
  ASSERT_TRUE(sess_->Run({}, {}, {close_}).ok());
  c = closed();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(*c);
  EXPECT_EQ(Size(), 1);
}

TEST_F(QueueTest, DequeueOnEmptyQueueEndsAtTheDeadline) {
  BuildFloatQueue(ops::FIFOQueueV2(s_.WithOpName("q"), {DT_FLOAT}));
  Start();
  const absl::Time start = absl::Now();
  absl::StatusOr<float> got = Dequeue(/*timeout_ms=*/100);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded) << got.status();
  EXPECT_GE(took, absl::Milliseconds(90));
  EXPECT_LT(took, absl::Seconds(5));
  // The aborted request left no trace: the next element goes to the next dequeue.
  ASSERT_TRUE(Enqueue(7).ok());
  got = Dequeue(1000);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 7);
}

TEST_F(QueueTest, EnqueueBlocksWhileFull) {
  BuildFloatQueue(ops::FIFOQueueV2(s_.WithOpName("q"), {DT_FLOAT}, {.capacity = 1}));
  Start();
  ASSERT_TRUE(Enqueue(1).ok());
  absl::Status st = Enqueue(2, /*timeout_ms=*/50);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  std::thread producer([&] { EXPECT_TRUE(Enqueue(3).ok()); });
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(Size(), 1);  // the producer waits
  absl::StatusOr<float> got = Dequeue(5000);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 1);
  producer.join();
  got = Dequeue(5000);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 3);
}

TEST_F(QueueTest, CloseCancelsPendingEnqueuesWhenAsked) {
  BuildFloatQueue(ops::FIFOQueueV2(s_.WithOpName("q"), {DT_FLOAT}, {.capacity = 1}));
  Start();
  ASSERT_TRUE(Enqueue(1).ok());
  absl::Status pending;
  std::thread producer([&] { pending = Enqueue(2); });
  absl::SleepFor(absl::Milliseconds(50));
  ASSERT_TRUE(sess_->Run({}, {}, {cancel_close_}).ok());
  producer.join();
  EXPECT_EQ(pending.code(), absl::StatusCode::kCancelled) << pending;
}

TEST_F(QueueTest, CloseWakesWaitingDequeue) {
  BuildFloatQueue(ops::FIFOQueueV2(s_.WithOpName("q"), {DT_FLOAT}));
  Start();
  absl::StatusOr<float> got;
  std::thread consumer([&] { got = Dequeue(); });
  absl::SleepFor(absl::Milliseconds(50));
  ASSERT_TRUE(sess_->Run({}, {}, {close_}).ok());
  consumer.join();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kOutOfRange) << got.status();
}

TEST_F(QueueTest, ProducerAndConsumerStepsHandOver) {
  BuildFloatQueue(ops::FIFOQueueV2(s_.WithOpName("q"), {DT_FLOAT}, {.capacity = 3}));
  Start();
  constexpr int kCount = 50;
  std::vector<float> received;
  std::thread consumer([&] {
    for (int i = 0; i < kCount; ++i) {
      absl::StatusOr<float> got = Dequeue(10000);
      ASSERT_TRUE(got.ok()) << got.status();
      received.push_back(*got);
    }
  });
  std::thread producer([&] {
    for (int i = 0; i < kCount; ++i) ASSERT_TRUE(Enqueue(static_cast<float>(i), 10000).ok());
  });
  producer.join();
  consumer.join();
  ASSERT_EQ(received.size(), kCount);
  for (int i = 0; i < kCount; ++i) EXPECT_EQ(received[i], i);
}

TEST_F(QueueTest, EnqueueManyDequeueMany) {
  Output q = ops::FIFOQueueV2(s_.WithOpName("q"), {DT_FLOAT, DT_INT32},
                              {.shapes = {TensorShape({2}), TensorShape({})}});
  Output a = ops::Const<float>(s_, {1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  Output b = ops::Const<int32_t>(s_, {10, 20, 30}, TensorShape({3}));
  Node* enq = ops::QueueEnqueueManyV2(s_, q, {a, b});
  std::vector<Output> two = ops::QueueDequeueManyV2(s_, q, 2, {DT_FLOAT, DT_INT32});
  std::vector<Output> one = ops::QueueDequeueV2(s_, q, {DT_FLOAT, DT_INT32});
  Output size = ops::QueueSizeV2(s_, q);
  Start();
  ASSERT_TRUE(sess_->Run({}, {}, {enq}).ok());
  absl::StatusOr<std::vector<Tensor>> r = sess_->Run({}, {size}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].scalar<int32_t>(), 3);
  r = sess_->Run({}, {two[0], two[1]}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ((*r)[0].flat<float>()[3], 4.0f);
  EXPECT_EQ((*r)[1].flat<int32_t>()[1], 20);
  r = sess_->Run({}, {one[0], one[1]}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].flat<float>()[1], 6.0f);
  EXPECT_EQ((*r)[1].scalar<int32_t>(), 30);
}

TEST_F(QueueTest, WrongComponentsAreInvalidArgument) {
  Output q = ops::FIFOQueueV2(s_.WithOpName("q"), {DT_FLOAT}, {.shapes = {TensorShape({2})}});
  Node* bad_shape = ops::QueueEnqueueV2(s_, q, {ops::Const<float>(s_, {1, 2, 3})});
  Node* bad_type = ops::QueueEnqueueV2(s_, q, {ops::Const<int32_t>(s_, {1, 2})});
  Node* bad_many = ops::QueueEnqueueManyV2(s_, q, {ops::Const(s_, 1.0f)});
  Start();
  absl::Status st = sess_->Run({}, {}, {bad_shape}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("Shape mismatch in tuple component 0"));
  st = sess_->Run({}, {}, {bad_type}).status();
  EXPECT_THAT(st.message(), HasSubstr("Type mismatch in tuple component 0"));
  st = sess_->Run({}, {}, {bad_many}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
}

// random_shuffle_queue_test.py: every element comes out once; until closed,
// min_after_dequeue elements stay behind.
TEST_F(QueueTest, RandomShuffleQueue) {
  BuildFloatQueue(ops::RandomShuffleQueueV2(s_.WithOpName("q"), {DT_FLOAT},
                                            {.capacity = 20, .min_after_dequeue = 5, .seed = 7}));
  Start();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Enqueue(static_cast<float>(i)).ok());
  std::vector<float> got;
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<float> v = Dequeue(1000);
    ASSERT_TRUE(v.ok()) << v.status();
    got.push_back(*v);
  }
  absl::StatusOr<float> blocked = Dequeue(/*timeout_ms=*/50);
  EXPECT_EQ(blocked.status().code(), absl::StatusCode::kDeadlineExceeded) << blocked.status();
  ASSERT_TRUE(sess_->Run({}, {}, {close_}).ok());
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<float> v = Dequeue(1000);
    ASSERT_TRUE(v.ok()) << v.status();
    got.push_back(*v);
  }
  absl::StatusOr<float> done = Dequeue(1000);
  EXPECT_EQ(done.status().code(), absl::StatusCode::kOutOfRange) << done.status();
  EXPECT_THAT(done.status().message(), HasSubstr("RandomShuffleQueue '_"));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

}  // namespace
}  // namespace sluice
