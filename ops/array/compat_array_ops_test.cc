// Empty, UnravelIndex, the Inplace ops and NthElement on known values, the
// NthElement gradient (shared among ties), and bad inputs.
#include "ops/array/compat_array_ops.h"

#include <string>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::GradError;
using testing_util::Make;
using testing_util::Placeholder;
using testing_util::TryEval;

std::string ErrorOf(const Scope& s, const Output& y) {
  return std::string(TryEval(s, {}, y).status().message());
}

TEST(CompatArrayOpsTest, EmptyIsZeros) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output e = ops::Empty(s, {2, 3}, DT_FLOAT, true);
  EXPECT_EQ(e.shape(), TensorShape({2, 3}));
  ExpectTensor<float>(Eval(s, {}, e), {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST(CompatArrayOpsTest, UnravelIndex) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ExpectTensor<int32_t>(Eval(s, {}, ops::UnravelIndex(s, {1, 5, 4}, {3, 2})), {2, 3},
                        {0, 2, 2, 1, 1, 0});
  ExpectTensor<int64_t>(Eval(s, {}, ops::UnravelIndex(s, ops::Const(s, int64_t{7}),
                                                      ops::Const(s, {int64_t{2}, int64_t{4}}))),
                        {2}, {1, 3});
  EXPECT_NE(ErrorOf(s, ops::UnravelIndex(s, {6}, {3, 2})).find("out of bounds"), std::string::npos);
  EXPECT_NE(ErrorOf(s, ops::UnravelIndex(s, {0}, {3, 0})).find("positive"), std::string::npos);
}

TEST(CompatArrayOpsTest, InplaceOpsCopyAndWriteRows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Make<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  Output v = ops::Const(s, Make<float>({10, 20, 30, 40}, {2, 2}));
  ExpectTensor<float>(Eval(s, {}, ops::Inplace(s, "InplaceUpdate", x, {2, 0}, v)), {3, 2},
                      {30, 40, 3, 4, 10, 20});
  ExpectTensor<float>(Eval(s, {}, ops::Inplace(s, "InplaceAdd", x, {2, 0}, v)), {3, 2},
                      {31, 42, 3, 4, 15, 26});
  ExpectTensor<float>(Eval(s, {}, ops::Inplace(s, "InplaceSub", x, {1, 1}, v)), {3, 2},
                      {1, 2, -37, -56, 5, 6});
  ExpectTensor<float>(Eval(s, {}, x), {3, 2}, {1, 2, 3, 4, 5, 6});  // x itself unchanged
  EXPECT_NE(ErrorOf(s, ops::Inplace(s, "InplaceAdd", x, {3, 0}, v)).find("not in [0, 3)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(s, ops::Inplace(s, "InplaceAdd", x, {0}, v)).find("doesn't match"),
            std::string::npos);
}

TEST(CompatArrayOpsTest, NthElementAndItsGradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Make<float>({5, 1, 4, 2, 3, 9, 7, 8}, {2, 4}));
  ExpectTensor<float>(Eval(s, {}, ops::NthElement(s, x, 1)), {2}, {2, 7});
  ExpectTensor<float>(Eval(s, {}, ops::NthElement(s, x, 0, true)), {2}, {5, 9});
  EXPECT_NE(ErrorOf(s, ops::NthElement(s, x, 4)).find("must be in [0, 4)"), std::string::npos);
  Output p = Placeholder(s, DT_DOUBLE, TensorShape({2, 3}));
  EXPECT_LT(GradError(s, {{p, Make<double>({0.3, -1.0, 0.7, 2.0, 0.1, -0.4}, {2, 3})}},
                      ops::NthElement(s, p, 1)),
            1e-6);
}

TEST(CompatArrayOpsTest, SnapshotGuaranteeConstDeepCopyAndToBool) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Make<float>({1, 2, 3}, {3}));
  ExpectTensor<float>(Eval(s, {}, ops::Snapshot(s, x)), {3}, {1, 2, 3});
  for (const char* op : {"GuaranteeConst", "DeepCopy"}) {
    ExpectTensor<float>(Eval(s, {}, s.Op(op).Input(x).Finalize1()), {3}, {1, 2, 3});
  }
  ExpectTensor<std::string>(Eval(s, {}, ops::Snapshot(s, ops::Const(s, std::string("a")))), {}, {"a"});
  // Scalars by value, other tensors by whether they have elements.
  ExpectTensor<bool>(Eval(s, {}, ops::ToBool(s, ops::Const(s, 0.0f))), {}, {false});
  ExpectTensor<bool>(Eval(s, {}, ops::ToBool(s, ops::Const(s, int64_t{-3}))), {}, {true});
  ExpectTensor<bool>(Eval(s, {}, ops::ToBool(s, ops::Const(s, std::string("")))), {}, {false});
  ExpectTensor<bool>(Eval(s, {}, ops::ToBool(s, x)), {}, {true});
  ExpectTensor<bool>(Eval(s, {}, ops::ToBool(s, ops::Const(s, Make<float>({}, {0, 2})))), {}, {false});
  EXPECT_NE(ErrorOf(s, ops::ToBool(s, ops::Const(s, Make<uint8_t>({1}, {})))).find("ToBool of a uint8"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice
