// Definitions, shape functions and wrappers of the block RNN ops
// (ops/nn/rnn_block_ops.h). The kernels are in ops/nn/lstm_block_kernels.cc and
// ops/nn/gru_block_kernels.cc; the gradients in ops/nn/rnn_block_grad.cc.
#include "ops/nn/rnn_block_ops.h"

#include <initializer_list>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

using Dim = int64_t;
constexpr Dim kUnknown = TensorShape::kUnknownDim;

// Dimension i of input `in`, or unknown when its rank is unknown.
Dim DimOf(InferenceContext* c, int in, int i) {
  const TensorShape& s = c->input(in);
  return s.unknown_rank() ? kUnknown : s.dim(i);
}

Dim Times(Dim d, int k) { return d == kUnknown ? kUnknown : d * k; }

// Checks that each listed input has the rank paired with it.
absl::Status Ranks(InferenceContext* c, std::initializer_list<std::pair<int, int>> ranks) {
  for (const auto& [in, rank] : ranks) {
    absl::Status st = c->WithRank(in, rank);
    if (!st.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": ", st.message()));
    }
  }
  return absl::OkStatus();
}

void SetAll(InferenceContext* c, const TensorShape& shape) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shape);
}

// LSTMBlockCell: x, cs_prev, h_prev, w rank 2; wci, wcf, wco, b rank 1.
absl::Status LstmCellRanks(InferenceContext* c, int first) {
  return Ranks(c, {{first, 2}, {first + 1, 2}, {first + 2, 2}, {first + 3, 2},
                   {first + 4, 1}, {first + 5, 1}, {first + 6, 1}, {first + 7, 1}});
}

absl::Status LstmCellShape(InferenceContext* c) {
  RETURN_IF_ERROR(LstmCellRanks(c, 0));
  SetAll(c, TensorShape({DimOf(c, 0, 0), DimOf(c, 1, 1)}));
  return absl::OkStatus();
}

absl::Status LstmCellGradShape(InferenceContext* c) {
  RETURN_IF_ERROR(LstmCellRanks(c, 0));
  const Dim batch = DimOf(c, 0, 0), cell = DimOf(c, 1, 1);
  c->set_output(0, TensorShape({batch, cell}));
  c->set_output(1, TensorShape({batch, Times(cell, 4)}));
  for (int i = 2; i < 5; ++i) c->set_output(i, TensorShape({cell}));
  return absl::OkStatus();
}

absl::Status BlockLstmShape(InferenceContext* c) {
  RETURN_IF_ERROR(Ranks(c, {{0, 0}, {1, 3}, {2, 2}, {3, 2}, {4, 2}, {5, 1}, {6, 1}, {7, 1},
                            {8, 1}}));
  const Dim b = DimOf(c, 8, 0);
  if (b != kUnknown && b % 4 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": b must have 4 * cell_size entries, got ", b));
  }
  SetAll(c, TensorShape({DimOf(c, 1, 0), DimOf(c, 1, 1), b == kUnknown ? kUnknown : b / 4}));
  return absl::OkStatus();
}

absl::Status BlockLstmGradShape(InferenceContext* c) {
  RETURN_IF_ERROR(Ranks(c, {{0, 0}, {1, 3}, {2, 2}, {3, 2}, {4, 2}, {5, 1}, {6, 1}, {7, 1},
                            {8, 1}}));
  for (int i = 0; i < 8; ++i) c->set_output(i, c->input(i + 1));
  return absl::OkStatus();
}

absl::Status GruCellShape(InferenceContext* c) {
  RETURN_IF_ERROR(Ranks(c, {{0, 2}, {1, 2}, {2, 2}, {3, 2}, {4, 1}, {5, 1}}));
  SetAll(c, TensorShape({DimOf(c, 0, 0), DimOf(c, 1, 1)}));
  return absl::OkStatus();
}

absl::Status GruCellGradShape(InferenceContext* c) {
  RETURN_IF_ERROR(Ranks(c, {{0, 2}, {1, 2}, {2, 2}, {3, 2}, {4, 1}, {5, 1}, {6, 2}, {7, 2},
                            {8, 2}, {9, 2}}));
  const Dim batch = DimOf(c, 0, 0), cell = DimOf(c, 1, 1);
  c->set_output(0, c->input(0));
  c->set_output(1, TensorShape({batch, cell}));
  c->set_output(2, TensorShape({batch, cell}));
  c->set_output(3, TensorShape({batch, DimOf(c, 2, 1)}));
  return absl::OkStatus();
}

OpDefBuilder& LstmInputs(OpDefBuilder& b) {
  for (const char* in : {"x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"}) {
    b.Input(absl::StrCat(in, ": T"));
  }
  return b;
}

OpDefBuilder& LstmOutputs(OpDefBuilder& b, bool forward) {
  for (const char* out : {"i", "cs", "f", "o", "ci", "co", "h"}) {
    if (forward) {
      b.Output(absl::StrCat(out, ": T"));
    } else {
      b.Input(absl::StrCat(out, ": T"));
    }
  }
  if (forward) {
    b.Attr("forget_bias: float = 1.0").Attr("cell_clip: float = 3.0");
    b.Attr("use_peephole: bool = false");
  }
  return b.Attr("T: {half, float}");
}

absl::Status RegisterLstmOps(OpRegistry* ops) {
  OpDefBuilder cell("LSTMBlockCell");
  LstmOutputs(LstmInputs(cell), true).SetShapeFn(LstmCellShape);
  RETURN_IF_ERROR(ops->Register(cell));

  OpDefBuilder cell_grad("LSTMBlockCellGrad");
  LstmInputs(cell_grad);
  for (const char* in : {"i", "cs", "f", "o", "ci", "co", "cs_grad", "h_grad"}) {
    cell_grad.Input(absl::StrCat(in, ": T"));
  }
  for (const char* out : {"cs_prev_grad", "dicfo", "wci_grad", "wcf_grad", "wco_grad"}) {
    cell_grad.Output(absl::StrCat(out, ": T"));
  }
  cell_grad.Attr("use_peephole: bool").Attr("T: {half, float}").SetShapeFn(LstmCellGradShape);
  RETURN_IF_ERROR(ops->Register(cell_grad));

  OpDefBuilder block("BlockLSTM");
  block.Input("seq_len_max: int64");
  LstmOutputs(LstmInputs(block), true).SetShapeFn(BlockLstmShape);
  RETURN_IF_ERROR(ops->Register(block));

  OpDefBuilder block_grad("BlockLSTMGrad");
  block_grad.Input("seq_len_max: int64");
  LstmOutputs(LstmInputs(block_grad), false);
  block_grad.Input("cs_grad: T").Input("h_grad: T");
  for (const char* out : {"x_grad", "cs_prev_grad", "h_prev_grad", "w_grad", "wci_grad",
                          "wcf_grad", "wco_grad", "b_grad"}) {
    block_grad.Output(absl::StrCat(out, ": T"));
  }
  block_grad.Attr("use_peephole: bool").SetShapeFn(BlockLstmGradShape);
  return ops->Register(block_grad);
}

absl::Status RegisterGruOps(OpRegistry* ops) {
  OpDefBuilder cell("GRUBlockCell");
  for (const char* in : {"x", "h_prev", "w_ru", "w_c", "b_ru", "b_c"}) {
    cell.Input(absl::StrCat(in, ": T"));
  }
  for (const char* out : {"r", "u", "c", "h"}) cell.Output(absl::StrCat(out, ": T"));
  cell.Attr("T: {float}").SetShapeFn(GruCellShape);
  RETURN_IF_ERROR(ops->Register(cell));

  OpDefBuilder grad("GRUBlockCellGrad");
  for (const char* in : {"x", "h_prev", "w_ru", "w_c", "b_ru", "b_c", "r", "u", "c", "d_h"}) {
    grad.Input(absl::StrCat(in, ": T"));
  }
  for (const char* out : {"d_x", "d_h_prev", "d_c_bar", "d_r_bar_u_bar"}) {
    grad.Output(absl::StrCat(out, ": T"));
  }
  grad.Attr("T: {float}").SetShapeFn(GruCellGradShape);
  return ops->Register(grad);
}

OpBuilder& AddInputs(OpBuilder& b, std::initializer_list<Input> inputs) {
  for (const Input& in : inputs) b.Input(in);
  return b;
}

OpBuilder& ForwardAttrs(OpBuilder& b, const ops::LSTMBlockCellAttrs& a) {
  return b.Attr("forget_bias", a.forget_bias)
      .Attr("cell_clip", a.cell_clip)
      .Attr("use_peephole", a.use_peephole);
}

ops::LSTMBlockOutputs LstmOutputsOf(const std::vector<Output>& o) {
  if (o.size() != 7) return {};
  return {o[0], o[1], o[2], o[3], o[4], o[5], o[6]};
}

}  // namespace

absl::Status RegisterRnnBlockOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterLstmOps(ops));
  return RegisterGruOps(ops);
}

namespace ops {

LSTMBlockOutputs LSTMBlockCell(const Scope& s, Input x, Input cs_prev, Input h_prev, Input w,
                               Input wci, Input wcf, Input wco, Input b,
                               const LSTMBlockCellAttrs& attrs, std::source_location loc) {
  OpBuilder op = s.Op("LSTMBlockCell", loc);
  AddInputs(op, {x, cs_prev, h_prev, w, wci, wcf, wco, b});
  return LstmOutputsOf(ForwardAttrs(op, attrs).FinalizeAll());
}

LSTMBlockOutputs BlockLSTM(const Scope& s, Input seq_len_max, Input x, Input cs_prev,
                           Input h_prev, Input w, Input wci, Input wcf, Input wco, Input b,
                           const LSTMBlockCellAttrs& attrs, std::source_location loc) {
  OpBuilder op = s.Op("BlockLSTM", loc);
  AddInputs(op, {seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b});
  return LstmOutputsOf(ForwardAttrs(op, attrs).FinalizeAll());
}

LSTMBlockCellGradOutputs LSTMBlockCellGrad(const Scope& s, Input x, Input cs_prev, Input h_prev,
                                           Input w, Input wci, Input wcf, Input wco, Input b,
                                           const LSTMBlockOutputs& f, Input cs_grad,
                                           Input h_grad, bool use_peephole,
                                           std::source_location loc) {
  OpBuilder op = s.Op("LSTMBlockCellGrad", loc);
  AddInputs(op, {x, cs_prev, h_prev, w, wci, wcf, wco, b, f.i, f.cs, f.f, f.o, f.ci, f.co,
                 cs_grad, h_grad});
  std::vector<Output> o = op.Attr("use_peephole", use_peephole).FinalizeAll();
  if (o.size() != 5) return {};
  return {o[0], o[1], o[2], o[3], o[4]};
}

BlockLSTMGradOutputs BlockLSTMGrad(const Scope& s, Input seq_len_max, Input x, Input cs_prev,
                                   Input h_prev, Input w, Input wci, Input wcf, Input wco, Input b,
                                   const LSTMBlockOutputs& f, Input cs_grad, Input h_grad,
                                   bool use_peephole, std::source_location loc) {
  OpBuilder op = s.Op("BlockLSTMGrad", loc);
  AddInputs(op, {seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, f.i, f.cs, f.f, f.o, f.ci,
                 f.co, f.h, cs_grad, h_grad});
  std::vector<Output> o = op.Attr("use_peephole", use_peephole).FinalizeAll();
  if (o.size() != 8) return {};
  return {o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]};
}

GRUBlockCellOutputs GRUBlockCell(const Scope& s, Input x, Input h_prev, Input w_ru, Input w_c,
                                 Input b_ru, Input b_c, std::source_location loc) {
  OpBuilder op = s.Op("GRUBlockCell", loc);
  std::vector<Output> o = AddInputs(op, {x, h_prev, w_ru, w_c, b_ru, b_c}).FinalizeAll();
  if (o.size() != 4) return {};
  return {o[0], o[1], o[2], o[3]};
}

GRUBlockCellGradOutputs GRUBlockCellGrad(const Scope& s, Input x, Input h_prev, Input w_ru,
                                         Input w_c, Input b_ru, Input b_c, Input r, Input u,
                                         Input c, Input d_h, std::source_location loc) {
  OpBuilder op = s.Op("GRUBlockCellGrad", loc);
  std::vector<Output> o =
      AddInputs(op, {x, h_prev, w_ru, w_c, b_ru, b_c, r, u, c, d_h}).FinalizeAll();
  if (o.size() != 4) return {};
  return {o[0], o[1], o[2], o[3]};
}

}  // namespace ops
}  // namespace sluice
