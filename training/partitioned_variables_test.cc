// Partitioners, part shapes, slice specs and embedding lookups over parts,
// against what TensorFlow 2.21's tf.compat.v1 gives for the same calls
// (fixed_size/min_max_variable/variable_axis_size_partitioner, get_variable
// with a partitioner, embedding_lookup with "mod" and "div").
#include "training/partitioned_variables.h"

#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/state/state_ops.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/session.h"
#include "session/direct_session.h"
#include "training/replica_device_setter.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::ExpectTensor;

std::vector<int64_t> Parts(const Partitioner& p, TensorShape shape, DataType dtype = DT_FLOAT) {
  absl::StatusOr<std::vector<int64_t>> r = p(shape, dtype);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<int64_t>();
}

TEST(PartitionersTest, AreTensorFlows) {
  EXPECT_THAT(Parts(FixedSizePartitioner(3), TensorShape({10, 4})), ElementsAre(3, 1));
  EXPECT_THAT(Parts(FixedSizePartitioner(20), TensorShape({10, 4})), ElementsAre(10, 1));
  EXPECT_THAT(Parts(FixedSizePartitioner(2, 1), TensorShape({10, 4})), ElementsAre(1, 2));
  EXPECT_THAT(Parts(MinMaxVariablePartitioner(4, 0, 1 << 10), TensorShape({1000, 32})),
              ElementsAre(4, 1));
  EXPECT_THAT(Parts(MinMaxVariablePartitioner(100, 0, 256 << 10), TensorShape({4194304, 32})),
              ElementsAre(100, 1));
  EXPECT_THAT(Parts(MinMaxVariablePartitioner(3), TensorShape({10, 4})), ElementsAre(1, 1));
  EXPECT_THAT(Parts(MinMaxVariablePartitioner(8, 0, 64), TensorShape({100}), DT_STRING),
              ElementsAre(8));
  EXPECT_THAT(Parts(VariableAxisSizePartitioner(1 << 10), TensorShape({1000, 32})),
              ElementsAre(125, 1));
  EXPECT_THAT(Parts(VariableAxisSizePartitioner(1 << 20, 0, 16, 5), TensorShape({1 << 20, 4})),
              ElementsAre(5, 1));
  EXPECT_THAT(Parts(VariableAxisSizePartitioner(100), TensorShape({10, 4}), DT_DOUBLE),
              ElementsAre(4, 1));
  EXPECT_THAT(Parts(VariableAxisSizePartitioner(1), TensorShape({7, 3})), ElementsAre(7, 1));
  EXPECT_FALSE(FixedSizePartitioner(2, 3)(TensorShape({4, 4}), DT_FLOAT).ok());
  EXPECT_FALSE(FixedSizePartitioner(2)(TensorShape({-1, 4}), DT_FLOAT).ok());
}

// The rows of a [10, 2] table: row r is (2r, 2r + 1).
PartInitializer Rows() {
  return [](const Scope& s, const TensorShape& shape, const std::vector<int64_t>& offset) {
    std::vector<float> v;
    for (int64_t r = 0; r < shape.dim(0); ++r) {
      for (int64_t c = 0; c < shape.dim(1); ++c) v.push_back(static_cast<float>(2 * (offset[0] + r) + c));
    }
    return ops::Const(s, Tensor::FromVector<float>(v, shape));
  };
}

TEST(PartitionedVariableTest, PartsAndLookupsAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<PartitionedVariable> w = CreatePartitionedVariable(
      s, "emb/w", TensorShape({10, 2}), DT_FLOAT, FixedSizePartitioner(3), Rows());
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->parts.size(), 3u);
  EXPECT_EQ(w->parts[0].var.node->name(), "emb/w/part_0");
  EXPECT_EQ(w->parts[0].shape, TensorShape({4, 2}));
  EXPECT_EQ(w->parts[1].shape, TensorShape({3, 2}));
  EXPECT_EQ(w->parts[0].slice_spec, "10 2 0,4:0,2");
  EXPECT_EQ(w->parts[1].slice_spec, "10 2 4,3:0,2");
  EXPECT_EQ(w->parts[2].slice_spec, "10 2 7,3:0,2");
  Output ids = ops::Const(s, Tensor::FromVector<int64_t>({0, 9, 4, 3, 7, 7}, TensorShape({3, 2})));
  absl::StatusOr<Output> mod = EmbeddingLookup(s, *w, ids, "mod");
  absl::StatusOr<Output> div = EmbeddingLookup(s, *w, ids, "div");
  ASSERT_TRUE(mod.ok() && div.ok());
  Node* init = ops::GlobalVariablesInitializer(s);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init}).ok());
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {*mod, *div}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  // TensorFlow: mod [[0,1],[6,7]], [[10,11],[2,3]], [[12,13],[12,13]];
  //             div [[0,1],[18,19]], [[8,9],[6,7]], [[14,15],[14,15]].
  ExpectTensor<float>((*out)[0], TensorShape({3, 2, 2}), {0, 1, 6, 7, 10, 11, 2, 3, 12, 13, 12, 13});
  ExpectTensor<float>((*out)[1], TensorShape({3, 2, 2}), {0, 1, 18, 19, 8, 9, 6, 7, 14, 15, 14, 15});

  Scope bad = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<PartitionedVariable> two = CreatePartitionedVariable(
      bad, "t", TensorShape({4, 2}), DT_FLOAT, FixedSizePartitioner(2), ZerosInitializer());
  ASSERT_TRUE(two.ok());
  absl::StatusOr<Output> odd = EmbeddingLookup(bad, *two, ops::Const(bad, {1}), "modulo");
  EXPECT_THAT(std::string(odd.status().message()), HasSubstr("partition_strategy"));
}

TEST(PartitionedVariableTest, AxisOnePartsHaveTheirOwnSliceSpecs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<PartitionedVariable> w = CreatePartitionedVariable(
      s, "emb2/w", TensorShape({3, 5}), DT_FLOAT, FixedSizePartitioner(2, 1), ZerosInitializer());
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->parts.size(), 2u);
  EXPECT_EQ(w->parts[0].slice_spec, "3 5 0,3:0,3");
  EXPECT_EQ(w->parts[1].slice_spec, "3 5 0,3:3,2");
}

// embedding_lookup_sparse over the same parts: every combiner, both
// strategies, with and without weights (TensorFlow's numbers).
TEST(PartitionedVariableTest, EmbeddingLookupSparseIsTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<PartitionedVariable> w = CreatePartitionedVariable(
      s, "emb/w", TensorShape({10, 2}), DT_FLOAT, FixedSizePartitioner(3), Rows());
  ASSERT_TRUE(w.ok()) << w.status();
  SparseIds ids{ops::Const(s, Tensor::FromVector<int64_t>({0, 0, 0, 1, 1, 0, 2, 0, 2, 1, 2, 2},
                                                          TensorShape({6, 2}))),
                ops::Const(s, std::vector<int64_t>{3, 7, 1, 9, 9, 5}),
                ops::Const(s, std::vector<int64_t>{4, 3})};
  Output weights = ops::Const(s, {1.0f, 2.0f, 0.5f, 1.0f, 3.0f, 1.0f});
  std::vector<Output> outs;
  for (const char* strategy : {"mod", "div"}) {
    for (const char* combiner : {"sum", "mean", "sqrtn"}) {
      absl::StatusOr<Output> o = EmbeddingLookupSparse(s, *w, ids, Output(), combiner, strategy);
      ASSERT_TRUE(o.ok()) << o.status();
      outs.push_back(*o);
    }
  }
  for (const char* combiner : {"mean", "sqrtn"}) {
    absl::StatusOr<Output> o = EmbeddingLookupSparse(s, *w, ids, weights, combiner, "mod");
    ASSERT_TRUE(o.ok()) << o.status();
    outs.push_back(*o);
  }
  Node* init = ops::GlobalVariablesInitializer(s);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {init}).ok());
  absl::StatusOr<std::vector<Tensor>> got = (*sess)->Run({}, outs, {});
  ASSERT_TRUE(got.ok()) << got.status();
  const std::vector<std::vector<float>> want = {
      {14, 16, 8, 9, 28, 31},
      {7, 8, 8, 9, 9.33333f, 10.33333f},
      {9.8995f, 11.31371f, 8, 9, 16.16581f, 17.89786f},
      {20, 22, 2, 3, 46, 49},
      {10, 11, 2, 3, 15.33333f, 16.33333f},
      {14.14214f, 15.55635f, 2, 3, 26.55811f, 28.29016f},
      {8.66667f, 9.66667f, 8, 9, 8, 9},
      {11.62755f, 12.9692f, 8, 9, 12.06045f, 13.56801f},
  };
  for (size_t i = 0; i < want.size(); ++i) {
    ExpectTensor<float>((*got)[i], TensorShape({3, 2}), want[i], 1e-4);
  }
}

// The replica device setter spreads the parts over the ps tasks: round
// robin, or by bytes (three equal parts: the same placement, ties going to
// the lower task).
TEST(PartitionedVariableTest, PartsSpreadOverTheParameterServers) {
  for (bool greedy : {false, true}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    absl::StatusOr<PartitionedVariable> w = CreatePartitionedVariable(
        s, "emb/w", TensorShape({9, 4}), DT_FLOAT, FixedSizePartitioner(3), ZerosInitializer());
    ASSERT_TRUE(w.ok()) << w.status();
    ReplicaDeviceSetterOptions opts;
    opts.num_ps_tasks = 2;
    if (greedy) opts.strategy = ReplicaDeviceSetterOptions::Strategy::kGreedyByBytes;
    absl::StatusOr<std::map<std::string, std::string>> where =
        ApplyReplicaDeviceSetter(s.graph(), opts);
    ASSERT_TRUE(where.ok()) << where.status();
    EXPECT_EQ(where->at("emb/w/part_0"), "/job:ps/task:0");
    EXPECT_EQ(where->at("emb/w/part_1"), "/job:ps/task:1");
    EXPECT_EQ(where->at("emb/w/part_2"), "/job:ps/task:0");
  }
}

}  // namespace
}  // namespace sluice
