// The local Session end to end with the built-in ops: feeds, fetches,
// pruning, errors, variables, tracing, placement requests, concurrency.
#include "builtin_session.h"
#include "session/direct_session.h"
#include "runtime/session.h"

#include <thread>

#include "gtest/gtest.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"

namespace sluice {
namespace {

std::unique_ptr<Session> MakeSession(const Scope& s, SessionConfig opts = BuiltinSessionConfig()) {
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? *std::move(sess) : nullptr;
}

TEST(SessionTest, FeedsFetchesAndPruning) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({2})});
  Output unused = ops::Placeholder(s.WithOpName("unused"), DT_FLOAT);
  ops::Neg(s.WithOpName("needs_unused"), unused);
  ops::Mul(s.WithOpName("y"), x, 3.0f);
  auto sess = MakeSession(s);
  absl::StatusOr<std::vector<Tensor>> out =
      sess->Run({{"x", Tensor::FromVector<float>({1, 2})}}, {"y:0", "y"}, {});
  ASSERT_TRUE(out.ok()) << out.status();  // "unused" is never needed, so never fed
  EXPECT_EQ((*out)[0].flat<float>()[1], 6);
  EXPECT_EQ((*out)[1].flat<float>()[0], 3);
  // Feeding an intermediate tensor cuts its producer out.
  out = sess->Run({{"y", Tensor::FromVector<float>({7, 8})}}, {"y"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<float>()[0], 7);
}

TEST(SessionTest, BadFeedsFetchesAndTargetsAreClearErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = TensorShape({-1, 3})});
  ops::Neg(s.WithOpName("y"), x);
  auto sess = MakeSession(s);
  auto expect_error = [&](absl::StatusOr<std::vector<Tensor>> r, absl::StatusCode code,
                          const std::string& needle) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code) << r.status();
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status();
  };
  Tensor good(DT_FLOAT, TensorShape({2, 3}));
  expect_error(sess->Run({{"x", Tensor(DT_FLOAT, TensorShape({2, 4}))}}, {"y"}, {}),
               absl::StatusCode::kInvalidArgument, "[?,3]");
  expect_error(sess->Run({{"x", Tensor(DT_INT32, TensorShape({2, 3}))}}, {"y"}, {}),
               absl::StatusCode::kInvalidArgument, "int32");
  expect_error(sess->Run({{"x", good}}, {"nope:0"}, {}), absl::StatusCode::kInvalidArgument,
               "'nope:0'");
  expect_error(sess->Run({{"x", good}}, {"y:5"}, {}), absl::StatusCode::kInvalidArgument,
               "has 1 outputs");
  expect_error(sess->Run({{"x", good}}, {}, {"ghost"}), absl::StatusCode::kInvalidArgument,
               "'ghost'");
  expect_error(sess->Run({}, {"y"}, {}), absl::StatusCode::kInvalidArgument,
               "must feed a value for placeholder");
  EXPECT_TRUE(sess->Run({{"x", good}}, {"y"}, {}).ok());
}

TEST(SessionTest, VariablesPersistAcrossRuns) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("counter"), 10.0f);
  ops::AssignAdd(s.WithOpName("inc"), v.var, 1.0f);
  auto sess = MakeSession(s);
  absl::StatusOr<std::vector<Tensor>> r = sess->Run({}, {"counter"}, {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("uninitialized value counter"), std::string::npos);
  ASSERT_TRUE(sess->Run({}, {}, {v.initializer->name()}).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sess->Run({}, {}, {"inc"}).ok());
  r = sess->Run({}, {"counter"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 13);
}

// Reads of a variable in a step see its value from before the step's own
// updates, whatever order the executor picks (inline runs last-ready-first).
TEST(SessionTest, ReadsInAStepSeeTheValueBeforeItsUpdates) {
  for (int inter_op : {0, 1}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("v"), 1.0f);
    // Built first, so its inputs are ready first in every executor order.
    ops::AssignAdd(s.WithOpName("bump"), v.var, 10.0f);
    Output read = ops::Square(s.WithOpName("read"), v.var);
    // This read also waits for a chain, so the update is ready long before it.
    Output late = ops::Const(s, 0.0f);
    for (int i = 0; i < 20; ++i) late = ops::Neg(s, late);
    Output slow_read = ops::Add(s, v.var, late);
    SessionConfig opts = BuiltinSessionConfig();
    opts.inter_op_parallelism = inter_op;
    auto sess = MakeSession(s, opts);
    ASSERT_TRUE(sess->Run({}, {}, {v.initializer->name()}).ok());
    for (int step = 0; step < 3; ++step) {
      absl::StatusOr<std::vector<Tensor>> r =
          sess->Run({}, {read.name(), slow_read.name()}, {"bump"});
      ASSERT_TRUE(r.ok()) << r.status();
      const float before = 1.0f + 10.0f * step;
      EXPECT_FLOAT_EQ((*r)[0].scalar<float>(), before * before) << "inter_op " << inter_op;
      EXPECT_NEAR((*r)[1].scalar<float>(), before, 1e-4) << "inter_op " << inter_op;
    }
  }
}

// A read ordered after an update (here by a control dependency, as
// tf.control_dependencies writes it) sees the update, every run.
TEST(SessionTest, ReadsOrderedAfterAnUpdateSeeIt) {
  for (int inter_op : {0, 1}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("v"), 1.0f);
    Output bump = ops::AssignAdd(s.WithOpName("bump"), v.var, 10.0f);
    Output after = ops::Identity(s.WithOpName("after").WithControlDependencies({bump}), v.var);
    Output before = ops::Identity(s.WithOpName("before"), v.var);
    SessionConfig opts = BuiltinSessionConfig();
    opts.inter_op_parallelism = inter_op;
    auto sess = MakeSession(s, opts);
    ASSERT_TRUE(sess->Run({}, {}, {v.initializer->name()}).ok());
    for (int step = 0; step < 3; ++step) {
      absl::StatusOr<std::vector<Tensor>> r = sess->Run({}, {after, before});
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ((*r)[0].scalar<float>(), 11.0f + 10.0f * step) << "inter_op " << inter_op;
      EXPECT_EQ((*r)[1].scalar<float>(), 1.0f + 10.0f * step) << "inter_op " << inter_op;
    }
  }
}

TEST(SessionTest, ExtendAddsNodes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Const(s.WithOpName("a"), 2.0f);
  auto sess = MakeSession(s);
  Scope more = Scope::NewRootScope(BuiltinOps());
  NodeDef def;
  def.set_name("b");
  def.set_op("Square");
  def.add_input("a");
  (*def.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  GraphDef g;
  *g.add_node() = def;
  ASSERT_TRUE(sess->Extend(g).ok());
  absl::StatusOr<std::vector<Tensor>> r = sess->Run({}, {"b"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 4);
  GraphDef bad;
  NodeDef dangling = def;
  dangling.set_name("c");
  dangling.set_input(0, "missing");
  *bad.add_node() = dangling;
  EXPECT_FALSE(sess->Extend(bad).ok());
  EXPECT_TRUE(sess->Run({}, {"b"}, {}).ok());  // unchanged by the failed extension
}

TEST(SessionTest, TensorsAreFreedAfterTheirLastConsumer) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output y = x;
  for (int i = 0; i < 30; ++i) y = ops::Exp(s, ops::Neg(s, y));
  auto sess = MakeSession(s);
  Tensor big(DT_FLOAT, TensorShape({1 << 18}));  // 1 MiB
  for (float& v : big.flat<float>()) v = 0.5f;
  ASSERT_TRUE(sess->Run({{x, big}}, {y}).ok());
  // 60 ops over 1 MiB tensors, but only a few MiB alive at any time.
  EXPECT_LT(sess->DeviceMemoryStats()[0].peak_bytes_in_use, 4 << 20);
}

TEST(SessionTest, MemoryLimitGivesResourceExhaustedNamingTheNode) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::Square(s.WithOpName("big_square"), x);
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.cpu_memory_limit = 1 << 20;
  auto sess = MakeSession(s, opts);
  Tensor big(DT_FLOAT, TensorShape({1 << 19}));  // 2 MiB, fed from outside the device
  absl::StatusOr<std::vector<Tensor>> r = sess->Run({{"x", big}}, {"big_square"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("'big_square' (Square)"), std::string::npos) << r.status();
  Tensor small(DT_FLOAT, TensorShape({1024}));
  EXPECT_TRUE(sess->Run({{"x", small}}, {"big_square"}, {}).ok());
}

TEST(SessionTest, TraceIsChromeJson) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Square(s.WithOpName("sq"), ops::Const(s, 3.0f));
  auto sess = MakeSession(s);
  RunOptions opts;
  opts.trace = true;
  RunMetadata meta;
  ASSERT_TRUE(sess->Run({}, {"sq"}, {}, opts, &meta).ok());
  std::string json = ToChromeTraceJson(meta.step_stats);
  EXPECT_NE(json.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"sq\""), std::string::npos);
  EXPECT_NE(json.find("CPU:0"), std::string::npos);
}

TEST(SessionTest, PlacementRequestsAndSoftPlacement) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Square(s.WithOpName("sq").WithDevice("/device:GPU:0"), ops::Const(s, 3.0f));
  auto hard = MakeSession(s);
  absl::StatusOr<std::vector<Tensor>> r = hard->Run({}, {"sq"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'sq' (Square)"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("GPU:0"), std::string::npos) << r.status();
  SessionConfig soft = BuiltinSessionConfig();
  soft.allow_soft_placement = true;
  auto sess = MakeSession(s, soft);
  r = sess->Run({}, {"sq"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 9);
  Scope bad = Scope::NewRootScope(BuiltinOps());
  ops::Square(bad.WithOpName("sq").WithDevice("/gpu:zero"), ops::Const(bad, 3.0f));
  auto sess2 = MakeSession(bad, soft);
  r = sess2->Run({}, {"sq"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("malformed device name"), std::string::npos);
}

TEST(SessionTest, ConcurrentRuns) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  ops::Mul(s.WithOpName("y"), x, 2.0f);
  auto sess = MakeSession(s);
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        auto r = sess->Run({{"x", Tensor::Scalar<float>(t * 100 + i)}}, {"y"}, {});
        if (r.ok() && (*r)[0].scalar<float>() == 2 * (t * 100 + i)) ++good;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 100);
}

TEST(SessionTest, ClosedSessionRefusesToRun) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Const(s.WithOpName("a"), 1.0f);
  auto sess = MakeSession(s);
  ASSERT_TRUE(sess->Close().ok());
  EXPECT_EQ(sess->Run({}, {"a"}, {}).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace sluice
