// GPU against CPU (tests/gpu/gpu_compare.h) for the NN kernels (Relu and
// the other activations with their gradients, softmax, cross-entropy, bias,
// the fused batch norm, AvgPool and its gradient), BatchMatMul, GatherNd,
// ScatterNd, Pad, OneHot, MatMul (float32, TF32 and bfloat16 through
// the node attr _gpu_precision, half and bfloat16 operands), the fused
// products (_FusedMatMul, _MatMulBiasAddGrad: cuBLASLt epilogues), the
// window ops (Conv2D and its backprops, MaxPool, MaxPoolGrad) and the array
// kernels (Transpose, Tile, ConcatV2, Slice, GatherV2, Fill, ZerosLike,
// OnesLike, Reshape, ExpandDims, Squeeze, Identity). Skipped without a GPU.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "sluice.h"
#include "tests/gpu/gpu_compare.h"

namespace sluice::gpu_test {
namespace {

class GpuNnTest : public GpuTest {};
class GpuMatMulTest : public GpuTest {};
class GpuArrayTest : public GpuTest {};

Output IntVector(const Scope& s, const std::vector<int32_t>& v) {
  return ops::Const<int32_t>(Unplaced(s), v, TensorShape({static_cast<int64_t>(v.size())}));
}

TEST_F(GpuNnTest, ReluAndReluGrad) {
  for (const TensorShape& shape :
       {TensorShape({7}), TensorShape({256, 1024}), TensorShape({3, 5, 7}), TensorShape({0, 4})}) {
    Tensor x = RandomTensor(rng(), DT_FLOAT, shape, -1, 1);
    Tensor g = RandomTensor(rng(), DT_FLOAT, shape, -1, 1);
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("Relu ", shape.DebugString()),
                               .build = [](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::Relu(s.WithOpName("op"), in[0])};
                               },
                               .inputs = {x},
                               .bound = 0}));
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("ReluGrad ", shape.DebugString()),
                               .build = [](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::ReluGrad(s.WithOpName("op"), in[0], in[1])};
                               },
                               .inputs = {g, x},
                               .bound = 0}));
  }
}

// Relu, ReluGrad, BiasAdd and BiasAddGrad in half and bfloat16 (what mixed
// precision keeps between 16-bit convolutions): against the CPU's float
// kernels on the same values rounded to 16 bits.
TEST_F(GpuNnTest, ReluAndBiasInSixteenBits) {
  for (DataType t : {DT_BFLOAT16, DT_HALF}) {
    const double bound = t == DT_BFLOAT16 ? 1e-2 : 2e-3;
    for (const TensorShape& shape :
         {TensorShape({4, 6, 6, 16}), TensorShape({256, 128}), TensorShape({0, 4})}) {
      Tensor x = RandomTensor(rng(), t, shape, -1, 1);
      Tensor g = RandomTensor(rng(), t, shape, -1, 1);
      Tensor bias = RandomTensor(rng(), t, TensorShape({shape.dim(shape.rank() - 1)}), -1, 1);
      const std::string label = absl::StrCat(DataTypeName(t), " ", shape.DebugString());
      const auto f = [](const Tensor& v) { return ConvertTo(v, DT_FLOAT); };
      EXPECT_TRUE(GpuMatchesCpu({.label = "Relu " + label,
                                 .build = [](const Scope& s, const Inputs& in) {
                                   return Outputs{ops::Relu(s.WithOpName("op"), in[0])};
                                 },
                                 .inputs = {f(x)},
                                 .bound = 0,
                                 .gpu_inputs = {x}}));
      EXPECT_TRUE(GpuMatchesCpu({.label = "ReluGrad " + label,
                                 .build = [](const Scope& s, const Inputs& in) {
                                   return Outputs{ops::ReluGrad(s.WithOpName("op"), in[0], in[1])};
                                 },
                                 .inputs = {f(g), f(x)},
                                 .bound = 0,
                                 .gpu_inputs = {g, x}}));
      EXPECT_TRUE(GpuMatchesCpu({.label = "BiasAdd " + label,
                                 .build = [](const Scope& s, const Inputs& in) {
                                   return Outputs{ops::BiasAdd(s.WithOpName("op"), in[0], in[1])};
                                 },
                                 .inputs = {f(x), f(bias)},
                                 .bound = bound,
                                 .gpu_inputs = {x, bias}}));
      EXPECT_TRUE(GpuMatchesCpu({.label = "BiasAddGrad " + label,
                                 .build = [](const Scope& s, const Inputs& in) {
                                   return Outputs{ops::BiasAddGrad(s.WithOpName("op"), in[0])};
                                 },
                                 .inputs = {f(g)},
                                 .bound = bound,
                                 .gpu_inputs = {g}}));
    }
  }
}

// The activations beyond Relu and their gradient ops (ops/gpu/activation.cu)
// in float and double, and in half and bfloat16 against the CPU's float
// kernels on the same values rounded to 16 bits. Values span both sides of
// 0 and 6 (Relu6's bounds).
TEST_F(GpuNnTest, ActivationsAndTheirGradients) {
  const std::vector<std::string> forward = {"Relu6",     "Elu",      "Selu",
                                            "LeakyRelu", "Softplus", "Softsign"};
  const std::vector<std::string> backward = {"Relu6Grad",     "EluGrad",      "SeluGrad",
                                             "LeakyReluGrad", "SoftplusGrad", "SoftsignGrad"};
  auto unary = [](const std::string& op) {
    return [op](const Scope& s, const Inputs& in) {
      OpBuilder b = s.WithOpName("op").Op(op);
      b.Input(in[0]);
      if (op == "LeakyRelu") b.Attr("alpha", 0.3f);
      return Outputs{b.Finalize1()};
    };
  };
  auto binary = [](const std::string& op) {
    return [op](const Scope& s, const Inputs& in) {
      OpBuilder b = s.WithOpName("op").Op(op);
      b.Input(in[0]).Input(in[1]);
      if (op == "LeakyReluGrad") b.Attr("alpha", 0.3f);
      return Outputs{b.Finalize1()};
    };
  };
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16, DT_HALF}) {
    const bool sixteen = t == DT_BFLOAT16 || t == DT_HALF;
    const double bound =
        t == DT_DOUBLE ? 1e-12 : (t == DT_FLOAT ? 1e-5 : (t == DT_HALF ? 2e-3 : 1e-2));
    for (const TensorShape& shape :
         {TensorShape({7}), TensorShape({256, 130}), TensorShape({0, 3})}) {
      const Tensor x = RandomTensor(rng(), t, shape, -8, 8);
      const Tensor g = RandomTensor(rng(), t, shape, -1, 1);
      // The CPU has float and double kernels: 16-bit values go to it as float.
      const auto cpu = [&](const Tensor& v) { return sixteen ? ConvertTo(v, DT_FLOAT) : v; };
      const std::string label = absl::StrCat(DataTypeName(t), " ", shape.DebugString());
      for (const std::string& op : forward) {
        EXPECT_TRUE(GpuMatchesCpu({.label = op + " " + label,
                                   .build = unary(op),
                                   .inputs = {cpu(x)},
                                   .bound = bound,
                                   .gpu_inputs = {x}}));
      }
      for (const std::string& op : backward) {
        EXPECT_TRUE(GpuMatchesCpu({.label = op + " " + label,
                                   .build = binary(op),
                                   .inputs = {cpu(g), cpu(x)},
                                   .bound = bound,
                                   .gpu_inputs = {g, x}}));
      }
    }
  }
}

// L2Loss: halved squares summed on the GPU; the CPU sums in double.
TEST_F(GpuNnTest, L2Loss) {
  for (DataType t : {DT_FLOAT, DT_DOUBLE}) {
    for (const TensorShape& shape : {TensorShape({0}), TensorShape({1}), TensorShape({7, 3}),
                                     TensorShape({256, 1030})}) {
      EXPECT_TRUE(GpuMatchesCpu(
          {.label = absl::StrCat("L2Loss ", DataTypeName(t), " ", shape.DebugString()),
           .build = [](const Scope& s, const Inputs& in) {
             return Outputs{ops::L2Loss(s.WithOpName("op"), in[0])};
           },
           .inputs = {RandomTensor(rng(), t, shape, -2, 2)},
           .bound = t == DT_FLOAT ? 1e-5 : 1e-12}));
    }
  }
}

// FusedBatchNormV3 and its gradient (ops/gpu/batch_norm.cu): training with
// and without moving averages, and inference; batches of one chunk of rows
// and of many.
TEST_F(GpuNnTest, FusedBatchNormAndItsGradient) {
  struct Case {
    TensorShape shape;
    bool training;
    float factor;
    bool empty_averages;  // mean and variance empty (training, factor 1)
  };
  for (const Case& c : {Case{TensorShape({2, 3, 3, 4}), true, 1.0f, false},
                        Case{TensorShape({32, 14, 14, 64}), true, 1.0f, true},
                        Case{TensorShape({16, 8, 8, 3}), true, 0.25f, false},
                        Case{TensorShape({16, 8, 8, 3}), false, 1.0f, false}}) {
    const int64_t depth = c.shape.dim(3);
    const TensorShape channels({depth});
    std::vector<Tensor> in = {RandomTensor(rng(), DT_FLOAT, c.shape, -2, 3),
                       RandomTensor(rng(), DT_FLOAT, channels, 0.5, 1.5),
                       RandomTensor(rng(), DT_FLOAT, channels, -0.5, 0.5),
                       RandomTensor(rng(), DT_FLOAT, channels, -0.5, 0.5),
                       RandomTensor(rng(), DT_FLOAT, channels, 0.5, 2),
                       RandomTensor(rng(), DT_FLOAT, c.shape, -1, 1)};
    const bool training = c.training;
    const float factor = c.factor;
    if (c.empty_averages) {
      in[3] = Tensor(DT_FLOAT, TensorShape({0}));
      in[4] = Tensor(DT_FLOAT, TensorShape({0}));
    }
    EXPECT_TRUE(GpuMatchesCpu(
        {.label = absl::StrCat("FusedBatchNormV3 ", c.shape.DebugString(),
                               training ? " training" : " inference", " factor ", factor,
                               c.empty_averages ? " without moving averages" : ""),
         .build =
             [training, factor](const Scope& s, const Inputs& x) {
               ops::FusedBatchNormOutputs bn = ops::FusedBatchNormV3(
                   s.WithOpName("op"), x[0], x[1], x[2], x[3], x[4],
                   {.epsilon = 0.001f, .exponential_avg_factor = factor, .is_training = training});
               ops::FusedBatchNormGradOutputs g = ops::FusedBatchNormGradV3(
                   s.WithOpName("op_grad"), x[5], x[0], x[1], bn.reserve_space_1,
                   bn.reserve_space_2, ops::Const(s, std::vector<float>{}, TensorShape({0})),
                   {.epsilon = 0.001f, .is_training = training});
               return Outputs{bn.y, bn.batch_mean, bn.batch_variance, g.x_backprop,
                              g.scale_backprop, g.offset_backprop};
             },
         .inputs = in,
         .bound = 1e-5}));
  }
  // bfloat16 and half x and y_backprop (V3 under mixed precision), the
  // per-channel tensors float, against the CPU's float kernels on the same
  // rounded values.
  for (DataType t : {DT_BFLOAT16, DT_HALF}) {
    const TensorShape shape({8, 6, 6, 16}), channels({16});
    const Tensor x = RandomTensor(rng(), t, shape, -2, 3);
    const Tensor dy = RandomTensor(rng(), t, shape, -1, 1);
    const Tensor scale = RandomTensor(rng(), DT_FLOAT, channels, 0.5, 1.5);
    const Tensor offset = RandomTensor(rng(), DT_FLOAT, channels, -0.5, 0.5);
    const Tensor none(DT_FLOAT, TensorShape({0}));
    EXPECT_TRUE(GpuMatchesCpu(
        {.label = absl::StrCat("FusedBatchNormV3 ", DataTypeName(t)),
         .build =
             [](const Scope& s, const Inputs& in) {
               ops::FusedBatchNormOutputs bn =
                   ops::FusedBatchNormV3(s.WithOpName("op"), in[0], in[1], in[2], in[3], in[3],
                                         {.epsilon = 0.001f});
               ops::FusedBatchNormGradOutputs g = ops::FusedBatchNormGradV3(
                   s.WithOpName("op_grad"), in[4], in[0], in[1], bn.reserve_space_1,
                   bn.reserve_space_2, in[3], {.epsilon = 0.001f});
               return Outputs{bn.y, bn.reserve_space_1, bn.reserve_space_2, g.x_backprop,
                              g.scale_backprop, g.offset_backprop};
             },
         .inputs = {ConvertTo(x, DT_FLOAT), scale, offset, none, ConvertTo(dy, DT_FLOAT)},
         .bound = t == DT_BFLOAT16 ? 1e-2 : 2e-3,
         .gpu_inputs = {x, scale, offset, none, dy}}));
  }
}

// BatchMatMul and BatchMatMulV2 (ops/gpu/batch_matmul_kernels.cc): one
// strided batched GEMM for equal batches, an unbatched operand or a batch
// of 1, a GEMM per matrix for cross broadcasting; adjoints; an empty sum;
// every type, 16-bit ones against the CPU's float on the same values.
TEST_F(GpuMatMulTest, BatchMatMul) {
  struct Case {
    TensorShape x, y;
    bool adj_x, adj_y;
  };
  const std::vector<Case> cases = {
      {TensorShape({3, 4, 5}), TensorShape({3, 5, 6}), false, false},
      {TensorShape({8, 128, 64}), TensorShape({8, 128, 64}), false, true},  // Q K^T
      {TensorShape({2, 3, 5, 4}), TensorShape({2, 3, 6, 5}), true, true},
      {TensorShape({2, 3, 4, 5}), TensorShape({5, 6}), false, false},  // rows times a weight
      {TensorShape({1, 4, 5}), TensorShape({3, 5, 6}), false, false},
      {TensorShape({2, 1, 4, 5}), TensorShape({1, 3, 5, 6}), false, false},  // cross broadcast
      {TensorShape({2, 3, 0}), TensorShape({2, 0, 4}), false, false},        // empty sum: zeros
      {TensorShape({0, 3, 4}), TensorShape({0, 4, 2}), false, false},        // no batches
  };
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16, DT_HALF}) {
    const bool sixteen = t == DT_BFLOAT16 || t == DT_HALF;
    const double bound =
        t == DT_DOUBLE ? 1e-12 : (t == DT_FLOAT ? 1e-4 : (t == DT_HALF ? 2e-3 : 1e-2));
    for (const Case& c : cases) {
      const Tensor x = RandomTensor(rng(), t, c.x, -1, 1);
      const Tensor y = RandomTensor(rng(), t, c.y, -1, 1);
      const auto cpu = [&](const Tensor& v) { return sixteen ? ConvertTo(v, DT_FLOAT) : v; };
      const bool adj_x = c.adj_x, adj_y = c.adj_y;
      EXPECT_TRUE(GpuMatchesCpu(
          {.label = absl::StrCat("BatchMatMulV2 ", DataTypeName(t), " ", c.x.DebugString(),
                                 adj_x ? "^T" : "", " by ", c.y.DebugString(), adj_y ? "^T" : ""),
           .build =
               [adj_x, adj_y](const Scope& s, const Inputs& in) {
                 return Outputs{s.WithOpName("op")
                                    .Op("BatchMatMulV2")
                                    .Input(in[0])
                                    .Input(in[1])
                                    .Attr("adj_x", adj_x)
                                    .Attr("adj_y", adj_y)
                                    .Finalize1()};
               },
           .inputs = {cpu(x), cpu(y)},
           .bound = bound,
           .gpu_inputs = {x, y}}));
    }
  }
  // BatchMatMul (no broadcasting).
  EXPECT_TRUE(GpuMatchesCpu(
      {.label = "BatchMatMul",
       .build =
           [](const Scope& s, const Inputs& in) {
             return Outputs{s.WithOpName("op")
                                .Op("BatchMatMul")
                                .Input(in[0])
                                .Input(in[1])
                                .Attr("adj_x", false)
                                .Attr("adj_y", false)
                                .Finalize1()};
           },
       .inputs = {RandomTensor(rng(), DT_FLOAT, TensorShape({2, 3, 4}), -1, 1),
                  RandomTensor(rng(), DT_FLOAT, TensorShape({2, 4, 5}), -1, 1)},
       .bound = 1e-5}));
}

// GatherNd and ScatterNd (ops/gpu/nd_index.cu): index rows of depth 0 to
// the params' rank, int32 and int64 indices, repeated rows summed by
// ScatterNd (atomically on the GPU, so in another order: a float bound).
TEST_F(GpuArrayTest, GatherNdAndScatterNd) {
  const TensorShape params_shape({6, 5, 4});
  for (DataType index_type : {DT_INT32, DT_INT64}) {
    for (int depth = 0; depth <= 3; ++depth) {
      std::vector<int64_t> idx;
      const int64_t rows = 9;
      for (int64_t r = 0; r < rows; ++r) {
        for (int d = 0; d < depth; ++d) {
          idx.push_back(std::uniform_int_distribution<int64_t>(0, params_shape.dim(d) - 1)(rng()));
        }
      }
      Tensor indices64 = Tensor::FromVector(idx);
      absl::StatusOr<Tensor> shaped = indices64.Reshaped(TensorShape({rows, depth}));
      ASSERT_TRUE(shaped.ok()) << shaped.status();
      const Tensor indices = ConvertTo(*shaped, index_type);
      TensorShape slice_shape({rows});
      for (int d = depth; d < params_shape.rank(); ++d) slice_shape.AddDim(params_shape.dim(d));
      for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_INT64, DT_HALF, DT_BFLOAT16}) {
        const bool sixteen = t == DT_HALF || t == DT_BFLOAT16;
        // The CPU has no 16-bit kernels: it gets the same values in float.
        const auto cpu = [&](const Tensor& v) { return sixteen ? ConvertTo(v, DT_FLOAT) : v; };
        const Tensor params = RandomTensor(rng(), t, params_shape, -5, 5);
        const Tensor updates = RandomTensor(rng(), t, slice_shape, -5, 5);
        const std::string label = absl::StrCat(DataTypeName(t), " depth ", depth, " ",
                                               DataTypeName(index_type), " indices");
        EXPECT_TRUE(GpuMatchesCpu({.label = "GatherNd " + label,
                                   .build = [](const Scope& s, const Inputs& in) {
                                     return Outputs{ops::GatherNd(s.WithOpName("op"), in[0],
                                                                  in[1])};
                                   },
                                   .inputs = {cpu(params), indices},
                                   .bound = 0,
                                   .gpu_inputs = {params, indices}}));
        const Tensor shape =  // typed as the indices
            ConvertTo(Tensor::FromVector(std::vector<int64_t>{6, 5, 4}), index_type);
        EXPECT_TRUE(GpuMatchesCpu({.label = "ScatterNd " + label,
                                   .build = [](const Scope& s, const Inputs& in) {
                                     return Outputs{ops::ScatterNd(s.WithOpName("op"), in[0],
                                                                   in[1], in[2])};
                                   },
                                   .inputs = {indices, cpu(updates), shape},
                                   // 16-bit atomics round at every addition.
                                   .bound = t == DT_INT64 ? 0 : (sixteen ? 1e-2 : 1e-6),
                                   .gpu_inputs = {indices, updates, shape}}));
      }
    }
  }
}

// AvgPool and AvgPoolGrad (ops/gpu/conv.cu): SAME and VALID, strides,
// windows over the edge (their counts exclude the padding), a global
// pool; float, and bfloat16 against the CPU's float on the rounded values.
TEST_F(GpuNnTest, AvgPoolAndItsGradient) {
  struct Case {
    TensorShape input;
    std::vector<int64_t> ksize, strides;
    const char* padding;
  };
  const std::vector<Case> cases = {
      {TensorShape({2, 7, 6, 3}), {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME"},
      {TensorShape({2, 7, 6, 3}), {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"},
      {TensorShape({1, 9, 8, 4}), {1, 3, 2, 1}, {1, 2, 3, 1}, "SAME"},
      {TensorShape({4, 7, 7, 8}), {1, 7, 7, 1}, {1, 1, 1, 1}, "VALID"},  // global
  };
  for (DataType t : {DT_FLOAT, DT_BFLOAT16, DT_HALF}) {
    for (const Case& c : cases) {
      const Tensor x = RandomTensor(rng(), t, c.input, -2, 2);
      const auto cpu = [&](const Tensor& v) { return t == DT_FLOAT ? v : ConvertTo(v, DT_FLOAT); };
      const std::vector<int64_t> ksize = c.ksize, strides = c.strides;
      const std::string padding = c.padding;
      // The pooled shape (SAME: ceil(in / stride); VALID: (in - k) / stride + 1);
      // a wrong one would make the CPU's AvgPoolGrad refuse the case.
      const int64_t out_rows = padding == "SAME"
                                   ? (c.input.dim(1) + strides[1] - 1) / strides[1]
                                   : (c.input.dim(1) - ksize[1]) / strides[1] + 1;
      const int64_t out_cols = padding == "SAME"
                                   ? (c.input.dim(2) + strides[2] - 1) / strides[2]
                                   : (c.input.dim(2) - ksize[2]) / strides[2] + 1;
      const Tensor dy = RandomTensor(
          rng(), t, TensorShape({c.input.dim(0), out_rows, out_cols, c.input.dim(3)}), -1, 1);
      const Tensor sizes = Tensor::FromVector(std::vector<int32_t>(
          {static_cast<int32_t>(c.input.dim(0)), static_cast<int32_t>(c.input.dim(1)),
           static_cast<int32_t>(c.input.dim(2)), static_cast<int32_t>(c.input.dim(3))}));
      EXPECT_TRUE(GpuMatchesCpu(
          {.label = absl::StrCat("AvgPool and AvgPoolGrad ", DataTypeName(t), " ",
                                 c.input.DebugString(), " ", padding),
           .build =
               [ksize, strides, padding](const Scope& s, const Inputs& in) {
                 return Outputs{
                     ops::AvgPool(s.WithOpName("op"), in[0], ksize, strides, padding),
                     ops::AvgPoolGrad(s.WithOpName("op_grad"), in[2], in[1], ksize, strides,
                                      padding)};
               },
           .inputs = {cpu(x), cpu(dy), sizes},
           .bound = t == DT_FLOAT ? 1e-6 : (t == DT_HALF ? 2e-3 : 1e-2),
           .gpu_inputs = {x, dy, sizes}}));
    }
  }
}

// Pad and PadV2 (ops/gpu/pad.cu): ranks 1 to 4, padding on some sides
// only, none at all, a constant value; float, int64 and bfloat16.
TEST_F(GpuArrayTest, PadAndPadV2) {
  struct Case {
    TensorShape x;
    std::vector<int32_t> paddings;  // [rank, 2]
  };
  const std::vector<Case> cases = {
      {TensorShape({5}), {2, 3}},
      {TensorShape({3, 4}), {0, 0, 1, 2}},
      {TensorShape({2, 3, 4, 5}), {0, 0, 1, 1, 2, 0, 0, 3}},  // NHWC spatial padding
      {TensorShape({2, 3}), {0, 0, 0, 0}},
  };
  for (DataType t : {DT_FLOAT, DT_INT64, DT_BFLOAT16}) {
    for (const Case& c : cases) {
      const Tensor x = RandomTensor(rng(), t, c.x, -5, 5);
      const Tensor paddings = Tensor::FromVector(c.paddings);
      absl::StatusOr<Tensor> shaped = paddings.Reshaped(TensorShape({c.x.rank(), 2}));
      ASSERT_TRUE(shaped.ok()) << shaped.status();
      const Tensor value = ConvertTo(Tensor::FromVector(std::vector<double>{1.5}), t);
      absl::StatusOr<Tensor> scalar = value.Reshaped(TensorShape({}));
      ASSERT_TRUE(scalar.ok()) << scalar.status();
      const std::string label = absl::StrCat(DataTypeName(t), " ", c.x.DebugString());
      EXPECT_TRUE(GpuMatchesCpu({.label = "Pad " + label,
                                 .build = [](const Scope& s, const Inputs& in) {
                                   return Outputs{s.WithOpName("op").Op("Pad").Input(in[0])
                                                      .Input(in[1]).Finalize1()};
                                 },
                                 .inputs = {x, *shaped},
                                 .bound = 0}));
      EXPECT_TRUE(GpuMatchesCpu({.label = "PadV2 " + label,
                                 .build = [](const Scope& s, const Inputs& in) {
                                   return Outputs{s.WithOpName("op").Op("PadV2").Input(in[0])
                                                      .Input(in[1]).Input(in[2]).Finalize1()};
                                 },
                                 .inputs = {x, *shaped, *scalar},
                                 .bound = 0}));
    }
  }
}

// OneHot (ops/gpu/one_hot.cu): every axis of 2-D indices, int32 and int64
// indices with some out of [0, depth) (a row of off_value), float and
// bfloat16 values.
TEST_F(GpuArrayTest, OneHot) {
  for (DataType index_type : {DT_INT32, DT_INT64}) {
    std::vector<int64_t> ids = {0, 3, 2, -1, 5, 1};  // -1 and 5: outside depth 4
    const Tensor indices64 = Tensor::FromVector(ids);
    absl::StatusOr<Tensor> shaped = indices64.Reshaped(TensorShape({2, 3}));
    ASSERT_TRUE(shaped.ok()) << shaped.status();
    const Tensor indices = ConvertTo(*shaped, index_type);
    for (DataType t : {DT_FLOAT, DT_BFLOAT16}) {
      absl::StatusOr<Tensor> on =
          ConvertTo(Tensor::FromVector(std::vector<double>{2.5}), t).Reshaped(TensorShape({}));
      absl::StatusOr<Tensor> off =
          ConvertTo(Tensor::FromVector(std::vector<double>{-1}), t).Reshaped(TensorShape({}));
      ASSERT_TRUE(on.ok() && off.ok());
      for (int64_t axis : {-1, 0, 1, 2}) {
        EXPECT_TRUE(GpuMatchesCpu(
            {.label = absl::StrCat("OneHot ", DataTypeName(t), " ", DataTypeName(index_type),
                                   " axis ", axis),
             .build =
                 [axis](const Scope& s, const Inputs& in) {
                   return Outputs{ops::OneHot(s.WithOpName("op"), in[0],
                                              ops::Const(Unplaced(s), int32_t{4}), in[1], in[2],
                                              {.axis = axis})};
                 },
             .inputs = {indices, *on, *off},
             .bound = 0}));
      }
    }
  }
}

std::vector<TensorShape> SoftmaxShapes() {
  return {TensorShape({64, 10}), TensorShape({7, 1000}), TensorShape({3, 1}),
          TensorShape({256, 33}), TensorShape({2, 3, 17}), TensorShape({1, 5000})};
}

TEST_F(GpuNnTest, SoftmaxAndLogSoftmax) {
  for (const TensorShape& shape : SoftmaxShapes()) {
    Tensor logits = RandomTensor(rng(), DT_FLOAT, shape, -10, 10);
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("Softmax ", shape.DebugString()),
                               .build = [](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::Softmax(s.WithOpName("op"), in[0])};
                               },
                               .inputs = {logits},
                               .bound = 1e-5}));
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("LogSoftmax ", shape.DebugString()),
                               .build = [](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::LogSoftmax(s.WithOpName("op"), in[0])};
                               },
                               .inputs = {logits},
                               .bound = 1e-5}));
  }
  // Large logits: the max is subtracted first on both.
  Tensor big = RandomTensor(rng(), DT_FLOAT, TensorShape({16, 100}), 500, 1000);
  EXPECT_TRUE(GpuMatchesCpu({.label = "Softmax of large logits",
                             .build = [](const Scope& s, const Inputs& in) {
                               return Outputs{ops::Softmax(s.WithOpName("op"), in[0])};
                             },
                             .inputs = {big},
                             .bound = 1e-5}));
}

// Rows of random probabilities.
Tensor RandomDistributions(std::mt19937& rng, int64_t batch, int64_t classes) {
  Tensor p = RandomTensor(rng, DT_FLOAT, TensorShape({batch, classes}), 0.01, 1);
  float* d = p.data<float>();
  for (int64_t b = 0; b < batch; ++b) {
    float sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += d[b * classes + c];
    for (int64_t c = 0; c < classes; ++c) d[b * classes + c] /= sum;
  }
  return p;
}

TEST_F(GpuNnTest, SoftmaxCrossEntropyWithLogits) {
  for (const auto& [batch, classes] : std::vector<std::pair<int64_t, int64_t>>{
           {64, 10}, {256, 10}, {7, 1000}, {1, 3}, {33, 129}}) {
    Tensor logits = RandomTensor(rng(), DT_FLOAT, TensorShape({batch, classes}), -5, 5);
    Tensor labels = RandomDistributions(rng(), batch, classes);
    EXPECT_TRUE(GpuMatchesCpu(
        {.label = absl::StrCat("SoftmaxCrossEntropyWithLogits ", batch, "x", classes),
         .build = [](const Scope& s, const Inputs& in) {
           return ops::SoftmaxCrossEntropyWithLogits(s.WithOpName("op"), in[0], in[1]);
         },
         .inputs = {logits, labels},
         .bound = 1e-5}));
  }
}

TEST_F(GpuNnTest, SparseSoftmaxCrossEntropyWithLogits) {
  for (DataType label_type : {DT_INT32, DT_INT64}) {
    for (const auto& [batch, classes] : std::vector<std::pair<int64_t, int64_t>>{
             {64, 10}, {256, 10}, {7, 1000}, {1, 3}, {33, 129}}) {
      Tensor logits = RandomTensor(rng(), DT_FLOAT, TensorShape({batch, classes}), -5, 5);
      Tensor labels = RandomTensor(rng(), label_type, TensorShape({batch}), 0, classes);
      EXPECT_TRUE(GpuMatchesCpu(
          {.label = absl::StrCat("SparseSoftmaxCrossEntropyWithLogits ", batch, "x", classes, " ",
                                 DataTypeName(label_type)),
           .build = [](const Scope& s, const Inputs& in) {
             return ops::SparseSoftmaxCrossEntropyWithLogits(s.WithOpName("op"), in[0], in[1]);
           },
           .inputs = {logits, labels},
           .bound = 1e-5}));
    }
  }
}

TEST_F(GpuNnTest, BiasAddAndBiasAddGrad) {
  struct Case {
    TensorShape value;
    int64_t channels;
    std::string format;
  };
  for (const Case& c : std::vector<Case>{{TensorShape({64, 100}), 100, "NHWC"},
                                         {TensorShape({256, 1024}), 1024, "NHWC"},
                                         {TensorShape({2, 3, 4, 5}), 5, "NHWC"},
                                         {TensorShape({2, 5, 3, 4}), 5, "NCHW"},
                                         {TensorShape({3, 7}), 7, "NCHW"},
                                         {TensorShape({1000, 3}), 3, "NHWC"}}) {
    Tensor value = RandomTensor(rng(), DT_FLOAT, c.value, -1, 1);
    Tensor bias = RandomTensor(rng(), DT_FLOAT, TensorShape({c.channels}), -1, 1);
    const std::string label = absl::StrCat(c.value.DebugString(), " ", c.format);
    EXPECT_TRUE(GpuMatchesCpu({.label = "BiasAdd " + label,
                               .build = [f = c.format](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::BiasAdd(s.WithOpName("op"), in[0], in[1],
                                                             {.data_format = f})};
                               },
                               .inputs = {value, bias},
                               .bound = 1e-6}));
    const int64_t len = c.value.num_elements() / c.channels;
    EXPECT_TRUE(GpuMatchesCpu({.label = "BiasAddGrad " + label,
                               .build = [f = c.format](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::BiasAddGrad(s.WithOpName("op"), in[0],
                                                                 {.data_format = f})};
                               },
                               .inputs = {value},
                               .bound = len <= 64 ? 1e-5 : 1e-4}));
  }
}

// ---- 2-D windows: Conv2D, its backprops (im2col + cuBLAS), MaxPool --------

struct ConvCase {
  int64_t batch, rows, cols, depth, filter_rows, filter_cols, out_depth;
  int64_t stride, dilation;
  const char* padding;
};

std::vector<ConvCase> ConvCases() {
  return {
      {4, 28, 28, 1, 3, 3, 16, 1, 1, "SAME"},  // the Fashion-MNIST CNN's first layer
      {4, 14, 14, 16, 3, 3, 32, 1, 1, "SAME"},
      {2, 9, 8, 3, 3, 2, 5, 2, 1, "VALID"},
      {3, 10, 11, 2, 5, 5, 4, 2, 1, "SAME"},
      {2, 9, 9, 2, 3, 3, 3, 1, 2, "SAME"},     // dilated
      {2, 6, 5, 8, 1, 1, 4, 1, 1, "VALID"},    // 1x1: the input is the column matrix
      {1, 4, 4, 2, 4, 4, 2, 1, 1, "SAME"},     // even filter: asymmetric padding
      {0, 5, 5, 2, 3, 3, 2, 1, 1, "SAME"},     // empty batch
  };
}

std::string ConvLabel(const char* op, const ConvCase& c, DataType t) {
  return absl::StrCat(op, " ", DataTypeName(t), " ", c.batch, "x", c.rows, "x", c.cols, "x",
                      c.depth, " filter ", c.filter_rows, "x", c.filter_cols, "x", c.out_depth,
                      " stride ", c.stride, " dilation ", c.dilation, " ", c.padding);
}

// Conv2D and both backprops on the GPU against the CPU, in `type` (16-bit
// types: fed the same values rounded, compared with the CPU's float).
void CheckConvs(std::mt19937& rng, DataType type, double bound) {
  for (const ConvCase& c : ConvCases()) {
    ops::Conv2DAttrs attrs;
    attrs.dilations = {1, c.dilation, c.dilation, 1};
    const std::vector<int64_t> strides = {1, c.stride, c.stride, 1};
    Tensor x = RandomTensor(rng, type, TensorShape({c.batch, c.rows, c.cols, c.depth}), -1, 1);
    Tensor f = RandomTensor(rng, type,
                            TensorShape({c.filter_rows, c.filter_cols, c.depth, c.out_depth}), -1,
                            1);
    // The forward output's shape, from a CPU run of the forward op.
    absl::StatusOr<DeviceRun> fwd = RunOn(
        kCpu0,
        [&](const Scope& s, const Inputs& in) {
          return Outputs{ops::Conv2D(s, in[0], in[1], strides, c.padding, attrs)};
        },
        {ConvertTo(x, DT_FLOAT), ConvertTo(f, DT_FLOAT)}, 0);
    ASSERT_TRUE(fwd.ok()) << fwd.status();
    Tensor dy = RandomTensor(rng, type, fwd->outputs[0].shape(), -1, 1);
    const std::vector<int32_t> x_sizes = {static_cast<int32_t>(c.batch),
                                          static_cast<int32_t>(c.rows),
                                          static_cast<int32_t>(c.cols),
                                          static_cast<int32_t>(c.depth)};
    const std::vector<int32_t> f_sizes = {
        static_cast<int32_t>(c.filter_rows), static_cast<int32_t>(c.filter_cols),
        static_cast<int32_t>(c.depth), static_cast<int32_t>(c.out_depth)};
    const auto to_float = [](const Tensor& t) { return ConvertTo(t, DT_FLOAT); };
    EXPECT_TRUE(GpuMatchesCpu({.label = ConvLabel("Conv2D", c, type),
                               .build =
                                   [&](const Scope& s, const Inputs& in) {
                                     return Outputs{ops::Conv2D(s.WithOpName("op"), in[0], in[1],
                                                                strides, c.padding, attrs)};
                                   },
                               .inputs = {to_float(x), to_float(f)},
                               .bound = bound,
                               .gpu_inputs = {x, f}}));
    EXPECT_TRUE(GpuMatchesCpu(
        {.label = ConvLabel("Conv2DBackpropInput", c, type),
         .build =
             [&](const Scope& s, const Inputs& in) {
               return Outputs{ops::Conv2DBackpropInput(s.WithOpName("op"), IntVector(s, x_sizes),
                                                       in[0], in[1], strides, c.padding, attrs)};
             },
         .inputs = {to_float(f), to_float(dy)},
         .bound = bound,
         .gpu_inputs = {f, dy}}));
    EXPECT_TRUE(GpuMatchesCpu(
        {.label = ConvLabel("Conv2DBackpropFilter", c, type),
         .build =
             [&](const Scope& s, const Inputs& in) {
               return Outputs{ops::Conv2DBackpropFilter(s.WithOpName("op"), in[0],
                                                        IntVector(s, f_sizes), in[1], strides,
                                                        c.padding, attrs)};
             },
         .inputs = {to_float(x), to_float(dy)},
         .bound = bound,
         .gpu_inputs = {x, dy}}));
  }
}

TEST_F(GpuNnTest, Conv2DAndItsBackpropsFloat) { CheckConvs(rng(), DT_FLOAT, 1e-5); }
TEST_F(GpuNnTest, Conv2DAndItsBackpropsBfloat16) { CheckConvs(rng(), DT_BFLOAT16, 1e-2); }
TEST_F(GpuNnTest, Conv2DAndItsBackpropsHalf) { CheckConvs(rng(), DT_HALF, 2e-3); }

TEST_F(GpuNnTest, Conv2DRefusesNchwAndMismatchedDepths) {
  if (DryRunOnCpu()) GTEST_SKIP() << "the CPU kernels' own errors";
  Tensor x = RandomTensor(rng(), DT_FLOAT, TensorShape({1, 5, 5, 3}), -1, 1);
  Tensor f = RandomTensor(rng(), DT_FLOAT, TensorShape({3, 3, 2, 4}), -1, 1);
  absl::StatusOr<DeviceRun> r = RunOn(
      kGpu0,
      [](const Scope& s, const Inputs& in) {
        return Outputs{ops::Conv2D(s.WithOpName("op"), in[0], in[1], {1, 1, 1, 1}, "SAME")};
      },
      {x, f}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
}

// MaxPool and its gradient in float, bfloat16 and half, ties included
// (small integers after a ReLU: the first maximum of a window gets the
// gradient, as on the CPU; every value is exact in 16 bits).
TEST_F(GpuNnTest, MaxPoolAndMaxPoolGrad) {
  struct PoolCase {
    TensorShape shape;
    int64_t window, stride;
    const char* padding;
  };
  for (DataType t : {DT_FLOAT, DT_BFLOAT16, DT_HALF}) {
    for (const PoolCase& c : {PoolCase{TensorShape({4, 28, 28, 16}), 2, 2, "VALID"},
                              PoolCase{TensorShape({2, 7, 7, 3}), 2, 2, "SAME"},
                              PoolCase{TensorShape({2, 9, 8, 2}), 3, 2, "SAME"},
                              PoolCase{TensorShape({1, 6, 6, 4}), 3, 1, "VALID"},
                              PoolCase{TensorShape({0, 4, 4, 2}), 2, 2, "VALID"}}) {
      const std::vector<int64_t> ksize = {1, c.window, c.window, 1};
      const std::vector<int64_t> strides = {1, c.stride, c.stride, 1};
      Tensor x = RandomSmallInts(rng(), DT_FLOAT, c.shape, -2, 3);
      const std::string label =
          absl::StrCat(DataTypeName(t), " ", c.shape.DebugString(), " window ", c.window,
                       " stride ", c.stride, " ", c.padding);
      EXPECT_TRUE(GpuMatchesCpu({.label = "MaxPool " + label,
                                 .build =
                                     [&](const Scope& s, const Inputs& in) {
                                       return Outputs{ops::MaxPool(s.WithOpName("op"),
                                                                   ops::Relu(s, in[0]), ksize,
                                                                   strides, c.padding)};
                                     },
                                 .inputs = {x},
                                 .bound = 0,
                                 .gpu_inputs = {ConvertTo(x, t)}}));
      // The pooled values themselves as the incoming gradient.
      EXPECT_TRUE(GpuMatchesCpu({.label = "MaxPoolGrad " + label,
                                 .build =
                                     [&](const Scope& s, const Inputs& in) {
                                       Output relu = ops::Relu(s, in[0]);
                                       Output y = ops::MaxPool(s, relu, ksize, strides, c.padding);
                                       return Outputs{ops::MaxPoolGrad(s.WithOpName("op"), relu, y,
                                                                       y, ksize, strides,
                                                                       c.padding)};
                                     },
                                 .inputs = {x},
                                 .bound = 1e-6,
                                 .gpu_inputs = {ConvertTo(x, t)}}));
    }
  }
}

// MatMul with transposes and an optional `_gpu_precision` attr.
BuildFn MatMulBuild(bool ta, bool tb, const std::string& precision) {
  return [ta, tb, precision](const Scope& s, const Inputs& in) {
    OpBuilder b = s.WithOpName("op").Op("MatMul");
    b.Input(in[0]).Input(in[1]).Attr("transpose_a", ta).Attr("transpose_b", tb);
    if (!precision.empty()) b.Attr("_gpu_precision", precision);
    return Outputs{b.Finalize1()};
  };
}

struct MatMulSize {
  int64_t m, k, n;
};

std::vector<MatMulSize> MatMulSizes() {
  return {{1, 1, 1}, {3, 5, 7}, {64, 784, 256}, {129, 257, 65}, {256, 1024, 10}, {1, 300, 1}};
}

TensorShape Operand(int64_t rows, int64_t cols, bool transposed) {
  return transposed ? TensorShape({cols, rows}) : TensorShape({rows, cols});
}

// The relative error of a dot product grows slowly with k; float32 stays far
// below these.
void CheckMatMuls(std::mt19937& rng, const std::string& precision, DataType dtype,
                  double bound) {
  for (const MatMulSize& z : MatMulSizes()) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        Tensor a = RandomTensor(rng, dtype, Operand(z.m, z.k, ta), -1, 1);
        Tensor b = RandomTensor(rng, dtype, Operand(z.k, z.n, tb), -1, 1);
        KernelCase c{.label = absl::StrCat("MatMul ", DataTypeName(dtype), " ",
                                           precision.empty() ? "" : precision + " ", z.m, "x",
                                           z.k, "x", z.n, " ta=", ta, " tb=", tb),
                     .build = MatMulBuild(ta, tb, ""),
                     .inputs = {ConvertTo(a, DT_FLOAT), ConvertTo(b, DT_FLOAT)},
                     .bound = bound,
                     .gpu_build = MatMulBuild(ta, tb, precision),
                     .gpu_inputs = {a, b}};
        EXPECT_TRUE(GpuMatchesCpu(c));
      }
    }
  }
}

TEST_F(GpuMatMulTest, Float32) { CheckMatMuls(rng(), "", DT_FLOAT, 1e-4); }
TEST_F(GpuMatMulTest, Float32Explicit) { CheckMatMuls(rng(), "fp32", DT_FLOAT, 1e-4); }
TEST_F(GpuMatMulTest, TF32) { CheckMatMuls(rng(), "tf32", DT_FLOAT, 1e-3); }
TEST_F(GpuMatMulTest, BF16Precision) { CheckMatMuls(rng(), "bf16", DT_FLOAT, 1e-2); }
TEST_F(GpuMatMulTest, HalfOperands) { CheckMatMuls(rng(), "", DT_HALF, 1e-3); }
TEST_F(GpuMatMulTest, Bfloat16Operands) { CheckMatMuls(rng(), "", DT_BFLOAT16, 1e-2); }

// _FusedMatMul (cuBLASLt's BIAS / RELU_BIAS epilogues) and
// _MatMulBiasAddGrad (its BGRADA epilogue) against the CPU's kernels, at
// MatMul's sizes, every transpose, and an empty contraction.
BuildFn FusedMatMulBuild(bool ta, bool tb, bool relu, const std::string& precision) {
  return [ta, tb, relu, precision](const Scope& s, const Inputs& in) {
    OpBuilder b = s.WithOpName("op").Op("_FusedMatMul");
    b.Input(in[0]).Input(in[1]).InputList(std::vector<Output>{in[2]});
    b.Attr("transpose_a", ta).Attr("transpose_b", tb);
    b.Attr("fused_ops", relu ? std::vector<std::string>{"BiasAdd", "Relu"}
                             : std::vector<std::string>{"BiasAdd"});
    if (!precision.empty()) b.Attr("_gpu_precision", precision);
    return Outputs{b.Finalize1()};
  };
}

BuildFn MatMulBiasAddGradBuild(bool ta, bool tb) {
  return [ta, tb](const Scope& s, const Inputs& in) {
    return ops::MatMulBiasAddGrad(s.WithOpName("op"), in[0], in[1],
                                  {.transpose_a = ta, .transpose_b = tb});
  };
}

std::vector<MatMulSize> FusedSizes() {
  std::vector<MatMulSize> sizes = MatMulSizes();
  sizes.push_back({4, 0, 3});
  return sizes;
}

// On the GPU in `type` (16-bit: fed the same values rounded, compared with
// the CPU's float kernels).
void CheckFusedMatMuls(std::mt19937& rng, const std::string& precision, DataType type,
                       double bound) {
  for (const MatMulSize& z : FusedSizes()) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (bool relu : {false, true}) {
          Tensor a = RandomTensor(rng, type, Operand(z.m, z.k, ta), -1, 1);
          Tensor b = RandomTensor(rng, type, Operand(z.k, z.n, tb), -1, 1);
          Tensor bias = RandomTensor(rng, type, TensorShape({z.n}), -1, 1);
          EXPECT_TRUE(GpuMatchesCpu(
              {.label = absl::StrCat("_FusedMatMul ", DataTypeName(type), " ", precision, " ",
                                     z.m, "x", z.k, "x", z.n, " ta=", ta, " tb=", tb,
                                     relu ? " +Relu" : ""),
               .build = FusedMatMulBuild(ta, tb, relu, ""),
               .inputs = {ConvertTo(a, DT_FLOAT), ConvertTo(b, DT_FLOAT), ConvertTo(bias, DT_FLOAT)},
               .bound = bound,
               .gpu_build = FusedMatMulBuild(ta, tb, relu, precision),
               .gpu_inputs = {a, b, bias}}));
        }
      }
    }
  }
}

TEST_F(GpuMatMulTest, FusedMatMulWithBiasAndRelu) { CheckFusedMatMuls(rng(), "", DT_FLOAT, 1e-4); }
TEST_F(GpuMatMulTest, FusedMatMulTF32) { CheckFusedMatMuls(rng(), "tf32", DT_FLOAT, 1e-3); }
TEST_F(GpuMatMulTest, FusedMatMulBfloat16) { CheckFusedMatMuls(rng(), "", DT_BFLOAT16, 1e-2); }
TEST_F(GpuMatMulTest, FusedMatMulHalf) { CheckFusedMatMuls(rng(), "", DT_HALF, 2e-3); }

TEST_F(GpuMatMulTest, MatMulWithTheBiasGradient) {
  for (DataType type : {DT_FLOAT, DT_BFLOAT16, DT_HALF}) {
    const double bound = type == DT_FLOAT ? 1e-4 : type == DT_BFLOAT16 ? 1e-2 : 2e-3;
    for (const MatMulSize& z : FusedSizes()) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          Tensor a = RandomTensor(rng(), type, Operand(z.m, z.k, ta), -1, 1);
          Tensor b = RandomTensor(rng(), type, Operand(z.k, z.n, tb), -1, 1);
          EXPECT_TRUE(GpuMatchesCpu(
              {.label = absl::StrCat("_MatMulBiasAddGrad ", DataTypeName(type), " ", z.m, "x",
                                     z.k, "x", z.n, " ta=", ta, " tb=", tb),
               .build = MatMulBiasAddGradBuild(ta, tb),
               .inputs = {ConvertTo(a, DT_FLOAT), ConvertTo(b, DT_FLOAT)},
               .bound = bound,
               .gpu_inputs = {a, b}}));
        }
      }
    }
  }
}

TEST_F(GpuMatMulTest, InvalidPrecisionAttrIsAnError) {
  if (DryRunOnCpu()) GTEST_SKIP() << "the CPU MatMul ignores _gpu_precision";
  Tensor a = RandomTensor(rng(), DT_FLOAT, TensorShape({4, 4}), -1, 1);
  absl::StatusOr<DeviceRun> r = RunOn(kGpu0, MatMulBuild(false, false, "fp8"), {a, a}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(std::string(r.status().message()).find("op"), std::string::npos) << r.status();
}

TEST_F(GpuArrayTest, Transpose) {
  struct Case {
    TensorShape shape;
    std::vector<int32_t> perm;
  };
  std::vector<Case> cases = {{TensorShape({3, 4}), {1, 0}},
                             {TensorShape({512, 1000}), {1, 0}},
                             {TensorShape({2, 3, 4, 5}), {3, 1, 0, 2}},
                             {TensorShape({7, 1, 9}), {2, 1, 0}},
                             {TensorShape({5}), {0}},
                             {TensorShape({0, 3}), {1, 0}}};
  for (const std::vector<int32_t>& perm : std::vector<std::vector<int32_t>>{
           {0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}) {
    cases.push_back({TensorShape({6, 7, 33}), perm});
  }
  for (const Case& c : cases) {
    Tensor x = RandomTensor(rng(), DT_FLOAT, c.shape, -1, 1);
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("Transpose ", c.shape.DebugString(), " {",
                                                     absl::StrJoin(c.perm, ","), "}"),
                               .build = [perm = c.perm](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::Transpose(s.WithOpName("op"), in[0],
                                                               IntVector(s, perm))};
                               },
                               .inputs = {x},
                               .bound = 0}));
  }
}

TEST_F(GpuArrayTest, Tile) {
  struct Case {
    TensorShape shape;
    std::vector<int32_t> multiples;
  };
  for (const Case& c : std::vector<Case>{{TensorShape({2, 3}), {2, 3}},
                                         {TensorShape({3, 1, 2}), {1, 4, 2}},
                                         {TensorShape({5}), {1}},
                                         {TensorShape({1, 1024}), {256, 1}},
                                         {TensorShape({4, 5}), {0, 2}}}) {
    Tensor x = RandomTensor(rng(), DT_FLOAT, c.shape, -1, 1);
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("Tile ", c.shape.DebugString(), " {",
                                                     absl::StrJoin(c.multiples, ","), "}"),
                               .build = [m = c.multiples](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::Tile(s.WithOpName("op"), in[0],
                                                          IntVector(s, m))};
                               },
                               .inputs = {x},
                               .bound = 0}));
  }
}

TEST_F(GpuArrayTest, ConcatV2) {
  struct Case {
    std::vector<TensorShape> shapes;
    int32_t axis;
  };
  for (const Case& c : std::vector<Case>{
           {{TensorShape({2, 3}), TensorShape({4, 3})}, 0},
           {{TensorShape({2, 3}), TensorShape({2, 5}), TensorShape({2, 1})}, 1},
           {{TensorShape({2, 3, 4}), TensorShape({2, 3, 7})}, -1},
           {{TensorShape({3, 2, 4}), TensorShape({3, 5, 4}), TensorShape({3, 0, 4})}, 1},
           {{TensorShape({256, 1024}), TensorShape({256, 1024})}, 1},
           {{TensorShape({7}), TensorShape({0})}, 0}}) {
    std::vector<Tensor> xs;
    std::string shapes;
    for (const TensorShape& shape : c.shapes) {
      xs.push_back(RandomTensor(rng(), DT_FLOAT, shape, -1, 1));
      absl::StrAppend(&shapes, shape.DebugString(), " ");
    }
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("ConcatV2 ", shapes, "axis ", c.axis),
                               .build = [axis = c.axis](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::ConcatV2(s.WithOpName("op"), in,
                                                              ops::Const(Unplaced(s), axis))};
                               },
                               .inputs = xs,
                               .bound = 0}));
  }
}

TEST_F(GpuArrayTest, Slice) {
  struct Case {
    TensorShape shape;
    std::vector<int32_t> begin, size;
  };
  for (const Case& c : std::vector<Case>{{TensorShape({5, 7, 9}), {1, 2, 3}, {2, -1, 4}},
                                         {TensorShape({5, 7, 9}), {0, 0, 0}, {5, 7, 9}},
                                         {TensorShape({100}), {17}, {50}},
                                         {TensorShape({256, 1024}), {3, 100}, {200, 900}},
                                         {TensorShape({4, 4}), {2, 2}, {0, 2}}}) {
    Tensor x = RandomTensor(rng(), DT_FLOAT, c.shape, -1, 1);
    EXPECT_TRUE(GpuMatchesCpu(
        {.label = absl::StrCat("Slice ", c.shape.DebugString(), " begin {",
                               absl::StrJoin(c.begin, ","), "} size {", absl::StrJoin(c.size, ","),
                               "}"),
         .build = [b = c.begin, z = c.size](const Scope& s, const Inputs& in) {
           return Outputs{ops::Slice(s.WithOpName("op"), in[0], IntVector(s, b), IntVector(s, z))};
         },
         .inputs = {x},
         .bound = 0}));
  }
}

TEST_F(GpuArrayTest, GatherV2) {
  struct Case {
    TensorShape params, indices;
    int32_t axis;
    DataType index_type;
  };
  for (const Case& c : std::vector<Case>{{TensorShape({10, 4}), TensorShape({6}), 0, DT_INT32},
                                         {TensorShape({3, 10, 4}), TensorShape({2, 3}), 1, DT_INT64},
                                         {TensorShape({1000, 64}), TensorShape({256}), 0, DT_INT32},
                                         {TensorShape({5, 6}), TensorShape({}), 1, DT_INT32},
                                         {TensorShape({8, 3}), TensorShape({0}), 0, DT_INT64}}) {
    Tensor params = RandomTensor(rng(), DT_FLOAT, c.params, -1, 1);
    Tensor indices = RandomTensor(rng(), c.index_type, c.indices, 0, c.params.dim(c.axis));
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("GatherV2 ", c.params.DebugString(), " ",
                                                     c.indices.DebugString(), " axis ", c.axis),
                               .build = [axis = c.axis](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::GatherV2(s.WithOpName("op"), in[0], in[1],
                                                              ops::Const(Unplaced(s), axis))};
                               },
                               .inputs = {params, indices},
                               .bound = 0}));
  }
}

TEST_F(GpuArrayTest, FillZerosLikeOnesLike) {
  Tensor value = RandomTensor(rng(), DT_FLOAT, TensorShape({}), -5, 5);
  for (const std::vector<int32_t>& dims :
       std::vector<std::vector<int32_t>>{{3, 4}, {1 << 20}, {2, 0, 3}, {}}) {
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("Fill {", absl::StrJoin(dims, ","), "}"),
                               .build = [dims](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::Fill(s.WithOpName("op"), IntVector(s, dims),
                                                          in[0])};
                               },
                               .inputs = {value},
                               .bound = 0}));
  }
  for (DataType t : {DT_FLOAT, DT_INT32}) {
    Tensor x = RandomTensor(rng(), t, TensorShape({37, 29}), -5, 5);
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("ZerosLike ", DataTypeName(t)),
                               .build = [](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::ZerosLike(s.WithOpName("op"), in[0])};
                               },
                               .inputs = {x},
                               .bound = 0}));
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("OnesLike ", DataTypeName(t)),
                               .build = [](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::OnesLike(s.WithOpName("op"), in[0])};
                               },
                               .inputs = {x},
                               .bound = 0}));
  }
}

TEST_F(GpuArrayTest, ReshapeExpandDimsSqueezeIdentity) {
  Tensor x = RandomTensor(rng(), DT_FLOAT, TensorShape({6, 1, 20}), -1, 1);
  EXPECT_TRUE(GpuMatchesCpu({.label = "Reshape",
                             .build = [](const Scope& s, const Inputs& in) {
                               return Outputs{ops::Reshape(s.WithOpName("op"), in[0],
                                                           IntVector(s, {-1, 8, 5}))};
                             },
                             .inputs = {x},
                             .bound = 0}));
  EXPECT_TRUE(GpuMatchesCpu({.label = "ExpandDims",
                             .build = [](const Scope& s, const Inputs& in) {
                               return Outputs{ops::ExpandDims(s.WithOpName("op"), in[0],
                                                              ops::Const(Unplaced(s), int32_t{-1}))};
                             },
                             .inputs = {x},
                             .bound = 0}));
  EXPECT_TRUE(GpuMatchesCpu({.label = "Squeeze",
                             .build = [](const Scope& s, const Inputs& in) {
                               return Outputs{ops::Squeeze(s.WithOpName("op"), in[0])};
                             },
                             .inputs = {x},
                             .bound = 0}));
  for (DataType t : {DT_FLOAT, DT_HALF, DT_INT32, DT_INT64, DT_BOOL}) {
    Tensor y = RandomTensor(rng(), t, TensorShape({33, 17}), -100, 100);
    EXPECT_TRUE(GpuMatchesCpu({.label = absl::StrCat("Identity ", DataTypeName(t)),
                               .build = [](const Scope& s, const Inputs& in) {
                                 return Outputs{ops::Identity(s.WithOpName("op"), in[0])};
                               },
                               .inputs = {y},
                               .bound = 0}));
  }
}

}  // namespace
}  // namespace sluice::gpu_test
