// Shape-only array kernels, shared by CPU and GPU (see shape_kernels.h).
#include "ops/array/internal/shape_kernels.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/internal/array_util.h"
#include "ops/internal/index_tensors.h"

namespace sluice {
namespace internal {

absl::Status IdentityOp::Compute(OpKernelContext* ctx) {
  ctx->set_output(0, ctx->input(0));
  return absl::OkStatus();
}

absl::Status ReshapeOp::Compute(OpKernelContext* ctx) {
  const Tensor& x = ctx->input(0);
  ASSIGN_OR_RETURN(std::vector<int64_t> requested, ReadVector(ctx->input(1), "Reshape: shape"));
  ASSIGN_OR_RETURN(TensorShape shape, ResolveReshape(x.shape(), requested));
  ASSIGN_OR_RETURN(Tensor y, x.Reshaped(shape));
  ctx->set_output(0, std::move(y));
  return absl::OkStatus();
}

absl::Status ExpandDimsOp::Compute(OpKernelContext* ctx) {
  const Tensor& x = ctx->input(0);
  ASSIGN_OR_RETURN(int64_t dim, ReadScalar(ctx->input(1), "ExpandDims: dim"));
  ASSIGN_OR_RETURN(int64_t d, CanonicalAxis(dim, x.dims() + 1, "ExpandDims: dim", x.shape()));
  TensorShape shape = x.shape();
  shape.InsertDim(static_cast<int>(d), 1);
  ASSIGN_OR_RETURN(Tensor y, x.Reshaped(shape));
  ctx->set_output(0, std::move(y));
  return absl::OkStatus();
}

absl::Status SqueezeOp::Init(const OpKernelConstruction& ctx) {
  ASSIGN_OR_RETURN(squeeze_dims_, ctx.GetAttr<std::vector<int64_t>>("squeeze_dims"));
  return absl::OkStatus();
}

absl::Status SqueezeOp::Compute(OpKernelContext* ctx) {
  const Tensor& x = ctx->input(0);
  std::vector<bool> remove(x.dims(), false);
  for (int64_t d : squeeze_dims_) {
    ASSIGN_OR_RETURN(int64_t a,
                     CanonicalAxis(d, x.dims(), "Squeeze: squeeze_dims entry", x.shape()));
    if (x.dim_size(a) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Can not squeeze dim[", a, "], expected a dimension of 1, got ",
                       x.dim_size(a), " (shape ", x.shape().DebugString(), ")"));
    }
    remove[a] = true;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < x.dims(); ++i) {
    if (squeeze_dims_.empty() ? x.dim_size(i) != 1 : !remove[i]) dims.push_back(x.dim_size(i));
  }
  ASSIGN_OR_RETURN(Tensor y, x.Reshaped(TensorShape(absl::MakeConstSpan(dims))));
  ctx->set_output(0, std::move(y));
  return absl::OkStatus();
}

absl::Status ShapeOp::Compute(OpKernelContext* ctx) {
  const TensorShape& s = ctx->input(0).shape();
  std::vector<int64_t> values;
  TensorShape out_shape;
  switch (kind_) {
    case Kind::kShape:
      values = s.dims();
      out_shape = TensorShape({static_cast<int64_t>(values.size())});
      break;
    case Kind::kSize:
      values = {ctx->input(0).NumElements()};
      break;
    case Kind::kRank:
      values = {s.rank()};
      break;
  }
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
  return WriteInts(values, out);
}

absl::Status ShapeNOp::Compute(OpKernelContext* ctx) {
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    const TensorShape& s = ctx->input(i).shape();
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(i, TensorShape({s.rank()})));
    RETURN_IF_ERROR(WriteInts(s.dims(), out));
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace sluice
