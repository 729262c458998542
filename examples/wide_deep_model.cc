#include "examples/wide_deep_model.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/random/random_ops.h"

namespace sluice {
namespace {

Output ShapeOf(const Scope& s, const TensorShape& shape) {
  return ops::Const(s, shape.dims(), TensorShape({shape.rank()}));
}

// Truncated normal of `shape` times `stddev`, seeded per variable.
Output RandomInit(const Scope& s, const TensorShape& shape, double stddev, int64_t seed,
                  int64_t seed2) {
  Output draw =
      ops::TruncatedNormal(s, ShapeOf(s, shape), DT_FLOAT, {.seed = seed, .seed2 = seed2});
  return ops::Mul(s, draw, static_cast<float>(stddev));
}

Output Zeros(const Scope& s, const TensorShape& shape) {
  return ops::Fill(s, ShapeOf(s, shape), 0.0f);
}

}  // namespace

absl::StatusOr<WideDeepModel> BuildWideDeep(const Scope& s, const WideDeepConfig& c) {
  if (c.features < 1 || c.buckets < 1 || c.dim < 1 || c.partitions < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("wide & deep: features (", c.features, "), buckets (", c.buckets, "), dim (",
                     c.dim, ") and partitions (", c.partitions, ") must be positive"));
  }
  WideDeepModel m;
  m.ids = ops::Placeholder(s.WithOpName("ids"), DT_INT64, {.shape = TensorShape({-1, c.features})});
  m.labels = ops::Placeholder(s.WithOpName("labels"), DT_FLOAT, {.shape = TensorShape({-1})});
  int64_t seed2 = 0;

  // Wide: one weight per bucket, summed over the features, plus a bias.
  ASSIGN_OR_RETURN(m.linear, CreatePartitionedVariable(
                                 s, "linear/weights", TensorShape({c.buckets, 1}), DT_FLOAT,
                                 FixedSizePartitioner(c.partitions),
                                 [](const Scope& p, const TensorShape& shape,
                                    const std::vector<int64_t>&) { return Zeros(p, shape); }));
  // Each distinct id of the batch is looked up once (TF's
  // embedding_lookup_sparse does the same): a step moves the rows it
  // touches, each once, to and from the ps.
  const Scope ids_scope = s.NewSubScope("unique_ids");
  ops::UniqueOutputs unique =
      ops::Unique(ids_scope, ops::Reshape(ids_scope, m.ids, ops::Const(ids_scope, {int64_t{-1}})));
  const auto lookup = [&](const std::string& name,
                          const PartitionedVariable& table) -> absl::StatusOr<Output> {
    const Scope ls = s.NewSubScope(name);
    ASSIGN_OR_RETURN(Output distinct_rows, EmbeddingLookup(ls, table, unique.y));
    Output rows = ops::GatherV2(ls, distinct_rows, unique.idx, int32_t{0});
    return ops::Reshape(
        ls, rows, ops::Const(ls, std::vector<int64_t>{-1, c.features, table.full_shape.dim(1)}));
  };

  ops::VariableAndInit wide_bias = ops::VariableWithInit(s.WithOpName("linear/bias"), 0.0f);
  ASSIGN_OR_RETURN(Output wide_rows, lookup("linear", m.linear));
  Output wide = ops::Add(s, ops::Sum(s, wide_rows, {1, 2}), wide_bias.var);
  for (const VariablePart& p : m.linear.parts) m.wide.push_back(p.var);
  m.wide.push_back(wide_bias.var);

  // Deep: the features' embeddings side by side, then ReLU layers.
  const double emb_stddev = 1.0 / std::sqrt(static_cast<double>(c.dim));
  ASSIGN_OR_RETURN(m.embeddings,
                   CreatePartitionedVariable(
                       s, "dnn/embeddings", TensorShape({c.buckets, c.dim}), DT_FLOAT,
                       FixedSizePartitioner(c.partitions),
                       [&](const Scope& p, const TensorShape& shape, const std::vector<int64_t>&) {
                         return RandomInit(p, shape, emb_stddev, c.seed, ++seed2);
                       }));
  for (const VariablePart& p : m.embeddings.parts) m.deep.push_back(p.var);
  ASSIGN_OR_RETURN(Output rows, lookup("dnn", m.embeddings));
  const int64_t width = c.features * c.dim;
  Output h = ops::Reshape(s, rows, ops::Const(s, std::vector<int64_t>{-1, width}));
  int64_t fan_in = width;
  std::vector<int64_t> sizes = c.hidden;
  sizes.push_back(1);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const Scope layer = s.NewSubScope(absl::StrCat("dnn/layer", i));
    const TensorShape wshape({fan_in, sizes[i]});
    ops::VariableAndInit w = ops::VariableWithInit(
        layer.WithOpName("weights"),
        RandomInit(layer, wshape, std::sqrt(2.0 / static_cast<double>(fan_in)), c.seed, ++seed2));
    ops::VariableAndInit b =
        ops::VariableWithInit(layer.WithOpName("bias"), Zeros(layer, TensorShape({sizes[i]})));
    h = ops::Add(layer, ops::MatMul(layer, h, w.var), b.var);
    if (i + 1 < sizes.size()) h = ops::Relu(layer, h);
    m.deep.push_back(w.var);
    m.deep.push_back(b.var);
    fan_in = sizes[i];
  }
  Output deep = ops::Reshape(s, h, ops::Const(s, std::vector<int64_t>{-1}));

  m.logits = ops::Add(s.WithOpName("logits"), wide, deep);
  m.probabilities = ops::Sigmoid(s.WithOpName("probabilities"), m.logits);
  // Sigmoid cross-entropy, stable for large |x|.
  const Output& x = m.logits;
  Output per_example = ops::Add(s, ops::Sub(s, ops::Maximum(s, x, 0.0f), ops::Mul(s, x, m.labels)),
                                ops::Log1p(s, ops::Exp(s, ops::Neg(s, ops::Abs(s, x)))));
  m.loss = ops::Mean(s.WithOpName("loss"), per_example, {0});
  RETURN_IF_ERROR(s.status());
  return m;
}

}  // namespace sluice
