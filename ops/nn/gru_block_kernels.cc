// CPU kernels (float) of GRUBlockCell and GRUBlockCellGrad
// (ops/nn/rnn_block_ops.h), the arithmetic of TensorFlow's gru_ops.h.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/status_macros.h"
#include "ops/nn/internal/rnn_block_util.h"
#include "ops/nn/rnn_block_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::ExpectRank;
using internal::ExpectShape;
using internal::RnnGemm;

struct GruDims {
  int64_t batch = 0, input = 0, cell = 0;
};

// Checks x, h_prev, w_ru, w_c, b_ru, b_c; the cell size is h_prev's last
// dimension, as in TensorFlow.
absl::StatusOr<GruDims> CheckGruInputs(const OpKernelContext* ctx) {
  const char* names[] = {"x", "h_prev", "w_ru", "w_c", "b_ru", "b_c"};
  const int ranks[] = {2, 2, 2, 2, 1, 1};
  for (int k = 0; k < 6; ++k) RETURN_IF_ERROR(ExpectRank(ctx, k, names[k], ranks[k]));
  const GruDims d{ctx->input(0).dim_size(0), ctx->input(0).dim_size(1),
                  ctx->input(1).dim_size(1)};
  RETURN_IF_ERROR(ExpectShape(ctx, 1, "h_prev", {d.batch, d.cell}));
  RETURN_IF_ERROR(ExpectShape(ctx, 2, "w_ru (input_size + cell_size, 2 * cell_size)",
                              {d.input + d.cell, 2 * d.cell}));
  RETURN_IF_ERROR(ExpectShape(ctx, 3, "w_c (input_size + cell_size, cell_size)",
                              {d.input + d.cell, d.cell}));
  RETURN_IF_ERROR(ExpectShape(ctx, 4, "b_ru (2 * cell_size)", {2 * d.cell}));
  RETURN_IF_ERROR(ExpectShape(ctx, 5, "b_c (cell_size)", {d.cell}));
  return d;
}

// Outputs r, u, c, h.
class GruBlockCellOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(GruDims d, CheckGruInputs(ctx));
    float* out[4];
    for (int k = 0; k < 4; ++k) {
      ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(k, {d.batch, d.cell}));
      out[k] = t->data<float>();
    }
    const int64_t C = d.cell, cols = d.input + C;
    const float* x = ctx->input(0).data<float>();
    const float* h_prev = ctx->input(1).data<float>();
    const float* b_ru = ctx->input(4).data<float>();
    const float* b_c = ctx->input(5).data<float>();
    std::vector<float> xh(d.batch * cols), ru(d.batch * 2 * C), hr(d.batch * C);
    internal::ConcatColumns(d.batch, x, d.input, h_prev, C, xh.data());
    RnnGemm(false, false, d.batch, 2 * C, cols, xh.data(), ctx->input(2).data<float>(), ru.data());
    for (int64_t n = 0; n < d.batch; ++n) {
      for (int64_t c = 0; c < C; ++c) {
        const int64_t k = n * C + c;
        out[0][k] = internal::Sigmoid(ru[n * 2 * C + c] + b_ru[c]);
        out[1][k] = internal::Sigmoid(ru[n * 2 * C + C + c] + b_ru[C + c]);
        hr[k] = h_prev[k] * out[0][k];
      }
    }
    internal::ConcatColumns(d.batch, x, d.input, hr.data(), C, xh.data());
    RnnGemm(false, false, d.batch, C, cols, xh.data(), ctx->input(3).data<float>(), out[2]);
    for (int64_t k = 0; k < d.batch * C; ++k) {
      const float c = std::tanh(out[2][k] + b_c[k % C]);
      out[2][k] = c;
      out[3][k] = out[1][k] * (h_prev[k] - c) + c;
    }
    return absl::OkStatus();
  }
};

// Inputs: the 6 cell inputs, r, u, c, d_h. Outputs d_x, d_h_prev, d_c_bar,
// d_r_bar_u_bar.
class GruBlockCellGradOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(GruDims d, CheckGruInputs(ctx));
    const char* names[] = {"r", "u", "c", "d_h"};
    for (int k = 0; k < 4; ++k) {
      RETURN_IF_ERROR(ExpectShape(ctx, 6 + k, names[k], {d.batch, d.cell}));
    }
    const int64_t C = d.cell, cols = d.input + C;
    ASSIGN_OR_RETURN(Tensor * d_x, ctx->allocate_output(0, {d.batch, d.input}));
    ASSIGN_OR_RETURN(Tensor * d_h_prev, ctx->allocate_output(1, {d.batch, C}));
    ASSIGN_OR_RETURN(Tensor * d_c_bar, ctx->allocate_output(2, {d.batch, C}));
    ASSIGN_OR_RETURN(Tensor * d_ru_bar, ctx->allocate_output(3, {d.batch, 2 * C}));
    const float* h_prev = ctx->input(1).data<float>();
    const float* r = ctx->input(6).data<float>();
    const float* u = ctx->input(7).data<float>();
    const float* c = ctx->input(8).data<float>();
    const float* d_h = ctx->input(9).data<float>();
    float* dc = d_c_bar->data<float>();
    float* dru = d_ru_bar->data<float>();
    for (int64_t n = 0; n < d.batch; ++n) {
      for (int64_t j = 0; j < C; ++j) {
        const int64_t k = n * C + j;
        dc[k] = d_h[k] * (1 - u[k]) * (1 - c[k] * c[k]);
        dru[n * 2 * C + C + j] = d_h[k] * (h_prev[k] - c[k]) * u[k] * (1 - u[k]);
      }
    }
    // [d_x part 2, d(r * h_prev)] = d_c_bar w_c^T.
    std::vector<float> via_c(d.batch * cols), via_ru(d.batch * cols);
    RnnGemm(false, true, d.batch, cols, C, dc, ctx->input(3).data<float>(), via_c.data());
    for (int64_t n = 0; n < d.batch; ++n) {
      for (int64_t j = 0; j < C; ++j) {
        const int64_t k = n * C + j;
        const float d_hr = via_c[n * cols + d.input + j];
        dru[n * 2 * C + j] = d_hr * h_prev[k] * r[k] * (1 - r[k]);
      }
    }
    // [d_x part 1, d_h_prev part 1] = d_r_bar_u_bar w_ru^T.
    RnnGemm(false, true, d.batch, cols, 2 * C, dru, ctx->input(2).data<float>(), via_ru.data());
    float* dx = d_x->data<float>();
    float* dh = d_h_prev->data<float>();
    for (int64_t n = 0; n < d.batch; ++n) {
      for (int64_t i = 0; i < d.input; ++i) {
        dx[n * d.input + i] = via_c[n * cols + i] + via_ru[n * cols + i];
      }
      for (int64_t j = 0; j < C; ++j) {
        const int64_t k = n * C + j;
        dh[k] = via_ru[n * cols + d.input + j] + via_c[n * cols + d.input + j] * r[k] +
                d_h[k] * u[k];
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterGruBlockKernels(KernelRegistry* k) {
  k->Register<GruBlockCellOp>(
      KernelDef("GRUBlockCell", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  k->Register<GruBlockCellGradOp>(
      KernelDef("GRUBlockCellGrad", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
}

}  // namespace sluice
