// The GPU activations' element functions (ops/gpu/activation_fns.cu.h),
// compiled by nvcc and run on the host, against the CPU kernels of Relu6,
// Elu, Selu, LeakyRelu, Softplus, Softsign and their gradient ops, in float
// and double, on values across each function's branches: negative and
// positive, both sides of 0 and 6, large enough to overflow a naive
// Softplus, infinities and NaN.
#include "ops/gpu/activation_fns_on_host.cu.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using gpu::ActivationFn;
using gpu::ActivationGradFn;

constexpr float kAlpha = 0.3f;  // LeakyRelu's

template <typename T>
std::vector<T> Values() {
  const T inf = std::numeric_limits<T>::infinity();
  return {T(-100), T(-50), T(-20), T(-6.5), T(-1), T(-0.25), T(-1e-3), T(-0.0), T(0),
          T(1e-3), T(0.25),  T(1),   T(5.999), T(6), T(6.001), T(20),  T(50),   T(100),
          inf,     -inf,     std::numeric_limits<T>::quiet_NaN()};
}

// Equal, both NaN, or within `rel` of each other.
template <typename T>
::testing::AssertionResult Same(T got, T want, double rel) {
  if (std::isnan(got) && std::isnan(want)) return ::testing::AssertionSuccess();
  if (got == want) return ::testing::AssertionSuccess();
  if (std::isfinite(got) && std::isfinite(want) &&
      std::abs(got - want) <= rel * std::max<double>(1.0, std::abs(want))) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << got << " vs the CPU's " << want;
}

// The CPU kernel of `op` on `inputs` (one or two tensors of T).
template <typename T>
std::vector<T> OnTheCpu(const std::string& op, const std::vector<std::vector<T>>& inputs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const DataType dtype = DataTypeToEnum<T>::value;
  std::vector<std::pair<Output, Tensor>> feeds;
  OpBuilder b = s.Op(op);
  for (const std::vector<T>& v : inputs) {
    Output p = ops::Placeholder(s, dtype);
    b.Input(p);
    feeds.push_back({p, Tensor::FromVector(v)});
  }
  if (op.rfind("LeakyRelu", 0) == 0) b.Attr("alpha", kAlpha);
  Output y = b.Finalize1();
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  if (!sess.ok()) return {};
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run(feeds, {y}, {});
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  if (!out.ok()) return {};
  const T* p = (*out)[0].template data<T>();
  return std::vector<T>(p, p + (*out)[0].NumElements());
}

template <typename T>
void ExpectTheGpuFunctionsMatchTheCpu(double rel) {
  const std::vector<T> x = Values<T>();
  for (const auto& [op, fn] : gpu::kActivationOps) {
    const std::vector<T> want = OnTheCpu<T>(op, {x});
    ASSERT_EQ(want.size(), x.size()) << op;
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_TRUE(Same(gpu::ActivateOnHost<T>(fn, x[i], T(kAlpha)), want[i], rel))
          << op << "(" << x[i] << ")";
    }
  }
  // Gradients: g of both signs and one infinite (Relu6Grad's mask gives NaN
  // where it is 0); v from the same values (EluGrad and SeluGrad take the
  // forward outputs, which the values cover too).
  std::vector<T> g(x.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = T(0.5) - T(0.125) * T(i % 9);
  g[3] = std::numeric_limits<T>::infinity();
  for (const auto& [op, fn] : gpu::kActivationGradOps) {
    const std::vector<T> want = OnTheCpu<T>(op, {g, x});
    ASSERT_EQ(want.size(), x.size()) << op;
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_TRUE(Same(gpu::ActivateGradOnHost<T>(fn, g[i], x[i], T(kAlpha)), want[i], rel))
          << op << "(" << g[i] << ", " << x[i] << ")";
    }
  }
}

// L2Loss's terms: x * x / 2, exactly (halving is exact).
TEST(ActivationFnsOnHostTest, HalfSquaresAreExact) {
  for (double x : {-3.0, 0.0, 1e-20, 7.25, 1e150}) {
    EXPECT_EQ(gpu::ActivateOnHost<double>(ActivationFn::kHalfSquare, x, 0), x * x / 2) << x;
    const float f = static_cast<float>(x);
    EXPECT_EQ(gpu::ActivateOnHost<float>(ActivationFn::kHalfSquare, f, 0), f * f / 2) << x;
  }
}

TEST(ActivationFnsOnHostTest, FloatMatchesTheCpuKernels) {
  ExpectTheGpuFunctionsMatchTheCpu<float>(1e-6);
}

TEST(ActivationFnsOnHostTest, DoubleMatchesTheCpuKernels) {
  ExpectTheGpuFunctionsMatchTheCpu<double>(1e-14);
}

}  // namespace
}  // namespace sluice
