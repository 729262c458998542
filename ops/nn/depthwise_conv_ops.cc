// DepthwiseConv2dNative and its backprops: definitions, shape functions and
// wrappers (kernels: depthwise_conv_kernels.cc).
#include "ops/nn/depthwise_conv_ops.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/nn/internal/window_geometry.h"

namespace sluice {
namespace {

using internal::ComputeWindowDim;
using internal::Padding;
using internal::WindowAttrs;

int64_t Dim(const TensorShape& s, int i) { return s.unknown_rank() ? -1 : s.dim(i); }

absl::Status Error(InferenceContext* c, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": ", message));
}

absl::StatusOr<WindowAttrs> Attrs(InferenceContext* c) {
  absl::StatusOr<WindowAttrs> a = internal::ReadConvAttrs(c->node().attrs());
  if (!a.ok()) {
    return absl::Status(a.status().code(), absl::StrCat(c->node().op(), ": ", a.status().message()));
  }
  if (a->strides[a->h_index()] != a->strides[a->w_index()]) {
    return Error(c, "strides must be equal along rows and columns");
  }
  return a;
}

absl::Status ForwardShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  RETURN_IF_ERROR(c->WithRank(1, 4));
  ASSIGN_OR_RETURN(WindowAttrs a, Attrs(c));
  const TensorShape& in = c->input(0);
  const TensorShape& f = c->input(1);
  const int64_t depth = Dim(in, a.c_index()), f_depth = Dim(f, 2);
  if (depth >= 0 && f_depth >= 0 && depth != f_depth) {
    return Error(c, absl::StrCat("input depth ", depth, " must equal the filter's in_depth ",
                                 f_depth, " (input ", in.DebugString(), ", filter ",
                                 f.DebugString(), ")"));
  }
  const int h = a.h_index(), w = a.w_index();
  const bool ex = a.padding == Padding::kExplicit;
  auto pad = [&](int i) { return ex ? a.explicit_paddings[i] : 0; };
  auto rows = ComputeWindowDim(Dim(in, h), Dim(f, 0), a.strides[h], a.dilations[h], a.padding,
                               pad(2 * h), pad(2 * h + 1));
  auto cols = ComputeWindowDim(Dim(in, w), Dim(f, 1), a.strides[w], a.dilations[w], a.padding,
                               pad(2 * w), pad(2 * w + 1));
  if (!rows.ok() || !cols.ok()) {
    const absl::Status& s = rows.ok() ? cols.status() : rows.status();
    return Error(c, absl::StrCat(s.message(), " (input shape ", in.DebugString(), ")"));
  }
  const int64_t mult = Dim(f, 3);
  const int64_t out_depth = depth >= 0 && mult >= 0 ? depth * mult
                            : f_depth >= 0 && mult >= 0 ? f_depth * mult
                                                        : TensorShape::kUnknownDim;
  TensorShape out = TensorShape::UnknownOfRank(4);
  out.set_dim(0, Dim(in, 0));
  out.set_dim(h, rows->output);
  out.set_dim(w, cols->output);
  out.set_dim(a.c_index(), out_depth);
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

// The output shape is the int32 [4] sizes fed into input `i`.
absl::Status SizesShape(InferenceContext* c, int i) {
  RETURN_IF_ERROR(Attrs(c).status());
  return internal::ShapeFromSizesInput(c, i, 4);
}

absl::Status BackpropInputShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(1, 4));
  RETURN_IF_ERROR(c->WithRank(2, 4));
  return SizesShape(c, 0);
}

absl::Status BackpropFilterShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  RETURN_IF_ERROR(c->WithRank(2, 4));
  return SizesShape(c, 1);
}

OpDefBuilder Builder(const char* name) {
  OpDefBuilder b(name);
  b.Attr("T: {half, bfloat16, float, double}")
      .Attr("strides: list(int)")
      .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
      .Attr("dilations: list(int) = [1, 1, 1, 1]");
  return b;
}

OpBuilder& SetAttrs(OpBuilder& b, const std::vector<int64_t>& strides, absl::string_view padding,
                    const ops::DepthwiseConv2dAttrs& attrs) {
  b.Attr("strides", strides)
      .Attr("padding", padding)
      .Attr("data_format", attrs.data_format)
      .Attr("dilations", attrs.dilations);
  if (!attrs.explicit_paddings.empty()) b.Attr("explicit_paddings", attrs.explicit_paddings);
  return b;
}

}  // namespace

absl::Status RegisterDepthwiseConvOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(Builder("DepthwiseConv2dNative")
                                    .Input("input: T")
                                    .Input("filter: T")
                                    .Output("output: T")
                                    .SetShapeFn(ForwardShape)));
  RETURN_IF_ERROR(ops->Register(Builder("DepthwiseConv2dNativeBackpropInput")
                                    .Input("input_sizes: int32")
                                    .Input("filter: T")
                                    .Input("out_backprop: T")
                                    .Output("output: T")
                                    .SetShapeFn(BackpropInputShape)));
  RETURN_IF_ERROR(ops->Register(Builder("DepthwiseConv2dNativeBackpropFilter")
                                    .Input("input: T")
                                    .Input("filter_sizes: int32")
                                    .Input("out_backprop: T")
                                    .Output("output: T")
                                    .SetShapeFn(BackpropFilterShape)));
  return absl::OkStatus();
}

namespace ops {

Output DepthwiseConv2dNative(const Scope& s, Input input, Input filter,
                             const std::vector<int64_t>& strides, absl::string_view padding,
                             const DepthwiseConv2dAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("DepthwiseConv2dNative", loc);
  b.Input(input).Input(filter);
  return SetAttrs(b, strides, padding, attrs).Finalize1();
}

Output DepthwiseConv2dNativeBackpropInput(const Scope& s, Input input_sizes, Input filter,
                                          Input out_backprop, const std::vector<int64_t>& strides,
                                          absl::string_view padding,
                                          const DepthwiseConv2dAttrs& attrs,
                                          std::source_location loc) {
  OpBuilder b = s.Op("DepthwiseConv2dNativeBackpropInput", loc);
  b.Input(input_sizes).Input(filter).Input(out_backprop);
  return SetAttrs(b, strides, padding, attrs).Finalize1();
}

Output DepthwiseConv2dNativeBackpropFilter(const Scope& s, Input input, Input filter_sizes,
                                           Input out_backprop, const std::vector<int64_t>& strides,
                                           absl::string_view padding,
                                           const DepthwiseConv2dAttrs& attrs,
                                           std::source_location loc) {
  OpBuilder b = s.Op("DepthwiseConv2dNativeBackpropFilter", loc);
  b.Input(input).Input(filter_sizes).Input(out_backprop);
  return SetAttrs(b, strides, padding, attrs).Finalize1();
}

}  // namespace ops
}  // namespace sluice
