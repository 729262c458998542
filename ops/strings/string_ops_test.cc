// The string ops against values TensorFlow 2.21 computed for the same inputs
// (tf.strings.to_hash_bucket_fast/_strong, raw_ops.StringToHashBucket,
// tf.strings.as_string), and their errors. The conformance suite
// (tests/tf_conformance) checks the same through graphs TensorFlow wrote.
#include "ops/strings/string_ops.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::TryEval;

const std::vector<std::string> kWords = {
    "", "a", "hello", "Sluice", "feature_column_value_17", std::string(100, 'x')};

class StringOpsTest : public ::testing::Test {
 protected:
  Output Words() {
    Tensor t(DT_STRING, TensorShape({2, 3}));
    for (size_t i = 0; i < kWords.size(); ++i) t.flat<std::string>()[i] = kWords[i];
    return ops::Const(s_, t);
  }
  Tensor Strings(const std::vector<std::string>& values) {
    Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(values.size())}));
    for (size_t i = 0; i < values.size(); ++i) t.flat<std::string>()[i] = values[i];
    return t;
  }
  std::vector<std::string> AsStrings(const Tensor& t) {
    return std::vector<std::string>(t.flat<std::string>().begin(), t.flat<std::string>().end());
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(StringOpsTest, HashBucketsAreTensorFlows) {
  ExpectTensor<int64_t>(Eval(s_, {}, ops::StringToHashBucketFast(s_, Words(), 1000)),
                        TensorShape({2, 3}), {263, 939, 296, 520, 752, 719});
  ExpectTensor<int64_t>(Eval(s_, {}, ops::StringToHashBucketFast(s_, Words(), int64_t{1} << 62)),
                        TensorShape({2, 3}),
                        {1936946117179621455, 3694432073954588131, 3786372426573024488,
                         2131625879928569520, 233959260959043752, 1978794067220662815});
  ExpectTensor<int64_t>(Eval(s_, {}, ops::StringToHashBucketStrong(s_, Words(), 1000, {1, 2})),
                        TensorShape({2, 3}), {435, 646, 622, 879, 931, 463});
  ExpectTensor<int64_t>(
      Eval(s_, {},
           ops::StringToHashBucketStrong(s_, Words(), int64_t{1} << 62, {123456789, 987654321})),
      TensorShape({2, 3}),
      {2687967955150315968, 1380271951645389367, 1841346816425267620, 4505118512242607517,
       1593412861136719218, 3549159015524104035});
  ExpectTensor<int64_t>(Eval(s_, {}, ops::StringToHashBucket(s_, Words(), 1000)),
                        TensorShape({2, 3}), {899, 868, 938, 522, 78, 807});
  ExpectTensor<int64_t>(Eval(s_, {}, ops::StringToHashBucket(s_, Words(), int64_t{1} << 62)),
                        TensorShape({2, 3}),
                        {105434511174508091, 2996632905371535868, 1331861223480393034,
                         116081869794952522, 1648196495776478078, 1482511825497849095});
  // One bucket: everything is 0.
  ExpectTensor<int64_t>(Eval(s_, {}, ops::StringToHashBucketFast(s_, Words(), 1)),
                        TensorShape({2, 3}), {0, 0, 0, 0, 0, 0});
}

TEST_F(StringOpsTest, HashBucketErrors) {
  absl::StatusOr<Tensor> zero = TryEval(s_, {}, ops::StringToHashBucketFast(s_, Words(), 0));
  EXPECT_FALSE(zero.ok());
  EXPECT_THAT(std::string(zero.status().message()), HasSubstr("num_buckets"));
  Scope s2 = Scope::NewRootScope(BuiltinOps());
  Tensor one(DT_STRING, TensorShape({1}));
  absl::StatusOr<Tensor> key =
      TryEval(s2, {}, ops::StringToHashBucketStrong(s2, ops::Const(s2, one), 10, {1, 2, 3}));
  EXPECT_FALSE(key.ok());
  EXPECT_THAT(std::string(key.status().message()), HasSubstr("key must have size 2"));
  Scope s3 = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<Tensor> floats =
      TryEval(s3, {}, ops::StringToHashBucketFast(s3, ops::Const(s3, {1.0f, 2.0f}), 10));
  EXPECT_FALSE(floats.ok());  // not a string input
}

TEST_F(StringOpsTest, RegexFullMatchMatchesWholeStringsInRe2Syntax) {
  Output in = ops::Const(s_, Strings({"s3://bucket/ckpt", "/tmp/ckpt", "s3:/x", "S3://y"}));
  Tensor got = Eval(s_, {}, ops::StaticRegexFullMatch(s_, in, "^s3://.*"));
  EXPECT_EQ(got.dtype(), DT_BOOL);
  EXPECT_EQ(std::vector<bool>(got.flat<bool>().begin(), got.flat<bool>().end()),
            (std::vector<bool>{true, false, false, false}));
  // A partial match is not a full match; (?i) is RE2's flag syntax.
  Tensor dyn = Eval(s_, {}, ops::RegexFullMatch(s_, in, ops::Const(s_, Input("(?i)s3:.*"))));
  EXPECT_EQ(std::vector<bool>(dyn.flat<bool>().begin(), dyn.flat<bool>().end()),
            (std::vector<bool>{true, false, true, true}));
  Tensor part = Eval(s_, {}, ops::StaticRegexFullMatch(s_, in, "tmp"));
  EXPECT_FALSE(part.flat<bool>()[1]);
  // A bad pattern is a clear error.
  Scope s2 = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<Tensor> bad = TryEval(
      s2, {}, ops::RegexFullMatch(s2, ops::Const(s2, Strings({"a"})), ops::Const(s2, Input("(a"))));
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("invalid pattern '(a'"));
}

TEST_F(StringOpsTest, AsStringFormatsAsTensorFlow) {
  Output f = ops::Const(s_, {3.14159f, -2.5f, 1e10f, 0.0f});
  EXPECT_EQ(AsStrings(Eval(s_, {}, ops::AsString(s_, f))),
            (std::vector<std::string>{"3.141590", "-2.500000", "10000000000.000000", "0.000000"}));
  Output two = ops::Const(s_, {3.14159f, -2.5f});
  EXPECT_EQ(AsStrings(Eval(s_, {}, ops::AsString(s_, two, {.precision = 2}))),
            (std::vector<std::string>{"3.14", "-2.50"}));
  EXPECT_EQ(AsStrings(Eval(s_, {}, ops::AsString(s_, two, {.scientific = true}))),
            (std::vector<std::string>{"3.141590e+00", "-2.500000e+00"}));
  EXPECT_EQ(AsStrings(Eval(
                s_, {}, ops::AsString(s_, ops::Const(s_, {3.14159f, 1e10f}), {.shortest = true}))),
            (std::vector<std::string>{"3.14159", "1e+10"}));
  EXPECT_EQ(AsStrings(Eval(s_, {},
                           ops::AsString(s_, ops::Const(s_, {7, -12}), {.width = 5, .fill = "0"}))),
            (std::vector<std::string>{"00007", "-0012"}));
  EXPECT_EQ(
      AsStrings(Eval(
          s_, {}, ops::AsString(s_, ops::Const(s_, std::vector<int64_t>{7, -12}), {.width = 4}))),
      (std::vector<std::string>{"   7", " -12"}));
  EXPECT_EQ(
      AsStrings(Eval(s_, {}, ops::AsString(s_, ops::Const(s_, std::vector<bool>{true, false})))),
      (std::vector<std::string>{"true", "false"}));
  EXPECT_EQ(AsStrings(Eval(s_, {},
                           ops::AsString(s_, ops::Const(s_, std::vector<double>{1.5}),
                                         {.precision = 1, .width = 8, .fill = " "}))),
            (std::vector<std::string>{"     1.5"}));
  EXPECT_EQ(AsStrings(Eval(s_, {}, ops::AsString(s_, ops::Const(s_, Strings({"a"}))))),
            (std::vector<std::string>{"a"}));
}

TEST_F(StringOpsTest, AsStringRefusesWhatTensorFlowRefuses) {
  const struct {
    ops::AsStringAttrs attrs;
    bool integer;
    const char* needle;
  } cases[] = {
      {{.precision = 2}, true, "precision not supported for datatype int32"},
      {{.scientific = true, .shortest = true},
       false,
       "Cannot select both scientific and shortest notation"},
      {{.width = 4, .fill = "x"}, false, "Fill argument not supported: \"x\""},
      {{.scientific = true}, true, "not supported for datatype int32"},
  };
  for (const auto& c : cases) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = c.integer ? ops::Const(s, {1}) : ops::Const(s, {1.0f});
    absl::StatusOr<Tensor> r = TryEval(s, {}, ops::AsString(s, x, c.attrs));
    ASSERT_FALSE(r.ok()) << c.needle;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.needle));
  }
}

TEST_F(StringOpsTest, SplitsAreTensorFlows) {
  const auto check = [&](ops::StringSplitOutputs o, const std::vector<int64_t>& indices,
                         const std::vector<std::string>& values,
                         const std::vector<int64_t>& shape) {
    ExpectTensor<int64_t>(Eval(s_, {}, o.indices),
                          TensorShape({static_cast<int64_t>(values.size()), 2}), indices);
    EXPECT_EQ(AsStrings(Eval(s_, {}, o.values)), values);
    ExpectTensor<int64_t>(Eval(s_, {}, o.shape), TensorShape({2}), shape);
  };
  Output three = ops::Const(s_, Strings({"a b  c", "", "d"}));
  Output space = ops::Const(s_, Tensor::Scalar<std::string>(" "));
  check(ops::StringSplit(s_, three, space), {0, 0, 0, 1, 0, 2, 2, 0}, {"a", "b", "c", "d"}, {3, 3});
  check(ops::StringSplit(s_, three, space, /*skip_empty=*/false), {0, 0, 0, 1, 0, 2, 0, 3, 2, 0},
        {"a", "b", "", "c", "d"}, {3, 4});
  check(ops::StringSplit(s_, ops::Const(s_, Strings({"a,b;c"})),
                         ops::Const(s_, Tensor::Scalar<std::string>(",;"))),
        {0, 0, 0, 1, 0, 2}, {"a", "b", "c"}, {1, 3});
  check(ops::StringSplit(s_, ops::Const(s_, Strings({"abc"})),
                         ops::Const(s_, Tensor::Scalar<std::string>(""))),
        {0, 0, 0, 1, 0, 2}, {"a", "b", "c"}, {1, 3});
  Output none = ops::Const(s_, Tensor::Scalar<std::string>(""));
  check(ops::StringSplitV2(s_, ops::Const(s_, Strings({"a b  c", " x ", ""})), none),
        {0, 0, 0, 1, 0, 2, 1, 0}, {"a", "b", "c", "x"}, {3, 3});
  check(ops::StringSplitV2(s_, ops::Const(s_, Strings({"a<>b<><>c"})),
                           ops::Const(s_, Tensor::Scalar<std::string>("<>"))),
        {0, 0, 0, 1, 0, 2, 0, 3}, {"a", "b", "", "c"}, {1, 4});
  check(ops::StringSplitV2(s_, ops::Const(s_, Strings({"a b c d"})), space, 2), {0, 0, 0, 1, 0, 2},
        {"a", "b", "c d"}, {1, 3});
  check(ops::StringSplitV2(s_, ops::Const(s_, Strings({"a b c d"})), none, 1), {0, 0, 0, 1},
        {"a", "b c d"}, {1, 2});
}

TEST(LegacyHash64Test, IsMurmurHash64AWithTensorFlowsSeed) {
  // TensorFlow's values (mod 2^62 above); here the full 64 bits of a
  // string of each tail length agree with those.
  EXPECT_EQ(LegacyHash64("hello") % (uint64_t{1} << 62), uint64_t{1331861223480393034});
  EXPECT_EQ(LegacyHash64("") % (uint64_t{1} << 62), uint64_t{105434511174508091});
}

}  // namespace
}  // namespace sluice
