// Dawsn, FresnelCos, FresnelSin and Spence against TensorFlow 2.21's values
// (edges, both sides of each method's switch), their gradients by finite
// differences.
#include "ops/math/special_integrals.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::GradError;
using testing_util::Placeholder;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::vector<double> kX = {0, 1e-5, 0.5, -2, 10, -50, 700, 800, -800, 1e4, kInf, -kInf, kNaN};

void Expect(const Tensor& t, const std::vector<double>& want, double rel) {
  absl::Span<const double> v = t.flat<double>();
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(v[i])) << "at " << i << ": " << v[i];
    } else {
      EXPECT_NEAR(v[i], want[i], rel * std::fabs(want[i]) + 1e-300) << "at " << i;
    }
  }
}

TEST(SpecialIntegralsTest, ValuesAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Tensor::FromVector<double>(kX));
  Expect(Eval(s, {}, ops::Dawsn(s, x)),
         {0.0, 9.999999999333335e-06, 0.4244363835020223, -0.30134038892379195, 0.05025384718759853,
          -0.010002001201201684, 0.0007142864431509192, 0.0006250004882823945, -0.0006250004882823945,
          5.000000025000001e-05, 0.0, 0.0, kNaN},
         1e-12);
  Expect(Eval(s, {}, ops::FresnelCos(s, x)),
         {0.0, 1e-05, 0.4923442258714464, -0.48825340607534073, 0.49989869420551575, -0.4999991894307276,
          0.49999999970458764, 0.49999999980210086, -0.49999999980210086, 0.49999999999927663, 0.5, -0.5, kNaN},
         1e-10);
  Expect(Eval(s, {}, ops::FresnelSin(s, x)),
         {0.0, 5.23598775598299e-16, 0.06473243285999929, -0.34341567836369824, 0.46816997858488224,
          -0.49363380258593875, 0.4995452715911666, 0.49960211264227056, -0.49960211264227056,
          0.49996816901138164, 0.5, -0.5, kNaN},
         1e-10);
  Expect(Eval(s, {}, ops::Spence(s, x)),
         {1.6449340668482264, 1.6448089369929266, 0.5822405264650135, kNaN, -3.950663778244157, kNaN,
          -23.09246638564552, -23.977339659475312, kNaN, -44.05909786808332, kNaN, kNaN, kNaN},
         1e-12);
}

TEST(SpecialIntegralsTest, Gradients) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE);
  const testing_util::Feeds signed_x = {{x, Tensor::FromVector<double>({-3.5, -0.7, 0.4, 1.9, 2.1, 5.5, 6.5})}};
  const testing_util::Feeds positive_x = {{x, Tensor::FromVector<double>({0.2, 0.7, 1.0, 1.6, 4})}};
  EXPECT_LT(GradError(s, signed_x, ops::Dawsn(s, x)), 1e-6);
  // Both sides of the switch at 2, where cos(pi x^2 / 2) still varies slowly
  // enough for central differences.
  const testing_util::Feeds fresnel_x = {{x, Tensor::FromVector<double>({-2.3, -0.7, 0.4, 1.9, 2.1})}};
  EXPECT_LT(GradError(s, fresnel_x, ops::FresnelCos(s, x)), 1e-5);
  EXPECT_LT(GradError(s, fresnel_x, ops::FresnelSin(s, x)), 1e-5);
  EXPECT_LT(GradError(s, positive_x, ops::Spence(s, x)), 1e-6);
}

}  // namespace
}  // namespace sluice
