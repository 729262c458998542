// RandomShuffle: a permutation of the rows (numbers and strings), seeded
// graphs repeat their sequence, unseeded runs differ, scalars and one-row
// tensors pass through.
#include "ops/random/random_shuffle_ops.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;

std::vector<int32_t> Ints(const Tensor& t) {
  return std::vector<int32_t>(t.flat<int32_t>().begin(), t.flat<int32_t>().end());
}

TEST(RandomShuffleTest, PermutesRows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<int32_t> v(40);
  for (int i = 0; i < 40; ++i) v[i] = i;
  Output y = ops::RandomShuffle(s, ops::Const(s, v, TensorShape({20, 2})), {.seed = 3});
  Tensor r = Eval(s, {}, y);
  ASSERT_EQ(r.shape(), TensorShape({20, 2}));
  std::vector<int32_t> got = Ints(r);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(got[2 * i] + 1, got[2 * i + 1]);  // rows stay whole
  std::vector<int32_t> sorted = got;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, v);
  EXPECT_NE(got, v);

  Output words = ops::RandomShuffle(
      s, ops::Const(s, Tensor::FromVector<std::string>({"a", "b", "c", "d", "e", "f"})));
  Tensor w = Eval(s, {}, words);
  std::vector<std::string> ws(w.flat<std::string>().begin(), w.flat<std::string>().end());
  std::sort(ws.begin(), ws.end());
  EXPECT_THAT(ws, ::testing::ElementsAre("a", "b", "c", "d", "e", "f"));
}

TEST(RandomShuffleTest, SeededGraphsRepeat) {
  auto run = [](int64_t seed) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    std::vector<int32_t> v(50);
    for (int i = 0; i < 50; ++i) v[i] = i;
    Output y = ops::RandomShuffle(s, ops::Const(s, v), {.seed = seed, .seed2 = 1});
    return Ints(Eval(s, {}, y));
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

TEST(RandomShuffleTest, ScalarsAndSingleRows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  EXPECT_EQ(Eval(s, {}, ops::RandomShuffle(s, ops::Const(s, 7.0f))).scalar<float>(), 7.0f);
  EXPECT_EQ(Ints(Eval(s, {}, ops::RandomShuffle(s, ops::Const(s, std::vector<int32_t>{4})))),
            std::vector<int32_t>{4});
  EXPECT_EQ(Eval(s, {}, ops::RandomShuffle(s, ops::Const(s, Tensor(DT_FLOAT, TensorShape({0, 3})))))
                .shape(),
            TensorShape({0, 3}));
}

}  // namespace
}  // namespace sluice
