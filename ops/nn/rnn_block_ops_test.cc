// LSTMBlockCell, BlockLSTM, GRUBlockCell and their backward ops: values
// against the recurrences of TensorFlow's lstm_ops.cc / gru_ops.h written out
// here in double (the formulas tensorflow/python/kernel_tests/rnn/
// lstm_ops_test.py and gru_ops_test.py compare with), BlockLSTM against a
// chain of LSTMBlockCells, gradients by central differences, and bad inputs.
// Float only: TensorFlow registers these kernels for float on the CPU.
#include "ops/nn/rnn_block_ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Feeds;
using testing_util::Placeholder;
using testing_util::TryEval;

using Vec = std::vector<double>;

std::vector<float> Floats(const Vec& v) { return std::vector<float>(v.begin(), v.end()); }
Tensor F(const Vec& v, const TensorShape& shape) {
  return Tensor::FromVector<float>(Floats(v), shape);
}
Vec Rand(int64_t n, uint64_t seed, double scale = 1) {
  Vec v = testing_util::Values(n, seed);
  for (double& x : v) x *= scale;
  return v;
}
double Sig(double v) { return 1 / (1 + std::exp(-v)); }

// ---- LSTM ----------------------------------------------------------------

struct LstmCase {
  int64_t B = 2, I = 3, C = 4;
  Vec x, cs_prev, h_prev, w, wci, wcf, wco, b;
  LstmCase(uint64_t seed, double state_scale = 1) {
    x = Rand(B * I, seed);
    cs_prev = Rand(B * C, seed + 1, state_scale);
    h_prev = Rand(B * C, seed + 2);
    w = Rand((I + C) * 4 * C, seed + 3, 0.5);
    wci = Rand(C, seed + 4);
    wcf = Rand(C, seed + 5);
    wco = Rand(C, seed + 6);
    b = Rand(4 * C, seed + 7, 0.5);
  }
};

// i, cs, f, o, ci, co, h for one step; gate columns in icfo order.
std::vector<Vec> LstmRef(const LstmCase& k, const Vec& x, const Vec& cs_prev, const Vec& h_prev,
                         const ops::LSTMBlockCellAttrs& a) {
  const int64_t B = k.B, I = k.I, C = k.C;
  std::vector<Vec> out(7, Vec(B * C));
  for (int64_t n = 0; n < B; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      double g[4];
      for (int q = 0; q < 4; ++q) {
        g[q] = k.b[q * C + c];
        for (int64_t j = 0; j < I + C; ++j) {
          const double xh = j < I ? x[n * I + j] : h_prev[n * C + j - I];
          g[q] += xh * k.w[j * 4 * C + q * C + c];
        }
      }
      const int64_t e = n * C + c;
      const double p = a.use_peephole ? 1 : 0;
      const double i = Sig(g[0] + p * k.wci[c] * cs_prev[e]);
      const double ci = std::tanh(g[1]);
      const double f = Sig(g[2] + a.forget_bias + p * k.wcf[c] * cs_prev[e]);
      double cs = i * ci + f * cs_prev[e];
      if (a.cell_clip > 0) cs = std::clamp<double>(cs, -a.cell_clip, a.cell_clip);
      const double o = Sig(g[3] + p * k.wco[c] * cs);
      const double co = std::tanh(cs);
      const double values[7] = {i, cs, f, o, ci, co, o * co};
      for (int v = 0; v < 7; ++v) out[v][e] = values[v];
    }
  }
  return out;
}

// Placeholders for the eight cell inputs and their values.
struct LstmGraph {
  Output x, cs_prev, h_prev, w, wci, wcf, wco, b;
  Feeds feeds;
  LstmGraph(const Scope& s, const LstmCase& k, int x_rank = 2, int64_t T = 1) {
    Output* p[] = {&x, &cs_prev, &h_prev, &w, &wci, &wcf, &wco, &b};
    for (Output* o : p) *o = Placeholder(s, DT_FLOAT);
    const TensorShape x_shape = x_rank == 2 ? TensorShape({k.B, k.I}) : TensorShape({T, k.B, k.I});
    feeds = {{x, F(x_rank == 2 ? k.x : Rand(T * k.B * k.I, 99), x_shape)},
             {cs_prev, F(k.cs_prev, {k.B, k.C})},
             {h_prev, F(k.h_prev, {k.B, k.C})},
             {w, F(k.w, {k.I + k.C, 4 * k.C})},
             {wci, F(k.wci, {k.C})},
             {wcf, F(k.wcf, {k.C})},
             {wco, F(k.wco, {k.C})},
             {b, F(k.b, {4 * k.C})}};
  }
  ops::LSTMBlockOutputs Cell(const Scope& s, const ops::LSTMBlockCellAttrs& a) const {
    return ops::LSTMBlockCell(s, x, cs_prev, h_prev, w, wci, wcf, wco, b, a);
  }
  ops::LSTMBlockOutputs Block(const Scope& s, Input len, const ops::LSTMBlockCellAttrs& a) const {
    return ops::BlockLSTM(s, len, x, cs_prev, h_prev, w, wci, wcf, wco, b, a);
  }
  std::vector<Output> Xs() const { return {x, cs_prev, h_prev, w, wci, wcf, wco, b}; }
  std::vector<Tensor> Values() const {
    std::vector<Tensor> v;
    for (const auto& f : feeds) v.push_back(f.second);
    return v;
  }
};

std::vector<Output> All(const ops::LSTMBlockOutputs& o) {
  return {o.i, o.cs, o.f, o.o, o.ci, o.co, o.h};
}

TEST(LstmBlockCellTest, MatchesTheRecurrence) {
  // cs_prev up to 4 in size, so that a cell_clip of 3 changes some cs.
  const LstmCase k(7, 4.0);
  const ops::LSTMBlockCellAttrs cases[] = {
      {}, {.forget_bias = 0.5f, .cell_clip = -1, .use_peephole = true},
      {.forget_bias = 1.0f, .cell_clip = 1.5f, .use_peephole = true},
      {.forget_bias = 0.0f, .cell_clip = 0, .use_peephole = false}};
  bool clipped = false, unclipped_beyond = false;
  for (const ops::LSTMBlockCellAttrs& a : cases) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    LstmGraph g(s, k);
    const std::vector<Vec> want = LstmRef(k, k.x, k.cs_prev, k.h_prev, a);
    const std::vector<Output> got = All(g.Cell(s, a));
    for (int v = 0; v < 7; ++v) {
      ExpectTensor<float>(Eval(s, g.feeds, got[v]), {k.B, k.C}, Floats(want[v]), 1e-5);
    }
    for (double cs : want[1]) {
      if (a.cell_clip > 0 && std::abs(cs) == a.cell_clip) clipped = true;
      if (a.cell_clip <= 0 && std::abs(cs) > 3) unclipped_beyond = true;
    }
  }
  EXPECT_TRUE(clipped) << "no case exercised the clip";
  EXPECT_TRUE(unclipped_beyond) << "no case went past the default clip without clipping";
}

TEST(LstmBlockCellTest, ShapeFunction) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const LstmCase k(1);
  Output x = ops::Const(s, F(k.x, {k.B, k.I}));
  Output st = ops::Const(s, F(k.cs_prev, {k.B, k.C}));
  Output w = ops::Const(s, F(k.w, {k.I + k.C, 4 * k.C}));
  Output p = ops::Const(s, F(k.wci, {k.C}));
  Output b = ops::Const(s, F(k.b, {4 * k.C}));
  ops::LSTMBlockOutputs o = ops::LSTMBlockCell(s, x, st, st, w, p, p, p, b);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(o.h.node->output_shape(6), TensorShape({k.B, k.C}));
  ops::LSTMBlockCell(s, b, st, st, w, p, p, p, b);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("LSTMBlockCell"));
}

TEST(LstmBlockCellTest, Gradients) {
  const LstmCase k(11);
  for (const ops::LSTMBlockCellAttrs& a :
       {ops::LSTMBlockCellAttrs{.cell_clip = -1, .use_peephole = true},
        ops::LSTMBlockCellAttrs{.forget_bias = 0.5f, .use_peephole = false}}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    LstmGraph g(s, k);
    ops::LSTMBlockOutputs o = g.Cell(s, a);
    // Both outputs TF differentiates, and each alone (the other's gradient
    // then enters as zeros).
    for (Output y : {ops::ConcatV2(s, {Input(o.cs), Input(o.h)}, 0), o.cs, o.h}) {
      absl::StatusOr<double> err = MaxGradientError(s, g.Xs(), g.Values(), y, 5e-3);
      ASSERT_TRUE(err.ok()) << err.status();
      EXPECT_LT(*err, 2e-3) << "peephole " << a.use_peephole;
    }
  }
}

TEST(LstmBlockCellTest, BadInputs) {
  const LstmCase k(3);
  struct Bad {
    int input;
    Tensor value;
    const char* message;
  } bad[] = {
      {0, F(k.x, {k.B * k.I}), "x must be rank 2"},
      {1, F(Rand(3 * k.C, 1), {3, k.C}), "cs_prev must have shape [2,4]"},
      {2, F(Rand(k.B * 3, 1), {k.B, 3}), "h_prev must have shape [2,4]"},
      {3, F(Rand((k.I + k.C) * 4 * k.C - 4 * k.C, 1), {k.I + k.C - 1, 4 * k.C}),
       "w (input_size + cell_size, 4 * cell_size) must have shape [7,16]"},
      {5, F(Rand(3, 1), {3}), "wcf must have shape [4]"},
      {7, F(Rand(k.C, 1), {k.C}), "b (4 * cell_size) must have shape [16]"},
      {1, F({}, {k.B, 0}), "must have shape"},
  };
  for (const Bad& c : bad) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    LstmGraph g(s, k);
    g.feeds[c.input].second = c.value;
    absl::Status st = TryEval(s, g.feeds, g.Cell(s, {}).h).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(st.message(), HasSubstr(c.message));
    EXPECT_THAT(st.message(), HasSubstr("LSTMBlockCell"));
  }
  // An empty state, as TensorFlow rejects it.
  Scope s = Scope::NewRootScope(BuiltinOps());
  LstmGraph g(s, k);
  g.feeds[0].second = F({}, {0, k.I});
  g.feeds[1].second = F({}, {0, k.C});
  g.feeds[2].second = F({}, {0, k.C});
  EXPECT_THAT(TryEval(s, g.feeds, g.Cell(s, {}).h).status().message(), HasSubstr("empty"));
}

TEST(LstmBlockCellGradTest, BadInputs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const LstmCase k(3);
  LstmGraph g(s, k);
  ops::LSTMBlockOutputs o = g.Cell(s, {});
  Output wrong = ops::Const(s, F(Rand(k.C, 2), {1, k.C}));
  ops::LSTMBlockCellGradOutputs d = ops::LSTMBlockCellGrad(
      s, g.x, g.cs_prev, g.h_prev, g.w, g.wci, g.wcf, g.wco, g.b, o, o.cs, wrong, false);
  absl::Status st = TryEval(s, g.feeds, d.dicfo).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("h_grad must have shape [2,4]"));
}

// ---- BlockLSTM -----------------------------------------------------------

TEST(BlockLstmTest, EqualsTheCellStepByStepAndZerosPastSeqLenMax) {
  const LstmCase k(21);
  const int64_t T = 4, len = 3;
  for (const ops::LSTMBlockCellAttrs& a :
       {ops::LSTMBlockCellAttrs{},
        ops::LSTMBlockCellAttrs{.cell_clip = 0.5f, .use_peephole = true}}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    LstmGraph g(s, k, 3, T);
    const std::vector<Output> block = All(g.Block(s, int64_t{len}, a));
    // The chain: step t reads x[t] and the previous step's cs and h.
    const Tensor x_all = g.feeds[0].second;
    const std::vector<float> xs(x_all.flat<float>().begin(), x_all.flat<float>().end());
    Output cs = g.cs_prev, h = g.h_prev;
    std::vector<std::vector<Output>> steps;
    for (int64_t t = 0; t < len; ++t) {
      std::vector<float> xt(xs.begin() + t * k.B * k.I, xs.begin() + (t + 1) * k.B * k.I);
      Output x_t = ops::Const(s, Tensor::FromVector<float>(xt, {k.B, k.I}));
      steps.push_back(
          All(ops::LSTMBlockCell(s, x_t, cs, h, g.w, g.wci, g.wcf, g.wco, g.b, a)));
      cs = steps.back()[1];
      h = steps.back()[6];
    }
    for (int v = 0; v < 7; ++v) {
      std::vector<float> want;
      for (int64_t t = 0; t < len; ++t) {
        Tensor step = Eval(s, g.feeds, steps[t][v]);
        want.insert(want.end(), step.flat<float>().begin(), step.flat<float>().end());
      }
      want.resize(T * k.B * k.C, 0.0f);  // past seq_len_max
      ExpectTensor<float>(Eval(s, g.feeds, block[v]), {T, k.B, k.C}, want, 1e-6);
    }
  }
}

TEST(BlockLstmTest, SeqLenMaxZeroGivesZeros) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const LstmCase k(5);
  LstmGraph g(s, k, 3, 2);
  ExpectTensor<float>(Eval(s, g.feeds, g.Block(s, int64_t{0}, {}).h), {2, k.B, k.C},
                      std::vector<float>(2 * k.B * k.C, 0.0f));
}

TEST(BlockLstmTest, Gradients) {
  const LstmCase k(31);
  for (const ops::LSTMBlockCellAttrs& a :
       {ops::LSTMBlockCellAttrs{.cell_clip = -1, .use_peephole = true},
        ops::LSTMBlockCellAttrs{.forget_bias = 0.3f, .use_peephole = false}}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    LstmGraph g(s, k, 3, 3);
    ops::LSTMBlockOutputs o = g.Block(s, int64_t{2}, a);
    for (Output y : {ops::ConcatV2(s, {Input(o.cs), Input(o.h)}, 0), o.h}) {
      absl::StatusOr<double> err = MaxGradientError(s, g.Xs(), g.Values(), y, 5e-3);
      ASSERT_TRUE(err.ok()) << err.status();
      EXPECT_LT(*err, 2e-3) << "peephole " << a.use_peephole;
    }
  }
}

TEST(BlockLstmTest, BadInputs) {
  const LstmCase k(3);
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    LstmGraph g(s, k, 3, 2);
    for (int64_t len : {int64_t{3}, int64_t{-1}}) {
      absl::Status st = TryEval(s, g.feeds, g.Block(s, len, {}).h).status();
      EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(st.message(), HasSubstr("seq_len_max must be between 0 and 2"));
    }
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  LstmGraph g(s, k, 3, 2);
  g.feeds[0].second = F(k.x, {k.B, k.I});
  absl::Status st = TryEval(s, g.feeds, g.Block(s, int64_t{1}, {}).h).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("x must be rank 3"));
  Output len = Placeholder(s, DT_INT64);
  g.feeds[0].second = F(Rand(2 * k.B * k.I, 1), {2, k.B, k.I});
  g.feeds.push_back({len, Tensor::FromVector<int64_t>({1, 1}, {2})});
  st = TryEval(s, g.feeds, g.Block(s, len, {}).h).status();
  EXPECT_THAT(st.message(), HasSubstr("seq_len_max must be rank 0"));
}

// ---- GRU -----------------------------------------------------------------

struct GruCase {
  int64_t B = 2, I = 3, C = 4;
  Vec x = Rand(B * I, 1), h_prev = Rand(B * C, 2), w_ru = Rand((I + C) * 2 * C, 3),
      w_c = Rand((I + C) * C, 4), b_ru = Rand(2 * C, 5), b_c = Rand(C, 6);
};

// r, u, c, h.
std::vector<Vec> GruRef(const GruCase& k) {
  const int64_t B = k.B, I = k.I, C = k.C;
  std::vector<Vec> out(4, Vec(B * C));
  for (int64_t n = 0; n < B; ++n) {
    auto xh = [&](int64_t j, bool gated) {
      if (j < I) return k.x[n * I + j];
      return k.h_prev[n * C + j - I] * (gated ? out[0][n * C + j - I] : 1.0);
    };
    for (int64_t c = 0; c < 2 * C; ++c) {
      double v = k.b_ru[c];
      for (int64_t j = 0; j < I + C; ++j) v += xh(j, false) * k.w_ru[j * 2 * C + c];
      out[c < C ? 0 : 1][n * C + c % C] = Sig(v);
    }
    for (int64_t c = 0; c < C; ++c) {
      double v = k.b_c[c];
      for (int64_t j = 0; j < I + C; ++j) v += xh(j, true) * k.w_c[j * C + c];
      const int64_t e = n * C + c;
      out[2][e] = std::tanh(v);
      out[3][e] = out[1][e] * k.h_prev[e] + (1 - out[1][e]) * out[2][e];
    }
  }
  return out;
}

struct GruGraph {
  Output in[6];
  Feeds feeds;
  GruGraph(const Scope& s, const GruCase& k) {
    const Vec* v[] = {&k.x, &k.h_prev, &k.w_ru, &k.w_c, &k.b_ru, &k.b_c};
    const TensorShape shapes[] = {{k.B, k.I},          {k.B, k.C},     {k.I + k.C, 2 * k.C},
                                  {k.I + k.C, k.C}, {2 * k.C}, {k.C}};
    for (int i = 0; i < 6; ++i) {
      in[i] = Placeholder(s, DT_FLOAT);
      feeds.push_back({in[i], F(*v[i], shapes[i])});
    }
  }
  ops::GRUBlockCellOutputs Cell(const Scope& s) const {
    return ops::GRUBlockCell(s, in[0], in[1], in[2], in[3], in[4], in[5]);
  }
};

TEST(GruBlockCellTest, MatchesTheRecurrence) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const GruCase k;
  GruGraph g(s, k);
  ops::GRUBlockCellOutputs o = g.Cell(s);
  const std::vector<Vec> want = GruRef(k);
  const Output got[] = {o.r, o.u, o.c, o.h};
  for (int v = 0; v < 4; ++v) {
    ExpectTensor<float>(Eval(s, g.feeds, got[v]), {k.B, k.C}, Floats(want[v]), 1e-5);
  }
}

TEST(GruBlockCellTest, Gradients) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const GruCase k;
  GruGraph g(s, k);
  std::vector<Output> xs(g.in, g.in + 6);
  std::vector<Tensor> values;
  for (const auto& f : g.feeds) values.push_back(f.second);
  absl::StatusOr<double> err = MaxGradientError(s, xs, values, g.Cell(s).h, 5e-3);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 2e-3);
}

TEST(GruBlockCellTest, BadInputs) {
  const GruCase k;
  struct Bad {
    int input;
    Tensor value;
    const char* message;
  } bad[] = {
      {0, F(k.x, {k.B * k.I}), "x must be rank 2"},
      {1, F(Rand(3 * k.C, 1), {3, k.C}), "h_prev must have shape [2,4]"},
      {2, F(Rand((k.I + k.C) * k.C, 1), {k.I + k.C, k.C}), "w_ru (input_size + cell_size"},
      {3, F(Rand(k.I * k.C, 1), {k.I, k.C}), "w_c (input_size + cell_size, cell_size)"},
      {4, F(Rand(k.C, 1), {k.C}), "b_ru (2 * cell_size) must have shape [8]"},
      {5, F(Rand(k.C, 1), {1, k.C}), "b_c must be rank 1"},
  };
  for (const Bad& c : bad) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    GruGraph g(s, k);
    g.feeds[c.input].second = c.value;
    absl::Status st = TryEval(s, g.feeds, g.Cell(s).h).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(st.message(), HasSubstr(c.message));
    EXPECT_THAT(st.message(), HasSubstr("GRUBlockCell"));
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  GruGraph g(s, k);
  ops::GRUBlockCellOutputs o = g.Cell(s);
  Output wrong = ops::Const(s, F(Rand(k.C, 2), {1, k.C}));
  ops::GRUBlockCellGradOutputs d = ops::GRUBlockCellGrad(s, g.in[0], g.in[1], g.in[2], g.in[3],
                                                         g.in[4], g.in[5], o.r, o.u, o.c, wrong);
  EXPECT_THAT(TryEval(s, g.feeds, d.d_x).status().message(),
              HasSubstr("d_h must have shape [2,4]"));
}

}  // namespace
}  // namespace sluice
