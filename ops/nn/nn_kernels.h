// The kernels of Relu, ReluGrad, BiasAdd, BiasAddGrad, Softmax, LogSoftmax
// and the softmax cross-entropies, written once for every device
// (TensorFlow's `FooOp<Device, T>` + functor pattern; ops/training/training_kernels.h
// has the first of them). The shell reads the attrs, checks the shapes (with
// ops/nn/internal/nn_kernel_checks.h's messages) and allocates or forwards the
// outputs; a device supplies the arithmetic as an `Impl` with one static
// function template per op (ops/nn/nn_kernels.cc for the CPU,
// ops/gpu/nn_kernels.cc for CUDA):
//
//   Relu(ctx, x, y, n)               ReluGrad(ctx, g, f, y, n)
//   BiasAdd(ctx, value, bias, out, view)
//   BiasAddGrad(ctx, g, view)        allocates output 0 itself ([channels])
//   Softmax(ctx, x, y, rows, depth, log)
//   SoftmaxXent(ctx, features, labels, loss, backprop, batch, classes)
//   CheckSparseLabels(labels, classes)   the CPU checks; a GPU cannot
//                                        without a sync and returns OK
//   SparseSoftmaxXent(ctx, features, labels, loss, backprop, batch, classes)
//
// and `kLogSoftmaxInPlace`: whether LogSoftmax may write over its input
// (the CPU's uses its output as scratch while it still reads x: false).
// Every Impl function is called with at least one element.
#ifndef SLUICE_OPS_NN_NN_KERNELS_H_
#define SLUICE_OPS_NN_NN_KERNELS_H_

#include <cstdint>

#include "base/status_macros.h"
#include "ops/nn/internal/nn_kernel_checks.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {

template <typename Impl, typename T>
class ReluOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    if (x.NumElements() == 0) return absl::OkStatus();
    return Impl::template Relu<T>(ctx, x.data<T>(), y->data<T>(), x.NumElements());
  }
  bool IsExpensive() const override { return false; }
};

template <typename Impl, typename T>
class ReluGradOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& f = ctx->input(1);
    RETURN_IF_ERROR(internal::CheckReluGradShapes(g, f));
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, g.shape()));
    if (g.NumElements() == 0) return absl::OkStatus();
    return Impl::template ReluGrad<T>(ctx, g.data<T>(), f.data<T>(), y->data<T>(),
                                      g.NumElements());
  }
  bool IsExpensive() const override { return false; }
};

template <typename Impl, typename T>
class BiasAddOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    // BiasAddV1, the first form, has no data_format: always NHWC.
    if (ctx.node().op() == "BiasAddV1") return absl::OkStatus();
    ASSIGN_OR_RETURN(nchw_, internal::ReadNchw(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    ASSIGN_OR_RETURN(internal::ChannelView v, internal::ViewChannels("BiasAdd", value, nchw_));
    RETURN_IF_ERROR(internal::CheckBiasShape(value, bias, v));
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, value.shape()));
    if (value.NumElements() == 0) return absl::OkStatus();
    return Impl::template BiasAdd<T>(ctx, value.data<T>(), bias.data<T>(), out->data<T>(), v);
  }
  bool IsExpensive() const override { return false; }

 private:
  bool nchw_ = false;
};

template <typename Impl, typename T>
class BiasAddGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nchw_, internal::ReadNchw(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    ASSIGN_OR_RETURN(internal::ChannelView v, internal::ViewChannels("BiasAddGrad", g, nchw_));
    return Impl::template BiasAddGrad<T>(ctx, g, v);
  }
  bool IsExpensive() const override { return false; }

 private:
  bool nchw_ = false;
};

// Softmax (kLog false) or LogSoftmax along the last dimension.
template <typename Impl, typename T, bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    RETURN_IF_ERROR(internal::CheckLogits(kLog ? "LogSoftmax" : "Softmax", x));
    Tensor* y = nullptr;
    if (kLog && !Impl::kLogSoftmaxInPlace) {
      ASSIGN_OR_RETURN(y, ctx->allocate_output(0, x.shape()));
    } else {
      ASSIGN_OR_RETURN(y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    }
    const int64_t depth = x.dim_size(x.dims() - 1);
    if (depth == 0 || x.NumElements() == 0) return absl::OkStatus();
    return Impl::template Softmax<T>(ctx, x.data<T>(), y->data<T>(), x.NumElements() / depth,
                                     depth, kLog);
  }
  bool IsExpensive() const override { return false; }
};

template <typename Impl, typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    RETURN_IF_ERROR(internal::CheckSoftmaxXentShapes(features, labels));
    const int64_t batch = features.dim_size(0), classes = features.dim_size(1);
    ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({batch})));
    ASSIGN_OR_RETURN(Tensor * backprop,
                     ctx->forward_input_or_allocate_output(0, 1, features.shape()));
    if (batch == 0) return absl::OkStatus();
    return Impl::template SoftmaxXent<T>(ctx, features.data<T>(), labels.data<T>(),
                                         loss->data<T>(), backprop->data<T>(), batch, classes);
  }
  bool IsExpensive() const override { return false; }
};

// L: the labels' type (int32 or int64).
template <typename Impl, typename T, typename L>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    RETURN_IF_ERROR(internal::CheckSparseSoftmaxXentShapes(features, labels));
    const int64_t batch = features.dim_size(0), classes = features.dim_size(1);
    RETURN_IF_ERROR(Impl::template CheckSparseLabels<L>(labels.data<L>(), batch, classes));
    ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({batch})));
    ASSIGN_OR_RETURN(Tensor * backprop,
                     ctx->forward_input_or_allocate_output(0, 1, features.shape()));
    if (batch == 0) return absl::OkStatus();
    return Impl::template SparseSoftmaxXent<T, L>(ctx, features.data<T>(), labels.data<L>(),
                                                  loss->data<T>(), backprop->data<T>(), batch,
                                                  classes);
  }
  bool IsExpensive() const override { return false; }
};

// Registers every op above for float and double on `device_type`.
template <typename Impl>
void RegisterNnKernelsFor(KernelRegistry* kernels, const char* device_type) {
  const auto def = [device_type](const char* op, DataType t) {
    return KernelDef(op, device_type).TypeConstraint("T", t);
  };
  const auto each_type = [&](auto type_tag) {
    using T = decltype(type_tag);
    const DataType t = DataTypeToEnum<T>::value;
    kernels->Register<ReluOp<Impl, T>>(def("Relu", t));
    kernels->Register<ReluGradOp<Impl, T>>(def("ReluGrad", t));
    kernels->Register<BiasAddOp<Impl, T>>(def("BiasAdd", t));
    kernels->Register<BiasAddOp<Impl, T>>(def("BiasAddV1", t));
    kernels->Register<BiasAddGradOp<Impl, T>>(def("BiasAddGrad", t));
    kernels->Register<SoftmaxOp<Impl, T, false>>(def("Softmax", t));
    kernels->Register<SoftmaxOp<Impl, T, true>>(def("LogSoftmax", t));
    kernels->Register<SoftmaxXentOp<Impl, T>>(def("SoftmaxCrossEntropyWithLogits", t));
    constexpr char kSparse[] = "SparseSoftmaxCrossEntropyWithLogits";
    kernels->Register<SparseSoftmaxXentOp<Impl, T, int32_t>>(
        def(kSparse, t).TypeConstraint("Tlabels", DT_INT32));
    kernels->Register<SparseSoftmaxXentOp<Impl, T, int64_t>>(
        def(kSparse, t).TypeConstraint("Tlabels", DT_INT64));
  };
  each_type(float{});
  each_type(double{});
}

}  // namespace sluice

#endif  // SLUICE_OPS_NN_NN_KERNELS_H_
