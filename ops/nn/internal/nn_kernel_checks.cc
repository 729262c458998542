// Shape checks of the nn kernels (see nn_kernel_checks.h).
#include "ops/nn/internal/nn_kernel_checks.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace internal {
namespace {

std::string ShapeStr(const Tensor& t) { return t.shape().DebugString(); }

absl::Status CheckFeatures(absl::string_view op, const Tensor& features) {
  if (features.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": features must be 2-D [batch, classes], got shape ", ShapeStr(features)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckReluGradShapes(const Tensor& gradients, const Tensor& features) {
  if (gradients.shape() != features.shape()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReluGrad: gradients and features must have the same shape, got ",
                     ShapeStr(gradients), " and ", ShapeStr(features)));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ReadNchw(const OpKernelConstruction& ctx) {
  absl::StatusOr<std::string> format = ctx.GetAttr<std::string>("data_format");
  if (!format.ok()) return format.status();
  if (*format != "NHWC" && *format != "NCHW") {
    return absl::InvalidArgumentError(absl::StrCat("unknown data_format '", *format, "'"));
  }
  return *format == "NCHW";
}

absl::StatusOr<ChannelView> ViewChannels(absl::string_view op, const Tensor& value, bool nchw) {
  if (value.dims() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": value must be at least 2-D, got shape ", ShapeStr(value)));
  }
  ChannelView v;
  const int c = nchw ? 1 : value.dims() - 1;
  v.channels = value.dim_size(c);
  v.outer = 1;
  for (int i = 0; i < c; ++i) v.outer *= value.dim_size(i);
  v.inner = 1;
  for (int i = c + 1; i < value.dims(); ++i) v.inner *= value.dim_size(i);
  return v;
}

absl::Status CheckBiasShape(const Tensor& value, const Tensor& bias, const ChannelView& v) {
  if (bias.dims() != 1 || bias.dim_size(0) != v.channels) {
    return absl::InvalidArgumentError(
        absl::StrCat("BiasAdd: bias must be a vector of the channel size ", v.channels,
                     " (value shape ", ShapeStr(value), "), got bias shape ", ShapeStr(bias)));
  }
  return absl::OkStatus();
}

absl::Status CheckLogits(absl::string_view op, const Tensor& logits) {
  if (logits.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": logits must have rank >= 1, got shape ", ShapeStr(logits)));
  }
  return absl::OkStatus();
}

absl::Status CheckSoftmaxXentShapes(const Tensor& features, const Tensor& labels) {
  RETURN_IF_ERROR(CheckFeatures("SoftmaxCrossEntropyWithLogits", features));
  if (labels.shape() != features.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SoftmaxCrossEntropyWithLogits: features and labels must have the same shape, got ",
        ShapeStr(features), " and ", ShapeStr(labels)));
  }
  return absl::OkStatus();
}

absl::Status CheckSparseSoftmaxXentShapes(const Tensor& features, const Tensor& labels) {
  RETURN_IF_ERROR(CheckFeatures("SparseSoftmaxCrossEntropyWithLogits", features));
  const int64_t batch = features.dim_size(0);
  if (labels.dims() != 1 || labels.dim_size(0) != batch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SparseSoftmaxCrossEntropyWithLogits: labels must be a vector of the batch size ", batch,
        " (features shape ", ShapeStr(features), "), got labels shape ", ShapeStr(labels)));
  }
  // No label can be valid (TensorFlow refuses it on every device, an empty
  // batch too; a GPU could only give NaN rows, its labels being in device
  // memory).
  if (features.dim_size(1) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("SparseSoftmaxCrossEntropyWithLogits: must have at least one class, got "
                     "features shape ",
                     ShapeStr(features)));
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace sluice
