// The text ops against values TensorFlow 2.21 computed for the same inputs
// (tf.raw_ops.StringLength, StringLower, Substr, StringToNumber,
// RegexReplace, ReduceJoin, EncodeBase64, ...), and their errors. The
// conformance suite (tests/tf_conformance) checks them through a graph
// TensorFlow wrote.
#include "ops/strings/string_transform_ops.h"

#include <cmath>
#include <limits>
#include <optional>
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

class StringTransformOpsTest : public ::testing::Test {
 protected:
  // A vector of the values, or a tensor of the given shape.
  Output Strings(const std::vector<std::string>& values,
                 std::optional<TensorShape> shape = std::nullopt) {
    Tensor t(DT_STRING, shape.value_or(TensorShape({static_cast<int64_t>(values.size())})));
    for (size_t i = 0; i < values.size(); ++i) t.flat<std::string>()[i] = values[i];
    return ops::Const(s_, t);
  }
  Output Ints(const std::vector<int32_t>& v) { return ops::Const(s_, Tensor::FromVector(v)); }
  std::string Error(const Output& y) {
    absl::StatusOr<Tensor> r = TryEval(s_, {}, y);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    return std::string(r.status().message());
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(StringTransformOpsTest, LengthCaseAndStrip) {
  Output words = Strings({"h\xc3\xa9llo", ""});
  ExpectTensor<int32_t>(Eval(s_, {}, ops::StringLength(s_, words)), TensorShape({2}), {6, 0});
  ExpectTensor<int32_t>(Eval(s_, {}, ops::StringLength(s_, words, "UTF8_CHAR")), TensorShape({2}),
                        {5, 0});
  // ASCII letters only: the two-byte É stays as it is.
  ExpectTensor<std::string>(Eval(s_, {}, ops::StringLower(s_, Strings({"H\xc3\x89llo ABC"}))),
                            TensorShape({1}), {"h\xc3\x89llo abc"});
  ExpectTensor<std::string>(Eval(s_, {}, ops::StringUpper(s_, Strings({"stra\xc3\x9f" "e 1a"}))),
                            TensorShape({1}), {"STRA\xc3\x9f" "E 1A"});
  ExpectTensor<std::string>(Eval(s_, {}, ops::StringStrip(s_, Strings({" \t a b \n", ""}))),
                            TensorShape({2}), {"a b", ""});
  absl::StatusOr<Tensor> utf8 = TryEval(s_, {}, ops::StringLower(s_, words, "utf-8"));
  EXPECT_EQ(utf8.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(utf8.status().message(), HasSubstr("ICU"));
}

TEST_F(StringTransformOpsTest, SubstrCountsFromEitherEndAndBroadcasts) {
  Output words = Strings({"hello", "ab"});
  ExpectTensor<std::string>(
      Eval(s_, {}, ops::Substr(s_, words, Ints({-2, 1}), Ints({-1, 5}))), TensorShape({2}),
      {"lo", "b"});
  ExpectTensor<std::string>(
      Eval(s_, {}, ops::Substr(s_, words, Ints({-5, -2}), Ints({1, 5}))), TensorShape({2}),
      {"h", "ab"});
  ExpectTensor<std::string>(Eval(s_, {}, ops::Substr(s_, words, Ints({5, 2}), Ints({2, 2}))),
                            TensorShape({2}), {"", ""});
  ExpectTensor<std::string>(
      Eval(s_, {}, ops::Substr(s_, Strings({"h\xc3\xa9llo", "ab"}),
                               ops::Const(s_, Tensor::Scalar<int64_t>(1)),
                               ops::Const(s_, Tensor::Scalar<int64_t>(2)), "UTF8_CHAR")),
      TensorShape({2}), {"\xc3\xa9l", "b"});
  ExpectTensor<std::string>(
      Eval(s_, {}, ops::Substr(s_, Strings({"h\xc3\xa9llo"}), Ints({-3}), Ints({2}),
                               "UTF8_CHAR")),
      TensorShape({1}), {"ll"});
  // [2,2] strings, [2] positions: each row's strings take pos[j], len[j].
  ExpectTensor<std::string>(
      Eval(s_, {}, ops::Substr(s_, Strings({"hello", "world", "abc", "xyz"}, TensorShape({2, 2})),
                               Ints({1, 2}), Ints({2, 1}))),
      TensorShape({2, 2}), {"el", "r", "bc", "z"});

  EXPECT_THAT(Error(ops::Substr(s_, words, Ints({6, 1}), Ints({1, 5}))),
              HasSubstr("pos 6 out of range for string b'hello' at index 0"));
  EXPECT_THAT(Error(ops::Substr(s_, words, Ints({0, -3}), Ints({1, 5}))),
              HasSubstr("pos -3 out of range for string b'ab' at index 1"));
  EXPECT_THAT(Error(ops::Substr(s_, words, Ints({0, 1}), Ints({1}))), HasSubstr("same shape"));
}

TEST_F(StringTransformOpsTest, StringToNumberReadsAsTensorFlowDoes) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ExpectTensor<float>(
      Eval(s_, {}, ops::StringToNumber(s_, Strings({" 1.5 ", "inf", "-NaN", "0x10", "1e3"}))),
      TensorShape({5}), {1.5f, inf, nan, 16.0f, 1000.0f});
  ExpectTensor<double>(Eval(s_, {}, ops::StringToNumber(s_, Strings({"0.1", "-2e-3"}), DT_DOUBLE)),
                       TensorShape({2}), {0.1, -2e-3}, 0);
  ExpectTensor<int32_t>(
      Eval(s_, {}, ops::StringToNumber(s_, Strings({" 12 ", "+7", "-2147483648"}), DT_INT32)),
      TensorShape({3}), {12, 7, -2147483647 - 1});
  ExpectTensor<int64_t>(
      Eval(s_, {}, ops::StringToNumber(s_, Strings({"9000000000"}), DT_INT64)), TensorShape({1}),
      {9000000000});
  for (const char* bad : {"0x10", "1e3", "3000000000", "", "1.5"}) {
    EXPECT_THAT(Error(ops::StringToNumber(s_, Strings({bad}), DT_INT32)),
                HasSubstr(std::string("could not correctly convert string: ") + bad))
        << bad;
  }
  EXPECT_THAT(Error(ops::StringToNumber(s_, Strings({"1.5x"}))), HasSubstr("1.5x"));
  EXPECT_THAT(Error(ops::StringToNumber(s_, Strings({" "}))), HasSubstr("convert"));
}

TEST_F(StringTransformOpsTest, RegexReplace) {
  ExpectTensor<std::string>(
      Eval(s_, {}, ops::RegexReplace(s_, Strings({"aaa bbb aa"}), Strings({"(a+)"}, TensorShape()),
                                     Strings({"<\\1>"}, TensorShape()), false)),
      TensorShape({1}), {"<aaa> bbb aa"});
  ExpectTensor<std::string>(
      Eval(s_, {}, ops::RegexReplace(s_, Strings({"aaa bbb aa"}), Strings({"(a+)"}, TensorShape()),
                                     Strings({"<\\1>"}, TensorShape()))),
      TensorShape({1}), {"<aaa> bbb <aa>"});
  ExpectTensor<std::string>(
      Eval(s_, {}, ops::StaticRegexReplace(s_, Strings({"a.b,c!!", "Don't"}), "[\\p{P}]", "")),
      TensorShape({2}), {"abc", "Dont"});
  EXPECT_THAT(Error(ops::StaticRegexReplace(s_, Strings({"a"}), "(a+", "x")),
              HasSubstr("Invalid pattern: (a+"));
  EXPECT_THAT(Error(ops::StaticRegexReplace(s_, Strings({"a"}), "(a)", "\\2")),
              HasSubstr("Invalid rewrite"));
  EXPECT_THAT(Error(ops::RegexReplace(s_, Strings({"a"}), Strings({"a", "b"}),
                                      Strings({"x"}, TensorShape()))),
              HasSubstr("pattern must be a scalar"));
}

TEST_F(StringTransformOpsTest, ReduceJoinFollowsTheListedAxes) {
  Output x = Strings({"a b", "cd", "ef", "g"}, TensorShape({2, 2}));
  ExpectTensor<std::string>(Eval(s_, {}, ops::ReduceJoin(s_, x, Ints({}), false, "-")),
                            TensorShape({2, 2}), {"a b", "cd", "ef", "g"});
  ExpectTensor<std::string>(Eval(s_, {}, ops::ReduceJoin(s_, x, Ints({-1}), false, "-")),
                            TensorShape({2}), {"a b-cd", "ef-g"});
  ExpectTensor<std::string>(Eval(s_, {}, ops::ReduceJoin(s_, x, Ints({0}), true, "")),
                            TensorShape({1, 2}), {"a bef", "cdg"});
  // Joined along axis 0 first, then 1 (TensorFlow's order); [1, 0] is row-major.
  ExpectTensor<std::string>(Eval(s_, {}, ops::ReduceJoin(s_, x, Ints({0, 1}), true, "-")),
                            TensorShape({1, 1}), {"a b-ef-cd-g"});
  ExpectTensor<std::string>(Eval(s_, {}, ops::ReduceJoin(s_, x, Ints({1, 0}), false, "-")),
                            TensorShape({}), {"a b-cd-ef-g"});
  Output empty = ops::Const(s_, Tensor(DT_STRING, TensorShape({0, 2})));
  ExpectTensor<std::string>(Eval(s_, {}, ops::ReduceJoin(s_, empty, Ints({0}), false, "-")),
                            TensorShape({2}), {"", ""});
  Output at = testing_util::Placeholder(s_, DT_INT32);
  Output joined = ops::ReduceJoin(s_, x, at);
  absl::StatusOr<Tensor> r = TryEval(s_, {{at, Tensor::FromVector<int32_t>({2})}}, joined);
  EXPECT_THAT(r.status().message(), HasSubstr("Invalid reduction dimension 2"));
  r = TryEval(s_, {{at, Tensor::FromVector<int32_t>({1, -1})}}, joined);
  EXPECT_THAT(r.status().message(), HasSubstr("Duplicate reduction dimension -1"));
}

TEST_F(StringTransformOpsTest, Base64IsWebSafe) {
  Output raw = Strings({"hello?>", "a", ""});
  ExpectTensor<std::string>(Eval(s_, {}, ops::EncodeBase64(s_, raw)), TensorShape({3}),
                            {"aGVsbG8_Pg", "YQ", ""});
  ExpectTensor<std::string>(Eval(s_, {}, ops::EncodeBase64(s_, raw, true)), TensorShape({3}),
                            {"aGVsbG8_Pg==", "YQ==", ""});
  ExpectTensor<std::string>(
      Eval(s_, {}, ops::DecodeBase64(s_, Strings({"aGVsbG8_Pg", "YQ==", "YQ"}))),
      TensorShape({3}), {"hello?>", "a", "a"});
  EXPECT_THAT(Error(ops::DecodeBase64(s_, Strings({"a"}))), HasSubstr("1 modulo 4"));
  EXPECT_THAT(Error(ops::DecodeBase64(s_, Strings({"a*bc"}))), HasSubstr("Invalid character"));
}

}  // namespace
}  // namespace sluice
