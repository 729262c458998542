// Const written once for every device: the value is parsed from the `value`
// attr at Init, and every step outputs that one tensor. The kernel keeps its
// own reference, so no consumer ever sees a reference count of one and none
// writes the value in place. What a device chooses is where the value lives:
//
//   kDevice    parsed with the device's allocator at Init (a CPU)
//   kHost      parsed into plain host memory (a HostMemory output on a GPU)
//   kUploaded  parsed into host memory at Init (no device work there) and
//              copied to the device by the first Compute, which enqueues the
//              copy ahead of the consumers' kernels
#ifndef SLUICE_OPS_ARRAY_CONST_KERNEL_H_
#define SLUICE_OPS_ARRAY_CONST_KERNEL_H_

#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "graph/proto/tensor.pb.h"
#include "runtime/device.h"
#include "runtime/kernel.h"

namespace sluice {

enum class ConstMemory { kDevice, kHost, kUploaded };

template <ConstMemory kMemory>
class ConstOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(::tensorflow::TensorProto proto,
                     ctx.GetAttr<::tensorflow::TensorProto>("value"));
    Allocator* allocator = nullptr;  // plain host memory
    if (kMemory == ConstMemory::kDevice && ctx.device() != nullptr) {
      allocator = ctx.device()->allocator();
    }
    ASSIGN_OR_RETURN(Tensor value, Tensor::FromProto(proto, allocator));
    if constexpr (kMemory == ConstMemory::kUploaded) {
      absl::MutexLock lock(&mu_);
      pending_ = std::move(value);
    } else {
      value_ = std::move(value);
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    if constexpr (kMemory == ConstMemory::kUploaded) {
      Tensor value;
      {
        absl::MutexLock lock(&mu_);
        if (!uploaded_.IsInitialized()) {
          ASSIGN_OR_RETURN(uploaded_, ctx->device()->CopyFromHost(pending_));
          pending_ = Tensor();  // the copy no longer needs it
        }
        value = uploaded_;
      }
      ctx->set_output(0, std::move(value));
    } else {
      ctx->set_output(0, value_);
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  Tensor value_;  // kDevice and kHost: set by Init, read-only afterwards
  absl::Mutex mu_;
  Tensor pending_ ABSL_GUARDED_BY(mu_);   // kUploaded: the host value until copied
  Tensor uploaded_ ABSL_GUARDED_BY(mu_);  // kUploaded: the device's copy
};

}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_CONST_KERNEL_H_
