#include "examples/cnn_model.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

// Glorot (Xavier) uniform, tf.glorot_uniform_initializer: U(-l, l) with
// l = sqrt(6 / (fan_in + fan_out)); a convolution's fans count its window.
Output GlorotUniform(const Scope& s, const std::vector<int64_t>& shape, int64_t fan_in,
                     int64_t fan_out, const CnnConfig& config, int64_t layer) {
  const float limit = static_cast<float>(std::sqrt(6.0 / static_cast<double>(fan_in + fan_out)));
  Output u = ops::RandomUniform(s, ops::Const(s, shape), DT_FLOAT,
                               {.seed = config.seed, .seed2 = layer});
  return ops::Sub(s, ops::Mul(s, u, 2.0f * limit), limit);
}

struct Layer {
  Output kernel, bias;
};

Layer MakeLayer(const Scope& scope, absl::string_view name, const std::vector<int64_t>& shape,
                int64_t fan_in, int64_t fan_out, const CnnConfig& config, int64_t index) {
  Scope s = scope.NewSubScope(name);
  ops::VariableAndInit k = ops::VariableWithInit(
      s.WithOpName("kernel"), GlorotUniform(s, shape, fan_in, fan_out, config, index));
  ops::VariableAndInit b =
      ops::VariableWithInit(s.WithOpName("bias"), ops::Fill(s, {shape.back()}, 0.0f));
  return {k.var, b.var};
}

}  // namespace

absl::StatusOr<CnnModel> BuildCnnTower(const Scope& scope, const CnnConfig& c, Output images,
                                       Output labels) {
  for (int64_t v : {c.height, c.width, c.channels, c.classes, c.kernel, c.conv1, c.conv2, c.dense}) {
    if (v <= 0) return absl::InvalidArgumentError("CnnConfig: every size must be positive");
  }
  if (c.height < 4 || c.width < 4) {
    return absl::InvalidArgumentError(absl::StrCat("CnnConfig: a ", c.height, "x", c.width,
                                                   " image is too small for two 2x2 pools"));
  }
  CnnModel m{scope};
  const Scope& s = m.scope;
  m.images = images;
  m.labels = labels;
  const int64_t k = c.kernel;
  Layer conv1 = MakeLayer(s, "conv1", {k, k, c.channels, c.conv1}, k * k * c.channels,
                          k * k * c.conv1, c, 1);
  Layer conv2 = MakeLayer(s, "conv2", {k, k, c.conv1, c.conv2}, k * k * c.conv1, k * k * c.conv2,
                          c, 2);
  const int64_t h = c.height / 4, w = c.width / 4;  // after two 2x2 pools (VALID)
  const int64_t flat = h * w * c.conv2;
  Layer dense = MakeLayer(s, "dense", {flat, c.dense}, flat, c.dense, c, 3);
  Layer out = MakeLayer(s, "logits", {c.dense, c.classes}, c.dense, c.classes, c, 4);
  for (const Layer* l : {&conv1, &conv2, &dense, &out}) {
    m.weights.push_back(l->kernel);
    m.weights.push_back(l->bias);
  }

  auto conv_pool = [&](absl::string_view name, Output x, const Layer& l) {
    Scope ls = s.NewSubScope(name);
    Output y = ops::Conv2D(ls, x, l.kernel, {1, 1, 1, 1}, "SAME");
    y = ops::Relu(ls, ops::BiasAdd(ls, y, l.bias));
    return ops::MaxPool(ls, y, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  };
  Output x = conv_pool("block1", images, conv1);
  x = conv_pool("block2", x, conv2);
  x = ops::Reshape(s, x, ops::Const(s, std::vector<int64_t>{-1, flat}));
  x = ops::Relu(s, ops::BiasAdd(s, ops::MatMul(s, x, dense.kernel), dense.bias));
  m.logits = ops::BiasAdd(s, ops::MatMul(s, x, out.kernel), out.bias);
  std::vector<Output> xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, m.logits, m.labels);
  if (!s.ok()) return s.status();
  m.loss = ops::Mean(s.WithOpName("loss"), xent[0], {0});
  m.prediction = ops::ArgMax(s.WithOpName("prediction"), m.logits, 1);
  Output correct = ops::Equal(s, m.prediction, m.labels);
  m.accuracy = ops::Mean(s.WithOpName("accuracy"), ops::Cast(s, correct, DT_FLOAT), {0});
  if (!s.ok()) return s.status();
  return m;
}

}  // namespace sluice
