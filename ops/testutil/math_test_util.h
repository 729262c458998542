// Helpers shared by the math op tests (forward values and gradients).
#ifndef SLUICE_OPS_TESTUTIL_MATH_TEST_UTIL_H_
#define SLUICE_OPS_TESTUTIL_MATH_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "graph/scope.h"
#include "ops/testutil/gradient_checker.h"
#include "runtime/tensor.h"

namespace sluice {
namespace testing_util {

using Feeds = std::vector<std::pair<Output, Tensor>>;

inline Output Placeholder(const Scope& s, DataType dtype,
                   std::optional<TensorShape> shape = std::nullopt) {
  OpBuilder b = s.Op("Placeholder");
  b.Attr("dtype", dtype);
  if (shape.has_value()) b.Attr("shape", *shape);
  return b.Finalize1();
}

inline absl::StatusOr<Tensor> TryEval(const Scope& s, const Feeds& feeds, const Output& y) {
  if (!s.ok()) return s.status();
  std::vector<Output> xs;
  std::vector<Tensor> values;
  for (const auto& [x, v] : feeds) {
    xs.push_back(x);
    values.push_back(v);
  }
  return EvalWithFeeds(s, xs, values, y);
}

inline Tensor Eval(const Scope& s, const Feeds& feeds, const Output& y) {
  absl::StatusOr<Tensor> r = TryEval(s, feeds, y);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : Tensor();
}

inline double GradError(const Scope& s, const Feeds& feeds, const Output& y) {
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return 1e9;
  std::vector<Output> xs;
  std::vector<Tensor> values;
  for (const auto& [x, v] : feeds) {
    xs.push_back(x);
    values.push_back(v);
  }
  absl::StatusOr<double> err = MaxGradientError(s, xs, values, y);
  EXPECT_TRUE(err.ok()) << err.status();
  return err.ok() ? *err : 1e9;
}

template <typename T>
void ExpectTensor(const Tensor& t, const TensorShape& shape, const std::vector<T>& expected,
                  double tolerance = 1e-6) {
  ASSERT_EQ(t.dtype(), DataTypeToEnum<T>::value) << DataTypeName(t.dtype());
  ASSERT_EQ(t.shape(), shape) << t.shape().DebugString() << " vs " << shape.DebugString();
  absl::Span<const T> v = t.flat<T>();
  ASSERT_EQ(v.size(), expected.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(expected[i])) {
        EXPECT_TRUE(std::isnan(v[i])) << "at " << i;
      } else if (std::isinf(expected[i])) {
        EXPECT_EQ(v[i], expected[i]) << "at " << i;
      } else {
        EXPECT_NEAR(v[i], expected[i], tolerance) << "at " << i;
      }
    } else {
      EXPECT_EQ(v[i], expected[i]) << "at " << i;
    }
  }
}

// Deterministic values in [lo, hi).
inline std::vector<double> Values(int64_t n, uint64_t seed, double lo = -1, double hi = 1) {
  std::vector<double> v(n);
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (auto& x : v) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = lo + (hi - lo) * static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
  }
  return v;
}

inline Tensor Doubles(const TensorShape& shape, uint64_t seed, double lo = -1, double hi = 1) {
  return Tensor::FromVector<double>(Values(shape.num_elements(), seed, lo, hi), shape);
}

template <typename T>
Tensor Make(std::vector<T> values, const TensorShape& shape) {
  return Tensor::FromVector<T>(values, shape);
}

inline Input Literal(const Tensor& t) {
  ::tensorflow::TensorProto proto;
  t.ToProto(&proto);
  return Input(std::move(proto));
}

class MathOpsTest : public ::testing::Test {
 protected:
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

}  // namespace testing_util
}  // namespace sluice

#endif  // SLUICE_OPS_TESTUTIL_MATH_TEST_UTIL_H_
