// GPU arithmetic of the element-wise math ops (RegisterGpuCwiseKernels in
// gpu_kernels.h): unary and binary arithmetic with NumPy broadcasting,
// comparisons, the *Grad helpers, Cast, AddN, Select and SelectV2. The
// shells of ops/math/cwise_kernels.h check the shapes, forward inputs and
// allocate exactly as for the CPU; the CUDA code is in cwise_*.cu behind
// cwise.cu.h.
//
// Every argument lives in device memory (no HostMemory args). Shapes are
// checked and outputs allocated before anything touches CUDA; outputs with
// no elements launch nothing. int32 math stays on the host by convention
// (array_kernels.cc registers the CPU kernels for it); Cast does convert
// int32 on the device.
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/types.h"
#include "ops/math/cwise_kernels.h"
#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/cwise_layout.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/cwise_type.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/math/internal/broadcast.h"
#include "ops/math/internal/math_kernel_checks.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::StatusOr<gpu::CwiseType> CwiseTypeOf(DataType dtype) {
  switch (BaseType(dtype)) {
    case DT_FLOAT:
      return gpu::CwiseType::kFloat;
    case DT_HALF:
      return gpu::CwiseType::kHalf;
    case DT_BFLOAT16:
      return gpu::CwiseType::kBFloat16;
    case DT_DOUBLE:
      return gpu::CwiseType::kDouble;
    case DT_INT32:
      return gpu::CwiseType::kInt32;
    case DT_INT64:
      return gpu::CwiseType::kInt64;
    case DT_BOOL:
      return gpu::CwiseType::kBool;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("no element-wise GPU kernel for type ", DataTypeName(dtype)));
  }
}

namespace {

// The GPU's arithmetic for the shells of ops/math/cwise_kernels.h: the
// descriptors name a CUDA kernel; types come from the tensors.
struct GpuCwiseImpl {
  using UnaryFn = gpu::UnaryFn;
  using BinaryFn = gpu::BinaryFn;
  struct AddNFn {};
  struct SelectFn {};
  struct CastFn {};

  // The condition is in device memory: the kernel picks, even for a scalar.
  static constexpr bool kConditionOnHost = false;

  static absl::Status Unary(OpKernelContext* ctx, UnaryFn fn, const Tensor& x, Tensor* y) {
    ASSIGN_OR_RETURN(gpu::CwiseType type, CwiseTypeOf(x.dtype()));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(
        ctx, gpu::LaunchUnary(fn, type, x.raw_data(), y->raw_data(), x.NumElements(), stream));
  }

  static absl::Status Binary(OpKernelContext* ctx, BinaryFn fn, const BinaryShapes& shapes,
                             const Tensor& x, const Tensor& y, Tensor* out) {
    ASSIGN_OR_RETURN(gpu::CwiseType type, CwiseTypeOf(x.dtype()));
    gpu::CwiseLayout<2> layout;
    if (shapes.kind == BinaryShapes::Kind::kSame) {
      layout = gpu::FlatCwiseLayout<2>(x.NumElements());
    } else if (shapes.kind == BinaryShapes::Kind::kBroadcast) {
      ASSIGN_OR_RETURN(layout, CwiseLayoutOf(shapes.plan));
    } else {
      // A scalar operand: the kernel broadcasts it through a plan too.
      ASSIGN_OR_RETURN(internal::BroadcastPlan<2> plan,
                       internal::MakeBroadcastPlan<2>({&x.shape(), &y.shape()}));
      ASSIGN_OR_RETURN(layout, CwiseLayoutOf(plan));
    }
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchBinary(fn, type, layout, x.raw_data(), y.raw_data(),
                                               out->raw_data(), stream));
  }

  static absl::Status AddN(OpKernelContext* ctx, AddNFn, Tensor* out) {
    const int num = ctx->num_inputs();
    ASSIGN_OR_RETURN(gpu::CwiseType type, CwiseTypeOf(out->dtype()));
    std::vector<const void*> inputs(num);
    for (int k = 0; k < num; ++k) inputs[k] = ctx->input(k).raw_data();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchAddN(type, inputs.data(), num, out->raw_data(),
                                             out->NumElements(), stream));
  }

  // Select and SelectV2 move whole elements: any type of 1, 2, 4 or 8 bytes.
  static absl::Status Select(OpKernelContext* ctx, SelectFn, internal::SelectCondition checked,
                             const Tensor& cond, const Tensor& t, const Tensor& e, Tensor* out) {
    gpu::SelectCondition mode = gpu::SelectCondition::kScalar;
    if (checked == internal::SelectCondition::kSame) mode = gpu::SelectCondition::kSame;
    if (checked == internal::SelectCondition::kRows) mode = gpu::SelectCondition::kRows;
    const int64_t n = t.NumElements();
    const int64_t width = mode == gpu::SelectCondition::kRows ? n / cond.dim_size(0) : 1;
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx,
                        gpu::LaunchSelect(DataTypeSize(t.dtype()), mode, width,
                                          static_cast<const bool*>(cond.raw_data()), t.raw_data(),
                                          e.raw_data(), out->raw_data(), n, stream));
  }

  static absl::Status SelectV2(OpKernelContext* ctx, SelectFn,
                               const internal::BroadcastPlan<3>& plan, const Tensor& cond,
                               const Tensor& t, const Tensor& e, Tensor* out) {
    ASSIGN_OR_RETURN(gpu::CwiseLayout<3> layout, CwiseLayoutOf(plan));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchSelectV2(DataTypeSize(t.dtype()), layout,
                                                 static_cast<const bool*>(cond.raw_data()),
                                                 t.raw_data(), e.raw_data(), out->raw_data(),
                                                 stream));
  }

  static absl::Status Cast(OpKernelContext* ctx, CastFn, const Tensor& x, Tensor* y) {
    ASSIGN_OR_RETURN(gpu::CwiseType src, CwiseTypeOf(x.dtype()));
    ASSIGN_OR_RETURN(gpu::CwiseType dst, CwiseTypeOf(y->dtype()));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(
        ctx, gpu::LaunchCast(src, dst, x.raw_data(), y->raw_data(), x.NumElements(), stream));
  }
};

using Impl = GpuCwiseImpl;

// ---------------------------------------------------------------------------
// Registration.

const std::vector<DataType>& FloatTypes() {
  static const auto* types = new std::vector<DataType>{DT_FLOAT, DT_HALF, DT_BFLOAT16, DT_DOUBLE};
  return *types;
}

const std::vector<DataType>& FloatInt64Types() {
  static const auto* types =
      new std::vector<DataType>{DT_FLOAT, DT_HALF, DT_BFLOAT16, DT_DOUBLE, DT_INT64};
  return *types;
}

void RegisterUnary(KernelRegistry* k, const char* op, gpu::UnaryFn fn,
                   const std::vector<DataType>& types) {
  k->Register(GpuKernel(op).TypeConstraint("T", types),
              [fn] { return std::make_unique<UnaryOp<Impl>>(fn); });
}

void RegisterBinary(KernelRegistry* k, const char* op, gpu::BinaryFn fn,
                    const std::vector<DataType>& types, bool bool_output = false) {
  k->Register(GpuKernel(op).TypeConstraint("T", types),
              [fn, bool_output] {
                return std::make_unique<BinaryOp<Impl>>(fn, /*same_type=*/!bool_output);
              });
}

}  // namespace

void RegisterGpuCwiseKernels(KernelRegistry* k) {
  using gpu::BinaryFn;
  using gpu::UnaryFn;
  const std::vector<DataType>& f = FloatTypes();
  const std::vector<DataType>& fi = FloatInt64Types();

  RegisterUnary(k, "Neg", UnaryFn::kNeg, fi);
  RegisterUnary(k, "Square", UnaryFn::kSquare, fi);
  RegisterUnary(k, "Abs", UnaryFn::kAbs, fi);
  RegisterUnary(k, "Sign", UnaryFn::kSign, fi);
  RegisterUnary(k, "Sqrt", UnaryFn::kSqrt, f);
  RegisterUnary(k, "Rsqrt", UnaryFn::kRsqrt, f);
  RegisterUnary(k, "Exp", UnaryFn::kExp, f);
  RegisterUnary(k, "Log", UnaryFn::kLog, f);
  RegisterUnary(k, "Tanh", UnaryFn::kTanh, f);
  RegisterUnary(k, "Sigmoid", UnaryFn::kSigmoid, f);
  RegisterUnary(k, "Reciprocal", UnaryFn::kReciprocal, f);
  RegisterUnary(k, "Inv", UnaryFn::kReciprocal, f);
  RegisterUnary(k, "Floor", UnaryFn::kFloor, f);
  RegisterUnary(k, "Ceil", UnaryFn::kCeil, f);
  RegisterUnary(k, "Round", UnaryFn::kRound, f);
  RegisterUnary(k, "Log1p", UnaryFn::kLog1p, f);
  RegisterUnary(k, "Expm1", UnaryFn::kExpm1, f);
  RegisterUnary(k, "Erf", UnaryFn::kErf, f);
  RegisterUnary(k, "Erfc", UnaryFn::kErfc, f);
  RegisterUnary(k, "Sin", UnaryFn::kSin, f);
  RegisterUnary(k, "Cos", UnaryFn::kCos, f);
  RegisterUnary(k, "Tan", UnaryFn::kTan, f);
  RegisterUnary(k, "Sinh", UnaryFn::kSinh, f);
  RegisterUnary(k, "Cosh", UnaryFn::kCosh, f);
  RegisterUnary(k, "Asin", UnaryFn::kAsin, f);
  RegisterUnary(k, "Acos", UnaryFn::kAcos, f);
  RegisterUnary(k, "Atan", UnaryFn::kAtan, f);
  RegisterUnary(k, "Asinh", UnaryFn::kAsinh, f);
  RegisterUnary(k, "Acosh", UnaryFn::kAcosh, f);
  RegisterUnary(k, "Atanh", UnaryFn::kAtanh, f);
  RegisterUnary(k, "Rint", UnaryFn::kRint, f);

  RegisterBinary(k, "Add", BinaryFn::kAdd, fi);
  RegisterBinary(k, "AddV2", BinaryFn::kAdd, fi);
  RegisterBinary(k, "Sub", BinaryFn::kSub, fi);
  RegisterBinary(k, "Mul", BinaryFn::kMul, fi);
  RegisterBinary(k, "RealDiv", BinaryFn::kRealDiv, f);
  RegisterBinary(k, "FloorDiv", BinaryFn::kFloorDiv, f);
  RegisterBinary(k, "Maximum", BinaryFn::kMaximum, fi);
  RegisterBinary(k, "Minimum", BinaryFn::kMinimum, fi);
  RegisterBinary(k, "Pow", BinaryFn::kPow, fi);
  RegisterBinary(k, "SquaredDifference", BinaryFn::kSquaredDifference, fi);
  RegisterBinary(k, "DivNoNan", BinaryFn::kDivNoNan, f);
  RegisterBinary(k, "Div", BinaryFn::kRealDiv, f);  // of floats: RealDiv
  RegisterBinary(k, "FloorMod", BinaryFn::kFloorMod, fi);  // int64: Keras' seed arithmetic
  RegisterBinary(k, "Atan2", BinaryFn::kAtan2, f);
  RegisterBinary(k, "Xlogy", BinaryFn::kXlogy, f);
  RegisterBinary(k, "Xdivy", BinaryFn::kXdivy, f);
  RegisterBinary(k, "Xlog1py", BinaryFn::kXlog1py, f);
  RegisterBinary(k, "TanhGrad", BinaryFn::kTanhGrad, f);
  RegisterBinary(k, "SigmoidGrad", BinaryFn::kSigmoidGrad, f);
  RegisterBinary(k, "SqrtGrad", BinaryFn::kSqrtGrad, f);
  RegisterBinary(k, "RsqrtGrad", BinaryFn::kRsqrtGrad, f);
  RegisterBinary(k, "ReciprocalGrad", BinaryFn::kReciprocalGrad, f);

  std::vector<DataType> equality = fi;
  equality.push_back(DT_BOOL);
  RegisterBinary(k, "Equal", BinaryFn::kEqual, equality, /*bool_output=*/true);
  RegisterBinary(k, "NotEqual", BinaryFn::kNotEqual, equality, true);
  RegisterBinary(k, "Greater", BinaryFn::kGreater, fi, true);
  RegisterBinary(k, "GreaterEqual", BinaryFn::kGreaterEqual, fi, true);
  RegisterBinary(k, "Less", BinaryFn::kLess, fi, true);
  RegisterBinary(k, "LessEqual", BinaryFn::kLessEqual, fi, true);

  k->Register(GpuKernel("AddN").TypeConstraint("T", fi),
              [] { return std::make_unique<AddNOp<Impl>>(Impl::AddNFn{}); });
  std::vector<DataType> select_types = fi;
  select_types.push_back(DT_BOOL);
  k->Register(GpuKernel("Select").TypeConstraint("T", select_types),
              [] { return std::make_unique<SelectOp<Impl>>(Impl::SelectFn{}); });
  k->Register(GpuKernel("SelectV2").TypeConstraint("T", select_types),
              [] { return std::make_unique<SelectV2Op<Impl>>(Impl::SelectFn{}); });

  // Cast between every pair of these but int32 -> int32 (a host kernel,
  // array_kernels.cc); Src == Dst hands the input through.
  const std::vector<DataType> cast_types = {DT_FLOAT, DT_HALF,  DT_BFLOAT16, DT_DOUBLE,
                                            DT_INT32, DT_INT64, DT_BOOL};
  for (DataType src : cast_types) {
    std::vector<DataType> dsts;
    for (DataType dst : cast_types) {
      if (src != DT_INT32 || dst != DT_INT32) dsts.push_back(dst);
    }
    k->Register(GpuKernel("Cast").TypeConstraint("SrcT", src).TypeConstraint("DstT", dsts),
                [] { return std::make_unique<CastOp<Impl>>(Impl::CastFn{}); });
  }
}

}  // namespace sluice
