#include "examples/mlp_model.h"

#include <cmath>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"

namespace sluice {

absl::StatusOr<MlpModel> BuildMlpTower(const Scope& scope, const MlpConfig& config, Output x,
                                       Output labels) {
  if (config.layers.size() < 2) return absl::InvalidArgumentError("an MLP needs >= 2 layers");
  MlpModel m{scope};
  const Scope& s = m.scope;
  m.x = x;
  m.labels = labels;
  Output h = m.x;
  for (size_t l = 1; l < config.layers.size(); ++l) {
    Scope layer = s.NewSubScope(absl::StrCat("layer", l));
    const int64_t fan_in = config.layers[l - 1], fan_out = config.layers[l];
    // He initialization: N(0, 2/fan_in), truncated at two deviations.
    Output init = ops::Mul(layer, ops::TruncatedNormal(layer, {fan_in, fan_out}, DT_FLOAT,
                                                       {.seed = config.seed, .seed2 = int64_t(l)}),
                           static_cast<float>(std::sqrt(2.0 / fan_in)));
    ops::VariableAndInit w = ops::VariableWithInit(layer.WithOpName("weights"), init);
    ops::VariableAndInit b = ops::VariableWithInit(
        layer.WithOpName("bias"), ops::Fill(layer, {fan_out}, 0.0f));
    m.weights.push_back(w.var);
    m.weights.push_back(b.var);
    h = ops::BiasAdd(layer, ops::MatMul(layer, h, w.var), b.var);
    if (l + 1 < config.layers.size()) h = ops::Relu(layer, h);
  }
  m.logits = h;
  std::vector<Output> xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, m.logits, m.labels);
  if (!s.ok()) return s.status();
  m.loss = ops::Mean(s.WithOpName("loss"), xent[0], {0});
  m.prediction = ops::ArgMax(s.WithOpName("prediction"), m.logits, 1);
  Output correct = ops::Equal(s, m.prediction, ops::Cast(s, m.labels, DT_INT64));
  m.accuracy = ops::Mean(s.WithOpName("accuracy"), ops::Cast(s, correct, DT_FLOAT), {0});
  if (!s.ok()) return s.status();
  return m;
}

absl::StatusOr<MlpModel> BuildMlpForward(const MlpConfig& config) {
  if (config.layers.size() < 2) return absl::InvalidArgumentError("an MLP needs >= 2 layers");
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT,
                              {.shape = TensorShape({-1, config.layers[0]})});
  Output labels = ops::Placeholder(s.WithOpName("labels"), DT_INT32, {.shape = TensorShape({-1})});
  return BuildMlpTower(s, config, x, labels);
}

absl::StatusOr<std::unique_ptr<Optimizer>> NewMlpOptimizer(const MlpConfig& config) {
  if (config.optimizer == "adam") return std::make_unique<AdamOptimizer>(config.learning_rate);
  if (config.optimizer == "momentum") {
    return std::make_unique<MomentumOptimizer>(config.learning_rate, 0.9);
  }
  if (config.optimizer == "sgd") {
    return std::make_unique<GradientDescentOptimizer>(config.learning_rate);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown optimizer '", config.optimizer, "' (sgd, momentum, adam)"));
}

absl::StatusOr<MlpModel> BuildMlp(const MlpConfig& config) {
  ASSIGN_OR_RETURN(MlpModel m, BuildMlpForward(config));
  const Scope& s = m.scope;
  GlobalStep step = CreateGlobalStep(s);
  m.global_step = step.ref;
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> opt, NewMlpOptimizer(config));
  if (!s.ok()) return s.status();
  absl::StatusOr<Node*> train = opt->Minimize(s.WithOpName("train"), m.loss, m.weights, &m.global_step);
  if (!train.ok()) return train.status();
  m.train = *train;
  m.init = ops::GlobalVariablesInitializer(s.WithOpName("init"));
  if (!s.ok()) return s.status();
  return m;
}

Dataset MakeSyntheticDataset(const DatasetOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> centres(o.classes * o.features);
  for (float& c : centres) c = normal(rng);
  Dataset d{Tensor(DT_FLOAT, TensorShape({o.examples, o.features})),
            Tensor(DT_INT32, TensorShape({o.examples}))};
  float* x = d.x.data<float>();
  int32_t* y = d.y.data<int32_t>();
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(o.classes) - 1);
  const float noise = static_cast<float>(o.noise);
  const float scale = 1.0f / std::sqrt(1.0f + noise * noise);  // unit variance per feature
  for (int64_t i = 0; i < o.examples; ++i) {
    y[i] = pick(rng);
    const float* c = &centres[y[i] * o.features];
    for (int64_t f = 0; f < o.features; ++f) {
      x[i * o.features + f] = (c[f] + noise * normal(rng)) * scale;
    }
  }
  return d;
}

Dataset Batch(const Dataset& data, int64_t begin, int64_t n) {
  const int64_t total = data.x.dim_size(0), features = data.x.dim_size(1);
  Dataset b{Tensor(DT_FLOAT, TensorShape({n, features})), Tensor(DT_INT32, TensorShape({n}))};
  for (int64_t i = 0; i < n; ++i) {
    int64_t row = (begin + i) % total;
    std::memcpy(b.x.data<float>() + i * features, data.x.data<float>() + row * features,
                features * sizeof(float));
    b.y.data<int32_t>()[i] = data.y.data<int32_t>()[row];
  }
  return b;
}

}  // namespace sluice
