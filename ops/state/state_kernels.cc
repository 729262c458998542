// CPU kernels of the state ops, and the variable-update helpers that the
// training kernels share (ops/state/state_ops.h, namespace internal).
#include "ops/state/state_kernels.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/state/state_ops.h"
#include "runtime/resource_handle.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

VarLockSet::VarLockSet(absl::Span<Var* const> vars) : locked_(vars.begin(), vars.end()) {
  std::sort(locked_.begin(), locked_.end());
  locked_.erase(std::unique(locked_.begin(), locked_.end()), locked_.end());
  for (Var* v : locked_) v->mu.Lock();
}

VarLockSet::~VarLockSet() {
  for (auto it = locked_.rbegin(); it != locked_.rend(); ++it) (*it)->mu.Unlock();
}

std::string VarHandle(absl::string_view container, absl::string_view name) {
  return MakeResourceHandle(container, name);
}

absl::StatusOr<Var*> VarInput(OpKernelContext* ctx, int i) {
  Var* var = ctx->input_ref(i);
  const Tensor& handle = ctx->input(i);
  if (var == nullptr && handle.dtype() == DT_RESOURCE && handle.NumElements() == 1) {
    absl::StatusOr<ResourceName> n = ParseResourceHandle(handle, "variable");
    if (!n.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->node().DebugName(), ": input ", i, " is not a variable's handle"));
    }
    var = ctx->resource_manager()->FindVar(n->container, n->name);
    if (var == nullptr) {
      return absl::NotFoundError(absl::StrCat(ctx->node().DebugName(), ": resource variable '",
                                              n->name, "' does not exist on ",
                                              ctx->device()->name()));
    }
    return var;
  }
  if (var == nullptr) {
    return absl::InternalError(
        absl::StrCat(ctx->node().DebugName(), ": input ", i, " is not a variable (ref)"));
  }
  return var;
}

absl::StatusOr<Var*> VarInput(OpKernelContext* ctx, int i, DataType dtype) {
  ASSIGN_OR_RETURN(Var * var, VarInput(ctx, i));
  if (var->dtype != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        ctx->node().DebugName(), ": variable ", var->name, " holds ", DataTypeName(var->dtype),
        ", not the ", DataTypeName(dtype), " this kernel updates"));
  }
  return var;
}

void SetRefOutput(OpKernelContext* ctx, int i, Var* var) {
  if (i >= ctx->num_outputs()) return;
  ctx->set_output(i, Tensor());
  ctx->set_output_ref(i, var);
}

absl::Status CheckInitialized(const Var& var) {
  if (!var.initialized) {
    return absl::FailedPreconditionError(
        absl::StrCat("Attempting to use uninitialized value ", var.name));
  }
  return absl::OkStatus();
}

absl::Status CheckAssignUpdate(absl::string_view op, const Var& var, const TensorShape& value) {
  RETURN_IF_ERROR(CheckInitialized(var));
  if (var.tensor.shape() != value) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, " to variable ", var.name, ": the variable has shape ",
        var.tensor.shape().DebugString(), " but the value has shape ", value.DebugString()));
  }
  return absl::OkStatus();
}

absl::Status CheckScalarInput(OpKernelContext* ctx, int i) {
  const Tensor& t = ctx->input(i);
  if (t.dims() == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(ctx->node().op(), ": ", ctx->node().op_def().inputs[i].name,
                   " must be a scalar, got shape ", t.shape().DebugString()));
}

absl::Status CheckSameShape(OpKernelContext* ctx, const Var& var, const TensorShape& var_shape,
                            int i, const TensorShape& shape) {
  if (var_shape == shape) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      ctx->node().op(), ": var ", var.name, " has shape ", var_shape.DebugString(), " but ",
      ctx->node().op_def().inputs[i].name, " has shape ", shape.DebugString()));
}

// The name of flat input `i` of `node`: its arg's, with the index within a
// list arg ("var[3]").
static std::string FlatInputName(const Node& node, size_t i) {
  size_t at = 0;
  for (const ArgDef& arg : node.op_def().inputs) {
    size_t n = 1;
    if (!arg.number_attr.empty()) {
      n = static_cast<size_t>(node.GetAttr<int64_t>(arg.number_attr).value_or(1));
    } else if (!arg.type_list_attr.empty()) {
      n = node.GetAttr<std::vector<DataType>>(arg.type_list_attr)
              .value_or(std::vector<DataType>{})
              .size();
    }
    if (i < at + n) {
      const bool list = !arg.number_attr.empty() || !arg.type_list_attr.empty();
      return list ? absl::StrCat(arg.name, "[", i - at, "]") : arg.name;
    }
    at += n;
  }
  return absl::StrCat("input ", i);
}

absl::Status CheckDistinct(OpKernelContext* ctx, absl::Span<Var* const> vars) {
  // A table, not all pairs: a multi-tensor update passes hundreds.
  absl::flat_hash_map<const Var*, size_t> first;
  first.reserve(vars.size());
  for (size_t j = 0; j < vars.size(); ++j) {
    auto [it, inserted] = first.emplace(vars[j], j);
    if (!inserted) {
      const size_t i = it->second;
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->node().op(), ": ", FlatInputName(ctx->node(), i), " and ",
                       FlatInputName(ctx->node(), j), " are the same variable ", vars[i]->name));
    }
  }
  return absl::OkStatus();
}

absl::Status StoreValue(OpKernelContext* ctx, Var* var, const Tensor& value) {
  Tensor& current = var->tensor;
  if (value.RefCountIsOne()) {
    // Nobody else can see the value's buffer: the variable may own it.
    current = value;
    return absl::OkStatus();
  }
  if (HoldsObjects(value.dtype())) {
    // Strings, handles, variants (host memory): copied object by object,
    // not by a device's byte copy.
    current = value.DeepCopy();
    return absl::OkStatus();
  }
  // Copies go through the device: on a GPU both buffers are device memory
  // and the copy is ordered on its stream like a kernel.
  if (var->initialized && current.IsInitialized() && current.RefCountIsOne() &&
      current.dtype() == value.dtype() && current.shape() == value.shape()) {
    return ctx->device()->CopyWithinDevice(value, &current);
  }
  ASSIGN_OR_RETURN(Tensor copy, Tensor::Allocate(ctx->allocator(), value.dtype(), value.shape()));
  RETURN_IF_ERROR(ctx->device()->CopyWithinDevice(value, &copy));
  current = std::move(copy);
  return absl::OkStatus();
}

absl::StatusOr<VarUpdate> VarUpdate::Begin(Var* var, Device* device) {
  var->mu.AssertHeld();
  RETURN_IF_ERROR(CheckInitialized(*var));
  VarUpdate u;
  u.var_ = var;
  u.shape_ = var->tensor.shape();
  u.size_ = var->tensor.NumElements();
  if (var->tensor.RefCountIsOne()) {
    u.data_ = var->tensor.raw_data();
  } else {
    ASSIGN_OR_RETURN(u.fresh_,
                     Tensor::Allocate(device->allocator(), var->tensor.dtype(), u.shape_));
    RETURN_IF_ERROR(device->CopyWithinDevice(var->tensor, &u.fresh_));
    u.data_ = u.fresh_.raw_data();
  }
  return u;
}

absl::StatusOr<VarUpdate> VarUpdate::BeginInPlace(Var* var) {
  var->mu.AssertHeld();
  RETURN_IF_ERROR(CheckInitialized(*var));
  VarUpdate u;
  u.var_ = var;
  u.shape_ = var->tensor.shape();
  u.size_ = var->tensor.NumElements();
  u.data_ = var->tensor.raw_data();
  return u;
}

void VarUpdate::Commit() {
  if (fresh_.IsInitialized()) var_->tensor = std::move(fresh_);
  fresh_ = Tensor();
}

}  // namespace internal

namespace {

class VariableOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(shape_, ctx.GetAttr<TensorShape>("shape"));
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    ASSIGN_OR_RETURN(container_, ctx.GetAttr<std::string>("container"));
    ASSIGN_OR_RETURN(name_, ctx.GetAttr<std::string>("shared_name"));
    if (name_.empty()) name_ = ctx.node().name();
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var,
                     ctx->resource_manager()->LookupOrCreateVar(container_, name_, dtype_, shape_));
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  TensorShape shape_;
  DataType dtype_ = DT_INVALID;
  std::string container_;
  std::string name_;
};

class AssignOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(validate_shape_, ctx.GetAttr<bool>("validate_shape"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    const Tensor& value = ctx->input(1);
    if (value.dtype() != var->dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("Assign to variable ", var->name, " of type ", DataTypeName(var->dtype),
                       ": the value has type ", DataTypeName(value.dtype())));
    }
    if (validate_shape_ && !var->declared_shape.IsCompatibleWith(value.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Assign to variable ", var->name, ": the variable's shape ",
          var->declared_shape.DebugString(), " does not match the value's shape ",
          value.shape().DebugString(), " (set validate_shape=false to change its shape)"));
    }
    absl::MutexLock lock(&var->mu);
    RETURN_IF_ERROR(internal::StoreValue(ctx, var, value));
    var->initialized = true;
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  bool validate_shape_ = true;
};

// The CPU's arithmetic of AssignAdd / AssignSub (ops/state/state_kernels.h).
struct CpuAssignImpl {
  template <typename T>
  static absl::Status AssignUpdate(OpKernelContext*, T* var, const T* value, int64_t n, bool add) {
    if (add) {
      Loop<T, true>(var, value, n);
    } else {
      Loop<T, false>(var, value, n);
    }
    return absl::OkStatus();
  }

  // Out of line: inlined into its caller, GCC loses __restrict and the loop
  // stays scalar.
  template <typename T, bool kAdd>
  ABSL_ATTRIBUTE_NOINLINE static void Loop(T* __restrict var, const T* __restrict v, int64_t n) {
    if (kAdd) {
      internal::ForEachIndex(n, [=](int64_t i) { var[i] += v[i]; });
    } else {
      internal::ForEachIndex(n, [=](int64_t i) { var[i] -= v[i]; });
    }
  }
};

class IsVariableInitializedOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    bool initialized;
    {
      absl::MutexLock lock(&var->mu);
      initialized = var->initialized;
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<bool>() = initialized;
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

void RegisterStateKernels(KernelRegistry* kernels) {
  // Variables and Assign move bytes: any type with a fixed size. On a GPU
  // (device memory; copies through GpuDevice::CopyWithinDevice) the float
  // types and int64; int32 variables stay on the CPU by convention, as
  // TensorFlow keeps them (they are shapes and counters). Registering GPU
  // kernels is harmless without CUDA: no GPU device ever exists then.
  const std::vector<DataType> fixed_size = {DT_FLOAT,  DT_DOUBLE, DT_INT32,   DT_INT64,
                                            DT_BOOL,   DT_INT8,   DT_UINT8,   DT_INT16,
                                            DT_UINT16, DT_HALF,   DT_BFLOAT16};
  const std::vector<DataType> gpu_types = {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT64};
  const auto register_for = [kernels](const char* device, const std::vector<DataType>& types) {
    kernels->Register<VariableOp>(KernelDef("VariableV2", device).TypeConstraint("dtype", types));
    kernels->Register<VariableOp>(KernelDef("Variable", device).TypeConstraint("dtype", types));
    kernels->Register<AssignOp>(KernelDef("Assign", device).TypeConstraint("T", types));
    // The flag is written by the host: a host-memory output.
    kernels->Register<IsVariableInitializedOp>(KernelDef("IsVariableInitialized", device)
                                                   .TypeConstraint("dtype", types)
                                                   .HostMemory("is_initialized"));
  };
  // On the CPU strings too (TF1 SavedModels keep an asset's path in one).
  std::vector<DataType> cpu_types = fixed_size;
  cpu_types.push_back(DT_STRING);
  register_for(kDeviceTypeCpu, cpu_types);
  register_for(kDeviceTypeGpu, gpu_types);
  RegisterAssignUpdateFor<CpuAssignImpl, float>(kernels, kDeviceTypeCpu);
  RegisterAssignUpdateFor<CpuAssignImpl, double>(kernels, kDeviceTypeCpu);
  RegisterAssignUpdateFor<CpuAssignImpl, int32_t>(kernels, kDeviceTypeCpu);
  RegisterAssignUpdateFor<CpuAssignImpl, int64_t>(kernels, kDeviceTypeCpu);
  RegisterResourceAssignUpdateFor<CpuAssignImpl, float>(kernels, kDeviceTypeCpu);
  RegisterResourceAssignUpdateFor<CpuAssignImpl, double>(kernels, kDeviceTypeCpu);
  RegisterResourceAssignUpdateFor<CpuAssignImpl, int32_t>(kernels, kDeviceTypeCpu);
  RegisterResourceAssignUpdateFor<CpuAssignImpl, int64_t>(kernels, kDeviceTypeCpu);
}

}  // namespace sluice
