#include "runtime/frame_ops.h"

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

class ArgOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(index_, ctx.GetAttr<int64_t>("index"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    CallFrame* frame = ctx->call_frame();
    if (frame == nullptr || index_ >= static_cast<int64_t>(frame->args.size())) {
      return absl::InternalError(absl::StrCat("no argument ", index_, " in the call frame"));
    }
    ctx->set_output(0, frame->args[index_]);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  int64_t index_ = 0;
};

class RetvalOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(index_, ctx.GetAttr<int64_t>("index"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    CallFrame* frame = ctx->call_frame();
    if (frame == nullptr || index_ >= static_cast<int64_t>(frame->retvals.size())) {
      return absl::InternalError(absl::StrCat("no return value ", index_, " in the call frame"));
    }
    frame->retvals[index_] = ctx->input(0);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  int64_t index_ = 0;
};

}  // namespace

absl::Status RegisterFrameOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder(kArgOp)
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr("index: int >= 0")
                                    .Attr("shape: shape = unknown")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      ASSIGN_OR_RETURN(TensorShape s,
                                                       c->GetAttr<TensorShape>("shape"));
                                      c->set_output(0, s);
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder(kRetvalOp)
                                    .Input("input: T")
                                    .Attr("T: type")
                                    .Attr("index: int >= 0")
                                    .SetIsStateful()));
  RETURN_IF_ERROR(ops->SetNoGradient(kArgOp));
  return ops->SetNoGradient(kRetvalOp);
}

void RegisterFrameKernels(KernelRegistry* kernels) {
  kernels->Register<ArgOp>(KernelDef(kArgOp, kDeviceTypeCpu));
  kernels->Register<RetvalOp>(KernelDef(kRetvalOp, kDeviceTypeCpu));
}

void RegisterHostMemoryFrameKernels(KernelRegistry* kernels, const std::string& device_type,
                                    const std::vector<DataType>& types) {
  kernels->Register<ArgOp>(
      KernelDef(kArgOp, device_type).TypeConstraint("T", types).HostMemory("output"));
  kernels->Register<RetvalOp>(
      KernelDef(kRetvalOp, device_type).TypeConstraint("T", types).HostMemory("input"));
}

}  // namespace sluice
