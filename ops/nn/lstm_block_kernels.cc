// CPU kernels (float) of LSTMBlockCell, LSTMBlockCellGrad, BlockLSTM and
// BlockLSTMGrad (ops/nn/rnn_block_ops.h). One cell step forward and backward is
// written once, on raw buffers, and BlockLSTM runs it per time step, as
// TensorFlow's lstm_ops.cc does. Gates are in TF's "icfo" column order.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/nn/internal/rnn_block_util.h"
#include "ops/nn/rnn_block_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::ExpectRank;
using internal::ExpectShape;
using internal::RnnGemm;
using internal::Sigmoid;

struct LstmDims {
  int64_t batch = 0, input = 0, cell = 0;
};

struct LstmAttrs {
  float forget_bias = 1.0f;
  float cell_clip = 3.0f;
  bool use_peephole = false;
};

// The weights, read from inputs first + 3 .. first + 7 (w, wci, wcf, wco, b).
struct LstmWeights {
  const float *w, *wci, *wcf, *wco, *b;
};

// One step's i, cs, f, o, ci, co, h, each [batch, cell].
template <typename P>
struct LstmStep {
  P i, cs, f, o, ci, co, h;
};

LstmWeights WeightsOf(const OpKernelContext* ctx, int first) {
  auto in = [&](int k) { return ctx->input(first + k).data<float>(); };
  return {in(3), in(4), in(5), in(6), in(7)};
}

// Checks x (rank x_rank; the last two dims are batch and input), cs_prev,
// h_prev, w, the peepholes and b, from input `first` on. The cell size is
// cs_prev's last dimension, as in TensorFlow.
absl::StatusOr<LstmDims> CheckLstmInputs(const OpKernelContext* ctx, int first, int x_rank) {
  const char* names[] = {"x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"};
  const int ranks[] = {x_rank, 2, 2, 2, 1, 1, 1, 1};
  for (int k = 0; k < 8; ++k) RETURN_IF_ERROR(ExpectRank(ctx, first + k, names[k], ranks[k]));
  const Tensor& x = ctx->input(first);
  LstmDims d{x.dim_size(x_rank - 2), x.dim_size(x_rank - 1), ctx->input(first + 1).dim_size(1)};
  RETURN_IF_ERROR(ExpectShape(ctx, first + 1, "cs_prev", {d.batch, d.cell}));
  RETURN_IF_ERROR(ExpectShape(ctx, first + 2, "h_prev", {d.batch, d.cell}));
  RETURN_IF_ERROR(ExpectShape(ctx, first + 3, "w (input_size + cell_size, 4 * cell_size)",
                              {d.input + d.cell, 4 * d.cell}));
  for (int k = 4; k < 7; ++k) RETURN_IF_ERROR(ExpectShape(ctx, first + k, names[k], {d.cell}));
  RETURN_IF_ERROR(ExpectShape(ctx, first + 7, "b (4 * cell_size)", {4 * d.cell}));
  return d;
}

// One forward step. xh [batch, input + cell] and gates [batch, 4 cell] are
// scratch.
void LstmForward(const LstmDims& d, const LstmAttrs& a, const float* x, const float* cs_prev,
                 const float* h_prev, const LstmWeights& wt, const LstmStep<float*>& out,
                 float* xh, float* gates) {
  const int64_t C = d.cell;
  internal::ConcatColumns(d.batch, x, d.input, h_prev, C, xh);
  RnnGemm(false, false, d.batch, 4 * C, d.input + C, xh, wt.w, gates);
  for (int64_t n = 0; n < d.batch; ++n) {
    const float* g = gates + n * 4 * C;
    for (int64_t c = 0; c < C; ++c) {
      const int64_t k = n * C + c;
      const float peep_i = a.use_peephole ? wt.wci[c] * cs_prev[k] : 0.0f;
      const float peep_f = a.use_peephole ? wt.wcf[c] * cs_prev[k] : 0.0f;
      out.i[k] = Sigmoid(g[c] + wt.b[c] + peep_i);
      out.ci[k] = std::tanh(g[C + c] + wt.b[C + c]);
      out.f[k] = Sigmoid(g[2 * C + c] + wt.b[2 * C + c] + a.forget_bias + peep_f);
      float cs = out.i[k] * out.ci[k] + out.f[k] * cs_prev[k];
      if (a.cell_clip > 0) cs = std::clamp(cs, -a.cell_clip, a.cell_clip);
      out.cs[k] = cs;
      out.co[k] = std::tanh(cs);
      const float peep_o = a.use_peephole ? wt.wco[c] * cs : 0.0f;
      out.o[k] = Sigmoid(g[3 * C + c] + wt.b[3 * C + c] + peep_o);
      out.h[k] = out.o[k] * out.co[k];
    }
  }
}

// One backward step through the gate arithmetic: dgates [batch, 4 cell]
// (icfo), cs_prev_grad, and the peephole gradients added to wc_grad[0..2]
// (wci, wcf, wco). The clip of cs is not differentiated, as in TensorFlow.
void LstmBackward(const LstmDims& d, bool peephole, const float* cs_prev, const LstmWeights& wt,
                  const LstmStep<const float*>& s, const float* cs_grad, const float* h_grad,
                  float* dgates, float* cs_prev_grad, float* const wc_grad[3]) {
  const int64_t C = d.cell;
  for (int64_t n = 0; n < d.batch; ++n) {
    float* dg = dgates + n * 4 * C;
    for (int64_t c = 0; c < C; ++c) {
      const int64_t k = n * C + c;
      const float d_o = s.o[k] * (1 - s.o[k]) * h_grad[k] * s.co[k];
      float dcs = (1 - s.co[k] * s.co[k]) * h_grad[k] * s.o[k] + cs_grad[k];
      if (peephole) dcs += d_o * wt.wco[c];
      const float dci = (1 - s.ci[k] * s.ci[k]) * dcs * s.i[k];
      const float df = s.f[k] * (1 - s.f[k]) * dcs * cs_prev[k];
      const float di = s.i[k] * (1 - s.i[k]) * dcs * s.ci[k];
      dg[c] = di;
      dg[C + c] = dci;
      dg[2 * C + c] = df;
      dg[3 * C + c] = d_o;
      cs_prev_grad[k] = dcs * s.f[k];
      if (peephole) {
        cs_prev_grad[k] += di * wt.wci[c] + df * wt.wcf[c];
        wc_grad[0][c] += di * cs_prev[k];
        wc_grad[1][c] += df * cs_prev[k];
        wc_grad[2][c] += d_o * s.cs[k];
      }
    }
  }
}

absl::StatusOr<LstmAttrs> ReadForwardAttrs(const OpKernelConstruction& ctx) {
  LstmAttrs a;
  ASSIGN_OR_RETURN(a.forget_bias, ctx.GetAttr<float>("forget_bias"));
  ASSIGN_OR_RETURN(a.cell_clip, ctx.GetAttr<float>("cell_clip"));
  ASSIGN_OR_RETURN(a.use_peephole, ctx.GetAttr<bool>("use_peephole"));
  return a;
}

// Allocates the outputs [first, first + 7) with `shape`, zero-filled.
absl::StatusOr<LstmStep<float*>> AllocateSteps(OpKernelContext* ctx, const TensorShape& shape) {
  float* p[7];
  for (int k = 0; k < 7; ++k) {
    ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(k, shape));
    p[k] = t->data<float>();
    std::fill(p[k], p[k] + t->NumElements(), 0.0f);
  }
  return LstmStep<float*>{p[0], p[1], p[2], p[3], p[4], p[5], p[6]};
}

// The inputs [first, first + 6) as one step of i, cs, f, o, ci, co, shifted by
// `offset` elements (h is not read by the backward pass).
LstmStep<const float*> StepOf(const OpKernelContext* ctx, int first, int64_t offset) {
  auto in = [&](int k) { return ctx->input(first + k).data<float>() + offset; };
  return {in(0), in(1), in(2), in(3), in(4), in(5), nullptr};
}

template <typename P>
LstmStep<P> Shift(const LstmStep<P>& s, int64_t offset) {
  return {s.i + offset, s.cs + offset, s.f + offset, s.o + offset,
          s.ci + offset, s.co + offset, s.h + offset};
}

class LstmBlockCellOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, ReadForwardAttrs(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(LstmDims d, CheckLstmInputs(ctx, 0, 2));
    if (d.batch == 0 || d.cell == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cs_prev is empty, has shape ", ctx->input(1).shape().DebugString()));
    }
    ASSIGN_OR_RETURN(LstmStep<float*> out, AllocateSteps(ctx, TensorShape({d.batch, d.cell})));
    std::vector<float> xh(d.batch * (d.input + d.cell)), gates(d.batch * 4 * d.cell);
    LstmForward(d, attrs_, ctx->input(0).data<float>(), ctx->input(1).data<float>(),
                ctx->input(2).data<float>(), WeightsOf(ctx, 0), out, xh.data(), gates.data());
    return absl::OkStatus();
  }

 private:
  LstmAttrs attrs_;
};

// Inputs: the 8 cell inputs, i, cs, f, o, ci, co, cs_grad, h_grad.
class LstmBlockCellGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(peephole_, ctx.GetAttr<bool>("use_peephole"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(LstmDims d, CheckLstmInputs(ctx, 0, 2));
    const char* names[] = {"i", "cs", "f", "o", "ci", "co", "cs_grad", "h_grad"};
    for (int k = 0; k < 8; ++k) {
      RETURN_IF_ERROR(ExpectShape(ctx, 8 + k, names[k], {d.batch, d.cell}));
    }
    ASSIGN_OR_RETURN(Tensor * cs_prev_grad, ctx->allocate_output(0, {d.batch, d.cell}));
    ASSIGN_OR_RETURN(Tensor * dicfo, ctx->allocate_output(1, {d.batch, 4 * d.cell}));
    float* wc_grad[3];
    for (int k = 0; k < 3; ++k) {
      ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(2 + k, {d.cell}));
      wc_grad[k] = t->data<float>();
      std::fill(wc_grad[k], wc_grad[k] + d.cell, 0.0f);
    }
    LstmBackward(d, peephole_, ctx->input(1).data<float>(), WeightsOf(ctx, 0), StepOf(ctx, 8, 0),
                 ctx->input(14).data<float>(), ctx->input(15).data<float>(),
                 dicfo->data<float>(), cs_prev_grad->data<float>(), wc_grad);
    return absl::OkStatus();
  }

 private:
  bool peephole_ = false;
};

absl::StatusOr<int64_t> SeqLenMax(const OpKernelContext* ctx, int64_t time) {
  RETURN_IF_ERROR(ExpectRank(ctx, 0, "seq_len_max", 0));
  const int64_t len = *ctx->input(0).data<int64_t>();
  if (len < 0 || len > time) {
    return absl::InvalidArgumentError(
        absl::StrCat("seq_len_max must be between 0 and ", time, " but is ", len));
  }
  return len;
}

// Inputs: seq_len_max, then the 8 cell inputs with x [time, batch, input].
class BlockLstmOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, ReadForwardAttrs(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(LstmDims d, CheckLstmInputs(ctx, 1, 3));
    const int64_t time = ctx->input(1).dim_size(0);
    ASSIGN_OR_RETURN(int64_t len, SeqLenMax(ctx, time));
    ASSIGN_OR_RETURN(LstmStep<float*> out,
                     AllocateSteps(ctx, TensorShape({time, d.batch, d.cell})));
    std::vector<float> xh(d.batch * (d.input + d.cell)), gates(d.batch * 4 * d.cell);
    const int64_t step = d.batch * d.cell;
    const float* x = ctx->input(1).data<float>();
    const float* cs_prev = ctx->input(2).data<float>();
    const float* h_prev = ctx->input(3).data<float>();
    for (int64_t t = 0; t < len; ++t) {
      const LstmStep<float*> now = Shift(out, t * step);
      LstmForward(d, attrs_, x + t * d.batch * d.input, cs_prev, h_prev, WeightsOf(ctx, 1), now,
                  xh.data(), gates.data());
      cs_prev = now.cs;
      h_prev = now.h;
    }
    return absl::OkStatus();  // steps from len on stay zero
  }

 private:
  LstmAttrs attrs_;
};

// Inputs: seq_len_max, the 8 cell inputs, i, cs, f, o, ci, co, h (each
// [time, batch, cell]), cs_grad, h_grad. Runs the steps backwards, carrying
// the gradients of cs and h into the step before.
class BlockLstmGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(peephole_, ctx.GetAttr<bool>("use_peephole"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(LstmDims d, CheckLstmInputs(ctx, 1, 3));
    const int64_t time = ctx->input(1).dim_size(0);
    const char* names[] = {"i", "cs", "f", "o", "ci", "co", "h", "cs_grad", "h_grad"};
    for (int k = 0; k < 9; ++k) {
      RETURN_IF_ERROR(ExpectShape(ctx, 9 + k, names[k], {time, d.batch, d.cell}));
    }
    ASSIGN_OR_RETURN(int64_t len, SeqLenMax(ctx, time));
    float* g[8];
    for (int k = 0; k < 8; ++k) {
      ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(k, ctx->input(1 + k).shape()));
      g[k] = t->data<float>();
      std::fill(g[k], g[k] + t->NumElements(), 0.0f);
    }
    Backward(ctx, d, len, g);
    return absl::OkStatus();
  }

 private:
  // g: x_grad, cs_prev_grad, h_prev_grad, w_grad, wci_grad, wcf_grad,
  // wco_grad, b_grad, zero on entry; cs_prev_grad and h_prev_grad carry the
  // gradients between steps.
  void Backward(OpKernelContext* ctx, const LstmDims& d, int64_t len, float* const g[8]) const {
    const int64_t C = d.cell, xh_cols = d.input + C, step = d.batch * C;
    const LstmWeights wt = WeightsOf(ctx, 1);
    std::vector<float> xh(d.batch * xh_cols), xh_grad(d.batch * xh_cols);
    std::vector<float> dgates(d.batch * 4 * C), cs_grad(step), h_grad(step);
    float* const wc_grad[3] = {g[4], g[5], g[6]};
    for (int64_t t = len - 1; t >= 0; --t) {
      const int64_t off = t * step;
      const float* cs_prev = t == 0 ? ctx->input(2).data<float>() : StepOf(ctx, 9, off - step).cs;
      const float* h_prev = t == 0 ? ctx->input(3).data<float>()
                                   : ctx->input(15).data<float>() + off - step;
      for (int64_t k = 0; k < step; ++k) {
        cs_grad[k] = ctx->input(16).data<float>()[off + k] + g[1][k];
        h_grad[k] = ctx->input(17).data<float>()[off + k] + g[2][k];
      }
      LstmBackward(d, peephole_, cs_prev, wt, StepOf(ctx, 9, off), cs_grad.data(), h_grad.data(),
                   dgates.data(), g[1], wc_grad);
      // xh_grad = dgates w^T: its columns are x_grad[t] and the carried h grad.
      RnnGemm(false, true, d.batch, xh_cols, 4 * C, dgates.data(), wt.w, xh_grad.data());
      for (int64_t n = 0; n < d.batch; ++n) {
        const float* row = xh_grad.data() + n * xh_cols;
        std::copy(row, row + d.input, g[0] + t * d.batch * d.input + n * d.input);
        std::copy(row + d.input, row + xh_cols, g[2] + n * C);
      }
      // w_grad += xh^T dgates; b_grad += column sums of dgates.
      internal::ConcatColumns(d.batch, ctx->input(1).data<float>() + t * d.batch * d.input,
                              d.input, h_prev, C, xh.data());
      RnnGemm(true, false, xh_cols, 4 * C, d.batch, xh.data(), dgates.data(), g[3], true);
      for (int64_t n = 0; n < d.batch; ++n) {
        for (int64_t c = 0; c < 4 * C; ++c) g[7][c] += dgates[n * 4 * C + c];
      }
    }
  }

  bool peephole_ = false;
};

}  // namespace

void RegisterLstmBlockKernels(KernelRegistry* k) {
  auto def = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT);
  };
  k->Register<LstmBlockCellOp>(def("LSTMBlockCell"));
  k->Register<LstmBlockCellGradOp>(def("LSTMBlockCellGrad"));
  k->Register<BlockLstmOp>(def("BlockLSTM"));
  k->Register<BlockLstmGradOp>(def("BlockLSTMGrad"));
}

}  // namespace sluice
