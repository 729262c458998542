// The host-side half of the nn kernels (Relu, BiasAdd, softmax, the
// cross-entropies), shared by the CPU kernels (nn_kernels.cc) and the GPU
// kernels (ops/gpu/nn_kernels.cc): attr parsing, shape checks with the error
// texts both devices report, and BiasAdd's [outer, channels, inner] view.
//
//   ASSIGN_OR_RETURN(bool nchw, internal::ReadNchw(ctx));                // Init
//   ASSIGN_OR_RETURN(internal::ChannelView v,
//                    internal::ViewChannels("BiasAdd", value, nchw));    // Compute
//   RETURN_IF_ERROR(internal::CheckBiasShape(value, bias, v));
//
// Errors: InvalidArgument naming the op and the shapes. Only shapes are
// read, so device tensors are fine. Thread-safety: pure functions. Internal
// to ops/.
#ifndef SLUICE_OPS_NN_INTERNAL_NN_KERNEL_CHECKS_H_
#define SLUICE_OPS_NN_INTERNAL_NN_KERNEL_CHECKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/kernel.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// ReluGrad: gradients and features of one shape.
absl::Status CheckReluGradShapes(const Tensor& gradients, const Tensor& features);

// The data_format attr of BiasAdd / BiasAddGrad: true for NCHW, false for
// NHWC, InvalidArgument otherwise.
absl::StatusOr<bool> ReadNchw(const OpKernelConstruction& ctx);

// value viewed as [outer, channels, inner]: NHWC has inner 1, NCHW outer = batch.
struct ChannelView {
  int64_t outer = 0, channels = 0, inner = 0;
};
// InvalidArgument naming `op` unless value is at least 2-D.
absl::StatusOr<ChannelView> ViewChannels(absl::string_view op, const Tensor& value, bool nchw);
// BiasAdd: bias is a vector of v.channels.
absl::Status CheckBiasShape(const Tensor& value, const Tensor& bias, const ChannelView& v);

// Softmax / LogSoftmax (`op`): logits of rank >= 1.
absl::Status CheckLogits(absl::string_view op, const Tensor& logits);

// SoftmaxCrossEntropyWithLogits: features 2-D [batch, classes], labels of
// the same shape.
absl::Status CheckSoftmaxXentShapes(const Tensor& features, const Tensor& labels);
// SparseSoftmaxCrossEntropyWithLogits: features 2-D, labels a vector of the
// batch size (their values are the caller's to check).
absl::Status CheckSparseSoftmaxXentShapes(const Tensor& features, const Tensor& labels);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_NN_KERNEL_CHECKS_H_
