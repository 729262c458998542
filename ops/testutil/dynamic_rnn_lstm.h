// A tf.nn.dynamic_rnn over a BasicLSTMCell, built node for node as
// TensorFlow 1.x lays it out (rnn/transpose, rnn/TensorArray,
// rnn/TensorArray_1, rnn/TensorArrayUnstack, the rnn/while loop with its
// iteration counter and LogicalAnd condition, rnn/while/basic_lstm_cell/...,
// rnn/TensorArrayStack, rnn/transpose_1): for tests of loops and
// TensorArrays on every device.
//
//   ASSIGN_OR_RETURN(Output y, DynamicRnnLstm(scope, x, kernel, bias, DT_FLOAT,
//                                             {.batch = 2, .time = 3, .depth =
//                                             2, .hidden = 3}));
//
// The cell: gates i, j, f, o from one MatMul of [x_t, h] with `kernel`
// ([depth + hidden, 4 hidden]) plus `bias` ([4 hidden]), forget bias 1;
// `inputs` is [batch, time, depth], the result [batch, time, hidden]. Nodes
// take the scope's device.
//
// With a `sequence_length` (int32 [batch]), as dynamic_rnn(...,
// sequence_length=...) lays it out: rnn/sequence_length, the shape check
// rnn/Assert/Assert (strings and shapes) guarding rnn/CheckSeqLen, rnn/Min
// and rnn/Max of it, the loop bound rnn/Minimum(time, rnn/Maximum(1,
// max length)), and in the body rnn/while/Select, Select_1, Select_2 (a
// GreaterEqual(time, sequence_length) each): past its length a sequence's
// output is zero and its state is carried through. Steps past the longest
// length do not run; their outputs read as zeros.
#ifndef SLUICE_OPS_TESTUTIL_DYNAMIC_RNN_LSTM_H_
#define SLUICE_OPS_TESTUTIL_DYNAMIC_RNN_LSTM_H_

#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"

namespace sluice {

struct LstmSizes {
  int batch = 2;
  int time = 3;
  int depth = 2;
  int hidden = 3;
};

absl::StatusOr<Output> DynamicRnnLstm(const Scope &root, const Output &inputs,
                                      const Output &kernel, const Output &bias,
                                      DataType dtype,
                                      const LstmSizes &sizes = {},
                                      const Output &sequence_length = Output());

// The same LSTM written out in doubles (x: [batch, time, depth] row-major,
// kernel and bias as above; `lengths`, one per sequence, or empty for
// all of `time`); returns [batch, time, hidden].
std::vector<double> LstmByHand(const std::vector<double> &x,
                               const std::vector<double> &kernel,
                               const std::vector<double> &bias,
                               const LstmSizes &sizes = {},
                               const std::vector<int> &lengths = {});

} // namespace sluice

#endif // SLUICE_OPS_TESTUTIL_DYNAMIC_RNN_LSTM_H_
