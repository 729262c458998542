// tf.random.Generator's ops against values TensorFlow 2.21 gave for a
// Generator.from_seed(1234) (state [1234, 0, 0]): the draws, the counter
// advanced by 256 per value, RngReadAndSkip's old state, RngSkip, the
// 128-bit carry, a Generator-style draw (RngReadAndSkip, Bitcast,
// StatelessRandomUniformV2) equal to StatefulUniform's, and bad states.
#include "ops/random/stateful_random_ops.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/bitwise_ops.h"
#include "ops/random/random_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/testutil/session_fixture.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using ::testing::Pointwise;

Tensor Uint64(uint64_t v) {
  Tensor t(::tensorflow::DT_UINT64, TensorShape());
  t.data<uint64_t>()[0] = v;
  return t;
}

class StatefulRandomTest : public testing_util::SessionFixture {
 protected:
  // An RNG state variable holding `words`, and its initializer.
  Output State(const char* name, std::vector<int64_t> words) {
    Output v = ops::VarHandleOp(s_.WithOpName(name), DT_INT64,
                                TensorShape({static_cast<int64_t>(words.size())}));
    inits_.push_back(ops::AssignVariableOp(s_, v, ops::Const(s_, Tensor::FromVector(words))));
    return v;
  }
  std::vector<Node*> inits_;
};

TEST_F(StatefulRandomTest, DrawsAndSkipsAreTensorFlows) {
  Output state = State("rng", {1234, 0, 0});
  Output read = ops::ReadVariableOp(s_, state, DT_INT64);
  Output uniform = ops::StatefulUniform(s_, state, {5}, DT_FLOAT);
  Output normal = ops::StatefulStandardNormalV2(s_, state, {3}, DT_FLOAT);
  Output read_and_skip = ops::RngReadAndSkip(s_, state, 1, ops::Const(s_, Uint64(10)));
  Node* skip = ops::RngSkip(s_, state, int64_t{1}, int64_t{7});
  Output ints = ops::StatefulUniformInt(s_, state, {4}, 0, 10);
  Output truncated = ops::StatefulTruncatedNormal(s_, state, {3}, DT_FLOAT);
  Start(inits_);
  EXPECT_THAT(Fetch<float>(uniform),
              Pointwise(FloatEq(), {0.3581475f, 0.11322761f, 0.56670904f, 0.6712369f, 0.32565057f}));
  EXPECT_THAT(Fetch<int64_t>(read), ElementsAre(1234 + 5 * 256, 0, 0));
  EXPECT_THAT(Fetch<float>(normal), testing::SizeIs(3));
  EXPECT_THAT(Fetch<int64_t>(read_and_skip), ElementsAre(3282, 0, 0));
  EXPECT_THAT(Fetch<int64_t>(read), ElementsAre(3282 + 10 * 256, 0, 0));
  ASSERT_TRUE(RunTarget(skip).ok());
  EXPECT_THAT(Fetch<int64_t>(read), ElementsAre(5842 + 7 * 256, 0, 0));
  EXPECT_THAT(Fetch<int32_t>(ints), ElementsAre(6, 1, 5, 3));
  EXPECT_THAT(Fetch<float>(truncated),
              Pointwise(FloatEq(), {-0.54508597f, 1.3804036f, -0.28512946f}));
}

TEST_F(StatefulRandomTest, TheCounterCarriesIntoItsHighWord) {
  Output state = State("rng", {-1, 5, 9});
  Output uniform = ops::StatefulUniform(s_, state, {1}, DT_FLOAT);
  Output read = ops::ReadVariableOp(s_, state, DT_INT64);
  Start(inits_);
  Fetch<float>(uniform);
  EXPECT_THAT(Fetch<int64_t>(read), ElementsAre(255, 6, 9));
}

TEST_F(StatefulRandomTest, AGeneratorsStatelessDrawEqualsTheStatefulOne) {
  // TF 2.5+ Generators draw as RngReadAndSkip, a bitcast of the old state
  // into key and counter, and a stateless draw.
  Output a = State("a", {77, 3, 42});
  Output b = State("b", {77, 3, 42});
  Output old = ops::RngReadAndSkip(s_, a, 3, ops::Const(s_, Uint64(6)));
  Output counter = ops::Bitcast(s_, ops::Slice(s_, old, {0}, {2}), ::tensorflow::DT_UINT64);
  Output key = ops::Bitcast(s_, ops::Slice(s_, old, {2}, {1}), ::tensorflow::DT_UINT64);
  Output stateless = ops::StatelessRandomUniformV2(s_, {2, 3}, {key, counter}, DT_DOUBLE);
  Output stateful = ops::StatefulUniform(s_, b, {2, 3}, DT_DOUBLE);
  Start(inits_);
  std::vector<double> want = Fetch<double>(stateful);
  EXPECT_EQ(Fetch<double>(stateless), want);
  EXPECT_EQ(Fetch<double>(stateless), Fetch<double>(stateful));  // both advanced alike
}

TEST_F(StatefulRandomTest, BadStatesAndAlgorithmsSayWhatIsWrong) {
  Output shortv = State("short", {1, 2});
  Output floats = ops::VarHandleOp(s_.WithOpName("floats"), DT_FLOAT, TensorShape({3}));
  inits_.push_back(ops::AssignVariableOp(s_, floats, {1.0f, 2.0f, 3.0f}));
  Output never = ops::VarHandleOp(s_.WithOpName("never"), DT_INT64, TensorShape({3}));
  Output good = State("good", {1, 2, 3});
  Output too_short = ops::StatefulUniform(s_, shortv, {2}, DT_FLOAT);
  Output wrong_type = ops::StatefulUniform(s_, floats, {2}, DT_FLOAT);
  Output uninitialized = ops::StatefulUniform(s_, never, {2}, DT_FLOAT);
  Output threefry = ops::StatefulUniform(s_, good, {2}, DT_FLOAT, 2);
  Output unknown = ops::StatefulUniform(s_, good, {2}, DT_FLOAT, 9);
  Output bad_bounds = ops::StatefulUniformInt(s_, good, {2}, 5, 5);
  Start(inits_);
  auto error = [&](Output o) { return std::string(sess_->Run({}, {o}, {}).status().message()); };
  EXPECT_THAT(error(too_short), HasSubstr("the size of state must be at least 3; got 2"));
  EXPECT_THAT(error(wrong_type), HasSubstr("must be an int64 vector, not float"));
  EXPECT_THAT(error(uninitialized), HasSubstr("uninitialized"));
  EXPECT_THAT(error(threefry), HasSubstr("ThreeFry"));
  EXPECT_THAT(error(unknown), HasSubstr("Unsupported algorithm id: 9"));
  EXPECT_THAT(error(bad_bounds), HasSubstr("Need minval < maxval, got 5 >= 5"));
}

}  // namespace
}  // namespace sluice
