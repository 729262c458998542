#include "ops/nn/nn_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/gradient_checker.h"
#include "session/direct_session.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// Placeholder built by op name, so this test needs only the op's definition.
Output Ph(const Scope& s, DataType dtype, const TensorShape& shape = TensorShape::Unknown()) {
  return s.Op("Placeholder").Attr("dtype", dtype).Attr("shape", shape).Finalize1();
}

template <typename T>
Tensor Make(const std::vector<double>& values, const TensorShape& shape) {
  std::vector<T> v(values.begin(), values.end());
  return Tensor::FromVector<T>(v, shape);
}

// Deterministic, distinct-ish values.
std::vector<double> Wave(int64_t n, double a, double b, double scale = 1.0) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * std::sin(a * i + b);
  return v;
}

template <typename T>
std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (T x : t.flat<T>()) v.push_back(static_cast<double>(x));
  return v;
}

void ExpectAllNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << "at " << i;
  }
}

absl::StatusOr<std::vector<Tensor>> RunAll(const Scope& s,
                                           const std::vector<std::pair<Output, Tensor>>& feeds,
                                           const std::vector<Output>& fetches) {
  if (!s.ok()) return s.status();
  auto session = NewSession(BuiltinSessionConfig(), *s.graph());
  if (!session.ok()) return session.status();
  return (*session)->Run(feeds, fetches);
}

// ---------------------------------------------------------------------------
// Reference implementations.

struct Geom {
  int n, h, w, c;      // input
  int fr, fc, od;      // filter rows, cols, out depth (od == c for pooling)
  int sr, sc;          // strides
  int dr = 1, dc = 1;  // dilations
  std::string padding;
  int oh = 0, ow = 0, pt = 0, pl = 0;

  void Finish() {
    auto dim = [&](int in, int k, int s, int d, int* out, int* pad) {
      const int eff = (k - 1) * d + 1;
      if (padding == "VALID") {
        *out = (in - eff + s) / s;  // ceil((in - eff + 1) / s)
        *pad = 0;
      } else {
        *out = (in + s - 1) / s;  // ceil(in / s)
        *pad = std::max(0, (*out - 1) * s + eff - in) / 2;
      }
    };
    dim(h, fr, sr, dr, &oh, &pt);
    dim(w, fc, sc, dc, &ow, &pl);
  }
  int64_t in_size() const { return int64_t{n} * h * w * c; }
  int64_t filter_size() const { return int64_t{fr} * fc * c * od; }
  int64_t out_size(int depth) const { return int64_t{n} * oh * ow * depth; }
  TensorShape in_shape() const { return TensorShape({n, h, w, c}); }
  TensorShape filter_shape() const { return TensorShape({fr, fc, c, od}); }
  TensorShape out_shape(int depth) const { return TensorShape({n, oh, ow, depth}); }
  // Input offset of a tap, or -1 in the padding.
  int64_t Tap(int b, int y, int x, int i, int j) const {
    const int ih = y * sr - pt + i * dr, iw = x * sc - pl + j * dc;
    if (ih < 0 || ih >= h || iw < 0 || iw >= w) return -1;
    return ((int64_t{b} * h + ih) * w + iw) * c;
  }
};

// Naive direct convolution and its two adjoints.
struct ConvRef {
  std::vector<double> out, dx, dw;
};
ConvRef NaiveConv(const Geom& g, const std::vector<double>& x, const std::vector<double>& f,
                  const std::vector<double>& dy) {
  ConvRef r;
  r.out.assign(g.out_size(g.od), 0.0);
  r.dx.assign(g.in_size(), 0.0);
  r.dw.assign(g.filter_size(), 0.0);
  for (int b = 0; b < g.n; ++b)
    for (int y = 0; y < g.oh; ++y)
      for (int xo = 0; xo < g.ow; ++xo)
        for (int o = 0; o < g.od; ++o) {
          const int64_t out_at = ((int64_t{b} * g.oh + y) * g.ow + xo) * g.od + o;
          for (int i = 0; i < g.fr; ++i)
            for (int j = 0; j < g.fc; ++j) {
              const int64_t at = g.Tap(b, y, xo, i, j);
              if (at < 0) continue;
              for (int ci = 0; ci < g.c; ++ci) {
                const int64_t w_at = ((int64_t{i} * g.fc + j) * g.c + ci) * g.od + o;
                r.out[out_at] += x[at + ci] * f[w_at];
                r.dx[at + ci] += dy[out_at] * f[w_at];
                r.dw[w_at] += x[at + ci] * dy[out_at];
              }
            }
        }
  return r;
}

std::vector<double> NaiveMaxPool(const Geom& g, const std::vector<double>& x) {
  std::vector<double> out(g.out_size(g.c), -std::numeric_limits<double>::infinity());
  for (int b = 0; b < g.n; ++b)
    for (int y = 0; y < g.oh; ++y)
      for (int xo = 0; xo < g.ow; ++xo)
        for (int i = 0; i < g.fr; ++i)
          for (int j = 0; j < g.fc; ++j) {
            const int64_t at = g.Tap(b, y, xo, i, j);
            if (at < 0) continue;
            for (int ci = 0; ci < g.c; ++ci) {
              double& o = out[((int64_t{b} * g.oh + y) * g.ow + xo) * g.c + ci];
              o = std::max(o, x[at + ci]);
            }
          }
  return out;
}

// MaxPoolGrad by definition: each window's gradient goes to the first
// maximum of the window in row-major order.
std::vector<double> NaiveMaxPoolGrad(const Geom& g, const std::vector<double>& x,
                                     const std::vector<double>& grad) {
  std::vector<double> dx(g.in_size(), 0.0);
  for (int b = 0; b < g.n; ++b)
    for (int y = 0; y < g.oh; ++y)
      for (int xo = 0; xo < g.ow; ++xo)
        for (int ci = 0; ci < g.c; ++ci) {
          int64_t best_at = -1;
          for (int i = 0; i < g.fr; ++i)
            for (int j = 0; j < g.fc; ++j) {
              const int64_t at = g.Tap(b, y, xo, i, j);
              if (at >= 0 && (best_at < 0 || x[at + ci] > x[best_at])) best_at = at + ci;
            }
          if (best_at >= 0) dx[best_at] += grad[((int64_t{b} * g.oh + y) * g.ow + xo) * g.c + ci];
        }
  return dx;
}

// ---------------------------------------------------------------------------
// Relu, ReluGrad.

TEST(ReluTest, Forward) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_FLOAT);
  Output y = ops::Relu(s, x);
  auto r = EvalWithFeeds(
      s, {x}, {Make<float>({-1, 0, 2, -3.5, 4, 0.25, -0.5, 7, 9, -9}, TensorShape({2, 5}))}, y);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape(), TensorShape({2, 5}));
  ExpectAllNear(Values<float>(*r), {0, 0, 2, 0, 4, 0.25, 0, 7, 9, 0}, 0);
}

TEST(ReluTest, ForwardDouble) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_DOUBLE);
  auto r = EvalWithFeeds(s, {x}, {Make<double>({-2, 3}, TensorShape({2}))}, ops::Relu(s, x));
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<double>(*r), {0, 3}, 0);
}

TEST(ReluTest, ReluGradForward) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output g = Ph(s, DT_FLOAT);
  Output f = Ph(s, DT_FLOAT);
  Output y = ops::ReluGrad(s, g, f);
  auto r = RunAll(s,
                  {{g, Make<float>({1, 2, 3, 4}, TensorShape({4}))},
                   {f, Make<float>({-1, 1, 0, 2}, TensorShape({4}))}},
                  {y});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<float>((*r)[0]), {0, 2, 0, 4}, 0);
}

// TensorFlow's g * (f > 0): a non-finite gradient where the feature is not
// positive gives NaN (tf.raw_ops.ReluGrad(gradients=[inf, nan, 2],
// features=[-1, 0, 1]) is [nan, nan, 2] in TensorFlow 2.21).
// 70 elements, so the vectorized body is reached as well as the tail.
TEST(ReluTest, ReluGradOfANonFiniteGradientIsNan) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output g = Ph(s, DT_FLOAT);
  Output f = Ph(s, DT_FLOAT);
  std::vector<double> gv(70), fv(70);
  for (int i = 0; i < 70; ++i) {
    gv[i] = i % 5 == 0 ? INFINITY : (i % 7 == 0 ? NAN : i);
    fv[i] = i % 3 == 0 ? 1.0 : (i % 3 == 1 ? 0.0 : -1.0);
  }
  auto r = RunAll(s, {{g, Make<float>(gv, TensorShape({70}))}, {f, Make<float>(fv, TensorShape({70}))}},
                  {ops::ReluGrad(s, g, f)});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> v = Values<float>((*r)[0]);
  for (int i = 0; i < 70; ++i) {
    const bool passes = fv[i] > 0;
    const bool finite = std::isfinite(gv[i]);
    if (passes) {
      EXPECT_TRUE(v[i] == gv[i] || (std::isnan(v[i]) && std::isnan(gv[i]))) << i;
    } else if (finite) {
      EXPECT_EQ(v[i], 0.0) << i;
    } else {
      EXPECT_TRUE(std::isnan(v[i])) << i << ": g " << gv[i] << " * 0 is NaN";
    }
  }
}

TEST(ReluTest, Gradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_DOUBLE, TensorShape({2, 3}));
  Output y = ops::Relu(s, x);
  auto err = MaxGradientError(
      s, {x}, {Make<double>({-0.9, 0.4, 1.3, 0.7, -0.2, -1.1}, TensorShape({2, 3}))}, y);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

TEST(ReluTest, ReluGradShapeMismatch) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::ReluGrad(s, Ph(s, DT_FLOAT, TensorShape({2})), Ph(s, DT_FLOAT, TensorShape({3})));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("same shape"));
}

// ---------------------------------------------------------------------------
// BiasAdd, BiasAddGrad.

TEST(BiasAddTest, ForwardNhwc) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = Ph(s, DT_FLOAT, TensorShape({2, 3}));
  Output b = Ph(s, DT_FLOAT, TensorShape({3}));
  Output y = ops::BiasAdd(s, v, b);
  EXPECT_EQ(y.shape(), TensorShape({2, 3}));
  auto r = RunAll(s,
                  {{v, Make<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))},
                   {b, Make<float>({10, 20, 30}, TensorShape({3}))}},
                  {y});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<float>((*r)[0]), {11, 22, 33, 14, 25, 36}, 0);
}

TEST(BiasAddTest, ForwardWideRowsUseVectorPath) {
  // 2 rows of 37 channels: full vectors plus a scalar tail.
  const int kC = 37;
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = Ph(s, DT_FLOAT);
  Output b = Ph(s, DT_FLOAT);
  Output y = ops::BiasAdd(s, v, b);
  std::vector<double> vals = Wave(2 * kC, 0.3, 0.1), bias = Wave(kC, 0.7, 0.2), want;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < kC; ++c) want.push_back(vals[r * kC + c] + bias[c]);
  auto r = RunAll(
      s, {{v, Make<float>(vals, TensorShape({2, kC}))}, {b, Make<float>(bias, TensorShape({kC}))}},
      {y});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<float>((*r)[0]), want, 1e-6);
}

TEST(BiasAddTest, ForwardNchw) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = Ph(s, DT_DOUBLE);
  Output b = Ph(s, DT_DOUBLE);
  Output y = ops::BiasAdd(s, v, b, {.data_format = "NCHW"});
  // [N=2, C=2, 2]
  auto r = RunAll(s,
                  {{v, Make<double>({1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({2, 2, 2}))},
                   {b, Make<double>({10, 20}, TensorShape({2}))}},
                  {y});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<double>((*r)[0]), {11, 12, 23, 24, 15, 16, 27, 28}, 0);
}

TEST(BiasAddTest, BiasAddGradForward) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output g = Ph(s, DT_FLOAT);
  Output nhwc = ops::BiasAddGrad(s, g);
  Output nchw = ops::BiasAddGrad(s, g, {.data_format = "NCHW"});
  // g: [2, 2, 3]
  auto r =
      RunAll(s, {{g, Make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, TensorShape({2, 2, 3}))}},
             {nhwc, nchw});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<float>((*r)[0]), {22, 26, 30}, 0);
  ExpectAllNear(Values<float>((*r)[1]), {1 + 2 + 3 + 7 + 8 + 9, 4 + 5 + 6 + 10 + 11 + 12}, 0);
}

TEST(BiasAddTest, Gradient) {
  for (const char* format : {"NHWC", "NCHW"}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output v = Ph(s, DT_DOUBLE, TensorShape({2, 3, 2}));
    const int64_t channels = std::string(format) == "NHWC" ? 2 : 3;
    Output b = Ph(s, DT_DOUBLE, TensorShape({channels}));
    Output y = ops::BiasAdd(s, v, b, {.data_format = format});
    auto err = MaxGradientError(s, {v, b},
                                {Make<double>(Wave(12, 0.5, 0.3), TensorShape({2, 3, 2})),
                                 Make<double>(Wave(channels, 1.1, 0.2), TensorShape({channels}))},
                                y);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-6) << format;
  }
}

TEST(BiasAddTest, BiasLengthMismatchAtBuild) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::BiasAdd(s, Ph(s, DT_FLOAT, TensorShape({2, 3})), Ph(s, DT_FLOAT, TensorShape({4})));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("bias length 4"));
  EXPECT_THAT(s.status().message(), HasSubstr("[2,3]"));
}

TEST(BiasAddTest, RankTooLowAtRunTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = Ph(s, DT_FLOAT);
  Output b = Ph(s, DT_FLOAT);
  Output y = ops::BiasAdd(s, v, b);
  auto r = RunAll(s,
                  {{v, Make<float>({1, 2, 3}, TensorShape({3}))},
                   {b, Make<float>({1, 2, 3}, TensorShape({3}))}},
                  {y});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("at least 2-D"));
}

// ---------------------------------------------------------------------------
// Softmax, LogSoftmax.

std::vector<double> RefSoftmax(const std::vector<double>& x, int depth, bool log) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r < x.size() / depth; ++r) {
    double m = -1e300, sum = 0;
    for (int j = 0; j < depth; ++j) m = std::max(m, x[r * depth + j]);
    for (int j = 0; j < depth; ++j) sum += std::exp(x[r * depth + j] - m);
    for (int j = 0; j < depth; ++j) {
      const double z = x[r * depth + j] - m;
      out[r * depth + j] = log ? z - std::log(sum) : std::exp(z) / sum;
    }
  }
  return out;
}

TEST(SoftmaxTest, Forward) {
  // 3 rows of 19: vector body and scalar tail; one row with huge logits.
  std::vector<double> x = Wave(57, 0.9, 0.4, 3.0);
  for (int j = 38; j < 57; ++j) x[j] += 1000.0;
  for (double& v : x) v = static_cast<float>(v);  // the reference sees the fed values
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output in = Ph(s, DT_FLOAT);
  Output sm = ops::Softmax(s, in);
  Output lsm = ops::LogSoftmax(s, in);
  auto r = RunAll(s, {{in, Make<float>(x, TensorShape({3, 19}))}}, {sm, lsm});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<float>((*r)[0]), RefSoftmax(x, 19, false), 1e-6);
  ExpectAllNear(Values<float>((*r)[1]), RefSoftmax(x, 19, true), 1e-5);
}

TEST(SoftmaxTest, ForwardDoubleHandComputed) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output in = Ph(s, DT_DOUBLE);
  auto r = RunAll(s, {{in, Make<double>({0, std::log(3.0), 5, 5}, TensorShape({2, 2}))}},
                  {ops::Softmax(s, in), ops::LogSoftmax(s, in)});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<double>((*r)[0]), {0.25, 0.75, 0.5, 0.5}, 1e-12);
  ExpectAllNear(Values<double>((*r)[1]),
                {std::log(0.25), std::log(0.75), std::log(0.5), std::log(0.5)}, 1e-12);
}

TEST(SoftmaxTest, Gradients) {
  for (bool log : {false, true}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Ph(s, DT_DOUBLE, TensorShape({2, 4}));
    Output y = log ? ops::LogSoftmax(s, x) : ops::Softmax(s, x);
    auto err = MaxGradientError(s, {x}, {Make<double>(Wave(8, 0.7, 0.1), TensorShape({2, 4}))}, y);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-6) << (log ? "LogSoftmax" : "Softmax");
  }
}

TEST(SoftmaxTest, ScalarRejected) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Softmax(s, Ph(s, DT_FLOAT, TensorShape()));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// Cross entropies.

TEST(SoftmaxXentTest, Forward) {
  const std::vector<double> f = {1, 2, 3, 0, 0, 0, 1000, 0, -1000};
  const std::vector<double> l = {0, 0, 1, 0.5, 0.5, 0, 0, 1, 0};
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output fp = Ph(s, DT_FLOAT);
  Output lp = Ph(s, DT_FLOAT);
  std::vector<Output> xent = ops::SoftmaxCrossEntropyWithLogits(s, fp, lp);
  ASSERT_EQ(xent.size(), 2u);
  auto r = RunAll(
      s, {{fp, Make<float>(f, TensorShape({3, 3}))}, {lp, Make<float>(l, TensorShape({3, 3}))}},
      xent);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> logsm = RefSoftmax(f, 3, true);
  std::vector<double> loss(3, 0.0), bp(9);
  for (int i = 0; i < 9; ++i) {
    loss[i / 3] -= l[i] * logsm[i];
    bp[i] = std::exp(logsm[i]) - l[i];
  }
  EXPECT_EQ((*r)[0].shape(), TensorShape({3}));
  ExpectAllNear(Values<float>((*r)[0]), loss, 1e-5);
  EXPECT_NEAR(Values<float>((*r)[0])[2], 1000.0, 1e-2);  // stable for huge logits
  ExpectAllNear(Values<float>((*r)[1]), bp, 1e-6);
}

TEST(SoftmaxXentTest, GradientWrtFeaturesAndLabels) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output f = Ph(s, DT_DOUBLE, TensorShape({2, 3}));
  Output l = Ph(s, DT_DOUBLE, TensorShape({2, 3}));
  std::vector<Output> xent = ops::SoftmaxCrossEntropyWithLogits(s, f, l);
  const std::vector<Tensor> values = {
      Make<double>(Wave(6, 0.8, 0.3, 2.0), TensorShape({2, 3})),
      Make<double>({0.2, 0.3, 0.5, 0.1, 0.0, 0.9}, TensorShape({2, 3}))};
  auto err_both = MaxGradientError(s, {f, l}, values, xent[0]);
  ASSERT_TRUE(err_both.ok()) << err_both.status();
  EXPECT_LT(*err_both, 1e-6);
}

TEST(SoftmaxXentTest, GradientThroughBackpropOutput) {
  // backprop = softmax(features) - labels: its gradient reaches features.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output f = Ph(s, DT_DOUBLE, TensorShape({2, 3}));
  tensorflow::TensorProto labels;
  Make<double>({1, 0, 0, 0, 0.5, 0.5}, TensorShape({2, 3})).ToProto(&labels);
  std::vector<Output> xent = ops::SoftmaxCrossEntropyWithLogits(s, f, Input(labels));
  auto err =
      MaxGradientError(s, {f}, {Make<double>(Wave(6, 0.4, 0.9), TensorShape({2, 3}))}, xent[1]);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

TEST(SoftmaxXentTest, LargeBatchSplitAcrossThreads) {
  // Big enough that Relu, BiasAdd and the cross entropy split rows across the
  // device's threads; every row must still come out right.
  const int kBatch = 512, kClasses = 300;
  std::vector<double> f = Wave(kBatch * kClasses, 0.011, 0.3, 4.0);
  for (double& v : f) v = static_cast<float>(v);
  std::vector<double> l(f.size(), 0.0);
  for (int b = 0; b < kBatch; ++b) l[b * kClasses + (b * 7) % kClasses] = 1.0;
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output fp = Ph(s, DT_FLOAT);
  Output lp = Ph(s, DT_FLOAT);
  Output relu = ops::Relu(s, fp);
  std::vector<Output> xent = ops::SoftmaxCrossEntropyWithLogits(s, fp, lp);
  auto r = RunAll(s,
                  {{fp, Make<float>(f, TensorShape({kBatch, kClasses}))},
                   {lp, Make<float>(l, TensorShape({kBatch, kClasses}))}},
                  {relu, xent[0], xent[1]});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> logsm = RefSoftmax(f, kClasses, true);
  std::vector<double> want_relu(f.size()), loss(kBatch, 0.0), bp(f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    want_relu[i] = std::max(0.0, f[i]);
    loss[i / kClasses] -= l[i] * logsm[i];
    bp[i] = std::exp(logsm[i]) - l[i];
  }
  ExpectAllNear(Values<float>((*r)[0]), want_relu, 0);
  ExpectAllNear(Values<float>((*r)[1]), loss, 1e-5);
  ExpectAllNear(Values<float>((*r)[2]), bp, 1e-6);
}

TEST(SoftmaxXentTest, ShapeMismatch) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::SoftmaxCrossEntropyWithLogits(s, Ph(s, DT_FLOAT, TensorShape({2, 3})),
                                     Ph(s, DT_FLOAT, TensorShape({2, 4})));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("[2,3]"));
  EXPECT_THAT(s.status().message(), HasSubstr("[2,4]"));
}

template <typename L>
void CheckSparseForward(DataType label_type) {
  const std::vector<double> f = {1, 2, 3, 0.5, 0.5, -1, 1000, 0, -1000};
  const std::vector<int> labels = {2, 0, 1};
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output fp = Ph(s, DT_FLOAT);
  Output lp = Ph(s, label_type);
  std::vector<Output> xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, fp, lp);
  auto r = RunAll(
      s, {{fp, Make<float>(f, TensorShape({3, 3}))}, {lp, Tensor::FromVector<L>({2, 0, 1})}}, xent);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> logsm = RefSoftmax(f, 3, true);
  std::vector<double> loss(3), bp(9);
  for (int i = 0; i < 9; ++i) bp[i] = std::exp(logsm[i]) - (labels[i / 3] == i % 3 ? 1 : 0);
  for (int b = 0; b < 3; ++b) loss[b] = -logsm[b * 3 + labels[b]];
  ExpectAllNear(Values<float>((*r)[0]), loss, 1e-5);
  ExpectAllNear(Values<float>((*r)[1]), bp, 1e-6);
}

TEST(SparseXentTest, ForwardInt32) { CheckSparseForward<int32_t>(DT_INT32); }
TEST(SparseXentTest, ForwardInt64) { CheckSparseForward<int64_t>(DT_INT64); }

TEST(SparseXentTest, Gradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output f = Ph(s, DT_DOUBLE, TensorShape({3, 4}));
  tensorflow::TensorProto labels;
  Tensor::FromVector<int32_t>({3, 0, 2}).ToProto(&labels);
  Input l(labels);
  std::vector<Output> xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, f, l);
  auto err = MaxGradientError(s, {f}, {Make<double>(Wave(12, 0.6, 0.2, 2.0), TensorShape({3, 4}))},
                              xent[0]);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

TEST(SparseXentTest, LabelOutOfRange) {
  for (int bad : {5, -1}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output fp = Ph(s, DT_FLOAT);
    Output lp = Ph(s, DT_INT32);
    std::vector<Output> xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, fp, lp);
    auto r = RunAll(s,
                    {{fp, Make<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))},
                     {lp, Tensor::FromVector<int32_t>({0, bad})}},
                    {xent[0]});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("label value of " + std::to_string(bad)));
    EXPECT_THAT(r.status().message(), HasSubstr("[0, 3)"));
  }
}

// No class at all: refused by the kernels' shared checks (so on a GPU as
// well, where the label check cannot run), an empty batch too, as
// TensorFlow 2.21 refuses features of shape [0, 0].
TEST(SparseXentTest, ZeroClassesAreRefused) {
  for (int64_t batch : {2, 0}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output fp = Ph(s, DT_FLOAT);
    Output lp = Ph(s, DT_INT64);
    std::vector<Output> xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, fp, lp);
    auto r = RunAll(s,
                    {{fp, Make<float>({}, TensorShape({batch, 0}))},
                     {lp, Tensor::FromVector<int64_t>(std::vector<int64_t>(batch, 0))}},
                    {xent[0]});
    ASSERT_FALSE(r.ok()) << "batch " << batch;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("must have at least one class"));
  }
}

TEST(SparseXentTest, BatchMismatchAtBuild) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::SparseSoftmaxCrossEntropyWithLogits(s, Ph(s, DT_FLOAT, TensorShape({2, 3})),
                                           Ph(s, DT_INT64, TensorShape({3})));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("batch size 2"));
}

// ---------------------------------------------------------------------------
// Conv2D family.

struct ConvCase {
  Geom g;
  const char* name;
};

std::vector<ConvCase> ConvCases() {
  std::vector<ConvCase> cases = {
      {{2, 5, 6, 2, 3, 3, 3, 1, 1, 1, 1, "SAME"}, "same_s1"},
      {{2, 5, 6, 2, 3, 3, 3, 1, 1, 1, 1, "VALID"}, "valid_s1"},
      {{1, 6, 7, 3, 3, 2, 2, 2, 2, 1, 1, "SAME"}, "same_s2"},
      {{1, 7, 6, 3, 3, 3, 2, 2, 2, 1, 1, "VALID"}, "valid_s2"},
      {{2, 4, 4, 3, 1, 1, 5, 1, 1, 1, 1, "VALID"}, "pointwise"},
      {{1, 7, 7, 2, 3, 3, 2, 1, 1, 2, 2, "SAME"}, "dilated"},
      // One input channel (a grayscale image's first layer): short row copies.
      {{2, 9, 8, 1, 3, 3, 4, 1, 1, 1, 1, "SAME"}, "one_channel"},
      // Large enough that im2col is split over the session's threads.
      {{8, 20, 20, 8, 3, 3, 4, 1, 1, 1, 1, "SAME"}, "threaded"},
  };
  for (ConvCase& c : cases) c.g.Finish();
  return cases;
}

template <typename T>
void CheckConvForward(const ConvCase& cc, DataType dtype, double tol) {
  const Geom& g = cc.g;
  const std::vector<double> x = Wave(g.in_size(), 0.37, 0.1);
  const std::vector<double> f = Wave(g.filter_size(), 0.21, 0.5, 0.5);
  const std::vector<double> dy = Wave(g.out_size(g.od), 0.13, 0.7);
  const ConvRef ref = NaiveConv(g, x, f, dy);
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output xp = Ph(s, dtype, g.in_shape());
  Output fp = Ph(s, dtype, g.filter_shape());
  Output dyp = Ph(s, dtype, g.out_shape(g.od));
  const std::vector<int64_t> strides = {1, g.sr, g.sc, 1};
  const ops::Conv2DAttrs attrs{.dilations = {1, g.dr, g.dc, 1}};
  Output y = ops::Conv2D(s, xp, fp, strides, g.padding, attrs);
  EXPECT_EQ(y.shape(), g.out_shape(g.od)) << cc.name;
  const std::vector<int64_t> in_dims = g.in_shape().dims();
  const std::vector<int64_t> f_dims = g.filter_shape().dims();
  Output dx = ops::Conv2DBackpropInput(
      s,
      Input({static_cast<int32_t>(in_dims[0]), static_cast<int32_t>(in_dims[1]),
             static_cast<int32_t>(in_dims[2]), static_cast<int32_t>(in_dims[3])}),
      fp, dyp, strides, g.padding, attrs);
  Output dw = ops::Conv2DBackpropFilter(
      s, xp,
      Input({static_cast<int32_t>(f_dims[0]), static_cast<int32_t>(f_dims[1]),
             static_cast<int32_t>(f_dims[2]), static_cast<int32_t>(f_dims[3])}),
      dyp, strides, g.padding, attrs);
  EXPECT_EQ(dx.shape(), g.in_shape());
  EXPECT_EQ(dw.shape(), g.filter_shape());
  auto r = RunAll(s,
                  {{xp, Make<T>(x, g.in_shape())},
                   {fp, Make<T>(f, g.filter_shape())},
                   {dyp, Make<T>(dy, g.out_shape(g.od))}},
                  {y, dx, dw});
  ASSERT_TRUE(r.ok()) << cc.name << ": " << r.status();
  SCOPED_TRACE(cc.name);
  ExpectAllNear(Values<T>((*r)[0]), ref.out, tol);
  ExpectAllNear(Values<T>((*r)[1]), ref.dx, tol);
  ExpectAllNear(Values<T>((*r)[2]), ref.dw, tol);
}

TEST(Conv2DTest, MatchesNaiveLoopFloat) {
  for (const ConvCase& c : ConvCases()) CheckConvForward<float>(c, DT_FLOAT, 1e-5);
}

TEST(Conv2DTest, MatchesNaiveLoopDouble) {
  for (const ConvCase& c : ConvCases()) CheckConvForward<double>(c, DT_DOUBLE, 1e-12);
}

TEST(Conv2DTest, HandComputed) {
  // 1x3x3x1 input 1..9, 2x2 filter of ones: window sums.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_FLOAT, TensorShape({1, 3, 3, 1}));
  Output f = Ph(s, DT_FLOAT, TensorShape({2, 2, 1, 1}));
  Output valid = ops::Conv2D(s, x, f, {1, 1, 1, 1}, "VALID");
  // SAME, stride 2: output 2x2, one row/column of padding after the input.
  Output same = ops::Conv2D(s, x, f, {1, 2, 2, 1}, "SAME");
  EXPECT_EQ(same.shape(), TensorShape({1, 2, 2, 1}));
  auto r = RunAll(s,
                  {{x, Make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({1, 3, 3, 1}))},
                   {f, Make<float>({1, 1, 1, 1}, TensorShape({2, 2, 1, 1}))}},
                  {valid, same});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<float>((*r)[0]), {12, 16, 24, 28}, 0);
  ExpectAllNear(Values<float>((*r)[1]), {12, 9, 15, 9}, 0);
}

TEST(Conv2DTest, ExplicitPaddingMatchesSame) {
  // 3x3 filter, stride 1: SAME pads one row/column on each side.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_DOUBLE, TensorShape({1, 4, 5, 2}));
  Output f = Ph(s, DT_DOUBLE, TensorShape({3, 3, 2, 3}));
  Output same = ops::Conv2D(s, x, f, {1, 1, 1, 1}, "SAME");
  Output explicit_pad = ops::Conv2D(s, x, f, {1, 1, 1, 1}, "EXPLICIT",
                                    {.explicit_paddings = {0, 0, 1, 1, 1, 1, 0, 0}});
  EXPECT_EQ(explicit_pad.shape(), TensorShape({1, 4, 5, 3}));
  auto r = RunAll(s,
                  {{x, Make<double>(Wave(40, 0.37, 0.1), TensorShape({1, 4, 5, 2}))},
                   {f, Make<double>(Wave(54, 0.21, 0.5), TensorShape({3, 3, 2, 3}))}},
                  {same, explicit_pad});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<double>((*r)[1]), Values<double>((*r)[0]), 1e-12);
}

TEST(Conv2DTest, Gradients) {
  struct Case {
    int sr;
    const char* padding;
  };
  for (Case c : {Case{1, "VALID"}, Case{2, "SAME"}}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Ph(s, DT_DOUBLE, TensorShape({1, 4, 5, 2}));
    Output f = Ph(s, DT_DOUBLE, TensorShape({3, 2, 2, 2}));
    Output y = ops::Conv2D(s, x, f, {1, c.sr, c.sr, 1}, c.padding);
    auto err = MaxGradientError(s, {x, f},
                                {Make<double>(Wave(40, 0.37, 0.1), TensorShape({1, 4, 5, 2})),
                                 Make<double>(Wave(24, 0.21, 0.5), TensorShape({3, 2, 2, 2}))},
                                y);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-6) << c.padding;
  }
}

TEST(Conv2DTest, FilterDepthMismatch) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Conv2D(s, Ph(s, DT_FLOAT, TensorShape({1, 5, 5, 3})),
              Ph(s, DT_FLOAT, TensorShape({3, 3, 2, 4})), {1, 1, 1, 1}, "SAME");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("in_depth 2"));
  EXPECT_THAT(s.status().message(), HasSubstr("[1,5,5,3]"));
}

TEST(Conv2DTest, FilterDepthMismatchAtRunTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_FLOAT);
  Output f = Ph(s, DT_FLOAT);
  Output y = ops::Conv2D(s, x, f, {1, 1, 1, 1}, "VALID");
  auto r = RunAll(s,
                  {{x, Make<float>(Wave(27, 0.1, 0), TensorShape({1, 3, 3, 3}))},
                   {f, Make<float>(Wave(8, 0.1, 0), TensorShape({2, 2, 2, 1}))}},
                  {y});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("in_depth 2"));
}

TEST(Conv2DTest, RankMismatch) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Conv2D(s, Ph(s, DT_FLOAT, TensorShape({5, 5, 3})),
              Ph(s, DT_FLOAT, TensorShape({3, 3, 3, 4})), {1, 1, 1, 1}, "SAME");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Conv2DTest, BadPaddingString) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Conv2D(s, Ph(s, DT_FLOAT, TensorShape({1, 5, 5, 3})),
              Ph(s, DT_FLOAT, TensorShape({3, 3, 3, 4})), {1, 1, 1, 1}, "FULL");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("padding"));
}

TEST(Conv2DTest, BadStrides) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Conv2D(s, Ph(s, DT_FLOAT, TensorShape({1, 5, 5, 3})),
              Ph(s, DT_FLOAT, TensorShape({3, 3, 3, 4})), {1, 1, 1}, "SAME");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("strides"));
}

TEST(Conv2DTest, HugeStridesAreRejectedNotWrapped) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const int64_t huge = std::numeric_limits<int64_t>::max();
  ops::Conv2D(s, Ph(s, DT_FLOAT, TensorShape({1, 4, 4, 1})),
              Ph(s, DT_FLOAT, TensorShape({3, 3, 1, 1})), {1, huge, huge, 1}, "SAME");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("2^31"));
}

TEST(Conv2DTest, WindowLargerThanValidInput) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Conv2D(s, Ph(s, DT_FLOAT, TensorShape({1, 2, 2, 1})),
              Ph(s, DT_FLOAT, TensorShape({3, 3, 1, 1})), {1, 1, 1, 1}, "VALID");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("larger than the input"));
}

TEST(Conv2DTest, NchwUnimplementedOnCpu) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_FLOAT, TensorShape({1, 1, 3, 3}));
  Output f = Ph(s, DT_FLOAT, TensorShape({1, 1, 1, 1}));
  Output y = ops::Conv2D(s, x, f, {1, 1, 1, 1}, "VALID", {.data_format = "NCHW"});
  EXPECT_EQ(y.shape(), TensorShape({1, 1, 3, 3}));
  auto r = RunAll(s,
                  {{x, Make<float>(Wave(9, 0.1, 0), TensorShape({1, 1, 3, 3}))},
                   {f, Make<float>({2}, TensorShape({1, 1, 1, 1}))}},
                  {y});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("NHWC"));
}

TEST(Conv2DTest, BackpropInputOutBackpropShapeMismatch) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output f = Ph(s, DT_FLOAT);
  Output dy = Ph(s, DT_FLOAT);
  Output dx = ops::Conv2DBackpropInput(s, Input({1, 4, 4, 1}), f, dy, {1, 1, 1, 1}, "VALID");
  auto r = RunAll(s,
                  {{f, Make<float>({1, 1, 1, 1}, TensorShape({2, 2, 1, 1}))},
                   {dy, Make<float>(Wave(4, 0.1, 0), TensorShape({1, 2, 2, 1}))}},
                  {dx});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("[1,3,3,1]"));
}

// ---------------------------------------------------------------------------
// MaxPool, MaxPoolGrad.

TEST(MaxPoolTest, HandComputed) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_FLOAT, TensorShape({1, 4, 4, 1}));
  Output y = ops::MaxPool(s, x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  EXPECT_EQ(y.shape(), TensorShape({1, 2, 2, 1}));
  std::vector<double> in(16);
  for (int i = 0; i < 16; ++i) in[i] = (i * 7) % 16;  // distinct, max not always last
  auto r = RunAll(s, {{x, Make<float>(in, TensorShape({1, 4, 4, 1}))}}, {y});
  ASSERT_TRUE(r.ok()) << r.status();
  // windows {0,7,12,3}->12, {14,5,10,1}->14, {8,15,4,11}->15, {6,13,2,9}->13
  ExpectAllNear(Values<float>((*r)[0]), {12, 14, 15, 13}, 0);
}

TEST(MaxPoolTest, MaxPoolGradRoutesToArgmax) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_FLOAT, TensorShape({1, 4, 4, 1}));
  Output y = ops::MaxPool(s, x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  Output grad = Ph(s, DT_FLOAT, TensorShape({1, 2, 2, 1}));
  Output dx = ops::MaxPoolGrad(s, x, y, grad, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  std::vector<double> in(16);
  for (int i = 0; i < 16; ++i) in[i] = (i * 7) % 16;
  auto r = RunAll(s,
                  {{x, Make<float>(in, TensorShape({1, 4, 4, 1}))},
                   {grad, Make<float>({1, 2, 3, 4}, TensorShape({1, 2, 2, 1}))}},
                  {dx});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<double> want(16, 0.0);
  // 12 at (1,0)=4, 14 at (0,2)=2, 15 at (2,1)=9, 13 at (2,3)=11.
  want[4] = 1;
  want[2] = 2;
  want[9] = 3;
  want[11] = 4;
  ExpectAllNear(Values<float>((*r)[0]), want, 0);
}

TEST(MaxPoolTest, MatchesNaiveLoop) {
  const std::vector<Geom> cases = {
      {2, 5, 6, 3, 3, 3, 3, 1, 1, 1, 1, "SAME"}, {2, 5, 6, 3, 3, 3, 3, 1, 1, 1, 1, "VALID"},
      {1, 7, 6, 2, 3, 2, 2, 2, 2, 1, 1, "SAME"}, {1, 7, 6, 2, 2, 3, 2, 2, 2, 1, 1, "VALID"},
      {1, 5, 5, 9, 2, 2, 9, 2, 1, 1, 1, "SAME"},
  };
  for (Geom g : cases) {
    g.Finish();
    const std::vector<double> x = Wave(g.in_size(), 0.77, 0.3);
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output xp = Ph(s, DT_DOUBLE, g.in_shape());
    Output y = ops::MaxPool(s, xp, {1, g.fr, g.fc, 1}, {1, g.sr, g.sc, 1}, g.padding);
    EXPECT_EQ(y.shape(), g.out_shape(g.c));
    auto r = EvalWithFeeds(s, {xp}, {Make<double>(x, g.in_shape())}, y);
    ASSERT_TRUE(r.ok()) << r.status();
    ExpectAllNear(Values<double>(*r), NaiveMaxPool(g, x), 0);
  }
}

TEST(MaxPoolTest, MaxPoolGradMatchesNaiveLoop) {
  const std::vector<Geom> cases = {
      {2, 5, 6, 3, 3, 3, 3, 1, 1, 1, 1, "SAME"},     // overlapping windows
      {1, 7, 6, 2, 2, 3, 2, 2, 2, 1, 1, "VALID"},
      {2, 8, 8, 16, 2, 2, 16, 2, 2, 1, 1, "VALID"},  // the CNN's 2x2 pooling
      {16, 24, 24, 16, 3, 3, 16, 2, 2, 1, 1, "SAME"},  // images split over threads
  };
  for (Geom g : cases) {
    g.Finish();
    // Ties included (values repeat every 13): the first maximum wins.
    std::vector<double> x(g.in_size());
    for (int64_t i = 0; i < g.in_size(); ++i) x[i] = static_cast<double>((i * 7) % 13);
    const std::vector<double> grad = Wave(g.out_size(g.c), 0.31, 0.2);
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output xp = Ph(s, DT_FLOAT, g.in_shape());
    Output gp = Ph(s, DT_FLOAT, g.out_shape(g.c));
    Output y = ops::MaxPool(s, xp, {1, g.fr, g.fc, 1}, {1, g.sr, g.sc, 1}, g.padding);
    Output dx = ops::MaxPoolGrad(s, xp, y, gp, {1, g.fr, g.fc, 1}, {1, g.sr, g.sc, 1}, g.padding);
    auto r = RunAll(s,
                    {{xp, Make<float>(x, g.in_shape())}, {gp, Make<float>(grad, g.out_shape(g.c))}},
                    {dx});
    ASSERT_TRUE(r.ok()) << r.status();
    ExpectAllNear(Values<float>((*r)[0]), NaiveMaxPoolGrad(g, x, grad), 1e-5);
  }
}

TEST(MaxPoolTest, Gradient) {
  for (const char* padding : {"SAME", "VALID"}) {
    for (int stride : {1, 2}) {
      Scope s = Scope::NewRootScope(BuiltinOps());
      Output x = Ph(s, DT_DOUBLE, TensorShape({1, 4, 5, 2}));
      Output y = ops::MaxPool(s, x, {1, 2, 3, 1}, {1, stride, stride, 1}, padding);
      // Distinct values at least 0.025 apart: a 1e-4 step never changes an argmax.
      std::vector<double> v(40);
      for (int i = 0; i < 40; ++i) v[i] = 0.025 * ((i * 17) % 40) - 0.5;
      auto err = MaxGradientError(s, {x}, {Make<double>(v, TensorShape({1, 4, 5, 2}))}, y);
      ASSERT_TRUE(err.ok()) << err.status();
      EXPECT_LT(*err, 1e-6) << padding << " stride " << stride;
    }
  }
}

// Second derivatives through max pooling: MaxPoolGrad's gradient with
// respect to its incoming gradient (MaxPoolGradGrad), and back, by finite
// differences; MaxPoolGradGrad reads grad at each window's maximum.
TEST(MaxPoolTest, MaxPoolGradGradAndSecondOrderGradients) {
  std::vector<double> v(40);
  for (int i = 0; i < 40; ++i) v[i] = 0.025 * ((i * 17) % 40) - 0.5;
  const Tensor xv = Make<double>(v, TensorShape({1, 4, 5, 2}));
  for (const char* padding : {"SAME", "VALID"}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = ops::Const(s, xv);
    Output y = ops::MaxPool(s, x, {1, 2, 3, 1}, {1, 2, 2, 1}, padding);
    Output dy = Ph(s, DT_DOUBLE, y.shape());
    Output dx = ops::MaxPoolGrad(s, x, y, dy, {1, 2, 3, 1}, {1, 2, 2, 1}, padding);
    std::vector<double> gv(static_cast<size_t>(y.shape().num_elements()));
    for (size_t i = 0; i < gv.size(); ++i) gv[i] = 0.3 * static_cast<double>(i) - 1.0;
    auto err = MaxGradientError(s, {dy}, {Make<double>(gv, y.shape())}, dx);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-6) << padding;
    // MaxPoolGradGrad of an input-shaped tensor, and its own gradient.
    Output ddx = Ph(s, DT_DOUBLE, xv.shape());
    Output gg = s.Op("MaxPoolGradGrad", std::source_location::current())
                    .Input(x)
                    .Input(y)
                    .Input(ddx)
                    .Attr("ksize", std::vector<int64_t>{1, 2, 3, 1})
                    .Attr("strides", std::vector<int64_t>{1, 2, 2, 1})
                    .Attr("padding", std::string(padding))
                    .Finalize1();
    EXPECT_EQ(gg.shape(), y.shape());
    // With ddx = x, each output is the window's maximum: MaxPool itself.
    auto same = RunAll(s, {{ddx, xv}}, {gg, y});
    ASSERT_TRUE(same.ok()) << same.status();
    EXPECT_EQ(Values<double>((*same)[0]), Values<double>((*same)[1])) << padding;
    err = MaxGradientError(s, {ddx}, {xv}, gg);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-6) << padding;
  }
}

// AvgPool: TensorFlow's tf.nn.avg_pool averages only the elements inside
// the input (a SAME window hanging over the edge divides by fewer).
TEST(AvgPoolTest, HandComputedValidAndSame) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_FLOAT, TensorShape({1, 3, 3, 1}));
  Output valid = ops::AvgPool(s, x, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
  Output same = ops::AvgPool(s, x, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME");
  EXPECT_EQ(valid.shape(), TensorShape({1, 2, 2, 1}));
  EXPECT_EQ(same.shape(), TensorShape({1, 2, 2, 1}));
  auto r = RunAll(s, {{x, Make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({1, 3, 3, 1}))}},
                  {valid, same});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<float>((*r)[0]), {3, 4, 6, 7}, 1e-6);
  // SAME, stride 2: windows {1,2,4,5}, {3,6}, {7,8}, {9}.
  ExpectAllNear(Values<float>((*r)[1]), {3, 4.5, 7.5, 9}, 1e-6);
}

TEST(AvgPoolTest, GradientAndGradOp) {
  for (const char* padding : {"SAME", "VALID"}) {
    for (int stride : {1, 2}) {
      Scope s = Scope::NewRootScope(BuiltinOps());
      Output x = Ph(s, DT_DOUBLE, TensorShape({2, 4, 5, 3}));
      Output y = ops::AvgPool(s, x, {1, 2, 3, 1}, {1, stride, stride, 1}, padding);
      auto err =
          MaxGradientError(s, {x}, {Make<double>(Wave(120, 0.37, 0.2), TensorShape({2, 4, 5, 3}))}, y);
      ASSERT_TRUE(err.ok()) << err.status();
      EXPECT_LT(*err, 1e-6) << padding << " stride " << stride;
    }
  }
  // AvgPoolGrad by itself: a ones gradient over VALID 2x2 windows of a 3x3
  // input counts, for each element, the windows that hold it, divided by 4.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output grad = Ph(s, DT_FLOAT, TensorShape({1, 2, 2, 1}));
  Output dx = ops::AvgPoolGrad(s, ops::Const(s, Make<int32_t>({1, 3, 3, 1}, TensorShape({4}))), grad,
                               {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
  EXPECT_EQ(dx.shape(), TensorShape({1, 3, 3, 1}));
  auto r = RunAll(s, {{grad, Make<float>({1, 1, 1, 1}, TensorShape({1, 2, 2, 1}))}}, {dx});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAllNear(Values<float>((*r)[0]), {0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25}, 1e-6);
  // A grad of the wrong shape is an error naming the pooled shape.
  Output wrong = Ph(s, DT_FLOAT);
  Output bad = ops::AvgPoolGrad(s, ops::Const(s, Make<int32_t>({1, 3, 3, 1}, TensorShape({4}))),
                                wrong, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
  auto e = RunAll(s, {{wrong, Make<float>({1, 1}, TensorShape({1, 1, 2, 1}))}}, {bad});
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("[1,2,2,1]"));
}

TEST(MaxPoolTest, BadKsize) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::MaxPool(s, Ph(s, DT_FLOAT, TensorShape({1, 4, 4, 1})), {2, 2}, {1, 1, 1, 1}, "VALID");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("ksize"));
}

TEST(MaxPoolTest, RankMismatchAtRunTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Ph(s, DT_FLOAT);
  Output y = ops::MaxPool(s, x, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
  auto r = EvalWithFeeds(s, {x}, {Make<float>({1, 2, 3, 4}, TensorShape({2, 2}))}, y);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("4-D"));
}

TEST(BiasAddTest, V1IsNhwcWithItsGradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output v = Ph(s, DT_DOUBLE, TensorShape({2, 3, 2}));
  Output b = Ph(s, DT_DOUBLE, TensorShape({2}));
  Output y = s.Op("BiasAddV1").Input(v).Input(b).Finalize1();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(y.shape(), TensorShape({2, 3, 2}));
  auto err = MaxGradientError(s, {v, b},
                              {Make<double>(Wave(12, 0.5, 0.3), TensorShape({2, 3, 2})),
                               Make<double>(Wave(2, 1.1, 0.2), TensorShape({2}))},
                              y);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

}  // namespace
}  // namespace sluice
