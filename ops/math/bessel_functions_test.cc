// The Bessel functions against TensorFlow 2.21's values (edges, the
// asymptotic range of the scaled forms) and their gradients against finite
// differences.
#include "ops/math/bessel_functions.h"

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

void Expect(const Tensor& t, const std::vector<double>& want) {
  absl::Span<const double> v = t.flat<double>();
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(v[i])) << "at " << i << ": " << v[i];
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(v[i], want[i]) << "at " << i;
    } else {
      EXPECT_NEAR(v[i], want[i], 1e-10 * std::fabs(want[i]) + 1e-300) << "at " << i;
    }
  }
}

TEST(BesselFunctionsTest, ValuesAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Tensor::FromVector<double>(kX));
  Expect(Eval(s, {}, ops::BesselI0(s, x)),
         {1.0, 1.0000000000249998, 1.0634833707413238, 2.279585302336067, 2815.7166284662544,
          2.9325537838493355e+20, 1.5295933476718735e+302, kInf, kInf, kInf, kNaN, kNaN, kNaN});
  Expect(Eval(s, {}, ops::BesselI0e(s, x)),
         {1.0, 0.9999900000749995, 0.6450352704491502, 0.308508322553671, 0.1278333371634286,
          0.056561626647454184, 0.015081295651531355, 0.014106945005869183, 0.014106945005869183,
          0.0039894726746047314, 0.0, 0.0, kNaN});
  Expect(Eval(s, {}, ops::BesselI1(s, x)),
         {0.0, 5.0000000000625e-06, 0.2578943053908962, -1.5906368546373295, 2670.988303701255,
          -2.9030785901035566e+20, 1.5285003902339004e+302, kInf, -kInf, kInf, kNaN, kNaN, kNaN});
  Expect(Eval(s, {}, ops::BesselI1e(s, x)),
         {0.0, 4.999950000312499e-06, 0.15642080318487162, -0.2152692892489377, 0.12126268138445552,
          -0.0559931238928954, 0.015070519444716844, 0.014098125406526996, -0.014098125406526996,
          0.003989273195983662, 0.0, -0.0, kNaN});
  Expect(Eval(s, {}, ops::BesselJ0(s, x)),
         {1.0, 0.999999999975, 0.938469807240813, 0.22389077914123562, -0.24593576445134832,
          0.055812327669252086, -0.006288272465069686, 0.008897445883815304, 0.008897445883815304,
          -0.007096160353386842, kNaN, kNaN, kNaN});
  Expect(Eval(s, {}, ops::BesselJ1(s, x)),
         {0.0, 4.9999999999375e-06, 0.24226845767487387, -0.5767248077568734, 0.04347274616886141,
          0.09751182812517509, 0.029489824084030457, 0.02677513872232301, -0.02677513872232301,
          0.003647450755528111, kNaN, kNaN, kNaN});
  Expect(Eval(s, {}, ops::BesselK0(s, x)),
         {kInf, 11.628856980944361, 0.9244190712276663, kInf, 1.7780062316167654e-05, kInf,
          4.669776431685376e-306, 0.0, kInf, 0.0, 0.0, kInf, kNaN});
  Expect(Eval(s, {}, ops::BesselK0e(s, x)),
         {kInf, 11.628973270095614, 1.5241093857739103, kInf, 0.39163193443659866, kInf,
          0.04736236945461356, 0.044304427486646016, kInf, 0.012532984717699288, 0.0, kInf, kNaN});
  Expect(Eval(s, {}, ops::BesselK1(s, x)),
         {kInf, 99999.99993935571, 1.6564411200033013, kInf, 1.8648773453825582e-05, kInf,
          4.673110796707966e-306, 0.0, kInf, 0.0, 0.0, kInf, kNaN});
  Expect(Eval(s, {}, ops::BesselK1e(s, x)),
         {kInf, 100000.9999443551, 2.7310097082117863, kInf, 0.4107665705957887, kInf,
          0.04739618765349454, 0.0443321091114121, kInf, 0.012533611351270504, 0.0, kInf, kNaN});
  Expect(Eval(s, {}, ops::BesselY0(s, x)),
         {-kInf, -7.403160283701971, -0.4445187335067066, -kInf, 0.05567116728359961, -kInf,
          0.029494308180893627, 0.02676957259239893, -kInf, 0.003647805558990419, kNaN, -kInf, kNaN});
  Expect(Eval(s, {}, ops::BesselY1(s, x)),
         {-kInf, -63661.97727536548, -1.4714723926702433, -kInf, 0.24901542420695386, -kInf,
          0.00630934142145196, -0.008880716645260096, -kInf, 0.00709634275253725, kNaN, -kInf, kNaN});
}

TEST(BesselFunctionsTest, Gradients) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE);
  const testing_util::Feeds signed_x = {{x, Tensor::FromVector<double>({-3.5, -0.7, 0.4, 2.2, 5})}};
  const testing_util::Feeds positive_x = {{x, Tensor::FromVector<double>({0.6, 0.9, 2.2, 9, 30})}};
  EXPECT_LT(GradError(s, signed_x, ops::BesselI0(s, x)), 1e-6);
  EXPECT_LT(GradError(s, signed_x, ops::BesselI0e(s, x)), 1e-6);
  EXPECT_LT(GradError(s, signed_x, ops::BesselI1(s, x)), 1e-6);
  EXPECT_LT(GradError(s, signed_x, ops::BesselI1e(s, x)), 1e-6);
  EXPECT_LT(GradError(s, signed_x, ops::BesselJ0(s, x)), 1e-6);
  EXPECT_LT(GradError(s, signed_x, ops::BesselJ1(s, x)), 1e-6);
  EXPECT_LT(GradError(s, positive_x, ops::BesselK0(s, x)), 1e-6);
  EXPECT_LT(GradError(s, positive_x, ops::BesselK0e(s, x)), 1e-6);
  EXPECT_LT(GradError(s, positive_x, ops::BesselK1(s, x)), 1e-6);
  EXPECT_LT(GradError(s, positive_x, ops::BesselK1e(s, x)), 1e-6);
  EXPECT_LT(GradError(s, positive_x, ops::BesselY0(s, x)), 1e-6);
  EXPECT_LT(GradError(s, positive_x, ops::BesselY1(s, x)), 1e-6);
  // At 0 the order-1 derivatives are 1/2.
  EXPECT_LT(GradError(s, {{x, Tensor::FromVector<double>({0})}}, ops::BesselI1(s, x)), 1e-6);
  EXPECT_LT(GradError(s, {{x, Tensor::FromVector<double>({0})}}, ops::BesselJ1(s, x)), 1e-6);
}

}  // namespace
}  // namespace sluice
