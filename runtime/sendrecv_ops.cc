#include "runtime/sendrecv_ops.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"
#include "runtime/rendezvous.h"

namespace sluice {
namespace {

// What both kernels read from their attrs: the pieces of the rendezvous key
// other than the step.
class TransferAttrs {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) {
    ASSIGN_OR_RETURN(tensor_name_, ctx.GetAttr<std::string>("tensor_name"));
    ASSIGN_OR_RETURN(send_device_, ctx.GetAttr<std::string>("send_device"));
    ASSIGN_OR_RETURN(recv_device_, ctx.GetAttr<std::string>("recv_device"));
    ASSIGN_OR_RETURN(int64_t incarnation, ctx.GetAttr<int64_t>("send_device_incarnation"));
    incarnation_ = static_cast<uint64_t>(incarnation);
    return absl::OkStatus();
  }
  std::string Key(int64_t step_id) const {
    return Rendezvous::CreateKey(step_id, send_device_, incarnation_, recv_device_, tensor_name_);
  }

 private:
  std::string tensor_name_;
  std::string send_device_;
  std::string recv_device_;
  uint64_t incarnation_ = 0;
};

absl::Status NoRendezvous(const OpKernelContext& ctx) {
  return absl::InternalError(absl::StrCat(ctx.node().op(), " ran in a step without a rendezvous"));
}

class SendOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return attrs_.Init(ctx); }
  absl::Status Compute(OpKernelContext* ctx) override {
    if (ctx->rendezvous() == nullptr) return NoRendezvous(*ctx);
    std::string key = attrs_.Key(ctx->step_id());
    RETURN_IF_ERROR(ctx->rendezvous()->Send(key, ctx->input(0)));
    ctx->set_trace_flow(std::move(key), /*is_send=*/true);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  TransferAttrs attrs_;
};

class RecvOp : public AsyncOpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return attrs_.Init(ctx); }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    if (ctx->rendezvous() == nullptr) {
      done(NoRendezvous(*ctx));
      return;
    }
    std::string key = attrs_.Key(ctx->step_id());
    ctx->set_trace_flow(key, /*is_send=*/false);
    ctx->rendezvous()->RecvAsync(key, [ctx, done = std::move(done)](absl::Status s, Tensor t) {
      if (s.ok()) ctx->set_output(0, std::move(t));
      done(std::move(s));
    });
  }
  bool IsExpensive() const override { return false; }

 private:
  TransferAttrs attrs_;
};

}  // namespace

absl::Status RegisterSendRecvOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder(kSendOp)
                                    .Input("tensor: T")
                                    .Attr("T: type")
                                    .Attr("tensor_name: string")
                                    .Attr("send_device: string")
                                    .Attr("send_device_incarnation: int")
                                    .Attr("recv_device: string")
                                    .Attr("client_terminated: bool = false")
                                    .SetIsStateful()));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder(kRecvOp)
                                    .Output("tensor: T")
                                    .Attr("T: type")
                                    .Attr("tensor_name: string")
                                    .Attr("send_device: string")
                                    .Attr("send_device_incarnation: int")
                                    .Attr("recv_device: string")
                                    .Attr("client_terminated: bool = false")
                                    .Attr("shape: shape = unknown")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      ASSIGN_OR_RETURN(TensorShape s,
                                                       c->GetAttr<TensorShape>("shape"));
                                      c->set_output(0, s);
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->SetNoGradient(kSendOp));
  return ops->SetNoGradient(kRecvOp);
}

void RegisterSendRecvKernels(KernelRegistry* kernels) {
  kernels->Register<SendOp>(KernelDef(kSendOp, kDeviceTypeCpu));
  kernels->Register<RecvOp>(KernelDef(kRecvOp, kDeviceTypeCpu));
}

}  // namespace sluice
