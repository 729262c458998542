// ArgMax's and ArgMin's GPU combine order (ops/gpu/argmax_order.cu.h),
// compiled by nvcc and run on the host with many thread counts and combine
// orders (argmax_order_on_host.cu.h), against the CPU kernels on rows full
// of ties, NaNs and infinities: the GPU's answer may not depend on which
// thread saw what first, and must be TensorFlow's.
#include "ops/gpu/argmax_order_on_host.cu.h"

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

constexpr int64_t kCols = 70;

// Rows of special values: ties of the best, NaN anywhere, infinities, the
// type's lowest and highest, whole rows of NaN, NaN then -inf.
template <typename T>
std::vector<std::vector<T>> SpecialRows(std::mt19937& rng) {
  using L = std::numeric_limits<T>;
  const std::vector<T> specials = {L::quiet_NaN(), L::infinity(), -L::infinity(), L::lowest(),
                                   L::max(),       T(0),          T(1),           T(-1)};
  std::vector<std::vector<T>> rows;
  std::uniform_int_distribution<int> which(0, static_cast<int>(specials.size()) - 1);
  std::uniform_int_distribution<int> small(-3, 3);  // many ties
  for (int r = 0; r < 40; ++r) {
    std::vector<T> row(kCols);
    for (T& v : row) v = r % 2 == 0 ? specials[which(rng)] : T(small(rng));
    if (r % 5 == 1) row[rng() % kCols] = L::quiet_NaN();
    rows.push_back(row);
  }
  rows.push_back(std::vector<T>(kCols, L::quiet_NaN()));
  std::vector<T> nan_then_inf(kCols, -L::infinity());
  nan_then_inf[0] = L::quiet_NaN();
  rows.push_back(nan_then_inf);
  std::vector<T> nan_then_lowest(kCols, L::lowest());
  nan_then_lowest[0] = L::quiet_NaN();
  nan_then_lowest[kCols - 1] = L::max();
  rows.push_back(nan_then_lowest);
  rows.push_back(std::vector<T>(kCols, L::max()));
  return rows;
}

// The CPU kernels' ArgMax and ArgMin of each row.
template <typename T>
void CpuArgs(const std::vector<std::vector<T>>& rows, std::vector<int64_t>* arg_max,
             std::vector<int64_t>* arg_min) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Tensor x(DataTypeToEnum<T>::value, TensorShape({static_cast<int64_t>(rows.size()), kCols}));
  for (size_t r = 0; r < rows.size(); ++r) {
    std::copy(rows[r].begin(), rows[r].end(), x.data<T>() + r * kCols);
  }
  Output in = ops::Placeholder(s, DataTypeToEnum<T>::value);
  Output mx = ops::ArgMax(s, in, ops::Const(s, 1));
  Output mn = ops::ArgMin(s, in, ops::Const(s, 1));
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({{in, x}}, {mx, mn}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  const int64_t* a = (*out)[0].data<int64_t>();
  const int64_t* b = (*out)[1].data<int64_t>();
  arg_max->assign(a, a + rows.size());
  arg_min->assign(b, b + rows.size());
}

template <typename T>
void ExpectTheGpuOrderGivesTheCpusAnswer() {
  std::mt19937 rng(11);
  const std::vector<std::vector<T>> rows = SpecialRows<T>(rng);
  std::vector<int64_t> arg_max, arg_min;
  CpuArgs(rows, &arg_max, &arg_min);
  ASSERT_EQ(arg_max.size(), rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int lanes : {1, 3, 32, 64, 256}) {
      for (uint32_t seed : {1u, 2u, 3u}) {
        EXPECT_EQ(gpu::ArgBestOnHost<T>(false, rows[r].data(), kCols, lanes, seed), arg_max[r])
            << "ArgMax of row " << r << ", " << lanes << " lanes, seed " << seed;
        EXPECT_EQ(gpu::ArgBestOnHost<T>(true, rows[r].data(), kCols, lanes, seed), arg_min[r])
            << "ArgMin of row " << r << ", " << lanes << " lanes, seed " << seed;
      }
    }
  }
  // TensorFlow's answers for the rows built for them (checked in 2.21).
  const size_t n = rows.size();
  EXPECT_EQ(arg_max[n - 4], 0);          // all NaN
  EXPECT_EQ(arg_min[n - 4], 0);
  EXPECT_EQ(arg_max[n - 3], 0);          // NaN, then -inf: nothing beats the start
  EXPECT_EQ(arg_min[n - 3], 1);          // -inf is the smallest
  EXPECT_EQ(arg_max[n - 2], kCols - 1);  // NaN, lowest..., max
  EXPECT_EQ(arg_min[n - 1], 0);          // all max: nothing beats the start
}

TEST(ArgMaxOrderOnHostTest, FloatRowsGiveTheCpusAnswerInAnyCombineOrder) {
  ExpectTheGpuOrderGivesTheCpusAnswer<float>();
}

TEST(ArgMaxOrderOnHostTest, DoubleRowsGiveTheCpusAnswerInAnyCombineOrder) {
  ExpectTheGpuOrderGivesTheCpusAnswer<double>();
}

}  // namespace
}  // namespace sluice
