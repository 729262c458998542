// Fill, ZerosLike and OnesLike, written once for every device (the pattern
// of ops/training/training_kernels.h): the shell checks the shape and allocates or
// forwards the output; a device's `Impl` writes the elements:
//
//   Fill(ctx, value, out)        every element = the scalar `value` (in the
//                                device's memory, like out)
//   Zero(ctx, out)               every byte 0 (0 in every dtype served)
//   FillBits(ctx, bits, out)     every element = the low bytes of `bits`
//
// Each is called with a non-empty output.
#ifndef SLUICE_OPS_ARRAY_FILL_KERNELS_H_
#define SLUICE_OPS_ARRAY_FILL_KERNELS_H_

#include <cstdint>
#include <cstring>

#include "base/status_macros.h"
#include "graph/types.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "runtime/kernel.h"

namespace sluice {

// The bytes of the value 1 in `dtype`, little-endian in a uint64_t.
inline uint64_t OneBits(DataType dtype) {
  uint64_t bits = 0;
  auto put = [&bits](auto v) { std::memcpy(&bits, &v, sizeof(v)); };
  switch (dtype) {
    case DT_FLOAT:
      put(1.0f);
      break;
    case DT_DOUBLE:
      put(1.0);
      break;
    case DT_HALF:
      put(Half::FromFloat(1.0f));
      break;
    case DT_BFLOAT16:
      put(BFloat16::FromFloat(1.0f));
      break;
    case DT_BOOL:
      put(true);
      break;
    default:  // the integers: 1 in the low byte
      bits = 1;
      break;
  }
  return bits;
}

// Fill(dims, value).
template <typename Impl>
class FillOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(1);
    ASSIGN_OR_RETURN(TensorShape shape, internal::FillShape(ctx->input(0), value));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Impl::Fill(ctx, value, out);
  }
};

template <typename Impl>
class ZerosLikeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->forward_input_or_allocate_output(0, 0, ctx->input(0).shape()));
    if (out->TotalBytes() == 0) return absl::OkStatus();
    return Impl::Zero(ctx, out);
  }
};

template <typename Impl>
class OnesLikeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Impl::FillBits(ctx, OneBits(x.dtype()), out);
  }
};

}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_FILL_KERNELS_H_
