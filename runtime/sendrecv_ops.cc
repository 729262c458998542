#include "runtime/sendrecv_ops.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"
#include "runtime/rendezvous.h"
#include "runtime/transfer_attrs.h"

namespace sluice {
namespace {

absl::Status NoRendezvous(const OpKernelContext& ctx) {
  return absl::InternalError(absl::StrCat(ctx.node().op(), " ran in a step without a rendezvous"));
}

class SendOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return attrs_.Init(ctx); }
  absl::Status Compute(OpKernelContext* ctx) override {
    if (ctx->rendezvous() == nullptr) return NoRendezvous(*ctx);
    std::string key = attrs_.Key(*ctx);
    // A dead input is sent on as dead (an uninitialized tensor).
    RETURN_IF_ERROR(ctx->rendezvous()->Send(key, ctx->is_input_dead() ? Tensor() : ctx->input(0)));
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
    std::string key = attrs_.Key(*ctx);
    ctx->set_trace_flow(key, /*is_send=*/false);
    ctx->rendezvous()->RecvAsync(key, [ctx, done = std::move(done)](absl::Status s, Tensor t) {
      if (s.ok() && IsDeadValue(t)) {
        ctx->set_is_output_dead();
      } else if (s.ok()) {
        ctx->set_output(0, std::move(t));
      }
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
