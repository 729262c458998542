// CPU kernels of MaxPool3D, AvgPool3D, MaxPool3DGrad and AvgPool3DGrad for
// float on NDHWC data (TensorFlow's CPU type), with TensorFlow's CPU rules:
// padding never wins a max and is not counted in an average, and
// MaxPool3DGrad gives a window's gradient to each of its elements within
// 1e-5 of the window's output (tensorflow/core/kernels/pooling_ops_3d.cc).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
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

enum class Kind { kMax, kAvg, kMaxGrad, kAvgGrad };

class Pool3DKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, internal::ReadWindow3DAttrs(ctx.node(), true));
    const std::string& op = ctx.node().op();
    kind_ = op == "MaxPool3D"       ? Kind::kMax
            : op == "AvgPool3D"     ? Kind::kAvg
            : op == "MaxPool3DGrad" ? Kind::kMaxGrad
                                    : Kind::kAvgGrad;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape in_shape, InputShape(ctx));
    if (in_shape.rank() != 5) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 5-D, got ", in_shape.DebugString()));
    }
    const std::array<int64_t, 3> window = {attrs_.ksize[1], attrs_.ksize[2], attrs_.ksize[3]};
    ASSIGN_OR_RETURN(Window3D w, internal::ComputeWindow3D(attrs_, in_shape, window));
    const int64_t batch = in_shape.dim(0), depth = in_shape.dim(4);
    const TensorShape out_shape({batch, w.out[0], w.out[1], w.out[2], depth});
    for (int i = kind_ == Kind::kMaxGrad ? 1 : kind_ == Kind::kAvgGrad ? 1 : 5;
         i < ctx->num_inputs(); ++i) {
      if (ctx->input(i).shape() != out_shape) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", i, " must have the pooled shape ", out_shape.DebugString(), ", got ",
            ctx->input(i).shape().DebugString()));
      }
    }
    const bool forward = kind_ == Kind::kMax || kind_ == Kind::kAvg;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, forward ? out_shape : in_shape));
    float* o = out->data<float>();
    const int64_t n = out->NumElements();
    const float init = kind_ == Kind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
    std::fill(o, o + n, init);
    // Elements of each output position's window inside the input.
    std::vector<int64_t> counts(batch * w.out[0] * w.out[1] * w.out[2], 0);
    internal::ForEachTap3D(w, batch, [&](int64_t po, int64_t, int64_t) { ++counts[po]; });
    switch (kind_) {
      case Kind::kMax: {
        const float* in = ctx->input(0).data<float>();
        internal::ForEachTap3D(w, batch, [&](int64_t po, int64_t pi, int64_t) {
          for (int64_t c = 0; c < depth; ++c) {
            o[po * depth + c] = std::max(o[po * depth + c], in[pi * depth + c]);
          }
        });
        break;
      }
      case Kind::kAvg: {
        const float* in = ctx->input(0).data<float>();
        internal::ForEachTap3D(w, batch, [&](int64_t po, int64_t pi, int64_t) {
          const float scale = 1.0f / counts[po];
          for (int64_t c = 0; c < depth; ++c) o[po * depth + c] += in[pi * depth + c] * scale;
        });
        break;
      }
      case Kind::kMaxGrad: {
        const float* in = ctx->input(0).data<float>();
        const float* y = ctx->input(1).data<float>();
        const float* g = ctx->input(2).data<float>();
        internal::ForEachTap3D(w, batch, [&](int64_t po, int64_t pi, int64_t) {
          for (int64_t c = 0; c < depth; ++c) {
            if (std::abs(in[pi * depth + c] - y[po * depth + c]) < 1e-5f) {
              o[pi * depth + c] += g[po * depth + c];
            }
          }
        });
        break;
      }
      case Kind::kAvgGrad: {
        const float* g = ctx->input(1).data<float>();
        internal::ForEachTap3D(w, batch, [&](int64_t po, int64_t pi, int64_t) {
          const float scale = 1.0f / counts[po];
          for (int64_t c = 0; c < depth; ++c) o[pi * depth + c] += g[po * depth + c] * scale;
        });
        break;
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<TensorShape> InputShape(OpKernelContext* ctx) const {
    if (kind_ != Kind::kAvgGrad) return ctx->input(0).shape();
    const Tensor& t = ctx->input(0);
    if (t.dtype() != DT_INT32 || t.dims() != 1 || t.NumElements() != 5) {
      return absl::InvalidArgumentError(absl::StrCat(
          "orig_input_shape must be an int32 vector of 5 sizes, got ", t.shape().DebugString()));
    }
    TensorShape shape;
    for (int32_t d : t.flat<int32_t>()) {
      if (d < 0) return absl::InvalidArgumentError(absl::StrCat("orig_input_shape has ", d));
      shape.AddDim(d);
    }
    return shape;
  }

  Window3DAttrs attrs_;
  Kind kind_ = Kind::kMax;
};

}  // namespace

namespace internal {

void RegisterPool3DKernels(KernelRegistry* k) {
  for (const char* op : {"MaxPool3D", "AvgPool3D", "AvgPool3DGrad"}) {
    k->Register<Pool3DKernel>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  }
  k->Register<Pool3DKernel>(KernelDef("MaxPool3DGrad", kDeviceTypeCpu)
                                .TypeConstraint("T", DT_FLOAT)
                                .TypeConstraint("TInput", DT_FLOAT));
}

}  // namespace internal
}  // namespace sluice
