#include "ops/array/unique_ops.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/internal/index_tensors.h"
#include "ops/math/math_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

TensorShape UnknownVector() { return TensorShape({TensorShape::kUnknownDim}); }

absl::Status UniqueV2Shape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(1, 1));
  c->set_output(0, TensorShape::UnknownOfRank(c->input(0).rank()));
  c->set_output(1, UnknownVector());
  if (c->num_outputs() > 2) c->set_output(2, UnknownVector());
  return absl::OkStatus();
}

absl::Status UniqueWithCountsShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 1));
  c->set_output(0, UnknownVector());
  c->set_output(1, c->input(0));
  c->set_output(2, UnknownVector());
  return absl::OkStatus();
}

// x seen as [outer, len, inner]: slice j is x[:, j, :].
struct SliceView {
  int64_t outer = 1;
  int64_t len = 0;
  int64_t inner = 1;
};

// The axis a V2 op deduplicates along; -1 for "x is a vector, no axis".
absl::StatusOr<int64_t> ReadAxis(const Tensor& axis_t, int rank) {
  if (axis_t.dims() != 1) return absl::InvalidArgumentError("axis expects a 1D vector.");
  if (axis_t.NumElements() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis does not support input tensors larger than 1 elements, got ",
                     axis_t.NumElements()));
  }
  if (axis_t.NumElements() == 0) return -1;
  ASSIGN_OR_RETURN(const int64_t given, internal::ReadScalar(axis_t, "axis"));
  const int64_t axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis has to be between [0, ", rank, "), got ", given));
  }
  return axis;
}

// kAxis: UniqueV2 / UniqueWithCountsV2 (an axis input). kCounts: the
// count output.
template <typename T, bool kAxis, bool kCounts>
class UniqueSlicesOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    int64_t axis = -1;
    if constexpr (kAxis) {
      ASSIGN_OR_RETURN(axis, ReadAxis(ctx->input(1), x.dims()));
    }
    SliceView v;
    if (axis < 0) {
      if (x.dims() != 1) return absl::InvalidArgumentError("unique expects a 1D vector.");
      v.len = x.NumElements();
    } else {
      for (int d = 0; d < axis; ++d) v.outer *= x.dim_size(d);
      v.len = x.dim_size(static_cast<int>(axis));
      for (int d = static_cast<int>(axis) + 1; d < x.dims(); ++d) v.inner *= x.dim_size(d);
    }
    const T* data = x.data<T>();
    auto at = [&](int64_t o, int64_t j, int64_t i) -> const T& {
      return data[(o * v.len + j) * v.inner + i];
    };
    // Each slice's hash once; the table keeps slice numbers, compared
    // element by element (absl::Hash<T> hashes 0.0 and -0.0 alike).
    std::vector<size_t> hashes(v.len);
    for (int64_t j = 0; j < v.len; ++j) {
      size_t h = 0;
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t i = 0; i < v.inner; ++i) {
          h = (h ^ absl::Hash<T>{}(at(o, j, i))) * 0x100000001b3ull;
        }
      }
      hashes[j] = h;
    }
    auto hash = [&](int64_t j) { return hashes[j]; };
    auto equal = [&](int64_t a, int64_t b) {
      if (a == b) return true;  // a slice holding NaN still finds itself
      if (hashes[a] != hashes[b]) return false;
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t i = 0; i < v.inner; ++i) {
          if (!(at(o, a, i) == at(o, b, i))) return false;
        }
      }
      return true;
    };
    absl::flat_hash_map<int64_t, int64_t, decltype(hash), decltype(equal)> first(
        static_cast<size_t>(v.len), hash, equal);  // slice -> its index in y
    std::vector<int64_t> kept;                     // y's slices, by number in x
    std::vector<int64_t> idx(v.len);
    for (int64_t j = 0; j < v.len; ++j) {
      auto [it, inserted] = first.emplace(j, static_cast<int64_t>(kept.size()));
      if (inserted) kept.push_back(j);
      idx[j] = it->second;
    }
    const int64_t n = static_cast<int64_t>(kept.size());
    TensorShape y_shape({n});
    if (axis >= 0) {
      y_shape = x.shape();
      y_shape.set_dim(static_cast<int>(axis), n);
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, y_shape));
    T* out = y->data<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t i = 0; i < v.inner; ++i) out[(o * n + k) * v.inner + i] = at(o, kept[k], i);
      }
    }
    ASSIGN_OR_RETURN(Tensor * idx_t, ctx->allocate_output(1, TensorShape({v.len})));
    RETURN_IF_ERROR(internal::WriteInts(idx, idx_t));
    if constexpr (kCounts) {
      std::vector<int64_t> count(n, 0);
      for (int64_t k : idx) ++count[k];
      ASSIGN_OR_RETURN(Tensor * count_t, ctx->allocate_output(2, TensorShape({n})));
      RETURN_IF_ERROR(internal::WriteInts(count, count_t));
    }
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterFor(KernelRegistry* kernels) {
  auto cpu = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DataTypeToEnum<T>::value);
  };
  kernels->Register<UniqueSlicesOp<T, true, false>>(cpu("UniqueV2"));
  kernels->Register<UniqueSlicesOp<T, false, true>>(cpu("UniqueWithCounts"));
  kernels->Register<UniqueSlicesOp<T, true, true>>(cpu("UniqueWithCountsV2"));
}

using GradResult = absl::StatusOr<std::vector<Output>>;

// x[..., i, ...] receives dy[..., idx[i], ...] along the axis. The axis
// input is [a] or empty (a vector input: axis 0); its sum is that scalar.
GradResult UniqueSlicesGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(node.num_inputs());
  if (!g[0].valid()) return grads;
  const Output idx = internal::OutputOf(node, 1);
  if (node.num_inputs() == 1) {
    grads[0] = ops::GatherV2(s, g[0], idx, 0);
  } else {
    grads[0] = ops::GatherV2(s, g[0], idx, ops::Sum(s, internal::InputOf(node, 1), 0));
  }
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterUniqueOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("UniqueV2")
                                    .Input("x: T")
                                    .Input("axis: Taxis")
                                    .Output("y: T")
                                    .Output("idx: out_idx")
                                    .Attr("T: type")
                                    .Attr("Taxis: {int32, int64} = int64")
                                    .Attr("out_idx: {int32, int64} = int32")
                                    .SetShapeFn(UniqueV2Shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("UniqueWithCounts")
                                    .Input("x: T")
                                    .Output("y: T")
                                    .Output("idx: out_idx")
                                    .Output("count: out_idx")
                                    .Attr("T: type")
                                    .Attr("out_idx: {int32, int64} = int32")
                                    .SetShapeFn(UniqueWithCountsShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("UniqueWithCountsV2")
                                    .Input("x: T")
                                    .Input("axis: Taxis")
                                    .Output("y: T")
                                    .Output("idx: out_idx")
                                    .Output("count: out_idx")
                                    .Attr("T: type")
                                    .Attr("Taxis: {int32, int64} = int64")
                                    .Attr("out_idx: {int32, int64} = int32")
                                    .SetShapeFn(UniqueV2Shape)));
  return absl::OkStatus();
}

absl::Status RegisterUniqueGradients(OpRegistry* ops) {
  for (const char* op : {"UniqueV2", "UniqueWithCounts", "UniqueWithCountsV2"}) {
    RETURN_IF_ERROR(ops->SetGradient(op, UniqueSlicesGrad));
  }
  return absl::OkStatus();
}

void RegisterUniqueKernels(KernelRegistry* kernels) {
  RegisterFor<float>(kernels);
  RegisterFor<double>(kernels);
  RegisterFor<int32_t>(kernels);
  RegisterFor<int64_t>(kernels);
  RegisterFor<uint8_t>(kernels);
  RegisterFor<int8_t>(kernels);
  RegisterFor<int16_t>(kernels);
  RegisterFor<bool>(kernels);
  RegisterFor<std::string>(kernels);
}

namespace ops {

UniqueOutputs UniqueV2(const Scope& scope, Input x, Input axis, DataType out_idx,
                       std::source_location loc) {
  std::vector<Output> out =
      scope.Op("UniqueV2", loc).Input(x).Input(axis).Attr("out_idx", out_idx).FinalizeAll();
  out.resize(2);
  return {out[0], out[1]};
}

UniqueWithCountsOutputs UniqueWithCounts(const Scope& scope, Input x, DataType out_idx,
                                         std::source_location loc) {
  std::vector<Output> out =
      scope.Op("UniqueWithCounts", loc).Input(x).Attr("out_idx", out_idx).FinalizeAll();
  out.resize(3);
  return {out[0], out[1], out[2]};
}

UniqueWithCountsOutputs UniqueWithCountsV2(const Scope& scope, Input x, Input axis,
                                           DataType out_idx, std::source_location loc) {
  std::vector<Output> out = scope.Op("UniqueWithCountsV2", loc)
                                .Input(x)
                                .Input(axis)
                                .Attr("out_idx", out_idx)
                                .FinalizeAll();
  out.resize(3);
  return {out[0], out[1], out[2]};
}

}  // namespace ops
}  // namespace sluice
