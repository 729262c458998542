#include "ops/math/batch_matmul_ops.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/blas.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// The batch dimensions of x and y (all but the last two), broadcast
// (NumPy's rules); `broadcast` false requires them equal (BatchMatMul).
absl::StatusOr<std::vector<int64_t>> BatchDims(const TensorShape& x, const TensorShape& y,
                                               bool broadcast) {
  const int bx = x.rank() - 2, by = y.rank() - 2;
  const int b = std::max(bx, by);
  std::vector<int64_t> out(b);
  for (int i = 0; i < b; ++i) {
    const int ix = i - (b - bx), iy = i - (b - by);
    const int64_t dx = ix >= 0 ? x.dim(ix) : 1, dy = iy >= 0 ? y.dim(iy) : 1;
    if (dx == dy || (broadcast && (dx == 1 || dy == 1))) {
      out[i] = dx == 1 ? dy : dx;
      continue;
    }
    if (!broadcast || (dx >= 0 && dy >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch dimensions of ", x.DebugString(), " and ", y.DebugString(),
          broadcast ? " do not broadcast" : " differ (BatchMatMul needs them equal)"));
    }
    out[i] = TensorShape::kUnknownDim;
  }
  if (!broadcast && bx != by) {
    return absl::InvalidArgumentError(absl::StrCat("BatchMatMul: ", x.DebugString(), " and ",
                                                   y.DebugString(), " differ in rank"));
  }
  return out;
}

template <typename T>
class BatchMatMulOp : public OpKernel {
 public:
  explicit BatchMatMulOp(bool broadcast) : broadcast_(broadcast) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(adj_x_, ctx.GetAttr<bool>("adj_x"));
    ASSIGN_OR_RETURN(adj_y_, ctx.GetAttr<bool>("adj_y"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const char* op = broadcast_ ? "BatchMatMulV2" : "BatchMatMul";
    if (x.dims() < 2 || y.dims() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": inputs must be at least 2-D, got ",
                                                     x.shape().DebugString(), " and ",
                                                     y.shape().DebugString()));
    }
    const int64_t m = x.dim_size(x.dims() - (adj_x_ ? 1 : 2));
    const int64_t k = x.dim_size(x.dims() - (adj_x_ ? 2 : 1));
    const int64_t ky = y.dim_size(y.dims() - (adj_y_ ? 1 : 2));
    const int64_t n = y.dim_size(y.dims() - (adj_y_ ? 2 : 1));
    if (k != ky) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": the inner dimensions of ", x.shape().DebugString(), " and ",
          y.shape().DebugString(), " differ (", k, " vs. ", ky, ")"));
    }
    absl::StatusOr<std::vector<int64_t>> batch = BatchDims(x.shape(), y.shape(), broadcast_);
    if (!batch.ok()) return absl::InvalidArgumentError(absl::StrCat(op, ": ", batch.status().message()));
    TensorShape out_shape(*batch);
    out_shape.AddDim(m);
    out_shape.AddDim(n);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    T* o = out->data<T>();
    if (k == 0) {
      std::fill(o, o + out->NumElements(), T(0));
      return absl::OkStatus();
    }
    // Walk the output's batch index; map it to x's and y's (size-1 dims
    // broadcast).
    const int b = static_cast<int>(batch->size());
    int64_t batches = 1;
    for (int64_t d : *batch) batches *= d;
    std::vector<int64_t> index(b, 0);
    const int bx = x.dims() - 2, by = y.dims() - 2;
    for (int64_t i = 0; i < batches; ++i) {
      int64_t xi = 0, yi = 0;
      for (int d = 0; d < b; ++d) {
        const int ix = d - (b - bx), iy = d - (b - by);
        if (ix >= 0) xi = xi * x.dim_size(ix) + (x.dim_size(ix) == 1 ? 0 : index[d]);
        if (iy >= 0) yi = yi * y.dim_size(iy) + (y.dim_size(iy) == 1 ? 0 : index[d]);
      }
      internal::Gemm(adj_x_, adj_y_, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                     x.data<T>() + xi * m * k, adj_x_ ? static_cast<int>(m) : static_cast<int>(k),
                     y.data<T>() + yi * k * n, adj_y_ ? static_cast<int>(k) : static_cast<int>(n),
                     o + i * m * n, static_cast<int>(n));
      for (int d = b - 1; d >= 0; --d) {
        if (++index[d] < (*batch)[d]) break;
        index[d] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  const bool broadcast_;
  bool adj_x_ = false;
  bool adj_y_ = false;
};

absl::Status BatchMatMulShape(InferenceContext* c, bool broadcast) {
  const TensorShape& x = c->input(0);
  const TensorShape& y = c->input(1);
  if (x.unknown_rank() || y.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  RETURN_IF_ERROR(c->WithRankAtLeast(1, 2));
  ASSIGN_OR_RETURN(bool adj_x, c->GetAttr<bool>("adj_x"));
  ASSIGN_OR_RETURN(bool adj_y, c->GetAttr<bool>("adj_y"));
  ASSIGN_OR_RETURN(std::vector<int64_t> batch, BatchDims(x, y, broadcast));
  const int64_t k = x.dim(x.rank() - (adj_x ? 2 : 1));
  const int64_t ky = y.dim(y.rank() - (adj_y ? 1 : 2));
  if (k >= 0 && ky >= 0 && k != ky) {
    return absl::InvalidArgumentError(absl::StrCat("the inner dimensions of ", x.DebugString(),
                                                   " and ", y.DebugString(), " differ"));
  }
  TensorShape out(batch);
  out.AddDim(x.dim(x.rank() - (adj_x ? 1 : 2)));
  out.AddDim(y.dim(y.rank() - (adj_y ? 2 : 1)));
  c->set_output(0, out);
  return absl::OkStatus();
}

OpDefBuilder Builder(const char* name) {
  OpDefBuilder b(name);
  b.Input("x: T")
      .Input("y: T")
      .Output("output: T")
      .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, complex128}")
      .Attr("adj_x: bool = false")
      .Attr("adj_y: bool = false")
      // TensorFlow marks the MatMuls its gradients build (a hint for its
      // own rewrites); accepted so that its graphs import, and ignored.
      .Attr("grad_x: bool = false")
      .Attr("grad_y: bool = false");
  return b;
}

template <typename T>
void RegisterFor(KernelRegistry* k) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  k->Register(KernelDef("BatchMatMul", kDeviceTypeCpu).TypeConstraint("T", kType),
              [] { return std::make_unique<BatchMatMulOp<T>>(false); });
  k->Register(KernelDef("BatchMatMulV2", kDeviceTypeCpu).TypeConstraint("T", kType),
              [] { return std::make_unique<BatchMatMulOp<T>>(true); });
}

}  // namespace

absl::Status RegisterBatchMatMulOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(Builder("BatchMatMul").SetShapeFn([](InferenceContext* c) {
    return BatchMatMulShape(c, false);
  })));
  RETURN_IF_ERROR(ops->Register(Builder("BatchMatMulV2").SetShapeFn([](InferenceContext* c) {
    return BatchMatMulShape(c, true);
  })));
  return absl::OkStatus();
}

void RegisterBatchMatMulKernels(KernelRegistry* kernels) {
  RegisterFor<float>(kernels);
  RegisterFor<double>(kernels);
}

namespace ops {

Output BatchMatMulV2(const Scope& scope, Input x, Input y, const BatchMatMulAttrs& attrs,
                     std::source_location loc) {
  return scope.Op("BatchMatMulV2", loc)
      .Input(x)
      .Input(y)
      .Attr("adj_x", attrs.adj_x)
      .Attr("adj_y", attrs.adj_y)
      .Finalize1();
}

Output BatchMatMul(const Scope& scope, Input x, Input y, const BatchMatMulAttrs& attrs,
                   std::source_location loc) {
  return scope.Op("BatchMatMul", loc)
      .Input(x)
      .Input(y)
      .Attr("adj_x", attrs.adj_x)
      .Attr("adj_y", attrs.adj_y)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
