#include "ops/math/bincount_ops.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/grad_util.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// ---------------------------------------------------------------- shapes

// The bins' count: the constant `size` input, else unknown; InvalidArgument
// when it is not a scalar.
absl::StatusOr<int64_t> StaticSize(InferenceContext* c, int input) {
  RETURN_IF_ERROR(c->WithRank(input, 0));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> size, c->InputAsInts(input));
  if (!size.has_value() || size->size() != 1) return TensorShape::kUnknownDim;
  if ((*size)[0] < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": size (", (*size)[0], ") must be non-negative"));
  }
  return (*size)[0];
}

absl::Status BincountShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(int64_t size, StaticSize(c, 1));
  c->set_output(0, TensorShape({size}));
  return absl::OkStatus();
}

absl::Status DenseBincountShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(int64_t size, StaticSize(c, 1));
  const TensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
  } else if (in.rank() <= 1) {
    c->set_output(0, TensorShape({size}));
  } else if (in.rank() == 2) {
    c->set_output(0, TensorShape({in.dim(0), size}));
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "DenseBincount: Shape must be at most rank 2 but is rank ", in.rank()));
  }
  return absl::OkStatus();
}

absl::Status SparseBincountShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(int64_t size, StaticSize(c, 3));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dense, c->InputAsInts(2));
  const TensorShape& dense_shape = c->input(2);
  int64_t rank = dense.has_value() ? static_cast<int64_t>(dense->size())
                 : dense_shape.rank() == 1 ? dense_shape.dim(0)
                                           : TensorShape::kUnknownDim;
  if (rank == TensorShape::kUnknownDim) {
    c->set_output(0, TensorShape::Unknown());
  } else if (rank == 1) {
    c->set_output(0, TensorShape({size}));
  } else if (rank == 2) {
    if (dense.has_value() && (*dense)[0] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SparseBincount: dense_shape must not be negative, got [", (*dense)[0], ", ",
          (*dense)[1], "]"));
    }
    c->set_output(0, TensorShape({dense.has_value() ? (*dense)[0] : TensorShape::kUnknownDim,
                                  size}));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("SparseBincount: dense_shape must be of rank 1 or 2, got rank ", rank));
  }
  return absl::OkStatus();
}

absl::Status RaggedBincountShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(int64_t size, StaticSize(c, 2));
  RETURN_IF_ERROR(c->WithRank(0, 1));
  const TensorShape& splits = c->input(0);
  const int64_t rows = splits.rank() == 1 && splits.dim(0) > 0 ? splits.dim(0) - 1
                                                               : TensorShape::kUnknownDim;
  c->set_output(0, TensorShape({rows, size}));
  return absl::OkStatus();
}

// --------------------------------------------------------------- kernels

// Reads the scalar `size` input; TensorFlow's errors.
template <typename Tidx>
absl::StatusOr<int64_t> ReadSize(const Tensor& t) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat("Shape must be rank 0 but is rank ", t.dims()));
  }
  const int64_t size = static_cast<int64_t>(t.data<Tidx>()[0]);
  if (size < 0) {
    return absl::InvalidArgumentError(absl::StrCat("size (", size, ") must be non-negative"));
  }
  return size;
}

// Counts values[begin, end) into `row` (`size` bins, zeroed by the caller).
// `weights` is null for weights of 1.
template <typename T, typename Tidx>
absl::Status CountInto(const Tidx* values, const T* weights, int64_t begin, int64_t end,
                       int64_t size, bool binary, T* row) {
  for (int64_t i = begin; i < end; ++i) {
    const int64_t v = static_cast<int64_t>(values[i]);
    if (v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input arr must be non-negative! Negative input value found: ", v));
    }
    if (v >= size) continue;
    if (binary) {
      row[v] = T(1);
    } else {
      row[v] += weights == nullptr ? T(1) : weights[i];
    }
  }
  return absl::OkStatus();
}

// The weights as a pointer: null when empty, else they must have
// `values`' shape.
template <typename T>
absl::StatusOr<const T*> WeightsFor(const Tensor& weights, const TensorShape& values,
                                    const char* op) {
  if (weights.NumElements() == 0) return nullptr;
  if (weights.shape() != values) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": `weights` must be the same shape as the values ", values.DebugString(),
        " or a length-0 tensor (weights of 1); got ", weights.shape().DebugString()));
  }
  return weights.data<T>();
}

template <typename T>
absl::StatusOr<T*> ZeroedOutput(OpKernelContext* ctx, TensorShape shape) {
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, std::move(shape)));
  T* data = out->data<T>();
  std::fill(data, data + out->NumElements(), T(0));
  return data;
}

// The kernels with a binary_output attr.
class CountingKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(binary_, ctx.GetAttr<bool>("binary_output"));
    return absl::OkStatus();
  }

 protected:
  bool binary_ = false;
};

template <typename T>
class BincountOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& arr = ctx->input(0);
    ASSIGN_OR_RETURN(int64_t size, ReadSize<int32_t>(ctx->input(1)));
    const Tensor& weights = ctx->input(2);
    if (weights.NumElements() != 0 && weights.NumElements() != arr.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Bincount: Input indices and weights must have the same size: ", arr.NumElements(),
          " values, ", weights.NumElements(), " weights"));
    }
    ASSIGN_OR_RETURN(T * out, ZeroedOutput<T>(ctx, TensorShape({size})));
    const T* w = weights.NumElements() == 0 ? nullptr : weights.data<T>();
    return CountInto(arr.data<int32_t>(), w, 0, arr.NumElements(), size, false, out);
  }
};

template <typename T, typename Tidx>
class DenseBincountOp : public CountingKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    ASSIGN_OR_RETURN(int64_t size, ReadSize<Tidx>(ctx->input(1)));
    if (in.dims() > 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "DenseBincount: Shape must be at most rank 2 but is rank ", in.dims()));
    }
    ASSIGN_OR_RETURN(const T* w, WeightsFor<T>(ctx->input(2), in.shape(), "DenseBincount"));
    const int64_t rows = in.dims() == 2 ? in.dim_size(0) : 1;
    const int64_t cols = in.dims() == 2 ? in.dim_size(1) : in.NumElements();
    ASSIGN_OR_RETURN(T * out, ZeroedOutput<T>(ctx, in.dims() == 2 ? TensorShape({rows, size})
                                                                  : TensorShape({size})));
    for (int64_t r = 0; r < rows; ++r) {
      RETURN_IF_ERROR(CountInto(in.data<Tidx>(), w, r * cols, (r + 1) * cols, size, binary_,
                                out + r * size));
    }
    return absl::OkStatus();
  }
};

template <typename T, typename Tidx>
class SparseBincountOp : public CountingKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& dense_shape = ctx->input(2);
    ASSIGN_OR_RETURN(int64_t size, ReadSize<Tidx>(ctx->input(3)));
    if (dense_shape.dims() != 1 || dense_shape.NumElements() < 1 ||
        dense_shape.NumElements() > 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SparseBincount: dense_shape must be a vector of 1 or 2 elements, got ",
          dense_shape.shape().DebugString()));
    }
    const int64_t rank = dense_shape.NumElements();
    const int64_t n = values.NumElements();
    if (values.dims() != 1 || indices.dims() != 2 || indices.dim_size(0) != n ||
        indices.dim_size(1) != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SparseBincount: indices must be [values, rank of dense_shape] = [", n, ", ", rank,
          "] for values of shape ", values.shape().DebugString(), ", got ",
          indices.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(const T* w, WeightsFor<T>(ctx->input(4), values.shape(), "SparseBincount"));
    const int64_t* idx = indices.data<int64_t>();
    const int64_t* dims = dense_shape.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t d = 0; d < rank; ++d) {
        if (idx[i * rank + d] < 0 || idx[i * rank + d] >= dims[d]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "SparseBincount: Sparse index tuple indices[", i, ", :] = [",
              absl::StrJoin(idx + i * rank, idx + (i + 1) * rank, ", "),
              "] is out of bounds of dense_shape [", absl::StrJoin(dims, dims + rank, ", "), "]"));
        }
      }
    }
    const int64_t rows = rank == 2 ? dims[0] : 1;
    ASSIGN_OR_RETURN(T * out, ZeroedOutput<T>(ctx, rank == 2 ? TensorShape({rows, size})
                                                             : TensorShape({size})));
    const Tidx* v = values.data<Tidx>();
    for (int64_t i = 0; i < n; ++i) {
      T* row = out + (rank == 2 ? idx[i * rank] : 0) * size;
      RETURN_IF_ERROR(CountInto(v, w, i, i + 1, size, binary_, row));
    }
    return absl::OkStatus();
  }
};

template <typename T, typename Tidx>
class RaggedBincountOp : public CountingKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& splits_t = ctx->input(0);
    const Tensor& values = ctx->input(1);
    ASSIGN_OR_RETURN(int64_t size, ReadSize<Tidx>(ctx->input(2)));
    if (splits_t.dims() != 1 || splits_t.NumElements() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RaggedBincount: splits must be a non-empty vector, got ",
          splits_t.shape().DebugString()));
    }
    const int64_t* splits = splits_t.data<int64_t>();
    const int64_t rows = splits_t.NumElements() - 1;
    const int64_t n = values.NumElements();
    if (splits[0] != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("RaggedBincount: Splits must start with 0, not with ", splits[0]));
    }
    for (int64_t r = 0; r < rows; ++r) {
      if (splits[r + 1] < splits[r]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "RaggedBincount: splits must not decrease: splits[", r + 1, "] = ", splits[r + 1],
            " < splits[", r, "] = ", splits[r]));
      }
    }
    if (splits[rows] != n) {
      return absl::InvalidArgumentError(absl::StrCat("RaggedBincount: Splits must end with the ",
                                                     "number of values ", n, ", got ",
                                                     splits[rows]));
    }
    ASSIGN_OR_RETURN(const T* w, WeightsFor<T>(ctx->input(3), values.shape(), "RaggedBincount"));
    ASSIGN_OR_RETURN(T * out, ZeroedOutput<T>(ctx, TensorShape({rows, size})));
    for (int64_t r = 0; r < rows; ++r) {
      RETURN_IF_ERROR(CountInto(values.data<Tidx>(), w, splits[r], splits[r + 1], size, binary_,
                                out + r * size));
    }
    return absl::OkStatus();
  }
};

template <typename T, typename Tidx>
void RegisterIndexed(KernelRegistry* kernels) {
  auto cpu = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu)
        .TypeConstraint("T", DataTypeToEnum<T>::value)
        .TypeConstraint("Tidx", DataTypeToEnum<Tidx>::value);
  };
  kernels->Register<DenseBincountOp<T, Tidx>>(cpu("DenseBincount"));
  kernels->Register<SparseBincountOp<T, Tidx>>(cpu("SparseBincount"));
  kernels->Register<RaggedBincountOp<T, Tidx>>(cpu("RaggedBincount"));
}

template <typename T>
void RegisterFor(KernelRegistry* kernels) {
  kernels->Register<BincountOp<T>>(
      KernelDef("Bincount", kDeviceTypeCpu).TypeConstraint("T", DataTypeToEnum<T>::value));
  RegisterIndexed<T, int32_t>(kernels);
  RegisterIndexed<T, int64_t>(kernels);
}

// TensorFlow defines no gradient for these ops (tf.gradients raises). The
// ids and the size are integers, and weights that are empty (Keras'
// CategoryEncoding passes none) or ignored (binary_output) have no effect:
// nothing to differentiate, so a path through the ids (a Discretization's
// input) gets no gradient. Non-empty weights that count fail, as in
// TensorFlow, rather than getting a silent zero.
absl::StatusOr<std::vector<Output>> WeightsGradient(const Scope&, const Node& node,
                                                    absl::Span<const Output>) {
  const int weights = node.num_inputs() - 1;
  const bool binary = node.GetAttr<bool>("binary_output").value_or(false);
  const TensorShape& shape = internal::InputOf(node, weights).shape();
  if (binary || shape.num_elements() == 0 || !IsFloatingType(node.input_type(weights))) {
    return std::vector<Output>(node.num_inputs());
  }
  return absl::UnimplementedError(absl::StrCat(
      node.op(), " '", node.name(), "': no gradient with respect to its weights (TensorFlow "
      "defines none either)"));
}

constexpr char kCountTypes[] = "T: {int32, int64, float32, float64}";

}  // namespace

absl::Status RegisterBincountOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Bincount")
                                    .Input("arr: int32")
                                    .Input("size: int32")
                                    .Input("weights: T")
                                    .Attr(kCountTypes)
                                    .Output("bins: T")
                                    .SetShapeFn(BincountShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("DenseBincount")
                                    .Input("input: Tidx")
                                    .Input("size: Tidx")
                                    .Input("weights: T")
                                    .Attr("Tidx: {int32, int64}")
                                    .Attr(kCountTypes)
                                    .Attr("binary_output: bool = false")
                                    .Output("output: T")
                                    .SetShapeFn(DenseBincountShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseBincount")
                                    .Input("indices: int64")
                                    .Input("values: Tidx")
                                    .Input("dense_shape: int64")
                                    .Input("size: Tidx")
                                    .Input("weights: T")
                                    .Attr("Tidx: {int32, int64}")
                                    .Attr(kCountTypes)
                                    .Attr("binary_output: bool = false")
                                    .Output("output: T")
                                    .SetShapeFn(SparseBincountShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RaggedBincount")
                                    .Input("splits: int64")
                                    .Input("values: Tidx")
                                    .Input("size: Tidx")
                                    .Input("weights: T")
                                    .Attr("Tidx: {int32, int64}")
                                    .Attr(kCountTypes)
                                    .Attr("binary_output: bool = false")
                                    .Output("output: T")
                                    .SetShapeFn(RaggedBincountShape)));
  for (const char* op : {"Bincount", "DenseBincount", "SparseBincount", "RaggedBincount"}) {
    RETURN_IF_ERROR(ops->SetGradient(op, WeightsGradient));
  }
  return absl::OkStatus();
}

void RegisterBincountKernels(KernelRegistry* kernels) {
  RegisterFor<int32_t>(kernels);
  RegisterFor<int64_t>(kernels);
  RegisterFor<float>(kernels);
  RegisterFor<double>(kernels);
}

namespace ops {

Output Bincount(const Scope& scope, Input arr, Input size, Input weights,
                std::source_location loc) {
  return scope.Op("Bincount", loc).Input(arr).Input(size).Input(weights).Finalize1();
}

Output DenseBincount(const Scope& scope, Input input, Input size, Input weights,
                     const BincountAttrs& attrs, std::source_location loc) {
  return scope.Op("DenseBincount", loc)
      .Input(input)
      .Input(size)
      .Input(weights)
      .Attr("binary_output", attrs.binary_output)
      .Finalize1();
}

Output SparseBincount(const Scope& scope, Input indices, Input values, Input dense_shape,
                      Input size, Input weights, const BincountAttrs& attrs,
                      std::source_location loc) {
  return scope.Op("SparseBincount", loc)
      .Input(indices)
      .Input(values)
      .Input(dense_shape)
      .Input(size)
      .Input(weights)
      .Attr("binary_output", attrs.binary_output)
      .Finalize1();
}

Output RaggedBincount(const Scope& scope, Input splits, Input values, Input size, Input weights,
                      const BincountAttrs& attrs, std::source_location loc) {
  return scope.Op("RaggedBincount", loc)
      .Input(splits)
      .Input(values)
      .Input(size)
      .Input(weights)
      .Attr("binary_output", attrs.binary_output)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
