// TensorFlow's fused recurrent cells (tensorflow/core/ops/rnn_ops.cc):
// LSTMBlockCell, BlockLSTM (a whole sequence), GRUBlockCell and their
// backward ops LSTMBlockCellGrad, BlockLSTMGrad, GRUBlockCellGrad, with TF's
// op, input, output and attr names and defaults. CPU kernels are float only,
// as TensorFlow registers them on the CPU.
//
//   ops::LSTMBlockCellOutputs l = ops::LSTMBlockCell(s, x, cs_prev, h_prev, w, wci, wcf, wco, b,
//                                                    {.forget_bias = 1, .cell_clip = -1});
//   Output h = l.h;
//
// LSTM (x [batch, input], states [batch, cell], w [input + cell, 4 cell],
// b [4 cell], peepholes wci/wcf/wco [cell]); the gate columns of w and b are
// in TF's "icfo" order: input gate, cell input, forget gate, output gate.
//   [i_, ci_, f_, o_] = [x, h_prev] w + b
//   i  = sigmoid(i_ + wci * cs_prev)          (peephole term only with use_peephole)
//   ci = tanh(ci_)
//   f  = sigmoid(f_ + forget_bias + wcf * cs_prev)
//   cs = clip(i * ci + f * cs_prev, -cell_clip, cell_clip)   (when cell_clip > 0)
//   o  = sigmoid(o_ + wco * cs)
//   co = tanh(cs);  h = o * co
// BlockLSTM runs the cell over x [time, batch, input] for the first
// seq_len_max steps; cs and h past seq_len_max are zero (the other outputs
// there are unspecified in TF; Sluice writes zeros).
//
// GRU (x [batch, input], h_prev [batch, cell], w_ru [input + cell, 2 cell],
// w_c [input + cell, cell], b_ru [2 cell], b_c [cell]):
//   [r, u] = sigmoid([x, h_prev] w_ru + b_ru)
//   c = tanh([x, r * h_prev] w_c + b_c);  h = u * h_prev + (1 - u) * c
//
// Gradients (RegisterRnnBlockGradients, ops/nn/nn_gradients.h) follow TF's python
// ones: only the cs and h outputs of the LSTM ops and h of GRUBlockCell carry
// gradient; the cell clip is not differentiated (as in TF).
//
// Errors: inputs of the wrong rank or of mismatched sizes are InvalidArgument
// naming the input (wci, wcf and wco must be [cell] even without peepholes, as
// TF's BlockLSTM checks; its LSTMBlockCell kernel does not check them);
// LSTMBlockCell rejects an empty cs_prev, as TF does; seq_len_max outside
// [0, time] is InvalidArgument.
// Thread-safety: as Scope; kernels are stateless. Ownership: nodes belong to
// the scope's graph.
#ifndef SLUICE_OPS_NN_RNN_BLOCK_OPS_H_
#define SLUICE_OPS_NN_RNN_BLOCK_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterRnnBlockOps(OpRegistry* ops);
// Defined in ops/nn/lstm_block_kernels.cc and ops/nn/gru_block_kernels.cc.
void RegisterLstmBlockKernels(KernelRegistry* kernels);
void RegisterGruBlockKernels(KernelRegistry* kernels);

namespace ops {

struct LSTMBlockCellAttrs {
  float forget_bias = 1.0f;
  float cell_clip = 3.0f;  // <= 0 disables the clip
  bool use_peephole = false;
};
// The outputs of LSTMBlockCell and BlockLSTM, in TF's order.
struct LSTMBlockOutputs {
  Output i, cs, f, o, ci, co, h;
};
LSTMBlockOutputs LSTMBlockCell(const Scope& scope, Input x, Input cs_prev, Input h_prev, Input w,
                               Input wci, Input wcf, Input wco, Input b,
                               const LSTMBlockCellAttrs& attrs = {},
                               std::source_location loc = std::source_location::current());
LSTMBlockOutputs BlockLSTM(const Scope& scope, Input seq_len_max, Input x, Input cs_prev,
                           Input h_prev, Input w, Input wci, Input wcf, Input wco, Input b,
                           const LSTMBlockCellAttrs& attrs = {},
                           std::source_location loc = std::source_location::current());

// LSTMBlockCellGrad: dicfo is the gradient of the pre-activation gates
// [batch, 4 cell]; the wc*_grad are zero without peepholes.
struct LSTMBlockCellGradOutputs {
  Output cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad;
};
LSTMBlockCellGradOutputs LSTMBlockCellGrad(
    const Scope& scope, Input x, Input cs_prev, Input h_prev, Input w, Input wci, Input wcf,
    Input wco, Input b, const LSTMBlockOutputs& forward, Input cs_grad, Input h_grad,
    bool use_peephole, std::source_location loc = std::source_location::current());

struct BlockLSTMGradOutputs {
  Output x_grad, cs_prev_grad, h_prev_grad, w_grad, wci_grad, wcf_grad, wco_grad, b_grad;
};
BlockLSTMGradOutputs BlockLSTMGrad(const Scope& scope, Input seq_len_max, Input x, Input cs_prev,
                                   Input h_prev, Input w, Input wci, Input wcf, Input wco, Input b,
                                   const LSTMBlockOutputs& forward, Input cs_grad, Input h_grad,
                                   bool use_peephole,
                                   std::source_location loc = std::source_location::current());

struct GRUBlockCellOutputs {
  Output r, u, c, h;
};
GRUBlockCellOutputs GRUBlockCell(const Scope& scope, Input x, Input h_prev, Input w_ru, Input w_c,
                                 Input b_ru, Input b_c,
                                 std::source_location loc = std::source_location::current());

// d_c_bar and d_r_bar_u_bar are the gradients of the pre-activations of c
// and of [r, u].
struct GRUBlockCellGradOutputs {
  Output d_x, d_h_prev, d_c_bar, d_r_bar_u_bar;
};
GRUBlockCellGradOutputs GRUBlockCellGrad(
    const Scope& scope, Input x, Input h_prev, Input w_ru, Input w_c, Input b_ru, Input b_c,
    Input r, Input u, Input c, Input d_h,
    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_RNN_BLOCK_OPS_H_
