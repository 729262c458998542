// Bucketize, Unique, ListDiff, DynamicStitch, ParallelDynamicStitch,
// DynamicPartition, GatherNd, ScatterNd, TopKV2 and InTopKV2: the examples
// of TensorFlow's API documentation for each (tf.bucketize / Bucketize op
// doc, tf.unique, tf.setdiff1d, tf.dynamic_stitch, tf.dynamic_partition,
// tf.gather_nd, tf.scatter_nd) and the cases of TensorFlow's
// topk_op_test.py and in_topk_op_test.py, edge cases (empty, rank 0,
// integer types), bad inputs, and gradients by central differences.
#include "ops/array/index_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/gradient_checker.h"
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

class IndexOpsTest : public ::testing::Test {
 protected:
  std::string ErrorOf(const Feeds& feeds, const Output& y) {
    absl::Status s = TryEval(s_, feeds, y).status();
    EXPECT_FALSE(s.ok());
    return std::string(s.message());
  }
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

// The Bucketize op's documented example: boundaries [0, 10, 100].
TEST_F(IndexOpsTest, Bucketize) {
  Output x = Placeholder(s_, DT_INT32);
  Output b = ops::Bucketize(s_, x, {0, 10, 100});
  ExpectTensor<int32_t>(Eval(s_, {{x, Make<int32_t>({-5, 10000, 150, 10, 5, 100}, {3, 2})}}, b),
                        {3, 2}, {0, 3, 3, 2, 1, 3});
  Output f = Placeholder(s_, DT_DOUBLE);
  ExpectTensor<int32_t>(Eval(s_, {{f, Make<double>({-0.5, 0, 0.25, 1}, {4})}},
                             ops::Bucketize(s_, f, {0, 0.5})),
                        {4}, {0, 1, 1, 2});
  ExpectTensor<int32_t>(Eval(s_, {{f, Make<double>({3}, {})}}, ops::Bucketize(s_, f, {})), {}, {0});
  ExpectTensor<int32_t>(Eval(s_, {{f, Make<double>({}, {0, 2})}}, ops::Bucketize(s_, f, {1})),
                        {0, 2}, {});
  EXPECT_NE(ErrorOf({{f, Make<double>({1}, {1})}}, ops::Bucketize(s_, f, {2, 1})).find("sorted"),
            std::string::npos);
}

// tf.unique's documented example.
TEST_F(IndexOpsTest, Unique) {
  Output x = Placeholder(s_, DT_INT32);
  ops::UniqueOutputs u = ops::Unique(s_, x);
  Feeds f = {{x, Make<int32_t>({1, 1, 2, 4, 4, 4, 7, 8, 8}, {9})}};
  ExpectTensor<int32_t>(Eval(s_, f, u.y), {5}, {1, 2, 4, 7, 8});
  ExpectTensor<int32_t>(Eval(s_, f, u.idx), {9}, {0, 0, 1, 2, 2, 2, 3, 4, 4});
  Output d = Placeholder(s_, DT_DOUBLE);
  ops::UniqueOutputs u64 = ops::Unique(s_, d, DT_INT64);
  Feeds fd = {{d, Make<double>({2.5, -1, 2.5, 0}, {4})}};
  ExpectTensor<double>(Eval(s_, fd, u64.y), {3}, {2.5, -1, 0});
  ExpectTensor<int64_t>(Eval(s_, fd, u64.idx), {4}, {0, 1, 0, 2});
  ExpectTensor<double>(Eval(s_, {{d, Make<double>({}, {0})}}, u64.y), {0}, {});
  EXPECT_NE(ErrorOf({{x, Make<int32_t>({1, 2}, {1, 2})}}, u.y).find("vector"), std::string::npos);
  ops::Unique(s_, Placeholder(s_, DT_FLOAT, TensorShape({2, 2})));
  EXPECT_FALSE(s_.ok());  // rank 2 is rejected while building
}

// tf.setdiff1d's documented example.
TEST_F(IndexOpsTest, ListDiff) {
  Output x = Placeholder(s_, DT_INT64);
  Output y = Placeholder(s_, DT_INT64);
  ops::ListDiffOutputs d = ops::ListDiff(s_, x, y);
  Feeds f = {{x, Make<int64_t>({1, 2, 3, 4, 5, 6}, {6})}, {y, Make<int64_t>({1, 3, 5}, {3})}};
  ExpectTensor<int64_t>(Eval(s_, f, d.out), {3}, {2, 4, 6});
  ExpectTensor<int32_t>(Eval(s_, f, d.idx), {3}, {1, 3, 5});
  // Repeats in x stay; everything removed leaves empty outputs.
  Feeds g = {{x, Make<int64_t>({7, 7, 1}, {3})}, {y, Make<int64_t>({1}, {1})}};
  ExpectTensor<int64_t>(Eval(s_, g, d.out), {2}, {7, 7});
  Feeds all = {{x, Make<int64_t>({1, 1}, {2})}, {y, Make<int64_t>({1}, {1})}};
  ExpectTensor<int32_t>(Eval(s_, all, d.idx), {0}, {});
  Feeds bad = {{x, Make<int64_t>({1}, {})}, {y, Make<int64_t>({1}, {1})}};
  EXPECT_NE(ErrorOf(bad, d.out).find("vector"), std::string::npos);
}

// tf.dynamic_stitch's documented example.
TEST_F(IndexOpsTest, DynamicStitch) {
  for (const bool parallel : {false, true}) {
    Output i0 = ops::Const(s_, Make<int32_t>({6}, {}));
    Output i1 = ops::Const(s_, Make<int32_t>({4, 1}, {2}));
    Output i2 = ops::Const(s_, Make<int32_t>({5, 2, 0, 3}, {2, 2}));
    Output d0 = Placeholder(s_, DT_FLOAT, TensorShape({2}));
    Output d1 = Placeholder(s_, DT_FLOAT, TensorShape({2, 2}));
    Output d2 = Placeholder(s_, DT_FLOAT, TensorShape({2, 2, 2}));
    Feeds f = {{d0, Make<float>({61, 62}, {2})},
               {d1, Make<float>({41, 42, 11, 12}, {2, 2})},
               {d2, Make<float>({51, 52, 21, 22, 1, 2, 31, 32}, {2, 2, 2})}};
    std::vector<Output> indices = {i0, i1, i2}, data = {d0, d1, d2};
    Output m = parallel ? ops::ParallelDynamicStitch(s_, indices, data)
                        : ops::DynamicStitch(s_, indices, data);
    EXPECT_EQ(m.node->output_shape(0), TensorShape({7, 2}));  // constant indices: known rows
    ExpectTensor<float>(Eval(s_, f, m), {7, 2},
                        {1, 2, 11, 12, 21, 22, 31, 32, 41, 42, 51, 52, 61, 62});
  }
  // Repeated indices: the later input wins; unnamed rows are zero.
  Output a = Placeholder(s_, DT_INT32);
  Output b = Placeholder(s_, DT_INT32);
  Output va = Placeholder(s_, DT_INT64);
  Output vb = Placeholder(s_, DT_INT64);
  Output m = ops::DynamicStitch(s_, std::vector<Output>{a, b}, std::vector<Output>{va, vb});
  Feeds f = {{a, Make<int32_t>({0, 3}, {2})}, {b, Make<int32_t>({3}, {1})},
             {va, Make<int64_t>({10, 30}, {2})}, {vb, Make<int64_t>({33}, {1})}};
  ExpectTensor<int64_t>(Eval(s_, f, m), {4}, {10, 0, 0, 33});
  Feeds empty = {{a, Make<int32_t>({}, {0})}, {b, Make<int32_t>({}, {0})},
                 {va, Make<int64_t>({}, {0})}, {vb, Make<int64_t>({}, {0})}};
  ExpectTensor<int64_t>(Eval(s_, empty, m), {0}, {});
  Feeds negative = {{a, Make<int32_t>({-1, 0}, {2})}, {b, Make<int32_t>({}, {0})},
                    {va, Make<int64_t>({1, 2}, {2})}, {vb, Make<int64_t>({}, {0})}};
  EXPECT_NE(ErrorOf(negative, m).find("negative"), std::string::npos);
  Feeds mismatched = {{a, Make<int32_t>({0, 1}, {2})}, {b, Make<int32_t>({}, {0})},
                      {va, Make<int64_t>({1, 2, 3}, {3})}, {vb, Make<int64_t>({}, {0})}};
  EXPECT_NE(ErrorOf(mismatched, m).find("data[0].shape"), std::string::npos);
}

// tf.dynamic_partition's documented examples.
TEST_F(IndexOpsTest, DynamicPartition) {
  Output data = Placeholder(s_, DT_INT32);
  Output p = Placeholder(s_, DT_INT32);
  std::vector<Output> parts = ops::DynamicPartition(s_, data, p, 2);
  Feeds f = {{data, Make<int32_t>({10, 20, 30, 40, 50}, {5})}, {p, Make<int32_t>({0, 0, 1, 1, 0}, {5})}};
  ExpectTensor<int32_t>(Eval(s_, f, parts[0]), {3}, {10, 20, 50});
  ExpectTensor<int32_t>(Eval(s_, f, parts[1]), {2}, {30, 40});
  std::vector<Output> four = ops::DynamicPartition(s_, data, p, 4);
  Feeds g = {{data, Make<int32_t>({10, 20, 30, 40, 50, 60}, {3, 2})},
             {p, Make<int32_t>({1, 3, 1}, {3})}};
  ExpectTensor<int32_t>(Eval(s_, g, four[0]), {0, 2}, {});
  ExpectTensor<int32_t>(Eval(s_, g, four[1]), {2, 2}, {10, 20, 50, 60});
  ExpectTensor<int32_t>(Eval(s_, g, four[3]), {1, 2}, {30, 40});
  // Rank-0 partitions: the whole of data is one slice.
  ExpectTensor<int32_t>(Eval(s_, {{data, Make<int32_t>({7, 8}, {2})}, {p, Make<int32_t>({1}, {})}},
                             parts[1]),
                        {1, 2}, {7, 8});
  Feeds out_of_range = {{data, Make<int32_t>({1, 2}, {2})}, {p, Make<int32_t>({0, 2}, {2})}};
  EXPECT_NE(ErrorOf(out_of_range, parts[0]).find("partitions[1] = 2 is not in [0, 2)"),
            std::string::npos);
  Feeds bad_shape = {{data, Make<int32_t>({1, 2}, {2})}, {p, Make<int32_t>({0, 1, 1}, {3})}};
  EXPECT_NE(ErrorOf(bad_shape, parts[0]).find("must start with"), std::string::npos);
}

// tf.gather_nd's documented examples.
TEST_F(IndexOpsTest, GatherNd) {
  Output params = Placeholder(s_, DT_INT32);
  Feeds f = {{params, Make<int32_t>({1, 2, 3, 4}, {2, 2})}};
  ExpectTensor<int32_t>(
      Eval(s_, f, ops::GatherNd(s_, params, ops::Const(s_, Make<int32_t>({0, 0, 1, 1}, {2, 2})))),
      {2}, {1, 4});
  ExpectTensor<int32_t>(
      Eval(s_, f, ops::GatherNd(s_, params, ops::Const(s_, Make<int64_t>({1, 0}, {2, 1})))),
      {2, 2}, {3, 4, 1, 2});
  ExpectTensor<int32_t>(
      Eval(s_, f, ops::GatherNd(s_, params, ops::Const(s_, Make<int32_t>({0, 1}, {1, 1, 2})))),
      {1, 1}, {2});
  // Batched slices of a rank-3 tensor; empty indices.
  Output p3 = Placeholder(s_, DT_FLOAT);
  Feeds f3 = {{p3, Make<float>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2})}};
  ExpectTensor<float>(
      Eval(s_, f3, ops::GatherNd(s_, p3, ops::Const(s_, Make<int32_t>({1, 0, 0, 1}, {2, 2})))),
      {2, 2}, {4, 5, 2, 3});
  ExpectTensor<float>(
      Eval(s_, f3, ops::GatherNd(s_, p3, ops::Const(s_, Make<int32_t>({}, {0, 3})))), {0}, {});
  Output bad = ops::GatherNd(s_, params, ops::Const(s_, Make<int32_t>({0, 2}, {1, 2})));
  EXPECT_NE(ErrorOf(f, bad).find("indices[0] = [0, 2] does not index into shape [2,2]"),
            std::string::npos)
      << ErrorOf(f, bad);
  ops::GatherNd(s_, Placeholder(s_, DT_INT32, TensorShape({2, 2})),
                ops::Const(s_, Make<int32_t>({0, 0, 0}, {1, 3})));
  EXPECT_FALSE(s_.ok());  // indices.shape[-1] = 3 > rank 2, seen while building
}

// tf.scatter_nd's documented examples.
TEST_F(IndexOpsTest, ScatterNd) {
  Output updates = Placeholder(s_, DT_INT32);
  Output s = ops::ScatterNd(s_, ops::Const(s_, Make<int32_t>({4, 3, 1, 7}, {4, 1})), updates, {8});
  EXPECT_EQ(s.node->output_shape(0), TensorShape({8}));
  ExpectTensor<int32_t>(Eval(s_, {{updates, Make<int32_t>({9, 10, 11, 12}, {4})}}, s), {8},
                        {0, 11, 0, 10, 9, 0, 0, 12});
  Output slices = Placeholder(s_, DT_DOUBLE);
  std::vector<double> u(32);
  for (int i = 0; i < 32; ++i) u[i] = i < 16 ? 5 + i % 4 : 1 + i % 4;
  Output s3 = ops::ScatterNd(s_, ops::Const(s_, Make<int64_t>({0, 2}, {2, 1})), slices,
                             ops::Const(s_, Make<int64_t>({4, 4, 4}, {3})));
  std::vector<double> expected(64, 0);
  for (int i = 0; i < 16; ++i) expected[i] = u[i], expected[32 + i] = u[16 + i];
  ExpectTensor<double>(Eval(s_, {{slices, Make<double>(u, {2, 4, 4})}}, s3), {4, 4, 4}, expected);
  // Repeated indices add up.
  Output dup = ops::ScatterNd(s_, ops::Const(s_, Make<int32_t>({1, 1, 0}, {3, 1})), updates, {2});
  ExpectTensor<int32_t>(Eval(s_, {{updates, Make<int32_t>({1, 2, 4}, {3})}}, dup), {2}, {4, 3});
  EXPECT_NE(ErrorOf({{updates, Make<int32_t>({1, 2, 3, 4}, {4})}},
                    ops::ScatterNd(s_, ops::Const(s_, Make<int32_t>({4, 3, 1, 8}, {4, 1})), updates,
                                   {8}))
                .find("indices[3] = [8] does not index"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{updates, Make<int32_t>({1, 2, 3}, {3})}}, s).find("updates must have shape"),
            std::string::npos);
}

// scatter_nd_ops_test.py's TensorScatter cases: rows and elements replaced,
// added and subtracted in a copy; the input is left as it was; gradients.
TEST_F(IndexOpsTest, TensorScatterUpdateAddSub) {
  Output t = Placeholder(s_, DT_FLOAT);
  Output i = Placeholder(s_, DT_INT32);
  Output u = Placeholder(s_, DT_FLOAT);
  Feeds rows = {{t, Make<float>({1, 2, 3, 4, 5, 6}, {3, 2})},
                {i, Make<int32_t>({2, 0}, {2, 1})},
                {u, Make<float>({10, 20, 30, 40}, {2, 2})}};
  ExpectTensor<float>(Eval(s_, rows, ops::TensorScatterUpdate(s_, t, i, u)), {3, 2},
                      {30, 40, 3, 4, 10, 20});
  ExpectTensor<float>(Eval(s_, rows, ops::TensorScatterAdd(s_, t, i, u)), {3, 2},
                      {31, 42, 3, 4, 15, 26});
  ExpectTensor<float>(Eval(s_, rows, ops::TensorScatterSub(s_, t, i, u)), {3, 2},
                      {-29, -38, 3, 4, -5, -14});
  ExpectTensor<float>(Eval(s_, rows, t), {3, 2}, {1, 2, 3, 4, 5, 6});
  // Element indices, a repeated one summing in Add; int64 values.
  Output t64 = Placeholder(s_, DT_INT64);
  Output u64 = Placeholder(s_, DT_INT64);
  Feeds elems = {{t64, Make<int64_t>({0, 0, 0, 0}, {2, 2})},
                 {i, Make<int32_t>({0, 1, 1, 0, 0, 1}, {3, 2})},
                 {u64, Make<int64_t>({5, 6, 7}, {3})}};
  ExpectTensor<int64_t>(Eval(s_, elems, ops::TensorScatterAdd(s_, t64, i, u64)), {2, 2},
                        {0, 12, 6, 0});
  EXPECT_NE(ErrorOf({{t, Make<float>({1, 2}, {2})}, {i, Make<int32_t>({2}, {1, 1})},
                     {u, Make<float>({9}, {1})}},
                    ops::TensorScatterUpdate(s_, t, i, u))
                .find("does not index"),
            std::string::npos);
  // Gradients against central differences (double).
  for (int kind = 0; kind < 3; ++kind) {
    Scope g = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(g, DT_DOUBLE);
    Output up = Placeholder(g, DT_DOUBLE);
    Output idx = ops::Const(g, std::vector<int32_t>{2, 0}, TensorShape({2, 1}));
    Output y = kind == 0   ? ops::TensorScatterUpdate(g, x, idx, up)
               : kind == 1 ? ops::TensorScatterAdd(g, x, idx, up)
                           : ops::TensorScatterSub(g, x, idx, up);
    absl::StatusOr<double> err = MaxGradientError(
        g, {x, up},
        {Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})),
         Tensor::FromVector<double>({0.5, -1, 2, 0.25}, TensorShape({2, 2}))},
        y);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-8) << kind;
  }
}

// TensorScatterMax / Min (repeated indices compare with all their
// updates) and ScatterNdNonAliasingAdd, with gradients (ties in Max split
// theirs) against central differences.
TEST_F(IndexOpsTest, TensorScatterMaxMinAndNonAliasingAdd) {
  Output t = Placeholder(s_, DT_FLOAT);
  Output i = Placeholder(s_, DT_INT32);
  Output u = Placeholder(s_, DT_FLOAT);
  Feeds f = {{t, Make<float>({1, 5, 3, 4, 5, 6}, {3, 2})},
             {i, Make<int32_t>({2, 0, 2}, {3, 1})},
             {u, Make<float>({10, 2, 0, 9, 7, 1}, {3, 2})}};
  ExpectTensor<float>(Eval(s_, f, ops::TensorScatterMax(s_, t, i, u)), {3, 2},
                      {1, 9, 3, 4, 10, 6});
  ExpectTensor<float>(Eval(s_, f, ops::TensorScatterMin(s_, t, i, u)), {3, 2},
                      {0, 5, 3, 4, 5, 1});
  ExpectTensor<float>(Eval(s_, f, ops::ScatterNdNonAliasingAdd(s_, t, i, u)), {3, 2},
                      {1, 14, 3, 4, 22, 9});
  for (int kind = 0; kind < 3; ++kind) {
    Scope g = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(g, DT_DOUBLE);
    Output up = Placeholder(g, DT_DOUBLE);
    Output idx = ops::Const(g, std::vector<int32_t>{2, 0}, TensorShape({2, 1}));
    Output y = kind == 0   ? ops::TensorScatterMax(g, x, idx, up)
               : kind == 1 ? ops::TensorScatterMin(g, x, idx, up)
                           : ops::ScatterNdNonAliasingAdd(g, x, idx, up);
    // No ties between x and the updates: the differences stay on one side.
    absl::StatusOr<double> err = MaxGradientError(
        g, {x, up},
        {Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})),
         Tensor::FromVector<double>({0.5, 7, 2, 0.25}, TensorShape({2, 2}))},
        y);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-8) << kind;
  }
  // A tie: the gradient splits evenly between the element and its update.
  Scope g = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(g, Make<double>({3, 1}, {2}));
  Output up = ops::Const(g, Make<double>({3}, {1}));
  Output y = ops::TensorScatterMax(g, x, ops::Const(g, Make<int32_t>({0}, {1, 1})), up);
  absl::StatusOr<std::vector<Output>> dy = AddGradients(g, {y}, {x, up});
  ASSERT_TRUE(dy.ok()) << dy.status();
  ExpectTensor<double>(Eval(g, {}, (*dy)[0]), {2}, {0.5, 1});
  ExpectTensor<double>(Eval(g, {}, (*dy)[1]), {1}, {0.5});
}

// topk_op_test.py: ties go to the lower index; k = 0; k past the columns.
TEST_F(IndexOpsTest, TopKV2) {
  Output x = Placeholder(s_, DT_FLOAT);
  Feeds f = {{x, Make<float>({0.1f, 0.3f, 0.2f, 0.4f, 0.1f, 0.3f, 0.4f, 0.2f}, {2, 4})}};
  ops::TopKOutputs top = ops::TopKV2(s_, x, 2);
  ExpectTensor<float>(Eval(s_, f, top.values), {2, 2}, {0.4f, 0.3f, 0.4f, 0.3f});
  ExpectTensor<int32_t>(Eval(s_, f, top.indices), {2, 2}, {3, 1, 2, 1});
  Output ties = Placeholder(s_, DT_INT64);
  Feeds t = {{ties, Make<int64_t>({1, 5, 5, 1, 5}, {5})}};
  ops::TopKOutputs tk = ops::TopKV2(s_, ties, 4, /*sorted=*/false);
  ExpectTensor<int64_t>(Eval(s_, t, tk.values), {4}, {5, 5, 5, 1});
  ExpectTensor<int32_t>(Eval(s_, t, tk.indices), {4}, {1, 2, 4, 0});
  ExpectTensor<float>(Eval(s_, f, ops::TopKV2(s_, x, 0).values), {2, 0}, {});
  Output k = Placeholder(s_, DT_INT32);
  ops::TopKOutputs dyn = ops::TopKV2(s_, x, k);
  EXPECT_NE(ErrorOf({f[0], {k, Make<int32_t>({5}, {})}}, dyn.values).find("at least k = 5"),
            std::string::npos);
  EXPECT_NE(ErrorOf({f[0], {k, Make<int32_t>({-1}, {})}}, dyn.values).find("< 0"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{x, Make<float>({1}, {})}, {k, Make<int32_t>({1}, {})}}, dyn.values)
                .find("at least 1-D"),
            std::string::npos);
  // TensorFlow 2.16's Tk and index_type: an int64 k, int64 indices.
  std::vector<Output> wide = s_.Op("TopKV2")
                                 .Input(x)
                                 .Input(ops::Const(s_, int64_t{2}))
                                 .Attr("index_type", DT_INT64)
                                 .FinalizeAll();
  ASSERT_EQ(wide.size(), 2u);
  ExpectTensor<float>(Eval(s_, f, wide[0]), {2, 2}, {0.4f, 0.3f, 0.4f, 0.3f});
  ExpectTensor<int64_t>(Eval(s_, f, wide[1]), {2, 2}, {3, 1, 2, 1});
}

// in_topk_op_test.py: ties count for the target; non-finite predictions
// and out-of-range targets give false.
TEST_F(IndexOpsTest, InTopKV2) {
  Output p = Placeholder(s_, DT_FLOAT);
  Output t = Placeholder(s_, DT_INT32);
  Output in1 = ops::InTopKV2(s_, p, t, 1);
  Output in2 = ops::InTopKV2(s_, p, t, 2);
  Feeds f = {{p, Make<float>({0.1f, 0.3f, 0.2f, 0.4f, 0.1f, 0.2f, 0.3f, 0.4f}, {2, 4})},
             {t, Make<int32_t>({3, 1}, {2})}};
  ExpectTensor<bool>(Eval(s_, f, in1), {2}, {true, false});
  Feeds tie = {{p, Make<float>({0.1f, 0.3f, 0.2f, 0.2f, 0.1f, 0.3f, 0.2f, 0.2f}, {2, 4})},
               {t, Make<int32_t>({2, 3}, {2})}};
  ExpectTensor<bool>(Eval(s_, tie, in2), {2}, {true, true});
  Feeds bad = {{p, Make<float>({0.1f, NAN, 0.2f, 0.4f, 0.1f, 0.2f, 0.3f, INFINITY}, {2, 4})},
               {t, Make<int32_t>({0, 2}, {2})}};
  ExpectTensor<bool>(Eval(s_, bad, in2), {2}, {false, false});
  Feeds range = {{p, f[0].second}, {t, Make<int32_t>({0, 80000}, {2})}};
  ExpectTensor<bool>(Eval(s_, range, in2), {2}, {false, false});
  Output t64 = Placeholder(s_, DT_INT64);
  ExpectTensor<bool>(Eval(s_, {f[0], {t64, Make<int64_t>({3, 3}, {2})}}, ops::InTopKV2(s_, p, t64, 1)),
                     {2}, {true, true});
  EXPECT_NE(ErrorOf({f[0], {t, Make<int32_t>({0}, {1})}}, in1).find("batch size"),
            std::string::npos);
}

TEST_F(IndexOpsTest, Gradients) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Feeds m = {{x, Make<double>({0.5, -1.5, 2.0, 0.1, 0.3, -0.7}, {3, 2})}};
  // DynamicStitch / ParallelDynamicStitch with a permutation of rows.
  Output a = Placeholder(s_, DT_DOUBLE);
  Feeds two = {m[0], {a, Make<double>({0.9, -0.2}, {1, 2})}};
  std::vector<Output> idx = {ops::Const(s_, Make<int32_t>({3, 0, 2}, {3})),
                             ops::Const(s_, Make<int32_t>({1}, {1}))};
  std::vector<Output> vals = {x, ops::Square(s_, a)};
  EXPECT_LT(GradError(s_, two, ops::DynamicStitch(s_, idx, vals)), 1e-6);
  EXPECT_LT(GradError(s_, two, ops::ParallelDynamicStitch(s_, idx, vals)), 1e-6);
  // DynamicPartition, with one partition unused downstream.
  std::vector<Output> parts =
      ops::DynamicPartition(s_, x, ops::Const(s_, Make<int32_t>({1, 0, 1}, {3})), 3);
  EXPECT_LT(GradError(s_, m, ops::Square(s_, parts[1])), 1e-6);
  EXPECT_LT(GradError(s_, m, ops::ConcatV2(s_, {parts[0], ops::Square(s_, parts[1])}, 0)), 1e-6);
  // GatherNd with a repeated index, ScatterNd.
  Output g = ops::GatherNd(s_, x, ops::Const(s_, Make<int32_t>({2, 1, 0, 0, 2, 1}, {3, 2})));
  EXPECT_LT(GradError(s_, m, ops::Square(s_, g)), 1e-6);
  EXPECT_LT(GradError(s_, m, ops::GatherNd(s_, x, ops::Const(s_, Make<int64_t>({2, 0}, {2, 1})))),
            1e-6);
  Output sc = ops::ScatterNd(s_, ops::Const(s_, Make<int32_t>({3, 1, 3}, {3, 1})), x, {5, 2});
  EXPECT_LT(GradError(s_, m, ops::Square(s_, sc)), 1e-6);
  // TopKV2 of distinct values, over the rows of a matrix and a 3-D tensor.
  EXPECT_LT(GradError(s_, m, ops::Square(s_, ops::TopKV2(s_, x, 1).values)), 1e-6);
  Output cube = Placeholder(s_, DT_DOUBLE);
  Feeds c = {{cube, testing_util::Doubles(TensorShape({2, 2, 5}), 3)}};
  EXPECT_LT(GradError(s_, c, ops::Square(s_, ops::TopKV2(s_, cube, 3).values)), 1e-6);
  // Unique of distinct values (a permutation-free identity) and squared.
  Output v = Placeholder(s_, DT_DOUBLE);
  EXPECT_LT(GradError(s_, {{v, Make<double>({0.3, -1.0, 2.0}, {3})}},
                      ops::Square(s_, ops::Unique(s_, v).y)),
            1e-6);
}

}  // namespace
}  // namespace sluice
