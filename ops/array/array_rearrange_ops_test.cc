// MirrorPad, MirrorPadGrad, SpaceToBatchND, BatchToSpaceND, ReverseSequence
// and ParallelConcat: the examples of TensorFlow's API documentation for
// each (tf.pad with REFLECT/SYMMETRIC, the MirrorPadGrad op doc,
// tf.space_to_batch_nd / tf.batch_to_space_nd examples 1-4,
// tf.reverse_sequence, tf.parallel_stack), edge cases (empty, rank 0,
// integer types), bad inputs, and gradients by central differences.
#include "ops/array/array_rearrange_ops.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Feeds;
using testing_util::GradError;
using testing_util::Make;
using testing_util::Placeholder;
using testing_util::TryEval;

class ArrayRearrangeTest : public ::testing::Test {
 protected:
  std::string ErrorOf(const Feeds& feeds, const Output& y) {
    absl::Status s = TryEval(s_, feeds, y).status();
    EXPECT_FALSE(s.ok());
    return std::string(s.message());
  }
  Output Ints(const std::vector<int32_t>& v, const TensorShape& shape) {
    return ops::Const(s_, Make<int32_t>(v, shape));
  }
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

std::vector<int32_t> Iota(int n, int first = 1) {
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = first + i;
  return v;
}

// tf.pad's documented REFLECT and SYMMETRIC examples.
TEST_F(ArrayRearrangeTest, MirrorPad) {
  Output t = Placeholder(s_, DT_INT32);
  Feeds f = {{t, Make<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})}};
  Output paddings = Ints({1, 1, 2, 2}, {2, 2});
  Output reflect = ops::MirrorPad(s_, t, paddings, "REFLECT");
  ExpectTensor<int32_t>(Eval(s_, f, reflect), {4, 7},
                        {6, 5, 4, 5, 6, 5, 4,  //
                         3, 2, 1, 2, 3, 2, 1,  //
                         6, 5, 4, 5, 6, 5, 4,  //
                         3, 2, 1, 2, 3, 2, 1});
  ExpectTensor<int32_t>(Eval(s_, f, ops::MirrorPad(s_, t, paddings, "SYMMETRIC")), {4, 7},
                        {2, 1, 1, 2, 3, 3, 2,  //
                         2, 1, 1, 2, 3, 3, 2,  //
                         5, 4, 4, 5, 6, 6, 5,  //
                         5, 4, 4, 5, 6, 6, 5});
  Output known = ops::MirrorPad(s_, Placeholder(s_, DT_FLOAT, TensorShape({2, -1})), paddings,
                                "REFLECT");
  EXPECT_EQ(known.node->output_shape(0), TensorShape({4, -1}));
  // Rank 0 and empty dimensions with no padding.
  Output x = Placeholder(s_, DT_FLOAT);
  ExpectTensor<float>(Eval(s_, {{x, Make<float>({2}, {})}},
                           ops::MirrorPad(s_, x, Ints({}, {0, 2}), "SYMMETRIC")),
                      {}, {2});
  ExpectTensor<float>(Eval(s_, {{x, Make<float>({}, {0, 2})}},
                           ops::MirrorPad(s_, x, Ints({0, 0, 1, 1}, {2, 2}), "REFLECT")),
                      {0, 4}, {});
  // REFLECT allows dim - 1, SYMMETRIC dim.
  Output p = Placeholder(s_, DT_INT32);
  Feeds too_far = {f[0], {p, Make<int32_t>({2, 0, 0, 0}, {2, 2})}};
  EXPECT_NE(ErrorOf(too_far, ops::MirrorPad(s_, t, p, "REFLECT")).find("at most 1"),
            std::string::npos);
  ExpectTensor<int32_t>(Eval(s_, too_far, ops::MirrorPad(s_, t, p, "SYMMETRIC")), {4, 3},
                        {4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6});
  Feeds negative = {f[0], {p, Make<int32_t>({0, -1, 0, 0}, {2, 2})}};
  EXPECT_NE(ErrorOf(negative, ops::MirrorPad(s_, t, p, "SYMMETRIC")).find("non-negative"),
            std::string::npos);
  ops::MirrorPad(s_, t, p, "EDGE");
  EXPECT_FALSE(s_.ok());  // not an allowed mode
}

// The MirrorPadGrad op's documented example, and folding back MirrorPad.
TEST_F(ArrayRearrangeTest, MirrorPadGrad) {
  Output g = Placeholder(s_, DT_INT64);
  Feeds f = {{g, Make<int64_t>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3})}};
  ExpectTensor<int64_t>(Eval(s_, f, ops::MirrorPadGrad(s_, g, Ints({0, 1, 0, 1}, {2, 2}), "SYMMETRIC")),
                        {2, 2}, {1, 5, 11, 28});
  // REFLECT of a row: [a b c] padded (2, 1) is [c b a b c b].
  Output r = Placeholder(s_, DT_DOUBLE);
  ExpectTensor<double>(Eval(s_, {{r, Make<double>({1, 10, 100, 1000, 10000, 100000}, {6})}},
                            ops::MirrorPadGrad(s_, r, Ints({2, 1}, {1, 2}), "REFLECT")),
                       {3}, {100, 10 + 1000 + 100000, 1 + 10000});
  EXPECT_NE(ErrorOf(f, ops::MirrorPadGrad(s_, g, Ints({2, 2, 0, 0}, {2, 2}), "SYMMETRIC"))
                .find("exceed"),
            std::string::npos);
}

// tf.space_to_batch_nd's documented examples 1-4 and their inverses.
TEST_F(ArrayRearrangeTest, SpaceToBatchAndBack) {
  Output zero_pads = Ints({0, 0, 0, 0}, {2, 2});
  Output x = Placeholder(s_, DT_FLOAT);
  Output b = ops::SpaceToBatchND(s_, x, {2, 2}, zero_pads);
  ExpectTensor<float>(Eval(s_, {{x, Make<float>({1, 2, 3, 4}, {1, 2, 2, 1})}}, b), {4, 1, 1, 1},
                      {1, 2, 3, 4});
  std::vector<float> twelve = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  ExpectTensor<float>(Eval(s_, {{x, Make<float>(twelve, {1, 2, 2, 3})}}, b), {4, 1, 1, 3}, twelve);
  Output i = Placeholder(s_, DT_INT32);
  Output ib = ops::SpaceToBatchND(s_, i, {2, 2}, zero_pads);
  ExpectTensor<int32_t>(Eval(s_, {{i, Make<int32_t>(Iota(16), {1, 4, 4, 1})}}, ib), {4, 2, 2, 1},
                        {1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16});
  Output pads = Ints({0, 0, 2, 0}, {2, 2});
  Output padded = ops::SpaceToBatchND(s_, i, {2, 2}, pads);
  Feeds four = {{i, Make<int32_t>(Iota(16), {2, 2, 4, 1})}};
  ExpectTensor<int32_t>(Eval(s_, four, padded), {8, 1, 3, 1},
                        {0, 1, 3, 0, 9, 11, 0, 2, 4, 0, 10, 12,  //
                         0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16});
  // BatchToSpaceND with the same crops gives the input back.
  ExpectTensor<int32_t>(Eval(s_, four, ops::BatchToSpaceND(s_, padded, {2, 2}, pads)),
                        {2, 2, 4, 1}, Iota(16));
  ExpectTensor<int32_t>(Eval(s_, {{i, Make<int32_t>(Iota(16), {1, 4, 4, 1})}},
                             ops::BatchToSpaceND(s_, ib, {2, 2}, zero_pads)),
                        {1, 4, 4, 1}, Iota(16));
  // One spatial dimension, trailing dims kept; an empty batch.
  Output v = Placeholder(s_, DT_INT64);
  ExpectTensor<int64_t>(Eval(s_, {{v, Make<int64_t>({1, 2, 3, 4, 5, 6}, {1, 3, 2})}},
                             ops::SpaceToBatchND(s_, v, {2}, Ints({1, 0}, {1, 2}))),
                        {2, 2, 2}, {0, 0, 3, 4, 1, 2, 5, 6});
  ExpectTensor<int64_t>(Eval(s_, {{v, Make<int64_t>({}, {0, 2, 2})}},
                             ops::SpaceToBatchND(s_, v, {2}, Ints({0, 0}, {1, 2}))),
                        {0, 1, 2}, {});
}

TEST_F(ArrayRearrangeTest, SpaceBatchErrors) {
  Output x = Placeholder(s_, DT_FLOAT);
  Feeds f = {{x, Make<float>(std::vector<float>(6, 1), {1, 3, 2, 1})}};
  Output zero_pads = Ints({0, 0, 0, 0}, {2, 2});
  EXPECT_NE(ErrorOf(f, ops::SpaceToBatchND(s_, x, {2, 2}, zero_pads)).find("not divisible"),
            std::string::npos);
  EXPECT_NE(ErrorOf(f, ops::SpaceToBatchND(s_, x, {0, 1}, zero_pads)).find("positive"),
            std::string::npos);
  EXPECT_NE(ErrorOf(f, ops::SpaceToBatchND(s_, x, {1, 1}, Ints({0, -1, 0, 0}, {2, 2})))
                .find("non-negative"),
            std::string::npos);
  EXPECT_NE(ErrorOf(f, ops::BatchToSpaceND(s_, x, {2, 1}, zero_pads)).find("not divisible"),
            std::string::npos);
  EXPECT_NE(ErrorOf(f, ops::BatchToSpaceND(s_, x, {1, 1}, Ints({2, 2, 0, 0}, {2, 2})))
                .find("exceed"),
            std::string::npos);
  Output b = Placeholder(s_, DT_INT32);
  EXPECT_NE(ErrorOf({f[0], {b, Make<int32_t>({1, 1, 1, 1}, {4})}},
                    ops::SpaceToBatchND(s_, x, b, Ints({0, 0, 0, 0, 0, 0, 0, 0}, {4, 2})))
                .find("input rank must be >= 1 + 4"),
            std::string::npos);
}

// tf.reverse_sequence's documented example (seq_axis 1, batch_axis 0).
TEST_F(ArrayRearrangeTest, ReverseSequence) {
  Output x = Placeholder(s_, DT_INT32);
  Feeds f = {{x, Make<int32_t>({1, 2, 3, 4, 5, 0, 0, 0,  //
                                1, 2, 3, 4, 0, 0, 0, 0,  //
                                1, 2, 3, 4, 5, 6, 7, 8,  //
                                1, 2, 3, 4, 5, 6, 7, 8},
                               {4, 8})}};
  Output lengths = ops::Const(s_, Make<int64_t>({7, 2, 3, 5}, {4}));
  ExpectTensor<int32_t>(Eval(s_, f, ops::ReverseSequence(s_, x, lengths, 1)), {4, 8},
                        {0, 0, 5, 4, 3, 2, 1, 0,  //
                         2, 1, 3, 4, 0, 0, 0, 0,  //
                         3, 2, 1, 4, 5, 6, 7, 8,  //
                         5, 4, 3, 2, 1, 6, 7, 8});
  // batch_dim after seq_dim: the transposed problem gives the transposed answer.
  Output xt = ops::Transpose(s_, x, {1, 0});
  Output rt = ops::ReverseSequence(s_, xt, lengths, 0, {.batch_dim = 1});
  EXPECT_EQ(Eval(s_, f, ops::Transpose(s_, rt, {1, 0})).DebugString(),
            Eval(s_, f, ops::ReverseSequence(s_, x, lengths, 1)).DebugString());
  Output l32 = Placeholder(s_, DT_INT32);
  Output r = ops::ReverseSequence(s_, x, l32, 1);
  EXPECT_NE(ErrorOf({f[0], {l32, Make<int32_t>({1, 2, 9, 1}, {4})}}, r).find("seq_lengths[2] = 9"),
            std::string::npos);
  EXPECT_NE(ErrorOf({f[0], {l32, Make<int32_t>({1, 2}, {2})}}, r).find("2 entries"),
            std::string::npos);
  ops::ReverseSequence(s_, x, lengths, 0);
  EXPECT_FALSE(s_.ok());  // seq_dim == batch_dim
}

// tf.parallel_stack's documented example: rows [1, 4], [2, 5], [3, 6].
TEST_F(ArrayRearrangeTest, ParallelConcat) {
  std::vector<Output> rows;
  Feeds f;
  for (int i = 0; i < 3; ++i) {
    rows.push_back(Placeholder(s_, DT_INT32));
    f.push_back({rows.back(), Make<int32_t>({i + 1, i + 4}, {1, 2})});
  }
  Output p = ops::ParallelConcat(s_, rows, TensorShape({3, 2}));
  EXPECT_EQ(p.node->output_shape(0), TensorShape({3, 2}));
  ExpectTensor<int32_t>(Eval(s_, f, p), {3, 2}, {1, 4, 2, 5, 3, 6});
  f[1].second = Make<int32_t>({1, 2, 3}, {1, 3});
  EXPECT_NE(ErrorOf(f, p).find("values[1] has shape [1,3]"), std::string::npos);
  ops::ParallelConcat(s_, rows, TensorShape({3, -1}));
  EXPECT_FALSE(s_.ok());  // the shape attr must be fully defined
}

TEST_F(ArrayRearrangeTest, Gradients) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Feeds m = {{x, testing_util::Doubles(TensorShape({3, 4}), 7)}};
  Output pads = Ints({1, 2, 2, 3}, {2, 2});
  EXPECT_LT(GradError(s_, m, ops::Square(s_, ops::MirrorPad(s_, x, pads, "SYMMETRIC"))), 1e-6);
  EXPECT_LT(GradError(s_, m, ops::Square(s_, ops::MirrorPad(s_, x, Ints({2, 1, 3, 0}, {2, 2}),
                                                            "REFLECT"))),
            1e-6);
  EXPECT_LT(GradError(s_, m, ops::MirrorPadGrad(s_, ops::Square(s_, x), Ints({1, 0, 1, 1}, {2, 2}),
                                                "REFLECT")),
            1e-6);
  Output img = Placeholder(s_, DT_DOUBLE);
  Feeds im = {{img, testing_util::Doubles(TensorShape({2, 2, 3, 2}), 11)}};
  Output blocks = ops::SpaceToBatchND(s_, img, {2, 2}, Ints({0, 2, 1, 0}, {2, 2}));
  EXPECT_LT(GradError(s_, im, ops::Square(s_, blocks)), 1e-6);
  EXPECT_LT(GradError(s_, im, ops::Square(s_, ops::BatchToSpaceND(s_, img, {2, 1},
                                                                  Ints({1, 2, 0, 1}, {2, 2})))),
            1e-6);
  Output lengths = ops::Const(s_, Make<int32_t>({3, 0, 4}, {3}));
  EXPECT_LT(GradError(s_, m, ops::Square(s_, ops::ReverseSequence(s_, x, lengths, 1))), 1e-6);
  Output a = Placeholder(s_, DT_DOUBLE);
  Output b = Placeholder(s_, DT_DOUBLE);
  Feeds ab = {{a, Make<double>({0.5, -1}, {1, 2})}, {b, Make<double>({2, 0.25}, {1, 2})}};
  Output stacked = ops::ParallelConcat(s_, {ops::Square(s_, a), b}, TensorShape({2, 2}));
  EXPECT_LT(GradError(s_, ab, ops::Square(s_, stacked)), 1e-6);
}

}  // namespace
}  // namespace sluice
