// Every GPU kernel against its CPU kernel (tests/gpu/gpu_compare.h): element-
// wise ops with broadcasting, comparisons, Cast (half/bfloat16 included),
// AddN, Select, reductions and ArgMax. The NN, MatMul and array kernels are
// in gpu_nn_array_test.cc; state, random, end-to-end and placement in
// gpu_state_test.cc. Every test skips without a GPU, except the placement
// one there.
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "sluice.h"
#include "tests/gpu/gpu_compare.h"

namespace sluice::gpu_test {
namespace {

using BinaryFn = Output (*)(const Scope&, Input, Input, ops::Loc);
using UnaryFn = Output (*)(const Scope&, Input, ops::Loc);

struct ShapePair {
  TensorShape x, y;
};

// Broadcasting shape pairs: equal, scalar either side, row, column, 3-D and
// 4-D with size-1 dimensions, and sizes that are no multiple of a block;
// then rank 0, 1 to 3 elements (fewer than a vector pack: the unvectorized
// kernels, which once wrote nothing) and a large odd size.
std::vector<ShapePair> BroadcastShapes() {
  return {
      {TensorShape({4, 5}), TensorShape({4, 5})},
      {TensorShape({4, 5}), TensorShape({})},
      {TensorShape({}), TensorShape({4, 5})},
      {TensorShape({4, 5}), TensorShape({5})},
      {TensorShape({4, 5}), TensorShape({1, 5})},
      {TensorShape({4, 5}), TensorShape({4, 1})},
      {TensorShape({4, 1}), TensorShape({1, 5})},
      {TensorShape({3, 1, 5}), TensorShape({1, 4, 1})},
      {TensorShape({2, 3, 4, 5}), TensorShape({3, 1, 5})},
      {TensorShape({257, 129}), TensorShape({129})},
      {TensorShape({1 << 20}), TensorShape({1 << 20})},
      {TensorShape({0, 5}), TensorShape({5})},
      {TensorShape({}), TensorShape({})},
      {TensorShape({1}), TensorShape({1})},
      {TensorShape({2}), TensorShape({2})},
      {TensorShape({3}), TensorShape({})},
      {TensorShape({(1 << 20) + 3}), TensorShape({(1 << 20) + 3})},
  };
}

std::string Label(const std::string& op, const ShapePair& p, DataType t = DT_FLOAT) {
  return absl::StrCat(op, " ", DataTypeName(t), " ", p.x.DebugString(), " . ",
                      p.y.DebugString());
}

BuildFn Binary(BinaryFn f) {
  return [f](const Scope& s, const Inputs& in) {
    return Outputs{f(s.WithOpName("op"), in[0], in[1], ops::Loc::current())};
  };
}

BuildFn Unary(UnaryFn f) {
  return [f](const Scope& s, const Inputs& in) {
    return Outputs{f(s.WithOpName("op"), in[0], ops::Loc::current())};
  };
}

class GpuCwiseTest : public GpuTest {};

struct BinaryOp {
  const char* name;
  BinaryFn fn;
  double xlo, xhi, ylo, yhi;
  bool nonzero_y;  // y drawn away from zero (|y| >= 0.5)
};

std::vector<BinaryOp> FloatBinaryOps() {
  return {
      {"Add", ops::Add, -2, 2, -2, 2, false},
      {"AddV2", ops::AddV2, -2, 2, -2, 2, false},
      {"Sub", ops::Sub, -2, 2, -2, 2, false},
      {"Mul", ops::Mul, -2, 2, -2, 2, false},
      {"RealDiv", ops::RealDiv, -2, 2, 0.5, 2, true},
      {"FloorDiv", ops::FloorDiv, -9, 9, 0.5, 3, true},
      {"Maximum", ops::Maximum, -2, 2, -2, 2, false},
      {"Minimum", ops::Minimum, -2, 2, -2, 2, false},
      {"Pow", ops::Pow, 0.25, 3, -2, 2, false},
      {"SquaredDifference", ops::SquaredDifference, -2, 2, -2, 2, false},
      {"Div", ops::Div, -2, 2, 0.5, 2, true},
      {"FloorMod", ops::FloorMod, -9, 9, 0.5, 3, true},
      {"Atan2", ops::Atan2, -2, 2, 0.5, 2, true},
      {"Xlogy", ops::Xlogy, -2, 2, 0.5, 2, false},
      {"Xdivy", ops::Xdivy, -2, 2, 0.5, 2, true},
      {"Xlog1py", ops::Xlog1py, -2, 2, 0.5, 2, false},
  };
}

Tensor DrawY(std::mt19937& rng, const BinaryOp& op, DataType t, const TensorShape& shape) {
  Tensor y = RandomTensor(rng, DT_DOUBLE, shape, op.ylo, op.yhi);
  if (op.nonzero_y) {
    std::bernoulli_distribution neg(0.5);
    for (double& v : y.flat<double>()) v = neg(rng) ? -v : v;
  }
  return ConvertTo(y, t);
}

TEST_F(GpuCwiseTest, BinaryFloatBroadcasting) {
  for (const BinaryOp& op : FloatBinaryOps()) {
    for (const ShapePair& p : BroadcastShapes()) {
      Tensor x = RandomTensor(rng(), DT_FLOAT, p.x, op.xlo, op.xhi);
      Tensor y = DrawY(rng(), op, DT_FLOAT, p.y);
      EXPECT_TRUE(GpuMatchesCpu(
          {.label = Label(op.name, p), .build = Binary(op.fn), .inputs = {x, y}, .bound = 1e-5}));
    }
  }
}

// DivNoNan gives 0 where the divisor is 0, whatever the dividend (NaN
// and inf too).
TEST_F(GpuCwiseTest, DivNoNanGivesZeroForAZeroDivisor) {
  Tensor x = RandomTensor(rng(), DT_FLOAT, TensorShape({64, 33}), -2, 2);
  Tensor y = RandomTensor(rng(), DT_FLOAT, TensorShape({64, 33}), 0.5, 2);
  for (int64_t i = 0; i < 64 * 33; i += 5) y.data<float>()[i] = 0.0f;
  x.data<float>()[5] = NAN;
  x.data<float>()[10] = INFINITY;
  EXPECT_TRUE(GpuMatchesCpu({.label = "DivNoNan with zero divisors",
                             .build = Binary(ops::DivNoNan),
                             .inputs = {x, y},
                             .bound = 1e-6}));
}

// FloorDiv rounds toward -inf: exact on small integers with ties at the
// boundaries.
TEST_F(GpuCwiseTest, FloorDivOnIntegersInFloat) {
  Tensor x = RandomSmallInts(rng(), DT_FLOAT, TensorShape({64, 33}), -20, 20);
  Tensor y = RandomSmallInts(rng(), DT_FLOAT, TensorShape({33}), 1, 5);
  EXPECT_TRUE(GpuMatchesCpu(
      {.label = "FloorDiv ints", .build = Binary(ops::FloorDiv), .inputs = {x, y}, .bound = 0}));
}

// FloorMod of int64 on the device (Keras' dropout seeds): the remainder
// takes the divisor's sign, as on the CPU; and int32 on the host.
TEST_F(GpuCwiseTest, FloorModOnInt64AndInt32) {
  for (DataType t : {DT_INT64, DT_INT32}) {
    Tensor x = RandomTensor(rng(), t, TensorShape({64, 33}), -100000, 100000);
    Tensor y = RandomTensor(rng(), t, TensorShape({33}), 1, 1000);
    for (int64_t i = 0; i < 33; i += 2) {  // negative divisors too
      if (t == DT_INT64) {
        y.data<int64_t>()[i] = -y.data<int64_t>()[i];
      } else {
        y.data<int32_t>()[i] = -y.data<int32_t>()[i];
      }
    }
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("FloorMod ", DataTypeName(t)),
                               .build = Binary(ops::FloorMod),
                               .inputs = {x, y},
                               .bound = 0}));
  }
}

TEST_F(GpuCwiseTest, BinaryInt32) {
  const std::vector<std::pair<const char*, BinaryFn>> int_ops = {
      {"Add", ops::Add}, {"Sub", ops::Sub}, {"Mul", ops::Mul},
      {"Maximum", ops::Maximum}, {"Minimum", ops::Minimum}};
  for (const auto& [name, fn] : int_ops) {
    for (const ShapePair& p : {BroadcastShapes()[0], BroadcastShapes()[3], BroadcastShapes()[7]}) {
      Tensor x = RandomTensor(rng(), DT_INT32, p.x, -1000, 1000);
      Tensor y = RandomTensor(rng(), DT_INT32, p.y, -1000, 1000);
      EXPECT_TRUE(GpuMatchesCpu(
          {.label = Label(name, p, DT_INT32), .build = Binary(fn), .inputs = {x, y}, .bound = 0}));
    }
  }
}

// Half and bfloat16: the GPU computes on the 16-bit inputs; the CPU (which
// has no 16-bit arithmetic kernels) computes in float on the same values.
TEST_F(GpuCwiseTest, BinaryHalfAndBfloat16) {
  const std::vector<BinaryOp> ops16 = {
      {"Add", ops::Add, -2, 2, -2, 2, false},       {"Sub", ops::Sub, -2, 2, -2, 2, false},
      {"Mul", ops::Mul, -2, 2, -2, 2, false},       {"RealDiv", ops::RealDiv, -2, 2, 0.5, 2, true},
      {"Maximum", ops::Maximum, -2, 2, -2, 2, false}, {"Minimum", ops::Minimum, -2, 2, -2, 2, false},
  };
  const std::vector<ShapePair> shapes = {BroadcastShapes()[0], BroadcastShapes()[1],
                                         BroadcastShapes()[3], BroadcastShapes()[7],
                                         BroadcastShapes()[9]};
  for (DataType t : {DT_HALF, DT_BFLOAT16}) {
    const double bound = t == DT_HALF ? 1e-3 : 1e-2;
    for (const BinaryOp& op : ops16) {
      for (const ShapePair& p : shapes) {
        Tensor x16 = RandomTensor(rng(), t, p.x, op.xlo, op.xhi);
        Tensor y16 = DrawY(rng(), op, t, p.y);
        EXPECT_TRUE(GpuMatchesCpu({.label = Label(op.name, p, t),
                                   .build = Binary(op.fn),
                                   .inputs = {ConvertTo(x16, DT_FLOAT), ConvertTo(y16, DT_FLOAT)},
                                   .bound = bound,
                                   .gpu_inputs = {x16, y16}}));
      }
    }
  }
}

struct UnaryOp {
  const char* name;
  UnaryFn fn;
  double lo, hi;
};

std::vector<UnaryOp> FloatUnaryOps() {
  return {
      {"Neg", ops::Neg, -3, 3},         {"Square", ops::Square, -3, 3},
      {"Sqrt", ops::Sqrt, 0.01, 9},     {"Rsqrt", ops::Rsqrt, 0.01, 9},
      {"Exp", ops::Exp, -10, 10},       {"Log", ops::Log, 0.001, 100},
      {"Tanh", ops::Tanh, -5, 5},       {"Sigmoid", ops::Sigmoid, -12, 12},
      {"Reciprocal", ops::Reciprocal, 0.1, 10}, {"Abs", ops::Abs, -3, 3},
      {"Sign", ops::Sign, -3, 3},       {"Floor", ops::Floor, -5, 5},
      {"Ceil", ops::Ceil, -5, 5},       {"Round", ops::Round, -5, 5},
      {"Log1p", ops::Log1p, -0.9, 10},  {"Expm1", ops::Expm1, -5, 5},
      {"Erf", ops::Erf, -3, 3},         {"Erfc", ops::Erfc, -3, 3},
      {"Sin", ops::Sin, -10, 10},       {"Cos", ops::Cos, -10, 10},
      {"Tan", ops::Tan, -1.4, 1.4},     {"Sinh", ops::Sinh, -5, 5},
      {"Cosh", ops::Cosh, -5, 5},       {"Asin", ops::Asin, -1, 1},
      {"Acos", ops::Acos, -1, 1},       {"Atan", ops::Atan, -10, 10},
      {"Asinh", ops::Asinh, -10, 10},   {"Acosh", ops::Acosh, 1, 10},
      {"Atanh", ops::Atanh, -0.99, 0.99}, {"Rint", ops::Rint, -5, 5},
  };
}

TEST_F(GpuCwiseTest, UnaryFloat) {
  for (const UnaryOp& op : FloatUnaryOps()) {
    for (const TensorShape& shape :
         {TensorShape({}), TensorShape({1}), TensorShape({2}), TensorShape({3}), TensorShape({7}),
          TensorShape({33, 65}), TensorShape({1 << 20}), TensorShape({(1 << 20) + 3}),
          TensorShape({0})}) {
      Tensor x = RandomTensor(rng(), DT_FLOAT, shape, op.lo, op.hi);
      EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat(op.name, " ", shape.DebugString()),
                                 .build = Unary(op.fn),
                                 .inputs = {x},
                                 .bound = 1e-5}));
    }
  }
}

// Round halves to even, as the CPU's (TensorFlow's) Round.
TEST_F(GpuCwiseTest, RoundHalvesToEven) {
  for (DataType t : {DT_FLOAT, DT_DOUBLE}) {
    // 4194305.5 is a tie in float too (2^22 + 1.5).
    const std::vector<double> v = {0.5, 1.5, 2.5, -0.5, -2.5, 3.49, -3.51, 4194305.5};
    Tensor x(t, TensorShape({static_cast<int64_t>(v.size())}));
    for (size_t i = 0; i < v.size(); ++i) {
      if (t == DT_FLOAT) x.data<float>()[i] = static_cast<float>(v[i]);
      if (t == DT_DOUBLE) x.data<double>()[i] = v[i];
    }
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("Round halves ", DataTypeName(t)),
                               .build = Unary(ops::Round),
                               .inputs = {x},
                               .bound = 0}));
  }
}

// Out of the domain: NaN (and -inf for Log(0)) where the CPU gives them.
TEST_F(GpuCwiseTest, UnaryNaNAndInfinityAgree) {
  for (const UnaryOp& op : {UnaryOp{"Sqrt", ops::Sqrt, -4, 4}, UnaryOp{"Log", ops::Log, -4, 4},
                            UnaryOp{"Rsqrt", ops::Rsqrt, -4, 4}}) {
    Tensor x = RandomTensor(rng(), DT_FLOAT, TensorShape({1000}), op.lo, op.hi);
    x.data<float>()[0] = 0.0f;
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat(op.name, " out of domain"),
                               .build = Unary(op.fn),
                               .inputs = {x},
                               .bound = 1e-5}));
  }
}

TEST_F(GpuCwiseTest, UnaryHalfAndBfloat16) {
  const std::vector<UnaryOp> ops16 = {
      {"Neg", ops::Neg, -3, 3},   {"Square", ops::Square, -3, 3}, {"Exp", ops::Exp, -4, 4},
      {"Tanh", ops::Tanh, -4, 4}, {"Sigmoid", ops::Sigmoid, -8, 8}, {"Abs", ops::Abs, -3, 3},
      {"Sqrt", ops::Sqrt, 0.01, 9}, {"Log", ops::Log, 0.01, 50},
      {"Erf", ops::Erf, -3, 3},   {"Floor", ops::Floor, -5, 5}, {"Ceil", ops::Ceil, -5, 5},
      {"Expm1", ops::Expm1, -3, 3}, {"Log1p", ops::Log1p, -0.5, 5},
  };
  for (DataType t : {DT_HALF, DT_BFLOAT16}) {
    for (const UnaryOp& op : ops16) {
      Tensor x16 = RandomTensor(rng(), t, TensorShape({33, 65}), op.lo, op.hi);
      EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat(op.name, " ", DataTypeName(t)),
                                 .build = Unary(op.fn),
                                 .inputs = {ConvertTo(x16, DT_FLOAT)},
                                 .bound = t == DT_HALF ? 1e-3 : 1e-2,
                                 .gpu_inputs = {x16}}));
    }
  }
}

// The *Grad helpers take (y, dy) of one shape.
TEST_F(GpuCwiseTest, UnaryGradHelpers) {
  const std::vector<std::pair<const char*, BinaryFn>> grads = {
      {"TanhGrad", ops::TanhGrad},   {"SigmoidGrad", ops::SigmoidGrad},
      {"SqrtGrad", ops::SqrtGrad},   {"RsqrtGrad", ops::RsqrtGrad},
      {"ReciprocalGrad", ops::ReciprocalGrad}};
  for (const auto& [name, fn] : grads) {
    Tensor y = RandomTensor(rng(), DT_FLOAT, TensorShape({129, 17}), 0.1, 0.9);
    Tensor dy = RandomTensor(rng(), DT_FLOAT, TensorShape({129, 17}), -2, 2);
    EXPECT_TRUE(
        GpuMatchesCpu({.label = name, .build = Binary(fn), .inputs = {y, dy}, .bound = 1e-5}));
  }
}

TEST_F(GpuCwiseTest, Comparisons) {
  const std::vector<std::pair<const char*, BinaryFn>> cmps = {
      {"Equal", ops::Equal},     {"NotEqual", ops::NotEqual},
      {"Greater", ops::Greater}, {"GreaterEqual", ops::GreaterEqual},
      {"Less", ops::Less},       {"LessEqual", ops::LessEqual}};
  for (const auto& [name, fn] : cmps) {
    for (const ShapePair& p : BroadcastShapes()) {
      // Small integers, so that ties (the interesting case) are common.
      Tensor x = RandomSmallInts(rng(), DT_FLOAT, p.x, -2, 2);
      Tensor y = RandomSmallInts(rng(), DT_FLOAT, p.y, -2, 2);
      EXPECT_TRUE(GpuMatchesCpu(
          {.label = Label(name, p), .build = Binary(fn), .inputs = {x, y}, .bound = 0}));
    }
  }
}

BuildFn CastTo(DataType dst) {
  return [dst](const Scope& s, const Inputs& in) {
    return Outputs{ops::Cast(s.WithOpName("op"), in[0], dst)};
  };
}

TEST_F(GpuCwiseTest, CastBetweenFloatIntAndBool) {
  const TensorShape shape({77, 13});
  struct CastCase {
    DataType src, dst;
    double lo, hi;
  };
  for (const CastCase& c : std::vector<CastCase>{{DT_FLOAT, DT_INT32, -100, 100},
                                                 {DT_INT32, DT_FLOAT, -100000, 100000},
                                                 {DT_FLOAT, DT_INT64, -100, 100},
                                                 {DT_INT64, DT_FLOAT, -100000, 100000},
                                                 {DT_INT32, DT_INT64, -100000, 100000},
                                                 {DT_INT64, DT_INT32, -100000, 100000},
                                                 {DT_BOOL, DT_FLOAT, 0, 1},
                                                 {DT_FLOAT, DT_BOOL, -1, 1},
                                                 {DT_FLOAT, DT_DOUBLE, -10, 10},
                                                 {DT_DOUBLE, DT_FLOAT, -10, 10}}) {
    Tensor x = RandomTensor(rng(), c.src, shape, c.lo, c.hi);
    if (c.src == DT_FLOAT && c.dst == DT_BOOL) {
      for (int i = 0; i < 100; ++i) x.data<float>()[i * 7] = 0.0f;  // some false
    }
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("Cast ", DataTypeName(c.src), " -> ",
                                                     DataTypeName(c.dst)),
                               .build = CastTo(c.dst),
                               .inputs = {x},
                               .bound = c.dst == DT_FLOAT ? 1e-7 : 0}));
  }
}

// The CPU has no 16-bit casts: the expected values come from the host's
// round-to-nearest-even conversions.
TEST_F(GpuCwiseTest, CastHalfAndBfloat16RoundTrips) {
  if (DryRunOnCpu()) GTEST_SKIP() << "the CPU has no 16-bit casts";
  const TensorShape shape({129, 33});
  for (DataType t : {DT_HALF, DT_BFLOAT16}) {
    const double bound = t == DT_HALF ? 1e-3 : 1e-2;
    Tensor x = RandomTensor(rng(), DT_FLOAT, shape, -100, 100);
    const Tensor x16 = ConvertTo(x, t);
    const std::string name = DataTypeName(t);
    EXPECT_TRUE(GpuMatchesHost(absl::StrCat("Cast float -> ", name), CastTo(t), {x}, {x16}, bound));
    // Exact: every 16-bit value is a float.
    EXPECT_TRUE(GpuMatchesHost(absl::StrCat("Cast ", name, " -> float"), CastTo(DT_FLOAT), {x16},
                               {ConvertTo(x16, DT_FLOAT)}, 0));
    BuildFn round_trip = [t](const Scope& s, const Inputs& in) {
      return Outputs{ops::Cast(s.WithOpName("op"), ops::Cast(s, in[0], t), DT_FLOAT)};
    };
    EXPECT_TRUE(GpuMatchesHost(absl::StrCat("Cast float -> ", name, " -> float"), round_trip, {x},
                               {ConvertTo(x16, DT_FLOAT)}, bound));
    // And the same values must be the nearest ones: the bits agree with the host.
    absl::StatusOr<DeviceRun> gpu = RunOn(kGpu0, CastTo(t), {x}, 1);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    const uint16_t* got = static_cast<const uint16_t*>(gpu->outputs[0].raw_data());
    const uint16_t* want = static_cast<const uint16_t*>(x16.raw_data());
    int64_t differ = 0;
    for (int64_t i = 0; i < x16.NumElements(); ++i) differ += got[i] != want[i];
    EXPECT_EQ(differ, 0) << "float -> " << name << " bits differ from round-to-nearest-even";
  }
  // Half <-> bfloat16 through float.
  Tensor h = RandomTensor(rng(), DT_HALF, shape, -50, 50);
  EXPECT_TRUE(GpuMatchesHost("Cast half -> bfloat16", CastTo(DT_BFLOAT16), {h},
                             {ConvertTo(h, DT_BFLOAT16)}, 1e-2));
}

TEST_F(GpuCwiseTest, AddN) {
  for (int n : {1, 2, 3, 5, 9}) {
    for (const TensorShape& shape : {TensorShape({}), TensorShape({1}), TensorShape({3}),
                                     TensorShape({37, 53}), TensorShape({1 << 18}),
                                     TensorShape({0})}) {
      std::vector<Tensor> xs;
      for (int i = 0; i < n; ++i) xs.push_back(RandomTensor(rng(), DT_FLOAT, shape, -1, 1));
      BuildFn build = [](const Scope& s, const Inputs& in) {
        return Outputs{ops::AddN(s.WithOpName("op"), in)};
      };
      EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("AddN N=", n, " ", shape.DebugString()),
                                 .build = build,
                                 .inputs = xs,
                                 .bound = 1e-6}));
    }
  }
}

TEST_F(GpuCwiseTest, Select) {
  struct SelectCase {
    TensorShape cond, t;
  };
  for (const SelectCase& c : std::vector<SelectCase>{{TensorShape({33, 17}), TensorShape({33, 17})},
                                                     {TensorShape({}), TensorShape({33, 17})},
                                                     {TensorShape({33}), TensorShape({33, 17})},
                                                     {TensorShape({5}), TensorShape({5, 3, 4})}}) {
    Tensor cond = RandomTensor(rng(), DT_BOOL, c.cond, 0, 1);
    Tensor t = RandomTensor(rng(), DT_FLOAT, c.t, -1, 1);
    Tensor e = RandomTensor(rng(), DT_FLOAT, c.t, -1, 1);
    BuildFn build = [](const Scope& s, const Inputs& in) {
      return Outputs{ops::Select(s.WithOpName("op"), in[0], in[1], in[2])};
    };
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("Select cond ", c.cond.DebugString(), " t ",
                                                     c.t.DebugString()),
                               .build = build,
                               .inputs = {cond, t, e},
                               .bound = 0}));
  }
}

TEST_F(GpuCwiseTest, SelectV2Broadcasting) {
  struct SelectCase {
    TensorShape cond, t, e;
  };
  for (const SelectCase& c :
       std::vector<SelectCase>{{TensorShape({4, 5}), TensorShape({4, 5}), TensorShape({4, 5})},
                               {TensorShape({}), TensorShape({4, 5}), TensorShape({4, 5})},
                               {TensorShape({4, 1}), TensorShape({1, 5}), TensorShape({4, 5})},
                               {TensorShape({3, 1, 5}), TensorShape({4, 1}), TensorShape({})},
                               {TensorShape({129}), TensorShape({257, 129}), TensorShape({129})}}) {
    Tensor cond = RandomTensor(rng(), DT_BOOL, c.cond, 0, 1);
    Tensor t = RandomTensor(rng(), DT_FLOAT, c.t, -1, 1);
    Tensor e = RandomTensor(rng(), DT_FLOAT, c.e, -1, 1);
    BuildFn build = [](const Scope& s, const Inputs& in) {
      return Outputs{ops::SelectV2(s.WithOpName("op"), in[0], in[1], in[2])};
    };
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("SelectV2 ", c.cond.DebugString(), " ",
                                                     c.t.DebugString(), " ", c.e.DebugString()),
                               .build = build,
                               .inputs = {cond, t, e},
                               .bound = 0}));
  }
}

using ReduceFn = Output (*)(const Scope&, Input, Input, const ops::ReduceAttrs&, ops::Loc);

BuildFn Reduce(ReduceFn f, std::vector<int32_t> axes, bool keep_dims) {
  return [f, axes, keep_dims](const Scope& s, const Inputs& in) {
    Output axis = ops::Const<int32_t>(Unplaced(s), axes,
                                      TensorShape({static_cast<int64_t>(axes.size())}));
    return Outputs{f(s.WithOpName("op"), in[0], axis, {.keep_dims = keep_dims},
                     ops::Loc::current())};
  };
}

// The bound grows with the number of elements summed into one output.
double ReductionBound(const TensorShape& shape, const std::vector<int32_t>& axes) {
  int64_t len = 1;
  for (int32_t a : axes) len *= shape.dim(a < 0 ? a + shape.rank() : a);
  if (len <= 64) return 1e-5;
  if (len <= 8192) return 1e-4;
  return 1e-3;
}

TEST_F(GpuCwiseTest, ReductionsOverAxisSets) {
  const std::vector<std::pair<const char*, ReduceFn>> reductions = {
      {"Sum", ops::Sum}, {"Mean", ops::Mean}, {"Max", ops::Max}, {"Min", ops::Min},
      {"Prod", ops::Prod}};
  const TensorShape shape({7, 33, 65});
  const std::vector<std::vector<int32_t>> axis_sets = {
      {0}, {1}, {2}, {-1}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}, {2, 0}, {}};
  for (const auto& [name, fn] : reductions) {
    const bool prod = std::string(name) == "Prod";
    for (const std::vector<int32_t>& axes : axis_sets) {
      // Prod of thousands of factors stays finite near 1.
      Tensor x = prod ? RandomTensor(rng(), DT_FLOAT, shape, 0.995, 1.005)
                      : RandomTensor(rng(), DT_FLOAT, shape, -1, 1);
      for (bool keep : {false, true}) {
        EXPECT_TRUE(GpuMatchesCpu(
            {.label = absl::StrCat(name, " ", shape.DebugString(), " axes {",
                                   absl::StrJoin(axes, ","), "} keep_dims=", keep),
             .build = Reduce(fn, axes, keep),
             .inputs = {x},
             .bound = ReductionBound(shape, axes)}));
      }
    }
  }
}

TEST_F(GpuCwiseTest, ReductionsLargeAndDegenerate) {
  struct Case {
    TensorShape shape;
    std::vector<int32_t> axes;
  };
  for (const Case& c : std::vector<Case>{{TensorShape({1024, 4096}), {1}},
                                         {TensorShape({1024, 4096}), {0}},
                                         {TensorShape({1 << 22}), {0}},
                                         {TensorShape({3, 1, 5}), {1}},
                                         {TensorShape({1, 1}), {0, 1}},
                                         {TensorShape({5, 0}), {1}},
                                         {TensorShape({})}}) {
    for (const auto& [name, fn] : std::vector<std::pair<const char*, ReduceFn>>{
             {"Sum", ops::Sum}, {"Mean", ops::Mean}, {"Max", ops::Max}, {"Min", ops::Min}}) {
      if (c.shape.num_elements() == 0 && (std::string(name) == "Mean")) continue;  // 0/0
      Tensor x = RandomTensor(rng(), DT_FLOAT, c.shape, -1, 1);
      EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat(name, " ", c.shape.DebugString(), " axes {",
                                                       absl::StrJoin(c.axes, ","), "}"),
                                 .build = Reduce(fn, c.axes, false),
                                 .inputs = {x},
                                 .bound = ReductionBound(c.shape, c.axes)}));
    }
  }
}

TEST_F(GpuCwiseTest, SumInt32) {
  Tensor x = RandomTensor(rng(), DT_INT32, TensorShape({31, 67}), -1000, 1000);
  for (const std::vector<int32_t>& axes : {std::vector<int32_t>{0}, {1}, {0, 1}}) {
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("Sum int32 axes {", absl::StrJoin(axes, ","), "}"),
                               .build = Reduce(ops::Sum, axes, false),
                               .inputs = {x},
                               .bound = 0}));
  }
}

TEST_F(GpuCwiseTest, ArgMax) {
  struct Case {
    TensorShape shape;
    int32_t dim;
  };
  for (const Case& c : std::vector<Case>{{TensorShape({37, 129}), 0},
                                         {TensorShape({37, 129}), 1},
                                         {TensorShape({5, 7, 9}), 1},
                                         {TensorShape({5, 7, 9}), -1},
                                         {TensorShape({256, 10}), 1},
                                         {TensorShape({100000}), 0}}) {
    for (DataType out : {DT_INT64, DT_INT32}) {
      Tensor x = RandomTensor(rng(), DT_FLOAT, c.shape, -1, 1);
      for (bool min : {false, true}) {
        BuildFn build = [dim = c.dim, out, min](const Scope& s, const Inputs& in) {
          Output d = ops::Const(Unplaced(s), dim);
          return Outputs{min ? ops::ArgMin(s.WithOpName("op"), in[0], d, {.output_type = out})
                             : ops::ArgMax(s.WithOpName("op"), in[0], d, {.output_type = out})};
        };
        EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat(min ? "ArgMin " : "ArgMax ",
                                                         c.shape.DebugString(), " dim ", c.dim,
                                                         " -> ", DataTypeName(out)),
                                   .build = build,
                                   .inputs = {x},
                                   .bound = 0}));
      }
    }
  }
  // Ties: the first maximum wins on both.
  Tensor ties = RandomSmallInts(rng(), DT_FLOAT, TensorShape({64, 50}), 0, 3);
  BuildFn build = [](const Scope& s, const Inputs& in) {
    return Outputs{ops::ArgMax(s.WithOpName("op"), in[0], ops::Const(Unplaced(s), int32_t{1}))};
  };
  EXPECT_TRUE(GpuMatchesCpu({.label = "ArgMax ties", .build = build, .inputs = {ties}, .bound = 0}));
}

// Abs(-0.0) is +0.0 on both devices (1 / Abs(-0.0) is +inf, not -inf).
TEST_F(GpuCwiseTest, AbsClearsTheSignOfZero) {
  for (DataType type : {DT_FLOAT, DT_DOUBLE}) {
    const Tensor x = type == DT_FLOAT
                         ? Tensor::FromVector(std::vector<float>{-0.0f, 0.0f, -2.0f, -0.0f})
                         : Tensor::FromVector(std::vector<double>{-0.0, 0.0, -2.0, -0.0});
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("1 / Abs(-0.0), ", DataTypeName(type)),
                               .build =
                                   [](const Scope& s, const Inputs& in) {
                                     return Outputs{ops::Reciprocal(s, ops::Abs(s, in[0]))};
                                   },
                               .inputs = {x},
                               .bound = 0}));
  }
}

// NaN as TensorFlow treats it, the CPU's rules (ops/math/math_ops_test.cc,
// NanFollowsTensorFlow): Maximum, Minimum, Max and Min give NaN when any
// input is NaN; ArgMax and ArgMin skip NaNs (a row of NaNs gives 0); ReluGrad is
// g * (f > 0), so an infinite g where f <= 0 gives NaN. Two NaNs, at
// (0, 1) and the last element, leave every shape rows and columns without
// any (whose results must stay numbers); ArgMax and ArgMin also see a
// whole row and a whole column of NaNs.
TEST_F(GpuCwiseTest, NanFollowsTheCpu) {
  auto with_nans = [&](TensorShape shape, bool whole_row_and_column) {
    Tensor t = RandomTensor(rng(), DT_FLOAT, shape, -3, 3);
    float* v = t.data<float>();
    const int64_t cols = shape.dim(1), rows = shape.dim(0);
    v[1] = NAN;
    v[rows * cols - 1] = NAN;
    if (whole_row_and_column) {
      for (int64_t j = 0; j < cols; ++j) v[j] = NAN;                  // row 0
      for (int64_t r = 0; r < rows; ++r) v[r * cols + cols / 2] = NAN;  // a column
    }
    return t;
  };
  for (TensorShape shape : {TensorShape({37, 129}), TensorShape({3, 64}), TensorShape({600, 3})}) {
    const Tensor x = with_nans(shape, false);
    for (auto [name, fn] : {std::pair<const char*, ReduceFn>{"Max", ops::Max}, {"Min", ops::Min}}) {
      for (const std::vector<int32_t>& axes : {std::vector<int32_t>{0}, {1}, {0, 1}}) {
        EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat(name, " with NaNs ", shape.DebugString(),
                                                         " axes {", absl::StrJoin(axes, ","), "}"),
                                   .build = Reduce(fn, axes, false),
                                   .inputs = {x},
                                   .bound = 0}));
      }
    }
    for (int32_t dim : {0, 1}) {
      BuildFn build = [dim](const Scope& s, const Inputs& in) {
        Output d = ops::Const(Unplaced(s), dim);
        return Outputs{ops::ArgMax(s.WithOpName("argmax"), in[0], d),
                       ops::ArgMin(s.WithOpName("argmin"), in[0], d)};
      };
      for (bool whole : {false, true}) {
        EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("ArgMax and ArgMin with NaNs ",
                                                         shape.DebugString(), " dim ", dim,
                                                         whole ? ", a whole row and column" : ""),
                                   .build = build,
                                   .inputs = {with_nans(shape, whole)},
                                   .bound = 0}));
      }
    }
    const Tensor y = with_nans(shape, false);
    EXPECT_TRUE(GpuMatchesCpu({.label = "Maximum and Minimum with NaNs",
                               .build = [](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::Maximum(s.WithOpName("max"), in[0], in[1]),
                                                ops::Minimum(s.WithOpName("min"), in[0], in[1])};
                               },
                               .inputs = {x, y},
                               .bound = 0}));
  }
  Tensor g = RandomTensor(rng(), DT_FLOAT, TensorShape({4, 100}), -3, 3);
  for (int64_t i = 0; i < g.NumElements(); i += 7) g.data<float>()[i] = INFINITY;
  for (int64_t i = 3; i < g.NumElements(); i += 11) g.data<float>()[i] = NAN;
  const Tensor f = RandomTensor(rng(), DT_FLOAT, TensorShape({4, 100}), -3, 3);
  EXPECT_TRUE(GpuMatchesCpu({.label = "ReluGrad of non-finite gradients",
                             .build = [](const Scope& s, const Inputs& in) {
                               return Outputs{ops::ReluGrad(s.WithOpName("op"), in[0], in[1])};
                             },
                             .inputs = {g, f},
                             .bound = 0}));
}

}  // namespace
}  // namespace sluice::gpu_test
