// GPU kernels of the element-wise math ops (RegisterGpuCwiseKernels in
// gpu_kernels.h): unary and binary arithmetic with NumPy broadcasting,
// comparisons, the *Grad helpers, Cast, AddN, Select and SelectV2. They
// mirror the CPU kernels of ops/math_kernels.cc: the same shape checks and
// error messages (ops/internal/broadcast.h), the same input forwarding, the
// same arithmetic; the CUDA code is in cwise_*.cu behind cwise.cu.h.
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
#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/cwise_layout.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/math_kernel_checks.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace {

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

// A kernel whose Init maps the type of input 0 (its T) to a CwiseType.
class TypedGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(type_, CwiseTypeOf(ctx.input_type(0)));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 protected:
  gpu::CwiseType type_ = gpu::CwiseType::kFloat;
};

class UnaryGpuOp : public TypedGpuOp {
 public:
  explicit UnaryGpuOp(gpu::UnaryFn fn) : fn_(fn) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    const int64_t n = x.NumElements();
    if (n == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchUnary(fn_, type_, x.raw_data(), y->raw_data(), n, stream));
  }

 private:
  const gpu::UnaryFn fn_;
};

// x (op) y with NumPy broadcasting; `bool_output` for the comparisons.
class BinaryGpuOp : public TypedGpuOp {
 public:
  BinaryGpuOp(gpu::BinaryFn fn, bool bool_output) : fn_(fn), bool_output_(bool_output) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    TensorShape out_shape;
    gpu::CwiseLayout<2> layout;
    if (x.shape() == y.shape()) {
      out_shape = x.shape();
      layout = gpu::FlatCwiseLayout<2>(x.NumElements());
    } else {
      ASSIGN_OR_RETURN(internal::BroadcastPlan<2> plan,
                       internal::MakeBroadcastPlan<2>({&x.shape(), &y.shape()}));
      ASSIGN_OR_RETURN(layout, CwiseLayoutOf(plan));
      out_shape = std::move(plan.out_shape);
    }
    const int64_t n = out_shape.num_elements();
    // An input as large as the output is read at exactly the output's
    // offsets, so its buffer may be reused (as on the CPU).
    Tensor* out;
    if (!bool_output_ && x.NumElements() == n) {
      ASSIGN_OR_RETURN(out, ctx->forward_input_or_allocate_output(0, 0, out_shape));
    } else if (!bool_output_ && y.NumElements() == n) {
      ASSIGN_OR_RETURN(out, ctx->forward_input_or_allocate_output(1, 0, out_shape));
    } else {
      ASSIGN_OR_RETURN(out, ctx->allocate_output(0, out_shape));
    }
    if (n == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchBinary(fn_, type_, layout, x.raw_data(), y.raw_data(),
                                               out->raw_data(), stream));
  }

 private:
  const gpu::BinaryFn fn_;
  const bool bool_output_;
};

class AddNGpuOp : public TypedGpuOp {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& first = ctx->input(0);
    const int num = ctx->num_inputs();
    RETURN_IF_ERROR(internal::CheckAddNShapes(*ctx));
    if (num == 1) {
      ctx->set_output(0, first);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, first.shape()));
    const int64_t n = first.NumElements();
    if (n == 0) return absl::OkStatus();
    std::vector<const void*> inputs(num);
    for (int k = 0; k < num; ++k) inputs[k] = ctx->input(k).raw_data();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx,
                        gpu::LaunchAddN(type_, inputs.data(), num, out->raw_data(), n, stream));
  }
};

// Select and SelectV2 move whole elements: any type of 1, 2, 4 or 8 bytes.
class SelectGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    ASSIGN_OR_RETURN(internal::SelectCondition checked, internal::CheckSelectShapes(cond, t, e));
    gpu::SelectCondition mode = gpu::SelectCondition::kScalar;
    if (checked == internal::SelectCondition::kSame) mode = gpu::SelectCondition::kSame;
    if (checked == internal::SelectCondition::kRows) mode = gpu::SelectCondition::kRows;
    // The CPU hands t or e through for a scalar condition; here the
    // condition is in device memory, so the kernel picks.
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(1, 0, t.shape()));
    const int64_t n = t.NumElements();
    if (n == 0) return absl::OkStatus();
    const int64_t width = mode == gpu::SelectCondition::kRows ? n / cond.dim_size(0) : 1;
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx,
                        gpu::LaunchSelect(DataTypeSize(t.dtype()), mode, width,
                                          static_cast<const bool*>(cond.raw_data()), t.raw_data(),
                                          e.raw_data(), out->raw_data(), n, stream));
  }
  bool IsExpensive() const override { return false; }
};

class SelectV2GpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    const bool* c = static_cast<const bool*>(cond.raw_data());
    const int elem_bytes = DataTypeSize(t.dtype());
    if (cond.dims() == 0 && t.shape() == e.shape()) {
      ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(1, 0, t.shape()));
      const int64_t n = t.NumElements();
      if (n == 0) return absl::OkStatus();
      ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
      return LaunchStatus(ctx, gpu::LaunchSelect(elem_bytes, gpu::SelectCondition::kScalar,
                                                 /*row_width=*/1, c, t.raw_data(), e.raw_data(),
                                                 out->raw_data(), n, stream));
    }
    ASSIGN_OR_RETURN(internal::BroadcastPlan<3> plan,
                     internal::MakeBroadcastPlan<3>({&cond.shape(), &t.shape(), &e.shape()}));
    ASSIGN_OR_RETURN(gpu::CwiseLayout<3> layout, CwiseLayoutOf(plan));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchSelectV2(elem_bytes, layout, c, t.raw_data(), e.raw_data(),
                                                 out->raw_data(), stream));
  }
  bool IsExpensive() const override { return false; }
};

class CastGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    same_type_ = BaseType(ctx.input_type(0)) == BaseType(ctx.output_type(0));
    ASSIGN_OR_RETURN(src_, CwiseTypeOf(ctx.input_type(0)));
    ASSIGN_OR_RETURN(dst_, CwiseTypeOf(ctx.output_type(0)));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (same_type_) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const int64_t n = x.NumElements();
    if (n == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchCast(src_, dst_, x.raw_data(), y->raw_data(), n, stream));
  }
  bool IsExpensive() const override { return false; }

 private:
  bool same_type_ = false;
  gpu::CwiseType src_ = gpu::CwiseType::kFloat;
  gpu::CwiseType dst_ = gpu::CwiseType::kFloat;
};

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
              [fn] { return std::make_unique<UnaryGpuOp>(fn); });
}

void RegisterBinary(KernelRegistry* k, const char* op, gpu::BinaryFn fn,
                    const std::vector<DataType>& types, bool bool_output = false) {
  k->Register(GpuKernel(op).TypeConstraint("T", types),
              [fn, bool_output] { return std::make_unique<BinaryGpuOp>(fn, bool_output); });
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

  RegisterBinary(k, "Add", BinaryFn::kAdd, fi);
  RegisterBinary(k, "AddV2", BinaryFn::kAdd, fi);
  RegisterBinary(k, "Sub", BinaryFn::kSub, fi);
  RegisterBinary(k, "Mul", BinaryFn::kMul, fi);
  RegisterBinary(k, "RealDiv", BinaryFn::kRealDiv, f);
  RegisterBinary(k, "FloorDiv", BinaryFn::kFloorDiv, f);
  RegisterBinary(k, "Maximum", BinaryFn::kMaximum, fi);
  RegisterBinary(k, "Minimum", BinaryFn::kMinimum, fi);
  RegisterBinary(k, "Pow", BinaryFn::kPow, fi);
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

  k->Register<AddNGpuOp>(GpuKernel("AddN").TypeConstraint("T", fi));
  std::vector<DataType> select_types = fi;
  select_types.push_back(DT_BOOL);
  k->Register<SelectGpuOp>(GpuKernel("Select").TypeConstraint("T", select_types));
  k->Register<SelectV2GpuOp>(GpuKernel("SelectV2").TypeConstraint("T", select_types));

  // Cast between every pair of these but int32 -> int32 (a host kernel,
  // array_kernels.cc); Src == Dst hands the input through.
  const std::vector<DataType> cast_types = {DT_FLOAT, DT_HALF,  DT_BFLOAT16, DT_DOUBLE,
                                            DT_INT32, DT_INT64, DT_BOOL};
  for (DataType src : cast_types) {
    std::vector<DataType> dsts;
    for (DataType dst : cast_types) {
      if (src != DT_INT32 || dst != DT_INT32) dsts.push_back(dst);
    }
    k->Register<CastGpuOp>(
        GpuKernel("Cast").TypeConstraint("SrcT", src).TypeConstraint("DstT", dsts));
  }
}

}  // namespace sluice
