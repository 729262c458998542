// MaxPoolV2, MaxPoolWithArgmax and their gradient ops on hand-worked
// windows (indices with and without the batch, ties to the first), their
// gradients by central differences, and the errors. The conformance suite
// compares them with TensorFlow's.
#include "ops/nn/max_pool_ops.h"

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
using testing_util::GradError;
using testing_util::Placeholder;
using testing_util::TryEval;

Tensor TwoImages() {
  return Tensor::FromVector<float>({1, 5, 3, 2, 4, 0, 6, 7, 11, 15, 13, 12, 14, 10, 16, 17},
                                   TensorShape({2, 2, 4, 1}));
}

TEST(MaxPoolOpsTest, WindowsAndArgmax) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, TwoImages());
  ExpectTensor<float>(Eval(s, {}, ops::MaxPoolV2(s, x, ops::Const(s, std::vector<int32_t>{1, 2, 2, 1}),
                                                 ops::Const(s, std::vector<int32_t>{1, 2, 2, 1}),
                                                 "VALID")),
                      TensorShape({2, 1, 2, 1}), {5, 7, 15, 17});
  ops::MaxPoolWithArgmaxOutputs p = ops::MaxPoolWithArgmax(s, x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  ExpectTensor<float>(Eval(s, {}, p.output), TensorShape({2, 1, 2, 1}), {5, 7, 15, 17});
  ExpectTensor<int64_t>(Eval(s, {}, p.argmax), TensorShape({2, 1, 2, 1}), {1, 7, 1, 7});
  ops::MaxPoolWithArgmaxOutputs b =
      ops::MaxPoolWithArgmax(s, x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID", true, DT_INT32);
  ExpectTensor<int32_t>(Eval(s, {}, b.argmax), TensorShape({2, 1, 2, 1}), {1, 7, 9, 15});
  // SAME, stride 1: edge windows hold fewer pixels; a tie keeps the first.
  Output tie = ops::Const(s, Tensor::FromVector<float>({2, 2, 1, 2}, TensorShape({1, 2, 2, 1})));
  ops::MaxPoolWithArgmaxOutputs t = ops::MaxPoolWithArgmax(s, tie, {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME");
  ExpectTensor<float>(Eval(s, {}, t.output), TensorShape({1, 2, 2, 1}), {2, 2, 2, 2});
  ExpectTensor<int64_t>(Eval(s, {}, t.argmax), TensorShape({1, 2, 2, 1}), {0, 1, 3, 3});
}

TEST(MaxPoolOpsTest, GradientsMatchCentralDifferences) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE, TensorShape({2, 5, 6, 2}));
  std::vector<double> v(2 * 5 * 6 * 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.01 * static_cast<double>((i * 37) % 101);
  const Tensor xv = Tensor::FromVector<double>(v, TensorShape({2, 5, 6, 2}));
  Output v2 = ops::MaxPoolV2(s, x, ops::Const(s, std::vector<int32_t>{1, 3, 2, 1}),
                             ops::Const(s, std::vector<int32_t>{1, 2, 2, 1}), "SAME");
  EXPECT_LT(GradError(s, {{x, xv}}, v2), 1e-8);
  ops::MaxPoolWithArgmaxOutputs p =
      ops::MaxPoolWithArgmax(s, x, {1, 2, 3, 1}, {1, 1, 2, 1}, "VALID", false, DT_INT64);
  EXPECT_LT(GradError(s, {{x, xv}}, p.output), 1e-8);
}

TEST(MaxPoolOpsTest, GradGradWithArgmaxReadsTheArgmaxPositions) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, TwoImages());
  ops::MaxPoolWithArgmaxOutputs p = ops::MaxPoolWithArgmax(s, x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  auto route = [&](const char* op, Input grad) {
    return s.Op(op, std::source_location::current())
        .Input(x)
        .Input(grad)
        .Input(p.argmax)
        .Attr("ksize", std::vector<int64_t>{1, 2, 2, 1})
        .Attr("strides", std::vector<int64_t>{1, 2, 2, 1})
        .Attr("padding", std::string("VALID"))
        .Finalize1();
  };
  // With grad = x, each pooled value is read back: the pooled maxima.
  ExpectTensor<float>(Eval(s, {}, route("MaxPoolGradGradWithArgmax", x)), TensorShape({2, 1, 2, 1}),
                      {5, 7, 15, 17});
  // Second order: the gradient of MaxPoolGradWithArgmax with respect to its
  // incoming gradient, by finite differences.
  Output dy = Placeholder(s, DT_DOUBLE, TensorShape({2, 1, 2, 1}));
  Output xd = ops::Const(s, Tensor::FromVector<double>({1, 5, 3, 2, 4, 0, 6, 7, 11, 15, 13, 12, 14,
                                                        10, 16, 17},
                                                       TensorShape({2, 2, 4, 1})));
  ops::MaxPoolWithArgmaxOutputs pd =
      ops::MaxPoolWithArgmax(s, xd, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  Output back = s.Op("MaxPoolGradWithArgmax", std::source_location::current())
                    .Input(xd)
                    .Input(dy)
                    .Input(pd.argmax)
                    .Attr("ksize", std::vector<int64_t>{1, 2, 2, 1})
                    .Attr("strides", std::vector<int64_t>{1, 2, 2, 1})
                    .Attr("padding", std::string("VALID"))
                    .Finalize1();
  EXPECT_LT(GradError(s, {{dy, Tensor::FromVector<double>({0.3, -1.0, 2.0, 0.5},
                                                           TensorShape({2, 1, 2, 1}))}},
                      back),
            1e-8);
}

TEST(MaxPoolOpsTest, GradGradV2AndSecondOrderThroughMaxPoolV2) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, TwoImages());
  Output k = ops::Const(s, std::vector<int32_t>{1, 2, 2, 1});
  Output y = ops::MaxPoolV2(s, x, k, k, "VALID");
  Output gg = s.Op("MaxPoolGradGradV2", std::source_location::current())
                  .Input(x).Input(y).Input(x).Input(k).Input(k)
                  .Attr("padding", std::string("VALID"))
                  .Finalize1();
  ExpectTensor<float>(Eval(s, {}, gg), TensorShape({2, 1, 2, 1}), {5, 7, 15, 17});
  Output xd = ops::Const(s, Tensor::FromVector<double>({1, 5, 3, 2, 4, 0, 6, 7, 11, 15, 13, 12, 14,
                                                        10, 16, 17},
                                                       TensorShape({2, 2, 4, 1})));
  Output yd = ops::MaxPoolV2(s, xd, k, k, "VALID");
  Output dy = Placeholder(s, DT_DOUBLE, TensorShape({2, 1, 2, 1}));
  Output back = s.Op("MaxPoolGradV2", std::source_location::current())
                    .Input(xd).Input(yd).Input(dy).Input(k).Input(k)
                    .Attr("padding", std::string("VALID"))
                    .Finalize1();
  EXPECT_LT(GradError(s, {{dy, Tensor::FromVector<double>({0.3, -1.0, 2.0, 0.5},
                                                           TensorShape({2, 1, 2, 1}))}},
                      back),
            1e-8);
}

TEST(MaxPoolOpsTest, Errors) {
  auto message = [](std::vector<int64_t> k, const Tensor& v) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(s, DT_FLOAT);
    ops::MaxPoolWithArgmaxOutputs p = ops::MaxPoolWithArgmax(s, x, k, {1, 1, 1, 1}, "VALID");
    return std::string(TryEval(s, {{x, v}}, p.output).status().message());
  };
  EXPECT_THAT(message({2, 2, 2, 1}, TwoImages()), HasSubstr("ksize must be 4 positive values"));
  EXPECT_THAT(message({1, 2, 2, 1}, Tensor(DT_FLOAT, TensorShape({2, 2}))),
              HasSubstr("input must be 4-dimensional"));
  // An argmax pointing past the input.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output g = s.Op("MaxPoolGradWithArgmax")
                 .Input(ops::Const(s, TwoImages()))
                 .Input(ops::Const(s, Tensor::FromVector<float>({1, 1, 1, 1}, TensorShape({2, 1, 2, 1}))))
                 .Input(ops::Const(s, Tensor::FromVector<int64_t>({1, 99, 1, 7}, TensorShape({2, 1, 2, 1}))))
                 .Attr("ksize", std::vector<int64_t>{1, 2, 2, 1})
                 .Attr("strides", std::vector<int64_t>{1, 2, 2, 1})
                 .Attr("padding", std::string("VALID"))
                 .Finalize1();
  EXPECT_THAT(std::string(TryEval(s, {}, g).status().message()),
              HasSubstr("argmax[1] = 99 is outside the input"));
}

}  // namespace
}  // namespace sluice
