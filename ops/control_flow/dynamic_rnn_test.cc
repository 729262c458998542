// A tf.nn.dynamic_rnn LSTM, laid out node for node as TensorFlow 1.x lays
// it out (rnn/transpose, rnn/TensorArray, rnn/TensorArray_1,
// rnn/TensorArrayUnstack, the rnn/while loop with its iteration counter and
// LogicalAnd condition, rnn/while/basic_lstm_cell/..., rnn/TensorArrayStack,
// rnn/transpose_1): its forward values against the LSTM recurrence written
// out by hand (BasicLSTMCell: gates i, j, f, o from one MatMul, forget bias
// 1), its gradients against central differences, and training with
// gradient descent, also after a GraphDef round trip.
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "graph/graph_def_io.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/training/optimizers.h"
#include "ops/state/state_ops.h"
#include "ops/control_flow/tensor_array_ops.h"
#include "ops/testutil/dynamic_rnn_lstm.h"
#include "ops/testutil/gradient_checker.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

constexpr int kBatch = 2, kTime = 3, kDepth = 2, kHidden = 3;

std::vector<double> Draw(int n, double scale, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> v(n);
  for (double& x : v) x = u(gen);
  return v;
}

Tensor Doubles(const std::vector<double>& v, const TensorShape& shape) {
  return Tensor::FromVector<double>(v, shape);
}

Tensor Floats(const std::vector<double>& v, const TensorShape& shape) {
  return Tensor::FromVector<float>(std::vector<float>(v.begin(), v.end()), shape);
}

const TensorShape kInputShape({kBatch, kTime, kDepth});
const TensorShape kKernelShape({kDepth + kHidden, 4 * kHidden});
const TensorShape kBiasShape({4 * kHidden});

TEST(DynamicRnnTest, ForwardMatchesTheRecurrenceAndUsesTensorFlowsNames) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("inputs"), DT_DOUBLE);
  Output kernel = ops::Placeholder(s.WithOpName("kernel"), DT_DOUBLE);
  Output bias = ops::Placeholder(s.WithOpName("bias"), DT_DOUBLE);
  absl::StatusOr<Output> y = DynamicRnnLstm(s, x, kernel, bias, DT_DOUBLE);
  ASSERT_TRUE(y.ok()) << y.status();
  for (const char* name :
       {"rnn/TensorArray", "rnn/TensorArray_1", "rnn/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3",
        "rnn/while/Enter", "rnn/while/LoopCond", "rnn/while/LogicalAnd", "rnn/while/TensorArrayReadV3",
        "rnn/while/basic_lstm_cell/MatMul", "rnn/while/TensorArrayWrite/TensorArrayWriteV3",
        "rnn/TensorArrayStack/TensorArrayGatherV3", "rnn/transpose_1"}) {
    EXPECT_NE(s.graph()->FindNode(name), nullptr) << name;
  }
  const std::vector<double> xv = Draw(kBatch * kTime * kDepth, 1.0, 1);
  const std::vector<double> kv = Draw((kDepth + kHidden) * 4 * kHidden, 0.5, 2);
  const std::vector<double> bv = Draw(4 * kHidden, 0.1, 3);
  absl::StatusOr<Tensor> got =
      EvalWithFeeds(s, {x, kernel, bias},
                    {Doubles(xv, kInputShape), Doubles(kv, kKernelShape), Doubles(bv, kBiasShape)}, *y);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->shape(), TensorShape({kBatch, kTime, kHidden}));
  const std::vector<double> want = LstmByHand(xv, kv, bv);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got->flat<double>()[i], want[i], 1e-12) << i;
}

TEST(DynamicRnnTest, GradientsMatchCentralDifferences) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("inputs"), DT_DOUBLE);
  Output kernel = ops::Placeholder(s.WithOpName("kernel"), DT_DOUBLE);
  Output bias = ops::Placeholder(s.WithOpName("bias"), DT_DOUBLE);
  absl::StatusOr<Output> y = DynamicRnnLstm(s, x, kernel, bias, DT_DOUBLE);
  ASSERT_TRUE(y.ok()) << y.status();
  absl::StatusOr<double> err = MaxGradientError(
      s, {x, kernel, bias},
      {Doubles(Draw(kBatch * kTime * kDepth, 1.0, 4), kInputShape),
       Doubles(Draw((kDepth + kHidden) * 4 * kHidden, 0.5, 5), kKernelShape),
       Doubles(Draw(4 * kHidden, 0.1, 6), kBiasShape)},
      *y);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-7);
}

// dynamic_rnn(..., sequence_length=...): each sequence stops at its length
// (zero outputs after it, its last state carried), the loop stops at the
// longest, and lengths of the wrong shape fail dynamic_rnn's Assert.
TEST(DynamicRnnTest, SequenceLengthsStopEachSequence) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("inputs"), DT_DOUBLE);
  Output kernel = ops::Placeholder(s.WithOpName("kernel"), DT_DOUBLE);
  Output bias = ops::Placeholder(s.WithOpName("bias"), DT_DOUBLE);
  Output lengths = ops::Placeholder(s.WithOpName("lengths"), DT_INT32);
  absl::StatusOr<Output> y = DynamicRnnLstm(s, x, kernel, bias, DT_DOUBLE, {}, lengths);
  ASSERT_TRUE(y.ok()) << y.status();
  for (const char* name : {"rnn/sequence_length", "rnn/Assert/Assert", "rnn/CheckSeqLen", "rnn/Max",
                           "rnn/Minimum", "rnn/while/GreaterEqual_2", "rnn/while/Select",
                           "rnn/while/Select_1", "rnn/while/Select_2"}) {
    EXPECT_NE(s.graph()->FindNode(name), nullptr) << name;
  }
  const std::vector<double> xv = Draw(kBatch * kTime * kDepth, 1.0, 11);
  const std::vector<double> kv = Draw((kDepth + kHidden) * 4 * kHidden, 0.5, 12);
  const std::vector<double> bv = Draw(4 * kHidden, 0.1, 13);
  // Both full; one short; both short (the loop's last step does not run).
  for (const std::vector<int>& lv : std::vector<std::vector<int>>{{3, 3}, {3, 1}, {2, 1}, {0, 2}}) {
    absl::StatusOr<Tensor> got = EvalWithFeeds(
        s, {x, kernel, bias, lengths},
        {Doubles(xv, kInputShape), Doubles(kv, kKernelShape), Doubles(bv, kBiasShape),
         Tensor::FromVector<int32_t>(lv, TensorShape({kBatch}))},
        *y);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->shape(), TensorShape({kBatch, kTime, kHidden}));
    const std::vector<double> want = LstmByHand(xv, kv, bv, {}, lv);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(got->flat<double>()[i], want[i], 1e-12) << "lengths " << lv[0] << "," << lv[1]
                                                           << ", element " << i;
    }
  }
  absl::StatusOr<Tensor> bad = EvalWithFeeds(
      s, {x, kernel, bias, lengths},
      {Doubles(xv, kInputShape), Doubles(kv, kKernelShape), Doubles(bv, kBiasShape),
       Tensor::FromVector<int32_t>({3, 3, 3}, TensorShape({3}))},
      *y);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(),
                                "Expected shape for Tensor rnn/sequence_length:0 is ] [2]"))
      << bad.status();
}

TEST(DynamicRnnTest, GradientsWithSequenceLengthsMatchCentralDifferences) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("inputs"), DT_DOUBLE);
  Output kernel = ops::Placeholder(s.WithOpName("kernel"), DT_DOUBLE);
  Output bias = ops::Placeholder(s.WithOpName("bias"), DT_DOUBLE);
  Output lengths = ops::Const(s.WithOpName("lengths"), std::vector<int32_t>{2, 1});
  absl::StatusOr<Output> y = DynamicRnnLstm(s, x, kernel, bias, DT_DOUBLE, {}, lengths);
  ASSERT_TRUE(y.ok()) << y.status();
  absl::StatusOr<double> err = MaxGradientError(
      s, {x, kernel, bias},
      {Doubles(Draw(kBatch * kTime * kDepth, 1.0, 14), kInputShape),
       Doubles(Draw((kDepth + kHidden) * 4 * kHidden, 0.5, 15), kKernelShape),
       Doubles(Draw(4 * kHidden, 0.1, 16), kBiasShape)},
      *y);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-7);
}

// Trains the LSTM's variables to echo 0.4 x its first input channel on every
// hidden unit; returns the losses before and after `steps` steps.
struct TrainingGraph {
  Node* init = nullptr;
  Node* train = nullptr;
  Output loss;
};

absl::StatusOr<TrainingGraph> BuildTraining(const Scope& s) {
  const std::vector<double> xv = Draw(kBatch * kTime * kDepth, 1.0, 7);
  std::vector<double> target;
  for (int i = 0; i < kBatch * kTime; ++i) {
    for (int k = 0; k < kHidden; ++k) target.push_back(0.4 * xv[i * kDepth]);
  }
  Output x = ops::Const(s.WithOpName("inputs"), Floats(xv, kInputShape));
  ops::VariableAndInit kernel = ops::VariableWithInit(
      s.WithOpName("rnn/basic_lstm_cell/kernel"),
      ops::Const(s, Floats(Draw((kDepth + kHidden) * 4 * kHidden, 0.3, 8), kKernelShape)));
  ops::VariableAndInit bias = ops::VariableWithInit(s.WithOpName("rnn/basic_lstm_cell/bias"),
                                                    ops::Const(s, Floats(Draw(4 * kHidden, 0.0, 9), kBiasShape)));
  Output kernel_read = ops::Identity(s.WithOpName("rnn/basic_lstm_cell/kernel/read"), kernel.var);
  Output bias_read = ops::Identity(s.WithOpName("rnn/basic_lstm_cell/bias/read"), bias.var);
  ASSIGN_OR_RETURN(Output y, DynamicRnnLstm(s, x, kernel_read, bias_read, DT_FLOAT));
  Output want = ops::Const(s.WithOpName("target"), Floats(target, {kBatch, kTime, kHidden}));
  TrainingGraph g;
  g.loss = ops::Mean(s.WithOpName("loss"), ops::Square(s, ops::Sub(s, y, want)), {0, 1, 2});
  GradientDescentOptimizer sgd(1.0);
  ASSIGN_OR_RETURN(g.train, sgd.Minimize(s, g.loss, {kernel.var, bias.var}));
  g.init = ops::GlobalVariablesInitializer(s);
  RETURN_IF_ERROR(s.status());
  return g;
}

// Runs init, then `steps` training steps; the loss before and after.
std::pair<float, float> Train(Session* sess, const std::string& init, const std::string& train,
                              const std::string& loss, int steps) {
  EXPECT_TRUE(sess->Run({}, {}, {init}).ok());
  absl::StatusOr<std::vector<Tensor>> first = sess->Run({}, {loss}, {});
  EXPECT_TRUE(first.ok()) << first.status();
  for (int i = 0; i < steps; ++i) {
    absl::Status st = sess->Run({}, {}, {train}).status();
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok()) break;
  }
  absl::StatusOr<std::vector<Tensor>> last = sess->Run({}, {loss}, {});
  EXPECT_TRUE(last.ok()) << last.status();
  if (!first.ok() || !last.ok()) return {0, 0};
  return {(*first)[0].scalar<float>(), (*last)[0].scalar<float>()};
}

TEST(DynamicRnnTest, AnLstmTrainingGraphLearnsAlsoAfterAGraphDefRoundTrip) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<TrainingGraph> g = BuildTraining(s);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  auto [before, after] = Train(sess->get(), g->init->name(), g->train->name(), g->loss.name(), 150);
  EXPECT_LT(after, 0.25f * before) << before << " -> " << after;
  std::printf("LSTM loss after 150 steps: %.5f -> %.5f\n", before, after);

  // The same graph as a GraphDef (what TensorFlow would have written).
  absl::StatusOr<GraphDef> def = s.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  Graph imported(BuiltinOps());
  ASSERT_TRUE(ImportGraphDef(*def, &imported).ok());
  absl::StatusOr<std::unique_ptr<Session>> again = NewSession(BuiltinSessionConfig(), imported);
  ASSERT_TRUE(again.ok()) << again.status();
  auto [before2, after2] = Train(again->get(), g->init->name(), g->train->name(), g->loss.name(), 150);
  EXPECT_FLOAT_EQ(before2, before);
  EXPECT_NEAR(after2, after, 1e-3f * before);
}

}  // namespace
}  // namespace sluice
