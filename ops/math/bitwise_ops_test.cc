// The bitwise ops against TensorFlow's values (tf.bitwise on the same
// inputs): out-of-range shifts clamped, arithmetic right shifts, broadcasting.
#include "ops/math/bitwise_ops.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;

TEST(BitwiseOpsTest, AndOrXorInvert) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Tensor::FromVector<int32_t>({12, -1, 0, 5}));
  Output y = ops::Const(s, Tensor::FromVector<int32_t>({10, 7, 3, -6}));
  ExpectTensor<int32_t>(Eval(s, {}, ops::BitwiseAnd(s, x, y)), TensorShape({4}), {8, 7, 0, 0});
  ExpectTensor<int32_t>(Eval(s, {}, ops::BitwiseOr(s, x, y)), TensorShape({4}), {14, -1, 3, -1});
  ExpectTensor<int32_t>(Eval(s, {}, ops::BitwiseXor(s, x, y)), TensorShape({4}), {6, -8, 3, -1});
  ExpectTensor<int32_t>(Eval(s, {}, ops::Invert(s, x)), TensorShape({4}), {-13, 0, -1, -6});
  Output bytes = ops::Const(s, Tensor::FromVector<uint8_t>({0x0f, 0xf0}));
  ExpectTensor<uint8_t>(Eval(s, {}, ops::Invert(s, bytes)), TensorShape({2}), {0xf0, 0x0f});
  // [2, 2] & [2]: broadcast.
  Output m = ops::Const(s, Tensor::FromVector<int64_t>({0xff, 0x0f, 0xf0, 0x3c}, TensorShape({2, 2})));
  Output mask = ops::Const(s, Tensor::FromVector<int64_t>({0x3, 0x30}));
  ExpectTensor<int64_t>(Eval(s, {}, ops::BitwiseAnd(s, m, mask)), TensorShape({2, 2}),
                        {0x3, 0x0, 0x0, 0x30});
}

TEST(BitwiseOpsTest, ShiftsClampTheirCount) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ExpectTensor<int32_t>(
      Eval(s, {}, ops::LeftShift(s, ops::Const(s, Tensor::FromVector<int32_t>({1, -1, 1, 5})),
                                 ops::Const(s, Tensor::FromVector<int32_t>({3, 1, 40, -1})))),
      TensorShape({4}), {8, -2, INT32_MIN, 5});
  ExpectTensor<int32_t>(
      Eval(s, {}, ops::RightShift(s, ops::Const(s, Tensor::FromVector<int32_t>({-16, 16, -1, 5})),
                                  ops::Const(s, Tensor::FromVector<int32_t>({2, 40, 3, -2})))),
      TensorShape({4}), {-4, 0, -1, 5});
  ExpectTensor<uint8_t>(
      Eval(s, {}, ops::RightShift(s, ops::Const(s, Tensor::FromVector<uint8_t>({0x80, 0xff})),
                                  ops::Const(s, Tensor::FromVector<uint8_t>({7, 4})))),
      TensorShape({2}), {1, 0x0f});
}

TEST(BitwiseOpsTest, BitcastReinterpretsBytesAndReshapes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // int64 -> uint64: the same shape and bits (-1 is all ones).
  Output u = ops::Bitcast(s, ops::Const(s, Tensor::FromVector<int64_t>({-1, 5})), ::tensorflow::DT_UINT64);
  EXPECT_EQ(u.shape(), TensorShape({2}));
  Tensor ut = Eval(s, {}, u);
  EXPECT_EQ(ut.data<uint64_t>()[0], ~uint64_t{0});
  EXPECT_EQ(ut.data<uint64_t>()[1], 5u);
  // float -> uint8: a last dimension of 4 (little-endian bytes of 1.0f).
  Output b = ops::Bitcast(s, ops::Const(s, Tensor::FromVector<float>({1.0f})), DT_UINT8);
  EXPECT_EQ(b.shape(), TensorShape({1, 4}));
  ExpectTensor<uint8_t>(Eval(s, {}, b), TensorShape({1, 4}), {0x00, 0x00, 0x80, 0x3f});
  // ... and back: the last dimension folds away.
  Output f = ops::Bitcast(s, b, DT_FLOAT);
  EXPECT_EQ(f.shape(), TensorShape({1}));
  ExpectTensor<float>(Eval(s, {}, f), TensorShape({1}), {1.0f});
  Scope bad = Scope::NewRootScope(BuiltinOps());
  ops::Bitcast(bad, ops::Const(bad, Tensor::FromVector<uint8_t>({1, 2, 3})), DT_INT32);
  EXPECT_NE(bad.status().message().find("the last dimension must be 4"), std::string::npos)
      << bad.status();
}

TEST(BitwiseOpsTest, PopulationCount) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output c = s.Op("PopulationCount", std::source_location::current())
                 .Input(ops::Const(s, Tensor::FromVector<int32_t>({0, 7, -1, 1 << 30})))
                 .Finalize1();
  ExpectTensor<uint8_t>(Eval(s, {}, c), TensorShape({4}), {0, 3, 32, 1});
}

TEST(BitwiseOpsTest, NoGradients) {
  for (const char* op :
       {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift", "Invert", "Bitcast",
        "PopulationCount"}) {
    ASSERT_NE(BuiltinOps()->Find(op), nullptr) << op;
    EXPECT_TRUE(BuiltinOps()->Find(op)->no_gradient) << op;
  }
}

}  // namespace
}  // namespace sluice
