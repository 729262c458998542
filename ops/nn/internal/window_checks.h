// The argument checks the kernels of the 2-D window ops (Conv2D, its two
// backprops, MaxPool, MaxPoolGrad) share, on the CPU and the GPU: ranks,
// the sizes input of a backprop, the geometry of a convolution or pooling
// over given shapes, and out_backprop against the forward output.
//
//   class GpuConv2DOp : public internal::WindowOpKernel</*kPool=*/false, kDeviceTypeGpu> {
//     absl::Status Compute(OpKernelContext* ctx) override {
//       ASSIGN_OR_RETURN(Conv2DGeometry g, CheckConv2DInputs(attrs_, ctx->input(0),
//                                                            ctx->input(1)));
//
// Errors: InvalidArgument naming the op and the shapes; Unimplemented for
// data_format NCHW (NHWC only). Only shapes are read, except the sizes
// tensor (host memory). Thread-safety: pure functions. Internal to ops/.
#ifndef SLUICE_OPS_NN_INTERNAL_WINDOW_CHECKS_H_
#define SLUICE_OPS_NN_INTERNAL_WINDOW_CHECKS_H_

#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ops/nn/internal/window_geometry.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// The window attrs of a kernel's node (pool: ksize too); Unimplemented
// naming `device` ("CPU", "GPU") for NCHW.
absl::StatusOr<WindowAttrs> ReadKernelWindowAttrs(const OpKernelConstruction& ctx, bool pool,
                                                  absl::string_view device);

// Base of the window ops' kernels on device type kDevice: reads and checks
// the window attrs once, at Init.
template <bool kPool, const char* kDevice>
class WindowOpKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    absl::StatusOr<WindowAttrs> attrs = ReadKernelWindowAttrs(ctx, kPool, kDevice);
    if (!attrs.ok()) return attrs.status();
    attrs_ = *std::move(attrs);
    return absl::OkStatus();
  }

 protected:
  WindowAttrs attrs_;
};

absl::Status CheckRank4(absl::string_view op, absl::string_view what, const Tensor& t);

// A 4-element int32 sizes tensor (input_sizes, filter_sizes) as a shape.
absl::StatusOr<TensorShape> ReadSizes(absl::string_view op, const Tensor& t);

// Conv2D over NHWC `input` with an HWIO `filter`; checks the depths agree.
absl::StatusOr<Conv2DGeometry> ConvGeometry(absl::string_view op, const WindowAttrs& attrs,
                                            const TensorShape& input, const TensorShape& filter);

// out_backprop has the forward output's shape [batch, out_rows, out_cols, out_depth].
absl::Status CheckOutBackprop(absl::string_view op, const Conv2DGeometry& g,
                              const Tensor& out_backprop);

// Pooling with the attrs' ksize over NHWC `input` (a tensor: rank 4 checked).
absl::StatusOr<Conv2DGeometry> PoolGeometryOfShape(absl::string_view op, const WindowAttrs& attrs,
                                                   const TensorShape& input);
absl::StatusOr<Conv2DGeometry> PoolGeometry(absl::string_view op, const WindowAttrs& attrs,
                                            const Tensor& input);

// Each op's inputs checked, with the op's geometry.
absl::StatusOr<Conv2DGeometry> CheckConv2DInputs(const WindowAttrs& attrs, const Tensor& input,
                                                 const Tensor& filter);
// A backprop's output shape (its sizes input) and geometry.
struct ConvBackpropGeometry {
  TensorShape shape;
  Conv2DGeometry geometry;
};
absl::StatusOr<ConvBackpropGeometry> CheckConv2DBackpropInputInputs(const WindowAttrs& attrs,
                                                                    const Tensor& input_sizes,
                                                                    const Tensor& filter,
                                                                    const Tensor& out_backprop);
absl::StatusOr<ConvBackpropGeometry> CheckConv2DBackpropFilterInputs(const WindowAttrs& attrs,
                                                                     const Tensor& input,
                                                                     const Tensor& filter_sizes,
                                                                     const Tensor& out_backprop);
// orig_output and grad have the pooled shape of input.
absl::StatusOr<Conv2DGeometry> CheckMaxPoolGradInputs(const WindowAttrs& attrs,
                                                      const Tensor& input,
                                                      const Tensor& orig_output,
                                                      const Tensor& grad);

// AvgPoolGrad: orig_input_shape (4 int32 sizes) and grad of its pooled
// shape; the input gradient's shape and the geometry.
absl::StatusOr<ConvBackpropGeometry> CheckAvgPoolGradInputs(const WindowAttrs& attrs,
                                                            const Tensor& orig_input_shape,
                                                            const Tensor& grad);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_WINDOW_CHECKS_H_
