// DataFormatDimMap and DataFormatVecPermute between NHWC and NCHW (and 5-D
// formats), spatial-only vectors, [4, 2] rows, and bad formats and shapes.
#include "ops/nn/data_format_ops.h"

#include <string>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Make;
using testing_util::TryEval;

TEST(DataFormatOpsTest, DimMap) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ExpectTensor<int32_t>(Eval(s, {}, ops::DataFormatDimMap(s, {0, 1, 2, 3, -1, -4})), {6},
                        {0, 2, 3, 1, 1, 0});
  ExpectTensor<int32_t>(Eval(s, {}, ops::DataFormatDimMap(s, {1, 4}, "NDHWC", "NCDHW")), {2},
                        {2, 1});
  absl::Status bad = TryEval(s, {}, ops::DataFormatDimMap(s, {4})).status();
  EXPECT_NE(bad.message().find("not in [-4, 4)"), std::string::npos) << bad;
  bad = TryEval(s, {}, ops::DataFormatDimMap(s, {0}, "NHWC", "NCHX")).status();
  EXPECT_NE(bad.message().find("permutations of each other"), std::string::npos) << bad;
}

TEST(DataFormatOpsTest, VecPermute) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // An NHWC shape [8, 32, 24, 3] in NCHW order, and back.
  ExpectTensor<int32_t>(Eval(s, {}, ops::DataFormatVecPermute(s, {8, 32, 24, 3})), {4},
                        {8, 3, 32, 24});
  ExpectTensor<int32_t>(Eval(s, {}, ops::DataFormatVecPermute(s, {8, 3, 32, 24}, "NCHW", "NHWC")),
                        {4}, {8, 32, 24, 3});
  // Spatial entries only keep their order; [4, 2] paddings move by rows.
  ExpectTensor<int32_t>(Eval(s, {}, ops::DataFormatVecPermute(s, {32, 24})), {2}, {32, 24});
  ExpectTensor<int32_t>(
      Eval(s, {}, ops::DataFormatVecPermute(s, ops::Const(s, Make<int32_t>({0, 0, 1, 2, 3, 4, 0, 0},
                                                                            {4, 2})))),
      {4, 2}, {0, 0, 0, 0, 1, 2, 3, 4});
  absl::Status bad = TryEval(s, {}, ops::DataFormatVecPermute(s, {1, 2, 3})).status();
  EXPECT_NE(bad.message().find("must be a vector of 4 or 2"), std::string::npos) << bad;
}

}  // namespace
}  // namespace sluice
