// DecodeRaw and DecodeCSV with the cases of TensorFlow's
// decode_raw_op_test.py and decode_csv_op_test.py: values, endianness,
// quoting, defaults, na_value, select_cols, and each error.
#include "ops/parsing/decode_ops.h"

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

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::TryEval;

template <typename T>
std::vector<T> Values(const Tensor& t) {
  auto f = t.flat<T>();
  return std::vector<T>(f.begin(), f.end());
}

Tensor Strings(const std::vector<std::string>& v) { return Tensor::FromVector<std::string>(v); }

class DecodeOpsTest : public ::testing::Test {
 protected:
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(DecodeOpsTest, DecodeRawUint8AndInt16) {
  Output x = ops::Placeholder(s_, DT_STRING);
  Output u8 = ops::DecodeRaw(s_, x, DT_UINT8);
  Output i16 = ops::DecodeRaw(s_, x, DT_INT16);
  Output i16be = ops::DecodeRaw(s_, x, DT_INT16, {.little_endian = false});
  ExpectTensor<uint8_t>(Eval(s_, {{x, Strings({"A", "a"})}}, u8), TensorShape({2, 1}), {0x41, 0x61});
  ExpectTensor<uint8_t>(Eval(s_, {{x, Strings({"wer", "XYZ"})}}, u8), TensorShape({2, 3}),
                        {0x77, 0x65, 0x72, 0x58, 0x59, 0x5a});
  ExpectTensor<int16_t>(Eval(s_, {{x, Strings({"AaBC"})}}, i16), TensorShape({1, 2}),
                        {0x6141, 0x4342});
  ExpectTensor<int16_t>(Eval(s_, {{x, Strings({"AaBC"})}}, i16be), TensorShape({1, 2}),
                        {0x4161, 0x4243});
  ExpectTensor<uint8_t>(Eval(s_, {{x, Tensor::Scalar<std::string>("xy")}}, u8), TensorShape({2}),
                        {'x', 'y'});
  ExpectTensor<uint8_t>(Eval(s_, {{x, Strings({"", ""})}}, u8), TensorShape({2, 0}), {});
  absl::StatusOr<Tensor> r = TryEval(s_, {{x, Strings({"AaBC", "ABC"})}}, i16);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("DecodeRaw requires input strings to all be the same size, but element 1 "
                        "has size 3 != 4"));
  r = TryEval(s_, {{x, Strings({"123", "456"})}}, i16);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("Input to DecodeRaw has length 3 that is not a multiple of 2"));
}

TEST_F(DecodeOpsTest, DecodeRawFloatAndDouble) {
  Output x = ops::Placeholder(s_, DT_STRING);
  float f[2] = {1.5f, -2.25f};
  double d = 3.125;
  ExpectTensor<float>(
      Eval(s_, {{x, Strings({std::string(reinterpret_cast<char*>(f), 8)})}},
           ops::DecodeRaw(s_, x, DT_FLOAT)),
      TensorShape({1, 2}), {1.5f, -2.25f});
  std::string be(reinterpret_cast<char*>(&d), 8);
  std::reverse(be.begin(), be.end());
  ExpectTensor<double>(Eval(s_, {{x, Strings({be})}},
                            ops::DecodeRaw(s_, x, DT_DOUBLE, {.little_endian = false})),
                       TensorShape({1, 1}), {3.125});
}

TEST_F(DecodeOpsTest, DecodeCsvSimple) {
  Output x = ops::Placeholder(s_, DT_STRING);
  std::vector<Output> cols = ops::DecodeCSV(
      s_, x,
      {ops::Const(s_, Tensor::FromVector<int32_t>({2})), ops::Const(s_, Tensor(DT_FLOAT, {0})),
       ops::Const(s_, Tensor::FromVector<std::string>({"d"})),
       ops::Const(s_, Tensor::FromVector<int64_t>({-1}))});
  ASSERT_TRUE(s_.ok()) << s_.status();
  Tensor in = Strings({"1,2.5,a,4", ",  -3 ,,", " 7 ,1e2,\"q,\"\"r\",9000000000"});
  ExpectTensor<int32_t>(Eval(s_, {{x, in}}, cols[0]), TensorShape({3}), {1, 2, 7});
  ExpectTensor<float>(Eval(s_, {{x, in}}, cols[1]), TensorShape({3}), {2.5, -3, 100});
  EXPECT_THAT(Values<std::string>(Eval(s_, {{x, in}}, cols[2])), ElementsAre("a", "d", "q,\"r"));
  ExpectTensor<int64_t>(Eval(s_, {{x, in}}, cols[3]), TensorShape({3}), {4, -1, 9000000000});

  auto error = [&](const std::string& rec) {
    return std::string(TryEval(s_, {{x, Strings({rec})}}, cols[0]).status().message());
  };
  EXPECT_THAT(error("1,,a,4"), HasSubstr("Field 1 is required but missing in record 0!"));
  EXPECT_THAT(error("1x,2,a,4"), HasSubstr("Field 0 in record 0 is not a valid int32: 1x"));
  EXPECT_THAT(error("1,2,a"), HasSubstr("Expect 4 fields but have 3 in record 0"));
  EXPECT_THAT(error("1,2,a\"b,4"), HasSubstr("Unquoted fields cannot have quotes/CRLFs inside"));
  EXPECT_THAT(error("1,2,\"a\"b,4"), HasSubstr("Quote inside a string has to be escaped"));
  EXPECT_THAT(error("1,2,\"ab,4"), HasSubstr("Quoted field has to end with quote"));
  EXPECT_THAT(error("99999999999,2,a,4"), HasSubstr("not a valid int32"));
}

TEST_F(DecodeOpsTest, DecodeCsvOptions) {
  Output x = ops::Placeholder(s_, DT_STRING);
  // Tab-separated, no quote handling, NA as a missing value, columns 1 and 3.
  std::vector<Output> cols = ops::DecodeCSV(
      s_, x, {ops::Const(s_, 0.0f), ops::Const(s_, std::string("none"))},
      {.field_delim = "\t", .use_quote_delim = false, .na_value = "NA", .select_cols = {1, 3}});
  ASSERT_TRUE(s_.ok()) << s_.status();
  Tensor in = Strings({"x\t1.5\ty\t\"z\"", "x\tNA\ty\tNA"});
  ExpectTensor<float>(Eval(s_, {{x, in}}, cols[0]), TensorShape({2}), {1.5, 0});
  EXPECT_THAT(Values<std::string>(Eval(s_, {{x, in}}, cols[1])), ElementsAre("\"z\"", "none"));
  absl::StatusOr<Tensor> r = TryEval(s_, {{x, Strings({"a\tb"})}}, cols[0]);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Expect 4 fields but have 2 in record 0"));

  std::vector<Output> bad = ops::DecodeCSV(s_, x, {ops::Const(s_, 0.0f)}, {.field_delim = ";;"});
  r = TryEval(s_, {{x, Strings({"1"})}}, bad[0]);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("field_delim should be only 1 char"));
  std::vector<Output> unsorted = ops::DecodeCSV(
      s_, x, {ops::Const(s_, 0.0f), ops::Const(s_, 0.0f)}, {.select_cols = {2, 1}});
  r = TryEval(s_, {{x, Strings({"1,2,3"})}}, unsorted[0]);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("select_cols should be increasing"));
}

TEST_F(DecodeOpsTest, DecodeCsvTrailingDelimiterAndEmptyRecord) {
  Output x = ops::Placeholder(s_, DT_STRING);
  std::vector<Output> cols = ops::DecodeCSV(
      s_, x, {ops::Const(s_, std::string("a")), ops::Const(s_, std::string("b"))});
  Tensor in = Strings({"1,", ","});
  EXPECT_THAT(Values<std::string>(Eval(s_, {{x, in}}, cols[0])), ElementsAre("1", "a"));
  EXPECT_THAT(Values<std::string>(Eval(s_, {{x, in}}, cols[1])), ElementsAre("b", "b"));
  absl::StatusOr<Tensor> r = TryEval(s_, {{x, Strings({""})}}, cols[0]);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Expect 2 fields but have 1 in record 0"));
}

}  // namespace
}  // namespace sluice
