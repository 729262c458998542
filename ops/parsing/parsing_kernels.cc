// CPU kernels of ParseExample, ParseExampleV2, ParseSingleExample and
// ParseSequenceExample (ops/parsing/parsing_ops.h): they build an
// ExampleParseConfig (from attrs at Init where the keys are attrs, from the
// key inputs otherwise) and hand the batch to ops/parsing/example_parser.h.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/parsing/example_parser.h"
#include "ops/parsing/parsing_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// Reads a string scalar (V1 key inputs) or every string of a vector (V2).
absl::StatusOr<std::vector<std::string>> KeysOf(const Tensor& t, const char* what) {
  if (t.dtype() != DT_STRING || t.dims() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a string scalar or vector, got ", t.DebugString(0)));
  }
  std::vector<std::string> keys;
  for (const std::string& k : t.flat<std::string>()) keys.push_back(k);
  return keys;
}

absl::Status CheckCount(size_t got, size_t want, const char* what, const char* attr) {
  if (got == want) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("len(", what, ") != len(", attr, "): ", got, " vs. ", want));
}

void SetOutputs(OpKernelContext* ctx, int* k, std::vector<Tensor>& ts) {
  for (Tensor& t : ts) ctx->set_output((*k)++, std::move(t));
}

void SetExampleOutputs(OpKernelContext* ctx, int* k, ExampleParseResult& r) {
  SetOutputs(ctx, k, r.sparse_indices);
  SetOutputs(ctx, k, r.sparse_values);
  SetOutputs(ctx, k, r.sparse_shapes);
  SetOutputs(ctx, k, r.dense);
}

// Fills the dense specs' defaults from inputs [first, first + n).
void SetDefaults(OpKernelContext* ctx, int first, ExampleParseConfig* config) {
  for (size_t j = 0; j < config->dense.size(); ++j) {
    config->dense[j].default_value = ctx->input(first + static_cast<int>(j));
  }
}

// The dense defaults on inputs [first, first + n).
std::vector<Tensor> Defaults(OpKernelContext* ctx, int first, size_t n) {
  std::vector<Tensor> d;
  d.reserve(n);
  for (size_t j = 0; j < n; ++j) d.push_back(ctx->input(first + static_cast<int>(j)));
  return d;
}

// ParseExample (keys as Nsparse + Ndense scalar inputs) and ParseExampleV2
// (keys as three vectors, plus ragged).
template <bool kV2>
class ParseExampleOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(sparse_types_, ctx.GetAttr<std::vector<DataType>>("sparse_types"));
    ASSIGN_OR_RETURN(dense_types_, ctx.GetAttr<std::vector<DataType>>("Tdense"));
    ASSIGN_OR_RETURN(dense_shapes_, ctx.GetAttr<std::vector<TensorShape>>("dense_shapes"));
    RETURN_IF_ERROR(CheckCount(dense_types_.size(), dense_shapes_.size(), "Tdense", "dense_shapes"));
    if constexpr (kV2) {
      ASSIGN_OR_RETURN(int64_t num_sparse, ctx.GetAttr<int64_t>("num_sparse"));
      RETURN_IF_ERROR(CheckCount(sparse_types_.size(), num_sparse, "sparse_types", "num_sparse"));
      ASSIGN_OR_RETURN(ragged_types_, ctx.GetAttr<std::vector<DataType>>("ragged_value_types"));
      ASSIGN_OR_RETURN(ragged_splits_, ctx.GetAttr<std::vector<DataType>>("ragged_split_types"));
      RETURN_IF_ERROR(CheckCount(ragged_types_.size(), ragged_splits_.size(),
                                 "ragged_value_types", "ragged_split_types"));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ExampleParseConfig config;
    std::vector<std::string> sparse_keys, dense_keys, ragged_keys;
    int defaults_at;
    if constexpr (kV2) {
      ASSIGN_OR_RETURN(sparse_keys, KeysOf(ctx->input(2), "sparse_keys"));
      ASSIGN_OR_RETURN(dense_keys, KeysOf(ctx->input(3), "dense_keys"));
      ASSIGN_OR_RETURN(ragged_keys, KeysOf(ctx->input(4), "ragged_keys"));
      defaults_at = 5;
    } else {
      const int ns = static_cast<int>(sparse_types_.size());
      const int nd = static_cast<int>(dense_types_.size());
      for (int i = 0; i < ns + nd; ++i) {
        const Tensor& k = ctx->input(2 + i);
        if (k.dtype() != DT_STRING || k.NumElements() != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat(i < ns ? "sparse_keys[" : "dense_keys[", i < ns ? i : i - ns,
                           "] must be a string scalar"));
        }
        (i < ns ? sparse_keys : dense_keys).push_back(k.flat<std::string>()[0]);
      }
      defaults_at = 2 + ns + nd;
    }
    RETURN_IF_ERROR(CheckCount(sparse_keys.size(), sparse_types_.size(), "sparse_keys", "sparse_types"));
    RETURN_IF_ERROR(CheckCount(dense_keys.size(), dense_types_.size(), "dense_keys", "Tdense"));
    RETURN_IF_ERROR(CheckCount(ragged_keys.size(), ragged_types_.size(), "ragged_keys",
                               "ragged_value_types"));
    for (size_t j = 0; j < dense_keys.size(); ++j) {
      config.dense.push_back({dense_keys[j], dense_types_[j], dense_shapes_[j], Tensor()});
    }
    for (size_t j = 0; j < sparse_keys.size(); ++j) {
      config.sparse.push_back({sparse_keys[j], sparse_types_[j]});
    }
    for (size_t j = 0; j < ragged_keys.size(); ++j) {
      config.ragged.push_back({ragged_keys[j], ragged_types_[j], ragged_splits_[j]});
    }
    SetDefaults(ctx, defaults_at, &config);
    RETURN_IF_ERROR(config.Finish());
    const Tensor& serialized = ctx->input(0);
    if (!kV2 && serialized.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("Expected serialized to be a vector, got shape: ",
                                                     serialized.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(ExampleParseResult r,
                     ParseExamples(config, serialized, ctx->input(1), ctx->allocator()));
    int k = 0;
    SetExampleOutputs(ctx, &k, r);
    SetOutputs(ctx, &k, r.ragged_values);
    SetOutputs(ctx, &k, r.ragged_splits);
    return absl::OkStatus();
  }

 private:
  std::vector<DataType> sparse_types_, dense_types_, ragged_types_, ragged_splits_;
  std::vector<TensorShape> dense_shapes_;
};

class ParseSingleExampleOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(auto sparse_keys, ctx.GetAttr<std::vector<std::string>>("sparse_keys"));
    ASSIGN_OR_RETURN(auto dense_keys, ctx.GetAttr<std::vector<std::string>>("dense_keys"));
    ASSIGN_OR_RETURN(auto sparse_types, ctx.GetAttr<std::vector<DataType>>("sparse_types"));
    ASSIGN_OR_RETURN(auto dense_types, ctx.GetAttr<std::vector<DataType>>("Tdense"));
    ASSIGN_OR_RETURN(auto dense_shapes, ctx.GetAttr<std::vector<TensorShape>>("dense_shapes"));
    RETURN_IF_ERROR(CheckCount(sparse_keys.size(), sparse_types.size(), "sparse_keys", "sparse_types"));
    RETURN_IF_ERROR(CheckCount(dense_keys.size(), dense_types.size(), "dense_keys", "Tdense"));
    RETURN_IF_ERROR(CheckCount(dense_keys.size(), dense_shapes.size(), "dense_keys", "dense_shapes"));
    for (size_t j = 0; j < dense_keys.size(); ++j) {
      config_.dense.push_back({dense_keys[j], dense_types[j], dense_shapes[j], Tensor()});
    }
    for (size_t j = 0; j < sparse_keys.size(); ++j) {
      config_.sparse.push_back({sparse_keys[j], sparse_types[j]});
    }
    return config_.Finish();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    if (serialized.dtype() != DT_STRING || serialized.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected serialized to be a scalar, got shape: ", serialized.shape().DebugString()));
    }
    const std::vector<Tensor> defaults = Defaults(ctx, 1, config_.dense.size());
    ASSIGN_OR_RETURN(ExampleParseResult r,
                     ParseExamples(config_, serialized, Tensor(), ctx->allocator(), &defaults));
    int k = 0;
    SetExampleOutputs(ctx, &k, r);
    return absl::OkStatus();
  }

 private:
  ExampleParseConfig config_;
};

class ParseSequenceExampleOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    using Strings = std::vector<std::string>;
    using Types = std::vector<DataType>;
    using Shapes = std::vector<TensorShape>;
    ASSIGN_OR_RETURN(auto cs_keys, ctx.GetAttr<Strings>("context_sparse_keys"));
    ASSIGN_OR_RETURN(auto cd_keys, ctx.GetAttr<Strings>("context_dense_keys"));
    ASSIGN_OR_RETURN(auto fs_keys, ctx.GetAttr<Strings>("feature_list_sparse_keys"));
    ASSIGN_OR_RETURN(auto fd_keys, ctx.GetAttr<Strings>("feature_list_dense_keys"));
    ASSIGN_OR_RETURN(auto cs_types, ctx.GetAttr<Types>("context_sparse_types"));
    ASSIGN_OR_RETURN(auto cd_types, ctx.GetAttr<Types>("Tcontext_dense"));
    ASSIGN_OR_RETURN(auto fs_types, ctx.GetAttr<Types>("feature_list_sparse_types"));
    ASSIGN_OR_RETURN(auto fd_types, ctx.GetAttr<Types>("feature_list_dense_types"));
    ASSIGN_OR_RETURN(auto cd_shapes, ctx.GetAttr<Shapes>("context_dense_shapes"));
    ASSIGN_OR_RETURN(auto fd_shapes, ctx.GetAttr<Shapes>("feature_list_dense_shapes"));
    ASSIGN_OR_RETURN(lists_.missing_assumed_empty,
                     ctx.GetAttr<Strings>("feature_list_dense_missing_assumed_empty"));
    RETURN_IF_ERROR(CheckCount(cs_keys.size(), cs_types.size(), "context_sparse_keys", "context_sparse_types"));
    RETURN_IF_ERROR(CheckCount(cd_keys.size(), cd_types.size(), "context_dense_keys", "Tcontext_dense"));
    RETURN_IF_ERROR(CheckCount(cd_keys.size(), cd_shapes.size(), "context_dense_keys", "context_dense_shapes"));
    RETURN_IF_ERROR(CheckCount(fs_keys.size(), fs_types.size(), "feature_list_sparse_keys", "feature_list_sparse_types"));
    RETURN_IF_ERROR(CheckCount(fd_keys.size(), fd_types.size(), "feature_list_dense_keys", "feature_list_dense_types"));
    RETURN_IF_ERROR(CheckCount(fd_keys.size(), fd_shapes.size(), "feature_list_dense_keys", "feature_list_dense_shapes"));
    for (size_t j = 0; j < cd_keys.size(); ++j) {
      context_.dense.push_back({cd_keys[j], cd_types[j], cd_shapes[j], Tensor()});
    }
    for (size_t j = 0; j < cs_keys.size(); ++j) context_.sparse.push_back({cs_keys[j], cs_types[j]});
    for (size_t j = 0; j < fd_keys.size(); ++j) {
      lists_.dense.push_back({fd_keys[j], fd_types[j], fd_shapes[j], Tensor()});
    }
    for (size_t j = 0; j < fs_keys.size(); ++j) lists_.sparse.push_back({fs_keys[j], fs_types[j]});
    return context_.Finish();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const std::vector<Tensor> defaults = Defaults(ctx, 2, context_.dense.size());
    ASSIGN_OR_RETURN(SequenceExampleParseResult r,
                     ParseSequenceExamples(context_, lists_, ctx->input(0), ctx->input(1),
                                           ctx->allocator(), &defaults));
    int k = 0;
    SetExampleOutputs(ctx, &k, r.context);
    SetOutputs(ctx, &k, r.list_sparse_indices);
    SetOutputs(ctx, &k, r.list_sparse_values);
    SetOutputs(ctx, &k, r.list_sparse_shapes);
    SetOutputs(ctx, &k, r.list_dense);
    SetOutputs(ctx, &k, r.list_dense_lengths);
    return absl::OkStatus();
  }

 private:
  ExampleParseConfig context_;
  FeatureListConfig lists_;
};

}  // namespace

void RegisterParsingKernels(KernelRegistry* k) {
  k->Register<ParseExampleOp<false>>(KernelDef("ParseExample", kDeviceTypeCpu));
  k->Register<ParseExampleOp<true>>(KernelDef("ParseExampleV2", kDeviceTypeCpu));
  k->Register<ParseSingleExampleOp>(KernelDef("ParseSingleExample", kDeviceTypeCpu));
  k->Register<ParseSequenceExampleOp>(KernelDef("ParseSequenceExample", kDeviceTypeCpu));
}

}  // namespace sluice
