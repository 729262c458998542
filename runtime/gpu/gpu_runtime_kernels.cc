#include "runtime/gpu/gpu_runtime_kernels.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "runtime/frame_ops.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/rendezvous.h"
#include "runtime/sendrecv_ops.h"
#include "runtime/transfer_attrs.h"

namespace sluice {
namespace {

constexpr absl::string_view kDeviceSeparator = "/device:";

// "/job:w/replica:0/task:1/device:GPU:0" -> process "/job:w/replica:0/task:1"
// and type "GPU"; false when the name has no device part.
bool SplitDeviceName(absl::string_view name, absl::string_view* process,
                     absl::string_view* type) {
  const size_t at = name.rfind(kDeviceSeparator);
  if (at == absl::string_view::npos) return false;
  *process = name.substr(0, at);
  absl::string_view device = name.substr(at + kDeviceSeparator.size());
  *type = device.substr(0, device.find(':'));
  return true;
}

// True when `recv_device` is a GPU of the process `send_device` belongs to.
bool IsGpuOfSameProcess(absl::string_view send_device, absl::string_view recv_device) {
  absl::string_view send_process, send_type, recv_process, recv_type;
  if (!SplitDeviceName(send_device, &send_process, &send_type) ||
      !SplitDeviceName(recv_device, &recv_process, &recv_type)) {
    return false;
  }
  return send_process == recv_process && absl::EqualsIgnoreCase(recv_type, kDeviceTypeGpu);
}

// The kernel's device as a GpuDevice; Internal naming the node otherwise.
absl::StatusOr<GpuDevice*> GpuOfContext(const OpKernelContext& ctx) {
  if (ctx.rendezvous() == nullptr) {
    return absl::InternalError(
        absl::StrCat(ctx.node().op(), " ran in a step without a rendezvous"));
  }
  auto* gpu = dynamic_cast<GpuDevice*>(ctx.device());
  if (gpu == nullptr) {
    return absl::InternalError(absl::StrCat(ctx.node().op(), "'s GPU kernel ran on ",
                                            ctx.device()->name(), ", not a CUDA GPU"));
  }
  return gpu;
}

class GpuSendOp : public AsyncOpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(attrs_.Init(ctx));
    to_local_gpu_ = IsGpuOfSameProcess(attrs_.send_device(), attrs_.recv_device());
    return absl::OkStatus();
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<GpuDevice*> gpu = GpuOfContext(*ctx);
    if (!gpu.ok()) {
      done(gpu.status());
      return;
    }
    Rendezvous* rendezvous = ctx->rendezvous();
    std::string key = attrs_.Key(*ctx);
    ctx->set_trace_flow(key, /*is_send=*/true);
    if (ctx->is_input_dead()) {  // deadness crosses as an uninitialized tensor
      done(rendezvous->Send(key, Tensor()));
      return;
    }
    const Tensor& t = ctx->input(0);
    if (!t.on_device()) {  // host memory (DT_INT32) is complete already
      done(rendezvous->Send(key, t));
      return;
    }
    if (to_local_gpu_) {
      // The receiving GPU copies from this one's memory once it is written.
      (*gpu)->ThenExecute([rendezvous, key = std::move(key), t, done](absl::Status s) {
        if (s.ok()) s = rendezvous->Send(key, t);
        done(s);
      });
      return;
    }
    (*gpu)->CopyToHostAsync(
        t, [rendezvous, key = std::move(key), done](absl::StatusOr<Tensor> host) {
          absl::Status s = host.status();
          if (s.ok()) s = rendezvous->Send(key, *host);
          done(s);
        });
  }
  bool IsExpensive() const override { return false; }

 private:
  TransferAttrs attrs_;
  bool to_local_gpu_ = false;
};

class GpuRecvOp : public AsyncOpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(attrs_.Init(ctx));
    host_memory_ = BaseType(ctx.output_type(0)) == DT_INT32;
    return absl::OkStatus();
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<GpuDevice*> status_or_gpu = GpuOfContext(*ctx);
    if (!status_or_gpu.ok()) {
      done(status_or_gpu.status());
      return;
    }
    GpuDevice* gpu = *status_or_gpu;
    std::string key = attrs_.Key(*ctx);
    ctx->set_trace_flow(key, /*is_send=*/false);
    const bool host_memory = host_memory_;
    ctx->rendezvous()->RecvAsync(key, [ctx, gpu, host_memory, done](absl::Status s, Tensor t) {
      if (!s.ok()) {
        done(s);
        return;
      }
      if (IsDeadValue(t)) {
        ctx->set_is_output_dead();
        done(absl::OkStatus());
        return;
      }
      const bool here = host_memory ? !t.on_device() : gpu->HoldsInItsMemory(t);
      if (here) {
        ctx->set_output(0, std::move(t));
        done(absl::OkStatus());
        return;
      }
      // Copy on this device's pool, not on the sender's thread.
      gpu->thread_pool()->Schedule([ctx, gpu, host_memory, done, t = std::move(t)] {
        // CopyFromHost copies another GPU's tensor from the peer.
        absl::StatusOr<Tensor> moved = host_memory ? gpu->CopyToHost(t) : gpu->CopyFromHost(t);
        if (!moved.ok()) {
          done(moved.status());
          return;
        }
        ctx->set_output(0, *std::move(moved));
        done(absl::OkStatus());
      });
    });
  }
  bool IsExpensive() const override { return false; }

 private:
  TransferAttrs attrs_;
  bool host_memory_ = false;
};

}  // namespace

void RegisterGpuRuntimeKernels(KernelRegistry* kernels) {
  const std::vector<DataType> in_device_memory = {DT_FLOAT, DT_DOUBLE, DT_HALF,  DT_BFLOAT16,
                                                  DT_INT64, DT_INT16,  DT_UINT16, DT_INT8,
                                                  DT_UINT8, DT_BOOL};
  kernels->Register<GpuSendOp>(
      KernelDef(kSendOp, kDeviceTypeGpu).TypeConstraint("T", in_device_memory));
  kernels->Register<GpuSendOp>(
      KernelDef(kSendOp, kDeviceTypeGpu).TypeConstraint("T", DT_INT32).HostMemory("tensor"));
  kernels->Register<GpuRecvOp>(
      KernelDef(kRecvOp, kDeviceTypeGpu).TypeConstraint("T", in_device_memory));
  kernels->Register<GpuRecvOp>(
      KernelDef(kRecvOp, kDeviceTypeGpu).TypeConstraint("T", DT_INT32).HostMemory("tensor"));
  // Fed and fetched values of the types a GPU moves; a string stays on a CPU.
  std::vector<DataType> frame_types = in_device_memory;
  frame_types.push_back(DT_INT32);
  RegisterHostMemoryFrameKernels(kernels, kDeviceTypeGpu, frame_types);
}

}  // namespace sluice
