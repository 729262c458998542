// Gradients of LSTMBlockCell, BlockLSTM and GRUBlockCell, as TensorFlow's
// python gradients build them (rnn_grad.py for BlockLSTM; the contrib
// lstm_ops.py / gru_ops.py for the cells): the backward op gives the gate
// gradients, and the weight, bias and input gradients are products with the
// concatenated inputs. Only cs and h of the LSTM ops and h of GRUBlockCell
// carry gradient; seq_len_max gets none.
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/nn/nn_gradients.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"
#include "ops/nn/rnn_block_ops.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;

// The incoming gradient of output i, or zeros like that output.
Output GradOrZeros(const Scope& s, const Node& node, absl::Span<const Output> g, int i) {
  return g[i].valid() ? g[i] : ops::ZerosLike(s, OutputOf(node, i));
}

// m's columns split as [x's columns, the rest], x being [batch, input].
std::pair<Output, Output> SplitColumns(const Scope& s, const Output& m, const Output& x) {
  Output input_size = ops::Slice(s, ops::Shape(s, x), {1}, {1});
  Output x_part = ops::Slice(s, m, {0, 0}, ops::ConcatV2(s, {Input({-1}), input_size}, 0));
  Output rest = ops::Slice(s, m, ops::ConcatV2(s, {Input({0}), input_size}, 0), {-1, -1});
  return {x_part, rest};
}

ops::LSTMBlockOutputs ForwardOutputs(const Node& node) {
  return {OutputOf(node, 0), OutputOf(node, 1), OutputOf(node, 2), OutputOf(node, 3),
          OutputOf(node, 4), OutputOf(node, 5), OutputOf(node, 6)};
}

absl::StatusOr<std::vector<Output>> LstmBlockCellGrad(const Scope& s, const Node& node,
                                                      absl::Span<const Output> g) {
  std::vector<Output> grads(8);
  if (!g[1].valid() && !g[6].valid()) return grads;
  ASSIGN_OR_RETURN(bool peephole, node.GetAttr<bool>("use_peephole"));
  Output in[8];
  for (int k = 0; k < 8; ++k) in[k] = InputOf(node, k);
  ops::LSTMBlockCellGradOutputs d = ops::LSTMBlockCellGrad(
      s, in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], ForwardOutputs(node),
      GradOrZeros(s, node, g, 1), GradOrZeros(s, node, g, 6), peephole);
  Output xh = ops::ConcatV2(s, {Input(in[0]), Input(in[2])}, 1);
  auto [x_grad, h_prev_grad] =
      SplitColumns(s, ops::MatMul(s, d.dicfo, in[3], {.transpose_b = true}), in[0]);
  grads = {x_grad,
           d.cs_prev_grad,
           h_prev_grad,
           ops::MatMul(s, xh, d.dicfo, {.transpose_a = true}),
           d.wci_grad,
           d.wcf_grad,
           d.wco_grad,
           ops::Sum(s, d.dicfo, 0)};
  RETURN_IF_ERROR(s.status());
  return grads;
}

absl::StatusOr<std::vector<Output>> BlockLstmGrad(const Scope& s, const Node& node,
                                                  absl::Span<const Output> g) {
  std::vector<Output> grads(9);
  if (!g[1].valid() && !g[6].valid()) return grads;
  ASSIGN_OR_RETURN(bool peephole, node.GetAttr<bool>("use_peephole"));
  Output in[9];
  for (int k = 0; k < 9; ++k) in[k] = InputOf(node, k);
  ops::BlockLSTMGradOutputs d = ops::BlockLSTMGrad(
      s, in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], in[8], ForwardOutputs(node),
      GradOrZeros(s, node, g, 1), GradOrZeros(s, node, g, 6), peephole);
  grads = {Output(),   d.x_grad,   d.cs_prev_grad, d.h_prev_grad, d.w_grad,
           d.wci_grad, d.wcf_grad, d.wco_grad,     d.b_grad};
  RETURN_IF_ERROR(s.status());
  return grads;
}

absl::StatusOr<std::vector<Output>> GruBlockCellGrad(const Scope& s, const Node& node,
                                                     absl::Span<const Output> g) {
  std::vector<Output> grads(6);
  if (!g[3].valid()) return grads;
  const Output x = InputOf(node, 0), h_prev = InputOf(node, 1);
  const Output r = OutputOf(node, 0);
  ops::GRUBlockCellGradOutputs d = ops::GRUBlockCellGrad(
      s, x, h_prev, InputOf(node, 2), InputOf(node, 3), InputOf(node, 4), InputOf(node, 5), r,
      OutputOf(node, 1), OutputOf(node, 2), g[3]);
  Output x_h_prev = ops::ConcatV2(s, {Input(x), Input(h_prev)}, 1);
  Output x_h_prevr = ops::ConcatV2(s, {Input(x), Input(ops::Mul(s, h_prev, r))}, 1);
  grads = {d.d_x,
           d.d_h_prev,
           ops::MatMul(s, x_h_prev, d.d_r_bar_u_bar, {.transpose_a = true}),
           ops::MatMul(s, x_h_prevr, d.d_c_bar, {.transpose_a = true}),
           ops::Sum(s, d.d_r_bar_u_bar, 0),
           ops::Sum(s, d.d_c_bar, 0)};
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterRnnBlockGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("LSTMBlockCell", LstmBlockCellGrad));
  RETURN_IF_ERROR(ops->SetGradient("BlockLSTM", BlockLstmGrad));
  return ops->SetGradient("GRUBlockCell", GruBlockCellGrad);
}

}  // namespace sluice
