// The datasets that call functions (Map, ParallelMap, Filter, FlatMap,
// Interleave, OneShotIterator) with C++ lambdas as the library's functions
// (FakeFunctionRuntime) through TestGraphRunner, which hands kernels the
// runtime; and the error a graph gets when its executor has none.
#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/data/dataset_builder.h"
#include "ops/data/internal/data_testutil.h"
#include "ops/data/internal/session_drain.h"
#include "runtime/data/iterator_state.h"

namespace sluice {
namespace data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

::tensorflow::NameAttrList Fn(const std::string& name) {
  ::tensorflow::NameAttrList f;
  f.set_name(name);
  return f;
}

const ElementSpec kInt64Scalar{{DT_INT64}, {TensorShape()}};

class FunctionDatasetsTest : public ::testing::Test {
 protected:
  FunctionDatasetsTest()
      : device_(NewCpuDevice({.num_threads = 2})),
        fr_(std::make_shared<FakeFunctionRuntime>(device_.get())) {
    fr_->Add("times_two", [](std::vector<Tensor> a, std::vector<Tensor>* r) {
      r->push_back(Tensor::Scalar<int64_t>(a[0].scalar<int64_t>() * 2));
      return absl::OkStatus();
    });
    fr_->Add("add_captured", [](std::vector<Tensor> a, std::vector<Tensor>* r) {
      r->push_back(Tensor::Scalar<int64_t>(a[0].scalar<int64_t>() + a[1].scalar<int64_t>()));
      return absl::OkStatus();
    });
    fr_->Add("is_even", [](std::vector<Tensor> a, std::vector<Tensor>* r) {
      r->push_back(Tensor::Scalar<bool>(a[0].scalar<int64_t>() % 2 == 0));
      return absl::OkStatus();
    });
    fr_->Add("to_float", [](std::vector<Tensor> a, std::vector<Tensor>* r) {
      r->push_back(Tensor::Scalar<float>(1.0f));
      return absl::OkStatus();
    });
    fr_->Add("fails_on_3", [](std::vector<Tensor> a, std::vector<Tensor>* r) {
      if (a[0].scalar<int64_t>() == 3) return absl::InvalidArgumentError("three is bad");
      r->push_back(a[0]);
      return absl::OkStatus();
    });
    fr_->Add("ends_on_3", [](std::vector<Tensor> a, std::vector<Tensor>* r) {
      if (a[0].scalar<int64_t>() == 3) return absl::OutOfRangeError("stop");
      r->push_back(a[0]);
      return absl::OkStatus();
    });
    // x -> [x, x, ..., x] (x of them)
    fr_->Add("fill", [](std::vector<Tensor> a, std::vector<Tensor>* r) {
      const int64_t x = a[0].scalar<int64_t>();
      r->push_back(Tensor::FromVector<int64_t>(std::vector<int64_t>(x, x)));
      return absl::OkStatus();
    });
    fr_->Add("slow_square", [this](std::vector<Tensor> a, std::vector<Tensor>* r) {
      {
        absl::MutexLock l(&mu_);
        threads_.insert(std::this_thread::get_id());
      }
      absl::SleepFor(absl::Microseconds(200));
      const int64_t x = a[0].scalar<int64_t>();
      r->push_back(Tensor::Scalar<int64_t>(x * x));
      return absl::OkStatus();
    });
    // x -> Range(10x, 10x + 3), made by a graph of its own.
    fr_->Add("range_of", [this](std::vector<Tensor> a, std::vector<Tensor>* r) {
      absl::MutexLock l(&mu_);
      const int64_t x = a[0].scalar<int64_t>();
      absl::StatusOr<std::vector<Tensor>> ds = inner_runner_->Run(
          {inner_range_}, {},
          {{"start", Tensor::Scalar<int64_t>(10 * x)}, {"stop", Tensor::Scalar<int64_t>(10 * x + 3)}});
      if (!ds.ok()) return ds.status();
      r->push_back((*ds)[0]);
      return absl::OkStatus();
    });
    fr_->Add("factory", [this](std::vector<Tensor>, std::vector<Tensor>* r) {
      absl::MutexLock l(&mu_);
      absl::StatusOr<std::vector<Tensor>> ds = inner_runner_->Run(
          {inner_range_}, {},
          {{"start", Tensor::Scalar<int64_t>(0)}, {"stop", Tensor::Scalar<int64_t>(4)}});
      if (!ds.ok()) return ds.status();
      r->push_back((*ds)[0]);
      return absl::OkStatus();
    });
    Output start = ops::Placeholder(inner_.WithOpName("start"), DT_INT64);
    Output stop = ops::Placeholder(inner_.WithOpName("stop"), DT_INT64);
    inner_range_ = inner_.Op("RangeDataset")
                       .Input(start)
                       .Input(stop)
                       .Input(Input(int64_t{1}))
                       .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                       .SetAttr("output_shapes", MakeAttr(std::vector<TensorShape>{TensorShape()}))
                       .Finalize1();
    inner_runner_ = std::make_unique<TestGraphRunner>(inner_.graph(), device_.get(), fr_.get());
  }

  // Every element of `it` (component 0 flattened, int64), or the first error.
  absl::StatusOr<std::vector<int64_t>> Drain(const Iterator& it, FunctionRuntime* fr) {
    if (!s_.ok()) return s_.status();
    std::vector<Output> next = it.GetNext();
    if (!s_.ok()) return s_.status();
    TestGraphRunner runner(s_.graph(), device_.get(), fr);
    absl::Status st = runner.Run({}, {it.initializer()}).status();
    if (!st.ok()) return st;
    std::vector<int64_t> v;
    while (true) {
      absl::StatusOr<std::vector<Tensor>> e = runner.Run(next);
      if (absl::IsOutOfRange(e.status())) break;
      if (!e.ok()) return e.status();
      for (int64_t x : (*e)[0].flat<int64_t>()) v.push_back(x);
    }
    return v;
  }
  absl::StatusOr<std::vector<int64_t>> Drain(const Dataset& ds) {
    return Drain(ds.MakeInitializableIterator(), fr_.get());
  }

  std::unique_ptr<Device> device_;
  std::shared_ptr<FakeFunctionRuntime> fr_;
  Scope s_ = Scope::NewRootScope(BuiltinOps());
  Scope inner_ = Scope::NewRootScope(BuiltinOps());
  Output inner_range_;
  std::unique_ptr<TestGraphRunner> inner_runner_;
  absl::Mutex mu_;
  std::set<std::thread::id> threads_;
};

TEST_F(FunctionDatasetsTest, Map) {
  auto v = Drain(Range(s_, 0, 5).Map(Fn("times_two"), kInt64Scalar));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre(0, 2, 4, 6, 8));
}

TEST_F(FunctionDatasetsTest, MapWithCapturedInput) {
  Output ten = ops::Const(s_, Tensor::Scalar<int64_t>(10));
  auto v = Drain(Range(s_, 0, 3).Map(Fn("add_captured"), kInt64Scalar, {}, {ten}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre(10, 11, 12));
}

TEST_F(FunctionDatasetsTest, MapErrors) {
  auto v = Drain(Range(s_, 0, 3).Map(Fn("to_float"), kInt64Scalar));
  EXPECT_TRUE(absl::IsInvalidArgument(v.status())) << v.status();
  EXPECT_THAT(v.status().message(), HasSubstr("produced a float in component 0, expected int64"));
  v = Drain(Range(s_.WithOpName("r"), 0, 5).Map(Fn("fails_on_3"), kInt64Scalar));
  EXPECT_THAT(v.status().message(), HasSubstr("three is bad"));
  EXPECT_THAT(v.status().message(), HasSubstr("fails_on_3"));
  v = Drain(Range(s_, 0, 3).Map(Fn("no_such_function"), kInt64Scalar));
  EXPECT_TRUE(absl::IsNotFound(v.status())) << v.status();
  EXPECT_THAT(v.status().message(), HasSubstr("no_such_function"));
}

TEST_F(FunctionDatasetsTest, MapOutOfRangeEndsOrFails) {
  auto v = Drain(Range(s_, 0, 5).Map(Fn("ends_on_3"), kInt64Scalar,
                                     {.preserve_cardinality = false}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre(0, 1, 2));
  v = Drain(Range(s_, 0, 5).Map(Fn("ends_on_3"), kInt64Scalar, {.preserve_cardinality = true}));
  EXPECT_TRUE(absl::IsInvalidArgument(v.status())) << v.status();
}

TEST_F(FunctionDatasetsTest, NoFunctionRuntimeIsAFailedPrecondition) {
  Iterator it = Range(s_, 0, 3).Map(Fn("times_two"), kInt64Scalar).MakeInitializableIterator();
  auto v = Drain(it, nullptr);
  EXPECT_TRUE(absl::IsFailedPrecondition(v.status())) << v.status();
  EXPECT_THAT(v.status().message(), HasSubstr("MapDataset"));
  EXPECT_THAT(v.status().message(), HasSubstr("times_two"));
  EXPECT_THAT(v.status().message(), HasSubstr("no function runtime"));
  // A session's executors have a runtime; its library has no such function.
  SessionDrain d(s_, it);
  absl::Status st = d.Start();
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("times_two"));
}

TEST_F(FunctionDatasetsTest, ParallelMapKeepsOrderOffTheCallersThread) {
  auto v = Drain(Range(s_, 0, 200).Map(Fn("slow_square"), kInt64Scalar,
                                       {.num_parallel_calls = 4}));
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->size(), 200u);
  for (int64_t i = 0; i < 200; ++i) EXPECT_EQ((*v)[i], i * i);
  absl::MutexLock l(&mu_);
  EXPECT_EQ(threads_.count(std::this_thread::get_id()), 0u);
  EXPECT_GE(threads_.size(), 2u);
}

TEST_F(FunctionDatasetsTest, ParallelMapAutotuneAndNondeterministic) {
  auto v = Drain(Range(s_, 0, 100).Map(Fn("slow_square"), kInt64Scalar,
                                       {.num_parallel_calls = -1, .deterministic = false}));
  ASSERT_TRUE(v.ok()) << v.status();
  std::vector<int64_t> sorted = *v;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(sorted.size(), 100u);
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i * i);
}

TEST_F(FunctionDatasetsTest, ParallelMapErrorInOrderThenContinues) {
  Iterator it = Range(s_, 0, 6)
                    .Map(Fn("fails_on_3"), kInt64Scalar, {.num_parallel_calls = 3})
                    .MakeInitializableIterator();
  std::vector<Output> next = it.GetNext();
  ASSERT_TRUE(s_.ok()) << s_.status();
  TestGraphRunner runner(s_.graph(), device_.get(), fr_.get());
  ASSERT_TRUE(runner.Run({}, {it.initializer()}).ok());
  std::vector<std::string> got;
  for (int i = 0; i < 7; ++i) {
    absl::StatusOr<std::vector<Tensor>> e = runner.Run(next);
    got.push_back(e.ok() ? std::to_string((*e)[0].scalar<int64_t>())
                         : std::string(absl::StatusCodeToString(e.status().code())));
  }
  EXPECT_THAT(got, ElementsAre("0", "1", "2", "INVALID_ARGUMENT", "4", "5", "OUT_OF_RANGE"));
}

TEST_F(FunctionDatasetsTest, ParallelMapBadParallelism) {
  auto v = Drain(Range(s_, 0, 3).Map(Fn("times_two"), kInt64Scalar, {.num_parallel_calls = -5}));
  EXPECT_THAT(v.status().message(), HasSubstr("num_parallel_calls must be positive"));
}

TEST_F(FunctionDatasetsTest, Filter) {
  auto v = Drain(Range(s_, 0, 7).Filter(Fn("is_even")));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre(0, 2, 4, 6));
  v = Drain(Range(s_, 0, 7).Filter(Fn("times_two")));
  EXPECT_THAT(v.status().message(), HasSubstr("must return a scalar bool"));
}

TEST_F(FunctionDatasetsTest, FlatMap) {
  auto v = Drain(Range(s_, 1, 3).FlatMap(Fn("range_of"), kInt64Scalar));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre(10, 11, 12, 20, 21, 22));
  v = Drain(Range(s_, 1, 3).FlatMap(Fn("times_two"), kInt64Scalar));
  EXPECT_THAT(v.status().message(), HasSubstr("must return a dataset"));
}

TEST_F(FunctionDatasetsTest, InterleaveOrder) {
  auto v = Drain(Range(s_, 1, 4).Interleave(Fn("range_of"), kInt64Scalar,
                                            {.cycle_length = 2, .block_length = 1}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre(10, 20, 11, 21, 12, 22, 30, 31, 32));
  v = Drain(Range(s_, 1, 4).Interleave(Fn("range_of"), kInt64Scalar,
                                       {.cycle_length = 2, .block_length = 2}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre(10, 11, 20, 21, 12, 22, 30, 31, 32));
  // The parallel form gives the same (deterministic) order.
  v = Drain(Range(s_, 1, 4).Interleave(
      Fn("range_of"), kInt64Scalar,
      {.cycle_length = 2, .block_length = 1, .num_parallel_calls = 2}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre(10, 20, 11, 21, 12, 22, 30, 31, 32));
  v = Drain(Range(s_, 1, 4).Interleave(Fn("range_of"), kInt64Scalar,
                                       {.cycle_length = 0, .block_length = 1}));
  EXPECT_THAT(v.status().message(), HasSubstr("cycle_length must be greater than zero"));
}

TEST_F(FunctionDatasetsTest, PaddedBatchOfRaggedVectors) {
  Output pad = ops::Const(s_, Tensor::Scalar<int64_t>(-1));
  Iterator it = Range(s_, 1, 4)
                    .Map(Fn("fill"), ElementSpec{{DT_INT64}, {TensorShape({-1})}})
                    .PaddedBatch(2, {{-1}}, {pad})
                    .MakeInitializableIterator();
  std::vector<Output> next = it.GetNext();
  ASSERT_TRUE(s_.ok()) << s_.status();
  TestGraphRunner runner(s_.graph(), device_.get(), fr_.get());
  ASSERT_TRUE(runner.Run({}, {it.initializer()}).ok());
  auto b0 = runner.Run(next);
  ASSERT_TRUE(b0.ok()) << b0.status();
  EXPECT_EQ((*b0)[0].shape(), TensorShape({2, 2}));
  EXPECT_THAT((*b0)[0].flat<int64_t>(), ElementsAre(1, -1, 2, 2));
  auto b1 = runner.Run(next);
  ASSERT_TRUE(b1.ok()) << b1.status();
  EXPECT_EQ((*b1)[0].shape(), TensorShape({1, 3}));
  // A fixed padded shape smaller than an element fails.
  auto v = Drain(Range(s_, 1, 4).Map(Fn("fill"), ElementSpec{{DT_INT64}, {TensorShape({-1})}})
                     .PaddedBatch(3, {{2}}));
  EXPECT_THAT(v.status().message(), HasSubstr("Attempted to pad to a smaller size"));
}

TEST_F(FunctionDatasetsTest, BatchOfDifferentShapesFails) {
  auto v = Drain(Range(s_, 1, 4).Map(Fn("fill"), ElementSpec{{DT_INT64}, {TensorShape({-1})}})
                     .Batch(2));
  EXPECT_TRUE(absl::IsInvalidArgument(v.status())) << v.status();
  EXPECT_THAT(v.status().message(),
              HasSubstr("Cannot batch tensors with different shapes in component 0. First "
                        "element had shape [1] and element 1 had shape [2]."));
}

TEST_F(FunctionDatasetsTest, OneShotIterator) {
  Iterator it = OneShotIterator(s_, Fn("factory"), kInt64Scalar);
  EXPECT_EQ(it.initializer(), nullptr);
  Output next = it.GetNext()[0];
  ASSERT_TRUE(s_.ok()) << s_.status();
  TestGraphRunner runner(s_.graph(), device_.get(), fr_.get());
  std::vector<int64_t> got;
  while (true) {
    auto e = runner.Run({next});
    if (!e.ok()) {
      EXPECT_TRUE(absl::IsOutOfRange(e.status())) << e.status();
      break;
    }
    got.push_back((*e)[0].scalar<int64_t>());
  }
  EXPECT_THAT(got, ElementsAre(0, 1, 2, 3));
}

TEST_F(FunctionDatasetsTest, ParallelInterleaveCheckpoint) {
  Iterator it = Range(s_, 1, 6)
                    .Interleave(Fn("range_of"), kInt64Scalar,
                                {.cycle_length = 2, .block_length = 2, .num_parallel_calls = 2})
                    .MakeInitializableIterator("interleave");
  std::vector<Output> next = it.GetNext();
  Output state = it.Serialize();
  Output state_in = ops::Placeholder(s_.WithOpName("state_in"), ::tensorflow::DT_VARIANT);
  Node* restore = it.Deserialize(state_in);
  ASSERT_TRUE(s_.ok()) << s_.status();
  auto read = [&](TestGraphRunner& r, int n) {
    std::vector<int64_t> v;
    for (int i = 0; i < n; ++i) {
      auto e = r.Run(next);
      if (!e.ok()) break;
      v.push_back((*e)[0].scalar<int64_t>());
    }
    return v;
  };
  TestGraphRunner ref(s_.graph(), device_.get(), fr_.get());
  ASSERT_TRUE(ref.Run({}, {it.initializer()}).ok());
  const std::vector<int64_t> reference = read(ref, 100);
  EXPECT_EQ(reference.size(), 15u);
  EXPECT_EQ(std::vector<int64_t>(reference.begin(), reference.begin() + 6),
            (std::vector<int64_t>{10, 11, 20, 21, 12, 22}));
  for (int k : {0, 3, 7, 14}) {
    std::unique_ptr<Device> d1 = NewCpuDevice({.num_threads = 2});
    TestGraphRunner a(s_.graph(), d1.get(), fr_.get());
    ASSERT_TRUE(a.Run({}, {it.initializer()}).ok());
    std::vector<int64_t> got = read(a, k);
    auto saved = a.Run({state});
    ASSERT_TRUE(saved.ok()) << saved.status();
    std::unique_ptr<Device> d2 = NewCpuDevice({.num_threads = 2});
    TestGraphRunner b(s_.graph(), d2.get(), fr_.get());
    ASSERT_TRUE(b.Run({}, {it.initializer()}).ok());
    ASSERT_TRUE(b.Run({}, {restore}, {{"state_in", (*saved)[0]}}).ok());
    std::vector<int64_t> rest = read(b, 100);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, reference) << "saved after " << k;
  }
}

// A pipeline with parallel calls and a prefetch saved in the middle and
// restored in a new device (a restarted worker) continues where it was.
TEST_F(FunctionDatasetsTest, ParallelMapAndPrefetchCheckpoint) {
  Iterator it = Range(s_, 0, 60)
                    .Map(Fn("slow_square"), kInt64Scalar, {.num_parallel_calls = 3})
                    .Prefetch(3)
                    .MakeInitializableIterator("ckpt");
  std::vector<Output> next = it.GetNext();
  Output state = it.Serialize();
  Output state_in = ops::Placeholder(s_.WithOpName("state_in"), ::tensorflow::DT_VARIANT);
  Node* restore = it.Deserialize(state_in);
  ASSERT_TRUE(s_.ok()) << s_.status();
  TestGraphRunner runner(s_.graph(), device_.get(), fr_.get());
  ASSERT_TRUE(runner.Run({}, {it.initializer()}).ok());
  std::vector<int64_t> first;
  for (int i = 0; i < 25; ++i) first.push_back((*runner.Run(next))[0].scalar<int64_t>());
  auto saved = runner.Run({state});
  ASSERT_TRUE(saved.ok()) << saved.status();
  const std::string bytes = EncodeIteratorState((*IteratorStateFromTensor((*saved)[0]))->values());

  std::unique_ptr<Device> fresh = NewCpuDevice({.num_threads = 2});
  TestGraphRunner restarted(s_.graph(), fresh.get(), fr_.get());
  ASSERT_TRUE(restarted.Run({}, {it.initializer()}).ok());
  auto decoded = DecodeIteratorState(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_TRUE(restarted.Run({}, {restore}, {{"state_in", IteratorStateTensor(*decoded)}}).ok());
  std::vector<int64_t> all = first;
  while (true) {
    auto e = restarted.Run(next);
    if (!e.ok()) break;
    all.push_back((*e)[0].scalar<int64_t>());
  }
  ASSERT_EQ(all.size(), 60u);
  for (int64_t i = 0; i < 60; ++i) EXPECT_EQ(all[i], i * i);
}

}  // namespace
}  // namespace data
}  // namespace sluice
