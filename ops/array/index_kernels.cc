// CPU kernels of ops/array/index_ops.h that read indices or compare values:
// Bucketize, Unique, ListDiff, GatherNd and ScatterNd. GatherNd moves
// elements as bytes (any fixed-size dtype); the others read values.
// DynamicStitch and DynamicPartition: stitch_kernels.cc; TopKV2 and
// InTopKV2: top_k_kernels.cc.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ops/array/index_ops.h"
#include "ops/array/internal/array_kernel_util.h"
#include "ops/array/internal/nd_index_plan.h"
#include "ops/internal/index_tensors.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

char* Bytes(const Tensor& t) { return static_cast<char*>(t.raw_data()); }

template <typename T>
class BucketizeOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(boundaries_, ctx.GetAttr<std::vector<float>>("boundaries"));
    if (!std::is_sorted(boundaries_.begin(), boundaries_.end())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Bucketize: boundaries must be sorted ascending, got [",
          absl::StrJoin(boundaries_, ", "), "]"));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const T* in = x.data<T>();
    int32_t* o = out->data<int32_t>();
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      // The first boundary greater than the value is the bucket.
      o[i] = static_cast<int32_t>(std::upper_bound(boundaries_.begin(), boundaries_.end(), in[i]) -
                                  boundaries_.begin());
    }
    return absl::OkStatus();
  }

 private:
  std::vector<float> boundaries_;
};

absl::Status CheckVector(const Tensor& t, const char* op, const char* what) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", what, " must be a vector, got shape ",
                                                   t.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::Status WriteVector(OpKernelContext* ctx, int output, absl::Span<const int64_t> values) {
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(
                                     output, TensorShape({static_cast<int64_t>(values.size())})));
  return internal::WriteInts(values, out);
}

template <typename T>
absl::Status WriteValues(OpKernelContext* ctx, int output, const std::vector<T>& values) {
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(
                                     output, TensorShape({static_cast<int64_t>(values.size())})));
  std::copy(values.begin(), values.end(), out->data<T>());
  return absl::OkStatus();
}

template <typename T>
class UniqueOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    RETURN_IF_ERROR(CheckVector(x, "Unique", "x"));
    absl::Span<const T> v = x.flat<T>();
    // An open-addressing table sized once: a step's ids (an embedding
    // lookup's thousands) are deduplicated without rehashing or a node
    // allocation per distinct value.
    absl::flat_hash_map<T, int64_t> first;  // value -> its index in y
    first.reserve(v.size());
    std::vector<T> y;
    y.reserve(v.size());
    std::vector<int64_t> idx(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      auto [it, inserted] = first.emplace(v[i], static_cast<int64_t>(y.size()));
      if (inserted) y.push_back(v[i]);
      idx[i] = it->second;
    }
    RETURN_IF_ERROR(WriteValues(ctx, 0, y));
    ASSIGN_OR_RETURN(Tensor * out_idx, ctx->allocate_output(1, x.shape()));
    return internal::WriteInts(idx, out_idx);
  }
};

template <typename T>
class ListDiffOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    RETURN_IF_ERROR(CheckVector(x, "ListDiff", "x"));
    RETURN_IF_ERROR(CheckVector(y, "ListDiff", "y"));
    absl::Span<const T> yv = y.flat<T>();
    const absl::flat_hash_set<T> drop(yv.begin(), yv.end());
    absl::Span<const T> xv = x.flat<T>();
    std::vector<T> out;
    std::vector<int64_t> idx;
    for (size_t i = 0; i < xv.size(); ++i) {
      if (drop.count(xv[i]) != 0) continue;
      out.push_back(xv[i]);
      idx.push_back(static_cast<int64_t>(i));
    }
    RETURN_IF_ERROR(WriteValues(ctx, 0, out));
    return WriteVector(ctx, 1, idx);
  }
};

// The number of index rows of an indices tensor [..., depth].
int64_t IndexRows(const Tensor& indices) {
  int64_t n = 1;
  for (int d = 0; d + 1 < indices.dims(); ++d) n *= indices.dim_size(d);
  return n;
}

std::vector<DataType> WithStrings(std::vector<DataType> types) {
  types.push_back(DT_STRING);
  return types;
}

class GatherNdOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(std::string policy, ctx.GetAttr<std::string>("bad_indices_policy"));
    if (!policy.empty() && policy != "DEFAULT" && policy != "ERROR") {
      return absl::InvalidArgumentError(absl::StrCat(
          "GatherNd: bad_indices_policy '", policy, "' is not supported on CPU (\"\", DEFAULT, ERROR)"));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    ASSIGN_OR_RETURN(const internal::NdIndexPlan p,
                     internal::PlanGatherNd(params.shape(), indices.shape()));
    const int64_t depth = p.depth, slice = p.slice;
    const TensorShape& out_shape = p.out_shape;
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, internal::ReadInts(indices, "GatherNd: indices"));
    const int64_t n = p.rows;
    std::vector<int64_t> offsets(n, 0);
    if (depth > 0) {
      ASSIGN_OR_RETURN(offsets, internal::NdIndexOffsets(idx, depth, params.shape(), "GatherNd"));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (params.dtype() == DT_STRING) {  // objects, not bytes
      const std::string* from = params.data<std::string>();
      std::string* to = out->data<std::string>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t k = 0; k < slice; ++k) to[i * slice + k] = from[offsets[i] * slice + k];
      }
      return absl::OkStatus();
    }
    const size_t bytes = slice * DataTypeSize(params.dtype());
    for (int64_t i = 0; i < n && bytes > 0; ++i) {
      std::memcpy(Bytes(*out) + i * bytes, Bytes(params) + offsets[i] * bytes, bytes);
    }
    return absl::OkStatus();
  }
};

template <typename T>
class ScatterNdOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& updates = ctx->input(1);
    ASSIGN_OR_RETURN(const internal::NdIndexPlan p,
                     internal::PlanScatterNd(indices.shape(), updates.shape(), ctx->input(2)));
    const int64_t depth = p.depth, slice = p.slice;
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, internal::ReadInts(indices, "ScatterNd: indices"));
    const int64_t n = p.rows;
    std::vector<int64_t> offsets(n, 0);
    if (depth > 0) {
      ASSIGN_OR_RETURN(offsets, internal::NdIndexOffsets(idx, depth, p.out_shape, "ScatterNd"));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.out_shape));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    const T* u = updates.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < slice; ++j) o[offsets[i] * slice + j] += u[i * slice + j];
    }
    return absl::OkStatus();
  }
};

// TensorScatterUpdate / Add / Sub / Max / Min (and ScatterNdNonAliasingAdd):
// the tensor (its buffer when no one else holds it) with the updates' rows
// written, added, subtracted or compared in at the slices the index rows
// name.
enum class TensorScatterKind { kUpdate, kAdd, kSub, kMax, kMin };

template <typename T, TensorScatterKind kKind>
class TensorScatterOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    const Tensor& tensor = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    Tensor shape(DT_INT64, TensorShape({tensor.dims()}));
    for (int d = 0; d < tensor.dims(); ++d) shape.data<int64_t>()[d] = tensor.dim_size(d);
    absl::StatusOr<internal::NdIndexPlan> plan =
        internal::PlanScatterNd(indices.shape(), updates.shape(), shape);
    if (!plan.ok()) return AddContext(plan.status(), op);
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, internal::ReadInts(indices, op + ": indices"));
    std::vector<int64_t> offsets(plan->rows, 0);
    if (plan->depth > 0) {
      ASSIGN_OR_RETURN(offsets,
                       internal::NdIndexOffsets(idx, plan->depth, tensor.shape(), op.c_str()));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, tensor.shape()));
    const size_t esize = DataTypeSize(tensor.dtype());
    if (!out->SharesBufferWith(tensor) && tensor.NumElements() > 0) {
      std::memcpy(Bytes(*out), Bytes(tensor), tensor.NumElements() * esize);
    }
    const int64_t slice = plan->slice;
    for (int64_t i = 0; i < plan->rows; ++i) {
      if constexpr (kKind == TensorScatterKind::kUpdate) {
        std::memcpy(Bytes(*out) + offsets[i] * slice * esize, Bytes(updates) + i * slice * esize,
                    slice * esize);
      } else {
        T* o = out->data<T>() + offsets[i] * slice;
        const T* u = updates.data<T>() + i * slice;
        for (int64_t j = 0; j < slice; ++j) {
          if constexpr (kKind == TensorScatterKind::kAdd) {
            o[j] += u[j];
          } else if constexpr (kKind == TensorScatterKind::kSub) {
            o[j] -= u[j];
          } else if constexpr (kKind == TensorScatterKind::kMax) {
            o[j] = u[j] > o[j] ? u[j] : o[j];
          } else {
            o[j] = u[j] < o[j] ? u[j] : o[j];
          }
        }
      }
    }
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterValueKernels(KernelRegistry* kernels) {
  const DataType t = DataTypeToEnum<T>::value;
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  kernels->Register<UniqueOp<T>>(cpu("Unique").TypeConstraint("T", t));
  kernels->Register<ListDiffOp<T>>(cpu("ListDiff").TypeConstraint("T", t));
}

}  // namespace

void RegisterIndexKernels(KernelRegistry* kernels) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  kernels->Register<BucketizeOp<float>>(cpu("Bucketize").TypeConstraint("T", DT_FLOAT));
  kernels->Register<BucketizeOp<double>>(cpu("Bucketize").TypeConstraint("T", DT_DOUBLE));
  kernels->Register<BucketizeOp<int32_t>>(cpu("Bucketize").TypeConstraint("T", DT_INT32));
  kernels->Register<BucketizeOp<int64_t>>(cpu("Bucketize").TypeConstraint("T", DT_INT64));
  RegisterValueKernels<float>(kernels);
  RegisterValueKernels<double>(kernels);
  RegisterValueKernels<int32_t>(kernels);
  RegisterValueKernels<int64_t>(kernels);
  RegisterValueKernels<uint8_t>(kernels);
  RegisterValueKernels<int8_t>(kernels);
  RegisterValueKernels<int16_t>(kernels);
  RegisterValueKernels<bool>(kernels);
  RegisterValueKernels<std::string>(kernels);
  const std::vector<DataType> index_types = {DT_INT32, DT_INT64};
  kernels->Register(cpu("GatherNd")
                        .TypeConstraint("Tparams", WithStrings(internal::AllTypes()))
                        .TypeConstraint("Tindices", index_types),
                    internal::Make<GatherNdOp>());
  kernels->Register<ScatterNdOp<float>>(
      cpu("ScatterNd").TypeConstraint("T", DT_FLOAT).TypeConstraint("Tindices", index_types));
  kernels->Register<ScatterNdOp<double>>(
      cpu("ScatterNd").TypeConstraint("T", DT_DOUBLE).TypeConstraint("Tindices", index_types));
  kernels->Register<ScatterNdOp<int32_t>>(
      cpu("ScatterNd").TypeConstraint("T", DT_INT32).TypeConstraint("Tindices", index_types));
  kernels->Register<ScatterNdOp<int64_t>>(
      cpu("ScatterNd").TypeConstraint("T", DT_INT64).TypeConstraint("Tindices", index_types));
  kernels->Register<TensorScatterOp<uint8_t, TensorScatterKind::kUpdate>>(
      cpu("TensorScatterUpdate").TypeConstraint("T", internal::AllTypes()));
  auto scatter_math = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const DataType t = DataTypeToEnum<T>::value;
    kernels->Register<TensorScatterOp<T, TensorScatterKind::kAdd>>(
        cpu("TensorScatterAdd").TypeConstraint("T", t).TypeConstraint("Tindices", index_types));
    kernels->Register<TensorScatterOp<T, TensorScatterKind::kSub>>(
        cpu("TensorScatterSub").TypeConstraint("T", t).TypeConstraint("Tindices", index_types));
    kernels->Register<TensorScatterOp<T, TensorScatterKind::kMax>>(
        cpu("TensorScatterMax").TypeConstraint("T", t).TypeConstraint("Tindices", index_types));
    kernels->Register<TensorScatterOp<T, TensorScatterKind::kMin>>(
        cpu("TensorScatterMin").TypeConstraint("T", t).TypeConstraint("Tindices", index_types));
    kernels->Register<TensorScatterOp<T, TensorScatterKind::kAdd>>(
        cpu("ScatterNdNonAliasingAdd").TypeConstraint("T", t).TypeConstraint("Tindices",
                                                                              index_types));
  };
  scatter_math(std::type_identity<float>{});
  scatter_math(std::type_identity<double>{});
  scatter_math(std::type_identity<int32_t>{});
  scatter_math(std::type_identity<int64_t>{});
  internal::RegisterStitchKernels(kernels);
  internal::RegisterTopKKernels(kernels);
}

}  // namespace sluice
