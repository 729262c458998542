// CPU kernels of Conv3D, Conv3DBackpropInputV2 and Conv3DBackpropFilterV2,
// for float and double on NDHWC data: direct loops over output positions
// and in-input filter taps (internal::ForEachTap3D), each tap a small
// [in_depth] x [out_depth] matrix-vector product.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/nn/internal/window3d.h"
#include "ops/nn/nn3d_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::Window3D;
using internal::Window3DAttrs;

absl::StatusOr<TensorShape> SizesOf(const Tensor& t, const char* what) {
  if ((t.dtype() != DT_INT32 && t.dtype() != DT_INT64) || t.dims() != 1 || t.NumElements() != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be an int vector of 5 sizes, got ", t.shape().DebugString()));
  }
  TensorShape shape;
  for (int i = 0; i < 5; ++i) {
    const int64_t d = t.dtype() == DT_INT32 ? t.flat<int32_t>()[i] : t.flat<int64_t>()[i];
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat(what, " has a negative size ", d));
    shape.AddDim(d);
  }
  return shape;
}

enum class Kind { kForward, kBackpropInput, kBackpropFilter };

template <typename T>
class Conv3DKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, internal::ReadWindow3DAttrs(ctx.node(), false));
    const std::string& op = ctx.node().op();
    kind_ = op == "Conv3D"                  ? Kind::kForward
            : op == "Conv3DBackpropInputV2" ? Kind::kBackpropInput
                                            : Kind::kBackpropFilter;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    TensorShape in_shape = ctx->input(0).shape(), f_shape = ctx->input(1).shape();
    if (kind_ == Kind::kBackpropInput) {
      ASSIGN_OR_RETURN(in_shape, SizesOf(ctx->input(0), "input_sizes"));
    }
    if (kind_ == Kind::kBackpropFilter) {
      ASSIGN_OR_RETURN(f_shape, SizesOf(ctx->input(1), "filter_sizes"));
    }
    if (in_shape.rank() != 5 || f_shape.rank() != 5 || in_shape.dim(4) != f_shape.dim(3)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input and filter must be 5-D with input depth equal to the filter's in_depth, got ",
          in_shape.DebugString(), " and ", f_shape.DebugString()));
    }
    const std::array<int64_t, 3> window = {f_shape.dim(0), f_shape.dim(1), f_shape.dim(2)};
    ASSIGN_OR_RETURN(Window3D w, internal::ComputeWindow3D(attrs_, in_shape, window));
    const int64_t batch = in_shape.dim(0), cin = in_shape.dim(4), cout = f_shape.dim(4);
    const TensorShape out_shape({batch, w.out[0], w.out[1], w.out[2], cout});
    if (kind_ != Kind::kForward && ctx->input(2).shape() != out_shape) {
      return absl::InvalidArgumentError(absl::StrCat("out_backprop must have shape ",
                                                     out_shape.DebugString(), ", got ",
                                                     ctx->input(2).shape().DebugString()));
    }
    const TensorShape& result = kind_ == Kind::kForward         ? out_shape
                                : kind_ == Kind::kBackpropInput ? in_shape
                                                                : f_shape;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, result));
    T* o = out->data<T>();
    std::fill(o, o + result.num_elements(), T(0));
    const int64_t tap_size = cin * cout;
    if (kind_ == Kind::kForward) {
      const T* in = ctx->input(0).data<T>();
      const T* f = ctx->input(1).data<T>();
      internal::ForEachTap3D(w, batch, [&](int64_t po, int64_t pi, int64_t tap) {
        const T* x = in + pi * cin;
        const T* k = f + tap * tap_size;
        T* y = o + po * cout;
        for (int64_t ci = 0; ci < cin; ++ci) {
          for (int64_t co = 0; co < cout; ++co) y[co] += x[ci] * k[ci * cout + co];
        }
      });
    } else if (kind_ == Kind::kBackpropInput) {
      const T* f = ctx->input(1).data<T>();
      const T* dy = ctx->input(2).data<T>();
      internal::ForEachTap3D(w, batch, [&](int64_t po, int64_t pi, int64_t tap) {
        const T* g = dy + po * cout;
        const T* k = f + tap * tap_size;
        T* dx = o + pi * cin;
        for (int64_t ci = 0; ci < cin; ++ci) {
          T sum = 0;
          for (int64_t co = 0; co < cout; ++co) sum += g[co] * k[ci * cout + co];
          dx[ci] += sum;
        }
      });
    } else {
      const T* in = ctx->input(0).data<T>();
      const T* dy = ctx->input(2).data<T>();
      internal::ForEachTap3D(w, batch, [&](int64_t po, int64_t pi, int64_t tap) {
        const T* x = in + pi * cin;
        const T* g = dy + po * cout;
        T* dk = o + tap * tap_size;
        for (int64_t ci = 0; ci < cin; ++ci) {
          for (int64_t co = 0; co < cout; ++co) dk[ci * cout + co] += x[ci] * g[co];
        }
      });
    }
    return absl::OkStatus();
  }

 private:
  Window3DAttrs attrs_;
  Kind kind_ = Kind::kForward;
};

}  // namespace

namespace internal {

void RegisterConv3DKernels(KernelRegistry* k) {
  for (const char* op : {"Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"}) {
    k->Register<Conv3DKernel<float>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
    k->Register<Conv3DKernel<double>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
  }
}

}  // namespace internal
}  // namespace sluice
