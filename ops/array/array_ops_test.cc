#include "ops/array/array_ops.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "graph/graph_def_io.h"
#include "gtest/gtest.h"
#include "ops/builtins.h"
#include "ops/array/array_gradients.h"
#include "ops/testutil/gradient_checker.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

std::vector<float> Iota(int n, float start = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

std::vector<double> IotaD(int n, double start = 0.1) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + 0.37 * i - 0.01 * i * i;
  return v;
}

class ArrayOpsTest : public ::testing::Test {
 protected:
  // Runs `y` with `feeds`; fails the test on error.
  Tensor Eval(const Output& y, std::vector<std::pair<Output, Tensor>> feeds = {}) {
    absl::StatusOr<Tensor> t = TryEval(y, std::move(feeds));
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : Tensor();
  }
  absl::StatusOr<Tensor> TryEval(const Output& y,
                                 std::vector<std::pair<Output, Tensor>> feeds = {}) {
    std::vector<Output> xs;
    std::vector<Tensor> vs;
    for (auto& [o, t] : feeds) {
      xs.push_back(o);
      vs.push_back(t);
    }
    return EvalWithFeeds(s_, xs, vs, y);
  }
  double GradError(std::vector<Output> xs, std::vector<Tensor> values, const Output& y) {
    EXPECT_TRUE(s_.ok()) << s_.status();
    absl::StatusOr<double> err = MaxGradientError(s_, xs, values, y);
    EXPECT_TRUE(err.ok()) << err.status();
    return err.ok() ? *err : 1e9;
  }
  Output X(const TensorShape& shape) { return ops::Placeholder(s_, DT_DOUBLE, {.shape = shape}); }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

// ---- Registration ------------------------------------------------------------

TEST(ArrayOpsRegistryTest, EveryOpHasShapeFnKernelAndGradientDecision) {
  const OpRegistry* ops = BuiltinOps();
  const KernelRegistry* kernels = BuiltinKernels();
  for (const char* op : {"Const",
                         "Placeholder",
                         "PlaceholderWithDefault",
                         "Identity",
                         "StopGradient",
                         "PreventGradient",
                         "NoOp",
                         "Fill",
                         "ZerosLike",
                         "OnesLike",
                         "Reshape",
                         "Transpose",
                         "InvertPermutation",
                         "ExpandDims",
                         "Squeeze",
                         "Shape",
                         "Size",
                         "Rank",
                         "ConcatV2",
                         "Concat",
                         "ConcatOffset",
                         "Split",
                         "Pack",
                         "Unpack",
                         "Tile",
                         "Slice",
                         "StridedSlice",
                         "StridedSliceGrad",
                         "GatherV2",
                         "Gather",
                         "UnsortedSegmentSum",
                         "BroadcastGradientArgs"}) {
    const OpDef* def = ops->Find(op);
    ASSERT_NE(def, nullptr) << op;
    if (std::string(op) != "NoOp") {
      EXPECT_TRUE(def->shape_fn) << op;
    }
    EXPECT_TRUE(kernels->HasKernelsFor(op, kDeviceTypeCpu)) << op;
    EXPECT_TRUE(def->grad_fn || def->no_gradient) << op;
  }
}

TEST(ArrayOpsRegistryTest, RegisteringTwiceIsAlreadyExists) {
  OpRegistry ops;
  ASSERT_TRUE(RegisterArrayOps(&ops).ok());
  EXPECT_EQ(RegisterArrayOps(&ops).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(RegisterArrayGradients(&ops).ok());
}

// ---- Constants and placeholders -----------------------------------------------

TEST_F(ArrayOpsTest, ConstForms) {
  Output a = ops::Const(s_, {1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}));
  Output b = ops::Const(s_, 5.f, TensorShape({2, 3}));
  Output c = ops::Const<double>(s_, {1, 2, 3}, {3});
  Output d = ops::Const(s_, Tensor::FromVector<int64_t>({7, 8}, TensorShape({1, 2})));
  Output e = ops::Const(s_, 3);
  Output f = ops::Const<bool>(s_, {true, false}, {2});
  ASSERT_TRUE(s_.ok()) << s_.status();
  EXPECT_EQ(a.shape(), TensorShape({2, 2}));
  EXPECT_EQ(b.shape(), TensorShape({2, 3}));
  EXPECT_EQ(e.shape(), TensorShape());
  EXPECT_EQ(a.dtype(), DT_FLOAT);
  EXPECT_EQ(c.dtype(), DT_DOUBLE);
  EXPECT_EQ(d.dtype(), DT_INT64);
  EXPECT_EQ(e.dtype(), DT_INT32);
  EXPECT_THAT(Values<float>(Eval(a)), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(Values<float>(Eval(b)), ElementsAre(5, 5, 5, 5, 5, 5));
  EXPECT_THAT(Values<double>(Eval(c)), ElementsAre(1, 2, 3));
  EXPECT_THAT(Values<int64_t>(Eval(d)), ElementsAre(7, 8));
  EXPECT_THAT(Values<int32_t>(Eval(e)), ElementsAre(3));
  EXPECT_THAT(Values<bool>(Eval(f)), ElementsAre(true, false));
  // Splat of a tensor_content literal.
  Output g =
      ops::Const(s_, Input(MakeTensorProto<int32_t>({9}, TensorShape({1}))), TensorShape({3}));
  EXPECT_THAT(Values<int32_t>(Eval(g)), ElementsAre(9, 9, 9));
  // Strings are objects: they go to string_val, not as bytes of std::string.
  Output h = ops::Const(s_, std::vector<std::string>{"a.tfrecord", "", "b"});
  ASSERT_TRUE(s_.ok()) << s_.status();
  EXPECT_EQ(h.dtype(), DT_STRING);
  EXPECT_THAT(Values<std::string>(Eval(h)), ElementsAre("a.tfrecord", "", "b"));
}

TEST_F(ArrayOpsTest, ConstWithWrongCountFailsAtBuildTime) {
  ops::Const(s_, {1.f, 2.f, 3.f}, TensorShape({2, 2}));
  ASSERT_FALSE(s_.ok());
  EXPECT_THAT(std::string(s_.status().message()), HasSubstr("[2,2]"));
  EXPECT_THAT(std::string(s_.status().message()), HasSubstr("array_ops_test.cc"));
}

TEST_F(ArrayOpsTest, UnfedPlaceholderNamesItsDtypeAndShape) {
  Output x = ops::Placeholder(s_.WithOpName("x"), DT_FLOAT, {.shape = {-1, 784}});
  EXPECT_EQ(x.shape(), TensorShape({-1, 784}));
  absl::StatusOr<Tensor> r = TryEval(x);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("You must feed a value for placeholder tensor 'x' with dtype float and "
                        "shape [?,784]"));
  Output u = ops::Placeholder(s_.WithOpName("u"), DT_INT32);
  EXPECT_TRUE(u.shape().unknown_rank());
  r = TryEval(u);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("You must feed a value for placeholder tensor 'u' with dtype int32"));
}

TEST_F(ArrayOpsTest, PlaceholderWithDefault) {
  Output d = ops::Const(s_, {1.f, 2.f});
  Output p = ops::PlaceholderWithDefault(s_, d, TensorShape({-1}));
  EXPECT_EQ(p.shape(), TensorShape({-1}));
  EXPECT_THAT(Values<float>(Eval(p)), ElementsAre(1, 2));
  EXPECT_THAT(Values<float>(Eval(p, {{p, Tensor::FromVector<float>({3, 4, 5})}})),
              ElementsAre(3, 4, 5));
  ops::PlaceholderWithDefault(s_, d, TensorShape({3}));
  EXPECT_FALSE(s_.ok());
}

TEST_F(ArrayOpsTest, IdentityStopGradientNoOp) {
  Output x = ops::Const(s_, {1.f, 2.f});
  EXPECT_THAT(Values<float>(Eval(ops::Identity(s_, x))), ElementsAre(1, 2));
  EXPECT_THAT(Values<float>(Eval(ops::StopGradient(s_, x))), ElementsAre(1, 2));
  EXPECT_THAT(Values<float>(Eval(ops::PreventGradient(s_, x))), ElementsAre(1, 2));
  EXPECT_NE(ops::NoOp(s_), nullptr);
  EXPECT_TRUE(s_.ok());
}

// ---- Creating ------------------------------------------------------------------

TEST_F(ArrayOpsTest, FillZerosOnes) {
  Output f = ops::Fill(s_, {2, 3}, 7);
  EXPECT_EQ(f.shape(), TensorShape({2, 3}));
  EXPECT_THAT(Values<int32_t>(Eval(f)), ElementsAre(7, 7, 7, 7, 7, 7));
  Output x = ops::Const(s_, {1.5, 2.5});
  EXPECT_THAT(Values<double>(Eval(ops::ZerosLike(s_, x))), ElementsAre(0, 0));
  EXPECT_THAT(Values<double>(Eval(ops::OnesLike(s_, x))), ElementsAre(1, 1));
  Output h = ops::Const(s_, Input(MakeTensorProto<Half>({Half::FromFloat(3)}, TensorShape({2}))));
  Tensor ones = Eval(ops::OnesLike(s_, h));
  ASSERT_EQ(ones.dtype(), DT_HALF);
  EXPECT_FLOAT_EQ(ones.data<Half>()[1].ToFloat(), 1.0f);
  Tensor bools = Eval(ops::OnesLike(s_, ops::Const<bool>(s_, {false, false}, {2})));
  EXPECT_THAT(Values<bool>(bools), ElementsAre(true, true));
  ops::Fill(s_, {2, -1}, 1.f);
  EXPECT_FALSE(s_.ok());
}

// ---- Shapes --------------------------------------------------------------------

TEST_F(ArrayOpsTest, ReshapeInfersMinusOneAtBuildTime) {
  Output x = ops::Placeholder(s_, DT_FLOAT, {.shape = {-1, 784}});
  Output img = ops::Reshape(s_, x, {-1, 28, 28, 1});
  EXPECT_EQ(img.shape(), TensorShape({-1, 28, 28, 1}));
  Output c = ops::Const(s_, Iota(6), TensorShape({2, 3}));
  Output r = ops::Reshape(s_, c, {3, -1});
  EXPECT_EQ(r.shape(), TensorShape({3, 2}));
  EXPECT_THAT(Values<float>(Eval(r)), ElementsAreArray(Iota(6)));
  Output r64 = ops::Reshape(s_, c, ops::Const<int64_t>(s_, {6}, {1}));
  EXPECT_EQ(r64.shape(), TensorShape({6}));
  EXPECT_THAT(Values<float>(Eval(r64)), ElementsAreArray(Iota(6)));
}

TEST_F(ArrayOpsTest, ReshapeMismatchIsBuildError) {
  Output c = ops::Const(s_, Iota(6), TensorShape({2, 3}));
  ops::Reshape(s_, c, {4, 2});
  ASSERT_FALSE(s_.ok());
  EXPECT_EQ(s_.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(s_.status().message());
  EXPECT_THAT(msg, HasSubstr("[2,3]"));
  EXPECT_THAT(msg, HasSubstr("[4,2]"));
}

TEST_F(ArrayOpsTest, ReshapeMismatchAtRunTime) {
  Output x = ops::Placeholder(s_, DT_FLOAT);
  Output r = ops::Reshape(s_, x, {-1, 4});
  absl::StatusOr<Tensor> t = TryEval(r, {{x, Tensor::FromVector<float>(Iota(6))}});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("not a multiple of 4"));
  ops::Reshape(s_, x, {-1, -1});
  EXPECT_FALSE(s_.ok());
}

TEST_F(ArrayOpsTest, Transpose) {
  Output x = ops::Const(s_, Iota(24), TensorShape({2, 3, 4}));
  Output y = ops::Transpose(s_, x, {2, 0, 1});
  EXPECT_EQ(y.shape(), TensorShape({4, 2, 3}));
  std::vector<float> want;
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) want.push_back(12 * i + 4 * j + k);
    }
  }
  EXPECT_THAT(Values<float>(Eval(y)), ElementsAreArray(want));
  // 2-D, int64 perm, odd sizes (exercises the blocked path).
  Output m = ops::Const(s_, Iota(35 * 33), TensorShape({35, 33}));
  Tensor t = Eval(ops::Transpose(s_, m, ops::Const<int64_t>(s_, {1, 0}, {2})));
  ASSERT_EQ(t.shape(), TensorShape({33, 35}));
  for (int r = 0; r < 33; ++r) {
    for (int c = 0; c < 35; ++c) ASSERT_EQ(t.data<float>()[r * 35 + c], c * 33 + r);
  }
  // Size-1 dims make this a no-op reshape.
  Output z = ops::Const(s_, Iota(6), TensorShape({1, 6, 1}));
  EXPECT_THAT(Values<float>(Eval(ops::Transpose(s_, z, {2, 1, 0}))), ElementsAreArray(Iota(6)));
  // Other dtypes.
  Output b = ops::Const<int8_t>(s_, {1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THAT(Values<int8_t>(Eval(ops::Transpose(s_, b, {1, 0}))), ElementsAre(1, 4, 2, 5, 3, 6));
  ops::Transpose(s_, x, {0, 0, 1});
  EXPECT_FALSE(s_.ok());
}

TEST_F(ArrayOpsTest, InvertPermutation) {
  EXPECT_THAT(Values<int32_t>(Eval(ops::InvertPermutation(s_, {2, 0, 1}))), ElementsAre(1, 2, 0));
}

TEST_F(ArrayOpsTest, ExpandDimsAndSqueeze) {
  Output x = ops::Const(s_, {1.f, 2.f, 3.f});
  EXPECT_EQ(ops::ExpandDims(s_, x, 0).shape(), TensorShape({1, 3}));
  Output e = ops::ExpandDims(s_, x, -1);
  EXPECT_EQ(e.shape(), TensorShape({3, 1}));
  EXPECT_EQ(Eval(e).shape(), TensorShape({3, 1}));
  Output y = ops::Const(s_, Iota(3), TensorShape({1, 3, 1}));
  Output a = ops::Squeeze(s_, y);
  EXPECT_EQ(a.shape(), TensorShape({3}));
  EXPECT_EQ(Eval(a).shape(), TensorShape({3}));
  Output b = ops::Squeeze(s_, y, {.squeeze_dims = {-1}});
  EXPECT_EQ(b.shape(), TensorShape({1, 3}));
  EXPECT_EQ(Eval(b).shape(), TensorShape({1, 3}));
  ASSERT_TRUE(s_.ok());
  ops::Squeeze(s_, y, {.squeeze_dims = {1}});
  ASSERT_FALSE(s_.ok());
  EXPECT_THAT(std::string(s_.status().message()), HasSubstr("Can not squeeze dim[1]"));
}

TEST_F(ArrayOpsTest, ShapeSizeRank) {
  Output x = ops::Placeholder(s_, DT_FLOAT, {.shape = {-1, 3}});
  Tensor v = Tensor::FromVector<float>(Iota(6), TensorShape({2, 3}));
  EXPECT_THAT(Values<int32_t>(Eval(ops::Shape(s_, x), {{x, v}})), ElementsAre(2, 3));
  EXPECT_THAT(Values<int64_t>(Eval(ops::Shape(s_, x, {.out_type = DT_INT64}), {{x, v}})),
              ElementsAre(2, 3));
  EXPECT_THAT(Values<int32_t>(Eval(ops::Size(s_, x), {{x, v}})), ElementsAre(6));
  EXPECT_THAT(Values<int32_t>(Eval(ops::Rank(s_, x), {{x, v}})), ElementsAre(2));
  EXPECT_EQ(ops::Shape(s_, x).shape(), TensorShape({2}));
}

// ---- Joining and splitting -------------------------------------------------------

TEST_F(ArrayOpsTest, ConcatV2) {
  Output a = ops::Const(s_, {1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}));
  Output b = ops::Const(s_, {5.f, 6.f}, TensorShape({2, 1}));
  Output c = ops::ConcatV2(s_, {a, b}, -1);
  EXPECT_EQ(c.shape(), TensorShape({2, 3}));
  EXPECT_THAT(Values<float>(Eval(c)), ElementsAre(1, 2, 5, 3, 4, 6));
  Output d = ops::ConcatV2(s_, std::vector<Output>{a, a}, 0);
  EXPECT_EQ(d.shape(), TensorShape({4, 2}));
  EXPECT_THAT(Values<float>(Eval(d)), ElementsAre(1, 2, 3, 4, 1, 2, 3, 4));
  Output e = ops::ConcatV2(
      s_, {ops::Const<bool>(s_, {true}, {1}), ops::Const<bool>(s_, {false, true}, {2})},
      ops::Const<int64_t>(s_, {0}, {}));
  EXPECT_THAT(Values<bool>(Eval(e)), ElementsAre(true, false, true));
}

TEST_F(ArrayOpsTest, ConcatMismatchIsBuildError) {
  Output a = ops::Const(s_, Iota(6), TensorShape({2, 3}));
  Output b = ops::Const(s_, Iota(8), TensorShape({2, 4}));
  ops::ConcatV2(s_, {a, b}, 0);
  ASSERT_FALSE(s_.ok());
  EXPECT_EQ(s_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s_.status().message()), HasSubstr("[2,4]"));
}

TEST_F(ArrayOpsTest, ConcatMismatchAtRunTime) {
  Output a = ops::Placeholder(s_, DT_FLOAT);
  Output b = ops::Const(s_, Iota(8), TensorShape({2, 4}));
  absl::StatusOr<Tensor> t =
      TryEval(ops::ConcatV2(s_, {a, b}, 0), {{a, Tensor::FromVector<float>(Iota(6), {2, 3})}});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("[2,3]"));
}

TEST_F(ArrayOpsTest, ConcatOffset) {
  std::vector<Output> o = ops::ConcatOffset(
      s_, 1, {ops::Const(s_, {2, 3, 4}), ops::Const(s_, {2, 5, 4}), ops::Const(s_, {2, 1, 4})});
  ASSERT_EQ(o.size(), 3u);
  EXPECT_THAT(Values<int32_t>(Eval(o[0])), ElementsAre(0, 0, 0));
  EXPECT_THAT(Values<int32_t>(Eval(o[1])), ElementsAre(0, 3, 0));
  EXPECT_THAT(Values<int32_t>(Eval(o[2])), ElementsAre(0, 8, 0));
}

TEST_F(ArrayOpsTest, Split) {
  Output x = ops::Const(s_, Iota(8), TensorShape({2, 4}));
  std::vector<Output> parts = ops::Split(s_, 1, x, 2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].shape(), TensorShape({2, 2}));
  EXPECT_THAT(Values<float>(Eval(parts[0])), ElementsAre(0, 1, 4, 5));
  EXPECT_THAT(Values<float>(Eval(parts[1])), ElementsAre(2, 3, 6, 7));
  std::vector<Output> rows = ops::Split(s_, 0, x, 2);
  EXPECT_THAT(Values<float>(Eval(rows[1])), ElementsAre(4, 5, 6, 7));
  std::vector<Output> bad = ops::Split(s_, 1, x, 3);
  EXPECT_EQ(bad.size(), 3u);
  EXPECT_FALSE(s_.ok());
}

TEST_F(ArrayOpsTest, PackUnpack) {
  Output a = ops::Const(s_, {1.f, 2.f, 3.f});
  Output b = ops::Const(s_, {4.f, 5.f, 6.f});
  Output p0 = ops::Pack(s_, {a, b});
  EXPECT_EQ(p0.shape(), TensorShape({2, 3}));
  EXPECT_THAT(Values<float>(Eval(p0)), ElementsAre(1, 2, 3, 4, 5, 6));
  Output p1 = ops::Pack(s_, {a, b}, {.axis = 1});
  EXPECT_EQ(p1.shape(), TensorShape({3, 2}));
  EXPECT_THAT(Values<float>(Eval(p1)), ElementsAre(1, 4, 2, 5, 3, 6));
  std::vector<Output> u = ops::Unpack(s_, p1, 2, {.axis = -1});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[1].shape(), TensorShape({3}));
  EXPECT_THAT(Values<float>(Eval(u[1])), ElementsAre(4, 5, 6));
  std::vector<Output> rows = ops::Unpack(s_, p1, 3);
  EXPECT_THAT(Values<float>(Eval(rows[2])), ElementsAre(3, 6));
  ops::Pack(s_, {a, ops::Const(s_, {1.f})});
  EXPECT_FALSE(s_.ok());
}

TEST_F(ArrayOpsTest, Tile) {
  Output x = ops::Const<uint8_t>(s_, {1, 2, 3, 4}, {2, 2});
  Output t = ops::Tile(s_, x, {2, 3});
  EXPECT_EQ(t.shape(), TensorShape({4, 6}));
  EXPECT_THAT(Values<uint8_t>(Eval(t)),
              ElementsAre(1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4));
  Output v = ops::Const(s_, {1.f, 2.f});
  EXPECT_THAT(Values<float>(Eval(ops::Tile(s_, v, {0}))), ElementsAre());
  EXPECT_THAT(Values<float>(Eval(ops::Tile(s_, ops::ExpandDims(s_, v, 1), {1, 2}))),
              ElementsAre(1, 1, 2, 2));
}

// ---- Indexing ----------------------------------------------------------------------

TEST_F(ArrayOpsTest, Slice) {
  Output x = ops::Const(s_, Iota(12), TensorShape({3, 4}));
  Output y = ops::Slice(s_, x, {1, 1}, {2, -1});
  EXPECT_EQ(y.shape(), TensorShape({2, 3}));
  EXPECT_THAT(Values<float>(Eval(y)), ElementsAre(5, 6, 7, 9, 10, 11));
  Output z =
      ops::Slice(s_, x, ops::Const<int64_t>(s_, {0, 2}, {2}), ops::Const<int64_t>(s_, {3, 1}, {2}));
  EXPECT_THAT(Values<float>(Eval(z)), ElementsAre(2, 6, 10));
  ops::Slice(s_, x, {2, 0}, {2, 1});
  EXPECT_FALSE(s_.ok());
}

struct SliceCase {
  std::vector<int32_t> begin, end, strides;
  ops::StridedSliceAttrs attrs;
  TensorShape want_shape;
  std::vector<float> want;
};

TEST_F(ArrayOpsTest, StridedSliceCases) {
  // x = arange(24).reshape(2, 3, 4)
  auto v = [](std::initializer_list<float> l) { return std::vector<float>(l); };
  const SliceCase cases[] = {
      // x[1]
      {{1}, {2}, {1}, {.shrink_axis_mask = 1}, TensorShape({3, 4}), Iota(12, 12)},
      // x[:, 1:3, ::2]
      {{0, 1, 0},
       {0, 3, 0},
       {1, 1, 2},
       {.begin_mask = 5, .end_mask = 5},
       TensorShape({2, 2, 2}),
       v({4, 6, 8, 10, 16, 18, 20, 22})},
      // x[..., ::-1] restricted to the first row: x[0, 0, ::-1]
      {{0, 0, 0},
       {1, 1, 0},
       {1, 1, -1},
       {.begin_mask = 4, .end_mask = 4, .shrink_axis_mask = 3},
       TensorShape({4}),
       v({3, 2, 1, 0})},
      // x[:, tf.newaxis, -1, 1:]
      {{0, 0, -1, 1},
       {0, 0, 0, 0},
       {1, 1, 1, 1},
       {.begin_mask = 1, .end_mask = 9, .new_axis_mask = 2, .shrink_axis_mask = 4},
       TensorShape({2, 1, 3}),
       v({9, 10, 11, 21, 22, 23})},
      // x[..., 1]
      {{0, 1},
       {0, 2},
       {1, 1},
       {.ellipsis_mask = 1, .shrink_axis_mask = 2},
       TensorShape({2, 3}),
       v({1, 5, 9, 13, 17, 21})},
      // x[-1:0:-1]
      {{-1}, {0}, {-1}, {}, TensorShape({1, 3, 4}), Iota(12, 12)},
      // x[::-1, 2, -3:-5:-1]
      {{0, 2, -3},
       {0, 0, -5},
       {-1, 1, -1},
       {.begin_mask = 1, .end_mask = 1, .shrink_axis_mask = 2},
       TensorShape({2, 2}),
       v({21, 20, 9, 8})},
      // x[-100:100] (clamped: the whole tensor)
      {{-100}, {100}, {1}, {}, TensorShape({2, 3, 4}), Iota(24)},
      // x[1:1] (empty)
      {{1}, {1}, {1}, {}, TensorShape({0, 3, 4}), {}},
  };
  Output x = ops::Const(s_, Iota(24), TensorShape({2, 3, 4}));
  for (size_t i = 0; i < std::size(cases); ++i) {
    const SliceCase& c = cases[i];
    const int n = static_cast<int>(c.begin.size());
    auto vec = [&](const std::vector<int32_t>& a) {
      return ops::Const<int32_t>(s_, a, TensorShape({n}));
    };
    Output y = ops::StridedSlice(s_, x, vec(c.begin), vec(c.end), vec(c.strides), c.attrs);
    ASSERT_TRUE(s_.ok()) << "case " << i << ": " << s_.status();
    EXPECT_EQ(y.shape(), c.want_shape) << "case " << i;
    Tensor t = Eval(y);
    EXPECT_EQ(t.shape(), c.want_shape) << "case " << i;
    EXPECT_THAT(Values<float>(t), ElementsAreArray(c.want)) << "case " << i;
  }
}

TEST_F(ArrayOpsTest, StridedSliceOneDim) {
  Output v = ops::Const(s_, Iota(10));
  EXPECT_THAT(Values<float>(Eval(ops::StridedSlice(s_, v, {8}, {2}, {-3}))), ElementsAre(8, 5));
  EXPECT_THAT(Values<float>(Eval(ops::StridedSlice(s_, v, {0}, {0}, {4}, {.end_mask = 1}))),
              ElementsAre(0, 4, 8));
  // Dynamic begin: the rank is still known at build time.
  Output b = ops::PlaceholderWithDefault(s_, ops::Const(s_, {3}), TensorShape({1}));
  Output y = ops::StridedSlice(s_, v, b, {4}, {1}, {.shrink_axis_mask = 1});
  EXPECT_EQ(y.shape(), TensorShape());
  EXPECT_THAT(Values<float>(Eval(y)), ElementsAre(3));
  ops::StridedSlice(s_, v, {10}, {11}, {1}, {.shrink_axis_mask = 1});
  ASSERT_FALSE(s_.ok());
  EXPECT_THAT(std::string(s_.status().message()), HasSubstr("out of bounds"));
}

TEST_F(ArrayOpsTest, StridedSliceErrorsAtRunTime) {
  Output x = ops::Placeholder(s_, DT_FLOAT);
  Output y = ops::StridedSlice(s_, x, {0}, {1}, {0});
  absl::StatusOr<Tensor> t = TryEval(y, {{x, Tensor::FromVector<float>(Iota(3))}});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("must be non-zero"));
}

TEST_F(ArrayOpsTest, StridedSliceGrad) {
  Output dy = ops::Const(s_, {1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}));
  Output g = ops::StridedSliceGrad(s_, {3, 4}, {0, 1}, {3, 4}, {2, 2}, dy);
  EXPECT_EQ(g.shape(), TensorShape({3, 4}));
  EXPECT_THAT(Values<float>(Eval(g)), ElementsAre(0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4));
}

TEST_F(ArrayOpsTest, GatherV2) {
  Output p = ops::Const(s_, Iota(6), TensorShape({2, 3}));
  Output a1 = ops::GatherV2(s_, p, {2, 0}, 1);
  EXPECT_EQ(a1.shape(), TensorShape({2, 2}));
  EXPECT_THAT(Values<float>(Eval(a1)), ElementsAre(2, 0, 5, 3));
  Output a0 = ops::GatherV2(s_, p, ops::Const<int64_t>(s_, {1, 0}, {2, 1}), 0);
  EXPECT_EQ(a0.shape(), TensorShape({2, 1, 3}));
  EXPECT_THAT(Values<float>(Eval(a0)), ElementsAre(3, 4, 5, 0, 1, 2));
  Output ints = ops::Const<int64_t>(s_, {10, 20, 30}, {3});
  EXPECT_THAT(Values<int64_t>(Eval(ops::GatherV2(s_, ints, 2, 0))), ElementsAre(30));
  Output bad = ops::GatherV2(s_, p, {3}, 0);
  absl::StatusOr<Tensor> t = TryEval(bad);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("indices[0] = 3 is not in [0, 2)"));
}

TEST_F(ArrayOpsTest, UnsortedSegmentSum) {
  Output data = ops::Const(s_, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f}, TensorShape({4, 2}));
  Output r = ops::UnsortedSegmentSum(s_, data, {0, 2, 0, -1}, 3);
  EXPECT_EQ(r.shape(), TensorShape({3, 2}));
  EXPECT_THAT(Values<float>(Eval(r)), ElementsAre(6, 8, 0, 0, 3, 4));
  absl::StatusOr<Tensor> t = TryEval(ops::UnsortedSegmentSum(s_, data, {0, 3, 0, 0}, 3));
  EXPECT_FALSE(t.ok());
}

TEST_F(ArrayOpsTest, BroadcastGradientArgs) {
  auto r = ops::BroadcastGradientArgs(s_, {2, 3, 4}, {3, 1});
  EXPECT_EQ(r.r0.shape(), TensorShape({0}));
  EXPECT_EQ(r.r1.shape(), TensorShape({2}));
  EXPECT_THAT(Values<int32_t>(Eval(r.r0)), ElementsAre());
  EXPECT_THAT(Values<int32_t>(Eval(r.r1)), ElementsAre(0, 2));
  auto q = ops::BroadcastGradientArgs(s_, ops::Const<int64_t>(s_, {1, 5}, {2}),
                                      ops::Const<int64_t>(s_, {1, 1}, {2}));
  EXPECT_THAT(Values<int64_t>(Eval(q.r0)), ElementsAre(0));
  EXPECT_THAT(Values<int64_t>(Eval(q.r1)), ElementsAre(0, 1));
  ops::BroadcastGradientArgs(s_, {2, 3}, {4});
  ASSERT_FALSE(s_.ok());
  EXPECT_THAT(std::string(s_.status().message()), HasSubstr("Incompatible shapes: [2,3] vs. [4]"));
}

TEST_F(ArrayOpsTest, TensorStridedSliceUpdateWritesABroadcastValue) {
  Output x = ops::Const(s_, Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})));
  // x[:, ::2] = [9, 8] (broadcast over rows); x[1, 1:] = 7 (a scalar).
  Output a = ops::TensorStridedSliceUpdate(s_, x, {0, 0}, {0, 3}, {1, 2}, {9, 8},
                                           {.begin_mask = 1, .end_mask = 1});
  EXPECT_EQ(a.shape(), TensorShape({2, 3}));
  EXPECT_THAT(Values<int32_t>(Eval(a)), ElementsAre(9, 2, 8, 9, 5, 8));
  Output b = ops::TensorStridedSliceUpdate(s_, x, {1, 1}, {2, 3}, {1, 1}, 7,
                                           {.shrink_axis_mask = 1});
  EXPECT_THAT(Values<int32_t>(Eval(b)), ElementsAre(1, 2, 3, 4, 7, 7));
  absl::StatusOr<Tensor> bad = TryEval(ops::TensorStridedSliceUpdate(s_, x, {0, 0}, {2, 2},
                                                                     {1, 1}, {1, 2, 3}));
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("cannot broadcast a value of shape [3] to the slice's shape [2,2]"));
}

TEST_F(ArrayOpsTest, TensorStridedSliceUpdateGradient) {
  Output x = X({3, 4});
  Output v = X({1, 2});  // broadcast over the slice's 2 rows
  Output y = ops::TensorStridedSliceUpdate(s_, x, {0, 1}, {3, 4}, {2, 2}, v);
  Tensor xv(DT_DOUBLE, TensorShape({3, 4}));
  for (int i = 0; i < 12; ++i) xv.data<double>()[i] = 0.1 * i - 0.4;
  Tensor vv = Tensor::FromVector<double>({0.3, -0.7}, TensorShape({1, 2}));
  EXPECT_LT(GradError({x, v}, {xv, vv}, y), 1e-8);
}

TEST_F(ArrayOpsTest, BroadcastArgs) {
  Output r = ops::BroadcastArgs(s_, {2, 1, 4}, {3, 1});
  EXPECT_EQ(r.shape(), TensorShape({3}));
  EXPECT_THAT(Values<int32_t>(Eval(r)), ElementsAre(2, 3, 4));
  Output q = ops::BroadcastArgs(s_, ops::Const<int64_t>(s_, {5}, {1}),
                                ops::Const<int64_t>(s_, {0, 1}, {2}));
  EXPECT_THAT(Values<int64_t>(Eval(q)), ElementsAre(0, 5));
  EXPECT_THAT(Values<int32_t>(Eval(ops::BroadcastArgs(s_, ops::Const<int32_t>(s_, {}, {0}), {7}))),
              ElementsAre(7));
  absl::StatusOr<Tensor> bad = TryEval(ops::BroadcastArgs(s_, {2, 3}, {4}));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("Incompatible shapes: [2,3] vs. [4]"));
}

// ---- A graph written by TensorFlow ----------------------------------------------------

TEST(ArrayOpsGraphDefTest, RunsTensorFlowStyleGraph) {
  const char* kGraph = R"pb(
    node {
      name: "x"
      op: "Placeholder"
      attr {
        key: "dtype"
        value { type: DT_FLOAT }
      }
      attr {
        key: "shape"
        value {
          shape {
            dim { size: -1 }
            dim { size: 6 }
          }
        }
      }
    }
    node {
      name: "Reshape/shape"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape { dim { size: 3 } }
            tensor_content: "\377\377\377\377\002\000\000\000\003\000\000\000"
          }
        }
      }
    }
    node {
      name: "Reshape"
      op: "Reshape"
      input: "x"
      input: "Reshape/shape"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
      attr {
        key: "Tshape"
        value { type: DT_INT32 }
      }
    }
    node {
      name: "strided_slice/stack"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape { dim { size: 2 } }
            int_val: 0
            int_val: 1
          }
        }
      }
    }
    node {
      name: "strided_slice/stack_1"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape { dim { size: 2 } }
            int_val: 0
            int_val: 2
          }
        }
      }
    }
    node {
      name: "strided_slice/stack_2"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape { dim { size: 2 } }
            int_val: 1
          }
        }
      }
    }
    node {
      name: "strided_slice"
      op: "StridedSlice"
      input: "Reshape"
      input: "strided_slice/stack"
      input: "strided_slice/stack_1"
      input: "strided_slice/stack_2"
      attr {
        key: "Index"
        value { type: DT_INT32 }
      }
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
      attr {
        key: "begin_mask"
        value { i: 1 }
      }
      attr {
        key: "ellipsis_mask"
        value { i: 0 }
      }
      attr {
        key: "end_mask"
        value { i: 1 }
      }
      attr {
        key: "new_axis_mask"
        value { i: 0 }
      }
      attr {
        key: "shrink_axis_mask"
        value { i: 2 }
      }
    }
    node {
      name: "zeros"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_FLOAT }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_FLOAT
            tensor_shape {
              dim { size: 2 }
              dim { size: 3 }
            }
            float_val: 0.5
          }
        }
      }
    }
    node {
      name: "concat/axis"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape {}
            int_val: 0
          }
        }
      }
    }
    node {
      name: "concat"
      op: "ConcatV2"
      input: "strided_slice"
      input: "zeros"
      input: "concat/axis"
      attr {
        key: "N"
        value { i: 2 }
      }
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
      attr {
        key: "Tidx"
        value { type: DT_INT32 }
      }
    }
    versions { producer: 27 }
  )pb";
  absl::StatusOr<GraphDef> def = ParseGraphDef(kGraph);
  ASSERT_TRUE(def.ok()) << def.status();
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), *def);
  ASSERT_TRUE(session.ok()) << session.status();
  // x: [2, 6] -> Reshape [-1, 2, 3] = [2, 2, 3] -> [:, 1] = [2, 3] -> concat [4, 3].
  Tensor x = Tensor::FromVector<float>(Iota(12), TensorShape({2, 6}));
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run({{"x:0", x}}, {"concat:0"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({4, 3}));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(3, 4, 5, 9, 10, 11, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5));
}

// ---- Gradients ---------------------------------------------------------------------

TEST_F(ArrayOpsTest, GradReshapeExpandSqueezeIdentity) {
  Output x = X({2, 3});
  Tensor v = Tensor::FromVector<double>(IotaD(6), TensorShape({2, 3}));
  EXPECT_LT(GradError({x}, {v}, ops::Reshape(s_, x, {3, 2})), 1e-8);
  EXPECT_LT(GradError({x}, {v}, ops::ExpandDims(s_, x, 1)), 1e-8);
  EXPECT_LT(GradError({x}, {v}, ops::Squeeze(s_, ops::Reshape(s_, x, {1, 6, 1}))), 1e-8);
  EXPECT_LT(GradError({x}, {v}, ops::Identity(s_, x)), 1e-8);
  EXPECT_LT(GradError({x}, {v}, ops::PlaceholderWithDefault(s_, x, TensorShape({-1, 3}))), 1e-8);
  // Unknown input shape: the shape comes from a Shape node.
  Output u = ops::Placeholder(s_, DT_DOUBLE);
  EXPECT_LT(GradError({u}, {v}, ops::Reshape(s_, u, {-1})), 1e-8);
}

TEST_F(ArrayOpsTest, GradTranspose) {
  Output x = X({2, 3, 4});
  Tensor v = Tensor::FromVector<double>(IotaD(24), TensorShape({2, 3, 4}));
  EXPECT_LT(GradError({x}, {v}, ops::Transpose(s_, x, {1, 2, 0})), 1e-8);
  // A perm that is not a Const: the inverse is computed in the graph.
  Output perm = ops::PlaceholderWithDefault(s_, ops::Const(s_, {2, 0, 1}), TensorShape({3}));
  EXPECT_LT(GradError({x}, {v}, ops::Transpose(s_, x, perm)), 1e-8);
}

TEST_F(ArrayOpsTest, GradConcat) {
  Output a = X({2, 3});
  Output b = X({2, 2});
  Tensor va = Tensor::FromVector<double>(IotaD(6), TensorShape({2, 3}));
  Tensor vb = Tensor::FromVector<double>(IotaD(4, -1), TensorShape({2, 2}));
  EXPECT_LT(GradError({a, b}, {va, vb}, ops::ConcatV2(s_, {a, b}, -1)), 1e-8);
  // Unknown shapes and a non-constant axis: ConcatOffset + Slice.
  Output c = ops::Placeholder(s_, DT_DOUBLE);
  Output d = ops::Placeholder(s_, DT_DOUBLE);
  Output axis = ops::PlaceholderWithDefault(s_, ops::Const(s_, 1), TensorShape());
  EXPECT_LT(GradError({c, d}, {va, vb}, ops::ConcatV2(s_, {c, d, c}, axis)), 1e-8);
}

TEST_F(ArrayOpsTest, GradSplitPackUnpack) {
  Output x = X({2, 4});
  Tensor v = Tensor::FromVector<double>(IotaD(8), TensorShape({2, 4}));
  // Only one piece is used: the other's gradient is zeros.
  EXPECT_LT(GradError({x}, {v}, ops::Split(s_, 1, x, 2)[1]), 1e-8);
  std::vector<Output> pieces = ops::Split(s_, 0, x, 2);
  EXPECT_LT(GradError({x}, {v}, ops::Pack(s_, {pieces[1], pieces[0]}, {.axis = 1})), 1e-8);
  EXPECT_LT(GradError({x}, {v}, ops::Unpack(s_, x, 4, {.axis = 1})[2]), 1e-8);
}

TEST_F(ArrayOpsTest, GradSlice) {
  Output x = X({3, 4});
  Tensor v = Tensor::FromVector<double>(IotaD(12), TensorShape({3, 4}));
  EXPECT_LT(GradError({x}, {v}, ops::Slice(s_, x, {1, 1}, {2, -1})), 1e-8);
}

TEST_F(ArrayOpsTest, GradSliceDynamic) {
  Output u = ops::Placeholder(s_, DT_DOUBLE);
  Tensor v = Tensor::FromVector<double>(IotaD(12), TensorShape({3, 4}));
  EXPECT_LT(GradError({u}, {v}, ops::Slice(s_, u, {1, 0}, {-1, 3})), 1e-8);
}

TEST_F(ArrayOpsTest, GradStridedSlice) {
  Output x = X({2, 3, 4});
  Tensor v = Tensor::FromVector<double>(IotaD(24), TensorShape({2, 3, 4}));
  EXPECT_LT(
      GradError({x}, {v},
                ops::StridedSlice(
                    s_, x, {0, 0, -1, 1}, {0, 0, 0, 0}, {1, 1, 1, 1},
                    {.begin_mask = 1, .end_mask = 9, .new_axis_mask = 2, .shrink_axis_mask = 4})),
      1e-8);
  EXPECT_LT(GradError({x}, {v},
                      ops::StridedSlice(s_, x, {0, 2}, {0, 0}, {-1, -2},
                                        {.begin_mask = 1, .end_mask = 3})),
            1e-8);
}

TEST_F(ArrayOpsTest, GradGather) {
  Output p = X({3, 4});
  Tensor v = Tensor::FromVector<double>(IotaD(12), TensorShape({3, 4}));
  EXPECT_LT(GradError({p}, {v}, ops::GatherV2(s_, p, {0, 2, 0}, 0)), 1e-8);
  EXPECT_LT(GradError({p}, {v}, ops::GatherV2(s_, p, ops::Const(s_, {3, 1, 3, 0}, {2, 2}), 1)),
            1e-8);
  Output u = ops::Placeholder(s_, DT_DOUBLE);
  EXPECT_LT(GradError({u}, {v}, ops::GatherV2(s_, u, ops::Const<int64_t>(s_, {2, 2}, {2}), 0)),
            1e-8);
}

TEST_F(ArrayOpsTest, GradTileAndFill) {
  Output x = X({2, 3});
  Tensor v = Tensor::FromVector<double>(IotaD(6), TensorShape({2, 3}));
  EXPECT_LT(GradError({x}, {v}, ops::Tile(s_, x, {2, 2})), 1e-8);
  Output u = ops::Placeholder(s_, DT_DOUBLE);
  EXPECT_LT(GradError({u}, {v}, ops::Tile(s_, u, {3, 1})), 1e-8);
  Output scalar = X({});
  EXPECT_LT(GradError({scalar}, {Tensor::Scalar<double>(0.7)}, ops::Fill(s_, {2, 3}, scalar)),
            1e-8);
}

TEST_F(ArrayOpsTest, GradUnsortedSegmentSum) {
  Output x = X({4, 2});
  Tensor v = Tensor::FromVector<double>(IotaD(8), TensorShape({4, 2}));
  EXPECT_LT(GradError({x}, {v}, ops::UnsortedSegmentSum(s_, x, {1, 0, 1, 2}, 3)), 1e-8);
}

TEST_F(ArrayOpsTest, StopAndPreventGradient) {
  Output x = X({2});
  absl::StatusOr<std::vector<Output>> g = AddGradients(s_, {ops::StopGradient(s_, x)}, {x});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE((*g)[0].valid());
  g = AddGradients(s_, {ops::PreventGradient(s_, x, {.message = "no way"})}, {x});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("no way"));
}

}  // namespace
}  // namespace sluice
