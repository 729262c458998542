#include "ops/state/resource_variable_ops.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/indexed_slices.h"
#include "graph/shape_inference.h"
#include "ops/internal/array_shape_fns.h"
#include "ops/internal/grad_util.h"
#include "ops/internal/index_tensors.h"
#include "ops/state/state_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

class VarHandleOpKernel : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    ASSIGN_OR_RETURN(shape_, ctx.GetAttr<TensorShape>("shape"));
    ASSIGN_OR_RETURN(container_, ctx.GetAttr<std::string>("container"));
    ASSIGN_OR_RETURN(name_, ctx.GetAttr<std::string>("shared_name"));
    if (name_.empty()) name_ = ctx.node().name();
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(
        ctx->resource_manager()->LookupOrCreateVar(container_, name_, dtype_, shape_).status());
    ASSIGN_OR_RETURN(Tensor * handle, ctx->allocate_output(0, TensorShape()));
    handle->scalar<std::string>() = internal::VarHandle(container_, name_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  std::string container_;
  std::string name_;
};

absl::Status CheckDtype(const Var& var, DataType dtype, const char* what) {
  if (var.dtype == dtype) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " variable ", var.name, " of type ",
                                                 DataTypeName(var.dtype), " as ",
                                                 DataTypeName(dtype)));
}

class ReadVariableOpKernel : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    RETURN_IF_ERROR(CheckDtype(*var, dtype_, "ReadVariableOp: reading"));
    absl::MutexLock lock(&var->mu);
    RETURN_IF_ERROR(internal::CheckInitialized(*var));
    ctx->set_output(0, var->tensor);  // a snapshot: updates are copy-on-write
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
};

class AssignVariableOpKernel : public internal::VariableKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    const Tensor& value = ctx->input(1);
    RETURN_IF_ERROR(CheckDtype(*var, value.dtype(), "AssignVariableOp: assigning"));
    if (!var->declared_shape.IsCompatibleWith(value.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AssignVariableOp: variable ", var->name, " has shape ", var->declared_shape.DebugString(),
          " but the value has shape ", value.shape().DebugString()));
    }
    absl::MutexLock lock(&var->mu);
    RETURN_IF_ERROR(internal::StoreValue(ctx, var, value));
    var->initialized = true;
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class VarIsInitializedOpKernel : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Var*> var = internal::VarInput(ctx, 0);
    bool initialized = false;
    if (var.ok()) {
      absl::MutexLock lock(&(*var)->mu);
      initialized = (*var)->initialized;
    } else if (!absl::IsNotFound(var.status())) {
      return var.status();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<bool>() = initialized;
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// VariableShape: the shape of the variable's value (int32 or int64), what
// TensorFlow's gradients ask of a variable a loop reads.
class VariableShapeKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(out_type_, ctx.GetAttr<DataType>("out_type"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    TensorShape shape;
    {
      absl::MutexLock lock(&var->mu);
      RETURN_IF_ERROR(internal::CheckInitialized(*var));
      shape = var->tensor.shape();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({shape.rank()})));
    for (int i = 0; i < shape.rank(); ++i) {
      if (out_type_ == DT_INT32) {
        out->data<int32_t>()[i] = static_cast<int32_t>(shape.dim(i));
      } else {
        out->data<int64_t>()[i] = shape.dim(i);
      }
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType out_type_ = DT_INT32;
};

// The CPU's rows: indices are read on the host and checked.
class ResourceGatherKernel : public internal::ResourceGatherBase {
 protected:
  absl::Status Rows(OpKernelContext* ctx, const Tensor& params, const Tensor& indices,
                    Tensor* out) override {
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, internal::ReadInts(indices, "ResourceGather: indices"));
    const int64_t rows = params.dim_size(0);
    const size_t row_bytes = (rows == 0 ? 0 : params.NumElements() / rows) *
                             static_cast<size_t>(DataTypeSize(params.dtype()));
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0 || idx[i] >= rows) {
        return absl::InvalidArgumentError(absl::StrCat("ResourceGather: indices[", i, "] = ", idx[i],
                                                       " is not in [0, ", rows, ")"));
      }
      std::memcpy(static_cast<char*>(out->raw_data()) + i * row_bytes,
                  static_cast<const char*>(params.raw_data()) + idx[i] * row_bytes, row_bytes);
    }
    return absl::OkStatus();
  }
};

absl::Status ReadShape(InferenceContext* c) {
  c->set_output(0, TensorShape::Unknown());
  return absl::OkStatus();
}

absl::Status VariableShapeShape(InferenceContext* c) {
  c->set_output(0, TensorShape::UnknownOfRank(1));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Output>> ReadGrad(const Scope&, const Node&,
                                             absl::Span<const Output> dy) {
  return std::vector<Output>{dy[0]};
}

// ReadVariableOp passes a sparse gradient to the handle as it is.
absl::StatusOr<std::vector<Gradient>> ReadSparseGrad(const Scope&, const Node&,
                                                     absl::Span<const Gradient> dy) {
  return std::vector<Gradient>{dy[0]};
}

// The shape of the variable behind `handle`, int64: a Const when the handle
// comes straight from a VarHandleOp of known shape (the usual case), else
// the shape of its value (which reads the variable).
Output VariableShapeOf(const Scope& s, const Output& handle, DataType dtype) {
  if (handle.node->op() == "VarHandleOp") {
    absl::StatusOr<TensorShape> shape = handle.node->GetAttr<TensorShape>("shape");
    if (shape.ok() && shape->IsFullyDefined()) {
      ::tensorflow::TensorProto dims;
      dims.set_dtype(DT_INT64);
      dims.mutable_tensor_shape()->add_dim()->set_size(shape->rank());
      for (int64_t d : shape->dims()) dims.add_int64_val(d);
      return s.Op("Identity").Input(Input(std::move(dims))).DefaultName("variable_shape").Finalize1();
    }
  }
  const Output value = s.Op("ReadVariableOp").Input(handle).Attr("dtype", dtype).Finalize1();
  return s.Op("Shape").Input(value).Attr("out_type", DT_INT64).Finalize1();
}

// ResourceGather(handle, indices): the variable's gradient as IndexedSlices
// of the gathered rows (TensorFlow's), values reshaped to
// [-1] + shape[1:].
absl::StatusOr<std::vector<Gradient>> ResourceGatherSparseGrad(const Scope& s, const Node& node,
                                                               absl::Span<const Gradient> dy) {
  std::vector<Gradient> dx(node.num_inputs());
  if (!dy[0].valid()) return dx;
  ASSIGN_OR_RETURN(int64_t batch_dims, node.GetAttr<int64_t>("batch_dims"));
  if (batch_dims != 0) {
    return absl::UnimplementedError(absl::StrCat(
        "ResourceGather gradient needs batch_dims = 0 (", node.DebugName(), ")"));
  }
  ASSIGN_OR_RETURN(DataType dtype, node.GetAttr<DataType>("dtype"));
  const Output handle = internal::InputOf(node, 0);
  IndexedSlices slices;
  slices.dense_shape = VariableShapeOf(s, handle, dtype);
  const Output minus_one = s.Op("Identity").Input({int64_t{-1}}).Finalize1();
  const Output row_shape = s.Op("StridedSlice")
                               .Input(slices.dense_shape)
                               .Input({int32_t{1}})
                               .Input({int32_t{0}})
                               .Input({int32_t{1}})
                               .Attr("end_mask", int64_t{1})
                               .Finalize1();
  const Output values_shape =
      s.Op("ConcatV2").InputList({Input(minus_one), Input(row_shape)}).Input(int32_t{0}).Finalize1();
  slices.values = s.Op("Reshape").Input(DenseOf(s, dy[0])).Input(values_shape).Finalize1();
  slices.indices = s.Op("Reshape").Input(internal::InputOf(node, 1)).Input({int32_t{-1}}).Finalize1();
  dx[0] = slices;
  RETURN_IF_ERROR(s.status());
  return dx;
}

}  // namespace

namespace internal {

absl::Status ResourceGatherBase::Init(const OpKernelConstruction& ctx) {
  ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
  ASSIGN_OR_RETURN(int64_t batch_dims, ctx.GetAttr<int64_t>("batch_dims"));
  if (batch_dims != 0) {
    return absl::UnimplementedError("ResourceGather: only batch_dims = 0 is supported");
  }
  return absl::OkStatus();
}

absl::Status ResourceGatherBase::Compute(OpKernelContext* ctx) {
  ASSIGN_OR_RETURN(Var * var, VarInput(ctx, 0));
  RETURN_IF_ERROR(CheckDtype(*var, dtype_, "ResourceGather: reading"));
  // Held for the rows' copy: a dense update meanwhile copies on write; a
  // sparse one writes in place (VarUpdate::BeginInPlace), as with
  // TensorFlow's ref variables.
  Tensor params;
  {
    absl::MutexLock lock(&var->mu);
    RETURN_IF_ERROR(CheckInitialized(*var));
    params = var->tensor;
  }
  if (params.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ResourceGather: variable ", var->name, " is a scalar"));
  }
  const Tensor& indices = ctx->input(1);
  TensorShape shape = indices.shape();
  for (int d = 1; d < params.dims(); ++d) shape.AddDim(params.dim_size(d));
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
  return Rows(ctx, params, indices, out);
}

}  // namespace internal

absl::Status RegisterResourceVariableOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("VarHandleOp")
                                    .Output("resource: resource")
                                    .Attr("container: string")
                                    .Attr("shared_name: string")
                                    .Attr("debug_name: string")  // TF 2.21: for its messages
                                    .Attr("dtype: type")
                                    .Attr("shape: shape")
                                    .Attr("allowed_devices: list(string)")
                                    .SetAttrDefault("container", MakeAttr(std::string()))
                                    .SetAttrDefault("shared_name", MakeAttr(std::string()))
                                    .SetAttrDefault("debug_name", MakeAttr(std::string()))
                                    .SetAttrDefault("allowed_devices",
                                                    MakeAttr(std::vector<std::string>()))
                                    .SetIsStateful()
                                    .SetShapeFn(internal::ScalarShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ReadVariableOp")
                                    .Input("resource: resource")
                                    .Output("value: dtype")
                                    .Attr("dtype: type")
                                    .SetIsStateful()
                                    .SetShapeFn(ReadShape)));
  for (const char* name : {"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"}) {
    OpDefBuilder def(name);
    def.Input("resource: resource").Input("value: dtype").Attr("dtype: type").SetIsStateful();
    // TF 2.21's AssignVariableOp carries validate_shape (default false: a
    // variable may take a value of another shape). Sluice accepts the attr
    // and always checks the value against the variable's declared shape,
    // which TF's own graphs satisfy.
    if (std::string(name) == "AssignVariableOp") def.Attr("validate_shape: bool = false");
    RETURN_IF_ERROR(ops->Register(def));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("VarIsInitializedOp")
                                    .Input("resource: resource")
                                    .Output("is_initialized: bool")
                                    .SetIsStateful()
                                    .SetShapeFn(internal::ScalarShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("VariableShape")
                                    .Input("input: resource")
                                    .Output("output: out_type")
                                    .Attr("out_type: {int32, int64} = DT_INT32")
                                    .SetIsStateful()
                                    .SetShapeFn(VariableShapeShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ResourceGather")
                                    .Input("resource: resource")
                                    .Input("indices: Tindices")
                                    .Output("output: dtype")
                                    .Attr("batch_dims: int = 0")
                                    .Attr("validate_indices: bool = true")
                                    .Attr("dtype: type")
                                    .Attr("Tindices: {int32, int64}")
                                    .SetIsStateful()
                                    .SetShapeFn(ReadShape)));
  RETURN_IF_ERROR(ops->SetGradient("ReadVariableOp", ReadGrad));
  RETURN_IF_ERROR(ops->SetSparseGradient("ReadVariableOp", ReadSparseGrad));
  RETURN_IF_ERROR(ops->SetSparseGradient("ResourceGather", ResourceGatherSparseGrad));
  for (const char* op : {"VarHandleOp", "AssignVariableOp", "AssignAddVariableOp",
                         "AssignSubVariableOp", "VarIsInitializedOp", "VariableShape"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

void RegisterResourceVariableKernels(KernelRegistry* kernels) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  kernels->Register<VarHandleOpKernel>(cpu("VarHandleOp"));
  kernels->Register<ReadVariableOpKernel>(cpu("ReadVariableOp"));
  kernels->Register<AssignVariableOpKernel>(cpu("AssignVariableOp"));
  kernels->Register<VarIsInitializedOpKernel>(cpu("VarIsInitializedOp"));
  kernels->Register<VariableShapeKernel>(cpu("VariableShape"));
  kernels->Register<ResourceGatherKernel>(cpu("ResourceGather"));
  // On a GPU the types its kernels compute in (as VariableV2's,
  // ops/state/state_kernels.cc); int32 and string variables stay on the CPU,
  // and with them (ComputeColocationGroups) every op taking their handle.
  // Harmless without CUDA: no GPU device ever exists then.
  RegisterResourceVariableDeviceKernels(
      kernels, kDeviceTypeGpu, {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT64});
}

void RegisterResourceVariableDeviceKernels(KernelRegistry* kernels, const char* device_type,
                                           const std::vector<DataType>& types) {
  auto on = [device_type](const char* op) { return KernelDef(op, device_type); };
  kernels->Register<VarHandleOpKernel>(
      on("VarHandleOp").TypeConstraint("dtype", types).AllHostMemory());
  kernels->Register<VarIsInitializedOpKernel>(on("VarIsInitializedOp").AllHostMemory());
  kernels->Register<VariableShapeKernel>(on("VariableShape").AllHostMemory());
  kernels->Register<ReadVariableOpKernel>(
      on("ReadVariableOp").TypeConstraint("dtype", types).HostMemory("resource"));
  kernels->Register<AssignVariableOpKernel>(
      on("AssignVariableOp").TypeConstraint("dtype", types).HostMemory("resource"));
}

namespace ops {

Output VarHandleOp(const Scope& scope, DataType dtype, const TensorShape& shape,
                   const VarHandleAttrs& attrs, std::source_location loc) {
  return scope.Op("VarHandleOp", loc)
      .Attr("dtype", dtype)
      .Attr("shape", shape)
      .Attr("container", attrs.container)
      .Attr("shared_name", attrs.shared_name)
      .Finalize1();
}

Output ReadVariableOp(const Scope& scope, Input resource, DataType dtype,
                      std::source_location loc) {
  return scope.Op("ReadVariableOp", loc).Input(resource).Attr("dtype", dtype).Finalize1();
}

Node* AssignVariableOp(const Scope& scope, Input resource, Input value, std::source_location loc) {
  return scope.Op("AssignVariableOp", loc).Input(resource).Input(value).Finalize();
}

Node* AssignAddVariableOp(const Scope& scope, Input resource, Input value,
                          std::source_location loc) {
  return scope.Op("AssignAddVariableOp", loc).Input(resource).Input(value).Finalize();
}

Node* AssignSubVariableOp(const Scope& scope, Input resource, Input value,
                          std::source_location loc) {
  return scope.Op("AssignSubVariableOp", loc).Input(resource).Input(value).Finalize();
}

Output VarIsInitializedOp(const Scope& scope, Input resource, std::source_location loc) {
  return scope.Op("VarIsInitializedOp", loc).Input(resource).Finalize1();
}

Output ResourceGather(const Scope& scope, Input resource, Input indices, DataType dtype,
                      std::source_location loc) {
  return scope.Op("ResourceGather", loc)
      .Input(resource)
      .Input(indices)
      .Attr("dtype", dtype)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
