#include "ops/testutil/dynamic_rnn_lstm.h"

#include <cmath>
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/control_flow/tensor_array_ops.h"
#include "ops/math/check_ops.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"

namespace sluice {
namespace {

Tensor Zeros(DataType dtype, const TensorShape &shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    if (dtype == DT_DOUBLE) {
      t.flat<double>()[i] = 0;
    } else {
      t.flat<float>()[i] = 0;
    }
  }
  return t;
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

} // namespace

absl::StatusOr<Output> DynamicRnnLstm(const Scope &root, const Output &inputs,
                                      const Output &kernel, const Output &bias,
                                      DataType dtype, const LstmSizes &z,
                                      const Output &sequence_length) {
  const Scope s = root.NewSubScope("rnn");
  const bool masked = sequence_length.valid();
  // dynamic_rnn's checks and bounds of the lengths; without them the loop
  // bound is the time dimension.
  Output lengths, loop_bound = ops::Const(s, z.time);
  if (masked) {
    Output named = ops::Identity(s.WithOpName("sequence_length"), sequence_length);
    Output shape = ops::Shape(s.WithOpName("Shape"), named);
    Output want = ops::Const(s.WithOpName("stack"), std::vector<int32_t>{z.batch});
    Output same = ops::All(s.WithOpName("All"), ops::Equal(s.WithOpName("Equal"), shape, want),
                           ops::Const(s.WithOpName("Const"), std::vector<int32_t>{0}));
    const Scope check = s.NewSubScope("Assert");
    Node *assert = ops::Assert(
        check.WithOpName("Assert"), same,
        {ops::Const(check.WithOpName("Assert/data_0"),
                    std::string("Expected shape for Tensor rnn/sequence_length:0 is ")),
         want, ops::Const(check.WithOpName("Assert/data_2"), std::string(" but saw shape: ")),
         shape},
        3);
    lengths = ops::Identity(
        s.WithOpName("CheckSeqLen").WithControlDependencies(absl::Span<Node *const>(&assert, 1)),
        named);
    ops::Min(s.WithOpName("Min"), lengths, ops::Const(s.WithOpName("Const_1"), 0));
    Output longest = ops::Max(s.WithOpName("Max"), lengths, ops::Const(s.WithOpName("Const_2"), 0));
    loop_bound = ops::Minimum(s.WithOpName("Minimum"), loop_bound,
                              ops::Maximum(s.WithOpName("Maximum"), 1, longest));
  }
  Output time_major =
      ops::Transpose(s.WithOpName("transpose"), inputs, {1, 0, 2});
  const TensorShape element_out({z.batch, z.hidden}),
      element_in({z.batch, z.depth});
  auto out =
      ops::TensorArrayV3(s.WithOpName("TensorArray"), z.time, dtype,
                         {.element_shape = element_out,
                          .identical_element_shapes = true,
                          .tensor_array_name = "rnn/dynamic_rnn/output_0"});
  auto in =
      ops::TensorArrayV3(s.WithOpName("TensorArray_1"), z.time, dtype,
                         {.element_shape = element_in,
                          .identical_element_shapes = true,
                          .tensor_array_name = "rnn/dynamic_rnn/input_0"});
  const Scope unstack = s.NewSubScope("TensorArrayUnstack");
  Output in_flow = ops::TensorArrayScatterV3(
      unstack.NewSubScope("TensorArrayScatter")
          .WithOpName("TensorArrayScatterV3"),
      in.handle, ops::Range(unstack.WithOpName("range"), 0, z.time, 1),
      time_major, in.flow);
  Output zeros = ops::Const(s.WithOpName("BasicLSTMCellZeroState/zeros"),
                            Zeros(dtype, element_out));
  Output time = ops::Const(s.WithOpName("time"), 0);
  ASSIGN_OR_RETURN(
      std::vector<Output> loop,
      ops::WhileLoop(
          s,
          {ops::Const(s.WithOpName("while/iteration_counter"), 0), time,
           out.flow, zeros, zeros},
          [&](const Scope &c, absl::Span<const Output> v) {
            return ops::LogicalAnd(
                c.WithOpName("LogicalAnd"),
                ops::Less(c.WithOpName("Less"), v[0], z.time),
                ops::Less(c.WithOpName("Less_1"), v[1], loop_bound));
          },
          [&](const Scope &b, absl::Span<const Output> v) {
            Output x = ops::TensorArrayReadV3(b.WithOpName("TensorArrayReadV3"),
                                              in.handle, v[1], in_flow, dtype);
            const Scope cell = b.NewSubScope("basic_lstm_cell");
            Output concat =
                ops::ConcatV2(cell.WithOpName("concat"), {x, v[4]}, 1);
            Output gates = ops::BiasAdd(
                cell.WithOpName("BiasAdd"),
                ops::MatMul(cell.WithOpName("MatMul"), concat, kernel), bias);
            std::vector<Output> ijfo =
                ops::Split(cell.WithOpName("split"), 1, gates, 4);
            Output forget = ops::Sigmoid(cell, ops::Add(cell, ijfo[2], 1.0));
            Output c = ops::Add(cell, ops::Mul(cell, v[3], forget),
                                ops::Mul(cell, ops::Sigmoid(cell, ijfo[0]),
                                         ops::Tanh(cell, ijfo[1])));
            Output h =
                ops::Mul(cell, ops::Tanh(cell, c), ops::Sigmoid(cell, ijfo[3]));
            Output output = h;
            if (masked) {
              // Past its length a sequence's output is zero and its state
              // stays: a GreaterEqual per Select, as _rnn_step writes them.
              auto done = [&](const char *name) {
                return ops::GreaterEqual(b.WithOpName(name), v[1], lengths);
              };
              output = ops::Select(b.WithOpName("Select"), done("GreaterEqual"), zeros, h);
              c = ops::Select(b.WithOpName("Select_1"), done("GreaterEqual_1"), v[3], c);
              h = ops::Select(b.WithOpName("Select_2"), done("GreaterEqual_2"), v[4], h);
            }
            Output flow =
                ops::TensorArrayWriteV3(b.NewSubScope("TensorArrayWrite")
                                            .WithOpName("TensorArrayWriteV3"),
                                        out.handle, v[1], output, v[2]);
            return std::vector<Output>{ops::Add(b, v[0], 1),
                                       ops::Add(b.WithOpName("add"), v[1], 1),
                                       flow, c, h};
          },
          {.name = "while", .parallel_iterations = 32}));
  const Scope stack = s.NewSubScope("TensorArrayStack");
  Output size = ops::TensorArraySizeV3(stack.WithOpName("TensorArraySizeV3"),
                                       out.handle, loop[2]);
  Output all = ops::TensorArrayGatherV3(
      stack.WithOpName("TensorArrayGatherV3"), out.handle,
      ops::Range(stack.WithOpName("range"), 0, size, 1), loop[2], dtype,
      element_out);
  RETURN_IF_ERROR(s.status());
  return ops::Transpose(s.WithOpName("transpose_1"), all, {1, 0, 2});
}

std::vector<double> LstmByHand(const std::vector<double> &x,
                               const std::vector<double> &kernel,
                               const std::vector<double> &bias,
                               const LstmSizes &z,
                               const std::vector<int> &lengths) {
  std::vector<double> out(z.batch * z.time * z.hidden, 0.0);
  for (int b = 0; b < z.batch; ++b) {
    std::vector<double> c(z.hidden, 0), h(z.hidden, 0);
    const int length = lengths.empty() ? z.time : lengths[b];
    for (int t = 0; t < length; ++t) {
      std::vector<double> in; // [x_t, h]
      for (int d = 0; d < z.depth; ++d)
        in.push_back(x[(b * z.time + t) * z.depth + d]);
      for (int k = 0; k < z.hidden; ++k)
        in.push_back(h[k]);
      std::vector<double> g(4 * z.hidden);
      for (int j = 0; j < 4 * z.hidden; ++j) {
        g[j] = bias[j];
        for (size_t r = 0; r < in.size(); ++r)
          g[j] += in[r] * kernel[r * 4 * z.hidden + j];
      }
      for (int k = 0; k < z.hidden; ++k) {
        const double i = g[k], jj = g[z.hidden + k], f = g[2 * z.hidden + k],
                     o = g[3 * z.hidden + k];
        c[k] = c[k] * Sigmoid(f + 1.0) + Sigmoid(i) * std::tanh(jj);
        h[k] = std::tanh(c[k]) * Sigmoid(o);
        out[(b * z.time + t) * z.hidden + k] = h[k];
      }
    }
  }
  return out;
}

} // namespace sluice
