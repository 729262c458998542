// CPU kernels of the functional family (see functional_ops.h).
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/internal/shape_kernels.h"
#include "ops/functional/functional_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

std::string TypesString(const std::vector<DataType>& types) {
  std::string s = "[";
  for (size_t i = 0; i < types.size(); ++i) absl::StrAppend(&s, i ? ", " : "", DataTypeName(types[i]));
  return s + "]";
}

// PartitionedCall, StatefulPartitionedCall: the function runs on this
// node's device through the executor's FunctionRuntime.
class PartitionedCallOp : public AsyncOpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    runtime_ = ctx.function_runtime();
    if (runtime_ == nullptr) {
      return absl::FailedPreconditionError(
          "no function runtime: whoever built this executor gave it none");
    }
    ASSIGN_OR_RETURN(NameAttrList f, ctx.GetAttr<NameAttrList>("f"));
    ASSIGN_OR_RETURN(handle_, runtime_->Instantiate(f));
    std::vector<DataType> tin, tout;
    for (DataType t : ctx.node().input_types()) tin.push_back(BaseType(t));
    tout = ctx.node().output_types();
    if (runtime_->arg_types(handle_) != tin || runtime_->ret_types(handle_) != tout) {
      return absl::InvalidArgumentError(absl::StrCat(
          "function '", f.name(), "' takes ", TypesString(runtime_->arg_types(handle_)),
          " and returns ", TypesString(runtime_->ret_types(handle_)), "; the call has Tin ",
          TypesString(tin), ", Tout ", TypesString(tout)));
    }
    return absl::OkStatus();
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    std::vector<Tensor> args;
    args.reserve(ctx->num_inputs());
    for (int i = 0; i < ctx->num_inputs(); ++i) args.push_back(ctx->input(i));
    auto rets = std::make_shared<std::vector<Tensor>>();
    runtime_->RunAsync(handle_, std::move(args), rets.get(),
                       [ctx, rets, done = std::move(done)](absl::Status s) {
                         if (s.ok()) {
                           for (size_t i = 0; i < rets->size(); ++i) {
                             ctx->set_output(static_cast<int>(i), (*rets)[i]);
                           }
                         }
                         done(s);
                       });
  }

 private:
  FunctionRuntime* runtime_ = nullptr;
  FunctionRuntime::Handle handle_ = -1;
};

}  // namespace

void RegisterFunctionalKernels(KernelRegistry* kernels) {
  kernels->Register<internal::IdentityNOp>(KernelDef("IdentityN", kDeviceTypeCpu));
  for (const char* op : {"PartitionedCall", "StatefulPartitionedCall"}) {
    kernels->Register<PartitionedCallOp>(KernelDef(op, kDeviceTypeCpu));
  }
}

}  // namespace sluice
