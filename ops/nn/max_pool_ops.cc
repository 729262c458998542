// MaxPoolV2, MaxPoolGradV2, MaxPoolWithArgmax, MaxPoolGradWithArgmax: op
// definitions, the argmax ops' CPU kernels, gradients and wrappers
// (ops/nn/max_pool_ops.h). MaxPoolV2's and MaxPoolGradV2's kernels are
// MaxPool's and MaxPoolGrad's (ops/nn/conv_kernels.cc), their window read
// from inputs.
#include "ops/nn/max_pool_ops.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/grad_util.h"
#include "ops/nn/internal/window_geometry.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

struct PoolDims {
  int64_t batch = 0, rows = 0, cols = 0, depth = 0;
  int64_t k_rows = 1, k_cols = 1, s_rows = 1, s_cols = 1;
  int64_t out_rows = 0, out_cols = 0, pad_top = 0, pad_left = 0;
  int64_t in_size() const { return batch * rows * cols * depth; }
  int64_t out_size() const { return batch * out_rows * out_cols * depth; }
};

absl::Status CheckWindow(const char* what, const std::vector<int64_t>& v) {
  if (v.size() != 4 || v[0] != 1 || v[3] != 1 || v[1] < 1 || v[2] < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be 4 positive values with 1 for batch and depth, got [",
        absl::StrJoin(v, ", "), "]"));
  }
  return absl::OkStatus();
}

absl::StatusOr<PoolDims> Geometry(const TensorShape& in, const std::vector<int64_t>& ksize,
                                  const std::vector<int64_t>& strides,
                                  internal::Padding padding) {
  if (in.rank() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be 4-dimensional, got shape ", in.DebugString()));
  }
  RETURN_IF_ERROR(CheckWindow("ksize", ksize));
  RETURN_IF_ERROR(CheckWindow("strides", strides));
  PoolDims d;
  d.batch = in.dim(0);
  d.rows = in.dim(1);
  d.cols = in.dim(2);
  d.depth = in.dim(3);
  d.k_rows = ksize[1];
  d.k_cols = ksize[2];
  d.s_rows = strides[1];
  d.s_cols = strides[2];
  ASSIGN_OR_RETURN(internal::WindowDim r,
                   internal::ComputeWindowDim(d.rows, d.k_rows, d.s_rows, 1, padding));
  ASSIGN_OR_RETURN(internal::WindowDim c,
                   internal::ComputeWindowDim(d.cols, d.k_cols, d.s_cols, 1, padding));
  d.out_rows = r.output;
  d.out_cols = c.output;
  d.pad_top = r.pad_before;
  d.pad_left = c.pad_before;
  return d;
}

// Every output's maximum and the flat input index of its first occurrence
// in row-major window order (padding never counts).
template <typename T>
void Pool(const PoolDims& d, const T* in, T* out, int64_t* at) {
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t oy = 0; oy < d.out_rows; ++oy) {
      const int64_t y0 = std::max<int64_t>(oy * d.s_rows - d.pad_top, 0);
      const int64_t y1 = std::min(oy * d.s_rows - d.pad_top + d.k_rows, d.rows);
      for (int64_t ox = 0; ox < d.out_cols; ++ox) {
        const int64_t x0 = std::max<int64_t>(ox * d.s_cols - d.pad_left, 0);
        const int64_t x1 = std::min(ox * d.s_cols - d.pad_left + d.k_cols, d.cols);
        const int64_t o = ((b * d.out_rows + oy) * d.out_cols + ox) * d.depth;
        for (int64_t ch = 0; ch < d.depth; ++ch) {
          T best = std::numeric_limits<T>::lowest();
          int64_t best_at = -1;
          for (int64_t y = y0; y < y1; ++y) {
            for (int64_t x = x0; x < x1; ++x) {
              const int64_t i = ((b * d.rows + y) * d.cols + x) * d.depth + ch;
              if (best_at < 0 || in[i] > best) {
                best = in[i];
                best_at = i;
              }
            }
          }
          out[o + ch] = best;
          at[o + ch] = best_at;
        }
      }
    }
  }
}

// Attrs of MaxPoolWithArgmax and its gradient.
struct ArgmaxAttrs {
  std::vector<int64_t> ksize, strides;
  internal::Padding padding = internal::Padding::kValid;
  bool include_batch = false;
};

absl::StatusOr<ArgmaxAttrs> ReadArgmaxAttrs(const OpKernelConstruction& ctx) {
  ArgmaxAttrs a;
  ASSIGN_OR_RETURN(a.ksize, ctx.GetAttr<std::vector<int64_t>>("ksize"));
  ASSIGN_OR_RETURN(a.strides, ctx.GetAttr<std::vector<int64_t>>("strides"));
  ASSIGN_OR_RETURN(std::string padding, ctx.GetAttr<std::string>("padding"));
  ASSIGN_OR_RETURN(a.padding, internal::ParsePadding(padding));
  ASSIGN_OR_RETURN(a.include_batch, ctx.GetAttr<bool>("include_batch_in_index"));
  return a;
}

template <typename T, typename Arg>
class MaxPoolWithArgmaxOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(a_, ReadArgmaxAttrs(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    absl::StatusOr<PoolDims> d = Geometry(x.shape(), a_.ksize, a_.strides, a_.padding);
    if (!d.ok()) return AddContext(d.status(), "MaxPoolWithArgmax");
    const TensorShape shape({d->batch, d->out_rows, d->out_cols, d->depth});
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    ASSIGN_OR_RETURN(Tensor * arg, ctx->allocate_output(1, shape));
    std::vector<int64_t> at(d->out_size());
    Pool<T>(*d, x.data<T>(), out->data<T>(), at.data());
    const int64_t image = d->rows * d->cols * d->depth;
    const int64_t per_batch = d->out_rows * d->out_cols * d->depth;
    Arg* a = arg->data<Arg>();
    for (int64_t i = 0; i < d->out_size(); ++i) {
      a[i] = static_cast<Arg>(a_.include_batch ? at[i] : at[i] - (i / per_batch) * image);
    }
    return absl::OkStatus();
  }

 private:
  ArgmaxAttrs a_;
};

// MaxPoolGradWithArgmax (kGather false): grad, pooled, added into the input
// positions argmax names; MaxPoolGradGradWithArgmax (kGather true): grad,
// shaped like the input, read at those positions into the pooled shape.
template <typename T, typename Arg, bool kGather>
class ArgmaxRouteOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(a_, ReadArgmaxAttrs(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    const Tensor& x = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    const Tensor& argmax = ctx->input(2);
    absl::StatusOr<PoolDims> d = Geometry(x.shape(), a_.ksize, a_.strides, a_.padding);
    if (!d.ok()) return AddContext(d.status(), op);
    const TensorShape pooled({d->batch, d->out_rows, d->out_cols, d->depth});
    const TensorShape& grad_shape = kGather ? x.shape() : pooled;
    if (grad.shape() != grad_shape || argmax.shape() != pooled) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": grad ", grad.shape().DebugString(), " and argmax ", argmax.shape().DebugString(),
          " must have the shapes ", grad_shape.DebugString(), " and ", pooled.DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, kGather ? pooled : x.shape()));
    T* o = out->data<T>();
    if (!kGather) std::fill(o, o + out->NumElements(), T(0));
    const int64_t image = d->rows * d->cols * d->depth;
    const int64_t per_batch = d->out_rows * d->out_cols * d->depth;
    const T* g = grad.data<T>();
    const Arg* a = argmax.data<Arg>();
    for (int64_t i = 0; i < d->out_size(); ++i) {
      const int64_t at = static_cast<int64_t>(a[i]) + (a_.include_batch ? 0 : (i / per_batch) * image);
      if (at < 0 || at >= d->in_size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, ": argmax[", i, "] = ", a[i], " is outside the input of ", x.shape().DebugString()));
      }
      if constexpr (kGather) {
        o[i] = g[at];
      } else {
        o[at] += g[i];
      }
    }
    return absl::OkStatus();
  }

 private:
  ArgmaxAttrs a_;
};

// MaxPoolGradGradWithArgmax: the pooled shape, argmax's.
// The gradient ops' output: shaped like input i (the input's for the
// routes into it, the pooled one's for the GradGrad reads).
template <int i>
absl::Status LikeInput(InferenceContext* c) {
  c->set_output(0, c->input(i));
  return absl::OkStatus();
}

absl::Status V2Shape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  const TensorShape& in = c->input(0);
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> k, c->InputAsInts(1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> s, c->InputAsInts(2));
  ASSIGN_OR_RETURN(std::string padding, c->GetAttr<std::string>("padding"));
  ASSIGN_OR_RETURN(internal::Padding p, internal::ParsePadding(padding));
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape({-1, -1, -1, -1}));
    return absl::OkStatus();
  }
  int64_t rows = -1, cols = -1;
  if (k.has_value() && s.has_value()) {
    RETURN_IF_ERROR(CheckWindow("ksize", *k));
    RETURN_IF_ERROR(CheckWindow("strides", *s));
    ASSIGN_OR_RETURN(internal::WindowDim r,
                     internal::ComputeWindowDim(in.dim(1), (*k)[1], (*s)[1], 1, p));
    ASSIGN_OR_RETURN(internal::WindowDim cl,
                     internal::ComputeWindowDim(in.dim(2), (*k)[2], (*s)[2], 1, p));
    rows = r.output;
    cols = cl.output;
  }
  c->set_output(0, TensorShape({in.dim(0), rows, cols, in.dim(3)}));
  return absl::OkStatus();
}

absl::Status ArgmaxShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  const TensorShape& in = c->input(0);
  ASSIGN_OR_RETURN(std::vector<int64_t> k, c->GetAttr<std::vector<int64_t>>("ksize"));
  ASSIGN_OR_RETURN(std::vector<int64_t> s, c->GetAttr<std::vector<int64_t>>("strides"));
  ASSIGN_OR_RETURN(std::string padding, c->GetAttr<std::string>("padding"));
  ASSIGN_OR_RETURN(internal::Padding p, internal::ParsePadding(padding));
  RETURN_IF_ERROR(CheckWindow("ksize", k));
  RETURN_IF_ERROR(CheckWindow("strides", s));
  TensorShape out({-1, -1, -1, -1});
  if (!in.unknown_rank()) {
    ASSIGN_OR_RETURN(internal::WindowDim r, internal::ComputeWindowDim(in.dim(1), k[1], s[1], 1, p));
    ASSIGN_OR_RETURN(internal::WindowDim cl,
                     internal::ComputeWindowDim(in.dim(2), k[2], s[2], 1, p));
    out = TensorShape({in.dim(0), r.output, cl.output, in.dim(3)});
  }
  c->set_output(0, out);
  c->set_output(1, out);
  return absl::OkStatus();
}

constexpr char kTypes[] = "T: {float, double} = DT_FLOAT";

}  // namespace

absl::Status RegisterMaxPoolOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MaxPoolV2")
                                    .Input("input: T")
                                    .Input("ksize: int32")
                                    .Input("strides: int32")
                                    .Output("output: T")
                                    .Attr(kTypes)
                                    .Attr("padding: {'SAME', 'VALID'}")
                                    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                                    .SetShapeFn(V2Shape)));
  // MaxPoolGradV2 routes grad (pooled) into the input's shape;
  // MaxPoolGradGradV2, its gradient, reads grad (the input's shape) at each
  // window's maximum into the pooled shape.
  for (const char* op : {"MaxPoolGradV2", "MaxPoolGradGradV2"}) {
    const bool gather = std::string(op) == "MaxPoolGradGradV2";
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(op)
                                      .Input("orig_input: T")
                                      .Input("orig_output: T")
                                      .Input("grad: T")
                                      .Input("ksize: int32")
                                      .Input("strides: int32")
                                      .Output("output: T")
                                      .Attr("padding: {'SAME', 'VALID'}")
                                      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                                      .Attr(kTypes)
                                      .SetShapeFn(gather ? LikeInput<1> : LikeInput<0>)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MaxPoolWithArgmax")
                                    .Input("input: T")
                                    .Output("output: T")
                                    .Output("argmax: Targmax")
                                    .Attr("ksize: list(int) >= 4")
                                    .Attr("strides: list(int) >= 4")
                                    .Attr("Targmax: {int32, int64} = DT_INT64")
                                    .Attr("padding: {'SAME', 'VALID'}")
                                    .Attr("include_batch_in_index: bool = false")
                                    .Attr("T: {float, double}")
                                    .SetShapeFn(ArgmaxShape)));
  for (const char* op : {"MaxPoolGradWithArgmax", "MaxPoolGradGradWithArgmax"}) {
    const bool gather = std::string(op) == "MaxPoolGradGradWithArgmax";
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(op)
                                      .Input("input: T")
                                      .Input("grad: T")
                                      .Input("argmax: Targmax")
                                      .Output("output: T")
                                      .Attr("ksize: list(int) >= 4")
                                      .Attr("strides: list(int) >= 4")
                                      .Attr("padding: {'SAME', 'VALID'}")
                                      .Attr("include_batch_in_index: bool = false")
                                      .Attr("Targmax: {int32, int64}")
                                      .Attr("T: {float, double}")
                                      .SetShapeFn(gather ? LikeInput<2> : LikeInput<0>)));
  }
  return absl::OkStatus();
}

absl::Status RegisterMaxPoolGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient(
      "MaxPoolV2", [](const Scope& s, const Node& node, absl::Span<const Output> dy)
                       -> absl::StatusOr<std::vector<Output>> {
        std::vector<Output> grads(3);
        if (!dy[0].valid()) return grads;
        ASSIGN_OR_RETURN(std::string padding, node.GetAttr<std::string>("padding"));
        ASSIGN_OR_RETURN(std::string format, node.GetAttr<std::string>("data_format"));
        grads[0] = s.Op("MaxPoolGradV2")
                       .Input(internal::InputOf(node, 0))
                       .Input(internal::OutputOf(node, 0))
                       .Input(dy[0])
                       .Input(internal::InputOf(node, 1))
                       .Input(internal::InputOf(node, 2))
                       .Attr("padding", padding)
                       .Attr("data_format", format)
                       .Finalize1();
        RETURN_IF_ERROR(s.status());
        return grads;
      }));
  // MaxPoolGradV2 and MaxPoolGradGradV2: each other's gradient, through the
  // same window (ksize and strides get none), as MaxPoolGrad's.
  auto v2_back = [](const Scope& s, const Node& node,
                    absl::Span<const Output> dy) -> absl::StatusOr<std::vector<Output>> {
    std::vector<Output> grads(5);
    if (!dy[0].valid()) return grads;
    const bool of_grad = node.op() == "MaxPoolGradV2";
    OpBuilder b = s.Op(of_grad ? "MaxPoolGradGradV2" : "MaxPoolGradV2");
    b.Input(internal::InputOf(node, 0)).Input(internal::InputOf(node, 1)).Input(dy[0]);
    b.Input(internal::InputOf(node, 3)).Input(internal::InputOf(node, 4));
    for (const char* attr : {"padding", "data_format"}) b.SetAttr(attr, node.attrs().at(attr));
    grads[0] = s.Op("ZerosLike").Input(internal::InputOf(node, 0)).Finalize1();
    grads[1] = s.Op("ZerosLike").Input(internal::InputOf(node, 1)).Finalize1();
    grads[2] = b.Finalize1();
    RETURN_IF_ERROR(s.status());
    return grads;
  };
  RETURN_IF_ERROR(ops->SetGradient("MaxPoolGradV2", v2_back));
  RETURN_IF_ERROR(ops->SetGradient("MaxPoolGradGradV2", v2_back));
  // MaxPoolGradWithArgmax and MaxPoolGradGradWithArgmax route a gradient
  // through the same argmax, each the other's way; the input gets none.
  auto route_back = [](const Scope& s, const Node& node,
                       absl::Span<const Output> dy) -> absl::StatusOr<std::vector<Output>> {
    std::vector<Output> grads(3);
    if (!dy[0].valid()) return grads;
    const bool of_grad = node.op() == "MaxPoolGradWithArgmax";
    OpBuilder b = s.Op(of_grad ? "MaxPoolGradGradWithArgmax" : "MaxPoolGradWithArgmax");
    b.Input(internal::InputOf(node, 0)).Input(dy[0]).Input(internal::InputOf(node, 2));
    for (const char* attr : {"ksize", "strides", "padding", "include_batch_in_index"}) {
      b.SetAttr(attr, node.attrs().at(attr));
    }
    grads[0] = s.Op("ZerosLike").Input(internal::InputOf(node, 0)).Finalize1();
    grads[1] = b.Finalize1();
    RETURN_IF_ERROR(s.status());
    return grads;
  };
  RETURN_IF_ERROR(ops->SetGradient("MaxPoolGradWithArgmax", route_back));
  RETURN_IF_ERROR(ops->SetGradient("MaxPoolGradGradWithArgmax", route_back));
  return ops->SetGradient(
      "MaxPoolWithArgmax", [](const Scope& s, const Node& node, absl::Span<const Output> dy)
                               -> absl::StatusOr<std::vector<Output>> {
        std::vector<Output> grads(1);
        if (!dy[0].valid()) return grads;
        OpBuilder b = s.Op("MaxPoolGradWithArgmax");
        b.Input(internal::InputOf(node, 0)).Input(dy[0]).Input(internal::OutputOf(node, 1));
        for (const char* attr : {"ksize", "strides", "padding", "include_batch_in_index"}) {
          b.SetAttr(attr, node.attrs().at(attr));
        }
        grads[0] = b.Finalize1();
        RETURN_IF_ERROR(s.status());
        return grads;
      });
}

void RegisterMaxPoolKernels(KernelRegistry* k) {
  auto both = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const DataType t = DataTypeToEnum<T>::value;
    auto cpu = [t](const char* op) { return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", t); };
    k->Register<MaxPoolWithArgmaxOp<T, int64_t>>(
        cpu("MaxPoolWithArgmax").TypeConstraint("Targmax", DT_INT64));
    k->Register<MaxPoolWithArgmaxOp<T, int32_t>>(
        cpu("MaxPoolWithArgmax").TypeConstraint("Targmax", DT_INT32));
    k->Register<ArgmaxRouteOp<T, int64_t, false>>(
        cpu("MaxPoolGradWithArgmax").TypeConstraint("Targmax", DT_INT64));
    k->Register<ArgmaxRouteOp<T, int32_t, false>>(
        cpu("MaxPoolGradWithArgmax").TypeConstraint("Targmax", DT_INT32));
    k->Register<ArgmaxRouteOp<T, int64_t, true>>(
        cpu("MaxPoolGradGradWithArgmax").TypeConstraint("Targmax", DT_INT64));
    k->Register<ArgmaxRouteOp<T, int32_t, true>>(
        cpu("MaxPoolGradGradWithArgmax").TypeConstraint("Targmax", DT_INT32));
  };
  both(std::type_identity<float>{});
  both(std::type_identity<double>{});
}

namespace ops {

Output MaxPoolV2(const Scope& s, Input input, Input ksize, Input strides,
                 const std::string& padding, std::source_location loc) {
  return s.Op("MaxPoolV2", loc)
      .Input(input)
      .Input(ksize)
      .Input(strides)
      .Attr("padding", padding)
      .Finalize1();
}

MaxPoolWithArgmaxOutputs MaxPoolWithArgmax(const Scope& s, Input input,
                                           std::vector<int64_t> ksize,
                                           std::vector<int64_t> strides,
                                           const std::string& padding,
                                           bool include_batch_in_index, DataType argmax_type,
                                           std::source_location loc) {
  std::vector<Output> outs = s.Op("MaxPoolWithArgmax", loc)
                                 .Input(input)
                                 .Attr("ksize", ksize)
                                 .Attr("strides", strides)
                                 .Attr("padding", padding)
                                 .Attr("include_batch_in_index", include_batch_in_index)
                                 .Attr("Targmax", argmax_type)
                                 .FinalizeAll();
  if (outs.size() != 2) return MaxPoolWithArgmaxOutputs{};
  return MaxPoolWithArgmaxOutputs{outs[0], outs[1]};
}

}  // namespace ops
}  // namespace sluice
