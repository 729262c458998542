#include "ops/control_flow/stack_ops.h"

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/array_shape_fns.h"
#include "runtime/kernel.h"
#include "runtime/resource_mgr.h"

namespace sluice {
namespace {

class Stack : public ResourceBase {
 public:
  Stack(std::string name, DataType elem_type, int max_size)
      : name_(std::move(name)), elem_type_(elem_type), max_size_(max_size) {}

  std::string DebugString() const override { return absl::StrCat("Stack '", name_, "'"); }

  absl::Status Push(const Tensor& value) {
    if (value.dtype() != elem_type_) {
      return absl::InvalidArgumentError(absl::StrCat(DebugString(), " holds ",
                                                     DataTypeName(elem_type_), ", not ",
                                                     DataTypeName(value.dtype())));
    }
    absl::MutexLock lock(&mu_);
    if (max_size_ >= 0 && static_cast<int>(values_.size()) >= max_size_) {
      return absl::InvalidArgumentError(
          absl::StrCat(DebugString(), " is full (max_size ", max_size_, ")"));
    }
    values_.push_back(value);
    return absl::OkStatus();
  }

  absl::StatusOr<Tensor> Pop() {
    absl::MutexLock lock(&mu_);
    if (values_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("pop from the empty ", DebugString()));
    }
    Tensor top = std::move(values_.back());
    values_.pop_back();
    return top;
  }

  DataType elem_type() const { return elem_type_; }

 private:
  const std::string name_;
  const DataType elem_type_;
  const int max_size_;
  absl::Mutex mu_;
  std::vector<Tensor> values_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<Stack*> LookupStack(OpKernelContext* ctx, const Tensor& handle) {
  if (handle.dtype() != DT_RESOURCE || handle.NumElements() != 1) {
    return absl::InvalidArgumentError("a stack handle must be a resource scalar");
  }
  const std::string& name = handle.scalar<std::string>();
  Stack* stack =
      ctx->resource_manager()->Find<Stack>(ResourceMgr::StepContainer(ctx->step_id()), name);
  if (stack == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "Stack '", name,
        "' does not exist in this step (closed, made in another step or on another device)"));
  }
  return stack;
}

// A stack kernel. A stack lives for one step (in its container) and holds
// the tensors pushed, not copies, so a recorded step (runtime/step_replay.h)
// replays these kernels right: pushes and pops do no device work, and the
// buffers a replay's pops hand on are those the recorded run pushed, refilled.
class StackKernel : public OpKernel {
 public:
  bool ReplaysRight() const final { return true; }
};

class StackOp : public StackKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(elem_type_, ctx.GetAttr<DataType>("elem_type"));
    absl::StatusOr<std::string> name = ctx.GetAttr<std::string>("stack_name");
    stack_name_ = name.ok() && !name->empty() ? *name : ctx.node().name();
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& max = ctx->input(0);
    if (max.dims() != 0) return absl::InvalidArgumentError("StackV2: max_size must be a scalar");
    const int max_size = max.scalar<int32_t>();
    // A new stack per run: TensorFlow's name plus a process-wide counter.
    static std::atomic<int64_t> next_id{0};
    const std::string name = absl::StrCat(stack_name_, "_", next_id.fetch_add(1));
    ResourceMgr* rm = ctx->resource_manager();
    RETURN_IF_ERROR(rm->LookupOrCreate<Stack>(rm->UseStepContainer(ctx->step_id()), name,
                                                [&]() -> absl::StatusOr<std::unique_ptr<Stack>> {
                                                  return std::make_unique<Stack>(name, elem_type_,
                                                                                 max_size);
                                                })
                        .status());
    ASSIGN_OR_RETURN(Tensor * handle, ctx->allocate_output(0, TensorShape()));
    handle->scalar<std::string>() = name;
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType elem_type_ = DT_INVALID;
  std::string stack_name_;
};

class StackPushOp : public StackKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Stack * stack, LookupStack(ctx, ctx->input(0)));
    RETURN_IF_ERROR(stack->Push(ctx->input(1)));
    ctx->set_output(0, ctx->input(1));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class StackPopOp : public StackKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Stack * stack, LookupStack(ctx, ctx->input(0)));
    ASSIGN_OR_RETURN(Tensor top, stack->Pop());
    ctx->set_output(0, std::move(top));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class StackCloseOp : public StackKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& handle = ctx->input(0);
    if (handle.dtype() != DT_RESOURCE || handle.NumElements() != 1) {
      return absl::InvalidArgumentError("a stack handle must be a resource scalar");
    }
    ctx->resource_manager()->Delete(ResourceMgr::StepContainer(ctx->step_id()),
                                    handle.scalar<std::string>());
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

absl::Status PushShape(InferenceContext* ctx) {
  ctx->set_output(0, ctx->input(1));
  return absl::OkStatus();
}

absl::Status UnknownShape(InferenceContext* ctx) {
  ctx->set_output(0, TensorShape::Unknown());
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterStackOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StackV2")
                                    .Input("max_size: int32")
                                    .Output("handle: resource")
                                    .Attr("elem_type: type")
                                    .Attr("stack_name: string = ''")
                                    .SetIsStateful()
                                    .SetShapeFn(internal::ScalarShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StackPushV2")
                                    .Input("handle: resource")
                                    .Input("elem: T")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr("swap_memory: bool = false")
                                    .SetIsStateful()
                                    .SetShapeFn(PushShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StackPopV2")
                                    .Input("handle: resource")
                                    .Output("elem: elem_type")
                                    .Attr("elem_type: type")
                                    .SetIsStateful()
                                    .SetShapeFn(UnknownShape)));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("StackCloseV2").Input("handle: resource").SetIsStateful()));
  for (const char* op : {"StackV2", "StackPushV2", "StackPopV2", "StackCloseV2"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

void RegisterStackKernels(KernelRegistry* kernels) {
  kernels->Register<StackOp>(KernelDef("StackV2", kDeviceTypeCpu));
  kernels->Register<StackPushOp>(KernelDef("StackPushV2", kDeviceTypeCpu));
  kernels->Register<StackPopOp>(KernelDef("StackPopV2", kDeviceTypeCpu));
  kernels->Register<StackCloseOp>(KernelDef("StackCloseV2", kDeviceTypeCpu));
}

void RegisterStackDeviceKernels(KernelRegistry* kernels, const std::string& device_type,
                                const std::vector<DataType>& device_types) {
  auto on = [&](const char* op) { return KernelDef(op, device_type); };
  // int32 values and TensorLists (a loop gradient's stacked lists) stay in
  // host memory.
  const std::vector<DataType> host_types = {DT_INT32, ::tensorflow::DT_VARIANT};
  std::vector<DataType> elem_types = device_types;
  elem_types.insert(elem_types.end(), host_types.begin(), host_types.end());
  kernels->Register<StackOp>(on("StackV2")
                                 .TypeConstraint("elem_type", elem_types)
                                 .HostMemory("max_size")
                                 .HostMemory("handle"));
  kernels->Register<StackPushOp>(
      on("StackPushV2").TypeConstraint("T", device_types).HostMemory("handle"));
  kernels->Register<StackPushOp>(on("StackPushV2").TypeConstraint("T", host_types).AllHostMemory());
  kernels->Register<StackPopOp>(
      on("StackPopV2").TypeConstraint("elem_type", device_types).HostMemory("handle"));
  kernels->Register<StackPopOp>(
      on("StackPopV2").TypeConstraint("elem_type", host_types).AllHostMemory());
  kernels->Register<StackCloseOp>(on("StackCloseV2").HostMemory("handle"));
}

namespace ops {

Output StackV2(const Scope& scope, DataType elem_type, const StackAttrs& attrs,
               std::source_location loc) {
  return scope.Op("StackV2", loc)
      .Input(attrs.max_size)
      .Attr("elem_type", elem_type)
      .Attr("stack_name", attrs.stack_name)
      .Finalize1();
}

Output StackPushV2(const Scope& scope, const Input& handle, const Input& elem,
                   std::source_location loc) {
  return scope.Op("StackPushV2", loc).Input(handle).Input(elem).Finalize1();
}

Output StackPopV2(const Scope& scope, const Input& handle, DataType elem_type,
                  std::source_location loc) {
  return scope.Op("StackPopV2", loc).Input(handle).Attr("elem_type", elem_type).Finalize1();
}

Node* StackCloseV2(const Scope& scope, const Input& handle, std::source_location loc) {
  return scope.Op("StackCloseV2", loc).Input(handle).Finalize();
}

}  // namespace ops
}  // namespace sluice
