// CPU kernels of DepthwiseConv2dNative and its two backprops, for float and
// double on NHWC data: direct loops over output pixels and filter taps
// (each output channel reads one input channel, so there is no gemm to
// hand the work to). The geometry is Conv2D's (internal::Conv2DGeometry).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/nn/depthwise_conv_ops.h"
#include "ops/nn/internal/window_geometry.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::Conv2DGeometry;
using internal::WindowAttrs;

// Calls fn(out_offset, in_offset, filter_offset) for every output pixel and
// every filter tap inside the input; offsets are of channel 0 (out and
// filter offsets step by in_depth * multiplier per pixel / tap).
template <typename Fn>
void ForEachTap(const Conv2DGeometry& g, int64_t mult, Fn fn) {
  const int64_t depth = g.in_depth, out_depth = depth * mult;
  int64_t out_offset = 0;
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t oh = 0; oh < g.out_rows; ++oh) {
      for (int64_t ow = 0; ow < g.out_cols; ++ow, out_offset += out_depth) {
        for (int64_t fr = 0; fr < g.filter_rows; ++fr) {
          const int64_t ih = oh * g.stride_rows - g.pad_top + fr * g.dilation_rows;
          if (ih < 0 || ih >= g.in_rows) continue;
          for (int64_t fc = 0; fc < g.filter_cols; ++fc) {
            const int64_t iw = ow * g.stride_cols - g.pad_left + fc * g.dilation_cols;
            if (iw < 0 || iw >= g.in_cols) continue;
            fn(out_offset, ((b * g.in_rows + ih) * g.in_cols + iw) * depth,
               (fr * g.filter_cols + fc) * out_depth);
          }
        }
      }
    }
  }
}

absl::StatusOr<std::vector<int64_t>> Sizes(const Tensor& t, const char* what) {
  if (t.dtype() != DT_INT32 || t.dims() != 1 || t.NumElements() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be an int32 vector of 4 sizes, got ", t.shape().DebugString()));
  }
  std::vector<int64_t> v;
  for (int32_t d : t.flat<int32_t>()) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat(what, " has a negative size ", d));
    v.push_back(d);
  }
  return v;
}

// One kernel shell for the three ops: reads the attrs, works out the
// shapes of input, filter and output, checks them, and runs `Run`.
template <typename T>
class DepthwiseKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, internal::ReadConvAttrs(ctx.node().attrs()));
    if (attrs_.nchw) {
      return absl::UnimplementedError(
          absl::StrCat(ctx.node().op(), " on CPU supports only data_format NHWC"));
    }
    if (attrs_.strides[1] != attrs_.strides[2]) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx.node().op(), ": strides must be equal along rows and columns"));
    }
    const std::string& op = ctx.node().op();
    kind_ = op == "DepthwiseConv2dNative" ? 0 : op == "DepthwiseConv2dNativeBackpropInput" ? 1 : 2;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    TensorShape in_shape, f_shape;
    if (kind_ == 1) {
      ASSIGN_OR_RETURN(std::vector<int64_t> s, Sizes(ctx->input(0), "input_sizes"));
      in_shape = TensorShape(absl::MakeConstSpan(s));
    } else {
      in_shape = ctx->input(0).shape();
    }
    if (kind_ == 2) {
      ASSIGN_OR_RETURN(std::vector<int64_t> s, Sizes(ctx->input(1), "filter_sizes"));
      f_shape = TensorShape(absl::MakeConstSpan(s));
    } else {
      f_shape = ctx->input(1).shape();
    }
    if (in_shape.rank() != 4 || f_shape.rank() != 4) {
      return absl::InvalidArgumentError(absl::StrCat("input and filter must be 4-D, got ",
                                                     in_shape.DebugString(), " and ",
                                                     f_shape.DebugString()));
    }
    if (in_shape.dim(3) != f_shape.dim(2)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input depth ", in_shape.dim(3), " must equal the filter's in_depth ",
                       f_shape.dim(2), " (input ", in_shape.DebugString(), ", filter ",
                       f_shape.DebugString(), ")"));
    }
    const int64_t mult = f_shape.dim(3);
    ASSIGN_OR_RETURN(Conv2DGeometry g,
                     internal::ComputeConv2DGeometry(attrs_, in_shape, f_shape.dim(0),
                                                     f_shape.dim(1), in_shape.dim(3) * mult));
    const TensorShape out_shape({g.batch, g.out_rows, g.out_cols, g.in_depth * mult});
    if (kind_ != 0 && ctx->input(2).shape() != out_shape) {
      return absl::InvalidArgumentError(
          absl::StrCat("out_backprop must have shape ", out_shape.DebugString(), ", got ",
                       ctx->input(2).shape().DebugString()));
    }
    const TensorShape& result = kind_ == 0 ? out_shape : kind_ == 1 ? in_shape : f_shape;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, result));
    T* o = out->data<T>();
    std::fill(o, o + result.num_elements(), T(0));
    const int64_t depth = g.in_depth;
    if (kind_ == 0) {
      const T* in = ctx->input(0).data<T>();
      const T* f = ctx->input(1).data<T>();
      ForEachTap(g, mult, [&](int64_t po, int64_t pi, int64_t pf) {
        for (int64_t c = 0; c < depth; ++c) {
          for (int64_t m = 0; m < mult; ++m) o[po + c * mult + m] += in[pi + c] * f[pf + c * mult + m];
        }
      });
    } else if (kind_ == 1) {
      const T* f = ctx->input(1).data<T>();
      const T* dy = ctx->input(2).data<T>();
      ForEachTap(g, mult, [&](int64_t po, int64_t pi, int64_t pf) {
        for (int64_t c = 0; c < depth; ++c) {
          T sum = 0;
          for (int64_t m = 0; m < mult; ++m) sum += dy[po + c * mult + m] * f[pf + c * mult + m];
          o[pi + c] += sum;
        }
      });
    } else {
      const T* in = ctx->input(0).data<T>();
      const T* dy = ctx->input(2).data<T>();
      ForEachTap(g, mult, [&](int64_t po, int64_t pi, int64_t pf) {
        for (int64_t c = 0; c < depth; ++c) {
          for (int64_t m = 0; m < mult; ++m) o[pf + c * mult + m] += in[pi + c] * dy[po + c * mult + m];
        }
      });
    }
    return absl::OkStatus();
  }

 private:
  WindowAttrs attrs_;
  int kind_ = 0;  // 0 forward, 1 backprop input, 2 backprop filter
};

}  // namespace

void RegisterDepthwiseConvKernels(KernelRegistry* k) {
  for (const char* op : {"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                         "DepthwiseConv2dNativeBackpropFilter"}) {
    k->Register<DepthwiseKernel<float>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
    k->Register<DepthwiseKernel<double>>(
        KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
  }
}

}  // namespace sluice
