// Sparse gradients end to end: a gather's gradient as IndexedSlices
// (graph/indexed_slices.h) through aggregation, across devices, and into
// each optimizer's sparse update, against the dense computation.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_ops.h"
#include "ops/training/optimizers.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

constexpr int kRows = 50;
constexpr int kDim = 3;
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

std::vector<float> TableValues() {
  std::vector<float> v(kRows * kDim);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.01f * static_cast<float>(i % 37) - 0.1f;
  return v;
}

::tensorflow::TensorProto TableProto() {
  ::tensorflow::TensorProto p;
  p.set_dtype(DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(kRows);
  p.mutable_tensor_shape()->add_dim()->set_size(kDim);
  for (float f : TableValues()) p.add_float_val(f);
  return p;
}

// loss = sum((gather(table, ids) * weights)^2) / 2 over ids with a repeat.
struct Embedding {
  explicit Embedding(const std::string& table_device = "") : s(Scope::NewRootScope(BuiltinOps())) {
    table =
        ops::VariableWithInit(s.WithOpName("table").WithDevice(table_device), Input(TableProto()));
    ids = ops::Const(s.WithOpName("ids"), {int32_t{4}, int32_t{17}, int32_t{4}, int32_t{42}});
    rows = ops::GatherV2(s.WithOpName("rows"), table.var, ids, int32_t{0});
    Output scaled = ops::Mul(s, rows, ops::Const(s, {1.0f, 2.0f, 3.0f}));
    loss = ops::Mul(s.WithOpName("loss"), ops::Sum(s, ops::Square(s, scaled), {0, 1}), 0.5f);
  }
  Scope s;
  ops::VariableAndInit table;
  Output ids, rows, loss;
};

std::unique_ptr<Session> MakeSession(const Scope& s, int virtual_cpus = 0) {
  EXPECT_TRUE(s.ok()) << s.status();
  SessionConfig config = BuiltinSessionConfig();
  config.devices.num_virtual_cpus = virtual_cpus;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(config, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

std::vector<float> Floats(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.NumElements());
}

// d loss / d table by hand: row r gets sum over its occurrences of
// table[r] * weight^2.
std::vector<float> ExpectedDenseGradient() {
  const std::vector<float> table = TableValues();
  std::vector<float> g(kRows * kDim, 0.0f);
  const float w2[kDim] = {1, 4, 9};
  for (int id : {4, 17, 4, 42}) {
    for (int k = 0; k < kDim; ++k) g[id * kDim + k] += table[id * kDim + k] * w2[k];
  }
  return g;
}

TEST(SparseGradientsTest, AGathersGradientIsTheRowsItRead) {
  Embedding e;
  absl::StatusOr<std::vector<Gradient>> g = AddGradientsWithSlices(e.s, {e.loss}, {e.table.var});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE((*g)[0].sparse());
  const IndexedSlices& slices = (*g)[0].slices;
  Node* init = ops::GlobalVariablesInitializer(e.s);
  std::unique_ptr<Session> sess = MakeSession(e.s);
  ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
  absl::StatusOr<std::vector<Tensor>> out =
      sess->Run({}, {slices.values, slices.indices, slices.dense_shape}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({4, kDim}));  // the rows read, not the table
  EXPECT_EQ(Floats((*out)[0]).size(), 4u * kDim);
  const int32_t* idx = (*out)[1].data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(idx, idx + 4), (std::vector<int32_t>{4, 17, 4, 42}));
  const int64_t* shape = (*out)[2].data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(shape, shape + 2), (std::vector<int64_t>{kRows, kDim}));
  // Summed into a table (repeats added) it is the dense gradient.
  const std::vector<float> want = ExpectedDenseGradient();
  std::vector<float> dense(kRows * kDim, 0.0f);
  const std::vector<float> values = Floats((*out)[0]);
  for (int r = 0; r < 4; ++r) {
    for (int k = 0; k < kDim; ++k) dense[idx[r] * kDim + k] += values[r * kDim + k];
  }
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(dense[i], want[i], 1e-6) << i;
}

TEST(SparseGradientsTest, DenseWhereAConsumerNeedsItAndTheGraphSaysSo) {
  Embedding e;
  absl::StatusOr<std::vector<Output>> g = AddGradients(e.s, {e.loss}, {e.table.var});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(absl::StrContains((*g)[0].node->name(), "IndexedSlicesToDense"))
      << (*g)[0].node->name();
  Node* init = ops::GlobalVariablesInitializer(e.s);
  std::unique_ptr<Session> sess = MakeSession(e.s);
  ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {(*g)[0]}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> want = ExpectedDenseGradient();
  const std::vector<float> got = Floats((*out)[0]);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

TEST(SparseGradientsTest, TwoGathersConcatenateAndADenseUseSums) {
  Embedding e;
  Output more = ops::GatherV2(e.s, e.table.var, ops::Const(e.s, {int32_t{1}}), int32_t{0});
  Output two_gathers = ops::AddV2(e.s, e.loss, ops::Sum(e.s, more, {0, 1}));
  absl::StatusOr<std::vector<Gradient>> g =
      AddGradientsWithSlices(e.s, {two_gathers}, {e.table.var});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE((*g)[0].sparse());
  EXPECT_TRUE(absl::StrContains((*g)[0].slices.values.node->name(), "AggregateIndexedSlices"));
  // A dense reader of the whole table as well: one dense sum.
  Output dense_too = ops::AddV2(e.s, two_gathers, ops::Sum(e.s, e.table.var, {0, 1}));
  absl::StatusOr<std::vector<Gradient>> mixed =
      AddGradientsWithSlices(e.s, {dense_too}, {e.table.var});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  ASSERT_FALSE((*mixed)[0].sparse());
  EXPECT_EQ((*mixed)[0].dense.node->op(), "AddN");
  Node* init = ops::GlobalVariablesInitializer(e.s);
  std::unique_ptr<Session> sess = MakeSession(e.s);
  ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {(*mixed)[0].dense}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> want = ExpectedDenseGradient();
  for (int k = 0; k < kDim; ++k) want[1 * kDim + k] += 1.0f;
  for (float& w : want) w += 1.0f;
  const std::vector<float> got = Floats((*out)[0]);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

TEST(SparseGradientsTest, AResourceGathersGradientIsSparseToo) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output handle = ops::VarHandleOp(s.WithOpName("emb"), DT_FLOAT, TensorShape({kRows, kDim}));
  Node* assign = ops::AssignVariableOp(s, handle, Input(TableProto()));
  Output rows = ops::ResourceGather(s, handle, ops::Const(s, {int64_t{9}, int64_t{9}}), DT_FLOAT);
  Output loss = ops::Sum(s, rows, {0, 1});
  absl::StatusOr<std::vector<Gradient>> g = AddGradientsWithSlices(s, {loss}, {handle});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE((*g)[0].sparse());
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {assign}).ok());
  const IndexedSlices& sl = (*g)[0].slices;
  absl::StatusOr<std::vector<Tensor>> out =
      sess->Run({}, {sl.values, sl.indices, sl.dense_shape}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, kDim}));
  EXPECT_EQ(Floats((*out)[0]), std::vector<float>(2 * kDim, 1.0f));
  EXPECT_EQ((*out)[1].data<int64_t>()[0], 9);
  EXPECT_EQ((*out)[2].data<int64_t>()[0], kRows);
}

// One step of `opt` on the embedding loss, sparse (as Minimize builds it)
// and dense (the same gradient made dense first): the table afterwards.
struct Stepped {
  std::vector<float> sparse, dense;
};
Stepped OneStep(Optimizer* sparse_opt, Optimizer* dense_opt) {
  Stepped result;
  for (bool sparse : {true, false}) {
    Embedding e;
    Optimizer* opt = sparse ? sparse_opt : dense_opt;
    absl::StatusOr<std::vector<GradAndVar>> gvs = opt->ComputeGradients(e.s, e.loss, {e.table.var});
    EXPECT_TRUE(gvs.ok()) << gvs.status();
    if (!gvs.ok()) return result;
    EXPECT_TRUE((*gvs)[0].sparse_grad.values.valid());
    if (!sparse) *gvs = DenseGradients(e.s, *gvs);
    absl::StatusOr<Node*> train = opt->ApplyGradients(e.s, *gvs);
    EXPECT_TRUE(train.ok()) << train.status();
    if (!train.ok()) return result;
    Node* init = ops::GlobalVariablesInitializer(e.s);
    std::unique_ptr<Session> sess = MakeSession(e.s);
    EXPECT_TRUE(sess->Run({}, {}, {init}).ok());
    EXPECT_TRUE(sess->Run({}, {}, {*train}).ok());
    absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {e.table.var}, {});
    EXPECT_TRUE(out.ok()) << out.status();
    if (out.ok()) (sparse ? result.sparse : result.dense) = Floats((*out)[0]);
  }
  return result;
}

// Rows the embedding loss touches (4, 17 and 42) move as the dense update
// moves them; every other row stays exactly as it was.
void ExpectRowsMatch(const Stepped& r, bool untouched_dense_too, double tol) {
  const std::vector<float> before = TableValues();
  ASSERT_EQ(r.sparse.size(), before.size());
  ASSERT_EQ(r.dense.size(), before.size());
  for (int row = 0; row < kRows; ++row) {
    const bool touched = row == 4 || row == 17 || row == 42;
    for (int k = 0; k < kDim; ++k) {
      const int i = row * kDim + k;
      if (touched || untouched_dense_too) {
        EXPECT_NEAR(r.sparse[i], r.dense[i], tol) << "row " << row;
      }
      if (touched) {
        EXPECT_NE(r.sparse[i], before[i]) << "row " << row << " did not move";
      } else {
        EXPECT_EQ(r.sparse[i], before[i]) << "row " << row << " moved";
      }
    }
  }
}

TEST(SparseGradientsTest, GradientDescentScattersTheRows) {
  GradientDescentOptimizer a(0.5), b(0.5);
  ExpectRowsMatch(OneStep(&a, &b), true, 1e-6);
}

TEST(SparseGradientsTest, MomentumSumsRepeatedRowsFirst) {
  MomentumOptimizer a(0.5, 0.9), b(0.5, 0.9);
  ExpectRowsMatch(OneStep(&a, &b), true, 1e-6);
}

TEST(SparseGradientsTest, AdamAsTensorFlowAppliesIt) {
  AdamOptimizer a(0.1), b(0.1);
  ExpectRowsMatch(OneStep(&a, &b), true, 1e-5);
}

TEST(SparseGradientsTest, AdagradUpdatesTheTouchedRows) {
  AdagradOptimizer a(0.3), b(0.3);
  ExpectRowsMatch(OneStep(&a, &b), true, 1e-6);
}

// FTRL's dense rule moves a row whose gradient is zero (it re-solves the
// row from its linear term); its sparse rule leaves untouched rows alone, as
// TensorFlow's does. The touched rows agree.
TEST(SparseGradientsTest, FtrlUpdatesTheTouchedRows) {
  FtrlOptimizer a(0.3), b(0.3);
  ExpectRowsMatch(OneStep(&a, &b), false, 1e-6);
}

// RMSProp's and Adadelta's steps are 0 where the gradient is 0 (their
// momentum and update start at 0), so the dense rule leaves untouched rows
// alone too.
TEST(SparseGradientsTest, RMSPropUpdatesTheTouchedRows) {
  RMSPropOptimizer a(0.1), b(0.1);
  ExpectRowsMatch(OneStep(&a, &b), true, 1e-6);
}

TEST(SparseGradientsTest, CenteredRMSPropUpdatesTheTouchedRows) {
  RMSPropOptimizer a(0.1, {.momentum = 0.5, .centered = true});
  RMSPropOptimizer b(0.1, {.momentum = 0.5, .centered = true});
  ExpectRowsMatch(OneStep(&a, &b), true, 1e-6);
}

TEST(SparseGradientsTest, AdadeltaUpdatesTheTouchedRows) {
  AdadeltaOptimizer a(1.0), b(1.0);
  ExpectRowsMatch(OneStep(&a, &b), true, 1e-6);
}

// The table on CPU:1 (a parameter server's device), the loss on CPU:0:
// what crosses between them is the gathered rows and their gradients,
// never a table-sized tensor.
TEST(SparseGradientsTest, OnlyTheTouchedRowsCrossDevices) {
  Embedding e(kCpu1);
  GradientDescentOptimizer sgd(0.5);
  absl::StatusOr<Node*> train = sgd.Minimize(e.s, e.loss, {e.table.var});
  ASSERT_TRUE(train.ok()) << train.status();
  Node* init = ops::GlobalVariablesInitializer(e.s);
  std::unique_ptr<Session> sess = MakeSession(e.s, /*virtual_cpus=*/1);
  ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
  RunOptions ro;
  ro.output_partition_graphs = true;
  RunMetadata meta;
  ASSERT_TRUE(sess->Run({}, {}, {(*train)->name()}, ro, &meta).ok());
  int sends = 0;
  for (const GraphDef& g : meta.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      EXPECT_FALSE(absl::StrContains(n.name(), "IndexedSlicesToDense")) << n.name();
      EXPECT_NE(n.op(), "UnsortedSegmentSum") << n.name();
      if (n.op() == "_Send") ++sends;
    }
  }
  EXPECT_GT(sends, 0);
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {e.table.var}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> want = ExpectedDenseGradient();
  const std::vector<float> before = TableValues();
  const std::vector<float> got = Floats((*out)[0]);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], before[i] - 0.5f * want[i], 1e-6);
}

// A wide & deep model's split: the table by FTRL, a dense weight by Adagrad,
// through one PerVariableOptimizer, equals each optimizer applied to its
// own variables.
TEST(SparseGradientsTest, PerVariableOptimizerRoutesEachVariable) {
  std::vector<std::vector<float>> results[2];
  for (bool routed : {true, false}) {
    Embedding e;
    ops::VariableAndInit scale = ops::VariableWithInit(e.s.WithOpName("scale"), {1.5f});
    Output loss = ops::Mul(e.s, e.loss, ops::Square(e.s, scale.var));
    FtrlOptimizer ftrl(0.3);
    AdagradOptimizer adagrad(0.2);
    Node* train = nullptr;
    if (routed) {
      PerVariableOptimizer both({{&ftrl, {e.table.var}}}, &adagrad);
      absl::StatusOr<Node*> t = both.Minimize(e.s, loss, {e.table.var, scale.var});
      ASSERT_TRUE(t.ok()) << t.status();
      train = *t;
    } else {
      absl::StatusOr<std::vector<GradAndVar>> gvs =
          ftrl.ComputeGradients(e.s, loss, {e.table.var, scale.var});
      ASSERT_TRUE(gvs.ok()) << gvs.status();
      absl::StatusOr<Node*> a = ftrl.ApplyGradients(e.s, {(*gvs)[0]});
      absl::StatusOr<Node*> b = adagrad.ApplyGradients(e.s, {(*gvs)[1]});
      ASSERT_TRUE(a.ok() && b.ok());
      train = ops::GroupDeps(e.s, {*a, *b});
    }
    Node* init = ops::GlobalVariablesInitializer(e.s);
    std::unique_ptr<Session> sess = MakeSession(e.s);
    ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
    for (int step = 0; step < 3; ++step) ASSERT_TRUE(sess->Run({}, {}, {train}).ok());
    absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {e.table.var, scale.var}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    results[routed ? 0 : 1] = {Floats((*out)[0]), Floats((*out)[1])};
  }
  ASSERT_EQ(results[0].size(), 2u);
  ASSERT_EQ(results[1].size(), 2u);
  EXPECT_EQ(results[0][0], results[1][0]);  // the table, by FTRL
  EXPECT_EQ(results[0][1], results[1][1]);  // scale, by Adagrad
  EXPECT_NE(results[0][1][0], 1.5f);
}

}  // namespace
}  // namespace sluice
