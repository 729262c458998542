// Strided slice assignments and CountUpTo: definitions, CPU kernels and
// wrappers (ops/state/variable_slice_ops.h).
#include "ops/state/variable_slice_ops.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "ops/array/internal/strided_box.h"
#include "ops/state/state_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// StridedSliceAssign (has_ref_output) and ResourceStridedSliceAssign.
class StridedSliceAssignOp : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(spec_, internal::ReadStridedSliceSpec(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    const Tensor& value = ctx->input(4);
    absl::MutexLock lock(&var->mu);
    RETURN_IF_ERROR(internal::CheckInitialized(*var));
    if (var->tensor.dtype() != value.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": variable ", var->name, " holds ",
                                                     DataTypeName(var->tensor.dtype()),
                                                     ", the value is ", DataTypeName(value.dtype())));
    }
    if (value.dtype() == DT_STRING) {
      return absl::UnimplementedError(absl::StrCat(op, ": slices of string variables"));
    }
    const TensorShape var_shape = var->tensor.shape();
    ASSIGN_OR_RETURN(internal::StridedSlicePlan plan,
                     internal::PlanStridedSliceOfInputs(*ctx, 1, var_shape, spec_));
    ASSIGN_OR_RETURN(Tensor v, internal::BroadcastValue(value, plan.final_shape, op));
    ASSIGN_OR_RETURN(internal::VarUpdate u, internal::VarUpdate::Begin(var, ctx->device()));
    if (u.size() > 0) {
      internal::StridedBoxCopy<true>(u.data<char>(), var_shape.dims(), plan.begin, plan.strides,
                                     plan.processing_dims, static_cast<char*>(v.raw_data()),
                                     DataTypeSize(value.dtype()));
    }
    u.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  internal::StridedSliceSpec spec_;
};

template <typename T>
class CountUpToOp : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(limit_, ctx.GetAttr<int64_t>("limit"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInputOf<T>(ctx, 0));
    absl::MutexLock lock(&var->mu);
    RETURN_IF_ERROR(internal::CheckInitialized(*var));
    if (var->tensor.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          ctx->node().op(), ": input is not a scalar: ", var->tensor.shape().DebugString()));
    }
    const T before = var->tensor.scalar<T>();
    if (before >= limit_) {
      return absl::OutOfRangeError(absl::StrCat("Reached limit of ", limit_));
    }
    ASSIGN_OR_RETURN(internal::VarUpdate u, internal::VarUpdate::Begin(var, ctx->device()));
    u.data<T>()[0] = before + 1;
    u.Commit();
    ctx->set_output(0, Tensor::Scalar<T>(before));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  int64_t limit_ = 0;
};

}  // namespace

absl::Status RegisterVariableSliceOps(OpRegistry* ops) {
  {
    OpDefBuilder b("StridedSliceAssign");
    b.Input("ref: Ref(T)")
        .Input("begin: Index")
        .Input("end: Index")
        .Input("strides: Index")
        .Input("value: T")
        .Output("output_ref: Ref(T)")
        .Attr("T: type")
        .Attr("Index: {int32, int64}")
        .SetShapeFn([](InferenceContext* c) {
          c->set_output(0, c->input(0));
          return absl::OkStatus();
        });
    RETURN_IF_ERROR(ops->Register(AddStridedSliceMaskAttrs(b)));
  }
  {
    OpDefBuilder b("ResourceStridedSliceAssign");
    b.Input("ref: resource")
        .Input("begin: Index")
        .Input("end: Index")
        .Input("strides: Index")
        .Input("value: T")
        .Attr("T: type")
        .Attr("Index: {int32, int64}")
        .SetIsStateful()
        .SetShapeFn([](InferenceContext*) { return absl::OkStatus(); });
    RETURN_IF_ERROR(ops->Register(AddStridedSliceMaskAttrs(b)));
  }
  auto scalar = [](InferenceContext* c) {
    c->set_output(0, TensorShape());
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("CountUpTo")
                                    .Input("ref: Ref(T)")
                                    .Output("output: T")
                                    .Attr("limit: int")
                                    .Attr("T: {int32, int64}")
                                    .SetShapeFn(scalar)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ResourceCountUpTo")
                                    .Input("resource: resource")
                                    .Output("output: T")
                                    .Attr("limit: int")
                                    .Attr("T: {int32, int64}")
                                    .SetIsStateful()
                                    .SetShapeFn(scalar)));
  for (const char* op :
       {"StridedSliceAssign", "ResourceStridedSliceAssign", "CountUpTo", "ResourceCountUpTo"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

void RegisterVariableSliceKernels(KernelRegistry* k) {
  k->Register<StridedSliceAssignOp>(KernelDef("StridedSliceAssign", kDeviceTypeCpu));
  k->Register<StridedSliceAssignOp>(KernelDef("ResourceStridedSliceAssign", kDeviceTypeCpu));
  for (const char* op : {"CountUpTo", "ResourceCountUpTo"}) {
    k->Register<CountUpToOp<int32_t>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_INT32));
    k->Register<CountUpToOp<int64_t>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_INT64));
  }
}

namespace ops {

Node* ResourceStridedSliceAssign(const Scope& s, Input ref, Input begin, Input end, Input strides,
                                 Input value, const StridedSliceAttrs& attrs,
                                 std::source_location loc) {
  OpBuilder b = s.Op("ResourceStridedSliceAssign", loc);
  b.Input(ref).Input(begin).Input(end).Input(strides).Input(value);
  return SetStridedSliceMasks(b, attrs).Finalize();
}

Output StridedSliceAssign(const Scope& s, Input ref, Input begin, Input end, Input strides,
                          Input value, const StridedSliceAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("StridedSliceAssign", loc);
  b.Input(ref).Input(begin).Input(end).Input(strides).Input(value);
  return SetStridedSliceMasks(b, attrs).Finalize1();
}

Output CountUpTo(const Scope& s, Input ref, int64_t limit, std::source_location loc) {
  return s.Op("CountUpTo", loc).Input(ref).Attr("limit", limit).Finalize1();
}

Output ResourceCountUpTo(const Scope& s, Input resource, int64_t limit, DataType dtype,
                         std::source_location loc) {
  return s.Op("ResourceCountUpTo", loc).Input(resource).Attr("limit", limit).Attr("T", dtype)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
