// Kernels of the array ops that only read shapes and hand buffers through,
// so one class serves every device: Identity (StopGradient, PreventGradient,
// PlaceholderWithDefault), IdentityN, NoOp, Reshape, ExpandDims, Squeeze and
// Shape / Size / Rank. Registered by array_kernels.cc for the CPU and by
// ops/gpu/array_kernels.cc for GPUs (index arguments and Shape's output in
// host memory there).
//
//   kernels->Register<internal::ReshapeOp>(
//       KernelDef("Reshape", kDeviceTypeCpu).TypeConstraint("T", types));
//
// Errors are those of ops/internal/index_tensors.h and ops/internal/array_util.h plus Squeeze's.
// Thread-safety: kernels keep only attrs read at Init.
#ifndef SLUICE_OPS_ARRAY_INTERNAL_SHAPE_KERNELS_H_
#define SLUICE_OPS_ARRAY_INTERNAL_SHAPE_KERNELS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "runtime/kernel.h"

namespace sluice {
namespace internal {

// Identity, StopGradient, PreventGradient, PlaceholderWithDefault.
class IdentityOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override;
  bool IsExpensive() const override { return false; }
};

// IdentityN: each input handed through as the output of the same index (the
// node an inlined function call leaves behind; ops/functional).
class IdentityNOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) ctx->set_output(i, ctx->input(i));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class NoOpKernel : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override { return absl::OkStatus(); }
  bool IsExpensive() const override { return false; }
};

class ReshapeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override;
  bool IsExpensive() const override { return false; }
};

class ExpandDimsOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override;
  bool IsExpensive() const override { return false; }
};

class SqueezeOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override;
  absl::Status Compute(OpKernelContext* ctx) override;
  bool IsExpensive() const override { return false; }

 private:
  std::vector<int64_t> squeeze_dims_;
};

// Shape, Size, Rank: only the input's shape is read (it may stay in device
// memory); the output is an int32/int64 host tensor.
class ShapeOp : public OpKernel {
 public:
  enum class Kind { kShape, kSize, kRank };
  explicit ShapeOp(Kind kind) : kind_(kind) {}
  absl::Status Compute(OpKernelContext* ctx) override;
  bool IsExpensive() const override { return false; }

 private:
  const Kind kind_;
};

// ShapeN: the shape of each input, as Shape (inputs may stay in device
// memory; the outputs are host tensors).
class ShapeNOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override;
  bool IsExpensive() const override { return false; }
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_INTERNAL_SHAPE_KERNELS_H_
