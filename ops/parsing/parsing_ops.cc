// Example parsing op definitions, shape functions and wrappers (kernels:
// parsing_kernels.cc).
#include "ops/parsing/parsing_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

TensorShape Concat(const TensorShape& a, const TensorShape& b) {
  if (a.unknown_rank() || b.unknown_rank()) return TensorShape::Unknown();
  TensorShape out = a;
  for (int64_t d : b.dims()) out.AddDim(d);
  return out;
}

// Sets `n` outputs from `*k` on.
void SetOutputs(InferenceContext* c, int* k, int64_t n, const TensorShape& shape) {
  for (int64_t i = 0; i < n; ++i) c->set_output((*k)++, shape);
}

// Sparse triples, then dense values of batch + dense_shapes (+ a step dim).
absl::Status SparseAndDense(InferenceContext* c, int* k, int64_t num_sparse,
                            const TensorShape& batch, const std::vector<TensorShape>& dense_shapes,
                            int index_cols) {
  SetOutputs(c, k, num_sparse, TensorShape({-1, index_cols}));
  SetOutputs(c, k, num_sparse, TensorShape({-1}));
  SetOutputs(c, k, num_sparse, TensorShape({index_cols}));
  for (const TensorShape& d : dense_shapes) c->set_output((*k)++, Concat(batch, d));
  return absl::OkStatus();
}

absl::Status ParseExampleShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 1));
  RETURN_IF_ERROR(c->WithRank(1, 1));
  ASSIGN_OR_RETURN(int64_t num_sparse, c->GetAttr<int64_t>("Nsparse"));
  ASSIGN_OR_RETURN(auto dense_shapes, c->GetAttr<std::vector<TensorShape>>("dense_shapes"));
  ASSIGN_OR_RETURN(int64_t num_dense, c->GetAttr<int64_t>("Ndense"));
  if (static_cast<int64_t>(dense_shapes.size()) != num_dense) {
    return absl::InvalidArgumentError(absl::StrCat("len(dense_keys) != len(dense_shapes): ",
                                                   num_dense, " vs. ", dense_shapes.size()));
  }
  TensorShape batch = c->input(0).unknown_rank() ? TensorShape({-1}) : c->input(0);
  int k = 0;
  return SparseAndDense(c, &k, num_sparse, batch, dense_shapes, 2);
}

absl::Status ParseExampleV2Shape(InferenceContext* c) {
  ASSIGN_OR_RETURN(int64_t num_sparse, c->GetAttr<int64_t>("num_sparse"));
  ASSIGN_OR_RETURN(auto dense_shapes, c->GetAttr<std::vector<TensorShape>>("dense_shapes"));
  ASSIGN_OR_RETURN(auto ragged_values, c->GetAttr<std::vector<DataType>>("ragged_value_types"));
  ASSIGN_OR_RETURN(auto ragged_splits, c->GetAttr<std::vector<DataType>>("ragged_split_types"));
  if (ragged_values.size() != ragged_splits.size()) {
    return absl::InvalidArgumentError(
        "ragged_value_types and ragged_split_types must have the same length");
  }
  const TensorShape& batch = c->input(0);
  int k = 0;
  const int cols = batch.unknown_rank() ? -1 : batch.rank() + 1;
  RETURN_IF_ERROR(SparseAndDense(c, &k, num_sparse, batch, dense_shapes, cols));
  SetOutputs(c, &k, ragged_values.size(), TensorShape({-1}));
  const int64_t splits = batch.rank() == 1 && batch.dim(0) >= 0 ? batch.dim(0) + 1 : -1;
  SetOutputs(c, &k, ragged_splits.size(), TensorShape({batch.rank() == 0 ? 2 : splits}));
  return absl::OkStatus();
}

absl::Status ParseSingleExampleShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 0));
  ASSIGN_OR_RETURN(int64_t num_sparse, c->GetAttr<int64_t>("num_sparse"));
  ASSIGN_OR_RETURN(auto sparse_keys, c->GetAttr<std::vector<std::string>>("sparse_keys"));
  ASSIGN_OR_RETURN(auto dense_keys, c->GetAttr<std::vector<std::string>>("dense_keys"));
  ASSIGN_OR_RETURN(auto dense_shapes, c->GetAttr<std::vector<TensorShape>>("dense_shapes"));
  if (static_cast<int64_t>(sparse_keys.size()) != num_sparse) {
    return absl::InvalidArgumentError(absl::StrCat("len(sparse_keys) != num_sparse: ",
                                                   sparse_keys.size(), " vs. ", num_sparse));
  }
  if (dense_keys.size() != dense_shapes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("len(dense_keys) != len(dense_shapes): ",
                                                   dense_keys.size(), " vs. ",
                                                   dense_shapes.size()));
  }
  int k = 0;
  return SparseAndDense(c, &k, num_sparse, TensorShape(), dense_shapes, 1);
}

absl::Status ParseSequenceExampleShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 1));
  RETURN_IF_ERROR(c->WithRank(1, 1));
  const int64_t n = c->input(0).rank() == 1 ? c->input(0).dim(0) : -1;
  ASSIGN_OR_RETURN(int64_t ncs, c->GetAttr<int64_t>("Ncontext_sparse"));
  ASSIGN_OR_RETURN(auto cds, c->GetAttr<std::vector<TensorShape>>("context_dense_shapes"));
  ASSIGN_OR_RETURN(int64_t nfs, c->GetAttr<int64_t>("Nfeature_list_sparse"));
  ASSIGN_OR_RETURN(auto fds, c->GetAttr<std::vector<TensorShape>>("feature_list_dense_shapes"));
  int k = 0;
  RETURN_IF_ERROR(SparseAndDense(c, &k, ncs, TensorShape({n}), cds, 2));
  RETURN_IF_ERROR(SparseAndDense(c, &k, nfs, TensorShape({n, -1}), fds, 3));
  SetOutputs(c, &k, fds.size(), TensorShape({n}));
  return absl::OkStatus();
}

constexpr char kFeatureTypes[] = "{float, int64, string}";

}  // namespace

absl::Status RegisterParsingOps(OpRegistry* ops) {
  const std::string types = kFeatureTypes;
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ParseExample")
                                    .Attr("Nsparse: int >= 0")
                                    .Attr("Ndense: int >= 0")
                                    .Attr("sparse_types: list(" + types + ") >= 0")
                                    .Attr("Tdense: list(" + types + ") >= 0")
                                    .Attr("dense_shapes: list(shape) >= 0")
                                    .Input("serialized: string")
                                    .Input("names: string")
                                    .Input("sparse_keys: Nsparse * string")
                                    .Input("dense_keys: Ndense * string")
                                    .Input("dense_defaults: Tdense")
                                    .Output("sparse_indices: Nsparse * int64")
                                    .Output("sparse_values: sparse_types")
                                    .Output("sparse_shapes: Nsparse * int64")
                                    .Output("dense_values: Tdense")
                                    .SetShapeFn(ParseExampleShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ParseExampleV2")
                                    .Attr("Tdense: list(" + types + ") >= 0")
                                    .Attr("num_sparse: int >= 0")
                                    .Attr("sparse_types: list(" + types + ") >= 0")
                                    .Attr("ragged_value_types: list(" + types + ") >= 0")
                                    .Attr("ragged_split_types: list({int32, int64}) >= 0")
                                    .Attr("dense_shapes: list(shape) >= 0")
                                    .Input("serialized: string")
                                    .Input("names: string")
                                    .Input("sparse_keys: string")
                                    .Input("dense_keys: string")
                                    .Input("ragged_keys: string")
                                    .Input("dense_defaults: Tdense")
                                    .Output("sparse_indices: num_sparse * int64")
                                    .Output("sparse_values: sparse_types")
                                    .Output("sparse_shapes: num_sparse * int64")
                                    .Output("dense_values: Tdense")
                                    .Output("ragged_values: ragged_value_types")
                                    .Output("ragged_row_splits: ragged_split_types")
                                    .SetShapeFn(ParseExampleV2Shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ParseSingleExample")
                                    .Attr("num_sparse: int >= 0")
                                    .Attr("sparse_keys: list(string) >= 0")
                                    .Attr("dense_keys: list(string) >= 0")
                                    .Attr("sparse_types: list(" + types + ") >= 0")
                                    .Attr("Tdense: list(" + types + ") >= 0")
                                    .Attr("dense_shapes: list(shape) >= 0")
                                    .Input("serialized: string")
                                    .Input("dense_defaults: Tdense")
                                    .Output("sparse_indices: num_sparse * int64")
                                    .Output("sparse_values: sparse_types")
                                    .Output("sparse_shapes: num_sparse * int64")
                                    .Output("dense_values: Tdense")
                                    .SetShapeFn(ParseSingleExampleShape)));
  RETURN_IF_ERROR(
      ops->Register(OpDefBuilder("ParseSequenceExample")
                        .Attr("feature_list_dense_missing_assumed_empty: list(string) >= 0")
                        .Attr("context_sparse_keys: list(string) >= 0")
                        .Attr("context_dense_keys: list(string) >= 0")
                        .Attr("feature_list_sparse_keys: list(string) >= 0")
                        .Attr("feature_list_dense_keys: list(string) >= 0")
                        .Attr("Ncontext_sparse: int >= 0 = 0")
                        .Attr("Ncontext_dense: int >= 0 = 0")
                        .Attr("Nfeature_list_sparse: int >= 0 = 0")
                        .Attr("Nfeature_list_dense: int >= 0 = 0")
                        .Attr("context_sparse_types: list(" + types + ") >= 0 = []")
                        .Attr("Tcontext_dense: list(" + types + ") >= 0 = []")
                        .Attr("feature_list_dense_types: list(" + types + ") >= 0 = []")
                        .Attr("context_dense_shapes: list(shape) >= 0 = []")
                        .Attr("feature_list_sparse_types: list(" + types + ") >= 0 = []")
                        .Attr("feature_list_dense_shapes: list(shape) >= 0 = []")
                        .Input("serialized: string")
                        .Input("debug_name: string")
                        .Input("context_dense_defaults: Tcontext_dense")
                        .Output("context_sparse_indices: Ncontext_sparse * int64")
                        .Output("context_sparse_values: context_sparse_types")
                        .Output("context_sparse_shapes: Ncontext_sparse * int64")
                        .Output("context_dense_values: Tcontext_dense")
                        .Output("feature_list_sparse_indices: Nfeature_list_sparse * int64")
                        .Output("feature_list_sparse_values: feature_list_sparse_types")
                        .Output("feature_list_sparse_shapes: Nfeature_list_sparse * int64")
                        .Output("feature_list_dense_values: feature_list_dense_types")
                        .Output("feature_list_dense_lengths: Nfeature_list_dense * int64")
                        .SetShapeFn(ParseSequenceExampleShape)));
  for (const char* op :
       {"ParseExample", "ParseExampleV2", "ParseSingleExample", "ParseSequenceExample"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {
namespace {

std::vector<Input> Strings(const std::vector<std::string>& v) {
  return std::vector<Input>(v.begin(), v.end());
}

// Splits `all` into consecutive groups of the given sizes.
std::vector<std::vector<Output>> Groups(const std::vector<Output>& all,
                                        std::initializer_list<size_t> sizes) {
  std::vector<std::vector<Output>> groups;
  size_t at = 0;
  for (size_t n : sizes) {
    std::vector<Output> g;
    for (size_t i = 0; i < n && at < all.size(); ++i) g.push_back(all[at++]);
    groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<DataType> TypesOf(const std::vector<Output>& v) {
  std::vector<DataType> t;
  for (const Output& o : v) t.push_back(o.node == nullptr ? DT_INVALID : o.dtype());
  return t;
}

ParseExampleOutputs Split(const std::vector<Output>& all, size_t ns, size_t nd, size_t nr) {
  auto g = Groups(all, {ns, ns, ns, nd, nr, nr});
  return {g[0], g[1], g[2], g[3], g[4], g[5]};
}

}  // namespace

ParseExampleOutputs ParseExample(const Scope& s, Input serialized, Input names,
                                 const std::vector<std::string>& sparse_keys,
                                 const std::vector<std::string>& dense_keys,
                                 const std::vector<Output>& dense_defaults,
                                 const std::vector<DataType>& sparse_types,
                                 const std::vector<TensorShape>& dense_shapes,
                                 std::source_location loc) {
  std::vector<Output> all = s.Op("ParseExample", loc)
                                .Input(serialized)
                                .Input(names)
                                .InputList(Strings(sparse_keys))
                                .InputList(Strings(dense_keys))
                                .InputList(dense_defaults)
                                .Attr("sparse_types", sparse_types)
                                .Attr("dense_shapes", dense_shapes)
                                .Attr("Tdense", TypesOf(dense_defaults))
                                .FinalizeAll();
  return Split(all, sparse_keys.size(), dense_keys.size(), 0);
}

ParseExampleOutputs ParseExampleV2(const Scope& s, Input serialized, Input names,
                                   const std::vector<std::string>& sparse_keys,
                                   const std::vector<std::string>& dense_keys,
                                   const std::vector<std::string>& ragged_keys,
                                   const std::vector<Output>& dense_defaults,
                                   const ParseExampleV2Attrs& a, std::source_location loc) {
  auto vec = [](const std::vector<std::string>& v) {
    ::tensorflow::TensorProto p;
    p.set_dtype(DT_STRING);
    p.mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(v.size()));
    for (const std::string& x : v) p.add_string_val(x);
    return Input(std::move(p));
  };
  std::vector<Output> all = s.Op("ParseExampleV2", loc)
                                .Input(serialized)
                                .Input(names)
                                .Input(vec(sparse_keys))
                                .Input(vec(dense_keys))
                                .Input(vec(ragged_keys))
                                .InputList(dense_defaults)
                                .Attr("Tdense", TypesOf(dense_defaults))
                                .Attr("num_sparse", static_cast<int64_t>(sparse_keys.size()))
                                .Attr("sparse_types", a.sparse_types)
                                .Attr("ragged_value_types", a.ragged_value_types)
                                .Attr("ragged_split_types", a.ragged_split_types)
                                .Attr("dense_shapes", a.dense_shapes)
                                .FinalizeAll();
  return Split(all, sparse_keys.size(), dense_keys.size(), ragged_keys.size());
}

ParseExampleOutputs ParseSingleExample(const Scope& s, Input serialized,
                                       const std::vector<Output>& dense_defaults,
                                       const std::vector<std::string>& sparse_keys,
                                       const std::vector<std::string>& dense_keys,
                                       const std::vector<DataType>& sparse_types,
                                       const std::vector<TensorShape>& dense_shapes,
                                       std::source_location loc) {
  std::vector<Output> all = s.Op("ParseSingleExample", loc)
                                .Input(serialized)
                                .InputList(dense_defaults)
                                .Attr("Tdense", TypesOf(dense_defaults))
                                .Attr("num_sparse", static_cast<int64_t>(sparse_keys.size()))
                                .Attr("sparse_keys", sparse_keys)
                                .Attr("dense_keys", dense_keys)
                                .Attr("sparse_types", sparse_types)
                                .Attr("dense_shapes", dense_shapes)
                                .FinalizeAll();
  return Split(all, sparse_keys.size(), dense_keys.size(), 0);
}

ParseSequenceExampleOutputs ParseSequenceExample(const Scope& s, Input serialized,
                                                 Input debug_name,
                                                 const std::vector<Output>& context_dense_defaults,
                                                 const ParseSequenceExampleAttrs& a,
                                                 std::source_location loc) {
  auto n = [](const auto& v) { return static_cast<int64_t>(v.size()); };
  std::vector<Output> all =
      s.Op("ParseSequenceExample", loc)
          .Input(serialized)
          .Input(debug_name)
          .InputList(context_dense_defaults)
          .Attr("Tcontext_dense", TypesOf(context_dense_defaults))
          .Attr("feature_list_dense_missing_assumed_empty",
                a.feature_list_dense_missing_assumed_empty)
          .Attr("context_sparse_keys", a.context_sparse_keys)
          .Attr("context_dense_keys", a.context_dense_keys)
          .Attr("feature_list_sparse_keys", a.feature_list_sparse_keys)
          .Attr("feature_list_dense_keys", a.feature_list_dense_keys)
          .Attr("Ncontext_sparse", n(a.context_sparse_keys))
          .Attr("Ncontext_dense", n(a.context_dense_keys))
          .Attr("Nfeature_list_sparse", n(a.feature_list_sparse_keys))
          .Attr("Nfeature_list_dense", n(a.feature_list_dense_keys))
          .Attr("context_sparse_types", a.context_sparse_types)
          .Attr("feature_list_dense_types", a.feature_list_dense_types)
          .Attr("context_dense_shapes", a.context_dense_shapes)
          .Attr("feature_list_sparse_types", a.feature_list_sparse_types)
          .Attr("feature_list_dense_shapes", a.feature_list_dense_shapes)
          .FinalizeAll();
  const size_t cs = a.context_sparse_keys.size(), cd = a.context_dense_keys.size();
  const size_t fs = a.feature_list_sparse_keys.size(), fd = a.feature_list_dense_keys.size();
  auto g = Groups(all, {cs, cs, cs, cd, fs, fs, fs, fd, fd});
  return {g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8]};
}

}  // namespace ops
}  // namespace sluice
