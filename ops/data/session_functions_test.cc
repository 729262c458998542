// The function-taking datasets in a local session with real library
// functions (graph/function_builder.h) run by the executors' function
// runtime: Map, ParallelMap, Filter, FlatMap and Interleave whose functions
// make datasets, the builder's OneShotIterator, and a checkpoint through
// parallel calls.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/function_builder.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/data/dataset_builder.h"
#include "ops/data/internal/session_drain.h"
#include "ops/math/math_ops.h"
#include "runtime/data/iterator_state.h"

namespace sluice {
namespace data {
namespace {

using ::testing::ElementsAre;

const ElementSpec kInt64Scalar{{DT_INT64}, {TensorShape()}};

class SessionFunctionsTest : public ::testing::Test {
 protected:
  SessionFunctionsTest() {
    times_two_ = Define("times_two", [](Scope& s, std::vector<Output> a) {
      return absl::StatusOr<std::vector<Output>>(std::vector<Output>{ops::Mul(s, a[0], int64_t{2})});
    });
    is_even_ = Define("is_even", [](Scope& s, std::vector<Output> a) {
      return absl::StatusOr<std::vector<Output>>(
          std::vector<Output>{ops::Equal(s, ops::FloorMod(s, a[0], int64_t{2}), int64_t{0})});
    });
    // x -> Range(10x, 10x + 3)
    range_of_ = Define("range_of", [](Scope& s, std::vector<Output> a) {
      Output start = ops::Mul(s, a[0], int64_t{10});
      Output ds = s.Op("RangeDataset")
                      .Input(start)
                      .Input(ops::Add(s, start, int64_t{3}))
                      .Input(Input(int64_t{1}))
                      .SetAttr("output_types", MakeAttr(std::vector<DataType>{DT_INT64}))
                      .SetAttr("output_shapes", MakeAttr(std::vector<TensorShape>{TensorShape()}))
                      .Finalize1();
      return absl::StatusOr<std::vector<Output>>(std::vector<Output>{ds});
    });
  }

  NameAttrList Define(const std::string& name, const FunctionBodyFn& body) {
    absl::StatusOr<NameAttrList> f = DefineFunction(s_, name, {DT_INT64}, body);
    EXPECT_TRUE(f.ok()) << f.status();
    return f.ok() ? *f : NameAttrList();
  }

  std::vector<int64_t> Drain(const Dataset& ds) {
    SessionDrain d(s_, ds.MakeInitializableIterator());
    absl::Status st = d.Start();
    EXPECT_TRUE(st.ok()) << st;
    return st.ok() ? d.Ints() : std::vector<int64_t>{};
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
  NameAttrList times_two_, is_even_, range_of_;
};

TEST_F(SessionFunctionsTest, MapAndParallelMap) {
  EXPECT_THAT(Drain(Range(s_, 0, 5).Map(times_two_, kInt64Scalar)), ElementsAre(0, 2, 4, 6, 8));
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 100; ++i) want.push_back(2 * i);
  EXPECT_EQ(Drain(Range(s_, 0, 100).Map(times_two_, kInt64Scalar, {.num_parallel_calls = 3})),
            want);
}

TEST_F(SessionFunctionsTest, FilterFlatMapInterleave) {
  EXPECT_THAT(Drain(Range(s_, 0, 7).Filter(is_even_)), ElementsAre(0, 2, 4, 6));
  EXPECT_THAT(Drain(Range(s_, 1, 3).FlatMap(range_of_, kInt64Scalar)),
              ElementsAre(10, 11, 12, 20, 21, 22));
  EXPECT_THAT(Drain(Range(s_, 1, 4).Interleave(range_of_, kInt64Scalar,
                                                {.cycle_length = 2, .block_length = 1,
                                                 .num_parallel_calls = 2})),
              ElementsAre(10, 20, 11, 21, 12, 22, 30, 31, 32));
}

TEST_F(SessionFunctionsTest, OneShotIterator) {
  absl::StatusOr<NameAttrList> factory = DefineFunction(
      s_, "make_pipeline", {}, [](Scope& s, std::vector<Output>) {
        Dataset ds = Range(s, 0, 6).Batch(4);
        return absl::StatusOr<std::vector<Output>>(std::vector<Output>{ds.handle()});
      });
  ASSERT_TRUE(factory.ok()) << factory.status();
  Iterator it = OneShotIterator(s_, *factory, ElementSpec{{DT_INT64}, {TensorShape({-1})}});
  Output next = it.GetNext()[0];
  ASSERT_TRUE(s_.ok()) << s_.status();
  auto sess = NewSession(BuiltinSessionConfig(), *s_.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  auto b0 = (*sess)->Run({}, {next}, {});
  ASSERT_TRUE(b0.ok()) << b0.status();
  EXPECT_THAT((*b0)[0].flat<int64_t>(), ElementsAre(0, 1, 2, 3));
  auto b1 = (*sess)->Run({}, {next}, {});
  ASSERT_TRUE(b1.ok()) << b1.status();
  EXPECT_THAT((*b1)[0].flat<int64_t>(), ElementsAre(4, 5));
  EXPECT_TRUE(absl::IsOutOfRange((*sess)->Run({}, {next}, {}).status()));
}

TEST_F(SessionFunctionsTest, CheckpointThroughParallelMapShuffleAndBatch) {
  Iterator it = Range(s_, 0, 50)
                    .Map(times_two_, kInt64Scalar, {.num_parallel_calls = 2})
                    .Shuffle(10, 4)
                    .Batch(4)
                    .Prefetch(2)
                    .MakeInitializableIterator();
  SessionDrain ref(s_, it);
  Output state = it.Serialize();
  Output state_in = ops::Placeholder(s_.WithOpName("state_in"), ::tensorflow::DT_VARIANT);
  Node* restore = it.Deserialize(state_in);
  ASSERT_TRUE(ref.Start().ok());
  const std::vector<int64_t> reference = ref.Ints();
  ASSERT_EQ(reference.size(), 50u);
  SessionDrain a(s_, it);
  ASSERT_TRUE(a.Start().ok());
  std::vector<int64_t> got = a.Ints(0, 5);
  auto st = a.session()->Run({}, {state}, {});
  ASSERT_TRUE(st.ok()) << st.status();
  SessionDrain b(s_, it);
  ASSERT_TRUE(b.Start().ok());
  ASSERT_TRUE(b.session()->Run({{state_in, (*st)[0]}}, {}, {restore}).ok());
  std::vector<int64_t> rest = b.Ints();
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got, reference);
}

}  // namespace
}  // namespace data
}  // namespace sluice
