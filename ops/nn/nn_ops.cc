// Definitions, shape functions and wrappers of the neural-network ops (window
// arithmetic: internal/window_geometry.cc; kernels: nn_kernels.cc and
// conv_kernels.cc).
#include "ops/nn/nn_ops.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "graph/op_def.h"
#include "graph/shape_inference.h"
#include "ops/nn/internal/window_geometry.h"

namespace sluice {

namespace {

using internal::ComputeWindowDim;
using internal::Padding;
using internal::WindowAttrs;
using internal::WindowDim;

// -1 for an unknown dimension or rank.
int64_t Dim(const TensorShape& s, int i) { return s.unknown_rank() ? -1 : s.dim(i); }

absl::Status ShapeError(InferenceContext* c, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": ", message));
}

absl::Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status ReluGradShape(InferenceContext* c) {
  auto merged = c->input(0).Merge(c->input(1));
  if (!merged.ok()) {
    return ShapeError(c,
                      absl::StrCat("gradients and features must have the same shape, got ",
                                   c->input(0).DebugString(), " and ", c->input(1).DebugString()));
  }
  c->set_output(0, *merged);
  return absl::OkStatus();
}

absl::Status BiasAddShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  RETURN_IF_ERROR(c->WithRank(1, 1));
  std::string format = "NHWC";  // BiasAddV1's only layout
  if (c->node().op() != "BiasAddV1") {
    ASSIGN_OR_RETURN(format, c->GetAttr<std::string>("data_format"));
  }
  TensorShape out = c->input(0);
  const TensorShape& bias = c->input(1);
  if (out.unknown_rank()) {
    c->set_output(0, out);
    return absl::OkStatus();
  }
  const int channel = format == "NCHW" ? 1 : out.rank() - 1;
  const int64_t value_dim = out.dim(channel);
  const int64_t bias_dim = Dim(bias, 0);
  if (value_dim >= 0 && bias_dim >= 0 && value_dim != bias_dim) {
    return ShapeError(
        c, absl::StrCat("bias length ", bias_dim, " must match the channel dimension ", value_dim,
                        " of value (value shape ", out.DebugString(), ", bias shape ",
                        bias.DebugString(), ", data_format ", format, ")"));
  }
  if (value_dim < 0) out.set_dim(channel, bias_dim);
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status BiasAddGradShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  ASSIGN_OR_RETURN(std::string format, c->GetAttr<std::string>("data_format"));
  const TensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape({-1}));
  } else {
    c->set_output(0, TensorShape({in.dim(format == "NCHW" ? 1 : in.rank() - 1)}));
  }
  return absl::OkStatus();
}

absl::Status SoftmaxShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  return UnchangedShape(c);
}

absl::Status XentShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 2));
  RETURN_IF_ERROR(c->WithRank(1, 2));
  auto merged = c->input(0).Merge(c->input(1));
  if (!merged.ok()) {
    return ShapeError(c,
                      absl::StrCat("features and labels must have the same shape, got ",
                                   c->input(0).DebugString(), " and ", c->input(1).DebugString()));
  }
  c->set_output(0, TensorShape({Dim(*merged, 0)}));
  c->set_output(1, *merged);
  return absl::OkStatus();
}

absl::Status SparseXentShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 2));
  RETURN_IF_ERROR(c->WithRank(1, 1));
  int64_t batch = Dim(c->input(0), 0);
  const int64_t label_batch = Dim(c->input(1), 0);
  if (batch >= 0 && label_batch >= 0 && batch != label_batch) {
    return ShapeError(c, absl::StrCat("features batch size ", batch, " must equal labels size ",
                                      label_batch, " (features ", c->input(0).DebugString(),
                                      ", labels ", c->input(1).DebugString(), ")"));
  }
  if (batch < 0) batch = label_batch;
  c->set_output(0, TensorShape({batch}));
  c->set_output(1, TensorShape({batch, Dim(c->input(0), 1)}));
  return absl::OkStatus();
}

// NHWC or NCHW output of a window op with known attrs.
absl::StatusOr<TensorShape> WindowOutputShape(InferenceContext* c, const WindowAttrs& a,
                                              const TensorShape& in, int64_t window_rows,
                                              int64_t window_cols, int64_t out_depth) {
  const int h = a.h_index(), w = a.w_index();
  const bool ex = a.padding == Padding::kExplicit;
  auto pad = [&](int i) { return ex ? a.explicit_paddings[i] : 0; };
  auto rows = ComputeWindowDim(Dim(in, h), window_rows, a.strides[h], a.dilations[h], a.padding,
                               pad(2 * h), pad(2 * h + 1));
  auto cols = ComputeWindowDim(Dim(in, w), window_cols, a.strides[w], a.dilations[w], a.padding,
                               pad(2 * w), pad(2 * w + 1));
  if (!rows.ok() || !cols.ok()) {
    const absl::Status& s = rows.ok() ? cols.status() : rows.status();
    return ShapeError(c, absl::StrCat(s.message(), " (input shape ", in.DebugString(), ")"));
  }
  TensorShape out = TensorShape::UnknownOfRank(4);
  out.set_dim(0, Dim(in, 0));
  out.set_dim(h, rows->output);
  out.set_dim(w, cols->output);
  out.set_dim(a.c_index(), out_depth);
  return out;
}

absl::StatusOr<WindowAttrs> ConvAttrs(InferenceContext* c) {
  auto a = internal::ReadConvAttrs(c->node().attrs());
  if (!a.ok())
    return absl::Status(a.status().code(),
                        absl::StrCat(c->node().op(), ": ", a.status().message()));
  return a;
}

absl::StatusOr<WindowAttrs> PoolAttrs(InferenceContext* c) {
  auto a = internal::ReadPoolAttrs(c->node().attrs());
  if (!a.ok())
    return absl::Status(a.status().code(),
                        absl::StrCat(c->node().op(), ": ", a.status().message()));
  return a;
}

absl::Status Conv2DShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  RETURN_IF_ERROR(c->WithRank(1, 4));
  ASSIGN_OR_RETURN(WindowAttrs a, ConvAttrs(c));
  const TensorShape& in = c->input(0);
  const TensorShape& filter = c->input(1);
  const int64_t in_depth = Dim(in, a.c_index());
  const int64_t filter_depth = Dim(filter, 2);
  if (in_depth >= 0 && filter_depth >= 0 && in_depth != filter_depth) {
    return ShapeError(
        c, absl::StrCat("input depth ", in_depth, " must equal the filter's in_depth ",
                        filter_depth, " (input shape ", in.DebugString(), ", filter shape ",
                        filter.DebugString(), ")"));
  }
  ASSIGN_OR_RETURN(TensorShape out,
                   WindowOutputShape(c, a, in, Dim(filter, 0), Dim(filter, 1), Dim(filter, 3)));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status Conv2DBackpropInputShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(1, 4));
  RETURN_IF_ERROR(c->WithRank(2, 4));
  RETURN_IF_ERROR(ConvAttrs(c).status());
  return internal::ShapeFromSizesInput(c, 0, 4);
}

absl::Status Conv2DBackpropFilterShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  RETURN_IF_ERROR(c->WithRank(2, 4));
  RETURN_IF_ERROR(ConvAttrs(c).status());
  return internal::ShapeFromSizesInput(c, 1, 4);
}

absl::Status MaxPoolShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  ASSIGN_OR_RETURN(WindowAttrs a, PoolAttrs(c));
  const TensorShape& in = c->input(0);
  ASSIGN_OR_RETURN(TensorShape out, WindowOutputShape(c, a, in, a.ksize[a.h_index()],
                                                      a.ksize[a.w_index()], Dim(in, a.c_index())));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status MaxPoolGradShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(c->WithRank(i, 4));
  RETURN_IF_ERROR(PoolAttrs(c).status());
  return UnchangedShape(c);
}

absl::Status AvgPoolGradShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(1, 4));
  RETURN_IF_ERROR(PoolAttrs(c).status());
  return internal::ShapeFromSizesInput(c, 0, 4);
}

// TensorFlow's 16-bit types too: kernels exist for float and double (and
// bfloat16 convolutions on the CPU, for mixed precision); a graph asking for
// another fails at its kernel, naming the type.
constexpr char kFloatTypes[] = "T: {half, bfloat16, float, double}";
constexpr char kDataFormat[] = "data_format: {'NHWC', 'NCHW'} = 'NHWC'";

OpDefBuilder ConvBuilder(std::string name) {
  OpDefBuilder b(std::move(name));
  b.Attr(kFloatTypes)
      .Attr("strides: list(int)")
      .Attr("use_cudnn_on_gpu: bool = true")
      .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
      .Attr("explicit_paddings: list(int) = []")
      .Attr(kDataFormat)
      .Attr("dilations: list(int) = [1, 1, 1, 1]");
  return b;
}

OpDefBuilder PoolBuilder(std::string name) {
  OpDefBuilder b(std::move(name));
  b.Attr("T: {half, bfloat16, float, double} = DT_FLOAT")
      .Attr("ksize: list(int)")
      .Attr("strides: list(int)")
      .Attr("padding: {'SAME', 'VALID'}")
      .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'");
  return b;
}

}  // namespace

absl::Status RegisterNnOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Relu")
                                    .Input("features: T")
                                    .Output("activations: T")
                                    .Attr(kFloatTypes)
                                    .SetShapeFn(UnchangedShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ReluGrad")
                                    .Input("gradients: T")
                                    .Input("features: T")
                                    .Output("backprops: T")
                                    .Attr(kFloatTypes)
                                    .SetShapeFn(ReluGradShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("BiasAdd")
                                    .Input("value: T")
                                    .Input("bias: T")
                                    .Output("output: T")
                                    .Attr(kFloatTypes)
                                    .Attr(kDataFormat)
                                    .SetShapeFn(BiasAddShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("BiasAddV1")
                                    .Input("value: T")
                                    .Input("bias: T")
                                    .Output("output: T")
                                    .Attr(kFloatTypes)
                                    .SetShapeFn(BiasAddShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("BiasAddGrad")
                                    .Input("out_backprop: T")
                                    .Output("output: T")
                                    .Attr(kFloatTypes)
                                    .Attr(kDataFormat)
                                    .SetShapeFn(BiasAddGradShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Softmax")
                                    .Input("logits: T")
                                    .Output("softmax: T")
                                    .Attr(kFloatTypes)
                                    .SetShapeFn(SoftmaxShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("LogSoftmax")
                                    .Input("logits: T")
                                    .Output("logsoftmax: T")
                                    .Attr(kFloatTypes)
                                    .SetShapeFn(SoftmaxShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SoftmaxCrossEntropyWithLogits")
                                    .Input("features: T")
                                    .Input("labels: T")
                                    .Output("loss: T")
                                    .Output("backprop: T")
                                    .Attr(kFloatTypes)
                                    .SetShapeFn(XentShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseSoftmaxCrossEntropyWithLogits")
                                    .Input("features: T")
                                    .Input("labels: Tlabels")
                                    .Output("loss: T")
                                    .Output("backprop: T")
                                    .Attr(kFloatTypes)
                                    .Attr("Tlabels: {int32, int64} = DT_INT64")
                                    .SetShapeFn(SparseXentShape)));
  RETURN_IF_ERROR(ops->Register(ConvBuilder("Conv2D")
                                    .Input("input: T")
                                    .Input("filter: T")
                                    .Output("output: T")
                                    .SetShapeFn(Conv2DShape)));
  RETURN_IF_ERROR(ops->Register(ConvBuilder("Conv2DBackpropInput")
                                    .Input("input_sizes: int32")
                                    .Input("filter: T")
                                    .Input("out_backprop: T")
                                    .Output("output: T")
                                    .SetShapeFn(Conv2DBackpropInputShape)));
  RETURN_IF_ERROR(ops->Register(ConvBuilder("Conv2DBackpropFilter")
                                    .Input("input: T")
                                    .Input("filter_sizes: int32")
                                    .Input("out_backprop: T")
                                    .Output("output: T")
                                    .SetShapeFn(Conv2DBackpropFilterShape)));
  // TensorFlow's MaxPool and MaxPoolGrad also take explicit_paddings (for
  // padding 'EXPLICIT', which Sluice does not offer: only the empty default).
  RETURN_IF_ERROR(ops->Register(PoolBuilder("MaxPool")
                                    .Input("input: T")
                                    .Output("output: T")
                                    .Attr("explicit_paddings: list(int) = []")
                                    .SetShapeFn(MaxPoolShape)));
  RETURN_IF_ERROR(ops->Register(PoolBuilder("MaxPoolGrad")
                                    .Attr("explicit_paddings: list(int) = []")
                                    .Input("orig_input: T")
                                    .Input("orig_output: T")
                                    .Input("grad: T")
                                    .Output("output: T")
                                    .SetShapeFn(MaxPoolGradShape)));
  // The gradient of MaxPoolGrad: grad (shaped like orig_input) at each
  // window's maximum, shaped like orig_output.
  RETURN_IF_ERROR(ops->Register(PoolBuilder("MaxPoolGradGrad")
                                    .Input("orig_input: T")
                                    .Input("orig_output: T")
                                    .Input("grad: T")
                                    .Output("output: T")
                                    .SetShapeFn([](InferenceContext* c) -> absl::Status {
                                      for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(c->WithRank(i, 4));
                                      RETURN_IF_ERROR(PoolAttrs(c).status());
                                      c->set_output(0, c->input(1));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(
      PoolBuilder("AvgPool").Input("value: T").Output("output: T").SetShapeFn(MaxPoolShape)));
  RETURN_IF_ERROR(ops->Register(PoolBuilder("AvgPoolGrad")
                                    .Input("orig_input_shape: int32")
                                    .Input("grad: T")
                                    .Output("output: T")
                                    .SetShapeFn(AvgPoolGradShape)));
  return absl::OkStatus();
}

namespace ops {
namespace {

OpBuilder& ConvAttrsTo(OpBuilder& b, const std::vector<int64_t>& strides, absl::string_view padding,
                       const Conv2DAttrs& attrs) {
  b.Attr("strides", strides)
      .Attr("padding", padding)
      .Attr("use_cudnn_on_gpu", attrs.use_cudnn_on_gpu)
      .Attr("data_format", attrs.data_format)
      .Attr("dilations", attrs.dilations);
  if (!attrs.explicit_paddings.empty()) b.Attr("explicit_paddings", attrs.explicit_paddings);
  return b;
}

OpBuilder& PoolAttrsTo(OpBuilder& b, const std::vector<int64_t>& ksize,
                       const std::vector<int64_t>& strides, absl::string_view padding,
                       const MaxPoolAttrs& attrs) {
  return b.Attr("ksize", ksize)
      .Attr("strides", strides)
      .Attr("padding", padding)
      .Attr("data_format", attrs.data_format);
}

}  // namespace

Output Relu(const Scope& s, Input features, std::source_location loc) {
  return s.Op("Relu", loc).Input(features).Finalize1();
}

Output ReluGrad(const Scope& s, Input gradients, Input features, std::source_location loc) {
  return s.Op("ReluGrad", loc).Input(gradients).Input(features).Finalize1();
}

Output BiasAdd(const Scope& s, Input value, Input bias, const BiasAddAttrs& attrs,
               std::source_location loc) {
  return s.Op("BiasAdd", loc)
      .Input(value)
      .Input(bias)
      .Attr("data_format", attrs.data_format)
      .Finalize1();
}

Output BiasAddGrad(const Scope& s, Input out_backprop, const BiasAddAttrs& attrs,
                   std::source_location loc) {
  return s.Op("BiasAddGrad", loc)
      .Input(out_backprop)
      .Attr("data_format", attrs.data_format)
      .Finalize1();
}

Output Softmax(const Scope& s, Input logits, std::source_location loc) {
  return s.Op("Softmax", loc).Input(logits).Finalize1();
}

Output LogSoftmax(const Scope& s, Input logits, std::source_location loc) {
  return s.Op("LogSoftmax", loc).Input(logits).Finalize1();
}

std::vector<Output> SoftmaxCrossEntropyWithLogits(const Scope& s, Input features, Input labels,
                                                  std::source_location loc) {
  return s.Op("SoftmaxCrossEntropyWithLogits", loc).Input(features).Input(labels).FinalizeAll();
}

std::vector<Output> SparseSoftmaxCrossEntropyWithLogits(const Scope& s, Input features,
                                                        Input labels, std::source_location loc) {
  return s.Op("SparseSoftmaxCrossEntropyWithLogits", loc)
      .Input(features)
      .Input(labels)
      .FinalizeAll();
}

Output Conv2D(const Scope& s, Input input, Input filter, const std::vector<int64_t>& strides,
              absl::string_view padding, const Conv2DAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("Conv2D", loc);
  b.Input(input).Input(filter);
  return ConvAttrsTo(b, strides, padding, attrs).Finalize1();
}

Output Conv2DBackpropInput(const Scope& s, Input input_sizes, Input filter, Input out_backprop,
                           const std::vector<int64_t>& strides, absl::string_view padding,
                           const Conv2DAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("Conv2DBackpropInput", loc);
  b.Input(input_sizes).Input(filter).Input(out_backprop);
  return ConvAttrsTo(b, strides, padding, attrs).Finalize1();
}

Output Conv2DBackpropFilter(const Scope& s, Input input, Input filter_sizes, Input out_backprop,
                            const std::vector<int64_t>& strides, absl::string_view padding,
                            const Conv2DAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("Conv2DBackpropFilter", loc);
  b.Input(input).Input(filter_sizes).Input(out_backprop);
  return ConvAttrsTo(b, strides, padding, attrs).Finalize1();
}

Output MaxPool(const Scope& s, Input input, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, absl::string_view padding,
               const MaxPoolAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("MaxPool", loc);
  b.Input(input);
  return PoolAttrsTo(b, ksize, strides, padding, attrs).Finalize1();
}

Output MaxPoolGrad(const Scope& s, Input orig_input, Input orig_output, Input grad,
                   const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                   absl::string_view padding, const MaxPoolAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("MaxPoolGrad", loc);
  b.Input(orig_input).Input(orig_output).Input(grad);
  return PoolAttrsTo(b, ksize, strides, padding, attrs).Finalize1();
}

Output AvgPool(const Scope& s, Input value, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, absl::string_view padding,
               const MaxPoolAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("AvgPool", loc);
  b.Input(value);
  return PoolAttrsTo(b, ksize, strides, padding, attrs).Finalize1();
}

Output AvgPoolGrad(const Scope& s, Input orig_input_shape, Input grad,
                   const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                   absl::string_view padding, const MaxPoolAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("AvgPoolGrad", loc);
  b.Input(orig_input_shape).Input(grad);
  return PoolAttrsTo(b, ksize, strides, padding, attrs).Finalize1();
}

}  // namespace ops
}  // namespace sluice
