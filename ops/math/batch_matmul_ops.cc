#include "ops/math/batch_matmul_ops.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/blas.h"
#include "ops/math/internal/batch_matmul_plan.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

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
    ASSIGN_OR_RETURN(
        internal::BatchMatMulPlan p,
        internal::PlanBatchMatMul(broadcast_ ? "BatchMatMulV2" : "BatchMatMul", x.shape(),
                                  y.shape(), adj_x_, adj_y_, broadcast_));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    T* o = out->data<T>();
    if (p.k == 0) {
      std::fill(o, o + out->NumElements(), T(0));
      return absl::OkStatus();
    }
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    for (int64_t i = 0; i < p.batches; ++i) {
      internal::Gemm(adj_x_, adj_y_, m, n, k, x.data<T>() + p.x_index[i] * p.m * p.k,
                     adj_x_ ? m : k, y.data<T>() + p.y_index[i] * p.k * p.n, adj_y_ ? k : n,
                     o + i * p.m * p.n, n);
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
  ASSIGN_OR_RETURN(std::vector<int64_t> batch, internal::BatchMatMulBatchDims(x, y, broadcast));
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
